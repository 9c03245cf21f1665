#!/usr/bin/python3
"""The Ray and Dask readers' suite: tests/engines/pytest_engines.py in .venv-engines (make
engines-env: Ray Data, Dask, pyarrow, s3fs, zarr, moto's S3 server from PyPI, and the package):
npzstream.ray.read_npz, npzstream.dask.read_npz and reports, npzstream.refs through zarr (and
kerchunk's own tools), over
local paths and a bucket on moto's S3 server on 127.0.0.1, on a Ray local cluster (2 CPUs) and a
Dask LocalCluster (2 processes); and the Dask recipe (examples/python/dask_scan.py).  Skipped
with a message when the environment is not set up (tests/venv_suite.py).  --quick exits 2 (a run
that tests nothing): run_all runs it in make test-all only.  Bounded: stopped after 15 minutes.

usage: /usr/bin/python3 tests/engines/test_engines.py [--bin build/npzstream] [--quick]
Last line: `engines: N passed, M failed`, or `engines: skipped: ...` without .venv-engines.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import venv_suite  # noqa: E402

TIMEOUT = 900


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    needs = "import npzstream.ray, pytest, ray.data, dask.distributed, s3fs, zarr, kerchunk, moto.server"
    return venv_suite.run("engines", needs, a.quick, "the clusters and the S3 server run in make test-all",
                          venv=".venv-engines", make="engines-env", timeout=TIMEOUT)


if __name__ == "__main__":
    sys.exit(main())
