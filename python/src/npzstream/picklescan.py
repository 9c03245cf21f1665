"""picklescan's analysis (`pip install picklescan`) of the pickles a .npy or .npz carries, found
by npzstream: picklescan's directory scan skips .npy files, its NumPy path reads headers with NumPy
(absent: ModuleNotFoundError) and it crashes on an empty .npz; here npzstream parses, and each
embedded pickle's bytes go to picklescan.scanner.scan_pickle_bytes.

    result = npzstream.picklescan.scan_npz("model.npz")   # a picklescan ScanResult
    result.globals          # [Global(module='posix', name='system', safety=SafetyLevel.Dangerous), ...]
    result.issues_count     # dangerous globals found
    result.scan_err         # True when npzstream rejected the file for anything but a pickle, or
                            # could not inspect a part: fail-closed, never silently clean

    python -m npzstream.picklescan FILE...   # picklescan's exit status: 0 clean, 1 dangerous, 2 error

Each pickle is scanned under the file id "FILE:member" (npzstream.pickles.Pickle.where).  An object
array is a pickle like any other: picklescan judges its globals (npzstream refuses every object array;
its own verdict is in npzstream.pickles.find)."""
from __future__ import annotations

import io
import sys
from typing import IO, Any, Optional, Sequence, Union

from picklescan.scanner import ScanResult, scan_pickle_bytes

from . import pickles as _pickles


def scan_found(found: _pickles.Embedded, file_id: str, strict: bool = False) -> Any:
    """picklescan's ScanResult of what npzstream.pickles.find found: its pickles' globals merged,
    scan_err set by any finding."""
    result = ScanResult([], scanned_files=1)
    for p in found.pickles:
        r = scan_pickle_bytes(io.BytesIO(p.data), "%s:%s" % (file_id, p.where) if p.where else file_id, strict=strict)
        r.scanned_files = 0  # one file, however many pickles
        result.merge(r)
    if result.issues_count:
        result.infected_files = 1
    result.scan_err = result.scan_err or bool(found.findings)
    return result


def scan_npz(source: Union[str, bytes, IO[bytes]], *, file_id: Optional[str] = None, strict: bool = False,
             **find: Any) -> Any:
    """picklescan's ScanResult for a .npy or .npz (a path, bytes or a seekable binary file):
    npzstream.pickles.find(source, **find), then scan_found.  OSError for a path that cannot be read."""
    if file_id is None:
        file_id = source if isinstance(source, str) else "<input>"
    return scan_found(_pickles.find(source, **find), file_id, strict)


def main(argv: Optional[Sequence[str]] = None) -> int:
    """python -m npzstream.picklescan FILE...: each file through scan_npz; a line for each
    dangerous global and finding; exit status as picklescan's (0 clean, 1 a dangerous global, 2 an
    error or a finding)."""
    status = 0
    for path in (sys.argv[1:] if argv is None else argv):
        try:
            found = _pickles.find(path)
        except (OSError, ValueError) as e:
            print("%s: cannot read: %s" % (path, e), file=sys.stderr)
            status = 2
            continue
        r = scan_found(found, path)
        for f in found.findings:
            print("%s: %s" % (path, f))
        for g in r.globals:
            if g.safety.value == "dangerous":
                print("%s: dangerous import '%s %s' FOUND" % (path, g.module, g.name))
        status = max(status, 2 if r.scan_err else 1 if r.issues_count else 0)
    return status


if __name__ == "__main__":
    sys.exit(main())
