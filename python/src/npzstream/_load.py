"""load() and aload(): the arrays of a .npy or .npz, made from the very bytes the parser
validated and handed out after its END verdict; Loader, the same for bytes pushed in pieces.
A file's or a socket's bytes are read here (a stored array's data straight into the array)."""
from __future__ import annotations

import io
import os
import socket
import weakref
from typing import Any, Callable, Dict, Optional, Tuple, Union

import numpy

from . import _npzstream
from ._arrays import _alloc_array, _npz_key
from ._budget import Budget, _charge, _where
from ._limits import DEFAULT_MAX_BYTES, _check_max_bytes, _check_threads, _limits
from ._policy import PolicyLike, _policy
from ._sources import READ_SIZE, Source, _achunks, _afeed, _afinish, _chunks, _no_data

# a stored array's data is read straight into the array in pieces of this size, each pushed while
# it is still in the cache (the parser's CRC-32 reads it once more)
DIRECT_PIECE = 256 << 10
# the read after an array read in place: its member's end and the next member's records and header
_HEAD_READ = 64 << 10

Loaded = Union[numpy.ndarray, Dict[str, Union[numpy.ndarray, bytes]]]


def _weak(method: Callable[..., Any]) -> Callable[..., Any]:
    """method, holding its object weakly (the parser's callbacks would make a cycle)."""
    ref = weakref.WeakMethod(method)

    def call(*args: Any) -> Any:
        m = ref()
        if m is None:
            raise RuntimeError("npzstream: the Loader is gone")
        return m(*args)
    return call


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
    allocated).  In async code, ``await ld.afeed(chunk)`` and ``await ld.afinish()``: the
    parser's heavy work runs on a thread, the event loop only moves bytes.  budget= (a
    `Budget`) reserves each array before it is allocated (see Budget)."""
    def __init__(self, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
                 policy: Optional[PolicyLike] = None, budget: Optional[Budget] = None, **limits: Any) -> None:
        self._arrays: Dict[int, numpy.ndarray] = {}
        self._charge = _charge(budget)
        threads = _check_threads(threads)
        # with a budget: the parallel helper's buffers (reserved before the first byte), the bytes
        # reserved ahead by an async wait, and the reservation a paused stream waits for
        self._helper = threads << 27 if threads > 1 and self._charge is not None else 0
        self._prepaid = 0
        self._want: Optional[Tuple[int, Dict[str, Any]]] = None
        self._async = False
        self._error: Optional[BaseException] = None
        # the callbacks hold the loader weakly: a loader is freed (and its arrays with it, and
        # the budget's part given back) when its last reference goes, not at a garbage collection
        self._s = _npzstream.Stream(_limits(limits), _weak(self._alloc), True, _check_max_bytes(max_bytes),
                                    threads, _policy(policy), on_blob=None if self._charge is None else _weak(self._blob))
        self._result: Optional[Loaded] = None
        self._dst = memoryview(b"")
        if self._charge is None:  # the extension's own method: no Python frame per chunk
            self.feed = self._s.feed  # type: ignore[method-assign]
        else:  # dropped before its end: what it holds of the budget goes back
            weakref.finalize(self, self._charge.abandoned).atexit = False

    # ---- a budget's reservations: waited for here (feed), or awaited by _afeed (a pause) ------

    def _reserve(self, n: int, m: Dict[str, Any]) -> bool:
        """n bytes of the budget for member m: False when async code must await them first."""
        c = self._charge
        if c is None or n <= 0:
            return True
        if self._prepaid >= n:  # awaited during a pause
            self._prepaid -= n
            return True
        if not self._async:
            c.take(n, _where(m))
            return True
        if c.try_take(n, _where(m)):
            return True
        self._want = (n, _where(m))  # the stream pauses; _afeed awaits, then it goes on
        return False

    async def _unpause(self) -> None:
        assert self._want is not None and self._charge is not None
        n, where = self._want
        try:
            await self._charge.atake(n, where)
        except BaseException as e:
            self._fail(e)
            raise
        self._prepaid += n
        self._want = None

    def _alloc(self, m: Dict[str, Any]) -> Union[memoryview, None, bool]:
        if not self._reserve(m["nbytes"], m):
            return False
        dst = _alloc_array(self._arrays, m)
        if self._charge is not None:
            self._charge.attach(self._arrays[m["index"]], m["nbytes"])
        if dst is not None:
            self._dst = dst
        return dst

    def _blob(self, m: Dict[str, Any], n: int) -> bool:
        if not self._reserve(n, m):
            return False
        assert self._charge is not None
        self._charge.blob(n)
        return True

    def _helper_reserved(self) -> bool:
        """The parallel helper's buffers, reserved before the first byte (sync: waited for)."""
        if self._helper and self._charge is not None and not self._charge.held and not self._prepaid:
            if self._async:
                self._want = (self._helper, {"offset": 0})
                return False
            self._charge.take(self._helper, {"offset": 0})
        return True

    def _fail(self, e: BaseException) -> None:
        """The input was rejected (or the call failed): what the budget lent goes back now."""
        if self._error is None:
            self._error = e
        self._arrays = {}
        self._dst = memoryview(b"")
        if self._charge is not None:
            self._charge.release()

    def feed(self, data: Any) -> None:
        """Push the next bytes (any length, 0 included); raises RejectedError.  (Without a budget
        the instance's feed is the parser's own method: no Python frame per chunk.)"""
        self._feed_with(self._s.feed, data)

    def _feed_with(self, push: Callable[[Any], None], data: Any) -> None:
        if self._error is not None:
            raise self._error
        self._async = False
        try:
            self._helper_reserved()
            push(data)
        except BaseException as e:
            self._fail(e)
            raise

    def _feed_held(self, data: Any) -> None:
        """feed(), the bytes read where they are by the worker threads (no copy) and held until
        _release(): for load(), whose caller's bytes outlive the call."""
        if self._charge is None:
            self._s.feed_held(data)
        else:
            self._feed_with(self._s.feed_held, data)

    def _release(self) -> None:
        """The input's end: the worker threads stop, the buffers _feed_held kept are released."""
        self._s.release()

    # ---- async code -------------------------------------------------------------------------

    def _push(self, data: Any, cheap: bool) -> int:
        try:
            return self._s.push(data, cheap)
        except BaseException as e:
            self._fail(e)
            raise

    def _heavy(self) -> bool:
        return self._s.heavy

    def _stopped(self) -> bool:
        if self._error is not None:
            raise self._error
        return False

    async def afeed(self, chunk: Any) -> None:
        """feed() for async code: cheap steps on the event loop, the parser's heavy work on a
        thread; a budget's wait is awaited.  Raises RejectedError as feed() does."""
        if self._error is not None:
            raise self._error
        self._async = True
        if not self._helper_reserved():
            await self._unpause()
            self._prepaid -= self._helper
        await _afeed(self, chunk)

    async def afinish(self) -> Loaded:
        """finish() for async code."""
        if self._error is not None:
            raise self._error
        self._async = True
        return await _afinish(self)

    def _read_in_place(self, readinto: Callable[[Any], Optional[int]]) -> None:
        """_read_from, with a budget's reservations given back when the input is rejected."""
        if self._charge is None:
            return self._read_from(readinto)
        self._async = False
        try:
            self._helper_reserved()
            self._read_from(readinto)
        except BaseException as e:
            self._fail(e)
            raise

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

    def _finish(self) -> Loaded:
        if self._result is None:
            if self._error is not None:
                raise self._error
            try:
                if self._s.finish() is False:  # paused: _afinish awaits the budget, then calls again
                    return None  # type: ignore[return-value]
            except BaseException as e:
                self._fail(e)
                raise
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
            if self._charge is not None:  # the helper's buffers go with the call; blobs with the arrays
                self._charge.give(self._helper)
                self._charge.end()
        return self._result

    def finish(self) -> Loaded:
        """The end of the input: returns the arrays, or raises RejectedError."""
        self._async = False
        return self._finish()

    @property
    def consumed(self) -> int:
        """Input bytes consumed so far."""
        return self._s.consumed

    @property
    def inflated_ahead(self) -> int:
        """Members inflated by the worker threads (threads > 1) so far."""
        return int(self._s.inflated_ahead)


def load(source: Source, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
         policy: Optional[PolicyLike] = None, budget: Optional[Budget] = None, **limits: Any) -> Loaded:
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
    budget: a `Budget` shared by the calls of a process: each array is reserved there before it
    is allocated (waiting for room, at most the budget's timeout), and given back when it is
    dropped.  The other keywords are the library's limits (LIMITS; ints or sizes such as "4Gi")."""
    ld = Loader(max_bytes=max_bytes, threads=threads, policy=policy, budget=budget, **limits)
    feed = ld.feed
    if threads > 1 and isinstance(source, (bytes, bytearray, memoryview)):
        # bytes in hand, with worker threads: they read them where they are (no copy of the
        # compressed bytes: with one member, where a second worker has nothing to do, the copy
        # would make threads > 1 slower than one thread); held until the call's end
        try:
            ld._feed_held(source)
            return ld.finish()
        finally:
            ld._release()
    if isinstance(source, (list, tuple)):  # chunks in hand: no generator in between
        for chunk in source:
            feed(chunk)
    elif threads == 1 and isinstance(source, (str, os.PathLike)):
        with io.open(source, "rb", buffering=0) as f:
            ld._read_in_place(f.readinto)
    elif threads == 1 and isinstance(source, socket.socket):
        ld._read_in_place(source.recv_into)
    elif threads == 1 and not isinstance(source, (bytes, bytearray, memoryview)) and hasattr(source, "readinto"):
        ld._read_in_place(source.readinto)
    else:  # bytes in hand, iterables; with worker threads the helper reads ahead of the parser
        for chunk in _chunks(source):
            feed(chunk)
    return ld.finish()


async def aload(source: Any, *, max_bytes: Union[int, str] = DEFAULT_MAX_BYTES, threads: int = 1,
                policy: Optional[PolicyLike] = None, budget: Optional[Budget] = None, **limits: Any) -> Loaded:
    """load() for async code: source is an async iterable of byte chunks, or an object with an
    async read(n) (aiohttp's StreamReader, ...).  The event loop only moves bytes: the parser's
    heavy work (inflating, a policy's checks, hashing) runs on a thread of a small pool, decided
    by the work a chunk causes, not by its length, and a budget's wait is awaited."""
    ld = Loader(max_bytes=max_bytes, threads=threads, policy=policy, budget=budget, **limits)
    async for chunk in _achunks(source):
        await ld.afeed(chunk)
    return await ld.afinish()
