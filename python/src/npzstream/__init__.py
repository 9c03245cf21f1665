"""npzstream: load NumPy .npy and .npz files from untrusted streams.

    import npzstream
    arrays = npzstream.load(request_body)            # bytes, a file, a pipe, a socket, chunks
    arrays = await npzstream.aload(request.content)  # an async stream (aiohttp, Starlette, ...)

`load` returns what ``np.load(f, allow_pickle=False)`` returns (an ndarray for a .npy; for an
.npz a dict of key -> ndarray, or bytes for a member that is not a .npy), made from the very bytes
the parser validated: it never calls np.load, and it returns only after the END verdict (for an
.npz, after the central directory at the very end was checked against everything streamed).
Bad input raises `RejectedError` (a ValueError) with the code, offset, member and rule.
"""
from __future__ import annotations

import asyncio
import os
import socket
from dataclasses import dataclass, field
from typing import Any, AsyncIterable, Dict, Iterable, List, Optional, Tuple, Union

import numpy

from . import _npzstream

__all__ = ["load", "aload", "validate", "avalidate", "Loader", "Report", "Member", "RejectedError",
           "DEFAULT_MAX_BYTES", "LIMITS", "FAST_INFLATE", "library_version"]

#: What `load` keeps at most (array data and blobs), unless max_bytes says otherwise: an upload
#: cannot make the server allocate more than this, whatever its headers declare.
DEFAULT_MAX_BYTES = 1 << 30
#: The library's limits, as keyword arguments (see SECURITY.md), with the lenient flags.
LIMITS = ("max_header_size", "max_ndim", "max_fields", "max_depth", "max_members", "max_name_len",
          "max_extra_len", "max_total_bytes", "inflate_window", "max_memory",
          "lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate")
#: lenient_fast_inflate=True is available: the module was built with ISA-L.  It inflates about
#: twice as fast as zlib and may accept deflate data zlib (and so np.load) refuses (SECURITY.md).
FAST_INFLATE = bool(_npzstream.FAST_INFLATE)
READ_SIZE = 1 << 20
# chunks this large are fed from a worker thread in aload() (the parser releases the GIL)
_THREAD_CHUNK = 1 << 18

Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]
Loaded = Union[numpy.ndarray, Dict[str, Union[numpy.ndarray, bytes]]]


class RejectedError(ValueError):
    """The input is not a valid .npy/.npz (or breaks a limit).

    code: stable name ("truncated", "bad_header", "crc_mismatch", "limit", ...);
    offset: absolute input offset; member: 0-based member index or None; name: the member's raw
    name (bytes) or None; rule: the stable rule id ("S-HDR-WS.after-dict", "LIMIT.max_bytes");
    content_offset: the position inside the member's content, or None."""

    def __init__(self, message: str, *, code: str, offset: int, member: Optional[int] = None,
                 name: Optional[bytes] = None, rule: Optional[str] = None,
                 content_offset: Optional[int] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.offset = offset
        self.member = member
        self.name = name
        self.rule = rule
        self.content_offset = content_offset

    def __str__(self) -> str:
        where = "" if self.member is None else " in member %d%s" % (
            self.member, "" if self.name is None else " (%r)" % self.name.decode("utf-8", "replace"))
        return "%s at offset %d%s: %s [%s]" % (self.code, self.offset, where, self.message, self.rule)

    def __reduce__(self):  # picklable, for multiprocessing
        return (_rebuild, (self.message, self.code, self.offset, self.member, self.name, self.rule,
                           self.content_offset))


def _rebuild(message, code, offset, member, name, rule, content_offset):
    return RejectedError(message, code=code, offset=offset, member=member, name=name, rule=rule,
                         content_offset=content_offset)


_npzstream._set_rejected(RejectedError)


def library_version() -> str:
    """The version of the libnpzstream compiled into this module."""
    return _npzstream.library_version()


def _check_threads(threads: Any) -> int:
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 64:
        raise ValueError("threads must be an int from 1 to 64")
    return threads


def _limits(kw: Dict[str, Any]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    lenient = 0
    for k, v in kw.items():
        if k in ("lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate"):
            if not isinstance(v, bool):
                raise TypeError("%s must be a bool" % k)
            if k == "lenient_fast_inflate" and v and not FAST_INFLATE:
                raise ValueError("lenient_fast_inflate: this build of npzstream has no ISA-L")
            if v:
                lenient |= {"lenient_npy_trailing": _npzstream.LENIENT_NPY_TRAILING,
                            "lenient_header_newline": _npzstream.LENIENT_HEADER_NEWLINE,
                            "lenient_fast_inflate": _npzstream.LENIENT_FAST_INFLATE}[k]
        elif k in LIMITS:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("%s must be an int" % k)
            out[k] = v  # range-checked by the module, never wrapped
        else:
            raise TypeError("unknown limit %r (the limits are: %s)" % (k, ", ".join(LIMITS)))
    out["lenient"] = lenient
    return out


def _check_max_bytes(max_bytes: int) -> int:
    if isinstance(max_bytes, bool) or not isinstance(max_bytes, int):
        raise TypeError("max_bytes must be an int")
    if not 0 <= max_bytes < 1 << 64:
        raise ValueError("max_bytes must be between 0 and 2**64 - 1")
    return max_bytes


def _key(m: Dict[str, Any]) -> Optional[str]:
    """np.load's key of a member: its name (UTF-8 when flagged so, else CP437, as zipfile
    decodes it) without a final '.npy'."""
    raw = m["name"]
    if raw is None:
        return None
    name = raw.decode("utf-8" if m["flags"] & 0x800 else "cp437")
    return name[:-4] if name.endswith(".npy") else name


def _dtype(spec: Any) -> numpy.dtype:
    """The dtype of a header, from the parsed descr (a type string, or the field list as the
    dict np.dtype() takes: names, formats, offsets, titles, itemsize), the way NumPy's
    descr_to_dtype builds it; nothing is evaluated."""
    return numpy.dtype(spec)


class Loader:
    """Incremental loading for code that receives the bytes in pieces:

        ld = npzstream.Loader()
        for chunk in chunks:
            ld.feed(chunk)        # raises RejectedError as soon as the input is rejected
        arrays = ld.finish()      # the END verdict: what np.load would return

    Arrays are allocated once, from the validated header, when the header arrives, and their
    data is written straight into them (a deflated member is inflated into the array). They
    are handed out only by finish(), after the verdict."""

    def __init__(self, *, max_bytes: int = DEFAULT_MAX_BYTES, threads: int = 1, **limits: Any) -> None:
        self._arrays: Dict[int, numpy.ndarray] = {}
        self._s = _npzstream.Stream(_limits(limits), self._alloc, True, _check_max_bytes(max_bytes),
                                    _check_threads(threads))
        self._result: Optional[Loaded] = None
        self.feed = self._s.feed  # type: ignore[method-assign]  # no Python frame per chunk

    def _alloc(self, m: Dict[str, Any]) -> Optional[memoryview]:
        dt = _dtype(m["descr"])
        order = "F" if m["fortran_order"] else "C"
        block = m.pop("buffer", None)
        if block is not None:  # a worker thread inflated the data: the array is made over it, no copy
            arr = numpy.ndarray(m["shape"], dtype=dt, buffer=block, order=order)
            if arr.nbytes != m["nbytes"]:
                raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                                   % (dt, m["shape"], arr.nbytes, m["nbytes"]))
            self._arrays[m["index"]] = arr
            return None
        # numpy.ndarray, as np.load allocates (numpy.empty would widen an unsized 'S0' to 'S1')
        arr = numpy.ndarray(m["shape"], dtype=dt, order=order)
        if arr.nbytes != m["nbytes"]:
            raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                               % (dt, m["shape"], arr.nbytes, m["nbytes"]))
        self._arrays[m["index"]] = arr
        if not arr.nbytes:
            return None
        # the array's memory as bytes, in its own order (C or Fortran)
        return memoryview(arr.reshape(-1, order="A").view(numpy.uint8))

    def feed(self, data: Union[bytes, bytearray, memoryview]) -> None:
        """Push the next bytes (any length, 0 included)."""
        self._s.feed(data)

    def finish(self) -> Loaded:
        """The end of the input: returns the arrays, or raises RejectedError."""
        if self._result is None:
            self._s.finish()
            members = self._s.members
            if self._s.format == "npy":
                self._result = self._arrays[0]
            else:
                out: Dict[str, Union[numpy.ndarray, bytes]] = {}
                for m in members:
                    out[_key(m)] = self._arrays[m["index"]] if m["kind"] == "array" else m["data"]
                self._result = out
            self._arrays = {}
        return self._result

    @property
    def consumed(self) -> int:
        """Input bytes consumed so far."""
        return self._s.consumed

    @property
    def inflated_ahead(self) -> int:
        """Members inflated by the worker threads (threads > 1) so far."""
        return int(self._s.inflated_ahead)


@dataclass(frozen=True)
class Member:
    """One member as the stream saw it (for an .npy: the array; key and name are None)."""
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


@dataclass(frozen=True)
class Report:
    """The verdict of validate(): ok, the format, the members (all of them when ok; those before
    the error otherwise), and the error."""
    ok: bool
    format: Optional[str]
    members: List[Member] = field(default_factory=list)
    error: Optional[RejectedError] = None
    consumed: int = 0


def _member(m: Dict[str, Any]) -> Member:
    key = _key(m)
    name = None if m["name"] is None else m["name"].decode("utf-8" if m["flags"] & 0x800 else "cp437")
    arr = m["kind"] == "array"
    return Member(index=m["index"], key=key, name=name, kind=m["kind"], method=m["method"], offset=m["offset"],
                  size=m["size"], csize=m["csize"], crc32=m["crc32"], data_crc32=m["data_crc32"],
                  dtype=m.get("dtype") if arr else None, descr=m.get("descr") if arr else None,
                  shape=m.get("shape") if arr else None, fortran_order=m.get("fortran_order") if arr else None,
                  nbytes=m.get("nbytes") if arr else None, version=m.get("version") if arr else None)


# ---- sources ------------------------------------------------------------------------------------

def _chunks(source: Source) -> Iterable[Any]:
    """The bytes of a source, in pieces, read sequentially (never a seek)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield source
        return
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            yield from _chunks(f)
        return
    if isinstance(source, socket.socket):
        buf = bytearray(READ_SIZE)
        mv = memoryview(buf)
        while True:
            n = source.recv_into(mv)
            if not n:
                return
            yield mv[:n]
    readinto = getattr(source, "readinto", None)
    if readinto is not None:
        buf = bytearray(READ_SIZE)
        mv = memoryview(buf)
        while True:
            n = readinto(mv)
            if n is None:
                raise BlockingIOError("npzstream: the file is non-blocking and has no data; use Loader.feed")
            if not n:
                return
            yield mv[:n]
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            b = read(READ_SIZE)
            if b is None:
                raise BlockingIOError("npzstream: the file is non-blocking and has no data; use Loader.feed")
            if not b:
                return
            yield b
    try:
        it = iter(source)
    except TypeError:
        raise TypeError("npzstream: the source must be bytes, a path, a binary file, a socket or an iterable "
                        "of byte chunks, not %s" % type(source).__name__) from None
    yield from it  # a chunk that is not bytes-like (a str, say) is a TypeError of feed()


async def _achunks(source: Any):
    if hasattr(source, "__aiter__"):
        async for chunk in source:
            yield chunk
        return
    read = getattr(source, "read", None)
    if read is not None and asyncio.iscoroutinefunction(read):
        while True:
            b = await read(READ_SIZE)
            if not b:
                return
            yield b
        return
    for chunk in _chunks(source):  # a synchronous source given to aload
        yield chunk


async def _afeed(target: Any, chunk: Any) -> None:
    if len(chunk) >= _THREAD_CHUNK:  # the parser releases the GIL: the loop keeps running
        await asyncio.get_running_loop().run_in_executor(None, target.feed, chunk)
    else:
        target.feed(chunk)


# ---- the entry points ---------------------------------------------------------------------------

def load(source: Source, *, max_bytes: int = DEFAULT_MAX_BYTES, threads: int = 1, **limits: Any) -> Loaded:
    """Load a .npy or .npz from source (bytes-like, a path, a binary file object, a socket, or an
    iterable of byte chunks; pipes and sockets are fine: nothing seeks).

    Returns what np.load(f, allow_pickle=False) returns: an ndarray for a .npy, a dict of
    key -> ndarray (bytes for a member that is not a .npy) for an .npz, in the archive's order.
    Raises RejectedError for invalid input (nothing is returned before the END verdict),
    OSError for I/O errors, ValueError/TypeError for a bad limit. max_bytes caps the array and
    blob bytes kept (default 1 GiB): a header declaring more is a rejection (LIMIT.max_bytes)
    before anything is allocated. threads > 1 inflates deflated members (np.savez_compressed) on
    that many worker threads, with the GIL released, while the stream goes on: the same arrays
    and verdicts (the parser still decides), about 128 MiB more memory a thread at most. The
    other keywords are the library's limits (LIMITS)."""
    ld = Loader(max_bytes=max_bytes, threads=threads, **limits)
    feed = ld.feed
    if isinstance(source, (list, tuple)):  # chunks in hand: no generator in between
        for chunk in source:
            feed(chunk)
    else:
        for chunk in _chunks(source):
            feed(chunk)
    return ld.finish()


async def aload(source: Any, *, max_bytes: int = DEFAULT_MAX_BYTES, threads: int = 1, **limits: Any) -> Loaded:
    """load() for async code: source is an async iterable of byte chunks, or an object with an
    async read(n) (aiohttp's StreamReader, ...). Large chunks are parsed in a worker thread (the
    parser releases the GIL), small ones inline; the event loop is never blocked for long."""
    ld = Loader(max_bytes=max_bytes, threads=threads, **limits)
    async for chunk in _achunks(source):
        await _afeed(ld, chunk)
    return ld.finish()


class _Validator:
    def __init__(self, limits: Dict[str, Any], threads: int = 1) -> None:
        self._s = _npzstream.Stream(_limits(limits), None, False, (1 << 64) - 1, _check_threads(threads))
        self.error: Optional[RejectedError] = None

    def feed(self, chunk: Any) -> None:
        if self.error is None:
            try:
                self._s.feed(chunk)
            except RejectedError as e:
                self.error = e

    def report(self) -> Report:
        if self.error is None:
            try:
                self._s.finish()
            except RejectedError as e:
                self.error = e
        members = [_member(m) for m in self._s.members]
        return Report(ok=self.error is None, format=self._s.format, members=members, error=self.error,
                      consumed=self._s.consumed)


def validate(source: Source, *, threads: int = 1, **limits: Any) -> Report:
    """Check source without keeping any data: a Report with the verdict, the members (key,
    dtype, shape, order, sizes, CRC-32s) and, when rejected, the error (code, offset, member,
    rule, message). Reading stops at the first error. threads > 1 inflates deflated members on
    worker threads, which keep only each member's header (the same report)."""
    v = _Validator(limits, threads)
    for chunk in _chunks(source):
        v.feed(chunk)
        if v.error is not None:
            break
    return v.report()


async def avalidate(source: Any, *, threads: int = 1, **limits: Any) -> Report:
    """validate() for async sources (as aload)."""
    v = _Validator(limits, threads)
    async for chunk in _achunks(source):
        await _afeed(v, chunk)
        if v.error is not None:
            break
    return v.report()
