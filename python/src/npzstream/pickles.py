"""The pickles a .npy or .npz carries, found by npzstream's own parse and handed out as bytes for a
pickle scanner (modelscan, picklescan, fickling, ...): never unpickled, never given to np.load.

    found = npzstream.pickles.find("model.npz")
    for p in found.pickles:        # p.where ("config.pkl"), p.kind, p.offset, p.data (the pickle's bytes)
        my_scanner(p.data)
    for f in found.findings:       # every rejection that is not a pickle, every part not inspected
        print(f)
    if not found:                  # an Embedded is true only when there is neither
        ...

    python -m npzstream.pickles OUTDIR FILE...   # each pickle written to OUTDIR for any other scanner

What is a pickle here, from npzstream's report (the parse decides, not a file name):
- "blob": a member np.load hands back as bytes (not a .npy) whose content sniffs as a pickle (a
  `config.pkl`, a `w.npy` that is a raw pickle): whoever unpickles the bytes runs it;
- "object": an object array (refused: PICKLE.object): its data, the pickle np.load(allow_pickle=True)
  would run; in a .npy from the end of its header, in an .npz the member's data after its header;
- "file": an input that is not a .npy or .npz but sniffs as a pickle (a raw `model.pkl`).
A blob that is a zip or a gzip stream is looked into (depth levels at most) and its pickles named
"outer.zip:inner.pkl".  After a rejection the stream stops; the members after it are read from the
central directory (np.load's own reader, zipfile, so a scanner sees what np.load would) and each is
judged by npzstream alone.  Whatever cannot be read or is over a bound is a finding: nothing is
skipped silently (fail-closed).

Bounded: a pickle (or a member read to judge it) over max_bytes is a finding, not read; at most
max_total bytes of pickles are kept in all."""
from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import os
import struct
import sys
import zipfile
import zlib
from dataclasses import dataclass, field
from typing import IO, Any, Dict, List, Optional, Sequence, Tuple, Union

from ._errors import RejectedError
from ._policy import PolicyLike
from ._regular import _open_regular
from ._validate import Report, validate

#: the largest pickle (or member read to judge it) kept: larger ones are findings
DEFAULT_MAX_BYTES = 64 << 20
#: the pickles kept from one input, in all
DEFAULT_MAX_TOTAL = 256 << 20
#: how deep zip and gzip blobs are looked into
DEFAULT_DEPTH = 2

_NPY_MAGIC = b"\x93NUMPY"
_SNIFF_BYTES = 64  # what npzstream's sniff reads of a blob is its first 16 bytes


@dataclass(frozen=True)
class Pickle:
    """One embedded pickle: where ("config.pkl", "nested.zip:evil.pkl"; "" for the input itself),
    the member's name and index in its archive (None for a .npy or the input itself), kind
    ("blob", "object" or "file"), offset (the member's local header in its archive, or where a
    .npy's data begins) and the pickle's bytes."""
    where: str
    member: Optional[str]
    index: Optional[int]
    kind: str
    offset: int
    data: bytes = field(repr=False)


@dataclass(frozen=True)
class Finding:
    """A reason the input is not clean other than a pickle's bytes: a rejection (code and rule as
    npzstream gives them) or a part not inspected (code "not_inspected", rule None)."""
    where: str
    member: Optional[str]
    offset: int
    code: str
    rule: Optional[str]
    message: str

    def __str__(self) -> str:
        at = " (member %s)" % self.where if self.where else ""
        return "%s at offset %d%s: %s%s" % (self.code, self.offset, at, self.message,
                                            " [%s]" % self.rule if self.rule else "")


@dataclass(frozen=True)
class Embedded:
    """What find() found: npzstream's report on the input, its pickles and its other findings.
    True exactly when there are neither pickles nor findings (nothing for a scanner to look at)."""
    report: Report
    pickles: List[Pickle] = field(default_factory=list)
    findings: List[Finding] = field(default_factory=list)

    def __bool__(self) -> bool:
        return not self.pickles and not self.findings


class _NotRead(Exception):
    """A part that could not be read, or is over a bound: a finding "not_inspected"."""


class _Search:
    """One find(): its bounds, and what it found so far."""

    def __init__(self, max_bytes: int, max_total: int, policy: Optional[PolicyLike], limits: Dict[str, Any]) -> None:
        self.max_bytes, self.left, self.policy, self.limits = max_bytes, max_total, policy, limits
        self.pickles: List[Pickle] = []
        self.findings: List[Finding] = []

    def keep(self, where: str, member: Optional[str], index: Optional[int], kind: str, offset: int, data: bytes) -> None:
        if len(data) > self.left:
            self.not_inspected(where, member, offset, "a pickle of %d bytes is over the %d bytes of pickles kept in all"
                               % (len(data), self.left + sum(len(p.data) for p in self.pickles)))
            return
        self.left -= len(data)
        self.pickles.append(Pickle(where, member, index, kind, offset, data))

    def rejected(self, where: str, member: Optional[str], e: RejectedError) -> None:
        self.findings.append(Finding(where, member, e.offset, e.code, e.rule, e.message))

    def not_inspected(self, where: str, member: Optional[str], offset: int, why: str) -> None:
        self.findings.append(Finding(where, member, offset, "not_inspected", None, why))


def _bounded(read: Any, limit: int, what: str) -> bytes:
    """At most limit bytes from read(n); more is _NotRead."""
    data = read(limit + 1)
    if len(data) > limit:
        raise _NotRead("%s is over %d bytes (max_bytes)" % (what, limit))
    return bytes(data)


def _npy_header_size(pre: bytes) -> Optional[int]:
    """The bytes before a .npy's data (preamble and header) from its first 12 bytes, or None."""
    if len(pre) < 10 or not pre.startswith(_NPY_MAGIC):
        return None
    if pre[6] == 1:
        return 10 + struct.unpack_from("<H", pre, 8)[0]
    if len(pre) >= 12 and pre[6] in (2, 3):
        return 12 + struct.unpack_from("<I", pre, 8)[0]
    return None


def _npy_data(read: Any, limit: int) -> bytes:
    """An object array's data (its pickle) from read(n) at the start of its .npy."""
    pre = read(12)
    size = _npy_header_size(pre)
    if size is None:
        raise _NotRead("the .npy header could not be read again")
    skip = size - len(pre)
    while skip > 0:  # the header npzstream already parsed and refused at its dtype
        got = read(min(skip, 1 << 16))
        if not got:
            raise _NotRead("the .npy header ends early")
        skip -= len(got)
    return _bounded(read, limit, "the object array's data")


def _gunzip(data: bytes, limit: int) -> bytes:
    d = zlib.decompressobj(wbits=31)
    try:
        out = d.decompress(data, limit + 1)
    except zlib.error as e:
        raise _NotRead("the gzip stream could not be inflated: %s" % e)
    if len(out) > limit:
        raise _NotRead("the gzip stream inflates to more than %d bytes (max_bytes)" % limit)
    return out


def _alone(name: str, data: bytes) -> io.BytesIO:
    """A member's bytes as the one stored member of an archive made in memory: npzstream then
    judges it exactly as it judges a member (an array, or a blob and its sniff), by its content."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(zipfile.ZipInfo(name), data)
    buf.seek(0)
    return buf


def _shift(s: _Search, start: Tuple[int, int], where: str, member: Optional[str], index: Optional[int],
           offset: int) -> None:
    """What a look at one member alone added: named and placed as that member of the input."""
    np_, nf = start
    for i in range(np_, len(s.pickles)):
        p = s.pickles[i]
        if p.where == "x":  # the stand-in archive's one member: the member itself
            s.pickles[i] = dataclasses.replace(p, where=where, member=member, index=index, offset=offset)
        else:
            s.pickles[i] = dataclasses.replace(p, where=where + p.where[1:], offset=offset)
    for i in range(nf, len(s.findings)):
        f = s.findings[i]
        s.findings[i] = dataclasses.replace(f, where=where if f.where == "x" else where + f.where[1:], member=member,
                                            offset=offset)


def _judge_alone(s: _Search, data: bytes, where: str, member: Optional[str], index: Optional[int], offset: int,
                 depth: int) -> None:
    """A member read outside npzstream's stream (after a rejection): judged alone by npzstream."""
    start = (len(s.pickles), len(s.findings))
    _search(s, _alone("x", data), "", depth, None)
    _shift(s, start, where, member, index, offset)


def _nested(s: _Search, data: bytes, sniff: str, where: str, member: Optional[str], offset: int, depth: int) -> None:
    """A zip or gzip blob: looked into, its pickles named where:inner."""
    if depth <= 0:
        s.not_inspected(where, member, offset, "a %s nested this deep was not looked into (depth)" % sniff)
        return
    inner = _take(s, lambda: _gunzip(data, s.max_bytes) if sniff == "gzip" else data, where, member, None, "", offset)
    if inner is None:
        return
    start = (len(s.pickles), len(s.findings))
    _search(s, io.BytesIO(inner), where + ":", depth - 1, None)
    # offsets inside the nested stream mean nothing to the reader of the outer file: the blob's
    # (and the stream itself, a raw pickle, is the blob's)
    for i in range(start[0], len(s.pickles)):
        s.pickles[i] = dataclasses.replace(s.pickles[i], offset=offset, member=s.pickles[i].member or member)
    for i in range(start[1], len(s.findings)):
        s.findings[i] = dataclasses.replace(s.findings[i], offset=offset, member=s.findings[i].member or member)


def _top(prefix: str) -> str:
    return prefix[:-1] if prefix else ""


def _search(s: _Search, f: IO[bytes], prefix: str, depth: int, policy: Optional[PolicyLike]) -> Report:
    """f (seekable, at 0): npzstream's verdict (returned), then the pickles it names."""
    report = validate(f, policy=policy, **s.limits)
    err = report.error
    if report.format == "npy":
        if err is not None and err.code == "pickle":
            f.seek(0)
            data_at = _npy_header_size(f.read(12)) or 0
            f.seek(0)
            _take(s, lambda: _npy_data(f.read, s.max_bytes), _top(prefix), None, None, "object", data_at)
        elif err is not None:
            s.rejected(_top(prefix), None, err)
        return report
    if report.format != "npz":
        _not_an_archive(s, f, prefix, depth, err)
        return report
    try:
        f.seek(0)
        zf: Optional[zipfile.ZipFile] = zipfile.ZipFile(f)
    except (zipfile.BadZipFile, OSError, ValueError, EOFError) as e:
        zf = None
        cd_error = str(e)
    entries = {} if zf is None else {zi.header_offset: zi for zi in zf.infolist()}
    for m in report.members:
        if m.kind == "blob" and m.sniff in ("pickle", "zip", "gzip"):
            _blob(s, zf, entries, m.offset, m.name or "", m.index, m.sniff, prefix, depth)
    if err is None:
        return report
    last = report.members[-1].offset if report.members else -1
    if err.code != "pickle":
        s.rejected(prefix + _name_at(entries, last, err), _name_at(entries, last, err) or None, err)
    if zf is None:
        s.not_inspected(_top(prefix), None, err.offset, "the members after the rejection were not inspected: the "
                        "central directory could not be read (%s)" % cd_error)
        return report
    after = sorted(o for o in entries if o > last)
    if err.code == "pickle" and (not after or not (after[0] <= err.offset < (after[1] if len(after) > 1 else 1 << 64))):
        s.not_inspected(_top(prefix), None, err.offset, "the object array at offset %d is not in the central "
                        "directory" % err.offset)
    for o in after:
        zi = entries[o]
        if err.code == "pickle" and o == after[0] and o <= err.offset:
            _take(s, lambda zi=zi: _member(zf, zi, s.max_bytes, True), prefix + zi.filename, zi.filename,
                  err.member, "object", o)
            continue
        data = _take(s, lambda zi=zi: _member(zf, zi, s.max_bytes, False), prefix + zi.filename, zi.filename,
                     None, "", o)
        if data is not None:
            _judge_alone(s, data, prefix + zi.filename, zi.filename, None, o, depth)
    return report


def _member(zf: zipfile.ZipFile, zi: zipfile.ZipInfo, limit: int, npy_data: bool) -> bytes:
    """A member's bytes as zipfile (np.load's reader) reads them, at most limit (or, npy_data, the
    data of the .npy it holds)."""
    with zf.open(zi) as r:
        return _npy_data(r.read, limit) if npy_data else _bounded(r.read, limit, "the member")


def _name_at(entries: Dict[int, zipfile.ZipInfo], last: int, err: RejectedError) -> str:
    """The name of the member a rejection lies in (from the error, else the central directory)."""
    if err.name is not None:
        return err.name.decode("utf-8", "replace")
    after = sorted(o for o in entries if last < o <= err.offset)
    return entries[after[-1]].filename if after else ""


# what reading a member through zipfile raises for a bad or unsupported archive
_ZIP_ERRORS = (zipfile.BadZipFile, RuntimeError, OSError, EOFError, zlib.error, NotImplementedError, ValueError)


def _take(s: _Search, read: Any, where: str, member: Optional[str], index: Optional[int], kind: str,
          offset: int) -> Optional[bytes]:
    """read()'s bytes, kept as a pickle of kind (unless kind is ""), and returned; None, and a
    finding, when they cannot be read or are over a bound."""
    try:
        data: bytes = read()
    except _NotRead as e:
        s.not_inspected(where, member, offset, str(e))
        return None
    except _ZIP_ERRORS as e:
        s.not_inspected(where, member, offset, "could not be read: %s" % e)
        return None
    if kind:
        s.keep(where, member, index, kind, offset, data)
    return data


def _blob(s: _Search, zf: Optional[zipfile.ZipFile], entries: Dict[int, zipfile.ZipInfo], offset: int, name: str,
          index: int, sniff: str, prefix: str, depth: int) -> None:
    where = prefix + name
    zi = entries.get(offset)
    if zf is None or zi is None:
        s.not_inspected(where, name, offset, "the %s member is not in the central directory" % sniff)
        return
    data = _take(s, lambda: _member(zf, zi, s.max_bytes, False), where, name, index,
                 "blob" if sniff == "pickle" else "", offset)
    if data is not None and sniff != "pickle":
        _nested(s, data, sniff, where, name, offset, depth)


def _not_an_archive(s: _Search, f: IO[bytes], prefix: str, depth: int, err: Optional[RejectedError]) -> None:
    """Neither a .npy nor an .npz: the rejection (of the input itself: what a zip or gzip member
    holds need not be NumPy's), and what its content sniffs as (a raw pickle, a gzip stream: looked
    into)."""
    if err is not None and not prefix:
        s.rejected("", None, err)
    f.seek(0)
    head = f.read(_SNIFF_BYTES)
    probe = validate(_alone("x", head), **s.limits)
    sniff = probe.members[0].sniff if probe.members else "unknown"
    if sniff not in ("pickle", "gzip", "zip"):
        return
    f.seek(0)
    data = _take(s, lambda: _bounded(f.read, s.max_bytes, "the input"), _top(prefix), None, None,
                 "file" if sniff == "pickle" else "", 0)
    if data is not None and sniff != "pickle":
        _nested(s, data, sniff, _top(prefix), None, 0, depth)


def find(source: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview, IO[bytes]], *,
         max_bytes: int = DEFAULT_MAX_BYTES, max_total: int = DEFAULT_MAX_TOTAL, depth: int = DEFAULT_DEPTH,
         policy: Optional[PolicyLike] = None, **limits: Any) -> Embedded:
    """The pickles source carries and its other findings (module docstring).  source: a path (a
    regular file), bytes, or a seekable binary file (read from its start).  policy and limits are
    validate()'s, for the input itself.  Nothing is unpickled; OSError for a path that cannot be
    read."""
    for what, v in (("max_bytes", max_bytes), ("max_total", max_total), ("depth", depth)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 0:
            raise ValueError("%s must be an int >= 0" % what)
    s = _Search(max_bytes, max_total, policy, limits)
    if isinstance(source, (bytes, bytearray, memoryview)):
        f: IO[bytes] = io.BytesIO(bytes(source))
        report = _run(s, f, depth)
    elif isinstance(source, (str, os.PathLike)):
        with io.FileIO(_open_regular(os.fspath(source)), "rb") as raw:
            report = _run(s, io.BufferedReader(raw), depth)
    else:
        report = _run(s, source, depth)
    return Embedded(report, s.pickles, s.findings)


def _run(s: _Search, f: IO[bytes], depth: int) -> Report:
    f.seek(0)
    return _search(s, f, "", depth, s.policy)


# ---- writing them out ----------------------------------------------------------------------------

_SAFE = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.")
_NAME_ROOM = 80  # bytes of an escaped name kept (then a hash of the whole name)


def safe_name(text: str, room: int = _NAME_ROOM) -> str:
    """text as a file name component: letters, digits, '-', '_' and '.' kept, every other byte of
    its UTF-8 as %XX (a '/' too: never a path), no leading '.', at most room bytes and then 12 hex
    digits of its SHA-256 (two long names stay apart)."""
    raw = text.encode("utf-8", "surrogateescape")
    out = "".join(chr(b) if b in _SAFE and not (i == 0 and b == 0x2E) else "%%%02X" % b for i, b in enumerate(raw))
    if len(out) > room:
        out = out[:room] + "~" + hashlib.sha256(raw).hexdigest()[:12]
    return out or "_"


def write(found: Embedded, outdir: Union[str, "os.PathLike[str]"], stem: str, *, first: int = 1) -> List[str]:
    """Each pickle of found written into outdir (which must exist) as a new file
    NNNN-STEM-WHERE.pkl (the names escaped by safe_name; NNNN counts from first), created with
    O_EXCL and O_NOFOLLOW (never over a file or through a link: FileExistsError), mode 0600.
    Returns the names written, in order."""
    names = []
    dfd = os.open(outdir, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        for n, p in enumerate(found.pickles, first):
            name = "%04d-%s-%s.pkl" % (n, safe_name(stem), safe_name(p.where or p.kind))
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
                         | getattr(os, "O_CLOEXEC", 0), 0o600, dir_fd=dfd)
            with io.FileIO(fd, "wb") as out:
                view = memoryview(p.data)
                while view:
                    view = view[out.write(view) or 0:]
            names.append(name)
    finally:
        os.close(dfd)
    return names


def main(argv: Optional[Sequence[str]] = None) -> int:
    """python -m npzstream.pickles [--max-bytes N] OUTDIR FILE...: every embedded pickle of every
    FILE written into OUTDIR (write()), one JSON line a pickle written and a finding on stdout.
    Exit status 0: no pickle and no finding; 1: some; 2: a file could not be read or written."""
    import argparse
    ap = argparse.ArgumentParser(prog="python -m npzstream.pickles",
                                 description="Write the pickles embedded in .npy/.npz files out for a pickle scanner.")
    ap.add_argument("--max-bytes", type=int, default=DEFAULT_MAX_BYTES, help="the largest pickle kept (bytes)")
    ap.add_argument("outdir")
    ap.add_argument("files", nargs="+")
    a = ap.parse_args(argv)
    status, n = 0, 1
    for path in a.files:
        try:
            found = find(path, max_bytes=a.max_bytes)
            names = write(found, a.outdir, os.path.basename(path), first=n)
        except (OSError, ValueError) as e:
            print("npzstream.pickles: %s: %s" % (path, e), file=sys.stderr)
            status = 2
            continue
        n += len(names)
        for p, name in zip(found.pickles, names):
            _line({"file": path, "where": p.where, "kind": p.kind, "offset": p.offset, "bytes": len(p.data),
                   "out": os.path.join(a.outdir, name)})
        for f in found.findings:
            _line({"file": path, "where": f.where, "finding": {"code": f.code, "rule": f.rule, "offset": f.offset,
                                                                "message": f.message}})
        if not found and status == 0:
            status = 1
    return status


def _line(obj: Dict[str, Any]) -> None:
    print(json.dumps(obj, ensure_ascii=False), flush=True)


if __name__ == "__main__":
    sys.exit(main())
