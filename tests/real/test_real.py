"""Real-file suite: `npzstream check --json` must agree with NumPy 1.24 (np.load, allow_pickle=False).

For every file that tests/real/gen.py writes (into a temporary directory) and every file under
corpus/peers/, the CLI is run with the file piped into stdin: whole, --feed 1 (files < 64 KiB),
--feed 7, --feed 4093, a few random --feed sizes, and (files < 1 MiB) a run without --feed
where the pipe is written in random 1..512-byte pieces.  Checks:
  * stdout is exactly one JSON object with the contract's fields; exit 0/1 matches "ok";
  * the JSON is identical for every feed size;
  * accept/reject agrees with NumPy, except for cases listed with a strict_code (NumPy accepts,
    npzstream rejects on purpose with that code); rejections where an expected code is known
    (object arrays -> pickle, long header -> header_too_large) must carry that code;
  * accepted: format, and per member (zipfile infolist order) name, key, kind, method, version,
    dtype (dtype.str), shape, fortran_order, nbytes, data_crc32 (CRC-32 of the data bytes as
    stored after the npy header), blob size and CRC;
  * rejected: the members listed as completed are a prefix of NumPy's members and agree field by
    field; error.member names the member NumPy failed on (npz);
  * big files (20+ MB): the CLI's peak RSS (wait4) stays below 64 MiB.
One test per group of tests/real/gen.py's files (npy, npz, big: a check per file) and one per
file of corpus/peers.  Also runs ../shared/tools/contract-check.py where ../shared exists (a test
collected only there).  `python3 tests/real/test_real.py --truth-only [--quick]` prints NumPy's
verdicts and runs no CLI; `python3 tests/real/gen.py DIR` writes the files (a failure names its file).
"""
import hashlib
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
import warnings
import zipfile
import zlib

import numpy as np
import pytest
try:  # NumPy >= 2.3: numpy.lib.format re-exports only the public names
    from numpy.lib import _format_impl as npf
except ImportError:
    from numpy.lib import format as npf

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
PEERS = os.path.join(ROOT, "corpus", "peers")
SHARED = os.path.abspath(os.path.join(ROOT, "..", "shared"))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import gen  # noqa: E402
from common import ok  # noqa: E402

warnings.simplefilter("ignore")

CODES = {"truncated", "bad_magic", "bad_version", "header_too_large", "bad_header", "pickle",
         "bad_shape", "size_overflow", "zip_bad_header", "zip_unsupported", "crc_mismatch",
         "size_mismatch", "cd_mismatch", "duplicate_name", "trailing_data", "limit", "inflate",
         "bad_name"}
RSS_LIMIT_KB = 64 * 1024
SMALL = 64 * 1024
METHODS = {zipfile.ZIP_STORED: "stored", zipfile.ZIP_DEFLATED: "deflated"}

# Peer-corpus files where NumPy accepts and npzstream is stricter on purpose: {relpath: code}.
# Their lenient run (PEER_LENIENT) must then accept them as NumPy loads them.
NPYJS = ["npyjs/4a47c45_out.npy", "npyjs/f246c60_out.npy", "npyjs/cfa67c0_out.npy"]
PEER_STRICT = dict([(f, "bad_header") for f in NPYJS] + [("NPY-for-Fortran/vec.npy", "trailing_data")])
# {relpath: (CLI args, np.load keywords)} of extra runs, and the readers that refuse the file
# (the lenient flag's documented cost: such a reader cannot load what the flag accepts)
PEER_EXTRA = dict([(f, (["--lenient-header-newline"], {})) for f in NPYJS] +
                  [("NPY-for-Fortran/vec.npy", (["--lenient-npy-trailing"], {})),
                   ("NumSharp/version2_large_header.npy", (["--max-header-size", "100000"], {"max_header_size": 100000}))])
READERS_REFUSING = {f: ("np2-py3.12",) for f in NPYJS}
READER = os.environ.get("NPZS_READER", "np1.24")


# ---------------------------------------------------------------------------- NumPy truth
def npy_header(raw, max_header_size):
    bio = io.BytesIO(raw)
    ver = npf.read_magic(bio)
    shape, fortran, dtype = npf._read_array_header(bio, ver, max_header_size=max_header_size)
    return ver, shape, fortran, dtype, bio.tell()


def has_padding(dt):
    """True if a structured dtype leaves bytes not covered by any (nested) field."""
    if dt.subdtype is not None:
        return has_padding(dt.subdtype[0])
    if dt.names is None:
        return False
    covered = 0
    for name in dt.names:
        fdt, off = dt.fields[name][:2]
        if off != covered or has_padding(fdt):
            return True
        covered += fdt.itemsize
    return covered != dt.itemsize


def array_truth(raw, arr, max_header_size):
    ver, shape, fortran, dtype, off = npy_header(raw, max_header_size)
    nbytes = int(np.prod(shape, dtype=np.int64)) * dtype.itemsize if shape else dtype.itemsize
    assert arr.nbytes == nbytes, (arr.nbytes, nbytes)
    assert arr.shape == tuple(shape) and arr.dtype == dtype, (arr.shape, shape, arr.dtype, dtype)
    data = raw[off:off + nbytes]
    assert len(data) == nbytes
    # self-check of the truth: the loaded array's bytes are the stored bytes (in file order);
    # skipped with padding (NumPy need not copy padding bytes) -- the CRC compared is the file's.
    if not has_padding(dtype) and nbytes:
        assert arr.tobytes(order="F" if fortran else "C") == data, "loaded bytes != stored bytes"
    return {"kind": "array", "version": list(ver), "dtype": dtype.str, "shape": list(shape),
            "fortran_order": bool(fortran), "nbytes": nbytes, "data_crc32": zlib.crc32(data)}


def numpy_truth(path, load_kw):
    """{"ok": bool, "format": .., "members": [...], "error": str|None, "fail_member": name|None}"""
    mhs = load_kw.get("max_header_size", npf._MAX_HEADER_SIZE)
    with open(path, "rb") as f:
        head = f.read(6)
    t = {"ok": False, "format": None, "members": [], "error": None, "fail_member": None}
    try:
        if head == b"\x93NUMPY":
            t["format"] = "npy"
            arr = np.load(path, allow_pickle=False, **load_kw)
            raw = open(path, "rb").read()
            m = {"name": None, "key": None, "method": "stored"}
            m.update(array_truth(raw, arr, mhs))
            t["members"].append(m)
        else:
            t["format"] = "npz"
            with np.load(path, allow_pickle=False, **load_kw) as z, zipfile.ZipFile(path) as zf:
                if not isinstance(z, np.lib.npyio.NpzFile):
                    raise ValueError("not an npz")
                for info in zf.infolist():
                    t["fail_member"] = info.filename
                    raw = zf.read(info)
                    key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
                    v = z[key]
                    m = {"name": info.filename, "key": key,
                         "method": METHODS.get(info.compress_type, str(info.compress_type))}
                    if isinstance(v, np.ndarray):
                        m.update(array_truth(raw, v, mhs))
                    else:
                        assert v == raw
                        m.update({"kind": "blob", "size": len(raw), "data_crc32": zlib.crc32(raw)})
                    t["members"].append(m)
                t["fail_member"] = None
        t["ok"] = True
    except Exception as e:  # any exception = NumPy rejects
        t["error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
    return t


def numpy_code(t):
    """The error code a NumPy rejection implies, when it is unambiguous."""
    if t["error"] and "Object arrays cannot be loaded" in t["error"]:
        return "pickle"
    if t["error"] and "Header info length" in t["error"]:
        return "header_too_large"
    return None


# ---------------------------------------------------------------------------- running the CLI
# Peak RSS: ru_maxrss of a child also counts the memory image it had before exec() -- for a
# child forked (or vforked) from this big Python process that is OUR RSS, not the CLI's.  So the
# CLI is started by a tiny stdlib-only Python wrapper (-S -E, ~10 MB, no numpy) that inherits the
# pipe and reports getrusage(RUSAGE_CHILDREN).ru_maxrss on a marker line at the end of stderr.
RSS_WRAPPER = (
    "import os, resource, subprocess, sys\n"
    "r = subprocess.run(sys.argv[1:]).returncode\n"
    "sys.stderr.write('\\n@@npzs-rss %d %d\\n' % (r, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss))\n")


def run_cli(binary, data, args, timeout=300, measure=False, trickle=None):
    """Pipe `data` into `binary check --json ARGS -`; returns (rc, stdout, stderr, maxrss_kb);
    maxrss_kb is 0 unless measure is set.  trickle: a random.Random -- write the pipe in random
    pieces of 1..512 bytes (with an occasional pause) so the CLI's reads split the input at
    random places."""
    cmd = [binary, "check", "--json"] + args + ["-"]
    if measure:
        cmd = ["/usr/bin/python3", "-S", "-E", "-c", RSS_WRAPPER] + cmd
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    err = []

    def feed():
        try:
            view = memoryview(data)
            if trickle is None:
                for i in range(0, len(view), 1 << 16):
                    p.stdin.write(view[i:i + (1 << 16)])
            else:
                i = 0
                while i < len(view):
                    n = trickle.randint(1, 512)
                    p.stdin.write(view[i:i + n])
                    p.stdin.flush()
                    i += n
                    if trickle.random() < 0.02:
                        time.sleep(0.001)
        except (BrokenPipeError, OSError):
            pass
        finally:
            try:
                p.stdin.close()
            except OSError:
                pass

    tw = threading.Thread(target=feed, daemon=True)
    te = threading.Thread(target=lambda: err.append(p.stderr.read()), daemon=True)
    tw.start(); te.start()
    timer = threading.Timer(timeout, p.kill)
    timer.start()
    try:
        out = p.stdout.read()
        te.join(); tw.join()
        p.wait()
    finally:
        timer.cancel()
    rc, err, rss = p.returncode, (err[0] if err else b""), 0
    if measure:
        head, sep, tail = err.rpartition(b"\n@@npzs-rss ")
        if not sep:
            return (rc if rc < 0 else 2), out, err, 0
        rc, rss = (int(x) for x in tail.split())
        err = head
    return rc, out, err, rss


def shape_problems(d):
    p = []
    if not isinstance(d, dict):
        return ["not a JSON object"]
    for k in ("ok", "format", "members", "error"):
        if k not in d:
            p.append("missing field " + k)
    if p:
        return p
    if not isinstance(d["members"], list):
        return ["members is not a list"]
    if d["ok"]:
        if d["error"] is not None:
            p.append("ok but error is not null")
        if d["format"] not in ("npy", "npz"):
            p.append("format %r" % d["format"])
    else:
        e = d["error"] if isinstance(d["error"], dict) else {}
        if e.get("code") not in CODES:
            p.append("error code %r not in the contract" % e.get("code"))
        if not isinstance(e.get("offset"), int):
            p.append("error offset not an integer")
        for k in ("member", "message"):
            if k not in e:
                p.append("error lacks " + k)
    for m in d["members"]:
        kind = m.get("kind") if isinstance(m, dict) else None
        if kind not in ("array", "blob"):
            p.append("member kind %r" % kind)
            continue
        need = ["name", "key", "kind", "method"] + (
            ["version", "dtype", "shape", "fortran_order", "nbytes", "data_crc32"] if kind == "array"
            else ["size", "data_crc32"])
        for k in need:
            if k not in m:
                p.append("member lacks %s" % k)
    return p


def member_diff(got, want):
    diffs = []
    for k, v in want.items():
        if got.get(k, "<missing>") != v:
            diffs.append("%s: got %s, numpy %s" % (k, json.dumps(got.get(k, "<missing>"), ensure_ascii=False),
                                                    json.dumps(v, ensure_ascii=False)))
    return diffs


def feeds_for(path, size, quick):
    rng = random.Random(hashlib.sha1(os.path.basename(path).encode()).hexdigest())
    feeds = [None]
    if size < SMALL:
        feeds.append(1)
    feeds += [7, 4093]
    hi = 5000 if size < (1 << 20) else 1 << 20
    lo = 2 if size < (1 << 20) else 512
    feeds += sorted({rng.randint(lo, hi) for _ in range(1 if quick else 3)})
    if size < (1 << 20):
        feeds.append("trickle")  # no --feed; the pipe is written in random pieces
    return feeds


# ---------------------------------------------------------------------------- one case
def check_case(binary, case, quick):
    """Returns (problems, info) for one case dict (file, args, load, expect_code, strict_code, big)."""
    path = case["path"]
    with open(path, "rb") as f:
        data = f.read()
    runs = []
    maxrss = 0
    for feed in feeds_for(path, len(data), quick):
        args = list(case["args"]) + (["--feed", str(feed)] if isinstance(feed, int) else [])
        t0 = time.time()
        trickle = random.Random(len(data)) if feed == "trickle" else None
        rc, out, err, rss = run_cli(binary, data, args, measure=bool(case.get("big")), trickle=trickle)
        maxrss = max(maxrss, rss)
        tag = "feed %s" % feed
        if rc < 0:
            return ["%s: killed by signal %d (stderr: %s)" % (tag, -rc, err[-300:])], {}
        try:
            d = json.loads(out.decode("utf-8"))
        except ValueError:
            return ["%s: stdout is not one JSON object (exit %d, stdout %r, stderr %r)"
                    % (tag, rc, out[:200], err[-200:])], {}
        if rc not in (0, 1):
            return ["%s: exit %d (stderr %r)" % (tag, rc, err[-200:])], {}
        p = shape_problems(d)
        if p:
            return ["%s: %s" % (tag, "; ".join(p))], {}
        if (rc == 0) != bool(d["ok"]):
            return ["%s: exit %d but ok=%r" % (tag, rc, d["ok"])], {}
        if not d["ok"] and not 0 <= d["error"]["offset"] <= len(data):
            return ["%s: error offset %d outside the input (%d bytes)" % (tag, d["error"]["offset"], len(data))], {}
        if case.get("big") and rss > RSS_LIMIT_KB:
            return ["%s: peak RSS %d KiB > %d KiB" % (tag, rss, RSS_LIMIT_KB)], {}
        runs.append((feed, d, time.time() - t0))
    first = runs[0][1]
    for feed, d, _ in runs[1:]:
        if d != first:
            return ["output differs between whole input and feed %s: %s vs %s" % (
                feed, summarize(first), summarize(d))], {}
    d = first
    truth = numpy_truth(path, case.get("load", {}))
    info = {"rss": maxrss, "secs": sum(r[2] for r in runs)}
    probs = []
    strict = case.get("strict_code")
    want_code = case.get("expect_code") or numpy_code(truth)

    def members_prefix_check(members, limit):
        out = []
        if len(members) > limit:
            out.append("lists %d completed members, NumPy has only %d good ones" % (len(members), limit))
        for i, (g, w) in enumerate(zip(members, truth["members"])):
            diff = member_diff(g, w)
            if diff:
                out.append("member %d (%s): %s" % (i, w["name"], "; ".join(diff)))
        return out

    if truth["ok"] and not strict:
        if not d["ok"]:
            e = d["error"]
            return ["rejected with %s at offset %s (member %r: %s), NumPy accepts" % (
                e["code"], e["offset"], e["member"], e["message"])], info
        if d["format"] != truth["format"]:
            probs.append("format %r, NumPy %r" % (d["format"], truth["format"]))
        if len(d["members"]) != len(truth["members"]):
            probs.append("%d members, NumPy %d" % (len(d["members"]), len(truth["members"])))
        probs += members_prefix_check(d["members"], len(truth["members"]))
    elif truth["ok"] and strict:
        if d["ok"]:
            probs.append("accepted; expected the deliberate strict rejection %s" % strict)
        elif d["error"]["code"] != strict:
            probs.append("rejected with %s (%s), expected the deliberate strict code %s" % (
                d["error"]["code"], d["error"]["message"], strict))
        probs += members_prefix_check(d["members"], len(truth["members"]))
    elif case.get("lenient_refused"):
        # a lenient flag accepts what this reader refuses: the flag's documented cost
        if not d["ok"]:
            probs.append("rejected under %s: %s" % (" ".join(case["args"]), d["error"]["message"]))
    else:
        if strict:
            probs.append("test table stale: listed as strict (%s) but NumPy rejects too (%s)" % (strict, truth["error"]))
        if d["ok"]:
            probs.append("accepted, but NumPy rejects: %s" % truth["error"])
        else:
            e = d["error"]
            if want_code and e["code"] != want_code:
                probs.append("rejected with %s (%s), expected %s (NumPy: %s)" % (
                    e["code"], e["message"], want_code, truth["error"]))
            if truth["format"] == "npz" and truth["fail_member"] is not None and want_code \
                    and e["member"] != truth["fail_member"]:
                probs.append("error.member %r, NumPy failed on %r" % (e["member"], truth["fail_member"]))
            probs += members_prefix_check(d["members"], len(truth["members"]))
    return probs, info


def summarize(d):
    if d.get("ok"):
        return "ok, %d members" % len(d.get("members", []))
    e = d.get("error") or {}
    return "%s@%s member=%r, %d members" % (e.get("code"), e.get("offset"), e.get("member"), len(d.get("members", [])))


# ---------------------------------------------------------------------------- main
def peer_cases():
    """The cases of corpus/peers: every file, and the extra runs of PEER_EXTRA."""
    cases = []
    for root, _, files in sorted(os.walk(PEERS)):
        for fn in sorted(files):
            if fn.endswith((".npy", ".npz")):
                rel = os.path.relpath(os.path.join(root, fn), PEERS)
                refused = READER in READERS_REFUSING.get(rel, ())
                cases.append({"path": os.path.join(root, fn), "file": rel, "args": [], "load": {},
                              "expect_code": PEER_STRICT.get(rel) if refused else None,
                              "strict_code": None if refused else PEER_STRICT.get(rel), "big": False,
                              "group": "peers", "label": "peers/" + rel, "note": "peer corpus"})
                if rel in PEER_EXTRA:
                    args, load = PEER_EXTRA[rel]
                    cases.append({"path": os.path.join(root, fn), "file": rel, "args": args, "load": load,
                                  "expect_code": None, "strict_code": None, "big": False,
                                  "lenient_refused": refused, "group": "peers",
                                  "label": "peers/%s [%s]" % (rel, " ".join(args)), "note": "peer corpus"})
    return cases


def check(binary, c, quick):
    """One soft check: the case's problems (harness trouble is a failure too, not a crash)."""
    try:
        probs, info = check_case(binary, c, quick)
    except Exception as e:  # noqa: BLE001
        probs, info = ["harness error: %s: %s" % (type(e).__name__, e)], {}
    ok(not probs, "%s (%s)" % (c["label"], c["note"]), " | ".join(probs))
    if c.get("big") and info:
        print("  big %s: peak RSS %.1f MiB, %.1fs over all feeds" % (c["label"], info["rss"] / 1024, info["secs"]))


@pytest.fixture(scope="module")
def generated(tmp_path_factory, quick):
    """{group: [case]} of the files gen.py writes (--quick: 6 MB instead of 22 MB big files)."""
    out = str(tmp_path_factory.mktemp("real"))
    t0 = time.time()
    cases = gen.generate(out, quick=quick)
    print("generated %d cases in %.1fs" % (len(cases), time.time() - t0))
    groups = {}
    for c in cases:
        c["path"] = os.path.join(out, c["file"])
        c["label"] = c["file"] + ("" if not c["args"] else " [%s]" % " ".join(c["args"]))
        groups.setdefault(c["file"].split("/")[0], []).append(c)
    return groups


@pytest.mark.parametrize("group,at_least", [("npy", 90), ("npz", 40), ("big", 5)])
def test_generated(binary, generated, quick, group, at_least):
    """Every file of the group, at every feed size, against np.load."""
    cases = generated.get(group, [])
    assert len(cases) >= at_least, "gen.py wrote %d files of group %s" % (len(cases), group)
    for c in cases:
        check(binary, c, quick)


PEER_CASES = peer_cases()


@pytest.mark.parametrize("i", range(len(PEER_CASES)), ids=[c["label"] for c in PEER_CASES])
def test_peer(binary, quick, i):
    check(binary, PEER_CASES[i], quick)


def test_peers_found():
    assert len(PEER_CASES) >= 50, "only %d files in corpus/peers" % len(PEER_CASES)


CONTRACT_CHECK = os.path.join(SHARED, "tools", "contract-check.py")
# the tool reads headers with numpy.lib.format._read_array_header, which NumPy 2.3 and later no
# longer export: it runs with an older NumPy, where ../shared is present (not in a clone alone)
if os.path.exists(CONTRACT_CHECK) and tuple(int(x) for x in np.__version__.split(".")[:2]) < (2, 3):
    def test_contract_check(binary):
        r = subprocess.run([sys.executable, CONTRACT_CHECK, binary], cwd=ROOT, capture_output=True, text=True)
        assert r.returncode == 0, "contract-check.py:\n" + r.stdout.strip()
        print("contract-check.py: %s" % (r.stdout.strip().splitlines() or ["(no output)"])[-1])


def truth_only(quick):
    with tempfile.TemporaryDirectory(prefix="npzs-real-") as out:
        cases = gen.generate(out, quick=quick)
        paths = [(c["file"] + (" " + " ".join(c["args"]) if c["args"] else ""), os.path.join(out, c["file"]), c)
                 for c in cases]
        for root, _, files in sorted(os.walk(PEERS)):
            for fn in sorted(files):
                if fn.endswith((".npy", ".npz")):
                    paths.append(("peers/" + fn, os.path.join(root, fn), {"load": {}}))
        for label, p, c in paths:
            t = numpy_truth(p, c.get("load", {}))
            tag = "ok " if t["ok"] else "REJ"
            extra = "" if t["ok"] else " %s [code %s / expect %s strict %s]" % (
                t["error"][:90], numpy_code(t), c.get("expect_code"), c.get("strict_code"))
            print("%s %-45s %s %d members%s" % (tag, label, t["format"], len(t["members"]), extra))
            for m in t["members"][:3]:
                print("      ", json.dumps(m, ensure_ascii=False)[:150])
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] != ["--truth-only"]:
        sys.exit("usage: python3 tests/real/test_real.py --truth-only [--quick]  (the tests: python3 -m pytest tests/real)")
    sys.exit(truth_only("--quick" in sys.argv[2:]))
