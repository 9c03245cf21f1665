"""Validated references without Ray or Dask: `npzstream refs FILE`, the command line (the package's
side, npzstream.refs, the header planner of npzstream.dask and the readers' modules importable
without their engines: tests/engines/pytest_refs.py, in each package environment make python-env
set up).

The command line's part: for every accepted archive of tests/engines/files.py (stored, deflated,
written to a pipe, a .npy, the dtype zoo, a ZIP comment), every reference is checked against
np.load and the file's bytes (each chunk's range holds exactly the array's bytes, in its order),
every member is listed with the reason it is or is not referenced; rejected files print nothing
on stdout and exit 1 with their rule on stderr; --url, stdin, --feed, --inflate-threads, the
limits, the policy and the usage errors; and 400 archives a byte or two away from good ones:
whenever refs accepts one, np.load loads it and every reference holds exactly its bytes.
"""
import json
import os
import re
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import failed_checks, ok  # noqa: E402
import files  # noqa: E402


def run(bin_, *args, stdin=None):
    r = subprocess.run([bin_, "refs"] + list(args), stdin=stdin, capture_output=True)
    return r.returncode, r.stdout.decode("utf-8"), r.stderr.decode("utf-8", "replace")


def fortran(a):
    return a.ndim > 1 and a.flags.f_contiguous and not a.flags.c_contiguous


def verify(path, refs, url, expect_reasons=None):
    """Every reference against np.load and the file's bytes; every member listed."""
    what = os.path.basename(path)
    with open(path, "rb") as f:
        data = f.read()
    loaded = np.load(path)
    arrays = {None: loaded} if isinstance(loaded, np.ndarray) else {k: loaded[k] for k in loaded.files}
    r = refs["refs"]
    ok(refs["version"] == 1, what + ": version 1")
    attrs = json.loads(r[".zattrs"])["npzstream"]
    ok(attrs["format"] == ("npy" if None in arrays else "npz"), what + ": the format")
    ok([m["key"] for m in attrs["members"]] == list(arrays), what + ": every member listed, in order",
       "%s != %s" % ([m["key"] for m in attrs["members"]], list(arrays)))
    expected_keys = {".zattrs", ".zgroup" if None not in arrays or not attrs["members"][0]["referenced"] else ".zarray"}
    for m in attrs["members"]:
        k = m["key"]
        a = arrays[k]
        prefix = "" if k is None else k + "/"
        if expect_reasons is not None:
            ok(m.get("reason") == expect_reasons.get(k), "%s: %r: the reason %r" % (what, k, m.get("reason")),
               "expected %r" % expect_reasons.get(k))
        if not m["referenced"]:
            ok(m.get("reason") and prefix + ".zarray" not in r, "%s: %r: not referenced (%s)" % (what, k, m.get("reason")))
            continue
        z = json.loads(r[prefix + ".zarray"])
        good = (z["dtype"] == a.dtype.str and z["shape"] == list(a.shape) and z["chunks"] == [d or 1 for d in a.shape]
                and z["order"] == ("F" if fortran(a) else "C") and z["compressor"] is None and z["filters"] is None
                and z["zarr_format"] == 2)
        ok(good, "%s: %r: .zarray says np.load's dtype, shape and order" % (what, k), json.dumps(z))
        expected_keys.add(prefix + ".zarray")
        chunk = prefix + (".".join("0" for _ in a.shape) or "0")
        if not a.nbytes:
            ok(chunk not in r, "%s: %r: an empty array has no chunk" % (what, k))
            continue
        expected_keys.add(chunk)
        u, off, n = r[chunk]
        ok(u == url and n == a.nbytes and data[off:off + n] == a.tobytes(order="F" if fortran(a) else "C"),
           "%s: %r: the chunk's byte range holds the array's bytes" % (what, k), repr(r[chunk]))
    ok(set(r) == expected_keys, what + ": nothing else referenced", str(sorted(set(r) ^ expected_keys)))


def test_cli(binary, tmp):
    bin_, d = binary, tmp
    good = list(files.good(d))
    npy_path, _ = files.npy(d)
    zoo, reasons = files.zoo(d)
    comment = files.with_comment(d)
    for p in good + [npy_path, comment]:
        rc, out, err = run(bin_, p)
        if ok(rc == 0 and out.endswith("\n"), "refs %s: exit 0" % os.path.basename(p), err):
            refs = json.loads(out)
            verify(p, refs, p, None)
            deflated = "deflated" in p
            attrs = json.loads(refs["refs"][".zattrs"])["npzstream"]["members"]
            ok(all((m.get("reason") == "deflated") == deflated for m in attrs),
               "refs %s: deflated members (only they) are not referenced" % os.path.basename(p))
    rc, out, err = run(bin_, zoo)
    if ok(rc == 0, "refs zoo.npz: exit 0", err):
        verify(zoo, json.loads(out), zoo, reasons)
    # the same references however the bytes come: pushed 7 at a time, inflated on threads, from stdin
    base = run(bin_, good[2])[1]
    ok(run(bin_, "--feed", "7", good[2])[1] == base, "refs --feed 7: the same references")
    ok(run(bin_, "--inflate-threads", "2", good[2])[1] == base, "refs --inflate-threads 2: the same references")
    with open(good[0], "rb") as f:
        rc, out, err = run(bin_, "--url", "s3://bucket/x.npz", stdin=f)
    if ok(rc == 0, "refs --url URL < FILE: exit 0", err):
        verify(good[0], json.loads(out), "s3://bucket/x.npz")
    rc, out, _ = run(bin_, "--url=https://host/a.npz", good[1])
    ok(rc == 0 and all(v[0] == "https://host/a.npz" for v in json.loads(out)["refs"].values() if isinstance(v, list)),
       "refs --url=URL FILE: the references name URL")
    # rejected: nothing on stdout, the rule on stderr, exit 1
    for p, (code, rule) in files.bad(d).items():
        rc, out, err = run(bin_, p)
        if code == "policy":
            ok(rc == 0, "refs %s without the policy: accepted" % os.path.basename(p))
            pol = os.path.join(d, "policy.json")
            with open(pol, "w") as f:
                json.dump(files.POLICY, f)
            rc, out, err = run(bin_, "--policy", pol, p)
        ok(rc == 1 and out == "" and rule in err and code in err, "refs %s: exit 1, no references, %s (%s) on stderr"
           % (os.path.basename(p), code, rule), "%d %r %r" % (rc, out, err))
    rc, out, err = run(bin_, "--max-total-bytes", "100", good[0])
    ok(rc == 1 and out == "" and "LIMIT.max_total_bytes" in err, "refs --max-total-bytes 100: rejected by the limit", err)
    # usage and I/O: exit 2, nothing on stdout
    with open(good[0], "rb") as f:
        r2 = run(bin_, stdin=f)
    for args, what in (([os.path.join(d, "missing.npz")], "a missing FILE"), ([good[0], good[1]], "two FILEs"),
                       (["-P", "2", good[0]], "-P 2"), (["--bogus", good[0]], "an unknown option"),
                       (["--url"], "--url without a URL")):
        rc, out, err = run(bin_, *args)
        ok(rc == 2 and out == "" and err, "refs with %s: exit 2, said on stderr" % what, "%d %r" % (rc, err))
    ok(r2[0] == 2 and r2[1] == "" and "--url" in r2[2], "refs of stdin without --url: exit 2, says --url is needed")
    h = subprocess.run([bin_, "help", "refs"], capture_output=True, text=True)
    ok(h.returncode == 0 and "kerchunk" in h.stdout and "--url URL" in h.stdout, "npzstream help refs")
    h = subprocess.run([bin_, "--help"], capture_output=True, text=True)
    ok(re.search(r"npzstream refs \[--url URL\]", h.stdout) is not None, "npzstream --help lists refs")


def test_mutants(binary, tmp, n=400):
    """Archives a byte or a few away from good ones: whenever refs accepts one, np.load loads it
    and every reference holds exactly its array's bytes (and refs prints nothing otherwise)."""
    bin_, d = binary, tmp
    rng = np.random.default_rng(43)
    bases = [files.savez_bytes(how, files.arrays(3 + i, i)) for i, how in enumerate(("stored", "pipe"))]
    p = os.path.join(d, "mutant.npz")
    accepted = 0
    for i in range(n):
        b = bytearray(bases[i % len(bases)])
        for _ in range(int(rng.integers(1, 3))):
            b[int(rng.integers(0, len(b)))] = int(rng.integers(0, 256))
        with open(p, "wb") as f:
            f.write(b)
        rc, out, err = run(bin_, p)
        if rc == 1:
            if not ok(out == "", "refs of mutant %d (rejected): nothing on stdout" % i):
                return
            continue
        if not ok(rc == 0, "refs of mutant %d: exit 0 or 1" % i, "%d %s" % (rc, err)):
            return
        accepted += 1
        failed = failed_checks()
        verify(p, json.loads(out), p)
        if failed_checks() != failed:
            ok(False, "mutant %d" % i, bytes(b).hex())
            return
    ok(accepted >= 5, "refs accepted %d mutants (some must be accepted for this to test anything)" % accepted)
