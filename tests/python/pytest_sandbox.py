"""npzstream.scan(sandbox=True) (issue 42): the sweep in worker processes confined as `npzstream
check` confines itself.  Truth: the same scan unconfined (its reports, field by field), and the
test hook NPZSTREAM_SANDBOX_PROBE (cli/sandbox.h), which makes each confined worker try what it
must not do and say so on its stderr; without the sandbox the same tries go through.  Each scan
runs in a fresh interpreter (subprocess), so that the workers start with the hook's environment."""
import os
import subprocess
import sys

import numpy as np
import pytest

import npzstream

SCRIPT = r"""
import os, pickle, sys
import npzstream
if __name__ == "__main__":
    names = sys.argv[3:]
    kw = dict(workers=int(sys.argv[2]), hash=True)
    if sys.argv[1] != "none":
        kw["sandbox"] = sys.argv[1] == "on"
    reports = list(npzstream.scan(names, **kw))
    sys.stdout.buffer.write(pickle.dumps(reports))
"""


def sweep(tmp, mode, workers, names, probe=None):
    script = os.path.join(tmp, "sweep.py")
    with open(script, "w") as f:
        f.write(SCRIPT)
    env = dict(os.environ)
    env.pop("NPZSTREAM_SANDBOX_PROBE", None)
    if probe:
        env["NPZSTREAM_SANDBOX_PROBE"] = probe
    r = subprocess.run([sys.executable, script, mode, str(workers)] + names, capture_output=True, timeout=300,
                       env=env)
    assert r.returncode == 0, r.stderr.decode(errors="replace")[-3000:]
    import pickle
    return pickle.loads(r.stdout), r.stderr.decode(errors="replace")


@pytest.fixture(scope="module")
def inputs(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("sandboxed"))
    names = []
    for i in range(7):
        p = os.path.join(d, "f%d.npz" % i)
        (np.savez_compressed if i % 2 else np.savez)(p, a=np.arange(1000 * (i + 1)), b=np.ones((i + 1, 3)))
        names.append(p)
    bad = os.path.join(d, "objects.npy")
    np.save(bad, np.array([1, "x"], dtype=object), allow_pickle=True)
    junk = os.path.join(d, "junk.bin")
    with open(junk, "wb") as f:
        f.write(b"PK\x03\x04 not really")
    secret = os.path.join(d, "secret.txt")
    with open(secret, "w") as f:
        f.write("not listed\n")
    return d, names + [bad, junk, os.path.join(d, "missing.npz"), d], secret


@pytest.mark.parametrize("workers", [0, 3])
def test_same_reports_confined(tmp_path, inputs, workers):
    d, names, secret = inputs
    confined, _ = sweep(str(tmp_path), "on", workers, names)
    free, _ = sweep(str(tmp_path), "off", workers, names)
    assert len(confined) == len(names) and [r.path for r in confined] == names
    assert confined == free
    assert [r.ok for r in confined][:7] == [True] * 7 and not any(r.ok for r in confined[7:])
    assert confined[7].error.code == "pickle" and confined[-2].error.code == "io"
    assert all(m.sha256 for r in confined[:7] for m in r.members if m.kind == "array")


def test_workers_are_confined(tmp_path, inputs):
    d, names, secret = inputs
    made = os.path.join(str(tmp_path), "made")
    probe = "read=%s,read=%s,write=%s,exec,socket,fork,clone3,thread" % (names[0], secret, made)
    reports, err = sweep(str(tmp_path), "on", 2, names[:4], probe)
    lines = [ln for ln in err.splitlines() if ln.startswith("npzstream: sandbox probe")]
    assert lines, err
    per_worker = len([ln for ln in lines if " thread: " in ln])
    assert per_worker >= 1
    for want in ("read: allowed", "read: refused (Permission denied)", "write: refused",
                 "exec: refused (Operation not permitted)", "socket: refused (Operation not permitted)",
                 "fork: refused (Operation not permitted)", "clone3: refused (Function not implemented)",
                 "thread: allowed"):
        assert sum(("probe " + want) in ln for ln in lines) == per_worker, (want, lines)
    assert not os.path.exists(made)
    assert [r.ok for r in reports] == [True] * 4
    # the same tries without the sandbox go through (the assertions above can fail)
    _, err = sweep(str(tmp_path), "off", 2, names[:4], probe.replace(",exec", ""))
    assert "npzstream: sandbox probe" not in err  # unconfined workers never reach the hook
    assert callable(npzstream._npzstream._confine)


def test_confine_in_a_process(tmp_path, inputs):
    """The extension's _confine, called directly: what it refuses, and what it still lets a
    Python process do (read the listed file, make a thread)."""
    d, names, secret = inputs
    code = r"""
import os, socket, sys, threading
import npzstream
import codecs
from npzstream import _npzstream
codecs.lookup("cp437")  # a member name's codec, loaded while it can be (scan's workers do the same)
_npzstream._confine([sys.argv[1]], False)
r = npzstream.validate(sys.argv[1]); assert r.ok, r
out = []
for what, fn in (("read", lambda: open(sys.argv[2]).close()), ("write", lambda: open(sys.argv[3], "w").close()),
                 ("fork", os.fork), ("socket", lambda: socket.socket().close())):
    try:
        pid = fn()
        if what == "fork" and pid == 0:
            os._exit(0)
        out.append(what + " allowed")
    except OSError as e:
        out.append(what + " refused")
t = threading.Thread(target=out.append, args=("thread allowed",)); t.start(); t.join()
print(" ".join(out))
"""
    made = os.path.join(str(tmp_path), "made")
    r = subprocess.run([sys.executable, "-c", code, names[0], secret, made], capture_output=True, timeout=120)
    assert r.returncode == 0, r.stderr.decode(errors="replace")
    assert r.stdout.split() == b"read refused write refused fork refused socket refused thread allowed".split(), r.stdout
    assert not os.path.exists(made)
