"""The Python package's build and types, from outside its environments (the package's own suites,
tests/python/pytest_*.py, run inside them: tests/run_all.py runs pytest in .venv-pkg, Debian's
Python and NumPy 1.24, and in .venv-pkg-np2, NumPy 2.x; make python-env sets both up).

- the types: the extension's stubs against the module (mypy.stubtest), the package with mypy, the
  package, the examples, these suites and their harness with ruff (python/pyproject.toml's rules),
  in .venv-pkg-np2 (where make python-env installs mypy and ruff);
- a wheel builds from python/ (in .venv-pkg) and carries the extension, the stubs and py.typed.
An environment that is not set up is a skip saying so (under CI, which sets up both, a failure).
"""
import glob
import os
import re
import subprocess
import tempfile
import zipfile

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CFG = os.path.join(ROOT, "python", "pyproject.toml")
LINT = [os.path.join(ROOT, d) for d in ("python/src/npzstream", "examples/python", "tests/python", "tests/web",
                                        "tests/engines", "tests/scanners", "setup.py", "tests/conftest.py",
                                        "tests/common.py", "tests/run_all.py",
                                        "bench/python_io.py")]
TOOLS = {"stubtest": ["-m", "mypy.stubtest", "--mypy-config-file", CFG, "npzstream._npzstream"],  # the extension
         "mypy": ["-m", "mypy", "--config-file", CFG, os.path.join(ROOT, "python", "src", "npzstream")],
         "ruff": ["-m", "ruff", "check", "--config", CFG] + LINT}


def venv_python(env, needs):
    py = os.path.join(ROOT, env, "bin", "python")
    if not os.access(py, os.X_OK) or subprocess.run([py, "-c", "import " + needs], capture_output=True).returncode:
        pytest.skip("%s lacks %s (make python-env)" % (env, needs))
    return py


@pytest.mark.parametrize("tool", list(TOOLS))
def test_types(tool):
    py = venv_python(".venv-pkg-np2", "mypy, ruff, npzstream")
    r = subprocess.run([py] + TOOLS[tool], cwd=tempfile.gettempdir(), capture_output=True, text=True)
    assert r.returncode == 0, (r.stdout + r.stderr)[-4000:]
    print("%s: ok (%s)" % (tool, (r.stdout.strip().splitlines() or [""])[-1]))


def test_wheel(tmp):
    py = venv_python(".venv-pkg", "npzstream")
    r = subprocess.run([py, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation", "-w", tmp,
                        os.path.join(ROOT, "python")], capture_output=True, text=True)
    wheels = glob.glob(os.path.join(tmp, "npzstream-*.whl"))
    assert r.returncode == 0 and wheels, r.stderr[-2000:]
    names = zipfile.ZipFile(wheels[0]).namelist()
    assert any(re.match(r"npzstream/_npzstream\..*\.so$", n) for n in names), names
    assert "npzstream/py.typed" in names and "npzstream/_npzstream.pyi" in names, names
