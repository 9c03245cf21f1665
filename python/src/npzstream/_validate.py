"""validate() and avalidate(): the verdict on an input without keeping its data, as a Report
(true only when the input was accepted) with a Member for each member seen; Validator, the same
for bytes pushed in pieces, which keeps the first error instead of raising it."""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Tuple

from . import _npzstream
from ._arrays import _key
from ._errors import RejectedError
from ._limits import _check_threads, _limits
from ._policy import PolicyLike, _policy
from ._sources import _CHEAP_MAX, Source, _achunks, _afeed, _afinish, _chunks, _in_thread


@dataclass(frozen=True)
class Member:
    """One member as the stream saw it (for an .npy: the array; key and name are None).  sniff
    says what the content looks like ("npy" for an array; for a blob "pickle", "zip", "gzip",
    "text", "binary" or "empty"); sha256 is the SHA-256 of the array data (a blob's bytes) when
    hash=True or the policy hashes, else None.

    With keep_going=True (validate, Validator, scan) the members past the file's first error are
    listed too, as the stream could still frame them (npzstream_inv.h): each with its status and
    its own error; what the walker could not tell is "unknown" (kind, sniff), its data_crc32 is
    its crc32, and descr, version and sha256 are None."""
    index: int
    key: Optional[str]
    name: Optional[str]
    kind: str                   # "array" or "blob"
    method: str                 # "stored" or "deflated"
    offset: int                 # its local header (0 for a .npy)
    size: int                   # content bytes (an array's: preamble + header + data)
    csize: int                  # bytes in the input
    crc32: int
    data_crc32: int             # of the array data (blob: == crc32)
    dtype: Optional[str] = None  # NumPy's dtype.str
    descr: Any = None           # the dtype as np.dtype() takes it
    shape: Optional[Tuple[int, ...]] = None
    fortran_order: Optional[bool] = None
    nbytes: Optional[int] = None
    version: Optional[Tuple[int, int]] = None
    sniff: str = "npy"
    sha256: Optional[str] = None
    #: keep_going=True: "ok" (checked and accepted), "rejected" (error says why), or "listed" (past
    #: the file's first error, framed but its content not checked); "ok" otherwise
    status: str = "ok"
    #: keep_going=True: this member's own error (the file's first error for the member it is in),
    #: or None
    error: Optional[RejectedError] = None


@dataclass(frozen=True)
class Report:
    """The verdict of validate(): ok, the format, the members (all of them when ok; those before
    the error otherwise, and with keep_going=True every member the stream could still frame after
    it, each with its own error), and the error (the file's first: its verdict).

    A Report is true exactly when the input was accepted (``if validate(f): store(f)`` stores
    only accepted files); ``report.raise_for_error()`` raises the RejectedError of a rejected
    one.  error is None exactly when ok is True."""
    ok: bool
    format: Optional[str]
    members: List[Member] = field(default_factory=list)
    error: Optional[RejectedError] = None
    #: the input bytes taken: when accepted, the input's length; after a rejection, as far as the
    #: pushes had got when it came, which depends on their sizes (error.offset, the byte that
    #: decided, does not)
    consumed: int = 0
    path: Optional[str] = None  # the file's path (scan, Spool), else None
    #: keep_going=True: where the listing itself stopped (INV.framing, INV.truncated, INV.limit),
    #: or None (the listing reached the end, or keep_going was not asked)
    inventory_error: Optional[RejectedError] = None

    def __bool__(self) -> bool:
        return self.ok

    def raise_for_error(self) -> None:
        """Raise the rejection (nothing for an accepted input)."""
        if not self.ok:
            raise self.error if self.error is not None else RuntimeError("npzstream: rejected without an error")

    def __repr__(self) -> str:
        if self.ok:
            return "<Report ok: %s, %d member%s>" % (self.format, len(self.members), "" if len(self.members) == 1 else "s")
        return "<Report REJECTED: %s>" % (self.error,)


def _member(m: Dict[str, Any]) -> Member:
    key = _key(m)
    name = None if m["name"] is None else m["name"].decode("utf-8" if m["flags"] & 0x800 else "cp437")
    arr = m["kind"] == "array"
    return Member(index=m["index"], key=key, name=name, kind=m["kind"], method=m["method"], offset=m["offset"],
                  size=m["size"], csize=m["csize"], crc32=m["crc32"], data_crc32=m["data_crc32"],
                  dtype=m.get("dtype") if arr else None, descr=m.get("descr") if arr else None,
                  shape=m.get("shape") if arr else None, fortran_order=m.get("fortran_order") if arr else None,
                  nbytes=m.get("nbytes") if arr else None, version=m.get("version") if arr else None,
                  sniff=m.get("sniff", "npy"), sha256=m.get("sha256"))


def _error(e: Dict[str, Any], member: Optional[int], name: Optional[bytes]) -> RejectedError:
    co = e["content_offset"]
    return RejectedError(e["message"], code=e["code"], offset=e["offset"], member=member, name=name, rule=e["rule"],
                         content_offset=co, limit=e.get("limit"))


def _kept(m: Dict[str, Any], index: int, error: Optional[RejectedError]) -> Member:
    """A member the inventory walker listed (the extension's Inventory), with its error (its own,
    or the file's for the member the strict parser stopped in)."""
    key = _key(m)
    name = m["name"].decode("utf-8" if m["flags"] & 0x800 else "cp437")
    status = "rejected" if error is not None else "ok" if m["checked"] else "listed"
    return Member(index=index, key=key, name=name, kind=m["kind"] or "unknown", method=m["method"],
                  offset=m["offset"], size=m["size"], csize=m["csize"], crc32=m["crc32"], data_crc32=m["crc32"],
                  dtype=m["dtype"], shape=m["shape"], fortran_order=m["fortran_order"], nbytes=m["nbytes"],
                  sniff=m["sniff"] or "unknown", status=status, error=error)


def _kept_members(inv: Any, first: int, error: Optional[RejectedError], fmt: Optional[str]) -> List[Member]:
    """The walker's members from `first` on (the strict parser completed the first ones); the member
    the parser stopped in (the first of them, its header at or before the error) has the file's
    error.  A rejected .npy (no ZIP to walk) is its one array with the file's error."""
    listed = inv.members
    if not listed and first == 0 and error is not None and fmt == "npy":
        return [Member(index=0, key=None, name=None, kind="array", method="stored", offset=0, size=0, csize=0,
                       crc32=0, data_crc32=0, status="rejected", error=error)]
    out = []
    for i in range(first, len(listed)):
        m = listed[i]
        if error is not None and i == first and m["source"] != "central" and m["offset"] <= error.offset:
            own: Optional[RejectedError] = error
        elif m["error"] is not None:
            own = _error(m["error"], i, m["name"])
        else:
            own = None
        out.append(_kept(m, i, own))
    return out


class Validator:
    """A push validator: the verdict of validate() for bytes that arrive in pieces (an upload
    being spooled to disk, a socket), without keeping any data.

        v = npzstream.Validator(policy=my_policy)
        for chunk in chunks:
            v.feed(chunk)          # never raises for bad input: the first error is kept
            if v.error: break      # (optional) stop reading early
        report = v.finish()       # a Report, true only when accepted

    After the first error every feed() is ignored and finish() reports it (never "ok"), unless
    keep_going=True: then every byte still goes to the inventory walker, and the report lists
    every member the stream can frame past the error, each with its own error (Member.error).
    afeed() and afinish() are for async code: the event loop only moves bytes, the parser's heavy
    work (inflating, a policy's checks, hashing, the inventory's checks of a large chunk) runs on a
    thread."""

    def __init__(self, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
                 keep_going: bool = False, **limits: Any) -> None:
        lim = _limits(limits)
        self._s = _npzstream.Stream(lim, None, False, (1 << 64) - 1, _check_threads(threads),
                                    _policy(policy), bool(hash))
        self._inv = _npzstream.Inventory(lim) if keep_going else None
        self.error: Optional[RejectedError] = None
        self._report: Optional[Report] = None
        self._want = None  # (a validator keeps nothing: no budget pauses it)

    def _rejected(self, e: RejectedError) -> None:
        # the Report keeps the error, not its traceback: that holds the frames that fed the bytes,
        # and through them the caller's input (a rejected upload kept alive by its report)
        self.error = e.with_traceback(None)
        if self._inv is not None:  # the members after it are checked on their own
            self._inv.check_after(e.offset)

    def feed(self, chunk: Any) -> None:
        """Push the next bytes (any length, 0 included)."""
        self._feed_with(self._s.feed, chunk)

    def _feed_with(self, push: Callable[[Any], None], chunk: Any) -> None:
        if self._report is not None:
            return
        if self.error is None:
            try:
                push(chunk)
            except RejectedError as e:
                self._rejected(e)
        if self._inv is not None:
            self._inv.feed(chunk)

    def _feed_held(self, chunk: Any) -> None:
        """feed(), the bytes read where they are by the worker threads and held until the
        stream's release (validate(), whose caller's bytes outlive the call)."""
        self._feed_with(self._s.feed_held, chunk)

    # what _afeed asks of its target
    def _push(self, chunk: Any, cheap: bool) -> int:
        try:
            return self._s.push(chunk, cheap)
        except RejectedError as e:
            self._rejected(e)
            return len(chunk)

    def _heavy(self) -> bool:
        return self._s.heavy

    def _stopped(self) -> bool:
        return self.error is not None or self._report is not None

    async def _unpause(self) -> None:
        raise AssertionError("npzstream: a Validator never pauses")

    async def afeed(self, chunk: Any) -> None:
        """feed() for async code: cheap steps on the event loop, heavy ones on a thread."""
        if self._report is not None:
            return
        await _afeed(self, chunk)
        if self._inv is not None:  # keep_going: the walker checks members too (inflates, CRC-32s)
            if len(chunk) > _CHEAP_MAX:
                await _in_thread(self._inv.feed, chunk)
            else:
                self._inv.feed(chunk)

    async def afinish(self) -> Report:
        """finish() for async code (with worker threads, their end is awaited on a thread)."""
        return await _afinish(self)

    def finish(self) -> Report:
        """The end of the input: the Report (the same on every later call)."""
        return self._finish()

    def _finish(self) -> Report:
        if self._report is None:
            if self.error is None:
                try:
                    self._s.finish()
                except RejectedError as e:
                    self._rejected(e)
            members = [_member(m) for m in self._s.members]
            listing = None
            if self._inv is not None:
                self._inv.finish()
                members += _kept_members(self._inv, len(members), self.error, self._s.format)
                stop = self._inv.error
                listing = None if stop is None else _error(stop, None, None)
            self._report = Report(ok=self.error is None, format=self._s.format, members=members, error=self.error,
                                  consumed=self._s.consumed, inventory_error=listing)
        return self._report

    report = finish  # the name of 0.4.0's private validator

    @property
    def consumed(self) -> int:
        return self._s.consumed


def validate(source: Source, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
             keep_going: bool = False, **limits: Any) -> Report:
    """Check source without keeping any data: a Report with the verdict, the members (key,
    dtype, shape, order, sizes, CRC-32s, what each looks like, and with hash=True its SHA-256)
    and, when rejected, the error (code, offset, member, rule, message, detail, hint).  The Report
    is true only when the input was accepted.  Reading stops at the first error.  policy: what
    you accept (a dict, a Policy, or the path of a JSON file).  threads > 1 inflates deflated
    members on worker threads (the same report).

    keep_going=True reads on past the first error and lists every member the stream can still
    frame (an object array, then a pickle, then an array: all three), each with its own error
    (Member.error, Member.status); the report's verdict and error stay the first error's."""
    v = Validator(threads=threads, policy=policy, hash=hash, keep_going=keep_going, **limits)
    if threads > 1 and isinstance(source, (bytes, bytearray, memoryview)):
        try:  # bytes in hand: the workers read them where they are (no copy), as load() does
            v._feed_held(source)
            return v.finish()
        finally:
            v._s.release()
    for chunk in _chunks(source):
        v.feed(chunk)
        if v.error is not None and not keep_going:
            break
    return v.finish()


async def avalidate(source: Any, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
                    keep_going: bool = False, **limits: Any) -> Report:
    """validate() for async sources (as aload)."""
    v = Validator(threads=threads, policy=policy, hash=hash, keep_going=keep_going, **limits)
    async for chunk in _achunks(source):
        await v.afeed(chunk)
        if v.error is not None and not keep_going:
            break
    return await v.afinish()

