"""Budget: one memory budget for a process, shared by every load, aload, Loader and spool given
budget=.  A call reserves what a member's header declares before the array is allocated, a blob's
bytes as they come, and a parallel helper's buffers before the first byte; what it reserved is
given back when its arrays are dropped, or at once when it fails.  When the budget is full a call
waits (at most `timeout` seconds; async code awaits, the event loop runs on), then is refused
with code "limit" (LIMIT.budget.full, or LIMIT.budget.size when the input needs more than the
whole budget)."""
from __future__ import annotations

import asyncio
import itertools
import threading
import weakref
from typing import Any, Callable, Dict, List, Optional, Union

from ._errors import RejectedError
from ._limits import _size

_SEQ = itertools.count()


class _Waiter:
    """One reservation waiting for room: granted by Budget._grant, in order (calls that already
    hold part of the budget first: their end gives memory back; then first come, first served)."""
    __slots__ = ("n", "order", "granted", "wake")

    def __init__(self, n: int, holds: bool, wake: Callable[[], None]) -> None:
        self.n = n
        self.order = (0 if holds else 1, next(_SEQ))
        self.granted = False
        self.wake = wake


class Budget:
    """One memory budget for a process: what every call given ``budget=`` may hold at once.

        budget = npzstream.Budget("512Mi")           # an int, or a size such as "512Mi"
        arrays = await npzstream.aload(body, budget=budget)

    A load (load, aload, Loader) reserves each array's size when its header arrives, before the
    array is allocated, and each blob's bytes as they arrive; with threads=N it reserves the
    parallel helper's buffers (N x 128 MiB) first; a spool (which keeps no arrays) reserves only
    the helper's.  The reservation is given back when the arrays are dropped (all references to
    an array gone; a blob's bytes with the last array of its call, or at the call's end when it
    has no array), and at once when the call fails.

    When the budget has no room, the call waits for it, at most `timeout` seconds (a thread
    blocks; async code awaits and the event loop runs on): calls that already hold part of the
    budget are served first, then first come, first served.  After that it is refused:
    RejectedError with code "limit", rule "LIMIT.budget.full" (retry later: a server answers 503),
    or at once "LIMIT.budget.size" when the input needs more than the whole budget.  Thread-safe
    and usable from any number of event loops."""

    def __init__(self, size: Union[int, str], *, timeout: float = 10.0) -> None:
        self.size = _size("size", size)
        if self.size < 0:
            raise ValueError("Budget: size must not be negative")
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not timeout >= 0:
            raise ValueError("Budget: timeout must be a number of seconds, 0 or more")
        self.timeout = float(timeout)
        self._lock = threading.Lock()
        self._used = 0
        self._waiters: List[_Waiter] = []

    @property
    def used(self) -> int:
        """Bytes reserved now."""
        return self._used

    @property
    def waiting(self) -> int:
        """Calls waiting for room now."""
        return len(self._waiters)

    def __repr__(self) -> str:
        return "<npzstream.Budget %d of %d bytes used, %d waiting>" % (self._used, self.size, len(self._waiters))

    # ---- reservations (under self._lock) --------------------------------------------------

    def _grant(self) -> None:
        """Give room to the waiters, in order, until one does not fit."""
        self._waiters.sort(key=lambda w: w.order)
        while self._waiters and self._waiters[0].n <= self.size - self._used:
            w = self._waiters.pop(0)
            self._used += w.n
            w.granted = True
            w.wake()

    def _enter(self, n: int, holds: bool, wake: Callable[[], None]) -> _Waiter:
        w = _Waiter(n, holds, wake)
        with self._lock:
            self._waiters.append(w)
            self._grant()
        return w

    def _leave(self, w: _Waiter) -> bool:
        """After the wait: True if w was granted; else it leaves the line (which may let the
        ones behind it in)."""
        with self._lock:
            if w.granted:
                return True
            self._waiters.remove(w)
            self._grant()
            return False

    def _take(self, n: int, holds: bool, timeout: float) -> bool:
        """Reserve n bytes, waiting at most timeout seconds (this thread blocks)."""
        event = threading.Event()
        w = self._enter(n, holds, event.set)
        if not w.granted and timeout > 0:
            event.wait(timeout)
        return self._leave(w)

    def _try(self, n: int, holds: bool) -> bool:
        """Reserve n bytes if that needs no waiting."""
        return self._leave(self._enter(n, holds, _nothing))

    async def _atake(self, n: int, holds: bool, timeout: float) -> bool:
        """Reserve n bytes, awaiting at most timeout seconds (the event loop runs on)."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[None] = loop.create_future()

        def wake() -> None:  # from whichever thread gave the memory back
            loop.call_soon_threadsafe(_resolve, fut)

        w = self._enter(n, holds, wake)
        try:
            if not w.granted and timeout > 0:
                await asyncio.wait_for(fut, timeout)
        except asyncio.TimeoutError:
            pass
        except BaseException:  # cancelled: a grant that came meanwhile is given back
            if self._leave(w):
                self._give(n)
            raise
        return self._leave(w)

    def _give(self, n: int) -> None:
        with self._lock:
            self._used -= n
            assert self._used >= 0, "npzstream.Budget: more given back than reserved"
            self._grant()


def _nothing() -> None:
    pass


def _resolve(fut: "asyncio.Future[None]") -> None:
    if not fut.done():
        fut.set_result(None)


class _Charge:
    """What one call holds of a budget: reserved as the call goes; an array's part given back
    when the array is dropped (a finalizer on it), blobs' bytes with the call's last array, and
    everything at once when the call fails (release).  Finalizers run in whichever thread drops
    an array: the counts are under a lock."""

    def __init__(self, budget: Budget) -> None:
        self.budget = budget
        self.held = 0             # reserved and not given back
        self._lock = threading.Lock()
        self._loose = 0           # blobs' bytes: given back with the call's last array
        self._arrays = 0          # arrays alive that hold a part
        self._ended = False       # the call returned (no more arrays will come)
        self._finalizers: List[weakref.finalize] = []

    # reserving ----------------------------------------------------------------------------

    def _refused(self, n: int, where: Dict[str, Any], full: bool) -> RejectedError:
        b = self.budget
        need = self.held + n
        if full:
            msg = "the memory budget is in use by other calls"
            detail = "needs %d more bytes (%d in all); the budget is %d bytes, %d in use; waited %g s" % (
                n, need, b.size, b.used, b.timeout)
            hint = "the server is busy: retry later (a server operator may raise its budget, npzstream.Budget)"
        else:
            msg = "the input needs more memory than the whole budget"
            detail = None
            hint = ("the arrays are larger than the process's memory budget: raise it (npzstream.Budget) "
                    "if you trust the file")
        return RejectedError(msg, code="limit", offset=where.get("offset", 0), member=where.get("member"),
                             name=where.get("name"), rule="LIMIT.budget.full" if full else "LIMIT.budget.size",
                             detail=detail, hint=hint, limit=("budget", b.size, need))

    def _fits(self, n: int, where: Dict[str, Any]) -> None:
        if self.held + n > self.budget.size:
            raise self._refused(n, where, False)

    def _add(self, n: int) -> None:
        with self._lock:
            self.held += n

    def take(self, n: int, where: Dict[str, Any]) -> None:
        """Reserve n bytes, waiting as the budget says (this thread blocks), or raise the refusal."""
        if n > 0:
            self._fits(n, where)
            if not self.budget._take(n, self.held > 0, self.budget.timeout):
                raise self._refused(n, where, True)
            self._add(n)

    def try_take(self, n: int, where: Dict[str, Any]) -> bool:
        """Reserve n bytes if that needs no waiting (raise the refusal when it never fits)."""
        if n > 0:
            self._fits(n, where)
            if not self.budget._try(n, self.held > 0):
                return False
            self._add(n)
        return True

    async def atake(self, n: int, where: Dict[str, Any]) -> None:
        """take() for async code: the wait is awaited."""
        if n > 0:
            self._fits(n, where)
            if not await self.budget._atake(n, self.held > 0, self.budget.timeout):
                raise self._refused(n, where, True)
            self._add(n)

    # giving back --------------------------------------------------------------------------

    def attach(self, arr: Any, n: int) -> None:
        """n reserved bytes are arr's: given back when arr is dropped."""
        if n > 0:
            f = weakref.finalize(arr, self._dropped, n)
            f.atexit = False
            with self._lock:
                self._finalizers.append(f)
                self._arrays += 1

    def blob(self, n: int) -> None:
        """n reserved bytes are a blob's (bytes cannot be watched): given back with the call's
        last array, or when the call ends without one."""
        with self._lock:
            self._loose += n

    def give(self, n: int) -> None:
        """n reserved bytes go back now (a helper's buffers, freed with the call)."""
        with self._lock:
            n = min(n, self.held)
            self.held -= n
        self.budget._give(n)

    def _dropped(self, n: int) -> None:
        with self._lock:
            self._arrays -= 1
            if self._ended and not self._arrays:
                n += self._loose
                self._loose = 0
        self.give(n)

    def end(self) -> None:
        """The call returned its result: the blobs' bytes go back now if no array stands for them."""
        with self._lock:
            self._ended = True
            n = 0 if self._arrays else self._loose
            self._loose -= n
        self.give(n)

    def release(self) -> None:
        """The call failed: everything it holds goes back now."""
        with self._lock:
            for f in self._finalizers:
                f.detach()
            self._finalizers = []
            self._arrays = self._loose = 0
            self._ended = True
        self.give(self.held)

    def abandoned(self) -> None:
        """The call's object went away before its end (a Loader dropped half-fed, a source that
        raised): what it holds goes back, as when it fails."""
        if not self._ended:
            self.release()


def _where(m: Dict[str, Any]) -> Dict[str, Any]:
    """Where a refusal is: the member's content (its HEADER) or its local header."""
    return {"offset": m.get("content_at", m.get("offset", 0)), "member": m.get("index"), "name": m.get("name")}


def _charge(budget: Optional[Budget]) -> Optional[_Charge]:
    if budget is None:
        return None
    if not isinstance(budget, Budget):
        raise TypeError("budget must be an npzstream.Budget, not %s" % type(budget).__name__)
    return _Charge(budget)
