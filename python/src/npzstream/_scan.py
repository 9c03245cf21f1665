"""scan(): many files checked in a process pool, one Report a path in the input's order;
check_file(), one file's Report as a worker makes it (also what other pools call: Dask)."""
from __future__ import annotations

import dataclasses
import io
import os
from typing import Any, Dict, Iterable, Iterator, List, Mapping, Optional, Union

from ._errors import RejectedError
from ._limits import _check_threads, _limits
from ._policy import Policy, PolicyLike, _compile, _policy_compiled
from ._regular import _NotRegularFile, _open_regular
from ._validate import Report, validate


def _policy_text(policy: Optional[PolicyLike]) -> Optional[bytes]:
    """policy= as the JSON text it was compiled from (what a worker process compiles: the same
    verdicts), compiled here first (PolicyError)."""
    if policy is not None and not isinstance(policy, (Policy, Mapping, str, os.PathLike)):
        raise TypeError("scan: policy must be a dict, a Policy or the path of a JSON file, not %s"
                        % type(policy).__name__)
    return _policy_compiled(policy)[0]


def check_file(path: Union[str, "os.PathLike[str]"], policy_text: Optional[bytes] = None, threads: int = 1,
               hash: bool = False, limits: Optional[Dict[str, Any]] = None, opener: Any = None,
               keep_going: bool = False) -> Report:
    """One file's Report, as scan() makes it in a worker: validate(path) with its path set; a file
    that cannot be read is a Report with error code "io" (as `npzstream check` says it), and so
    is a path that is not a regular file (a FIFO, a device, a directory: refused before it is
    opened, never waited on).  policy_text: the policy's JSON text (compiled once a process while
    it is in use).  opener: a callable path -> binary file object (an fsspec filesystem's open),
    or None.  keep_going: validate()'s (every member listed past the first error)."""
    pol = None if policy_text is None else _compile(None, policy_text)[1]
    name = path if isinstance(path, str) else os.fspath(path)
    try:
        if opener is None:
            with io.FileIO(_open_regular(name), "rb") as f:
                r = validate(f, threads=threads, policy=pol, hash=hash, keep_going=keep_going, **(limits or {}))
        else:
            with opener(name) as f:
                r = validate(f, threads=threads, policy=pol, hash=hash, keep_going=keep_going, **(limits or {}))
    except _NotRegularFile as e:
        r = Report(ok=False, format=None, error=RejectedError(str(e), code="io", offset=0))
    except OSError as e:
        r = Report(ok=False, format=None, error=RejectedError(e.strerror or str(e), code="io", offset=0))
    return dataclasses.replace(r, path=name)


#: what scan() says when its workers cannot start because the script that calls it runs again
#: in each of them
_SCAN_GUARD = ("npzstream.scan(workers > 1) starts worker processes with multiprocessing's %s method, which runs "
               "the main script again in each worker: a script that calls scan() must do it under "
               "`if __name__ == \"__main__\":` (or pass workers=0 to check in this process)")


def _warm_inputs() -> List[bytes]:
    """What a confined worker checks before it is confined, so that what a check imports or loads
    on first use (a member name's cp437 codec, a rejection's classes) is in place while it still
    can be: an .npz of a one-byte .npy (its name without the UTF-8 flag), and a rejected input."""
    import zipfile
    h = b"{'descr': '|u1', 'fortran_order': False, 'shape': (1,), }"
    h += b" " * (64 - 10 - len(h) - 1) + b"\n"
    npy = b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + b"\x00"
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("a.npy", npy)
    return [buf.getvalue(), npy[:20]]


def _confined_worker(names: List[str], policy_text: Optional[bytes], hash: bool, keep_going: bool) -> None:
    """A scan(sandbox=True) worker's start: the warm-up checks, then the process confined to reading
    the listed files (npzstream._npzstream._confine: `npzstream check`'s sandbox)."""
    from . import _npzstream
    pol = None if policy_text is None else _compile(None, policy_text)[1]
    for data in _warm_inputs():
        validate(io.BytesIO(data), policy=pol, hash=hash, keep_going=keep_going)
    _npzstream._confine(names, bool(hash) or policy_text is not None)


def scan(paths: Iterable[Union[str, "os.PathLike[str]"]], *, workers: Optional[int] = None,
         policy: Optional[PolicyLike] = None, threads: int = 1, hash: bool = False, keep_going: bool = False,
         sandbox: bool = False,
         **limits: Any) -> Iterator[Report]:
    """Check many files in a process pool: yields one Report a path, in the input's order (each
    report.path is its path; an unreadable file is a report with error code "io").  workers:
    processes (default the CPU count; 0 or 1 checks in this process).  policy, threads, hash,
    keep_going and the limits are validate()'s (keep_going=True: every member of a rejected file
    listed, each with its own error).  Reports and RejectedError pickle; the policy is compiled here
    before any worker starts (PolicyError), and each worker compiles the same text.  Only regular
    files are read: a FIFO, a device or a directory is a report with error code "io".

    The workers are started with multiprocessing's forkserver (or spawn) method, which imports
    the main script again in each of them: a script must call scan() under
    ``if __name__ == "__main__":`` (a RuntimeError says so otherwise).  Dask:
    examples/python/dask_scan.py.

    sandbox=True: the files are checked in worker processes (at least one, even with workers=0)
    that confine themselves before the first file as `npzstream check` does (README.md, "The
    sandbox"): each can then open only the listed paths, for reading, and cannot write a file,
    exec, fork or open a socket; the reports are those of the same scan unconfined."""
    # the arguments are checked, and the policy compiled, at the call (not at the first report)
    text = _policy_text(policy)
    _limits(dict(limits))  # a bad limit is a ValueError/TypeError here, not in a worker
    _check_threads(threads)
    names = [p if isinstance(p, str) else os.fspath(p) for p in paths]
    n = (os.cpu_count() or 1) if workers is None else workers
    if not isinstance(n, int) or isinstance(n, bool) or n < 0:
        raise ValueError("workers must be an int >= 0")
    if sandbox:
        if not names:
            return iter(())
        n = max(1, min(n, len(names)))
    elif n <= 1 or len(names) <= 1:
        return (check_file(name, text, threads, hash, limits, keep_going=keep_going) for name in names)
    import multiprocessing
    # forkserver/spawn: a fork of a process with threads (an event loop, a server) is unsafe
    method = "forkserver" if "forkserver" in multiprocessing.get_all_start_methods() else "spawn"
    if getattr(multiprocessing.current_process(), "_inheriting", False):
        # this is a worker (or the fork server) importing the main script, which called scan()
        # unguarded: say so here, where multiprocessing would raise a RuntimeError of its own
        raise RuntimeError(_SCAN_GUARD % method)
    return _scan_pool(names, min(n, len(names)), method, text, threads, hash, limits, keep_going, sandbox)


def _scan_pool(names: List[str], n: int, method: str, text: Optional[bytes], threads: int, hash: bool,
               limits: Dict[str, Any], keep_going: bool, sandbox: bool) -> Iterator[Report]:
    import concurrent.futures
    import concurrent.futures.process
    import functools
    import multiprocessing
    try:
        with concurrent.futures.ProcessPoolExecutor(max_workers=n, mp_context=multiprocessing.get_context(method),
                                                    initializer=functools.partial(_confined_worker, names, text, hash,
                                                                                  keep_going)
                                                    if sandbox else None) as ex:
            job = functools.partial(check_file, policy_text=text, threads=threads, hash=hash, limits=limits,
                                    keep_going=keep_going)
            yield from ex.map(job, names, chunksize=max(1, min(64, len(names) // (4 * n))))
    except concurrent.futures.process.BrokenProcessPool as e:
        raise RuntimeError("npzstream.scan: a worker process ended abruptly (killed, or out of memory); if this "
                           "happened at once, the likely cause: " + _SCAN_GUARD % method) from e

