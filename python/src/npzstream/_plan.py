"""Plans from headers alone: what a .npy or .npz holds (its arrays' keys, dtypes, shapes and
orders), read by byte ranges, for npzstream.dask to lay out its chunks before anything is
computed.

The library is a stream parser that never seeks; this reads, by range, only the records that
say where things are: for a .npy its preamble and header; for an .npz the end record (and the
ZIP64 locator and end record when it points to them), the central directory, and for each member
asked for its local header, its name and extra fields and its .npy preamble and header.  The
header is parsed by the library itself (fed to a Stream, with the caller's limits): the same
dtype, shape and order a load will find, or the library's rejection.  Of a deflated member the
first compressed bytes are read and inflated until its header is whole (usually well under a
KiB); of a stored member no array data byte is read.

The plan is not the verdict: it checks only what it needs to lay the chunks out (signatures,
bounds, the names of the local headers against the directory's, sizes against the headers).
Every chunk is validated when it is computed, by streaming its file through the library, and
compared with the plan.  A file the planner cannot read raises PlanError; npzstream.dask then
streams it once through the validator, so that the error raised is the library's."""
from __future__ import annotations

import functools
import struct
import zlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

from . import _files

EOCD = b"PK\x05\x06"
LOC64 = b"PK\x06\x07"
EOCD64 = b"PK\x06\x06"
CDH = b"PK\x01\x02"
LFH = b"PK\x03\x04"
NPY_MAGIC = b"\x93NUMPY"
MAX_COMMENT = 0xFFFF
#: a header text longer than this many bytes per decoded character allowed is not read (the
#: library stages at most 4 bytes a character: it would refuse it)
HEADER_BYTES_PER_CHAR = 4


class PlanError(ValueError):
    """The planner could not read the file's records (the library's verdict says why)."""


@dataclass(frozen=True)
class Header:
    """One array as its .npy header declares it."""
    key: Optional[str]           # np.load's key; None for a .npy
    dtype: str                   # NumPy's dtype.str
    descr: Any                   # the dtype as np.dtype() takes it
    shape: Tuple[int, ...]
    fortran_order: bool
    method: str                  # "stored" or "deflated"


@dataclass(frozen=True)
class FilePlan:
    path: str
    format: str                               # "npy" or "npz"
    arrays: Dict[Optional[str], Header]       # in the file's order
    others: Tuple[str, ...] = ()              # keys of members that are not .npy arrays
    ranges: Tuple[Tuple[int, int], ...] = field(default=(), compare=False)  # the byte ranges read


class Ranges:
    """Reads by byte range from an opened file (fsspec's, without read-ahead), each range
    recorded; a range the file does not hold whole is a PlanError (a truncated file)."""

    def __init__(self, f: Any, size: int) -> None:
        self.f = f
        self.size = size
        self.read: List[Tuple[int, int]] = []

    def __call__(self, start: int, end: int) -> bytes:
        if start < 0 or end > self.size or start > end:
            raise PlanError("a record at %d..%d lies outside the file's %d bytes" % (start, end, self.size))
        self.f.seek(start)
        b = self.f.read(end - start)
        self.read.append((start, end))
        if len(b) != end - start:
            raise PlanError("read %d bytes at %d, %d expected: the file changed while it was planned"
                            % (len(b), start, end - start))
        return bytes(b)


def _u(fmt: str, b: bytes, at: int) -> int:
    try:
        return int(struct.unpack_from("<" + fmt, b, at)[0])
    except struct.error:
        raise PlanError("a record is shorter than its fields") from None


def _npy_header(pre_and_text: bytes, limits: Dict[str, Any]) -> Dict[str, Any]:
    """The library's reading of a .npy preamble and header (the HEADER event's member dict)."""
    got: List[Dict[str, Any]] = []
    s = _files.stream(limits, on_header=lambda m: got.append(dict(m)))
    try:
        s.feed(pre_and_text)
    except _files.npzstream.RejectedError as e:
        raise PlanError("its .npy header: %s" % e) from None
    if not got:
        raise PlanError("its .npy header is not whole")
    return got[0]


def _preamble(b: bytes) -> Tuple[int, int]:
    """(preamble length, header text length) of a .npy's first 12 bytes; PlanError when they are
    not a .npy's."""
    if len(b) < 10 or b[:6] != NPY_MAGIC:
        raise PlanError("not a .npy")
    if b[6] == 1:
        return 10, _u("H", b, 8)
    if b[6] in (2, 3) and len(b) >= 12:
        return 12, _u("I", b, 8)
    raise PlanError(".npy version %d.%d" % (b[6], b[7]))


def _text_cap(limits: Dict[str, Any]) -> int:
    chars = limits.get("max_header_size", _files.npzstream.DEFAULT_LIMITS["max_header_size"])
    return int(chars) * HEADER_BYTES_PER_CHAR + 64


def _header(key: Optional[str], read_text: Callable[[int, int], bytes], first: bytes, limits: Dict[str, Any],
            method: str, room: int) -> Header:
    """A member's (or a .npy's) Header: first holds its first 12 content bytes (fewer for a short
    member); read_text(a, b) gives content bytes a..b; room: the content's length."""
    pre, hl = _preamble(first)
    if hl > _text_cap(limits):
        raise PlanError("a .npy header of %d bytes (above what max_header_size allows)" % hl)
    if pre + hl > room:
        raise PlanError("a .npy header runs past its member's end")
    text = first[:pre + hl] if len(first) >= pre + hl else first[:pre] + read_text(pre, pre + hl)
    m = _npy_header(text, limits)
    nbytes = int(m["nbytes"])
    if int(m["header_len"]) != pre + hl or pre + hl + nbytes > room:
        raise PlanError("its array's %d bytes run past its member's end" % nbytes)
    return Header(key=key, dtype=m["dtype"], descr=m["descr"], shape=tuple(int(d) for d in m["shape"]),
                  fortran_order=bool(m["fortran_order"]), method=method)


def _npy(path: str, read: Ranges, first: bytes, limits: Dict[str, Any]) -> FilePlan:
    h = _header(None, lambda a, b: read(a, b), first, limits, "stored", read.size)
    return FilePlan(path, "npy", {None: h})


@dataclass
class _Entry:
    name: bytes
    key: str
    flags: int
    method: int
    csize: int
    usize: int
    local: int


#: how far back the end record of an archive with a comment is looked for, step by step: a short
#: comment costs a short read (the directory before it is not data either)
COMMENT_STEPS = (64, 256, 1024, 4096, 16384, MAX_COMMENT)


def _commented_end(read: Ranges) -> Tuple[bytes, int]:
    """The end record followed by a comment that reaches the file's end, and its offset."""
    size = read.size
    for step in COMMENT_STEPS:
        start = max(0, size - 22 - step)
        tail = read(start, size)
        for i in range(len(tail) - 22, -1, -1):
            if tail[i:i + 4] == EOCD and i + 22 + _u("H", tail, i + 20) == len(tail):
                return tail[i:i + 22], start + i
        if start == 0:
            break
    raise PlanError("no end of central directory record")


def _end_records(read: Ranges) -> Tuple[int, int, int]:
    """(entries, directory size, directory offset) from the end record, or the ZIP64 one it
    points to."""
    size = read.size
    if size < 22:
        raise PlanError("too short for an end record")
    tail = read(size - 22, size)
    at = size - 22
    if tail[:4] != EOCD or _u("H", tail, 20) != 0:  # a comment: the record is further back
        tail, at = _commented_end(read)
    n, cd_size, cd_off = _u("H", tail, 10), _u("I", tail, 12), _u("I", tail, 16)
    if n == 0xFFFF or cd_size == 0xFFFFFFFF or cd_off == 0xFFFFFFFF:
        if at < 20:
            raise PlanError("no ZIP64 locator before the end record")
        loc = read(at - 20, at)
        if loc[:4] != LOC64:
            raise PlanError("no ZIP64 locator before the end record")
        off = _u("Q", loc, 8)
        rec = read(off, off + 56)
        if rec[:4] != EOCD64:
            raise PlanError("no ZIP64 end record where the locator points")
        n, cd_size, cd_off = _u("Q", rec, 32), _u("Q", rec, 40), _u("Q", rec, 48)
    return n, cd_size, cd_off


def _zip64(extra: bytes, values: List[int]) -> List[int]:
    """The directory's 32-bit fields that are 0xFFFFFFFF, taken from its ZIP64 extra field (in
    order: uncompressed size, compressed size, local header offset)."""
    i = 0
    while i + 4 <= len(extra):
        tag, n = _u("H", extra, i), _u("H", extra, i + 2)
        if tag == 1:
            k = i + 4
            out = []
            for v in values:
                if v == 0xFFFFFFFF:
                    if k + 8 > i + 4 + n:
                        raise PlanError("a ZIP64 extra field is too short")
                    v = _u("Q", extra, k)
                    k += 8
                out.append(v)
            return out
        i += 4 + n
    if 0xFFFFFFFF in values:
        raise PlanError("a directory entry needs a ZIP64 extra field it has not")
    return values


def _directory(read: Ranges, limits: Dict[str, Any]) -> List[_Entry]:
    n, cd_size, cd_off = _end_records(read)
    max_members = limits.get("max_members", _files.npzstream.DEFAULT_LIMITS["max_members"])
    if n > max_members:
        raise PlanError("%d members, above max_members" % n)
    if cd_off + cd_size > read.size:
        raise PlanError("the central directory lies past the file's end")
    cd = read(cd_off, cd_off + cd_size)
    out = []
    p = 0
    for _ in range(n):
        if cd[p:p + 4] != CDH:
            raise PlanError("a central directory entry without its signature at %d" % (cd_off + p))
        flags, method = _u("H", cd, p + 8), _u("H", cd, p + 10)
        csize, usize = _u("I", cd, p + 20), _u("I", cd, p + 24)
        nl, xl, cl = _u("H", cd, p + 28), _u("H", cd, p + 30), _u("H", cd, p + 32)
        local = _u("I", cd, p + 42)
        name = cd[p + 46:p + 46 + nl]
        extra = cd[p + 46 + nl:p + 46 + nl + xl]
        if len(name) != nl or len(extra) != xl:
            raise PlanError("a central directory entry runs past the directory")
        usize, csize, local = _zip64(extra, [usize, csize, local])
        try:
            text = name.decode("utf-8" if flags & 0x800 else "ascii")
        except UnicodeDecodeError:
            raise PlanError("a member name that is not UTF-8 (or ASCII without the UTF-8 flag)") from None
        if method not in (0, 8) or flags & 1:
            raise PlanError("member %r: method %d%s" % (text, method, ", encrypted" if flags & 1 else ""))
        out.append(_Entry(name, text[:-4] if text.endswith(".npy") else text, flags, method, csize, usize, local))
        p += 46 + nl + xl + cl
    return out


def _inflated_head(read: Ranges, at: int, csize: int, want: int) -> Callable[[int, int], bytes]:
    """Content bytes a..b (b <= want) of a deflated member whose compressed data starts at `at`:
    its first compressed bytes read and inflated, no further than the header needs."""
    d = zlib.decompressobj(-15)
    got = bytearray()
    pos, step = at, 512

    def upto(b: int) -> None:
        nonlocal pos, step
        while len(got) < b:
            if pos >= at + csize:
                raise PlanError("the deflated member ends before its .npy header does")
            end = min(pos + step, at + csize)
            chunk = read(pos, end)
            pos, step = end, step * 2
            try:
                got.extend(d.decompress(d.unconsumed_tail + chunk, want - len(got)))
            except zlib.error as e:
                raise PlanError("its deflate data: %s" % e) from None

    def text(a: int, b: int) -> bytes:
        upto(b)
        return bytes(got[a:b])
    upto(min(12, want))
    return text


def _shifted(read: Ranges, at: int, a: int, b: int) -> bytes:
    return read(at + a, at + b)


def _npz(path: str, read: Ranges, keys: Optional[Sequence[str]], limits: Dict[str, Any]) -> FilePlan:
    entries = _directory(read, limits)
    by_key = {e.key: e for e in entries}
    if len(by_key) != len(entries):
        raise PlanError("two members with one key")
    if keys is not None:
        missing = [k for k in keys if k not in by_key]
        if missing:
            raise KeyError("%s has no member %r (its keys: %s)" % (path, missing[0], ", ".join(by_key)))
    wanted = entries if keys is None else [by_key[k] for k in keys]
    arrays: Dict[Optional[str], Header] = {}
    others: List[str] = []
    for e in wanted:
        lh = read(e.local, e.local + 30)
        if lh[:4] != LFH:
            raise PlanError("member %r: no local header at %d" % (e.key, e.local))
        nl, xl = _u("H", lh, 26), _u("H", lh, 28)
        content = e.local + 30 + nl + xl
        if content + e.csize > read.size:
            raise PlanError("member %r runs past the file's end" % e.key)
        method = "stored" if e.method == 0 else "deflated"
        text_of: Callable[[int, int], bytes]
        if e.method == 0:
            if e.csize != e.usize:
                raise PlanError("stored member %r: %d bytes stored, %d declared" % (e.key, e.csize, e.usize))
            names = read(e.local + 30, content + min(12, e.csize))
            first = names[nl + xl:]
            text_of = functools.partial(_shifted, read, content)
        else:
            names = read(e.local + 30, content)
            text_of = _inflated_head(read, content, e.csize, min(e.usize, 12 + _text_cap(limits)))
            first = text_of(0, min(12, e.usize))
        if names[:nl] != e.name:
            raise PlanError("member %r: the local header's name differs from the directory's" % e.key)
        if first[:6] != NPY_MAGIC:
            others.append(e.key)
            continue
        arrays[e.key] = _header(e.key, text_of, first, limits, method, e.usize)
    if keys is not None and others:
        raise KeyError("%s: member %r is not a .npy array" % (path, others[0]))
    return FilePlan(path, "npz", arrays, tuple(others))


def plan_file(path: str, f: Any, size: int, keys: Optional[Sequence[str]], limits: Dict[str, Any]) -> FilePlan:
    """The plan of one file, opened as f (seekable, no read-ahead) of size bytes; keys: the
    members to plan (None: all).  Raises PlanError, or KeyError for a key it has not."""
    read = Ranges(f, size)
    head = read(0, min(12, size))  # an .npz's first local header, or a .npy's preamble: no data
    if head[:4] in (LFH, EOCD):
        plan = _npz(path, read, keys, limits)
    elif head[:6] == NPY_MAGIC:
        plan = _npy(path, read, head, limits)
    else:
        raise PlanError("neither a .npy nor an .npz (it starts with %r)" % head)
    return FilePlan(plan.path, plan.format, plan.arrays, plan.others, tuple(read.read))
