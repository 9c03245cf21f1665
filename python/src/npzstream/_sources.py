"""Where the bytes come from: any source load() and validate() take (bytes, a path, a file, a
socket, an iterable of chunks; for aload() and avalidate() an async iterable or an async read),
read in pieces, in order, never with a seek; and how a chunk is fed from async code."""
from __future__ import annotations

import asyncio
import io
import os
import socket
from typing import Any, Iterable, Union

#: the size of a read from a file or a socket
READ_SIZE = 1 << 20
# chunks this large are fed from a worker thread by _afeed (the parser releases the GIL)
_THREAD_CHUNK = 1 << 18

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


async def _afeed(target: Any, chunk: Any) -> None:
    """target.feed(chunk) from async code (aload, Validator.afeed, Spool.afeed)."""
    if len(chunk) >= _THREAD_CHUNK:  # the parser releases the GIL: the loop keeps running
        await asyncio.get_running_loop().run_in_executor(None, target.feed, chunk)
    else:
        target.feed(chunk)

