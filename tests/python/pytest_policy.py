"""pytest suite of the Python package's policies, hashes and safe defaults (run by
tests/run_all.py (pytest) in every environment make python-env set up).  Expected values come from NumPy,
zipfile and hashlib, and the command line's verdict on the same bytes and policy file."""
import asyncio
import dataclasses
import functools
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
from common import Alarm, npy_bytes, zeros_bomb  # noqa: E402


def savez(compressed=False, **arrays):
    bio = io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(bio, **arrays)
    return bio.getvalue()


def savez_pipe(**arrays):
    code = ("import sys, io, numpy as np\nz = np.load(io.BytesIO(sys.stdin.buffer.read()))\n"
            "np.savez(sys.stdout.buffer, **{k: z[k] for k in z.files})")
    return subprocess.run([sys.executable, "-c", code], input=savez(**arrays), stdout=subprocess.PIPE,
                          check=True).stdout


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
    P2 = dataclasses.replace(P, dims={"N": (1, 9)})  # a Policy is immutable: another one, compiled on its own
    assert npzstream.validate(savez(w=np.ones((5, 3), "<f4"), b=np.ones(5, "<f4")), policy=P2)
    assert not npzstream.validate(savez(w=np.ones((5, 3), "<f4"), b=np.ones(5, "<f4")), policy=P)
    assert npzstream.Policy.load(os.path.join(EX, "mnist.json")).to_dict() == mnist_policy()


def test_policy_errors(tmp_path):
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.validate(npy_bytes(np.ones(2)), policy={"members": {"w": {"dtype": ["flaot32"]}}})
    assert e.value.path == "members.w.dtype[0]" and e.value.line is None and "unknown dtype" in e.value.message
    p = tmp_path / "p.json"
    p.write_text('{"members": {"w": {}},\n "allow_blobs": maybe}')
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.load(npy_bytes(np.ones(2)), policy=str(p))
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
        z.writestr("a.npy", npy_bytes(np.ones(2)))
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


# ---- one policy, one verdict: a Policy is immutable, a dict is snapshotted ---------------------------

def nan_file():
    w = np.ones(4, "<f4")
    w[2] = np.nan
    return savez(w=w)


def verdicts(data, policy, tmp_path):
    """The verdict of every entry point on data under policy: (entry point, rule or None)."""
    path = str(tmp_path / "v.npz")
    with open(path, "wb") as f:
        f.write(data)

    def rule_of(call):
        try:
            call()
            return None
        except npzstream.RejectedError as e:
            return e.rule

    def report_rule(r):
        return None if r else r.error.rule

    def spooled():
        sp = npzstream.spool(str(tmp_path / "s.npz"), policy=policy, overwrite=True)  # (each call the same path)
        sp.feed(data)
        return report_rule(sp.finish())

    def validator():
        v = npzstream.Validator(policy=policy)
        v.feed(data)
        return report_rule(v.finish())

    def opened():
        with npzstream.open(path, policy=policy):
            pass

    return {"validate": report_rule(npzstream.validate(data, policy=policy)),
            "load": rule_of(lambda: npzstream.load(data, policy=policy)),
            "aload": rule_of(lambda: asyncio.run(npzstream.aload(io.BytesIO(data), policy=policy))),
            "open": rule_of(opened),
            "Validator": validator(),
            "spool": spooled(),
            "scan": report_rule(next(npzstream.scan([path], workers=0, policy=policy))),
            "scan-pool": [report_rule(r) for r in npzstream.scan([path, path], workers=2, policy=policy)][0],
            "check_file": report_rule(npzstream.check_file(path, npzstream._scan._policy_text(policy)))}


def test_a_policy_is_immutable_once_made(tmp_path):
    """One Policy object, one verdict through every entry point, whatever is done to it or to
    the dicts it was made from after it was used."""
    data = nan_file()
    spec = {"dtype": ["<f4"], "shape": [4]}
    given = {"w": spec}
    P = npzstream.Policy(members=given, allow_other_members=False)
    before = verdicts(data, P, tmp_path)
    assert before == dict.fromkeys(before, None)  # no finite: the NaN is accepted
    with pytest.raises(TypeError):
        P.members["w"]["finite"] = True
    with pytest.raises(TypeError):
        P.members["w"] = {"finite": True}
    with pytest.raises(dataclasses.FrozenInstanceError):
        P.members = {"w": {"finite": True}}
    with pytest.raises(AttributeError):
        P.members["w"]["shape"].append(5)  # a tuple now
    spec["finite"] = True  # the dicts it was made from are the caller's: a snapshot was taken
    given["x"] = {}
    assert P.to_dict() == {"members": {"w": {"dtype": ["<f4"], "shape": [4]}}, "allow_other_members": False}
    assert verdicts(data, P, tmp_path) == before
    M = npzstream.MemberPolicy(dtype=["<f4"])
    with pytest.raises(dataclasses.FrozenInstanceError):
        M.finite = True
    # the policy with the change is another object, with the other verdict everywhere
    P2 = dataclasses.replace(P, members={"w": dict(spec)})
    assert verdicts(data, P2, tmp_path) == dict.fromkeys(before, "POLICY.nan")
    assert verdicts(data, P, tmp_path) == before


def test_a_dict_policy_is_read_on_each_call(tmp_path):
    """A dict is the caller's: each call takes its state then (never a stale compile)."""
    data = nan_file()
    d = {"members": {"w": {"dtype": ["<f4"]}}}
    assert verdicts(data, d, tmp_path) == dict.fromkeys(verdicts(data, d, tmp_path), None)
    d["members"]["w"]["finite"] = True
    assert set(verdicts(data, d, tmp_path).values()) == {"POLICY.nan"}
    del d["members"]["w"]["finite"]
    assert set(verdicts(data, d, tmp_path).values()) == {None}


def test_compiled_once(monkeypatch):
    """A Policy is compiled once for all its uses; a dict once while its text is unchanged."""
    real = npzstream._npzstream.Policy
    texts = []

    def counting(text):
        texts.append(text)
        return real(text)
    monkeypatch.setattr(npzstream._npzstream, "Policy", counting)
    monkeypatch.setattr(npzstream._policy, "_COMPILED", type(npzstream._policy._COMPILED)())
    data = savez(w=np.ones(3, "<f4"))
    P = npzstream.Policy(members={"w": {"dtype": ["<f4"], "finite": True}})
    for _ in range(20):
        assert npzstream.validate(data, policy=P)
        npzstream.load(data, policy=P)
    assert len(texts) == 1
    d = {"members": {"w": {"dtype": ["<f4"]}}, "max_members": 3}
    for _ in range(20):
        assert npzstream.validate(data, policy=d)
    assert len(texts) == 2
    d["max_members"] = 2
    for _ in range(20):
        assert npzstream.validate(data, policy=d)
    assert len(texts) == 3 and texts[1] != texts[2]
    for i in range(100):  # the cache is bounded
        npzstream.validate(data, policy={"max_members": i + 1})
    assert len(npzstream._policy._COMPILED) == npzstream._policy._COMPILED_MAX


def test_a_used_policy_pickles():
    P = npzstream.Policy(members={"w": npzstream.MemberPolicy(dtype=["<f4"], range=(0, float("inf")))},
                         dims={"N": (1, 3)})
    P.check()
    P2 = pickle.loads(pickle.dumps(P))
    assert P2 == P and P2.to_json() == P.to_json() and npzstream._scan._policy_text(P2) == npzstream._scan._policy_text(P)
    L = npzstream.Policy.load(os.path.join(EX, "mnist.json"))
    assert pickle.loads(pickle.dumps(L)) == L


# ---- one reader of policy text: the library's, for every form -------------------------------------

def cli_outcome(policy_path, data):
    """The command line's answer: ("policy", line, column, message) or ("verdict", rule or None)."""
    c = subprocess.run([CLI, "check", "--json", "--policy", policy_path, "-"], input=data, capture_output=True)
    if c.returncode == 2:
        err = c.stderr.decode()
        line, col, rest = err.split(policy_path + ":", 1)[1].split(":", 2)
        return ("policy", int(line), int(col), rest.strip().rsplit(": ", 1)[-1])
    out = json.loads(c.stdout)
    return ("verdict", None if out["ok"] else out["error"]["rule"])


def py_outcome(form, data):
    try:
        r = npzstream.validate(data, policy=form() if callable(form) else form)
    except npzstream.PolicyError as e:
        return ("policy", e.line, e.column, e.message)
    return ("verdict", None if r else r.error.rule)


TEXTS = [  # (name, policy text, files and the rule each gets, or None where the text is refused)
    ("infinity", b'{"members": {"w": {"range": [-1e400, 1e400]}}}', {"inf": None, "nan": "POLICY.range"}),
    ("infinite-hi", b'{"members": {"w": {"range": [0, 1e400]}}}', {"inf": "POLICY.range", "pos": None}),
    ("bom", b'\xef\xbb\xbf{"members": {"w": {"dtype": ["<f8"]}}}', {"inf": None, "f4": "POLICY.dtype"}),
    ("big-float", b'{"members": {"w": {"range": [0, 1.5e300]}}}', {"pos": None, "inf": "POLICY.range"}),
    ("duplicate", b'{"members": {"w": {}, "w": {}}}', None),
    ("nan", b'{"members": {"w": {"range": [0, NaN]}}}', None),
    ("infinity-literal", b'{"members": {"w": {"range": [0, Infinity]}}}', None),
    ("huge-int", b'{"max_members": ' + b"1" * 100 + b"}", None),
    ("uint64+1", b'{"max_members": 18446744073709551616}', None),
    ("not-utf8", b'{"members": {"\xff": {}}}', None),
    ("surrogate", b'{"members": {"\\ud800": {}}}', None),
    ("nul", b'{"members": {"a\\u0000": {}}}', None),
    ("trailing-comma", b'{"members": {"w": {}},}', None),
]
FILES = {"inf": np.array([-np.inf, 0, np.inf]), "nan": np.array([0, np.nan]), "pos": np.array([0.0, 1e10]),
         "f4": np.ones(2, "<f4")}


@pytest.mark.parametrize("name,text,files", TEXTS, ids=[t[0] for t in TEXTS])
def test_policy_text_read_as_the_cli_reads_it(name, text, files, tmp_path):
    path = str(tmp_path / "p.json")
    with open(path, "wb") as f:
        f.write(text)
    forms = {"path": path, "Policy.load": lambda: npzstream.Policy.load(path)}
    for file, rule in (files or {"inf": None}).items():
        data = savez(w=FILES[file])
        got = {k: py_outcome(f, data) for k, f in forms.items()}
        if files is not None:
            assert got == dict.fromkeys(forms, ("verdict", rule)), got
            # the fields as json.loads reads them mean the same (an infinity is written back as 1e400)
            d = json.loads(text)
            assert py_outcome(d, data) == py_outcome(functools.partial(npzstream.Policy.from_dict, d), data) == \
                ("verdict", rule)
        else:
            assert len(set(got.values())) == 1 and got["path"][0] == "policy", got
        if os.access(CLI, os.X_OK):
            assert cli_outcome(path, data) == got["path"]


def dict_error(policy):
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.validate(b"", policy=policy)
    assert e.value.line is None and e.value.source is None
    str(e.value).encode("utf-8")  # printable
    return e.value.path, e.value.message


def test_dict_policy_faults_name_their_field():
    """What JSON cannot hold, and what the library refuses in the text written from a dict, is a
    PolicyError at the field (the library's message where it decides)."""
    assert dict_error({"members": {"w": {"range": [0, float("nan")]}}})[0] == "members.w.range[1]"
    assert dict_error({"max_members": 10 ** 100}) == ("max_members", "number too long")
    assert dict_error({"max_members": 2 ** 64}) == ("max_members", "integer too large (at most 2**64 - 1)")
    assert dict_error({"members": {"w": {}, 1: {}}})[0] == "members"  # json.dumps would have made it "1"
    assert dict_error({"members": {"\ud800": {}}}) == ("members.\\ud800", "a high surrogate escape without its low half")
    assert dict_error({"members": {"w": {"dtype": ["a\x00"]}}})[0] == "members.w.dtype[0]"
    assert dict_error({"members": {"w": {"shape": [object()]}}})[0] == "members.w.shape[0]"
    assert dict_error({"members": {"w": {"shape": {1, 2}}}})[0] == "members.w.shape"
    cycle = {"members": {}}
    cycle["members"]["w"] = cycle
    assert "nested too deeply" in dict_error(cycle)[1]
    with pytest.raises(npzstream.PolicyError, match="nested too deeply"):
        npzstream.Policy(members=cycle["members"])
    # NumPy numbers are numbers, as the same values written in JSON
    assert npzstream.validate(savez(w=np.ones(3)), policy={"members": {"w": {"range": [np.float32(0.5), np.int64(1)],
                                                                          "shape": [np.uint8(3)]}}})
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.MemberPolicy(range=(0, float("nan")))
    assert e.value.path == "range[1]"
    # the same values in a Policy: the same fields
    with pytest.raises(npzstream.PolicyError) as e:
        npzstream.Policy(max_members=10 ** 100).check()
    assert (e.value.path, e.value.message) == ("max_members", "number too long")


def test_dtype_objects_in_a_policy():
    """NumPy dtypes and types stand for their dtype.str (a structured dtype for its field list,
    a type of any size or unit for its name)."""
    rec = np.dtype([("x", "<f4"), ("y", "<i2", (2,))])
    data = savez(w=np.ones(3, "<f4"), r=np.zeros(2, rec), s=np.array(["ab"]), t=np.zeros(2, "M8[s]"))
    ok = {"members": {"w": {"dtype": [np.float32]}, "r": {"dtype": [rec]}, "s": {"dtype": [np.str_]},
                      "t": {"dtype": [np.datetime64]}}}
    assert npzstream.validate(data, policy=ok)
    assert npzstream.Policy(**ok).to_dict()["members"] == {
        "w": {"dtype": ["<f4"]}, "r": {"dtype": [[["x", "<f4"], ["y", "<i2", [2]]]]}, "s": {"dtype": ["str"]},
        "t": {"dtype": ["datetime64"]}}
    for bad, rule in (({"dtype": [np.float64]}, "POLICY.dtype"), ({"dtype": [np.dtype("<f4")]}, None),
                      ({"dtype": [np.dtype(">f4")]}, "POLICY.dtype")):
        r = npzstream.validate(data, policy={"members": {"w": bad}})
        assert (None if r else r.error.rule) == rule
    for t, what in ((np.floating, "floating is not a dtype"), (float, "the type float is not JSON")):
        path, message = dict_error({"members": {"w": {"dtype": ["<f4", t]}}})
        assert path == "members.w.dtype[1]" and message.startswith(what)


def test_npy_keys_warn(monkeypatch):
    monkeypatch.setattr(npzstream._policy, "_COMPILED", type(npzstream._policy._COMPILED)())  # warned when compiled
    data = savez(**{"embed.weight": np.ones(2)})
    with pytest.warns(npzstream.PolicyWarning, match="'embed.weight'"):
        r = npzstream.validate(data, policy={"members": {"embed.weight.npy": {}}})
    assert not r and r.error.rule == "POLICY.required"
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert npzstream.validate(data, policy={"members": {"embed.weight": {}}})
    # a key may mean a member stored as "x.npy.npy": it is a warning, the policy still means it
    data = savez(**{"x.npy": np.ones(2)})
    with pytest.warns(npzstream.PolicyWarning):
        assert npzstream.validate(data, policy=npzstream.Policy(members={"x.npy": {}}, allow_other_members=False))


def test_npy_keys_warning_names_the_callers_line(monkeypatch, tmp_path):
    """The warning points at the caller's line, whichever entry point compiled the policy."""
    monkeypatch.setattr(npzstream._policy, "_COMPILED", type(npzstream._policy._COMPILED)())
    path = tmp_path / "p.json"
    path.write_text('{"members": {"w.npy": {}}}')
    data = savez(w=np.ones(2))
    calls = (lambda: npzstream.Policy.from_dict({"members": {"a.npy": {}}}),
             lambda: npzstream.Policy.load(str(path)),
             lambda: npzstream.validate(data, policy={"members": {"b.npy": {}}}),
             lambda: npzstream.load(data, policy={"members": {"c.npy": {}}, "allow_other_members": True}))
    for call in calls:
        with pytest.warns(npzstream.PolicyWarning) as rec:
            try:
                call()
            except npzstream.RejectedError:
                pass
        assert [w.filename for w in rec] == [__file__] * len(rec) and rec, [(w.filename, w.lineno) for w in rec]


# ---- policy files: read at most what the library takes, never from a FIFO or a device -----------

def test_policy_file_not_regular(tmp_path):
    fifo = str(tmp_path / "fifo.json")
    os.mkfifo(fifo)
    for path, kind in ((fifo, "a FIFO"), ("/dev/zero", "a character device"), (str(tmp_path), "a directory")):
        for call in (npzstream.Policy.load, lambda p: npzstream.validate(b"", policy=p),
                     lambda p: npzstream.scan([], policy=p)):  # at the call, not at the first report
            with Alarm(10), pytest.raises(npzstream.PolicyError) as e:
                call(path)
            assert kind in e.value.message and e.value.source == path and path in str(e.value)


def test_policy_file_read_bounded(tmp_path):
    """A policy file larger than the library takes is refused after reading one byte more than
    that, never read whole (the peak memory of a process that tries a 256 MiB file)."""
    big = str(tmp_path / "big.json")
    with open(big, "wb") as f:
        f.truncate(256 << 20)  # sparse: no disk
    code = ("import resource, sys, npzstream\n"
            "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
            "for call in (npzstream.Policy.load, lambda p: npzstream.validate(b'', policy=p)):\n"
            "    try:\n"
            "        call(sys.argv[1])\n"
            "    except npzstream.PolicyError as e:\n"
            "        print(e)\n"
            "print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - base) // 1024)\n")
    out = subprocess.run([sys.executable, "-c", code, big], capture_output=True, text=True, timeout=120).stdout.split("\n")
    assert out[0] == out[1] == "policy: %s: a policy is at most 1 MiB of JSON" % big, out
    assert int(out[2]) < 32, "reading the policy grew the peak RSS by %s MiB" % out[2]
    ok = str(tmp_path / "ok.json")  # exactly the most the library takes: read whole
    with open(ok, "wb") as f:
        f.write(b"{}" + b" " * (npzstream._npzstream.POLICY_MAX_TEXT - 2))
    assert npzstream.Policy.load(ok).to_dict() == {}
    with open(ok, "ab") as f:
        f.write(b" ")
    with pytest.raises(npzstream.PolicyError, match="at most 1 MiB"):
        npzstream.Policy.load(ok)
