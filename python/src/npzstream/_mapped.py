"""open(): a .npy or .npz file mapped (or the caller's bytes in memory) and validated in one pass,
then its arrays as read-only views of those bytes (a deflated member inflated during the pass), in
a Mapped; Mapped.verify() validates the same bytes again."""
from __future__ import annotations

import dataclasses
import hashlib
import os
from typing import Any, Callable, Dict, Iterator, List, Mapping, Optional, Union, cast

import numpy

from . import _npzstream
from ._arrays import _alloc_array, _array, _npz_key
from ._errors import RejectedError
from ._limits import DEFAULT_MAX_BYTES, _check_max_bytes, _check_threads, _limits
from ._policy import PolicyLike, _policy
from ._regular import _NotRegularFile, _open_regular
from ._validate import Member, Report, Validator, _member


class Mapped(Mapping[str, Union[numpy.ndarray, bytes]]):
    """What `open` returns: a read-only mapping of key -> array over a mapped file (or over the
    caller's bytes: `path` is then None), the verdict given.  A stored member's array is a
    read-only view of the mapping (no copy, no private memory); a deflated member's array was
    inflated during the validating pass (its own memory); a member that is not a .npy is bytes,
    as np.load gives it.  A .npy has one array: `.array` (its mapping view has no keys: indexing
    it is a TypeError that says so).

    Closing (close(), or leaving the with block) drops the file's references: the mapping is
    unmapped as soon as no array made from it is referenced any more (each view holds the
    mapping through ndarray.base, so an array stays valid for as long as it is used, and nothing
    can unmap memory an array still points at).

    What a mapping cannot promise: the verdict is about the bytes the pass read, each when it was
    read; a rewrite while the pass runs can give a verdict on a mix of old and new bytes (a CRC-32
    checked over pages that then change), and one after it is not seen at all.  The pages are
    private, but on Linux a page nobody wrote follows the file: if another process rewrites the
    file afterwards, the views show the new bytes, and if it truncates the file,
    touching a page past the new end kills the process with SIGBUS.  Map only files nobody else
    writes (your own, or read-only ones); `load` copies the bytes and has none of this.  Over the
    caller's bytes the same holds of a bytearray (or a writable buffer) written after open():
    the views show the new bytes; bytes never change.
    `verify()` checks the file's size and validates the mapping again (every record and CRC-32):
    a CRC-32 is no digest, and a rewrite that keeps every CRC-32 passes it; opened with
    digest=True, it also compares the SHA-256 of every mapped byte with the one taken at open."""

    def __init__(self, path: Optional[str], fd: Optional[int], mapping: Any, fmt: str, members: List[Dict[str, Any]],
                 items: Dict[str, Union[numpy.ndarray, bytes]], array: Optional[numpy.ndarray],
                 recheck: Callable[[], Any], digest: Optional[bytes] = None) -> None:
        self.path = path
        self.format = fmt
        self._fd: Optional[int] = fd
        self._map: Any = mapping
        self._raw = members
        self.members: List[Member] = [_member(m) for m in members]
        self._items: Optional[Dict[str, Union[numpy.ndarray, bytes]]] = items
        self._array = array
        self._recheck = recheck
        self._digest = digest

    @property
    def sha256(self) -> Optional[str]:
        """The SHA-256 of the file as open() read it (hex), with digest=True; else None."""
        return None if self._digest is None else self._digest.hex()

    @property
    def closed(self) -> bool:
        return self._items is None

    @property
    def size(self) -> int:
        """The bytes mapped (the file's size when it was opened), or the caller's bytes."""
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
        """Validate the mapped bytes again, against the verdict of open(): a Report, true when the
        file has the same size, is valid (every record and CRC-32 checked again) and has the same
        members with the same headers, sizes and CRC-32s.  That finds a file truncated, grown,
        or rewritten by chance or by a tool that does not mean to hide it; it does NOT prove the
        bytes unchanged: a CRC-32 is no digest, and a rewrite can change an array's values and
        keep every CRC-32 (CRC-32 is linear: four bytes chosen by solving for them restore it).  Opened with
        digest=True, verify() also compares the SHA-256 of every mapped byte with the one taken at
        open (another read of the whole file): then a true Report does mean the bytes are those
        open() read.  Either way it speaks of the moment it ran.  A stored member's view shows
        what the file holds now; a deflated member's array was inflated at open() and does not
        change, but its compressed bytes are checked too."""
        self._check_open()
        # the caller's bytes cannot change size: the view open() holds keeps them from being resized
        size = self.size if self._fd is None else os.fstat(self._fd).st_size
        if size != self.size:  # never read a page past a truncated end (SIGBUS)
            return Report(ok=False, format=self.format, members=[], path=self.path,
                          error=RejectedError("the file's size changed since it was opened (%d bytes, now %d)"
                                              % (self.size, size), code="changed", offset=min(size, self.size),
                                              rule="OPEN.changed"))
        if self._digest is not None and hashlib.sha256(cast(Any, self._map)).digest() != self._digest:
            return Report(ok=False, format=self.format, members=[], path=self.path,
                          error=RejectedError("the file's bytes changed since it was opened (their SHA-256 differs)",
                                              code="changed", offset=0, rule="OPEN.changed"))
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


#: what open() takes as the file's bytes themselves (as load() does), not as a path
_BYTES = (bytes, bytearray, memoryview)


def open(path: Union[str, "os.PathLike[str]", bytes, bytearray, memoryview], *, policy: Optional[PolicyLike] = None,
         threads: int = 1, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, digest: bool = False,
         **limits: Any) -> Mapped:
    """Map a .npy or .npz file and validate it whole in one pass (the verdict of `load`); then
    return a `Mapped`: key -> array, where every stored member is a read-only view of a private
    mapping of the file (zero copies, no private memory) and every deflated member an array
    inflated during the pass (threads > 1: on worker threads).  A .npy's array is `.array`.

        with npzstream.open("weights.npz", max_total_bytes="64Gi") as z:
            w = z["w"]          # an ndarray over the file's pages

    Given bytes, a bytearray or a memoryview (the file's bytes already in memory, as `load`
    takes them), open validates those bytes in place and its stored arrays are read-only views
    of them: no copy (`path` is then None; use memoryview(x) for another buffer, an mmap or a
    NumPy array).  The views hold the buffer, so a bytearray cannot be resized while one lives;
    writing into a bytearray or a writable buffer changes the views, as rewriting a mapped file
    does (verify() validates the bytes as they are then).

    Raises RejectedError (nothing is returned before the verdict), OSError, and ValueError for
    a file that cannot be mapped: a FIFO, a device or a directory is refused before it is opened
    (use load for pipes and sockets), and open() never waits on one; ValueError for a buffer
    that is not contiguous.  max_bytes caps the private memory (the deflated members and the
    blobs); the limits are load's (max_total_bytes bounds the content: raise it for files over
    1 GiB).  digest=True takes the SHA-256 of the whole file before the validating pass (one
    more read of it), which `Mapped.verify` then compares: see `Mapped` for what a mapping
    cannot promise."""
    if isinstance(path, _BYTES):
        return _validated(None, None, _held_bytes(path), policy, threads, max_bytes, digest, limits)
    path = os.fspath(path)
    try:
        fd = _open_regular(path)
    except _NotRegularFile as e:
        raise ValueError("npzstream.open: %s (use load for pipes and sockets)" % e) from None
    try:
        size = os.fstat(fd).st_size
        mapping = _npzstream.Map(fd, size, size <= POPULATE_MAX)
        return _validated(path, fd, mapping, policy, threads, max_bytes, digest, limits)
    except BaseException:
        os.close(fd)
        raise


def _held_bytes(data: Union[bytes, bytearray, memoryview]) -> numpy.ndarray:
    """The caller's bytes as one read-only run of bytes (a view: no copy) that the arrays are
    made over: a uint8 array over a read-only memoryview of them.  Its export keeps a bytearray
    from being resized under the arrays, and the arrays, whose base it is, cannot be made
    writeable (an array made over the memoryview itself would have the bytearray as its base)."""
    view = memoryview(data)
    if not view.c_contiguous:
        raise ValueError("npzstream.open: the bytes are not contiguous (a memoryview with strides)")
    return numpy.frombuffer(view.cast("B").toreadonly(), numpy.uint8)


def _validated(path: Optional[str], fd: Optional[int], mapping: Any, policy: Optional[PolicyLike], threads: int,
               max_bytes: Union[int, str], digest: bool, limits: Dict[str, Any]) -> Mapped:
    """open()'s one pass over the bytes (a file's mapping, fd its descriptor; or the caller's
    bytes, fd None), then the Mapped of its arrays."""
    lim = _limits(limits)
    pol = _policy(policy)
    n_threads = _check_threads(threads)
    loaded: Dict[int, numpy.ndarray] = {}
    mapped = fd is not None

    def alloc(m: Dict[str, Any]) -> Optional[memoryview]:  # a deflated member: inflated into its array
        return _alloc_array(loaded, m)
    s = _npzstream.Stream(lim, alloc, True, _check_max_bytes(max_bytes), n_threads, pol, False, True)
    if mapped:
        mapping.madvise("sequential")  # one pass, front to back
    # the digest first: a change after it (during the pass included) is one verify() finds
    sha = hashlib.sha256(cast(Any, mapping)).digest() if digest else None
    try:  # worker threads read the bytes where they are (no copy), until the stream's release
        s.feed_held(mapping)
        s.finish()
    finally:
        s.release()
    if mapped:
        mapping.madvise("normal")  # then the arrays, in any order
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
    return Mapped(path, fd, mapping, fmt or "npy", members, items, arrays[0] if fmt == "npy" else None, recheck, sha)


def _view(mapping: Any, m: Dict[str, Any]) -> numpy.ndarray:
    """A stored array as a view of the mapping: its data starts where the parser took it from
    the mapped bytes (the first DATA event's offset, zero copy)."""
    if not m["nbytes"]:  # no data: an empty array of its own, read-only as the views are
        arr = _array(m)
        arr.flags.writeable = False
        return arr
    at = m["content_at"] + m["header_len"]
    if m.get("data_offset", at) != at:
        raise RuntimeError("npzstream: the data of member %d is at %r, its header ends at %d"
                           % (m["index"], m.get("data_offset"), at))
    return _array(m, mapping, at)
