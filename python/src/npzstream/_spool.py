"""spool(): an upload validated while it is written to a temporary file beside its destination,
which it replaces (fsync, rename, fsync of the directory) only when the verdict is ok."""
from __future__ import annotations

import dataclasses
import io
import os
import tempfile
import weakref
from typing import Any, Optional, Union

from ._budget import Budget, _charge
from ._errors import RejectedError
from ._policy import PolicyLike
from ._sources import _CHEAP_MAX, _in_thread, _view
from ._validate import Report, Validator


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
    afeed() and afinish() are for async code: the event loop only moves bytes (the parser's heavy
    work, large writes, the fsyncs and the rename run on a thread).  mode: the file's permissions
    (default 0o644 minus the umask).  An existing dest is never replaced unless overwrite=True
    (FileExistsError at finish(), the upload deleted).  budget: a `Budget`; a spool keeps no
    arrays, so only a parallel helper's buffers (threads > 1) are reserved there, when the first
    bytes come: feed() waits for room, afeed() awaits it (the event loop runs on meanwhile); a
    refusal (RejectedError, LIMIT.budget.*) deletes the upload."""

    def __init__(self, dest: Union[str, "os.PathLike[str]"], *, threads: int = 1, policy: Optional[PolicyLike] = None,
                 hash: bool = False, mode: Optional[int] = None, overwrite: bool = False,
                 budget: Optional[Budget] = None, **limits: Any) -> None:
        self.dest = os.fspath(dest)
        self._v = Validator(threads=threads, policy=policy, hash=hash, **limits)
        # the helper's buffers: reserved when the first bytes come (_reserve, _areserve: the
        # constructor never waits, whatever thread makes the spool), given back when it ends
        self._charge = _charge(budget)
        self._helper = threads << 27 if threads > 1 and self._charge is not None else 0
        d, name = os.path.split(os.path.abspath(self.dest))
        if not name:
            raise ValueError("npzstream.spool: %r names no file" % self.dest)
        # mkstemp: a new file (O_EXCL), mode 0600 until the verdict, a random part in its name;
        # the name's own part cut short so that the whole stays within a file system's 255 bytes
        fd, self.temp = tempfile.mkstemp(prefix="." + _cut(name, _TEMP_NAME_PART) + ".", suffix=".part", dir=d)
        self._f: Optional[io.FileIO] = io.FileIO(fd, "wb")
        # dropped before finish() or abort() (a request handler that raised): the file goes too
        self._gone = weakref.finalize(self, _close_remove, self._f, self.temp)
        self._gone.atexit = False
        self._mode = _default_mode() if mode is None else mode
        self._overwrite = overwrite
        self._report: Optional[Report] = None
        self.written = 0

    @property
    def error(self) -> Optional[RejectedError]:
        """The rejection, as soon as it is known (None so far)."""
        return self._v.error

    def _open(self) -> bool:
        """Whether bytes may still be fed (after a rejection: no, quietly)."""
        if self._f is None:
            if self._report is None and self._v.error is None:
                raise ValueError("npzstream: feed() after finish() or abort()")
            return False
        return True

    def _reserve(self) -> None:
        """The helper's part of the budget, waited for (this thread blocks) before the first bytes."""
        if self._helper:
            n, self._helper = self._helper, 0
            assert self._charge is not None
            try:
                self._charge.take(n, {"offset": 0})
            except BaseException:  # refused (or interrupted): the upload goes
                self._discard()
                raise

    async def _areserve(self) -> None:
        """_reserve() for async code: the wait is awaited."""
        if self._helper:
            n, self._helper = self._helper, 0
            assert self._charge is not None
            try:
                await self._charge.atake(n, {"offset": 0})
            except BaseException:  # refused or cancelled: the upload goes
                self._discard()
                raise

    def feed(self, chunk: Any) -> None:
        """Validate the next bytes, then write them (after a rejection: nothing)."""
        if self._open():
            self._reserve()
            self._v.feed(chunk)
            self._write(chunk)

    async def afeed(self, chunk: Any) -> None:
        """feed() for async code: validated as Validator.afeed does, then written (on a thread
        when the chunk is large); a budget's wait is awaited."""
        if self._open():
            await self._areserve()
            await self._v.afeed(chunk)
            if len(chunk) > _CHEAP_MAX and self._v.error is None:
                await _in_thread(self._write, chunk)
            else:
                self._write(chunk)

    def _write(self, chunk: Any) -> None:
        """Write a validated chunk (after a rejection: the file is deleted instead)."""
        if self._v.error is not None:
            self._discard()
            return
        f = self._f
        if f is None:  # aborted meanwhile
            return
        mv = _view(chunk)
        while mv:
            n = f.write(mv)
            if n is None:
                raise BlockingIOError("npzstream: the spool file is non-blocking")
            mv = mv[n:]
        self.written += len(chunk)

    def _discard(self) -> None:
        if self._f is not None:
            self._f.close()
            self._f = None
            _remove(self.temp)
        self._end()

    def _end(self) -> None:
        self._gone.detach()  # the temporary file is settled: deleted, or renamed (and its name free for others)
        if self._charge is not None:
            self._charge.release()
            self._charge = None

    def abort(self) -> None:
        """Give the upload up: the temporary file is deleted, dest is left as it was."""
        self._discard()

    def finish(self) -> Report:
        """The verdict: a Report (path = dest when it was moved into place)."""
        if self._report is not None:
            return self._report
        if self._f is None and self._v.error is None:
            raise ValueError("npzstream: finish() after abort()")
        return self._settle(self._v.finish())

    async def afinish(self) -> Report:
        """finish() for async code: the verdict awaited as Validator.afinish, then the file's
        fsync, rename and the directory's fsync on a thread."""
        if self._report is not None:
            return self._report
        if self._f is None and self._v.error is None:
            raise ValueError("npzstream: finish() after abort()")
        report = await self._v.afinish()
        return self._settle(report) if not report else await _in_thread(self._settle, report)

    def _settle(self, report: Report) -> Report:
        """The verdict acted on: the file deleted, or made dest."""
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
            f.close()  # (again: closing a closed file does nothing)
            self._f = None
            _remove(self.temp)
            raise
        finally:
            self._end()
        _fsync_dir(os.path.dirname(os.path.abspath(self.dest)))
        self._report = dataclasses.replace(report, path=self.dest)
        return self._report

    def __enter__(self) -> "Spool":
        return self

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is not None or self._report is None:
            self.abort()


# the bytes of dest's name kept in the temporary file's name
_TEMP_NAME_PART = 64


def _cut(name: str, n: int) -> str:
    """name's first n bytes of UTF-8, cut after a whole character."""
    return name.encode("utf-8", "surrogateescape")[:n].decode("utf-8", "ignore")


def _default_mode() -> int:
    """0o644 minus the process's umask, read without changing it (os.umask sets it: another
    thread creating a file meanwhile would get the wrong permissions)."""
    try:
        with open("/proc/self/status", "rb") as f:
            for line in f:
                if line.startswith(b"Umask:"):
                    return 0o644 & ~int(line.split()[1], 8)
    except (OSError, ValueError, IndexError):
        pass
    return 0o644 & ~0o022  # no /proc: the usual umask


def _close_remove(f: io.FileIO, path: str) -> None:
    f.close()
    _remove(path)


def _remove(path: str) -> None:
    """Delete the temporary file (gone already: nothing to do)."""
    try:
        os.unlink(path)
    except FileNotFoundError:
        pass


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
          hash: bool = False, mode: Optional[int] = None, overwrite: bool = False, budget: Optional[Budget] = None,
          **limits: Any) -> Spool:
    """A `Spool` for dest: feed()/afeed() the upload, finish()/afinish() for the verdict; the
    file appears at dest only when it was accepted (written beside it, fsynced, renamed), and
    never replaces an existing file unless overwrite=True."""
    return Spool(dest, threads=threads, policy=policy, hash=hash, mode=mode, overwrite=overwrite, budget=budget,
                 **limits)

