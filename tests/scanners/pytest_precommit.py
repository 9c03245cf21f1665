"""The pre-commit hook npzstream-check (.pre-commit-hooks.yaml at the repository's root) run by
pre-commit itself (PyPI; .venv-scanners, make scanners-env): `pre-commit try-repo` against this
checkout in a temporary git repository, which installs the hook as pre-commit installs any hook of
language python (`pip install .` at the root: setup.py builds the package of python/).  A staged
clean .npz passes and commits; a staged .npz with a pickle member fails, the rule shown.  Needs
PyPI (pre-commit installs NumPy into the hook's environment): skipped, and said so, when PyPI
cannot be reached."""
import os
import shutil
import socket
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import models  # noqa: E402

PRE_COMMIT = os.path.join(os.path.dirname(sys.executable), "pre-commit")


def _pypi():
    try:
        socket.create_connection(("pypi.org", 443), timeout=10).close()
        return True
    except OSError:
        return False


@pytest.fixture(scope="module")
def repo(tmp_path_factory):
    if not os.access(PRE_COMMIT, os.X_OK):
        pytest.skip("pre-commit is not installed in %s (make scanners-env: it needs PyPI)" % sys.prefix)
    if not _pypi():
        pytest.skip("PyPI is unreachable: pre-commit cannot install the hook's NumPy")
    d = tmp_path_factory.mktemp("precommit")
    made = d / "models"
    made.mkdir()
    models.make(str(made))
    work = d / "work"
    work.mkdir()
    env = dict(os.environ, PRE_COMMIT_HOME=str(d / "cache"), GIT_AUTHOR_NAME="t", GIT_AUTHOR_EMAIL="t@example.org",
               GIT_COMMITTER_NAME="t", GIT_COMMITTER_EMAIL="t@example.org")
    subprocess.run(["git", "init", "-q", str(work)], check=True, env=env)
    return made, work, env


def _try(work, env):
    return subprocess.run([PRE_COMMIT, "try-repo", ROOT, "npzstream-check"], cwd=str(work), env=env,
                          capture_output=True, text=True, timeout=1200)


def test_hook(repo):
    made, work, env = repo
    shutil.copy(made / "clean.npz", work / "clean.npz")
    shutil.copy(made / "clean.npy", work / "clean.npy")
    subprocess.run(["git", "add", "clean.npz", "clean.npy"], cwd=str(work), check=True, env=env)
    r = _try(work, env)
    assert r.returncode == 0 and "npzstream check" in r.stdout and "Passed" in r.stdout, (r.stdout + r.stderr)[-4000:]
    subprocess.run(["git", "commit", "-q", "-m", "clean"], cwd=str(work), check=True, env=env)

    shutil.copy(made / "pkl_member.npz", work / "weights.npz")
    shutil.copy(made / "objarr.npy", work / "meta.npy")
    shutil.copy(made / "model.pkl", work / "notes.txt")  # not .npy/.npz: the hook's files: leaves it alone
    subprocess.run(["git", "add", "weights.npz", "meta.npy", "notes.txt"], cwd=str(work), check=True, env=env)
    r = _try(work, env)
    out = r.stdout + r.stderr
    assert r.returncode == 1 and "Failed" in out and "hook id: npzstream-check" in out, out[-4000:]
    assert "weights.npz: REJECTED: policy" in out and "[POLICY.blob-kind]" in out, out[-4000:]
    assert "meta.npy: REJECTED: pickle" in out and "[PICKLE.object]" in out, out[-4000:]
    assert "notes.txt" not in out, out[-4000:]
