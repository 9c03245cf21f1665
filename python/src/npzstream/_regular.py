"""Files that are read whole or mapped (a policy file, open()'s and scan()'s files) are regular
files: a FIFO, a device or a directory is refused before it is opened (opening a FIFO waits for a
writer, opening a device may act on it) and again after it is (it may have been swapped in)."""
from __future__ import annotations

import os
import stat


class _NotRegularFile(ValueError):
    pass


_FILE_KINDS = ((stat.S_ISFIFO, "a FIFO"), (stat.S_ISCHR, "a character device"), (stat.S_ISBLK, "a block device"),
               (stat.S_ISDIR, "a directory"), (stat.S_ISSOCK, "a socket"))


def _check_regular(path: str, mode: int) -> None:
    if not stat.S_ISREG(mode):
        kind = next((what for test, what in _FILE_KINDS if test(mode)), "not a file")
        raise _NotRegularFile("%r is %s, not a regular file" % (path, kind))


def _open_regular(path: str) -> int:
    """A read-only descriptor of path, a regular file.  Anything else (a FIFO, a device, a
    directory) is refused before it is opened (opening a FIFO waits for a writer, opening a
    device may act on it) and again after (it may have been swapped in between); the open
    itself never waits (O_NONBLOCK, which a regular file ignores)."""
    _check_regular(path, os.stat(path).st_mode)
    nonblock = getattr(os, "O_NONBLOCK", 0)
    fd = os.open(path, os.O_RDONLY | nonblock | getattr(os, "O_NOCTTY", 0) | getattr(os, "O_CLOEXEC", 0))
    try:
        _check_regular(path, os.fstat(fd).st_mode)
        if nonblock:
            os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd

