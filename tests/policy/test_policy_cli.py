"""Policies, hashes and the safe defaults through the command line, on files NumPy writes.

The policies are the shipped examples (examples/policies/*.json: an MNIST-style dataset, Keras-style
weights, "arrays only, float32, no NaN", a pinned model).  Every archive is written by NumPy
(np.savez, np.savez_compressed, np.savez to a pipe) and every expected offset is computed here
from zipfile's records and NumPy's header lengths, every hash by hashlib; never from an earlier
run.  Each rejection is checked for its code, rule, offset and member, and at --feed 1 and 7 the
JSON must be the same.
"""
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import tempfile
import time
import zipfile

import numpy as np
from numpy.lib import format as npf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import ok, zeros_bomb  # noqa: E402

PY = "/usr/bin/python3"
EX = os.path.join(ROOT, "examples", "policies")


def run(binary, args, data=b"", **kw):
    return subprocess.run([binary] + args, input=data, capture_output=True, timeout=300, **kw)


def savez(kind, **arrays):
    """An archive as NumPy writes it: 'stored' (np.savez), 'deflated' (np.savez_compressed) or
    'pipe' (np.savez to a pipe: data descriptors)."""
    if kind == "pipe":
        bio = io.BytesIO()
        np.savez(bio, **arrays)  # the arrays, then rewritten through a pipe by a child process
        code = ("import sys, io, numpy as np\nz = np.load(io.BytesIO(sys.stdin.buffer.read()))\n"
                "np.savez(sys.stdout.buffer, **{k: z[k] for k in z.files})")
        return subprocess.run([PY, "-c", code], input=bio.getvalue(), stdout=subprocess.PIPE, check=True).stdout
    bio = io.BytesIO()
    (np.savez_compressed if kind == "deflated" else np.savez)(bio, **arrays)
    return bio.getvalue()


def layout(data):
    """{name: (local header offset, data start, stored?, npy header length)} from zipfile."""
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            n, m = struct.unpack("<HH", data[info.header_offset + 26:info.header_offset + 30])
            start = info.header_offset + 30 + n + m
            raw = z.read(info)
            hl = None
            if raw[:6] == b"\x93NUMPY":
                bio = io.BytesIO(raw)
                v = npf.read_magic(bio)
                npf._read_array_header(bio, v)
                hl = bio.tell()
            out[info.filename] = (info.header_offset, start, info.compress_type == zipfile.ZIP_STORED, hl)
    return out


def cd_offset(data):
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        return z.start_dir


def check_json(binary, policy, data, label, feeds=(None, 7, 1)):
    outs = []
    for feed in feeds:
        if feed == 1 and len(data) > 200000:
            continue
        args = ["check", "--json", "--policy", policy] + (["--feed", str(feed)] if feed else []) + ["-"]
        r = run(binary, args, data)
        try:
            outs.append((r.returncode, json.loads(r.stdout)))
        except ValueError:
            ok(False, "%s: not one JSON object (exit %d): %r" % (label, r.returncode, r.stdout[:200]))
            return None
    ok(all(o == outs[0] for o in outs[1:]), "%s: the JSON differs between feed sizes" % label)
    return outs[0]


def expect_reject(binary, policy, data, label, rule, offset, member):
    got = check_json(binary, policy, data, label)
    if got is None:
        return
    rc, d = got
    e = d.get("error") or {}
    ok(rc == 1 and d["ok"] is False and e.get("code") == "policy" and e.get("rule") == rule and
       e.get("offset") == offset and e.get("member") == member and e.get("detail"),
       "%s: want policy %s at %s (member %s), got exit %d %s" % (label, rule, offset, member, rc, e))


def expect_accept(binary, policy, data, label):
    got = check_json(binary, policy, data, label)
    if got is not None:
        ok(got[0] == 0 and got[1]["ok"] is True, "%s: want ok, got %s" % (label, got[1].get("error")))
    return got


def mnist(n=60, bad=None):
    rng = np.random.default_rng(1)
    images = rng.random((n, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, n).astype("<i8")
    if bad == "nan":
        images[n // 2, 3, 4] = np.nan
    if bad == "label":
        labels[7] = 10
    return images, labels


def test_mnist(binary):
    pol = os.path.join(EX, "mnist.json")
    images, labels = mnist()
    for kind in ("stored", "deflated", "pipe"):
        expect_accept(binary, pol, savez(kind, images=images, labels=labels), "mnist %s" % kind)
        # a NaN pixel: at its element (stored) or the member's data start (deflated)
        im, lb = mnist(bad="nan")
        data = savez(kind, images=im, labels=lb)
        lf, start, stored, hl = layout(data)["images.npy"]
        k = int(np.flatnonzero(np.isnan(im.ravel()))[0])
        expect_reject(binary, pol, data, "mnist %s: a NaN" % kind, "POLICY.nan",
                      start + hl + 4 * k if stored else start, "images.npy")
        # a label out of 0..9
        im, lb = mnist(bad="label")
        data = savez(kind, images=im, labels=lb)
        lf, start, stored, hl = layout(data)["labels.npy"]
        expect_reject(binary, pol, data, "mnist %s: label 10" % kind, "POLICY.range",
                      start + hl + 8 * 7 if stored else start, "labels.npy")
        # float64 images: at the header (the text after the 10-byte preamble), before any data byte
        data = savez(kind, images=images.astype(np.float64), labels=labels)
        lf, start, stored, hl = layout(data)["images.npy"]
        expect_reject(binary, pol, data, "mnist %s: float64" % kind, "POLICY.dtype", start + 10 if stored else start,
                      "images.npy")
        # N differs between the members
        data = savez(kind, images=images, labels=labels[:-1])
        lf, start, stored, hl = layout(data)["labels.npy"]
        expect_reject(binary, pol, data, "mnist %s: N" % kind, "POLICY.shape-var", start + 10 if stored else start,
                      "labels.npy")
        # a member the policy does not list, one it requires missing
        data = savez(kind, images=images, labels=labels, extra=np.zeros(3))
        expect_reject(binary, pol, data, "mnist %s: extra" % kind, "POLICY.members", layout(data)["extra.npy"][0],
                      "extra.npy")
        data = savez(kind, images=images)
        expect_reject(binary, pol, data, "mnist %s: missing" % kind, "POLICY.required", cd_offset(data), None)
    # 28 x 27 images; too many rows for the dims
    data = savez("stored", images=np.zeros((3, 28, 27), "<f4"), labels=np.zeros(3, "<i8"))
    expect_reject(binary, pol, data, "mnist: 28x27", "POLICY.shape", layout(data)["images.npy"][1] + 10, "images.npy")
    # a pickled model among them (np.load would return its bytes)
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        z.writestr("images.npy", npf_bytes(images))
        z.writestr("labels.npy", npf_bytes(labels))
        z.writestr("model.pkl", b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.")
    data = bio.getvalue()
    expect_reject(binary, pol, data, "mnist: model.pkl", "POLICY.members", layout(data)["model.pkl"][0], "model.pkl")
    # ls and extract take the policy too: ls says REJECTED (policy), extract writes nothing
    im, lb = mnist(bad="nan")
    bad = savez("stored", images=im, labels=lb)
    r = run(binary, ["ls", "--policy", pol, "-"], bad)
    ok(r.returncode == 1 and b"REJECTED (policy)" in r.stdout, "ls --policy: %r" % r.stdout[-200:])
    with tempfile.TemporaryDirectory() as d:
        out = os.path.join(d, "labels.npy")
        r = run(binary, ["extract", "labels", "-o", out, "--policy", pol, "-"], bad)
        ok(r.returncode == 1 and not os.path.exists(out), "extract --policy: exit %d, %s" % (r.returncode, r.stderr[-300:]))
        good = savez("deflated", images=images, labels=labels)
        r = run(binary, ["extract", "labels", "-o", out, "--policy", pol, "-"], good)
        ok(r.returncode == 0 and np.array_equal(np.load(out), labels), "extract --policy of a good file")


def npf_bytes(a):
    bio = io.BytesIO()
    np.save(bio, a)
    return bio.getvalue()


def test_keras(binary):
    pol = os.path.join(EX, "keras-weights.json")
    w = {"dense/kernel": np.ones((8, 4), "<f4"), "dense/bias": np.zeros(4, "<f4"), "emb": np.ones((3, 2), "<f2")}
    for kind in ("stored", "deflated"):
        expect_accept(binary, pol, savez(kind, **w), "keras %s" % kind)
        bad = dict(w, **{"dense/kernel": np.ones((8, 4), "<f8")})
        data = savez(kind, **bad)
        lf, start, stored, hl = layout(data)["dense/kernel.npy"]
        expect_reject(binary, pol, data, "keras %s: float64" % kind, "POLICY.dtype", start + 10 if stored else start,
                      "dense/kernel.npy")
        inf = dict(w, emb=np.array([[1, np.inf], [0, 0], [0, 0]], "<f2"))
        data = savez(kind, **inf)
        lf, start, stored, hl = layout(data)["emb.npy"]
        expect_reject(binary, pol, data, "keras %s: inf" % kind, "POLICY.inf", start + hl + 2 if stored else start, "emb.npy")
    expect_reject(binary, pol, npf_bytes(np.ones(3, "<f4")), "keras: a .npy", "POLICY.format", 0, None)
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        z.writestr("dense/bias.npy", npf_bytes(w["dense/bias"]))
        z.writestr("config.json", b'{"layers": 2}')
    data = bio.getvalue()
    expect_reject(binary, pol, data, "keras: a blob", "POLICY.blob", layout(data)["config.json"][1], "config.json")


def test_float32(binary):
    pol = os.path.join(EX, "float32-arrays.json")
    expect_accept(binary, pol, npf_bytes(np.arange(10, dtype="<f4")), "float32 .npy")
    a = np.arange(5000, dtype="<f4")
    a[4097] = np.nan
    data = npf_bytes(a)
    expect_reject(binary, pol, data, "float32 .npy: NaN", "POLICY.nan", len(data) - a.nbytes + 4 * 4097, None)
    data = npf_bytes(np.arange(3, dtype="<f8"))
    expect_reject(binary, pol, data, "float32 .npy: float64", "POLICY.dtype", 10, None)
    data = savez("pipe", a=np.ones(3, "<f4"), b=np.arange(3, dtype="<i4"))
    expect_reject(binary, pol, data, "float32: an int member", "POLICY.dtype", layout(data)["b.npy"][1] + 10, "b.npy")


def test_pinned(binary):
    pol = os.path.join(EX, "pinned-model.json")
    w = (np.arange(12, dtype="<f4").reshape(3, 4) / 10).astype("<f4")
    b = np.zeros(4, "<f4")
    for kind in ("stored", "deflated", "pipe"):
        got = expect_accept(binary, pol, savez(kind, w=w, b=b), "pinned %s" % kind)
        if got:
            h = {m["key"]: m.get("sha256") for m in got[1]["members"]}
            ok(h == {"w": hashlib.sha256(w.tobytes()).hexdigest(), "b": hashlib.sha256(b.tobytes()).hexdigest()},
               "pinned %s: the reported hashes %s" % (kind, h))
        w2 = w.copy()
        w2[2, 3] = 1.25
        data = savez(kind, w=w2, b=b)
        lf, start, stored, hl = layout(data)["w.npy"]
        expect_reject(binary, pol, data, "pinned %s: a changed weight" % kind, "POLICY.sha256",
                      start + hl + w.nbytes if stored else start, "w.npy")


def test_pinned_binds_the_array(binary):
    """A pin binds what np.load returns: the same bytes as another dtype (byte order), another
    order, or a blob are refused; a pin that does not fix dtype, shape and order does not compile."""
    pol = os.path.join(EX, "pinned-model.json")
    w = (np.arange(12, dtype="<f4").reshape(3, 4) / 10).astype("<f4")
    b = np.zeros(4, "<f4")
    # the same 48 bytes as a Fortran-order matrix: np.load returns another (permuted) array
    wf = w.ravel().reshape((3, 4), order="F")
    ok(wf.tobytes(order="F") == w.tobytes() and not np.array_equal(wf, w), "the Fortran-order twin")
    # ... as big-endian floats (a name such as "float32" would have matched them)
    wb = w.view(">f4")
    for label, arr, rule in (("fortran", wf, "POLICY.fortran-order"), ("byte-swapped", wb, "POLICY.dtype")):
        for kind in ("stored", "deflated"):
            data = savez(kind, w=arr, b=b)
            lf, start, stored, hl = layout(data)["w.npy"]
            expect_reject(binary, pol, data, "pinned %s %s" % (label, kind), rule, start + 10 if stored else start, "w.npy")
    # ... as a blob w.npy (np.load returns its bytes)
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        z.writestr("w.npy", w.tobytes())
        z.writestr("b.npy", npf_bytes(b))
    data = bio.getvalue()
    expect_reject(binary, pol, data, "pinned: a blob of the bytes", "POLICY.blob", layout(data)["w.npy"][1], "w.npy")
    with tempfile.TemporaryDirectory() as d:
        digest = hashlib.sha256(w.tobytes()).hexdigest()
        for spec, where, msg in (({"sha256": digest}, "members.w.sha256", "dtype is missing"),
                                 ({"dtype": ["float32"], "shape": [3, 4], "fortran_order": False, "sha256": digest},
                                  "members.w.dtype[0]", "a name matches more than one"),
                                 ({"dtype": ["<f4"], "shape": ["N", 4], "fortran_order": False, "sha256": digest},
                                  "members.w.shape[0]", "integers only"),
                                 ({"dtype": ["<f4"], "shape": [3, 4], "sha256": digest}, "members.w.sha256",
                                  "fortran_order is missing")):
            p = os.path.join(d, "p.json")
            with open(p, "w") as f:
                json.dump({"members": {"w": spec}}, f)
            r = run(binary, ["check", "--policy", p, "-"], savez("stored", w=w))
            err = r.stderr.decode()
            ok(r.returncode == 2 and where in err and msg in err, "a pin without the array: %s: %s" % (spec, err))
        # a pinned blob binds its bytes, which np.load returns
        p = os.path.join(d, "p.json")
        with open(p, "w") as f:
            json.dump({"members": {"w": {"kind": "blob", "sha256": digest}}}, f)
        expect_accept(binary, p, data, "a pinned blob")
        expect_reject(binary, p, savez("stored", w=w, b=b), "a pinned blob: an array", "POLICY.kind",
                      layout(savez("stored", w=w, b=b))["w.npy"][1], "w.npy")


def detail(got):
    """The error detail of check_json's answer ("" when there is none)."""
    return ((got[1].get("error") or {}).get("detail") or "") if got else ""


def policy_file(d, pol):
    p = os.path.join(d, "p%d.json" % len(os.listdir(d)))
    with open(p, "w") as f:
        json.dump(pol, f)
    return p


def test_values_every_dtype(binary):
    """finite on datetimes (NaT), bfloat16 (a |V2 the name "bfloat16" admits), text, void,
    structured and long double: checked, or refused with POLICY.check-type, never passed."""
    with tempfile.TemporaryDirectory() as d:
        fin = policy_file(d, {"array": {"finite": True}})
        for dt in ("<M8[s]", ">M8[D]", "<m8[ns]", ">m8[us]"):
            a = np.arange(5).astype(dt)
            a[3] = np.datetime64("NaT") if dt[1] == "M" else np.timedelta64("NaT")
            ok(list(np.isnat(a)) == [False, False, False, True, False] and not np.isfinite(a)[3], "%s: NumPy's NaT" % dt)
            data = npf_bytes(a)
            expect_reject(binary, fin, data, "finite %s: NaT" % dt, "POLICY.nan", len(data) - a.nbytes + 8 * 3, None)
            got = check_json(binary, fin, data, "finite %s" % dt)
            ok("a NaT at element 3" in detail(got), "the detail says NaT: %s" % detail(got))
            expect_accept(binary, fin, npf_bytes(np.arange(5).astype(dt)), "finite %s: no NaT" % dt)
            rng = policy_file(d, {"array": {"range": [0, 9]}})
            expect_reject(binary, rng, data, "range %s" % dt, "POLICY.check-type", 10, None)
        # bfloat16 as NumPy stores it without ml_dtypes: |V2, little-endian bytes
        bf = lambda vals: np.frombuffer(struct.pack("<%df" % len(vals), *vals), "<u4").astype("<u4") >> 16
        vals = [1.0, -2.5, float("nan"), 0.0]
        v2 = np.frombuffer(bf(vals).astype("<u2").tobytes(), "V2")
        data = npf_bytes(v2)
        hl = len(data) - v2.nbytes
        ok(data[8:].find(b"'|V2'") > 0, "np.save writes bfloat16 bytes as '|V2'")
        bfp = policy_file(d, {"array": {"dtype": ["bfloat16"], "finite": True}})
        expect_reject(binary, bfp, data, "bfloat16 NaN", "POLICY.nan", hl + 2 * 2, None)
        inf = np.frombuffer(bf([1.0, float("-inf")]).astype("<u2").tobytes(), "V2")
        d2 = npf_bytes(inf)
        expect_reject(binary, bfp, d2, "bfloat16 -inf", "POLICY.inf", len(d2) - inf.nbytes + 2, None)
        good = np.frombuffer(bf([1.0, -2.5, 3.0e38]).astype("<u2").tobytes(), "V2")
        expect_accept(binary, bfp, npf_bytes(good), "bfloat16 finite")
        rng = policy_file(d, {"array": {"dtype": ["bfloat16"], "range": [-2, 2]}})
        expect_reject(binary, rng, npf_bytes(good), "bfloat16 range", "POLICY.range", len(d2) - inf.nbytes + 2, None)
        for spec in ({"dtype": ["|V2"], "finite": True}, {"dtype": ["void"], "finite": True}, {"finite": True},
                     {"dtype": ["|V2"], "range": [0, 1]}):
            expect_reject(binary, policy_file(d, {"array": spec}), npf_bytes(good), "a |V2 under %s" % spec,
                          "POLICY.check-type", 10, None)
        # text, void, structured, long double, a range on complex
        for a in (np.array(["ab", "c"]), np.array([b"ab"]), np.zeros(2, "V3"), np.zeros(2, [("x", "<f4")]),
                  np.zeros(2, np.longdouble)):
            expect_reject(binary, fin, npf_bytes(a), "finite on %s" % a.dtype.str, "POLICY.check-type", 10, None)
        expect_reject(binary, policy_file(d, {"array": {"range": [0, 1]}}), npf_bytes(np.zeros(2, "<c8")),
                      "range on complex", "POLICY.check-type", 10, None)
        # integers and bool: finite holds; a range reads a bool as NumPy does (any byte but 0: 1)
        expect_accept(binary, fin, npf_bytes(np.array([-1, 5], "<i8")), "finite on integers")
        b = np.frombuffer(b"\x01\x02\x00", np.bool_)
        ok(list(b.astype(int)) == [1, 1, 0], "NumPy reads a bool byte 2 as 1")
        data = npf_bytes(b)
        expect_reject(binary, policy_file(d, {"array": {"range": [1, 1]}}), data, "a bool out of [1, 1]", "POLICY.range",
                      len(data) - 1, None)


def test_layouts(binary):
    """A field list is the whole layout (offsets, itemsize, titles); the object form describes any
    other; byte_order applies to every field."""
    with tempfile.TemporaryDirectory() as d:
        plain = policy_file(d, {"array": {"dtype": [[["x", "<f4"]]]}})
        expect_accept(binary, plain, npf_bytes(np.zeros(2, [("x", "<f4")])), "the plain layout")
        cases = [("x at offset 4", {"names": ["x"], "formats": ["<f4"], "offsets": [4], "itemsize": 8},
                  {"fields": [["x", "<f4"]], "offsets": [4], "itemsize": 8}),
                 ("itemsize 4096", {"names": ["x"], "formats": ["<f4"], "itemsize": 4096},
                  {"fields": [["x", "<f4"]], "itemsize": 4096}),
                 ("a title", {"names": ["x"], "formats": ["<f4"], "titles": ["T"]}, {"fields": [["x", "<f4"]], "titles": ["T"]}),
                 ("aligned", {"names": ["a", "b"], "formats": ["u1", "<i4"], "aligned": True},
                  {"fields": [["a", "|u1"], ["b", "<i4"]], "offsets": [0, 4], "itemsize": 8})]
        for label, numpy_dict, layout_obj in cases:
            dt = np.dtype(numpy_dict)
            data = npf_bytes(np.zeros(2, dt))
            if label != "aligned":
                expect_reject(binary, plain, data, "a plain field list: %s" % label, "POLICY.dtype", 10, None)
            expect_accept(binary, policy_file(d, {"array": {"dtype": [layout_obj]}}), data, "the layout object: %s" % label)
        # a subarray of a subarray, as NumPy keeps it
        nested = np.dtype([("a", np.dtype(("<i2", (3,))), (2,))])
        data = npf_bytes(np.zeros(2, nested))
        expect_accept(binary, policy_file(d, {"array": {"dtype": [[["a", {"base": "<i2", "shape": [3]}, [2]]]]}}), data,
                      "a nested subarray")
        expect_reject(binary, policy_file(d, {"array": {"dtype": [[["a", "<i2", [2, 3]]]]}}), data,
                      "a nested subarray is not a (2, 3) one", "POLICY.dtype", 10, None)
        little = policy_file(d, {"array": {"byte_order": "little"}})
        data = npf_bytes(np.zeros(1, [("a", ">f4"), ("b", ">i8")]))
        expect_reject(binary, little, data, "byte_order on a structured dtype", "POLICY.byte-order", 10, None)
        got = check_json(binary, little, data, "byte_order detail")
        ok("field 'a'" in detail(got), "the detail names the field: %s" % detail(got))
        data = npf_bytes(np.zeros(1, [("a", "<f4"), ("s", [("t", "S2"), ("u", ">u2", (2,))])]))
        expect_reject(binary, little, data, "byte_order through nested fields", "POLICY.byte-order", 10, None)
        got = check_json(binary, little, data, "nested byte_order detail")
        ok("field 's.u'" in detail(got), "the detail names the nested field: %s" % detail(got))
        expect_accept(binary, little, npf_bytes(np.zeros(1, [("a", "<f4"), ("s", "S2"), ("u", "u1")])), "little fields")


def test_sha256(binary):
    arrays = {"a": np.arange(100000, dtype="<i4") % 97, "s": np.array(["x", "yz"]), "e": np.zeros((0, 3))}
    want = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes()).hexdigest() for k, v in arrays.items()}
    for kind in ("stored", "deflated", "pipe"):
        r = run(binary, ["check", "--json", "--sha256", "-"], savez(kind, **arrays))
        d = json.loads(r.stdout)
        got = {m["key"]: m.get("sha256") for m in d["members"]}
        ok(r.returncode == 0 and got == want, "--sha256 %s: %s" % (kind, got))
        r = run(binary, ["check", "--sha256", "-"], savez(kind, **arrays))
        ok(r.returncode == 0 and all(("sha256 " + h).encode() in r.stdout for h in want.values()),
           "--sha256 %s: the text lines" % kind)
    r = run(binary, ["check", "--json", "--sha256", "-"], npf_bytes(arrays["a"]))
    ok(json.loads(r.stdout)["members"][0].get("sha256") == want["a"], "--sha256 of a .npy")


def test_crypto_on_demand(binary):
    """libcrypto is not linked: it is loaded (dlopen) by the first request for a hash, and a run
    that asks for none never maps it (its 1.5 MiB and 21,000 relocations; bench/README.md).  The
    run-time linker's own account (LD_DEBUG=files) says which libraries a run loaded, and how."""
    data = savez("stored", a=np.arange(10, dtype="<f4"), b=np.ones((2, 2)))
    env = dict(os.environ, LD_DEBUG="files")
    for args in (["check", "-"], ["check", "--json", "-"], ["ls", "-"], ["check", "--policy",
                                                                          os.path.join(EX, "mnist.json"), "-"]):
        r = run(binary, args, data, env=env)
        ok(b"libz.so" in r.stderr and b"libc.so" in r.stderr, "LD_DEBUG=files lists the libraries: %r" % r.stderr[-300:])
        ok(r.returncode in (0, 1) and b"libcrypto" not in r.stderr, "%s: libcrypto loaded without a hash asked for: %r"
           % (" ".join(args), [l for l in r.stderr.splitlines() if b"libcrypto" in l][:2]))
    for args in (["check", "--sha256", "-"], ["check", "--policy", os.path.join(EX, "pinned-model.json"), "-"]):
        r = run(binary, args, data, env=env)
        lines = [l for l in r.stderr.splitlines() if b"file=libcrypto" in l]
        ok(r.returncode in (0, 1) and lines and all(b"dynamically loaded by" in l or b"generating link map" in l for l in lines),
           "%s: libcrypto loaded on demand: exit %d, %r" % (" ".join(args), r.returncode, lines[:2]))


def test_crypto_absent():
    """A build whose libcrypto cannot be loaded (build/nocrypto: its name is one no system has)
    refuses every request for a hash, as a build without OpenSSL does, and checks files as before."""
    nobin = os.path.join(ROOT, "build", "nocrypto", "npzstream")
    if not os.path.exists(nobin):
        ok(False, "%s is not built (make %s)" % (nobin, os.path.relpath(nobin, ROOT)))
        return
    data = savez("stored", a=np.arange(10, dtype="<f4"))
    r = run(nobin, ["check", "--json", "-"], data)
    ok(r.returncode == 0 and json.loads(r.stdout)["ok"], "no libcrypto: a plain check: %r" % r.stderr[-300:])
    r = run(nobin, ["check", "--sha256", "-"], data)
    ok(r.returncode == 2 and not r.stdout and b"--sha256: this build of npzstream has no SHA-256" in r.stderr,
       "no libcrypto: --sha256 refused: exit %d %r" % (r.returncode, r.stderr))
    with tempfile.TemporaryDirectory() as d:
        for text, where in (('{"hash": "sha256"}', ":1:10: hash: "),
                            ('{"members": {"a": {"sha256": "%s"}}}' % ("ab" * 32), ":1:30: members.a.sha256: ")):
            pol = os.path.join(d, "p.json")
            open(pol, "w").write(text)
            r = run(nobin, ["check", "--policy", pol, "-"], data)
            err = r.stderr.decode()
            ok(r.returncode == 2 and not r.stdout and (pol + where) in err and "has no SHA-256" in err,
               "no libcrypto: policy %s refused: exit %d %s" % (text, r.returncode, err))


def test_sniff(binary):
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        z.writestr("a.npy", npf_bytes(np.ones(2)))
        z.writestr("model.pkl", b"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.")
        z.writestr("notes.txt", b"plain text notes\n")
        z.writestr("inner.zip", b"PK\x03\x04" + bytes(30))
    r = run(binary, ["check", "--json", "-"], bio.getvalue())
    d = json.loads(r.stdout)
    got = {m["name"]: m["sniff"] for m in d["members"]}
    ok(r.returncode == 0 and got == {"a.npy": "npy", "model.pkl": "pickle", "notes.txt": "text", "inner.zip": "zip"},
       "sniff: %s" % got)
    r = run(binary, ["check", "-"], bio.getvalue())
    ok(b"model.pkl: blob (pickle)" in r.stdout, "the text line names a pickle blob: %r" % r.stdout)


def test_faults(binary):
    with tempfile.TemporaryDirectory() as d:
        cases = [('{"members": {"w": {"dtype": ["<f4"]}},\n "allow_blobs": maybe}', ":2:17: ", "not a JSON value"),
                 ('{"members": {"w": {"shape": ["N", 28, "28"]}}}', ":1:39: members.w.shape[2]: ", "a dimension is"),
                 ('{"dims": {"N": [10, 1]}}', ":1:16: dims.N: ", "min is larger")]
        for text, where, msg in cases:
            p = os.path.join(d, "p.json")
            open(p, "w").write(text)
            r = run(binary, ["check", "--policy", p, "-"], npf_bytes(np.ones(2)))
            err = r.stderr.decode()
            ok(r.returncode == 2 and (p + where) in err and msg in err and not r.stdout, "policy fault %r: %s" % (text, err))
        r = run(binary, ["check", "--policy", os.path.join(d, "missing.json"), "-"], b"")
        ok(r.returncode == 2 and b"No such file" in r.stderr, "a missing policy file")
        # a FIFO (no writer: opening it for reading would wait forever) and a directory: refused at once
        fifo = os.path.join(d, "p.fifo")
        os.mkfifo(fifo)
        for path in (fifo, d):
            r = run(binary, ["check", "--policy", path, "-"], npf_bytes(np.ones(2)))
            ok(r.returncode == 2 and b"not a regular file" in r.stderr and not r.stdout,
               "--policy %s: refused, not waited on: exit %d %r" % (os.path.basename(path), r.returncode, r.stderr))


def test_defaults(binary, quick):
    """The 2 GiB bomb (a 2 MB archive of zeros) is refused by default at the header that declares
    it, by every command, in little CPU time; a real file of the corpus needs nothing raised."""
    bombs, want = {}, {}
    for label, pipe in (("sizes in the local header", False), ("pipe", True)):
        bomb, lfh, start = zeros_bomb(2 << 30, pipe)
        bombs[label] = bomb
        # the earliest byte that declares the size: the local header when it gives the sizes,
        # else the .npy header (a deflated member: its data start)
        want[label] = ("LIMIT.max_total_bytes.array", start) if pipe else ("LIMIT.max_total_bytes.member", lfh)
    for label, bomb in bombs.items():
        ok(len(bomb) < 3 << 20, "the bomb is %d bytes" % len(bomb))
        for cmd in (["check", "--json"], ["ls", "--json"]):
            t0 = time.time()
            r = run(binary, cmd + ["-"], bomb)
            dt = time.time() - t0
            e = json.loads(r.stdout)["error"]
            ok(r.returncode == 1 and (e["rule"], e["offset"]) == want[label],
               "%s %s: the bomb by default: %s" % (label, cmd[0], e))
            ok(dt < 5, "%s %s: refusing the bomb took %.1f s" % (label, cmd[0], dt))
    bomb = bombs["pipe"]
    r = run(binary, ["extract", "z", "-o", "/dev/null", "-"], bomb)
    ok(r.returncode == 1 and b"max_total_bytes" in r.stderr, "extract: the bomb by default: %r" % r.stderr[-300:])
    if not quick:
        r = run(binary, ["check", "-q", "--max-total-bytes", "3Gi", "-"], bomb)
        ok(r.returncode == 0, "the bomb with --max-total-bytes 3Gi: exit %d" % r.returncode)
    r = run(binary, ["check", "--help"])
    ok(b"1Gi" in r.stdout, "--help shows the default of --max-total-bytes with its unit")


def osa(a, b):
    """The optimal string alignment distance of a and b (edits: insert, delete, change, swap two
    neighbours), the reference for the near-miss suggestion."""
    d = [[0] * (len(b) + 1) for _ in range(len(a) + 1)]
    for i in range(len(a) + 1):
        d[i][0] = i
    for j in range(len(b) + 1):
        d[0][j] = j
    for i in range(1, len(a) + 1):
        for j in range(1, len(b) + 1):
            d[i][j] = min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1]))
            if i > 1 and j > 1 and a[i - 1] == b[j - 2] and a[i - 2] == b[j - 1]:
                d[i][j] = min(d[i][j], d[i - 2][j - 2] + 1)
    return d[len(a)][len(b)]


def test_missing_key_near_miss(binary):
    """A required key the file lacks names a member whose key is at most two edits from it (a
    misspelling on either side: "embed_weigth" for "embed_weight"), and only such a member; and
    a member the policy does not list (allow_other_members false) names the policy's key near
    it.  The words are checked against a reference distance on random keys over a small alphabet
    (so that near and far pairs both come up), the rule and offset those of any such fault."""
    rng = np.random.default_rng(44)
    near_seen = far_seen = 0
    with tempfile.TemporaryDirectory() as d:
        pol = os.path.join(d, "p.json")
        for case in range(160):
            key = "".join(rng.choice(list("ab_"), rng.integers(1, 8)))
            # a few edits of the key (near, or far after three and more), or a name of its own
            name = list(key) if case % 3 else list(rng.choice(list("ab_"), rng.integers(1, 8)))
            for _ in range(rng.integers(0, 6)):
                op, at = rng.integers(0, 4), rng.integers(0, len(name) + 1)
                if op == 0:
                    name.insert(at, str(rng.choice(list("ab_"))))
                elif op == 1 and len(name) > 1:
                    del name[min(at, len(name) - 1)]
                elif op == 2 and name:
                    name[min(at, len(name) - 1)] = str(rng.choice(list("ab_")))
                elif len(name) > 1:
                    k = min(at, len(name) - 2)
                    name[k], name[k + 1] = name[k + 1], name[k]
            name = "".join(name) or "x"
            if name == key:
                continue
            with open(pol, "w") as f:
                json.dump({"members": {key: {"dtype": ["<f4"]}}, "allow_other_members": True}, f)
            data = savez("stored", **{name: np.zeros(2, "<f4"), "far_away_member_name": np.zeros(1)})
            expect_reject(binary, pol, data, "near %r / %r" % (key, name), "POLICY.required", cd_offset(data), None)
            r = run(binary, ["check", "--json", "--policy", pol, "-"], data)
            detail = json.loads(r.stdout)["error"]["detail"]
            says = "(the file has '%s': a misspelling?)" % name in detail
            want = osa(key, name) <= 2
            ok(says == want, "key %r, member %r (distance %d): %r" % (key, name, osa(key, name), detail))
            near_seen += want
            far_seen += not want
            # the sibling: other members not allowed, the member is refused at its local header,
            # and the words name the policy's key when it is near
            with open(pol, "w") as f:
                json.dump({"members": {key: {"dtype": ["<f4"]}, "far_away_member_name": {}},
                           "allow_other_members": False}, f)
            first = min(layout(data).items(), key=lambda kv: kv[1][0])  # the first member stored
            if first[0] != name + ".npy":
                continue
            expect_reject(binary, pol, data, "listed %r / %r" % (key, name), "POLICY.members", first[1][0], first[0])
            detail = json.loads(run(binary, ["check", "--json", "--policy", pol, "-"], data).stdout)["error"]["detail"]
            says = "(the policy lists '%s': a misspelling?)" % key in detail
            ok(says == want, "listed: key %r, member %r (distance %d): %r" % (key, name, osa(key, name), detail))
    ok(near_seen >= 40 and far_seen >= 20, "the cases were not both kinds: %d near, %d far" % (near_seen, far_seen))
