"""fuzz/inflate_diff_zlibng.py, the zlib/zlib-ng differential: its runner, classifier, seed
reader and mutator against streams whose verdict is known (with CPython's zlib on both sides),
and, where .venv-zlibng exists (make venv-zlibng), a short run against zlib-ng in which every
real member of the corpus must inflate alike."""
import io
import json
import os
import random
import subprocess
import sys
import tempfile
import zipfile
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "fuzz"))
import inflate_diff_zlibng as D  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import ok  # noqa: E402


def raw(data, level=6):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(data) + c.flush()


def test_runner():
    data = bytes(range(256)) * 40
    s = raw(data)
    for pushes in ([len(s)], [1] * len(s), [7] * (len(s) // 7 + 1)):
        v, out, end, msg = D.run(zlib, s, pushes)
        ok(v == "end" and out == data and end == len(s) and msg is None,
              "a whole stream ends with its bytes, pushes %r...: %r" % (pushes[:2], (v, len(out), end, msg)))
    v, out, end, _ = D.run(zlib, s + b"trailing", [len(s) + 8])
    ok(v == "end" and end == len(s), "trailing bytes: the stream ends before them (%r)" % ((v, end),))
    v, out, _, _ = D.run(zlib, s[:len(s) // 2], [len(s) // 2])
    ok(v == "more" and data.startswith(out), "a cut stream needs more input: %r" % v)
    v, _, _, msg = D.run(zlib, b"\xff\xff\xff\xff", [4])
    ok(v == "invalid" and msg == "invalid block type", "block type 3 is invalid: %r" % ((v, msg),))
    big = raw(b"\0" * (3 << 20), 9)
    v, out, _, _ = D.run(zlib, big, [len(big)])
    ok(v == "capped" and len(out) == D.CAP, "a bomb is cut at the cap: %r %d" % (v, len(out)))


def test_classifier():
    e = ("end", b"ab", 5, None)
    ok(D.classify(e, e) is None, "the same run agrees")
    ok(D.classify(e, ("invalid", b"", None, "invalid distance too far back")) ==
          "zlib end / zlib-ng invalid (invalid distance too far back)", "verdicts differ: the class names both")
    ok(D.classify(e, ("end", b"ab", 6, None)) == "both end, at different offsets", "end offsets differ")
    ok(D.classify(e, ("end", b"ac", 5, None)) == "both end, different output", "outputs differ")
    ok(D.classify(("invalid", b"xy", None, "a"), ("invalid", b"xz", None, "b")) ==
          "both invalid, different output before it", "output before a refusal differs")
    ok(D.classify(("invalid", b"x", None, "a"), ("invalid", b"xy", None, "b")) is None,
          "one inflater giving more output before the same refusal is no disagreement")


def test_seeds_and_mutation():
    payload = b"npzstream " * 1000
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.npy", payload)
        z.writestr("b.txt", b"")
    members = D.zip_deflate_members(buf.getvalue())
    ok(len(members) >= 1 and zlib.decompress(members[0], -15) == payload,
          "a ZIP's deflated member is read out whole (%d members)" % len(members))
    pool = [raw(payload), raw(b"x" * 100)]
    a = [D.mutate(random.Random(5), pool[0], pool) for _ in range(3)]
    b = [D.mutate(random.Random(5), pool[0], pool) for _ in range(3)]
    ok(a == b, "the mutator is a function of its seed")
    rng = random.Random(1)
    muts = [D.mutate(rng, pool[0], pool) for _ in range(200)]
    ok(sum(m != pool[0] for m in muts) >= 190, "mutations change the stream")
    rng = random.Random(2)
    for n in (0, 1, 100, 5000):
        p = D.pushes_for(rng, n)
        ok(sum(p) >= n and all(k > 0 for k in p), "pushes cover a stream of %d bytes: %r" % (n, p[:4]))
    enc = D.encoded_seeds((zlib,), files=3)
    ok(len(enc) >= 6 and all(D.run(zlib, s, [len(s)])[0] == "end" for s in enc),
          "the encoders' seeds are whole streams (%d)" % len(enc))


def test_with_zlib_ng(quick):
    py = os.path.join(ROOT, ".venv-zlibng", "bin", "python")
    if not os.path.exists(py):
        print("zlibng: no .venv-zlibng (make venv-zlibng): the run against zlib-ng skipped")
        r = subprocess.run([sys.executable, "fuzz/inflate_diff_zlibng.py", "--count", "10"], cwd=ROOT,
                           capture_output=True, text=True)
        ok(r.returncode == 0 and "skipped: no zlib_ng module" in r.stdout, "without zlib_ng the harness says so")
        return
    with tempfile.TemporaryDirectory(prefix="npzs-zng-") as tmp:
        js = os.path.join(tmp, "r.json")
        n = 500 if quick else 5000
        r = subprocess.run([py, "fuzz/inflate_diff_zlibng.py", "--count", str(n), "--seed", "7",
                            "--out", tmp, "--json", js], cwd=ROOT, capture_output=True, text=True)
        ok(r.returncode == 0, "the harness runs under zlib-ng:\n" + (r.stdout + r.stderr)[-1500:])
        if not os.path.exists(js):
            ok(False, "the harness writes its JSON result")
            return
        res = json.load(open(js))
        ok(res["streams"] == n and res["seeds"] > 100, "%d streams from %d seeds" % (res["streams"], res["seeds"]))
        ok(res["seeds_differing"] == 0, "every real member of the corpus inflates alike in zlib and zlib-ng")
        ok(sum(res["agree"].values()) + res["differ"] == n, "every stream is counted once")
        m = subprocess.run([sys.executable, "fuzz/inflate_diff_zlibng.py", "--merge", js, js], cwd=ROOT,
                           capture_output=True, text=True)
        ok(("2 runs: %d mutated streams" % (2 * n)) in m.stdout, "--merge adds runs up: " + m.stdout[:200])
