"""Where the bytes come from: any source load() and validate() take (bytes, a path, a file, a
socket, an iterable of chunks; for aload() and avalidate() an async iterable or an async read),
read in pieces, in order, never with a seek; and how a chunk is fed from async code: the event
loop only moves bytes, the parser's heavy work runs on a thread of a small pool."""
from __future__ import annotations

import asyncio
import concurrent.futures
import io
import os
import socket
import threading
from typing import Any, Callable, Iterable, Optional, Union

#: the size of a read from a file or a socket
READ_SIZE = 1 << 20
# what _afeed runs on the event loop at most in one step: cheap work only (ZIP records, headers,
# stored bytes copied and CRC-32'd, some 20 us a 64 KiB), whatever the chunk's length
_CHEAP_MAX = 64 << 10


def _cpus() -> int:
    """The CPUs this process may run on (its affinity; os.cpu_count() where that is unknown)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1


# the threads that parse for async code: a chunk's heavy work (inflating, checking values,
# hashing) waits here in line, one job a call at a time, so that many uploads share the cores
# fairly and a slow one holds back only itself (its reads wait for its job: backpressure).  One
# fewer than the CPUs (at most 8): a core stays free for the event loop and for the rest of the
# machine.  With as many workers as cores, 32 inflating uploads kept both cores of a 2-core
# machine busy, and a client pinging the server waited behind them for a CPU up to 90 ms at a
# time (bench/README.md, "Upload servers under concurrency"): a thread's nice value (below) orders
# the threads of one session, not a server's against other processes (Linux's autogroups)
_WORKERS = max(1, min(8, _cpus() - 1))
# ... at a lower priority than the event loop's thread (Linux's per-thread nice, this much above
# the nice value of the thread that starts the pool): when the cores are busy inflating, the loop
# still gets one as soon as it has something to do
_WORKER_NICE = 10

Source = Union[bytes, bytearray, memoryview, str, os.PathLike[str], Any]


def _no_data() -> BlockingIOError:
    """What a read that returned None (a non-blocking file with nothing to read yet) raises."""
    return BlockingIOError("npzstream: the file is non-blocking and has no data; use Loader.feed")


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
                raise _no_data()
            if not n:
                return
            yield mv[:n]
    read = getattr(source, "read", None)
    if read is not None:
        while True:
            b = read(READ_SIZE)
            if b is None:
                raise _no_data()
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


_pool: Optional[concurrent.futures.ThreadPoolExecutor] = None
_pool_lock = threading.Lock()


def _executor() -> concurrent.futures.ThreadPoolExecutor:
    global _pool
    with _pool_lock:
        if _pool is None:
            _pool = concurrent.futures.ThreadPoolExecutor(_WORKERS, thread_name_prefix="npzstream",
                                                          initializer=_lower_priority)
        return _pool


def _lower_priority() -> None:
    """A worker's nice value: _WORKER_NICE above the one it was started with (its starter's, the
    event loop's thread), at most 19.  Relative: a server started with `nice -n 15` keeps its
    workers below its loop (an absolute 10 would raise them above it, for a process allowed to)."""
    try:  # a thread's own nice value: Linux (elsewhere PRIO_PROCESS would be the whole process)
        if os.uname().sysname == "Linux":
            tid = threading.get_native_id()
            os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + _WORKER_NICE))
    except (AttributeError, OSError):
        pass


def _forget_pool() -> None:  # a forked child has none of its parent's threads
    global _pool, _pool_lock
    _pool = None
    _pool_lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_pool)


async def _in_thread(fn: Callable[..., Any], *args: Any) -> Any:
    """fn(*args) on the pool.  A thread cannot be stopped: when the caller is cancelled, the job
    is waited for before the cancellation goes on, so that nothing the job uses (a parser, a
    file) is closed under it."""
    fut = asyncio.get_running_loop().run_in_executor(_executor(), fn, *args)
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        try:
            await fut
        except BaseException:
            pass
        raise


def _view(chunk: Any) -> memoryview:
    mv = memoryview(chunk)
    return mv if mv.format == "B" and mv.ndim == 1 else mv.cast("B")


async def _afeed(target: Any, chunk: Any) -> None:
    """Push chunk into target (a Loader or a Validator) from async code.  Whether a piece runs
    on the event loop is decided by the work it causes, not by its length: the loop takes at most
    _CHEAP_MAX bytes of cheap steps (the parser stops before a heavy one: a deflated member's
    data, a policy's checks, a hash, a worker to wait for), the rest goes to a pool thread, where
    the parser releases the GIL for every heavy step.  A memory budget with no room pauses the
    parser at a header: the reservation is awaited here, then the rest is pushed."""
    mv = _view(chunk)
    cheap = True
    while True:
        if target._want is not None:
            await target._unpause()  # the budget's room (or its refusal)
        if not mv or target._stopped():
            return
        if cheap and not target._heavy():
            n = target._push(mv[:_CHEAP_MAX], True)
            cheap = False
        else:
            n = await _in_thread(target._push, mv, False)
        mv = mv[n:]


async def _afinish(target: Any) -> Any:
    """target._finish() from async code (on a thread when the parser may wait for a worker),
    with a budget's pause awaited as in _afeed."""
    while True:
        if target._want is not None:
            await target._unpause()
        r = await _in_thread(target._finish) if target._heavy() else target._finish()
        if target._want is None:
            return r
