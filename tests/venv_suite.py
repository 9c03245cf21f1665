"""What tests/web and tests/engines share: their pytest file run in a virtual environment of its
own (.venv-web, make web-env: the frameworks from PyPI, and the package; .venv-engines, make
engines-env: Ray, Dask, moto's S3 server, ...), the result read from pytest's summary line.

A suite whose environment is missing ends on `NAME: skipped: why` (run_all counts it as skipped,
or as a failure under CI, which installs everything); tests that skip inside it (a framework that
could not be installed) say why, and count as a failure under CI too.  Otherwise the last line is
`NAME: N passed, M failed`.
"""
import os
import re
import signal
import subprocess
import sys
import tempfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def run(name, needs, quick, quick_note, notes=(), venv=".venv-web", make="web-env", timeout=None):
    """Run tests/NAME/pytest_NAME.py in venv (made by make MAKE); needs: the imports without which
    nothing can run; notes: substrings of the lines of pytest's output worth echoing (figures the
    tests print); timeout: seconds before pytest is stopped (a failure).  Returns the exit status."""
    venv_py = os.path.join(ROOT, venv, "bin", "python")
    if quick:  # a run that tests nothing is no pass
        print("%s: %s: run without --quick" % (name, quick_note))
        return 2
    if not os.access(venv_py, os.X_OK):
        print("%s: skipped: %s is not set up (make %s: it needs PyPI)" % (name, venv, make))
        return 0
    r = subprocess.run([venv_py, "-c", needs], capture_output=True, text=True)
    if r.returncode:
        print("%s: skipped: %s lacks what the suite needs (%s; make %s installs it from PyPI)"
              % (name, venv, (r.stderr.strip().splitlines() or ["?"])[-1], make))
        return 0
    # its own process group: on a timeout pytest and whatever it started (a cluster's processes)
    # are stopped together
    proc = subprocess.Popen([venv_py, "-m", "pytest", "-q", "-s", "-rs", "-p", "no:cacheprovider", "-o", "addopts=",
                             os.path.join(ROOT, "tests", name, "pytest_%s.py" % name)], cwd=tempfile.gettempdir(),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        stdout, stderr = proc.communicate()
        print((stdout + stderr)[-8000:])
        print("%s: 0 passed, 1 failed (pytest ran past %d seconds: stopped)" % (name, timeout))
        return 1
    r = subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)
    out = r.stdout + r.stderr
    # pytest's summary line (workers and servers may log after it)
    last = next((line for line in reversed(out.splitlines())
                 if re.search(r"\d+ (?:passed|failed|error|skipped)", line) and " in " in line), "")
    p = sum(int(x) for x in re.findall(r"(\d+) passed", last))
    f = sum(int(x) for x in re.findall(r"(\d+) (?:failed|error)", last))
    s = sum(int(x) for x in re.findall(r"(\d+) skipped", last))
    for line in out.splitlines():
        if line.startswith(("FAILED", "ERROR", "SKIPPED")) or any(n in line for n in notes):
            print(("FAIL " if line.startswith(("FAILED", "ERROR")) else "") + line)
    if p == 0 and f == 0 and s and r.returncode == 0:
        print("%s: skipped: every test skipped (what each needs is missing from %s: make %s)" % (name, venv, make))
        return 0
    if (r.returncode != 0 or p == 0) and f == 0:  # no summary, or nothing ran: a failure
        f = 1
    if s and os.environ.get("CI"):  # CI installs every framework: one missing there is a failure
        print("FAIL %d tests skipped under CI (something missing from %s)" % (s, venv))
        f += 1
    if f:
        print(out[-8000:])
    print("%s: %d passed, %d failed" % (name, p, f))
    sys.stdout.flush()
    return 1 if f else 0
