"""The scanner adapters against the real scanners from PyPI (modelscan 0.8.8, picklescan; make
scanners-env: .venv-scanners with NumPy 2.x, .venv-scanners-np1 with NumPy 1.26; tests/run_all.py
runs this module in both): npzstream.pickles.find names every pickle of the mixed folder
(tests/scanners/models.py) and writes them out under safe names; npzstream.modelscan.NpzstreamScan
makes modelscan name `system` from `posix` in each, where modelscan alone, on NumPy 2, says "No
issues found"; npzstream.picklescan.scan_npz does the same through picklescan; npzstream-check (the
pre-commit hook's command) refuses the pickle-bearing files.  The truth: the pickles' own opcodes
(pickletools.genops: the globals a pickle names, read without unpickling), zipfile's offsets, the
scanners' own verdicts.  Nothing is ever unpickled or given to np.load(allow_pickle=True)."""
import importlib.util
import json
import os
import pickletools
import subprocess
import sys
import zipfile

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import models  # noqa: E402
from common import ok  # noqa: E402

for _need in ("modelscan", "picklescan", "npzstream"):
    if importlib.util.find_spec(_need) is None:
        pytest.skip("%s is not installed in %s (make scanners-env: it needs PyPI)" % (_need, sys.prefix),
                    allow_module_level=True)

import npzstream.pickles  # noqa: E402
from modelscan.modelscan import ModelScan  # noqa: E402
from modelscan.settings import DEFAULT_SETTINGS  # noqa: E402

import npzstream.modelscan  # noqa: E402
import npzstream.picklescan  # noqa: E402

NUMPY2 = int(np.__version__.split(".")[0]) >= 2
BIN = os.path.dirname(sys.executable)


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("models"))
    models.make(d)
    assert sorted(os.listdir(d)) == sorted(models.EXPECT)
    return d


def globals_of(data):
    """The (module, name) pairs a pickle imports, from its opcodes (GLOBAL/INST, and STACK_GLOBAL's
    two strings): what any scanner must name, read without running it."""
    found, strings = set(), []
    for op, arg, _ in pickletools.genops(data):
        if op.name in ("GLOBAL", "INST"):
            found.add(tuple(arg.split(" ", 1)))
        elif op.name in ("SHORT_BINUNICODE", "BINUNICODE", "UNICODE", "BINUNICODE8"):
            strings.append(arg)
        elif op.name == "STACK_GLOBAL":
            found.add((strings[-2], strings[-1]))
    return found


# ---- npzstream.pickles ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(models.EXPECT))
def test_find(folder, name):
    want_pickles, want_codes = models.EXPECT[name]
    r = npzstream.pickles.find(os.path.join(folder, name))
    assert {(p.where, p.kind) for p in r.pickles} == want_pickles, r
    assert sorted(f.code for f in r.findings) == sorted(want_codes), r.findings
    assert bool(r) == (not want_pickles and not want_codes)
    for p in r.pickles:
        # every pickle handed out is a whole pickle that imports os.system (its opcodes say so)
        ok(models.SYSTEM in globals_of(p.data), "%s: %s imports %s" % (name, p.where, models.SYSTEM), p.data[:60])
    for f in r.findings:
        ok(f.rule is not None or f.code == "not_inspected", "%s: finding %s has a rule" % (name, f), "")
    path = os.path.join(folder, name)
    if zipfile.is_zipfile(path) and name != "nested.npz":
        offsets = {zi.filename: zi.header_offset for zi in zipfile.ZipFile(path).infolist()}
        for p in r.pickles:  # a member's pickle is placed at its local header
            ok(p.offset == offsets.get(p.member), "%s: %s at offset %d" % (name, p.where, p.offset), offsets)


def test_find_bounds(folder):
    """A pickle over max_bytes, a nested archive deeper than depth, more pickles than max_total:
    each a finding (not_inspected), never a silent pass."""
    r = npzstream.pickles.find(os.path.join(folder, "pkl_member.npz"), max_bytes=16)
    assert not r.pickles and [f.code for f in r.findings] == ["not_inspected"], r
    assert "over 16 bytes" in r.findings[0].message and r.findings[0].where == "config.pkl"
    r = npzstream.pickles.find(os.path.join(folder, "nested.npz"), depth=0)
    assert not r.pickles and [(f.code, f.where) for f in r.findings] == [("not_inspected", "inner.zip")], r
    r = npzstream.pickles.find(os.path.join(folder, "multi.npz"), max_total=60)
    assert len(r.pickles) + len(r.findings) == 2 and r.findings, r
    with pytest.raises(ValueError):
        npzstream.pickles.find(os.path.join(folder, "clean.npz"), max_bytes=-1)
    with pytest.raises(OSError):
        npzstream.pickles.find(os.path.join(folder, "no such file.npz"))


def test_find_policy(folder):
    """policy= judges the input itself: a rejection of the policy is a finding with its rule."""
    r = npzstream.pickles.find(os.path.join(folder, "clean.npz"), policy={"members": {"w": {"dtype": ["<f8"]}}})
    assert [(f.code, f.rule) for f in r.findings] == [("policy", "POLICY.dtype")], r


@pytest.mark.parametrize("text, want", [
    ("config.pkl", "config.pkl"), ("../../etc/passwd", "%2E.%2F..%2Fetc%2Fpasswd"), (".bashrc", "%2Ebashrc"),
    ("a b/é", "a%20b%2F%C3%A9"), ("", "_"), ("%41", "%2541")])
def test_safe_name(text, want):
    assert npzstream.pickles.safe_name(text) == want
    assert "/" not in want and not want.startswith(".")


def test_safe_name_long():
    a, b = npzstream.pickles.safe_name("x" * 300 + "a"), npzstream.pickles.safe_name("x" * 300 + "b")
    assert a != b and len(a) <= 100 and len(b) <= 100


def test_write(folder, tmp_path):
    """write(): each pickle in a new file of its own under a name made from the member's, never a
    path the archive chose; an existing name is never written over."""
    out = tmp_path / "out"
    out.mkdir()
    hostile = tmp_path / "hostile.npz"
    with zipfile.ZipFile(hostile, "w") as z:
        z.writestr("../../escape.pkl", open(os.path.join(folder, "model.pkl"), "rb").read())
        z.writestr("/abs/olute.pkl", open(os.path.join(folder, "model.pkl"), "rb").read())
    found = npzstream.pickles.find(str(hostile))
    assert {p.where for p in found.pickles} == {"../../escape.pkl", "/abs/olute.pkl"}, found
    names = npzstream.pickles.write(found, str(out), "hostile.npz")
    assert sorted(os.listdir(out)) == sorted(names) and len(names) == 2, names
    assert not (tmp_path / "escape.pkl").exists() and all("/" not in n for n in names)
    for p, n in zip(found.pickles, names):
        assert (out / n).read_bytes() == p.data
        assert (out / n).stat().st_mode & 0o777 == 0o600
    with pytest.raises(FileExistsError):
        npzstream.pickles.write(found, str(out), "hostile.npz")


def test_pickles_command(folder, tmp_path):
    """python -m npzstream.pickles OUTDIR FILE...: a JSON line a pickle (its file written) and a
    finding; exit 1 when anything was found, 0 on clean files, 2 for a file that cannot be read."""
    out = tmp_path / "out"
    out.mkdir()
    files = [os.path.join(folder, f) for f in models.DANGEROUS]
    r = subprocess.run([sys.executable, "-m", "npzstream.pickles", str(out)] + files, capture_output=True, text=True,
                       timeout=120)
    assert r.returncode == 1, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    written = [x for x in lines if "out" in x]
    assert len(written) == sum(len(models.EXPECT[f][0]) for f in models.DANGEROUS), lines
    for x in written:
        data = open(x["out"], "rb").read()
        ok(len(data) == x["bytes"] and models.SYSTEM in globals_of(data), "%s written" % x["out"], x)
    assert len(os.listdir(out)) == len(written)
    clean = [os.path.join(folder, f) for f in models.CLEAN]
    r = subprocess.run([sys.executable, "-m", "npzstream.pickles", str(tmp_path / "out")] + clean,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 0 and r.stdout == "", r
    r = subprocess.run([sys.executable, "-m", "npzstream.pickles", str(out), str(tmp_path / "missing.npz")],
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2 and "missing.npz" in r.stderr, r


# ---- modelscan ------------------------------------------------------------------------------------

def _issues(report):
    return [(i["source"], i["module"], i["operator"]) for i in report["issues"]]


def test_modelscan_alone(folder):
    """modelscan's own NumPy scanner: on NumPy 2 it fails on every .npy member (a private NumPy
    function is gone) and the report says "No issues found" for an .npz whose object array runs
    os.system; on NumPy 1 it names the global.  (What the adapter replaces.)"""
    src = os.path.join(folder, "objarr.npz")
    report = ModelScan(settings=DEFAULT_SETTINGS).scan(src)
    r = subprocess.run([os.path.join(BIN, "modelscan"), "-p", src], capture_output=True, text=True, timeout=300,
                       cwd=folder)
    if NUMPY2:
        assert report["issues"] == [], report["issues"]
        assert any("_check_version" in e["description"] for e in report["errors"]), report["errors"]
        assert "No issues found" in r.stdout and "system" not in r.stdout, r.stdout
        assert r.returncode == 3, r.returncode  # "no supported files were scanned": not 1, the exit for findings
    else:
        assert ("objarr.npz:meta.npy", "posix", "system") in _issues(report), report
        assert r.returncode == 1, r.stdout


def test_modelscan_adapter(folder):
    """ModelScan with npzstream.modelscan.settings(): every pickle-bearing file has the issue
    `system` from `posix` at its pickle's member, each object array an issue PICKLE.object, each
    broken file an issue with npzstream's rule; clean files none; no error and nothing skipped but
    what modelscan's own zip reader says (a zip in a zip, a truncated zip)."""
    report = ModelScan(settings=npzstream.modelscan.settings()).scan(folder)
    issues = _issues(report)
    # modelscan opens every zip itself, and says it cannot open a zip in a zip (npzstream did)
    assert [(e["category"], e["source"]) for e in report["errors"]] == [("NESTED_ZIP", "nested.npz:inner.zip")], \
        report["errors"]
    for name in sorted(models.EXPECT):
        want_pickles, want_codes = models.EXPECT[name]
        mine = [i for i in issues if i[0] == name or i[0].startswith(name + ":")]
        for where, kind in want_pickles:
            src = name + ":" + where if where else name
            ok((src, "posix", "system") in mine, "%s: modelscan names posix.system at %s" % (name, src), mine)
            if kind == "object":
                ok((src, "npzstream", "PICKLE.object") in mine, "%s: the object array is an issue" % src, mine)
        if not want_pickles and not want_codes:
            ok(mine == [], "%s: no issue" % name, mine)
        if want_codes and name.endswith((".npy", ".npz")):  # model.pkl is modelscan's pickle scanner's
            ok(any(i[1] == "npzstream" and i[2] != "PICKLE.object" for i in mine), "%s: a rejection issue" % name, mine)
    # what modelscan's zip reader cannot open: npzstream judged it (the issue above)
    assert [(f["category"], f["source"]) for f in report["summary"]["skipped"]["skipped_files"]] == \
        [("BAD_ZIP", "truncated.npz")], report["summary"]["skipped"]


def test_modelscan_cli(folder, tmp_path):
    """modelscan's own command with the settings file `python -m npzstream.modelscan` writes:
    exit 1 and the global named, on NumPy 2 too."""
    settings = tmp_path / "modelscan-settings.toml"
    r = subprocess.run([sys.executable, "-m", "npzstream.modelscan"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    settings.write_text(r.stdout)
    for name in ("objarr.npz", "disguised.npz", "clean.npz"):
        r = subprocess.run([os.path.join(BIN, "modelscan"), "--settings-file", str(settings), "-p",
                            os.path.join(folder, name)], capture_output=True, text=True, timeout=300, cwd=str(tmp_path))
        if name == "clean.npz":
            ok(r.returncode == 0 and "No issues found" in r.stdout, "%s: clean" % name, r.stdout[-2000:])
        else:
            ok(r.returncode == 1 and "Use of unsafe operator 'system' from module 'posix'" in r.stdout,
               "%s: modelscan names posix.system" % name, r.stdout[-2000:])


# ---- picklescan ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", sorted(models.EXPECT))
def test_picklescan(folder, name):
    """scan_npz: picklescan's ScanResult; a dangerous `posix system` for each pickle-bearing file,
    scan_err (fail-closed) for each file npzstream rejects for anything but a pickle; never a crash
    (picklescan itself crashes on the empty .npz)."""
    want_pickles, want_codes = models.EXPECT[name]
    r = npzstream.picklescan.scan_npz(os.path.join(folder, name))
    dangerous = {(g.module, g.name) for g in r.globals if g.safety.value == "dangerous"}
    assert (models.SYSTEM in dangerous) == bool(want_pickles), r
    assert r.issues_count >= len(want_pickles) and r.infected_files == (1 if want_pickles else 0), r
    assert r.scan_err == bool(want_codes), r


def test_picklescan_command(folder):
    files = [os.path.join(folder, f) for f in ("disguised.npz", "objarr.npy")]
    r = subprocess.run([sys.executable, "-m", "npzstream.picklescan"] + files, capture_output=True, text=True, timeout=60)
    assert r.returncode == 1 and r.stdout.count("dangerous import 'posix system' FOUND") == 2, r
    r = subprocess.run([sys.executable, "-m", "npzstream.picklescan", os.path.join(folder, "clean.npz")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and r.stdout == "", r
    r = subprocess.run([sys.executable, "-m", "npzstream.picklescan", os.path.join(folder, "truncated.npz")],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 2 and "TRUNC." in r.stdout, r


# ---- npzstream-check (the pre-commit hook's command) -------------------------------------------------

def test_check_command(folder, tmp_path):
    """Default: no pickle and no nested archive passes (POLICY.blob-kind, PICKLE.object); --policy
    FILE replaces that profile; a malformed policy is exit 2."""
    check = os.path.join(BIN, "npzstream-check")
    for name in sorted(models.EXPECT):
        r = subprocess.run([check, os.path.join(folder, name)], capture_output=True, text=True, timeout=60)
        want_pickles, want_codes = models.EXPECT[name]
        if want_pickles or want_codes:
            ok(r.returncode == 1 and ": REJECTED: " in r.stdout and "[" in r.stdout, "%s refused" % name, r.stdout)
        else:
            ok(r.returncode == 0 and r.stdout == "", "%s passes" % name, r.stdout)
    r = subprocess.run([check, os.path.join(folder, "pkl_member.npz")], capture_output=True, text=True, timeout=60)
    assert "[POLICY.blob-kind]" in r.stdout and "config.pkl" in r.stdout, r.stdout
    policy = tmp_path / "p.json"
    policy.write_text(json.dumps({"members": {"w": {"dtype": ["<f8"]}}}))
    r = subprocess.run([check, "--policy", str(policy), os.path.join(folder, "clean.npz")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 1 and "[POLICY.dtype]" in r.stdout, r.stdout
    policy.write_text(json.dumps({"members": {"w": {"dtype": ["<f4"]}}}))
    r = subprocess.run([check, "--policy", str(policy), os.path.join(folder, "pkl_member.npz")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 0, r.stdout  # the given policy allows blobs: it replaces the default profile
    policy.write_text("{\"members\": 3}")
    r = subprocess.run([check, "--policy", str(policy), os.path.join(folder, "clean.npz")], capture_output=True,
                       text=True, timeout=60)
    assert r.returncode == 2 and "policy" in r.stderr, r
