#!/usr/bin/python3
"""The Dask recipe's suite: tests/dask/pytest_dask.py in .venv-web (make web-env: dask[distributed]
and fsspec from PyPI, and the package): examples/python/dask_scan.py on a LocalCluster of two
worker processes, over local paths and over fsspec's HTTP filesystem, every report compared with
the serial scan.  Skipped with a message when the environment is not set up (tests/venv_suite.py).
--quick exits 2 (a run that tests nothing): run_all runs it in make test-all only.

usage: /usr/bin/python3 tests/dask/test_dask.py [--bin build/npzstream] [--quick]
Last line: `dask: N passed, M failed`, or `dask: skipped: ...` without .venv-web.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import venv_suite  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    return venv_suite.run("dask", "import npzstream, pytest, dask.distributed, fsspec, aiohttp", a.quick,
                          "the cluster runs in make test-all", notes=("dask:",))


if __name__ == "__main__":
    sys.exit(main())
