#!/usr/bin/python3
"""The web recipes' suite: tests/web/pytest_web.py in .venv-web (make web-env: FastAPI, uvicorn,
aiohttp, Django, Flask, httpx from PyPI, and the package).  Skipped with a message when the
environment is not set up; a framework that could not be installed has its tests skipped, each
saying so (under CI, which installs them all, that counts as a failure; tests/venv_suite.py).
--quick exits 2 (a run that tests nothing): run_all runs the servers in make test-all only.

usage: /usr/bin/python3 tests/web/test_web.py [--bin build/npzstream] [--quick]
Last line: `web: N passed, M failed`, or `web: skipped: ...` without .venv-web.
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
    # each framework: pytest_web.py skips the ones missing
    return venv_suite.run("web", "import npzstream, pytest, httpx", a.quick, "the servers run in make test-all",
                          notes=(": refused after", "spooled in"))


if __name__ == "__main__":
    sys.exit(main())
