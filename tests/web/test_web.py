#!/usr/bin/python3
"""The web recipes' suite: tests/web/pytest_web.py in .venv-web (make web-env: FastAPI, uvicorn,
aiohttp, Django, Flask, httpx from PyPI, and the package).  Skipped with a message when the
environment is not set up; a framework that could not be installed has its tests skipped, each
saying so (under CI, which installs them all, that counts as a failure).  --quick (make test, and
the sanitizer pass) runs nothing: the servers run in make test-all.

usage: /usr/bin/python3 tests/web/test_web.py [--bin build/npzstream] [--quick]
Last line: `web: N passed, M failed`, or `web: skipped: ...` without .venv-web.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
NAME = "web"
PYTEST = "pytest_web.py"
NEEDS = "import npzstream, pytest, httpx"  # each framework: the suite skips the ones missing


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:
        print("%s: the servers run in make test-all (nothing to do under --quick)" % NAME)
        print("%s: 0 passed, 0 failed" % NAME)
        return 0
    py = os.path.join(ROOT, ".venv-web", "bin", "python")
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", NEEDS], capture_output=True).returncode:
        print("%s: skipped: .venv-web is not set up (make web-env: it needs PyPI)" % NAME)
        return 0
    r = subprocess.run([py, "-m", "pytest", "-q", "-s", "-rs", "-p", "no:cacheprovider", "-o", "addopts=",
                        os.path.join(ROOT, "tests", NAME, PYTEST)], cwd=tempfile.gettempdir(),
                       capture_output=True, text=True)
    out = r.stdout + r.stderr
    # pytest's summary line (workers and servers may log after it)
    last = next((line for line in reversed(out.splitlines()) if re.search(r"\d+ (?:passed|failed|error|skipped)", line)
                 and " in " in line), "")
    p = sum(int(x) for x in re.findall(r"(\d+) passed", last))
    f = sum(int(x) for x in re.findall(r"(\d+) (?:failed|error)", last))
    s = sum(int(x) for x in re.findall(r"(\d+) skipped", last))
    for line in out.splitlines():
        if ": refused after" in line or "spooled in" in line or line.startswith(("FAILED", "ERROR", "SKIPPED")):
            print(("FAIL " if line.startswith(("FAILED", "ERROR")) else "") + line)
    if p == 0 and f == 0 and s and r.returncode == 0:  # every framework missing
        print("%s: skipped: no web framework could be installed in .venv-web (make web-env)" % NAME)
        return 0
    if (r.returncode != 0 or p == 0) and f == 0:  # no summary, or nothing ran: a failure
        f = 1
    if s and os.environ.get("CI"):  # CI installs every framework: one missing there is a failure
        print("FAIL %d tests skipped under CI (a framework missing from .venv-web)" % s)
        f += 1
    if f:
        print(out[-8000:])
    print("%s: %d passed, %d failed" % (NAME, p, f))
    return 1 if f else 0


if __name__ == "__main__":
    sys.exit(main())
