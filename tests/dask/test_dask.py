#!/usr/bin/python3
"""The Dask recipe's suite: tests/dask/pytest_dask.py in .venv-web (make web-env: dask[distributed]
and fsspec from PyPI, and the package): examples/python/dask_scan.py on a LocalCluster of two
worker processes, over local paths and over fsspec's HTTP filesystem, every report compared with
the serial scan.  Skipped with a message when the environment is not set up.  --quick (make test,
and the sanitizer pass) runs nothing: it runs in make test-all.

usage: /usr/bin/python3 tests/dask/test_dask.py [--bin build/npzstream] [--quick]
Last line: `dask: N passed, M failed`, or `dask: skipped: ...` without .venv-web.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NAME = "dask"
PYTEST = "pytest_dask.py"
NEEDS = "import npzstream, pytest, dask.distributed, fsspec, aiohttp"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        print("%s: the cluster runs in make test-all (nothing to do under --quick)" % NAME)
        print("%s: 0 passed, 0 failed" % NAME)
        return 0
    py = os.path.join(ROOT, ".venv-web", "bin", "python")
    if not os.access(py, os.X_OK):
        print("%s: skipped: .venv-web is not set up (make web-env: it needs PyPI)" % NAME)
        return 0
    r = subprocess.run([py, "-c", NEEDS], capture_output=True, text=True)
    if r.returncode:
        why = (r.stderr.strip().splitlines() or ["?"])[-1]
        print("%s: skipped: .venv-web lacks what the Dask recipe needs (%s; make web-env installs "
              "dask[distributed], fsspec and aiohttp from PyPI)" % (NAME, why))
        return 0
    r = subprocess.run([py, "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "-o", "addopts=",
                        os.path.join(ROOT, "tests", NAME, PYTEST)], cwd=tempfile.gettempdir(),
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    # pytest's summary line (workers and servers may log after it)
    last = next((line for line in reversed(out.splitlines()) if re.search(r"\d+ (?:passed|failed|error)", line)
                 and " in " in line), "")
    p = sum(int(x) for x in re.findall(r"(\d+) passed", last))
    f = sum(int(x) for x in re.findall(r"(\d+) (?:failed|error)", last))
    if (r.returncode != 0 or p == 0) and f == 0:  # no summary, or nothing ran: a failure
        f = 1
    for line in out.splitlines():
        if line.startswith(("FAILED", "ERROR", "dask:")):
            print(("FAIL " if line.startswith(("FAILED", "ERROR")) else "") + line)
    if f:
        print(out[-8000:])
    print("%s: %d passed, %d failed" % (NAME, p, f))
    return 1 if f else 0


if __name__ == "__main__":
    sys.exit(main())
