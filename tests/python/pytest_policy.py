"""pytest suite of the Python package's policies, hashes and safe defaults (run by
tests/python/test_python.py in every environment it set up).  Expected values come from NumPy,
zipfile and hashlib, and the command line's verdict on the same bytes and policy file."""
import asyncio
import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import zipfile

import numpy as np
import pytest

import npzstream

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "examples", "policies")
CLI = os.path.join(ROOT, "build", "npzstream")
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import zeros_bomb  # noqa: E402


def savez(compressed=False, **arrays):
    bio = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(bio, **arrays)
    return bio.getvalue()


def savez_pipe(**arrays):
    code = ("import sys, io, numpy as np\nz = np.load(io.BytesIO(sys.stdin.buffer.read()))\n"
            "np.savez(sys.stdout.buffer, **{k: z[k] for k in z.files})")
    return subprocess.run([sys.executable, "-c", code], input=savez(**arrays), stdout=subprocess.PIPE,
                          check=True).stdout


def npy(a):
    bio = io.BytesIO()
    np.save(bio, a)
    return bio.getvalue()


def mnist(n=40, bad=None):
    rng = np.random.default_rng(3)
    images = rng.random((n, 28, 28), dtype=np.float32)
    labels = rng.integers(0, 10, n).astype("<i8")
    if bad == "nan":
        images[5, 6, 7] = np.nan
    elif bad == "label":
        labels[3] = 12
    elif bad == "n":
        labels = labels[:-1]
    elif bad == "f8":
        images = images.astype("<f8")
    return {"images": images, "labels": labels}


def mnist_policy():
    with open(os.path.join(EX, "mnist.json")) as f:
        return json.load(f)


# ---- answers that cannot be misread ------------------------------------------------------------

def test_report_truthiness():
    good = savez(**mnist())
    r = npzstream.validate(good)
    assert r and r.ok and r.error is None and "ok" in repr(r)
    r.raise_for_error()  # nothing
    bad = good[:-10]
    r = npzstream.validate(bad)
    assert not r and not r.ok and r.error is not None and r.error.code == "truncated"
    assert "REJECTED" in repr(r)
    with pytest.raises(npzstream.RejectedError):
        r.raise_for_error()
    # the natural idiom stores only the good one
    stored = [name for name, data in (("good", good), ("bad", bad)) if npzstream.validate(data)]
    assert stored == ["good"]


def test_fail_closed_validator():
    v = npzstream.Validator(policy=mnist_policy())
    data = savez(**mnist(bad="f8"))
    for i in range(0, len(data), 1000):
        v.feed(data[i:i + 1000])
    assert v.error is not None and v.error.rule == "POLICY.dtype"
    v.feed(savez(**mnist()))  # more bytes after the error change nothing
    r = v.finish()
    assert not r and r.error is v.error and v.finish() is r


def test_async_validator():
    data = savez(**mnist(bad="nan"))

    async def go():
        v = npzstream.Validator(policy=mnist_policy())
        for i in range(0, len(data), 4096):
            await v.afeed(data[i:i + 4096])
        return v.finish()

    r = asyncio.run(go())
    assert not r and r.error.rule == "POLICY.nan"


# ---- the same verdicts as the command line -------------------------------------------------------

CASES = [("good", mnist(), None), ("nan", mnist(bad="nan"), "POLICY.nan"), ("label", mnist(bad="label"), "POLICY.range"),
         ("n", mnist(bad="n"), "POLICY.shape-var"), ("f8", mnist(bad="f8"), "POLICY.dtype"),
         ("extra", dict(mnist(), extra=np.zeros(2)), "POLICY.members"),
         ("missing", {"images": mnist()["images"]}, "POLICY.required")]


@pytest.mark.parametrize("name,arrays,rule", CASES, ids=[c[0] for c in CASES])
@pytest.mark.parametrize("writer", ["stored", "deflated", "pipe"])
def test_policy_like_cli(name, arrays, rule, writer):
    data = savez_pipe(**arrays) if writer == "pipe" else savez(writer == "deflated", **arrays)
    pol = mnist_policy()
    for form in (pol, os.path.join(EX, "mnist.json"), npzstream.Policy.from_dict(pol)):
        r = npzstream.validate(data, policy=form)
        assert bool(r) == (rule is None)
        if rule:
            assert r.error.code == "policy" and r.error.rule == rule and r.error.detail and r.error.hint
    if os.access(CLI, os.X_OK):
        c = subprocess.run([CLI, "check", "--json", "--policy", os.path.join(EX, "mnist.json"), "-"], input=data,
                           capture_output=True)
        cli = json.loads(c.stdout)
        r = npzstream.validate(data, policy=pol)
        if rule is None:
            assert cli["ok"] and r.ok
        else:
            e = cli["error"]
            assert (e["code"], e["rule"], e["offset"], e.get("member_index"), e["detail"]) == \
                (r.error.code, r.error.rule, r.error.offset, r.error.member, r.error.detail)
    # load: the arrays when accepted, the same rejection otherwise (nothing returned before it)
    if rule is None:
        got = npzstream.load(data, policy=pol)
        assert set(got) == set(arrays) and all(np.array_equal(got[k], arrays[k]) for k in arrays)
    else:
        with pytest.raises(npzstream.RejectedError) as e:
            npzstream.load(data, policy=pol)
        assert e.value.rule == rule


def test_loader_rejects_at_the_header():
    """A wrong dtype is refused at its header: the Loader never allocates its array."""
    data = savez_pipe(**mnist(bad="f8"))
    ld = npzstream.Loader(policy=mnist_policy())
    header_end = data.index(b"\n", data.index(b"\x93NUMPY")) + 1
    with pytest.raises(npzstream.RejectedError) as e:
        ld.feed(data[:header_end])
    assert e.value.rule == "POLICY.dtype" and e.value.offset == data.index(b"\x93NUMPY") + 10


def test_policy_dataclass():
    P = npzstream.Policy(members={"w": npzstream.MemberPolicy(dtype=["float32"], shape=["N", 3], finite=True),
                                  "b": {"dtype": ["<f4"], "shape": ["N"]}},
                         dims={"N": (1, 4)}, allow_other_members=False)
    assert P.to_dict()["dims"] == {"N": [1, 4]}
    assert npzstream.validate(savez(w=np.ones((2, 3), "<f4"), b=np.ones(2, "<f4")), policy=P)
    r = npzstream.validate(savez(w=np.ones((5, 3), "<f4"), b=np.ones(5, "<f4")), policy=P)
    assert not r and r.error.rule == "POLICY.dim-range" and "N = 5" in r.error.detail
    P.dims = {"N": (1, 9)}  # a changed policy is compiled again
    assert npzstream.validate(savez(w=np.ones((5, 3), "<f4"), b=np.ones(5, "<f4")), policy=P)
    assert npzstream.Policy.load(os.path.join(EX, "mnist.json")).to_dict() == mnist_policy()


def test_policy_errors(tmp_path):
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.validate(npy(np.ones(2)), policy={"members": {"w": {"dtype": ["flaot32"]}}})
    assert e.value.path == "members.w.dtype[0]" and e.value.line is None and "unknown dtype" in e.value.message
    p = tmp_path / "p.json"
    p.write_text('{"members": {"w": {}},\n "allow_blobs": maybe}')
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.load(npy(np.ones(2)), policy=str(p))
    assert (e.value.line, e.value.column, e.value.source) == (2, 17, str(p))
    assert str(p) + ":2:17" in str(e.value)
    with pytest.raises(npzstream.PolicyError):
        npzstream.Policy(members={"w": {"shape": ["..."] * 2}}).check()
    with pytest.raises(npzstream.PolicyError):
        npzstream.validate(b"", policy={"nope": 1})
    with pytest.raises(TypeError):
        npzstream.validate(b"", policy=42)
    e2 = pickle.loads(pickle.dumps(e.value))
    assert str(e2) == str(e.value)


def test_blobs_and_sniff():
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w") as z:
        z.writestr("a.npy", npy(np.ones(2)))
        z.writestr("model.pkl", pickle.dumps({"a": 1}, protocol=4))
        z.writestr("notes.txt", "plain text, more than sixteen bytes\n")
    data = bio.getvalue()
    r = npzstream.validate(data)
    assert r and [m.sniff for m in r.members] == ["npy", "pickle", "text"]
    r = npzstream.validate(data, policy={"allow_blobs": ["text"]})
    assert not r and r.error.rule == "POLICY.blob-kind" and r.error.member == 1
    r = npzstream.validate(data, policy={"allow_blobs": False})
    assert not r and r.error.rule == "POLICY.blob"
    assert npzstream.load(data)["model.pkl"] == pickle.dumps({"a": 1}, protocol=4)  # as np.load: bytes


# ---- hashes ---------------------------------------------------------------------------------------

@pytest.mark.skipif(not npzstream.SHA256, reason="built without OpenSSL's libcrypto")
def test_sha256_same_for_every_writer():
    arrays = {"a": np.arange(70000, dtype="<i4") % 13, "f": np.asfortranarray(np.arange(12.).reshape(3, 4)),
              "s": np.array(["ab", "c"]), "e": np.zeros((0, 2), "<f4")}
    want = {k: hashlib.sha256(np.ascontiguousarray(v).tobytes(order="A")).hexdigest() for k, v in arrays.items()}
    want["f"] = hashlib.sha256(arrays["f"].tobytes(order="F")).hexdigest()  # the file's bytes: Fortran order
    for data in (savez(**arrays), savez(True, **arrays), savez_pipe(**arrays)):
        r = npzstream.validate(data, hash=True)
        assert r and {m.key: m.sha256 for m in r.members} == want
        r = npzstream.validate(data)
        assert all(m.sha256 is None for m in r.members)
    # a pin binds the whole array: its dtype (with the byte order), shape and order with the bytes
    pinned = {"members": {"a": {"dtype": ["<i4"], "shape": [70000], "fortran_order": False, "sha256": want["a"]}},
              "hash": "sha256"}
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.validate(savez(**arrays), policy={"members": {"a": {"sha256": want["a"]}}})
    assert e.value.path == "members.a.sha256" and "dtype is missing" in e.value.message
    assert npzstream.validate(savez(True, **arrays), policy=pinned)
    arrays["a"] = arrays["a"].copy()
    arrays["a"][-1] += 1
    r = npzstream.validate(savez(True, **arrays), policy=pinned)
    assert not r and r.error.rule == "POLICY.sha256"


# ---- one set of defaults ---------------------------------------------------------------------------

def test_defaults_are_the_librarys():
    assert npzstream.DEFAULT_LIMITS["max_total_bytes"] == 1 << 30 == npzstream.DEFAULT_MAX_BYTES
    assert npzstream.__version__ == npzstream.library_version()
    from importlib.metadata import version
    assert version("npzstream") == npzstream.__version__  # the package's version is the library's
    if os.access(CLI, os.X_OK):
        h = subprocess.run([CLI, "check", "--help"], capture_output=True, text=True).stdout
        assert "(1Gi)" in h and "(256Mi)" in h


def test_bomb_refused_everywhere():
    bomb, lfh, start = zeros_bomb(2 << 30, pipe=True)
    for r in (npzstream.validate(bomb), asyncio.run(npzstream.avalidate(io.BytesIO(bomb)))):
        assert not r and r.error.rule == "LIMIT.max_total_bytes.array" and r.error.offset == start
        assert "max_total_bytes" in r.error.hint
    for call in (lambda: npzstream.load(bomb), lambda: npzstream.load(bomb, max_bytes="4Gi"),
                 lambda: asyncio.run(npzstream.aload(io.BytesIO(bomb)))):
        with pytest.raises(npzstream.RejectedError) as e:
            call()
        assert e.value.rule.startswith("LIMIT.max_")
    bomb, lfh, start = zeros_bomb(64 << 20, pipe=False)
    r = npzstream.validate(bomb, max_total_bytes="32Mi")
    assert not r and r.error.rule == "LIMIT.max_total_bytes.member" and r.error.offset == lfh
    assert npzstream.validate(bomb, max_total_bytes="65Mi")
    with pytest.raises(ValueError):
        npzstream.validate(bomb, max_total_bytes="65 Mi")
