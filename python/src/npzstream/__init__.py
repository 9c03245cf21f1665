"""npzstream: load NumPy .npy and .npz files from untrusted streams.

    import npzstream
    arrays = npzstream.load(request_body)            # bytes, a file, a pipe, a socket, chunks
    arrays = await npzstream.aload(request.content)  # an async stream (aiohttp, Starlette, ...)

`load` returns what ``np.load(f, allow_pickle=False)`` returns (an ndarray for a .npy; for an
.npz a dict of key -> ndarray, or bytes for a member that is not a .npy), made from the very bytes
the parser validated: it never calls np.load, and it returns only after the END verdict (for an
.npz, after the central directory at the very end was checked against everything streamed).
Bad input raises `RejectedError` (a ValueError) with the code, offset, member, rule and a hint.

Every entry point takes ``policy=``: what you accept (the members, their dtypes, shapes, values
and hashes), as a dict, a `Policy`, or the path of a JSON file; the C library enforces it while
the bytes arrive, with the same verdicts as ``npzstream check --policy FILE``:

    report = npzstream.validate(upload, policy={"members": {"w": {"dtype": ["<f4"]}},
                                               "allow_other_members": False})
    if report:            # a Report is true only when the input was accepted
        store(upload)

The defaults are one set for every entry point and the command line (`DEFAULT_LIMITS`, from the
library): at most 1 GiB of array data in all, so a 2 MB archive that inflates to 2 GiB is refused
at the header that declares it.
"""
from __future__ import annotations

import asyncio
import dataclasses
import io
import json
import os
import socket
import tempfile
from dataclasses import dataclass, field
from typing import (Any, Callable, Dict, Iterable, Iterator, List, Mapping, Optional, Sequence, Tuple,
                    Literal, Union, cast)


import numpy

from . import _npzstream

__all__ = ["load", "aload", "validate", "avalidate", "open", "Mapped", "spool", "Spool", "scan",
           "Loader", "Validator", "Report", "Member", "RejectedError",
           "Policy", "MemberPolicy", "PolicyError", "DEFAULT_LIMITS", "DEFAULT_MAX_BYTES", "LIMITS", "FAST_INFLATE",
           "SHA256", "library_version", "__version__"]

#: The version of the libnpzstream compiled into this module (the package's version too).
__version__: str = _npzstream.library_version()
#: The library's default limits (npzs_limits_default): the same for every entry point and the
#: command line.  max_total_bytes, 1 GiB, bounds the array data of an input in all.
DEFAULT_LIMITS: Dict[str, int] = dict(_npzstream.default_limits())
#: What `load` keeps at most (array data and blobs), unless max_bytes says otherwise: an upload
#: cannot make the server allocate more than this, whatever its headers declare.  It is the
#: library's max_total_bytes default.
DEFAULT_MAX_BYTES = DEFAULT_LIMITS["max_total_bytes"]
#: hash=True and policies that hash are available: the module was built with OpenSSL's libcrypto.
SHA256 = bool(_npzstream.SHA256)
#: The library's limits, as keyword arguments (see SECURITY.md), with the lenient flags and
#: inflate_zlib: the numeric ones are the C library's table (NPZS_LIMITS_MAP), in its order.
#: inflate_zlib=True inflates with zlib alone (NPZS_INFLATE_ZLIB); by default the library's own
#: decoder, whose verdict and bytes are zlib's (SECURITY.md, "The inflater"), is 1.4x to 2.7x faster.
LIMITS = tuple(k for k in DEFAULT_LIMITS if k != "lenient") + (
    "lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate", "inflate_zlib")
#: lenient_fast_inflate=True is available: the module was built with ISA-L.  It inflates about
#: twice as fast as zlib and may accept deflate data zlib (and so np.load) refuses (SECURITY.md).
FAST_INFLATE = bool(_npzstream.FAST_INFLATE)
READ_SIZE = 1 << 20
# a stored array's data is read straight into the array in pieces of this size, each pushed while
# it is still in the cache (the parser's CRC-32 reads it once more)
DIRECT_PIECE = 256 << 10
# the read after an array read in place: its member's end and the next member's records and header
_HEAD_READ = 64 << 10
# chunks this large are fed from a worker thread in aload() (the parser releases the GIL)
_THREAD_CHUNK = 1 << 18

Source = Union[bytes, bytearray, memoryview, str, "os.PathLike[str]", Any]
Loaded = Union[numpy.ndarray, Dict[str, Union[numpy.ndarray, bytes]]]


class RejectedError(ValueError):
    """The input is not a valid .npy/.npz, breaks a limit, or breaks the caller's policy.

    code: stable name ("truncated", "bad_header", "crc_mismatch", "limit", "policy", ...);
    offset: absolute input offset; member: 0-based member index or None; name: the member's raw
    name (bytes) or None; rule: the stable rule id ("S-HDR-WS.after-dict", "LIMIT.max_bytes",
    "POLICY.dtype"); content_offset: the position inside the member's content, or None; detail:
    what a policy check found, in words, or None; hint: what can be done about it, or None."""

    def __init__(self, message: str, *, code: str, offset: int, member: Optional[int] = None,
                 name: Optional[bytes] = None, rule: Optional[str] = None,
                 content_offset: Optional[int] = None, detail: Optional[str] = None,
                 hint: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.offset = offset
        self.member = member
        self.name = name
        self.rule = rule
        self.content_offset = content_offset
        self.detail = detail
        self.hint = hint if hint is not None or rule is None else _npzstream.rule_hint(rule)

    def __str__(self) -> str:
        if self.member is None:
            where = ""
        elif self.name is None:
            where = " in the array"  # a plain .npy has no members
        else:
            where = " in member %d (%r)" % (self.member, self.name.decode("utf-8", "replace"))
        detail = "" if self.detail is None else ": " + self.detail
        return "%s at offset %d%s: %s%s [%s]" % (self.code, self.offset, where, self.message, detail, self.rule)

    def __reduce__(self):  # picklable, for multiprocessing
        return (_rebuild, (self.message, self.code, self.offset, self.member, self.name, self.rule,
                           self.content_offset, self.detail, self.hint))

    def _fields(self) -> Tuple[Any, ...]:
        return (self.message, self.code, self.offset, self.member, self.name, self.rule, self.content_offset,
                self.detail, self.hint)

    def __eq__(self, other: object) -> bool:  # the same rejection: the same fields (a pickled copy, a rerun)
        if not isinstance(other, RejectedError):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


def _rebuild(message, code, offset, member, name, rule, content_offset, detail=None, hint=None):
    return RejectedError(message, code=code, offset=offset, member=member, name=name, rule=rule,
                         content_offset=content_offset, detail=detail, hint=hint)


class PolicyError(ValueError):
    """A policy that is itself malformed (a usage error, not a rejection of the input).

    message: what is wrong; path: the field ("members.images.shape[1]", "" for the document);
    line, column: where in the JSON file (None for a dict or a Policy); offset: the byte offset
    in the JSON text; source: the file's path, or None."""

    def __init__(self, message: str, *, path: str = "", line: Optional[int] = None,
                 column: Optional[int] = None, offset: int = 0, source: Optional[str] = None) -> None:
        super().__init__(message)
        self.message = message
        self.path = path
        self.line = line
        self.column = column
        self.offset = offset
        self.source = source

    def __str__(self) -> str:
        where = "" if self.line is None or self.source is None else "%s:%d:%s: " % (self.source, self.line, self.column)
        return "policy: %s%s%s" % (where, self.path + ": " if self.path else "", self.message)

    def __reduce__(self):
        return (_rebuild_policy_error, (self.message, self.path, self.line, self.column, self.offset, self.source))


def _rebuild_policy_error(message, path, line, column, offset, source):
    return PolicyError(message, path=path, line=line, column=column, offset=offset, source=source)


_npzstream._set_rejected(RejectedError)
_npzstream._set_policy_error(PolicyError)


# ---- policies -----------------------------------------------------------------------------------

_UNSET: Any = None


@dataclass
class MemberPolicy:
    """What one member (or, as Policy.array, a .npy's array) must be.  Every field is optional;
    None means "anything".  The fields and their meaning are those of the JSON policy (README.md,
    "Policies"): dtype is a list of dtype.str values ("<f4"), NumPy names ("float32") or field
    lists ([["x", "<f4"], ["y", "<i2", [2]]]); shape a list of integers, dimension names (shared
    between members), "*" (any one) and "..." (any number); range (min, max), None for no bound."""
    dtype: Optional[Sequence[Any]] = None
    shape: Optional[Sequence[Union[int, str]]] = None
    finite: Optional[bool] = None
    range: Optional[Tuple[Optional[float], Optional[float]]] = None
    optional: Optional[bool] = None
    fortran_order: Optional[bool] = None
    byte_order: Optional[str] = None
    elements: Optional[Tuple[Optional[int], Optional[int]]] = None
    max_bytes: Optional[Union[int, str]] = None
    sha256: Optional[str] = None
    kind: Optional[str] = None
    blob_kinds: Optional[Sequence[str]] = None

    def to_dict(self) -> Dict[str, Any]:
        return {k: (list(v) if isinstance(v, tuple) else v) for k, v in self.__dict__.items() if v is not None}


@dataclass
class Policy:
    """A declarative description of the files you accept, enforced by the C library while the
    bytes arrive (the same semantics as ``npzstream check --policy FILE``).

        policy = npzstream.Policy(
            members={"images": npzstream.MemberPolicy(dtype=["<f4"], shape=["N", 28, 28], finite=True),
                     "labels": {"dtype": ["<i8"], "shape": ["N"], "range": [0, 9]}},
            dims={"N": (1, 60000)}, allow_other_members=False, allow_blobs=False)

    Policy.from_dict(d) and Policy.load(path) read the JSON form; to_dict() and to_json() write
    it.  It is checked (and compiled) when first used, or by check(); a fault raises PolicyError
    naming the field."""
    members: Optional[Mapping[str, Union[MemberPolicy, Mapping[str, Any]]]] = None
    array: Optional[Union[MemberPolicy, Mapping[str, Any]]] = None
    dims: Optional[Mapping[str, Any]] = None
    allow_other_members: Optional[bool] = None
    allow_blobs: Optional[Union[bool, Sequence[str]]] = None
    max_members: Optional[int] = None
    max_total_bytes: Optional[Union[int, str]] = None
    format: Optional[str] = None
    hash: Optional[str] = None

    def to_dict(self) -> Dict[str, Any]:
        out: Dict[str, Any] = {}
        for k, v in self.__dict__.items():
            if v is None or k.startswith("_"):
                continue
            if k == "members":
                v = {key: (m.to_dict() if isinstance(m, MemberPolicy) else dict(m)) for key, m in v.items()}
            elif k == "array" and isinstance(v, MemberPolicy):
                v = v.to_dict()
            elif k == "dims":
                v = {n: (list(r) if isinstance(r, tuple) else r) for n, r in v.items()}
            elif isinstance(v, tuple):
                v = list(v)
            out[k] = v
        return out

    def to_json(self, **kw: Any) -> str:
        return json.dumps(self.to_dict(), **kw)

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Policy":
        if not isinstance(d, Mapping):
            raise TypeError("a policy is a dict (the JSON object), not %s" % type(d).__name__)
        unknown = set(d) - set(cls.__dataclass_fields__)
        if unknown:  # the library names the field; checked here for the dataclass too
            _compile_text(json.dumps(dict(d)), None)
        p = cls(**{k: d[k] for k in d})
        p.check()
        return p

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Policy":
        with io.open(path, "rb") as f:
            text = f.read()
        compiled = _compile_text(text, os.fspath(path))
        p = cls.from_dict(json.loads(text))
        p.__dict__["_compiled"] = compiled
        return p

    def check(self) -> None:
        """Compile the policy now: raises PolicyError for a fault."""
        self._compile()

    def _compile(self) -> Any:
        c = self.__dict__.get("_compiled")
        if c is None:
            c = _compile_text(self.to_json(), None)
            self.__dict__["_compiled"] = c
        return c

    def __setattr__(self, name: str, value: Any) -> None:
        self.__dict__.pop("_compiled", None)  # a changed policy is compiled again
        object.__setattr__(self, name, value)


PolicyLike = Union[Policy, Mapping[str, Any], str, "os.PathLike[str]"]


def _compile_text(text: Union[str, bytes], source: Optional[str]) -> Any:
    try:
        return _npzstream.Policy(text if isinstance(text, bytes) else text.encode("utf-8"))
    except PolicyError as e:
        if source is None:
            e.line = e.column = None  # the JSON was made from a dict: the field says where
        e.source = source
        raise


def _policy(policy: Optional[PolicyLike]) -> Any:
    """The compiled policy of policy= (None: none)."""
    if policy is None:
        return None
    if isinstance(policy, _npzstream.Policy):
        return policy
    if isinstance(policy, Policy):
        return policy._compile()
    if isinstance(policy, Mapping):
        try:
            text = json.dumps(dict(policy))
        except (TypeError, ValueError) as e:
            raise PolicyError("not JSON: %s" % e) from None
        return _compile_text(text, None)
    if isinstance(policy, (str, os.PathLike)):
        with io.open(policy, "rb") as f:
            return _compile_text(f.read(), os.fspath(policy))
    raise TypeError("policy must be a dict, a Policy or the path of a JSON file, not %s" % type(policy).__name__)


def library_version() -> str:
    """The version of the libnpzstream compiled into this module."""
    return _npzstream.library_version()


def _check_threads(threads: Any) -> int:
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 64:
        raise ValueError("threads must be an int from 1 to 64")
    return threads


_SUFFIX = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


#: the limits that count bytes, which also take sizes such as "4Gi" (as the command line does)
_SIZE_LIMITS = ("max_total_bytes", "max_memory", "inflate_window")


def _size(name: str, v: Any) -> int:
    """An int, or a size as the command line takes it ("512Mi", "4G")."""
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise TypeError("%s must be an int or a size such as \"1Gi\"" % name)
    if isinstance(v, int):
        return v
    digits = v.rstrip("KMGTPEi")
    unit = v[len(digits):]
    if not digits.isdigit() or not digits.isascii() or (unit and unit not in _SUFFIX):
        raise ValueError("%s: %r is not a size (digits, then K M G T P E or Ki Mi Gi Ti Pi Ei)" % (name, v))
    return int(digits) * _SUFFIX.get(unit, 1)


def _limits(kw: Dict[str, Any]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    lenient = 0
    for k, v in kw.items():
        if k in ("lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate", "inflate_zlib"):
            if not isinstance(v, bool):
                raise TypeError("%s must be a bool" % k)
            if k == "lenient_fast_inflate" and v and not FAST_INFLATE:
                raise ValueError("lenient_fast_inflate: this build of npzstream has no ISA-L")
            if v:
                lenient |= {"lenient_npy_trailing": _npzstream.LENIENT_NPY_TRAILING,
                            "lenient_header_newline": _npzstream.LENIENT_HEADER_NEWLINE,
                            "lenient_fast_inflate": _npzstream.LENIENT_FAST_INFLATE,
                            "inflate_zlib": _npzstream.INFLATE_ZLIB}[k]
        elif k in _SIZE_LIMITS:
            out[k] = _size(k, v)  # range-checked by the module, never wrapped
        elif k in LIMITS:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("%s must be an int" % k)
            out[k] = v
        else:
            raise TypeError("unknown limit %r (the limits are: %s)" % (k, ", ".join(LIMITS)))
    out["lenient"] = lenient
    return out


def _check_max_bytes(max_bytes: Union[int, str]) -> int:
    max_bytes = _size("max_bytes", max_bytes)
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


def _npz_key(m: Dict[str, Any]) -> str:
    """The key of an .npz member (it has a name)."""
    k = _key(m)
    if k is None:
        raise RuntimeError("npzstream: an .npz member without a name")
    return k


def _dtype(spec: Any) -> numpy.dtype:
    """The dtype of a header, from the parsed descr (a type string, or the field list as the
    dict np.dtype() takes: names, formats, offsets, titles, itemsize), the way NumPy's
    descr_to_dtype builds it; nothing is evaluated."""
    return numpy.dtype(spec)


def _alloc_array(arrays: Dict[int, numpy.ndarray], m: Dict[str, Any]) -> Optional[memoryview]:
    """The array of a HEADER (m: the member's dict), allocated once into arrays[index]; its
    memory as bytes (the parser's destination), or None when there is nothing to write (no data,
    or a worker's output the array was made over)."""
    dt = _dtype(m["descr"])
    order: Literal["C", "F"] = "F" if m["fortran_order"] else "C"
    block = m.pop("buffer", None)
    if block is not None:  # a worker thread inflated the data: the array is made over it, no copy
        arr = numpy.ndarray(m["shape"], dtype=dt, buffer=block, order=order)
        if arr.nbytes != m["nbytes"]:
            raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                               % (dt, m["shape"], arr.nbytes, m["nbytes"]))
        arrays[m["index"]] = arr
        return None
    # numpy.ndarray, as np.load allocates (numpy.empty would widen an unsized 'S0' to 'S1')
    arr = numpy.ndarray(m["shape"], dtype=dt, order=order)
    if arr.nbytes != m["nbytes"]:
        raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                           % (dt, m["shape"], arr.nbytes, m["nbytes"]))
    arrays[m["index"]] = arr
    if not arr.nbytes:
        return None
    # the array's memory as bytes, in its own order (C or Fortran)
    return memoryview(cast(Any, arr.reshape(-1, order="A").view(numpy.uint8)))


class Loader:
    """Incremental loading for code that receives the bytes in pieces:

        ld = npzstream.Loader()
        for chunk in chunks:
            ld.feed(chunk)        # raises RejectedError as soon as the input is rejected
        arrays = ld.finish()      # the END verdict: what np.load would return

    Arrays are allocated once, from the validated header, when the header arrives, and their
    data is written straight into them (a deflated member is inflated into the array). They
    are handed out only by finish(), after the verdict.  policy= is checked as the bytes arrive
    (a member the policy refuses raises at the byte that decides, before its array is
    allocated)."""

    def __init__(self, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
                 policy: Optional[PolicyLike] = None, **limits: Any) -> None:
        self._arrays: Dict[int, numpy.ndarray] = {}
        self._s = _npzstream.Stream(_limits(limits), self._alloc, True, _check_max_bytes(max_bytes),
                                    _check_threads(threads), _policy(policy))
        self._result: Optional[Loaded] = None
        self._dst = memoryview(b"")
        self.feed = self._s.feed  # type: ignore[method-assign]  # no Python frame per chunk

    def _alloc(self, m: Dict[str, Any]) -> Optional[memoryview]:
        dst = _alloc_array(self._arrays, m)
        if dst is not None:
            self._dst = dst
        return dst

    def _read_from(self, readinto: Callable[[Any], Optional[int]]) -> None:
        """Push a file's or socket's bytes to their end: headers and small records through one
        buffer; the data of a stored array read straight into the array (Stream.direct says
        where), then pushed where it lies: the parser finds it in place (no copy) and checks it
        as any push, its CRC-32 included."""
        s = self._s
        feed = s.feed
        mv = memoryview(bytearray(READ_SIZE))
        want = _HEAD_READ  # after an array read in place, the next records are read in a small piece
        while True:
            d = s.direct
            if d is not None:
                pos, left = d
                dst = self._dst[pos:pos + min(left, DIRECT_PIECE)]
                n = readinto(dst)
                if n is None:
                    raise BlockingIOError("npzstream: the file is non-blocking and has no data; use Loader.feed")
                if not n:
                    return
                feed(dst[:n])
                want = _HEAD_READ
                continue
            n = readinto(mv[:want])
            want = READ_SIZE
            if n is None:
                raise BlockingIOError("npzstream: the file is non-blocking and has no data; use Loader.feed")
            if not n:
                return
            feed(mv[:n])

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
                    out[_npz_key(m)] = self._arrays[m["index"]] if m["kind"] == "array" else m["data"]
                self._result = out
            self._arrays = {}
            self._dst = memoryview(b"")
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
    """One member as the stream saw it (for an .npy: the array; key and name are None).  sniff
    says what the content looks like ("npy" for an array; for a blob "pickle", "zip", "gzip",
    "text", "binary" or "empty"); sha256 is the SHA-256 of the array data (a blob's bytes) when
    hash=True or the policy hashes, else None."""
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


@dataclass(frozen=True)
class Report:
    """The verdict of validate(): ok, the format, the members (all of them when ok; those before
    the error otherwise), and the error.

    A Report is true exactly when the input was accepted (``if validate(f): store(f)`` stores
    only accepted files); ``report.raise_for_error()`` raises the RejectedError of a rejected
    one.  error is None exactly when ok is True."""
    ok: bool
    format: Optional[str]
    members: List[Member] = field(default_factory=list)
    error: Optional[RejectedError] = None
    consumed: int = 0
    path: Optional[str] = None  # the file's path (scan, Spool), else None

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


# ---- sources ------------------------------------------------------------------------------------

def _chunks(source: Source) -> Iterable[Any]:
    """The bytes of a source, in pieces, read sequentially (never a seek)."""
    if isinstance(source, (bytes, bytearray, memoryview)):
        yield source
        return
    if isinstance(source, (str, os.PathLike)):
        with io.open(source, "rb") as f:
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
    # an async read(n) first: aiohttp's StreamReader iterates lines, not chunks
    read = getattr(source, "read", None)
    if read is not None and asyncio.iscoroutinefunction(read):
        while True:
            b = await read(READ_SIZE)
            if not b:
                return
            yield b
        return
    if hasattr(source, "__aiter__"):
        async for chunk in source:
            yield chunk
        return
    for chunk in _chunks(source):  # a synchronous source given to aload
        yield chunk


async def _afeed(target: Any, chunk: Any) -> None:
    if len(chunk) >= _THREAD_CHUNK:  # the parser releases the GIL: the loop keeps running
        await asyncio.get_running_loop().run_in_executor(None, target.feed, chunk)
    else:
        target.feed(chunk)


# ---- the entry points ---------------------------------------------------------------------------

def load(source: Source, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
         policy: Optional[PolicyLike] = None, **limits: Any) -> Loaded:
    """Load a .npy or .npz from source (bytes-like, a path, a binary file object, a socket, or an
    iterable of byte chunks; pipes and sockets are fine: nothing seeks).

    Returns what np.load(f, allow_pickle=False) returns: an ndarray for a .npy, a dict of
    key -> ndarray (bytes for a member that is not a .npy) for an .npz, in the archive's order.
    Raises RejectedError for invalid input (nothing is returned before the END verdict),
    OSError for I/O errors, ValueError/TypeError for a bad limit. max_bytes caps the array and
    blob bytes kept (default 1 GiB): a header declaring more is a rejection (LIMIT.max_bytes)
    before anything is allocated. threads > 1 inflates deflated members (np.savez_compressed) on
    that many worker threads, with the GIL released, while the stream goes on: the same arrays
    and verdicts (the parser still decides), about 128 MiB more memory a thread at most. policy:
    what you accept (a dict, a Policy, or the path of a JSON file), checked as the bytes arrive.
    The other keywords are the library's limits (LIMITS; ints or sizes such as "4Gi")."""
    ld = Loader(max_bytes=max_bytes, threads=threads, policy=policy, **limits)
    feed = ld.feed
    if isinstance(source, (list, tuple)):  # chunks in hand: no generator in between
        for chunk in source:
            feed(chunk)
    elif threads == 1 and isinstance(source, (str, os.PathLike)):
        with io.open(source, "rb", buffering=0) as f:
            ld._read_from(f.readinto)
    elif threads == 1 and isinstance(source, socket.socket):
        ld._read_from(source.recv_into)
    elif threads == 1 and not isinstance(source, (bytes, bytearray, memoryview)) and hasattr(source, "readinto"):
        ld._read_from(source.readinto)
    else:  # bytes in hand, iterables; with worker threads the helper reads ahead of the parser
        for chunk in _chunks(source):
            feed(chunk)
    return ld.finish()


async def aload(source: Any, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
                policy: Optional[PolicyLike] = None, **limits: Any) -> Loaded:
    """load() for async code: source is an async iterable of byte chunks, or an object with an
    async read(n) (aiohttp's StreamReader, ...). Large chunks are parsed in a worker thread (the
    parser releases the GIL), small ones inline; the event loop is never blocked for long."""
    ld = Loader(max_bytes=max_bytes, threads=threads, policy=policy, **limits)
    async for chunk in _achunks(source):
        await _afeed(ld, chunk)
    return ld.finish()


class Validator:
    """A push validator: the verdict of validate() for bytes that arrive in pieces (an upload
    being spooled to disk, a socket), without keeping any data.

        v = npzstream.Validator(policy=my_policy)
        for chunk in chunks:
            v.feed(chunk)          # never raises for bad input: the first error is kept
            if v.error: break      # (optional) stop reading early
        report = v.finish()       # a Report, true only when accepted

    After the first error every feed() is ignored and finish() reports it (never "ok").
    afeed() is feed() for async code (large chunks are parsed off the event loop)."""

    def __init__(self, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
                 **limits: Any) -> None:
        self._s = _npzstream.Stream(_limits(limits), None, False, (1 << 64) - 1, _check_threads(threads),
                                    _policy(policy), bool(hash))
        self.error: Optional[RejectedError] = None
        self._report: Optional[Report] = None

    def feed(self, chunk: Any) -> None:
        """Push the next bytes (any length, 0 included)."""
        if self.error is None and self._report is None:
            try:
                self._s.feed(chunk)
            except RejectedError as e:
                self.error = e

    async def afeed(self, chunk: Any) -> None:
        await _afeed(self, chunk)

    def finish(self) -> Report:
        """The end of the input: the Report (the same on every later call)."""
        if self._report is None:
            if self.error is None:
                try:
                    self._s.finish()
                except RejectedError as e:
                    self.error = e
            members = [_member(m) for m in self._s.members]
            self._report = Report(ok=self.error is None, format=self._s.format, members=members, error=self.error,
                                  consumed=self._s.consumed)
        return self._report

    report = finish  # the name of 0.4.0's private validator

    @property
    def consumed(self) -> int:
        return self._s.consumed


def validate(source: Source, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
             **limits: Any) -> Report:
    """Check source without keeping any data: a Report with the verdict, the members (key,
    dtype, shape, order, sizes, CRC-32s, what each looks like, and with hash=True its SHA-256)
    and, when rejected, the error (code, offset, member, rule, message, detail, hint).  The Report
    is true only when the input was accepted.  Reading stops at the first error.  policy: what
    you accept (a dict, a Policy, or the path of a JSON file).  threads > 1 inflates deflated
    members on worker threads (the same report)."""
    v = Validator(threads=threads, policy=policy, hash=hash, **limits)
    for chunk in _chunks(source):
        v.feed(chunk)
        if v.error is not None:
            break
    return v.finish()


async def avalidate(source: Any, *, threads: int = 1, policy: Optional[PolicyLike] = None, hash: bool = False,
                    **limits: Any) -> Report:
    """validate() for async sources (as aload)."""
    v = Validator(threads=threads, policy=policy, hash=hash, **limits)
    async for chunk in _achunks(source):
        await _afeed(v, chunk)
        if v.error is not None:
            break
    return v.finish()


# ---- open(): the arrays as views of a mapped file -------------------------------------------------

class Mapped(Mapping[str, Union[numpy.ndarray, bytes]]):
    """What `open` returns: a read-only mapping of key -> array over a mapped file, the verdict
    given.  A stored member's array is a read-only view of the mapping (no copy, no private
    memory); a deflated member's array was inflated during the validating pass (its own memory);
    a member that is not a .npy is bytes, as np.load gives it.  A .npy has one array: `.array`
    (its mapping view has no keys: indexing it is a TypeError that says so).

    Closing (close(), or leaving the with block) drops the file's references: the mapping is
    unmapped as soon as no array made from it is referenced any more (each view holds the
    mapping through ndarray.base, so an array stays valid for as long as it is used, and nothing
    can unmap memory an array still points at).

    What a mapping cannot promise: the verdict is about the bytes as they were during the pass.
    The pages are private, but on Linux a page nobody wrote follows the file: if another process
    rewrites the file afterwards, the views show the new bytes, and if it truncates the file,
    touching a page past the new end kills the process with SIGBUS.  Map only files nobody else
    writes (your own, or read-only ones); `verify()` re-reads the mapping and checks every CRC-32
    again; `load` copies the bytes and has none of this."""

    def __init__(self, path: str, fd: int, mapping: Any, fmt: str, members: List[Dict[str, Any]],
                 items: Dict[str, Union[numpy.ndarray, bytes]], array: Optional[numpy.ndarray],
                 recheck: Callable[[], Any]) -> None:
        self.path = path
        self.format = fmt
        self._fd: Optional[int] = fd
        self._map: Any = mapping
        self._raw = members
        self.members: List[Member] = [_member(m) for m in members]
        self._items: Optional[Dict[str, Union[numpy.ndarray, bytes]]] = items
        self._array = array
        self._recheck = recheck

    @property
    def closed(self) -> bool:
        return self._items is None

    @property
    def size(self) -> int:
        """The bytes mapped (the file's size when it was opened)."""
        return 0 if self._map is None else len(self._map)

    @property
    def array(self) -> numpy.ndarray:
        """A .npy's array."""
        if self.format != "npy":
            raise TypeError("npzstream: an .npz has members, not one array: index it by key")
        self._check_open()
        assert self._array is not None
        return self._array

    def _check_open(self) -> None:
        if self._items is None:
            raise ValueError("npzstream: the mapped file is closed")

    def _members(self) -> Dict[str, Union[numpy.ndarray, bytes]]:
        self._check_open()
        if self.format == "npy":
            raise TypeError("npzstream: a .npy holds one array, not members: use .array")
        assert self._items is not None
        return self._items

    def __getitem__(self, key: str) -> Union[numpy.ndarray, bytes]:
        return self._members()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._members())

    def __len__(self) -> int:
        return len(self._members())

    def __contains__(self, key: object) -> bool:
        return key in self._members()

    def close(self) -> None:
        """Drop the file: its descriptor now, its mapping once no array of it is referenced."""
        self._items = None
        self._array = None
        self._map = None
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    def __enter__(self) -> "Mapped":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def __del__(self) -> None:
        fd = getattr(self, "_fd", None)
        if fd is not None:
            try:
                os.close(fd)
            except OSError:
                pass

    def verify(self) -> "Report":
        """Check the mapped bytes again, every CRC-32 and record, against the verdict of open():
        a Report, true only when the file is still what was opened (the same size, the same
        verdict, the same members with the same CRC-32s).  A stored member's view shows what the
        file holds now; a deflated member's array was inflated at open() and does not change, but
        its compressed bytes are checked too."""
        self._check_open()
        assert self._fd is not None
        size = os.fstat(self._fd).st_size
        if size != self.size:  # never read a page past a truncated end (SIGBUS)
            return Report(ok=False, format=self.format, members=[], path=self.path,
                          error=RejectedError("the file's size changed since it was opened (%d bytes, now %d)"
                                              % (self.size, size), code="changed", offset=min(size, self.size),
                                              rule="OPEN.changed"))
        report = self._recheck()
        if not report:
            return report
        for i, (a, b) in enumerate(zip(self.members, report.members)):
            if a != b:
                return Report(ok=False, format=report.format, members=report.members[:i], path=self.path,
                              consumed=report.consumed,
                              error=RejectedError("member %d is not the one open() checked (a CRC-32, a size or "
                                                  "its header differs)" % i, code="changed", offset=b.offset,
                                                  member=i, rule="OPEN.changed"))
        if len(self.members) != len(report.members):
            return Report(ok=False, format=report.format, members=report.members, path=self.path,
                          error=RejectedError("the file has %d members, open() checked %d"
                                              % (len(report.members), len(self.members)), code="changed",
                                              offset=0, rule="OPEN.changed"))
        return report

    def __repr__(self) -> str:
        if self._items is None:
            return "<npzstream.Mapped %r closed>" % (self.path,)
        what = "1 array" if self.format == "npy" else "%d members" % len(self._items)
        return "<npzstream.Mapped %r: %s, %d bytes mapped>" % (self.path, what, self.size)


#: open() asks for the whole mapping at once (MAP_POPULATE) up to this size: one call instead of
#: a page fault every 64 KiB; larger files are faulted in as the pass reads them (sequentially).
POPULATE_MAX = 1 << 30


def open(path: Union[str, "os.PathLike[str]"], *, policy: Optional[PolicyLike] = None, threads: int = 1,
         max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, **limits: Any) -> Mapped:
    """Map a .npy or .npz file and validate it whole in one pass (the verdict of `load`); then
    return a `Mapped`: key -> array, where every stored member is a read-only view of a private
    mapping of the file (zero copies, no private memory) and every deflated member an array
    inflated during the pass (threads > 1: on worker threads).  A .npy's array is `.array`.

        with npzstream.open("weights.npz", max_total_bytes="64Gi") as z:
            w = z["w"]          # an ndarray over the file's pages

    Raises RejectedError (nothing is returned before the verdict), OSError, and ValueError for
    a file that cannot be mapped (a pipe: use load).  max_bytes caps the private memory (the
    deflated members and the blobs); the limits are load's (max_total_bytes bounds the content:
    raise it for files over 1 GiB).  See `Mapped` for what a mapping cannot promise."""
    path = os.fspath(path)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_CLOEXEC", 0))
    try:
        st = os.fstat(fd)
        import stat
        if not stat.S_ISREG(st.st_mode):
            raise ValueError("npzstream.open: %r is not a regular file (use load for pipes and sockets)" % path)
        mapping = _npzstream.Map(fd, st.st_size, st.st_size <= POPULATE_MAX)
        lim = _limits(limits)
        pol = _policy(policy)
        n_threads = _check_threads(threads)
        loaded: Dict[int, numpy.ndarray] = {}

        def alloc(m: Dict[str, Any]) -> Optional[memoryview]:  # a deflated member: inflated into its array
            return _alloc_array(loaded, m)
        s = _npzstream.Stream(lim, alloc, True, _check_max_bytes(max_bytes), n_threads, pol, False, True)
        mapping.madvise("sequential")  # one pass, front to back
        s.feed(mapping)
        s.finish()
        mapping.madvise("normal")      # then the arrays, in any order
        fmt = s.format
        items: Dict[str, Union[numpy.ndarray, bytes]] = {}
        arrays: List[numpy.ndarray] = []
        for m in s.members:
            if m["kind"] != "array":
                items[_npz_key(m)] = m.pop("data")
                continue
            if m["index"] in loaded:
                arr = loaded.pop(m["index"])
            else:
                arr = _view(mapping, m)
            arrays.append(arr)
            if fmt == "npz":
                items[_npz_key(m)] = arr
        members = s.members

        def recheck() -> Report:
            v = Validator(threads=n_threads, policy=pol, **limits)
            v.feed(mapping)
            r = v.finish()
            return dataclasses.replace(r, path=path)
        return Mapped(path, fd, mapping, fmt or "npy", members, items, arrays[0] if fmt == "npy" else None, recheck)
    except BaseException:
        os.close(fd)
        raise


def _view(mapping: Any, m: Dict[str, Any]) -> numpy.ndarray:
    """A stored array as a view of the mapping: its data starts where the parser took it from
    the mapped bytes (the first DATA event's offset, zero copy)."""
    dt = _dtype(m["descr"])
    order: Literal["C", "F"] = "F" if m["fortran_order"] else "C"
    if not m["nbytes"]:  # no data: an empty array of its own, read-only as the views are
        arr = numpy.ndarray(m["shape"], dtype=dt, order=order)
        arr.flags.writeable = False
        return arr
    at = m["content_at"] + m["header_len"]
    if m.get("data_offset", at) != at:
        raise RuntimeError("npzstream: the data of member %d is at %r, its header ends at %d"
                           % (m["index"], m.get("data_offset"), at))
    arr = numpy.ndarray(m["shape"], dtype=dt, buffer=mapping, offset=at, order=order)
    if arr.nbytes != m["nbytes"]:
        raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                           % (dt, m["shape"], arr.nbytes, m["nbytes"]))
    return arr


# ---- spool(): validate an upload while writing it to disk ---------------------------------------

class Spool:
    """Write an upload to a temporary file beside `dest` while validating it; move it into place
    only when the verdict is ok.

        sp = npzstream.spool("/data/uploads/x.npz", policy=policy)
        for chunk in body:
            sp.feed(chunk)            # validated, then written; nothing more after a rejection
            if sp.error: break        # (optional) stop reading: the verdict is known
        report = sp.finish()          # ok: fsync, rename onto dest, fsync the directory
                                      # rejected: the temporary file is deleted

    The temporary file is `.NAME.XXXX.part` in dest's directory (the same file system, so the
    rename is atomic: dest is either absent, its old file, or the whole accepted upload).  A
    rejection deletes it at once.  abort() (or an exception leaving a with block) deletes it too.
    afeed() is feed() for async code (large chunks are validated and written off the event loop).
    mode: the file's permissions (default 0o644 minus the umask); overwrite=False refuses to
    replace an existing dest (FileExistsError at finish(), the upload deleted)."""

    def __init__(self, dest: Union[str, "os.PathLike[str]"], *, threads: int = 1, policy: Optional[PolicyLike] = None,
                 hash: bool = False, mode: Optional[int] = None, overwrite: bool = True, **limits: Any) -> None:
        self.dest = os.fspath(dest)
        self._v = Validator(threads=threads, policy=policy, hash=hash, **limits)
        d, name = os.path.split(os.path.abspath(self.dest))
        if not name:
            raise ValueError("npzstream.spool: %r names no file" % self.dest)
        fd, self.temp = tempfile.mkstemp(prefix="." + name + ".", suffix=".part", dir=d)
        self._f: Optional[io.FileIO] = io.FileIO(fd, "wb")
        if mode is None:
            umask = os.umask(0)
            os.umask(umask)
            mode = 0o644 & ~umask
        self._mode = mode
        self._overwrite = overwrite
        self._report: Optional[Report] = None
        self.written = 0

    @property
    def error(self) -> Optional[RejectedError]:
        """The rejection, as soon as it is known (None so far)."""
        return self._v.error

    def feed(self, chunk: Any) -> None:
        """Validate the next bytes, then write them (after a rejection: nothing)."""
        if self._f is None:
            if self._report is None and self._v.error is None:
                raise ValueError("npzstream: feed() after finish() or abort()")
            return
        self._v.feed(chunk)
        if self._v.error is not None:
            self._discard()
            return
        mv = memoryview(chunk).cast("B")
        while mv:
            n = self._f.write(mv)
            if n is None:
                raise BlockingIOError("npzstream: the spool file is non-blocking")
            mv = mv[n:]
        self.written += len(chunk)

    async def afeed(self, chunk: Any) -> None:
        if len(chunk) >= _THREAD_CHUNK:
            await asyncio.get_running_loop().run_in_executor(None, self.feed, chunk)
        else:
            self.feed(chunk)

    def _discard(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
            try:
                os.unlink(self.temp)
            except FileNotFoundError:
                pass

    def abort(self) -> None:
        """Give the upload up: the temporary file is deleted, dest is left as it was."""
        self._discard()

    def finish(self) -> Report:
        """The verdict: a Report (path = dest when it was moved into place)."""
        if self._report is not None:
            return self._report
        if self._f is None and self._v.error is None:
            raise ValueError("npzstream: finish() after abort()")
        report = self._v.finish()
        if not report:
            self._discard()
            self._report = dataclasses.replace(report, path=None)
            return self._report
        f = self._f
        assert f is not None
        try:
            f.flush()
            os.fchmod(f.fileno(), self._mode)
            os.fsync(f.fileno())
            f.close()
            self._f = None
            if self._overwrite:
                os.replace(self.temp, self.dest)
            else:
                os.link(self.temp, self.dest)  # FileExistsError when dest exists: never replaced
                os.unlink(self.temp)
        except BaseException:
            self._f = f if not f.closed else None
            if self._f is not None:
                self._f.close()
                self._f = None
            try:
                os.unlink(self.temp)
            except FileNotFoundError:
                pass
            raise
        _fsync_dir(os.path.dirname(os.path.abspath(self.dest)))
        self._report = dataclasses.replace(report, path=self.dest)
        return self._report

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is not None or self._report is None:
            self.abort()


def _fsync_dir(d: str) -> None:
    try:
        fd = os.open(d, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def spool(dest: Union[str, "os.PathLike[str]"], *, threads: int = 1, policy: Optional[PolicyLike] = None,
          hash: bool = False, mode: Optional[int] = None, overwrite: bool = True, **limits: Any) -> Spool:
    """A `Spool` for dest: feed()/afeed() the upload, finish() for the verdict; the file appears
    at dest only when it was accepted (written beside it, fsynced, renamed)."""
    return Spool(dest, threads=threads, policy=policy, hash=hash, mode=mode, overwrite=overwrite, **limits)


# ---- scan(): many files in a process pool -------------------------------------------------------

def _policy_text(policy: Optional[PolicyLike]) -> Optional[bytes]:
    """policy= as JSON text (what a worker process compiles), checked here first."""
    if policy is None:
        return None
    if isinstance(policy, Policy):
        policy.check()
        return policy.to_json().encode("utf-8")
    if isinstance(policy, Mapping):
        _policy(policy)
        return json.dumps(dict(policy)).encode("utf-8")
    if isinstance(policy, (str, os.PathLike)):
        with io.open(policy, "rb") as f:
            text = f.read()
        _compile_text(text, os.fspath(policy))
        return text
    raise TypeError("scan: policy must be a dict, a Policy or the path of a JSON file, not %s" % type(policy).__name__)


_SCAN_POLICIES: Dict[bytes, Any] = {}


def check_file(path: Union[str, "os.PathLike[str]"], policy_text: Optional[bytes] = None, threads: int = 1,
               hash: bool = False, limits: Optional[Dict[str, Any]] = None, opener: Any = None) -> Report:
    """One file's Report, as scan() makes it in a worker: validate(path) with its path set; a file
    that cannot be read is a Report with error code "io" (as `npzstream check` says it).
    opener: a callable path -> binary file object (an fsspec filesystem's open), or None."""
    pol = None
    if policy_text is not None:
        pol = _SCAN_POLICIES.get(policy_text)
        if pol is None:
            pol = _SCAN_POLICIES[policy_text] = _compile_text(policy_text, None)
    name = path if isinstance(path, str) else os.fspath(path)
    try:
        if opener is None:
            r = validate(name, threads=threads, policy=pol, hash=hash, **(limits or {}))
        else:
            with opener(name) as f:
                r = validate(f, threads=threads, policy=pol, hash=hash, **(limits or {}))
    except OSError as e:
        r = Report(ok=False, format=None, error=RejectedError(e.strerror or str(e), code="io", offset=0))
    return dataclasses.replace(r, path=name)


def scan(paths: Iterable[Union[str, "os.PathLike[str]"]], *, workers: Optional[int] = None,
         policy: Optional[PolicyLike] = None, threads: int = 1, hash: bool = False, **limits: Any) -> Iterator[Report]:
    """Check many files in a process pool: yields one Report a path, in the input's order (each
    report.path is its path; an unreadable file is a report with error code "io").  workers:
    processes (default the CPU count; 0 or 1 checks in this process).  policy, threads, hash and
    the limits are validate()'s.  Reports and RejectedError pickle; the policy is checked here
    before any worker starts (PolicyError).  Dask: examples/python/dask_scan.py."""
    text = _policy_text(policy)
    _limits(dict(limits))  # a bad limit is a ValueError/TypeError here, not in a worker
    _check_threads(threads)
    names = [p if isinstance(p, str) else os.fspath(p) for p in paths]
    n = (os.cpu_count() or 1) if workers is None else workers
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError("workers must be an int >= 0")
    if n <= 1 or len(names) <= 1:
        for name in names:
            yield check_file(name, text, threads, hash, limits)
        return
    import concurrent.futures
    import functools
    import multiprocessing
    # forkserver/spawn: a fork of a process with threads (an event loop, a server) is unsafe
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    with concurrent.futures.ProcessPoolExecutor(max_workers=min(n, len(names)),
                                                mp_context=multiprocessing.get_context(method)) as ex:
        job = functools.partial(check_file, policy_text=text, threads=threads, hash=hash, limits=limits)
        yield from ex.map(job, names, chunksize=max(1, min(64, len(names) // (4 * n))))
