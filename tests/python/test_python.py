#!/usr/bin/python3
"""The Python package's suite: tests/python/pytest_*.py (pytest) in every environment that
`make python-env` set up (.venv-pkg: Debian's Python and NumPy 1.24; .venv-pkg-np2: NumPy 2.x),
with the package installed there by pip; then a wheel is built from python/.

usage: /usr/bin/python3 tests/python/test_python.py [--bin build/npzstream]
An environment that is not set up is skipped with a message (under CI, which sets up both, with
mypy and ruff, a failure).  There is no --quick (sanitizer) run: the extension is tested with
the plain build only, and run_all leaves this suite out of its sanitizer pass.
Last line: `python: N passed, M failed`.
"""
import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import zipfile

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
ENVS = [(".venv-pkg", "Debian's Python with its NumPy 1.24"), (".venv-pkg-np2", "NumPy 2.x from PyPI")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    if a.quick:  # a run that tests nothing is no pass
        print("python: --quick: the package is tested with the plain build only: run without --quick")
        return 2
    passed = failed = 0
    ran = 0
    for env, what in ENVS:
        py = os.path.join(ROOT, env, "bin", "python")
        if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import npzstream, pytest"],
                                                        capture_output=True).returncode:
            print("python: %s (%s) skipped: not set up (make python-env)" % (env, what))
            continue
        ran += 1
        r = subprocess.run([py, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "addopts=",
                            os.path.join(ROOT, "tests", "python", "pytest_load.py"),
                            os.path.join(ROOT, "tests", "python", "pytest_policy.py"),
                            os.path.join(ROOT, "tests", "python", "pytest_io.py"),
                            os.path.join(ROOT, "tests", "python", "pytest_names.py"),
                            os.path.join(ROOT, "tests", "python", "pytest_package.py")],
                           cwd=tempfile.gettempdir(), capture_output=True, text=True)
        out = r.stdout + r.stderr
        p = sum(int(x) for x in re.findall(r"(\d+) passed", out.splitlines()[-1] if out.strip() else ""))
        f = sum(int(x) for x in re.findall(r"(\d+) (?:failed|error)", out.splitlines()[-1] if out.strip() else ""))
        if r.returncode != 0 and f == 0:
            f = 1
        if f:
            print(out[-6000:])
            for line in out.splitlines():
                if line.startswith(("FAILED", "ERROR")):
                    print("FAIL %s: %s" % (env, line))
        print("python: %s: %d passed, %d failed" % (env, p, f))
        passed += p
        failed += f
    # the types: the extension's stubs against the module (mypy.stubtest), the package with mypy,
    # the package, the examples and these suites with ruff (python/pyproject.toml's rules)
    py = os.path.join(ROOT, ".venv-pkg-np2", "bin", "python")
    tools = os.access(py, os.X_OK) and subprocess.run([py, "-c", "import mypy, ruff, npzstream"],
                                                      capture_output=True).returncode == 0
    if not tools:
        print("python: the type checks skipped: no mypy and ruff in .venv-pkg-np2 (make python-env installs them)")
    else:
        cfg = os.path.join(ROOT, "python", "pyproject.toml")
        lint = [os.path.join(ROOT, d) for d in ("python/src/npzstream", "examples/python", "tests/python", "tests/web",
                                                "tests/engines", "tests/venv_suite.py", "bench/python_io.py")]
        for what, cmd in (("stubtest", [py, "-m", "mypy.stubtest", "npzstream"]),
                          ("mypy", [py, "-m", "mypy", "--config-file", cfg,
                                    os.path.join(ROOT, "python", "src", "npzstream")]),
                          ("ruff", [py, "-m", "ruff", "check", "--config", cfg] + lint)):
            r = subprocess.run(cmd, cwd=tempfile.gettempdir(), capture_output=True, text=True)
            if r.returncode == 0:
                passed += 1
                print("python: %s: ok (%s)" % (what, (r.stdout.strip().splitlines() or [""])[-1]))
            else:
                failed += 1
                print((r.stdout + r.stderr)[-4000:])
                print("FAIL %s" % what)
    # a wheel builds, and carries the extension, the stubs and py.typed
    py = os.path.join(ROOT, ".venv-pkg", "bin", "python")
    if os.access(py, os.X_OK):
        with tempfile.TemporaryDirectory() as d:
            r = subprocess.run([py, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", d,
                                os.path.join(ROOT, "python")], capture_output=True, text=True)
            wheels = glob.glob(os.path.join(d, "npzstream-*.whl"))
            names = zipfile.ZipFile(wheels[0]).namelist() if wheels else []
            ok = (r.returncode == 0 and any(re.match(r"npzstream/_npzstream\..*\.so$", n) for n in names)
                  and "npzstream/py.typed" in names and "npzstream/_npzstream.pyi" in names)
            if ok:
                passed += 1
            else:
                failed += 1
                print("FAIL wheel: %s %s" % (names, r.stderr[-2000:]))
    if not ran:
        print("python: no environment set up: run make python-env (needs python3-venv and python3-dev)")
    if os.environ.get("CI") and (ran < len(ENVS) or not tools):  # CI sets up both, with mypy and ruff
        print("FAIL under CI: %s" % ("an environment was skipped" if ran < len(ENVS) else "the type checks were skipped"))
        failed += 1
    print("python: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
