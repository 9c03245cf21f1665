"""The reference readers: every np.load that npzstream's verdicts are compared with.

npzstream accepts only what EVERY reader loads with identical keys, dtype, shape, order and bytes;
tests/run_all.py runs the NumPy-comparing suites (tests/differential, tests/real) once per reader
that is set up.  `make ref-matrix` sets them up (mk/ref.mk); on an offline machine the ones it
cannot install are skipped, each with a message.  Where the readers differ, the stricter one
wins; tests/differential/README.md lists every difference with NumPy's source lines.
"""
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# (name, interpreter, directory put first on PYTHONPATH (a zipfile module) or None, what it is)
READERS = [
    ("np1.24", "/usr/bin/python3", None,
     "Debian 12: NumPy 1.24, CPython 3.11.2 (zipfile before the CVE-2025-8291 fix)"),
    ("np1.24-zipfix", "/usr/bin/python3", "build/ref/zipfile-gh139700",
     "the same with the zipfile of Debian's security update (the CVE-2025-8291 / gh-139700 fix)"),
    ("np2", ".venv-np2/bin/python", None, "the newest NumPy 2.x on the python3 first on PATH (CPython 3.11)"),
    ("np2.0", ".venv-np20/bin/python", None, "NumPy 2.0.x on the same Python"),
    ("np2-py3.12", ".venv-np2-py312/bin/python", None, "the newest NumPy 2.x on CPython 3.12"),
]
DEFAULT = "np1.24"


def env_for(reader, base=None):
    """The environment a suite runs in for `reader` (a READERS row)."""
    env = dict(os.environ if base is None else base)
    name, _, zdir, _ = reader
    env["NPZS_READER"] = name
    if zdir:
        env["PYTHONPATH"] = os.path.join(ROOT, zdir) + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    return env


def probe(reader):
    """(python path, None) when the reader is set up, else (None, why not)."""
    name, py, zdir, _ = reader
    path = py if os.path.isabs(py) else os.path.join(ROOT, py)
    if not os.access(path, os.X_OK):
        return None, "%s is not set up (make ref-matrix)" % py
    if zdir and not os.path.exists(os.path.join(ROOT, zdir, "zipfile.py")):
        return None, "%s/zipfile.py is missing (make ref-matrix)" % zdir
    r = subprocess.run([path, "-c", "import numpy, zipfile, sys; print(numpy.__version__, sys.version.split()[0], zipfile.__file__)"],
                       capture_output=True, text=True, env=env_for(reader))
    if r.returncode != 0:
        return None, "%s cannot import numpy" % py
    if zdir and os.path.join(ROOT, zdir) not in r.stdout:
        return None, "%s does not take zipfile from %s" % (py, zdir)
    return path, r.stdout.strip()


def available():
    """[(reader row, python path, description)] for the readers that are set up, and the
    messages for those that are not."""
    ok, skipped = [], []
    for rd in READERS:
        path, info = probe(rd)
        if path:
            ok.append((rd, path, info))
        else:
            skipped.append("reader %s skipped: %s" % (rd[0], info))
    return ok, skipped
