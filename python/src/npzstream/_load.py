"""load() and aload(): the arrays of a .npy or .npz, made from the very bytes the parser
validated and handed out after its END verdict; Loader, the same for bytes pushed in pieces.
A file's or a socket's bytes are read here (a stored array's data straight into the array)."""
from __future__ import annotations

import io
import os
import socket
from typing import Any, Callable, Dict, Optional, Union

import numpy

from . import _npzstream
from ._arrays import _alloc_array, _npz_key
from ._limits import DEFAULT_MAX_BYTES, _check_max_bytes, _check_threads, _limits
from ._policy import PolicyLike, _policy
from ._sources import READ_SIZE, Source, _achunks, _afeed, _chunks, _no_data

# a stored array's data is read straight into the array in pieces of this size, each pushed while
# it is still in the cache (the parser's CRC-32 reads it once more)
DIRECT_PIECE = 256 << 10
# the read after an array read in place: its member's end and the next member's records and header
_HEAD_READ = 64 << 10

Loaded = Union[numpy.ndarray, Dict[str, Union[numpy.ndarray, bytes]]]


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
    #: feed(data): push the next bytes (any length, 0 included); raises RejectedError
    feed: Callable[[Union[bytes, bytearray, memoryview]], None]

    def __init__(self, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
                 policy: Optional[PolicyLike] = None, **limits: Any) -> None:
        self._arrays: Dict[int, numpy.ndarray] = {}
        self._s = _npzstream.Stream(_limits(limits), self._alloc, True, _check_max_bytes(max_bytes),
                                    _check_threads(threads), _policy(policy))
        self._result: Optional[Loaded] = None
        self._dst = memoryview(b"")
        self.feed = self._s.feed  # the extension's own method: no Python frame per chunk

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
                    raise _no_data()
                if not n:
                    return
                feed(dst[:n])
                want = _HEAD_READ
                continue
            n = readinto(mv[:want])
            want = READ_SIZE
            if n is None:
                raise _no_data()
            if not n:
                return
            feed(mv[:n])

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


def load(source: Source, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
         policy: Optional[PolicyLike] = None, **limits: Any) -> Loaded:
    """Load a .npy or .npz from source (bytes-like, a path, a binary file object, a socket, or an
    iterable of byte chunks; pipes and sockets are fine: nothing seeks).  A path is read as a
    stream, whatever it names: the path of a FIFO waits for its writer, as reading a pipe does,
    and a device is read until the parser refuses its bytes (at most the limits allow).

    Returns what np.load(f, allow_pickle=False) returns: an ndarray for a .npy, a dict of
    key -> ndarray (bytes for a member that is not a .npy) for an .npz, in the archive's order.
    Raises RejectedError for invalid input (nothing is returned before the END verdict),
    OSError for I/O errors, ValueError/TypeError for a bad limit. max_bytes caps the array and
    blob bytes kept (default 1 GiB): a header declaring more is a rejection (LIMIT.max_bytes)
    before anything is allocated. threads > 1 inflates deflated members (np.savez_compressed) on
    that many worker threads, with the GIL released, while the stream goes on: the same arrays
    and verdicts (the parser still decides), about 128 MiB more memory a thread at most. policy:
    what you accept (a dict, a Policy, or the path of a JSON file), checked as the bytes arrive
    (a Policy is compiled once; a dict is snapshotted on each call: make a Policy to reuse one).
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

