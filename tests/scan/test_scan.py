"""npzstream scan, --keep-going and --sarif, against what the inputs are known to hold (how mixed.py
made them, zipfile's namelist and offsets) and the published SARIF 2.1.0 schema."""
import hashlib
import io
import json
import os
import struct
import subprocess
import sys
import threading
import time
import zipfile
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mixed  # noqa: E402
from common import zip_bytes  # noqa: E402  (tests/common.py: mixed.py puts tests/ on the path)

HERE = os.path.dirname(os.path.abspath(__file__))


def run(binary, *args, **kw):
    return subprocess.run([binary, *args], capture_output=True, timeout=120, **kw)


def jsonl(out):
    return {o["file"]: o for o in map(json.loads, out.decode().splitlines())}


@pytest.fixture(scope="module")
def folder(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("mixed"))
    mixed.write(d)
    os.mkfifo(os.path.join(d, "pipe.npz"))
    return d


@pytest.fixture(scope="module")
def swept(binary, folder):
    r = run(binary, "scan", "-r", "--keep-going", "--jsonl", folder)
    return r.returncode, jsonl(r.stdout)


@pytest.mark.parametrize("name", sorted(mixed.CASES))
def test_mixed_case(swept, folder, name):
    _, files = swept
    data, container, pickled, names = mixed.CASES[name]
    o = files[mixed.path_of(folder, name)]
    assert o["container"] == container
    if pickled is not None:
        assert o["ok"] is (not pickled), o          # every pickle refused, every clean file passed
    else:
        assert o["ok"] is False and o["error"]["code"] == "truncated"
    if pickled:
        assert o["error"]["rule"] in ("PICKLE.object", "SCAN.pickle-member", "SCAN.pickle-nested", "SCAN.pickle-file")
    if names is not None:                          # every member listed, with its own verdict
        assert [m["name"] for m in o["members"]] == names == zipfile.ZipFile(mixed.path_of(folder, name)).namelist()
        assert all("error" in m and "status" in m for m in o["members"])


def test_mixed_skips(swept, folder):
    code, files = swept
    assert code == 2                               # something was skipped: never 0
    assert files[os.path.join(folder, "link.npz")]["error"]["rule"] == "SCAN.symlink"
    assert files[os.path.join(folder, "pipe.npz")]["error"]["rule"] == "SCAN.not-regular"
    locked = files[os.path.join(folder, "locked.npz")]
    if os.geteuid() != 0:
        assert locked["error"]["code"] == "skipped" and locked["ok"] is False
    assert len(files) == len(mixed.CASES) + 3


def test_exit_status(binary, folder):
    clean = [mixed.path_of(folder, n) for n, c in mixed.CASES.items() if c[2] is False]
    bad = [mixed.path_of(folder, n) for n, c in mixed.CASES.items() if c[2]]
    assert len(clean) >= 8 and len(bad) >= 10
    assert run(binary, "scan", "-q", *clean).returncode == 0
    assert run(binary, "scan", "-q", *clean, bad[0]).returncode == 1
    for b in bad:
        assert run(binary, "scan", "-q", b).returncode == 1, b
    assert run(binary, "scan", "-q", folder).returncode == 2      # a directory without -r
    assert run(binary, "scan", "-q", os.path.join(folder, "none")).returncode == 2


def test_keep_going_multi(binary, folder):
    path = os.path.join(folder, "multi.npz")
    plain = json.loads(run(binary, "ls", "--json", path).stdout)
    assert plain["members"] == []                  # the strict parser stops at the object array
    r = run(binary, "ls", "--json", "--keep-going", path)
    kept = json.loads(r.stdout)
    assert r.returncode == 1 and kept["error"] == plain["error"]  # the verdict stays the first error
    assert [m["name"] for m in kept["members"]] == zipfile.ZipFile(path).namelist()
    meta, opt, w = kept["members"]
    info = zipfile.ZipFile(path).infolist()
    assert meta["error"]["code"] == "pickle" and meta["error"]["rule"] == "PICKLE.object"
    assert meta["error"]["offset"] == plain["error"]["offset"] and meta["status"] == "rejected"
    assert opt["error"] is None and opt["sniff"] == "pickle" and opt["offset"] == info[1].header_offset
    assert w["error"] is None and w["kind"] == "array" and w["dtype"] == "<f4" and w["shape"] == [2, 3]
    assert kept["inventory"] == {"zip": True, "complete": True, "members": 3, "error": None}
    c = json.loads(run(binary, "check", "--json", "--keep-going", path).stdout)
    assert [m["name"] for m in c["members"]] == ["meta.npy", "opt.pkl", "w.npy"]
    text = run(binary, "ls", "--keep-going", path).stdout.decode()
    assert "kept going: opt.pkl: blob (pickle)" in text and "kept going: w.npy: array <f4" in text


def test_keep_going_accepted_unchanged(binary, folder):
    for name in ("clean.npz", "clean_c.npz", "clean.npy"):
        p = mixed.path_of(folder, name)
        a = json.loads(run(binary, "check", "--json", p).stdout)
        b = json.loads(run(binary, "check", "--json", "--keep-going", p).stdout)
        assert a["ok"] and b["ok"] and len(a["members"]) == len(b["members"])
        assert all(m["error"] is None and m["status"] == "ok" for m in b["members"])


def test_sarif(binary, folder, tmp):
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (apt) validates the SARIF")
    out = os.path.join(tmp, "scan.sarif")
    r = run(binary, "scan", "-r", "--keep-going", "-q", "--sarif", out, folder)
    assert r.returncode == 2
    doc = json.load(open(out))
    schema = json.load(open(os.path.join(HERE, "sarif-schema-2.1.0.json")))
    jsonschema.Draft4Validator(schema).validate(doc)
    files = jsonl(run(binary, "scan", "-r", "--keep-going", "--jsonl", folder).stdout)
    findings = [(f, e) for f, o in files.items() for e in o["findings"]]
    results = doc["runs"][0]["results"]
    assert len(results) == len(findings) >= 12    # one result per finding
    rules = doc["runs"][0]["tool"]["driver"]["rules"]
    for res, (f, e) in zip(results, findings):
        assert res["ruleId"] == e["rule"] and rules[res["ruleIndex"]]["id"] == e["rule"]
        loc = res["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"] == f
        assert loc["physicalLocation"]["region"]["byteOffset"] == e["offset"]
        if e["member"] is not None:
            assert loc["logicalLocations"][0]["fullyQualifiedName"] == e["member"]
        assert res.get("properties", {}).get("limit") == e.get("limit"), (res, e)
    notes = doc["runs"][0]["invocations"][0]["toolExecutionNotifications"]
    assert doc["runs"][0]["invocations"][0]["executionSuccessful"] is False and len(notes) >= 2
    # --sarif alone: to stdout
    r = run(binary, "scan", "--sarif", "-", mixed.path_of(folder, "model.pkl"))
    jsonschema.Draft4Validator(schema).validate(json.loads(r.stdout))
    assert r.returncode == 1


# ---- every new rejection path: code, offset and rule ----

def one(binary, path, *args):
    r = run(binary, "scan", "--jsonl", *args, path)
    return r.returncode, json.loads(r.stdout)


def write(tmp, name, data):
    p = os.path.join(tmp, name)
    with open(p, "wb") as f:
        f.write(data)
    return p


def test_rule_pickle_file(binary, tmp):
    code, o = one(binary, write(tmp, "a.pkl", mixed.PICKLE))
    assert code == 1 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("pickle", 0, "SCAN.pickle-file")


def test_rule_pickle_member(binary, tmp):
    p = write(tmp, "a.npz", mixed.CASES["pkl_member.npz"][0])
    code, o = one(binary, p)
    off = zipfile.ZipFile(p).getinfo("optimizer.pkl").header_offset
    assert code == 1 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("pickle", off, "SCAN.pickle-member")
    assert o["error"]["member"] == "optimizer.pkl"


def test_rule_pickle_nested(binary, tmp):
    p = write(tmp, "a.npz", mixed.CASES["nested.npz"][0])
    code, o = one(binary, p)
    off = zipfile.ZipFile(p).getinfo("extra.zip").header_offset
    e = o["error"]
    assert code == 1 and (e["code"], e["offset"], e["rule"], e["member"]) == ("pickle", off, "SCAN.pickle-nested", "extra.zip!/inner.pkl")
    assert e["content_offset"] == 0                # the inner member's header in the nested zip


def test_rule_nested_depth_and_bytes(binary, tmp):
    p = write(tmp, "a.npz", mixed.CASES["nested.npz"][0])
    off = zipfile.ZipFile(p).getinfo("extra.zip").header_offset
    code, o = one(binary, p, "--nested-depth", "0")
    assert code == 1 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("limit", off, "SCAN.nested-depth")
    assert o["error"]["limit"] == {"name": "nested_depth", "value": 0, "needed": 1}, o["error"]
    code, o = one(binary, p, "--nested-bytes", "10")
    assert code == 1 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("limit", off, "SCAN.nested-bytes")
    size = zipfile.ZipFile(p).getinfo("extra.zip").file_size  # the member's declared size
    assert o["error"]["limit"] == {"name": "nested_bytes", "value": 10, "needed": size}, o["error"]
    # the same numbers read from a pipe in 1-byte pieces, and in words
    r = run(binary, "scan", "--jsonl", "--nested-bytes", "10", "-", input=open(p, "rb").read())
    assert json.loads(r.stdout)["error"]["limit"] == {"name": "nested_bytes", "value": 10, "needed": size}
    r = run(binary, "scan", "--nested-bytes", "10", p)
    assert b"(needs %d; nested_bytes is 10) [SCAN.nested-bytes]" % size in r.stdout, r.stdout
    # a gzip's content has no declared size: one byte more than the limit
    gz = zlib.compressobj(6, zlib.DEFLATED, 31)
    code, o = one(binary, write(tmp, "a.gz", gz.compress(zip_bytes([("x.pkl", mixed.PICKLE)])) + gz.flush()),
                  "--nested-bytes", "10")
    assert code == 1 and o["error"]["rule"] == "SCAN.nested-bytes", o
    assert o["error"]["limit"] == {"name": "nested_bytes", "value": 10, "needed": 11}, o["error"]
    # a pickle is no limit: no numbers
    code, o = one(binary, write(tmp, "p.pkl", mixed.PICKLE))
    assert "limit" not in o["error"], o["error"]


def test_sarif_limit_numbers(binary, tmp):
    """A finding a limit decided carries the limit's numbers in SARIF too: in its message, as the
    text output says them, and as the JSON's "limit" object in the result's properties."""
    jsonschema = pytest.importorskip("jsonschema", reason="python3-jsonschema (apt) validates the SARIF")
    p = write(tmp, "a.npz", mixed.CASES["nested.npz"][0])
    size = zipfile.ZipFile(p).getinfo("extra.zip").file_size
    for args, limit in ((("--nested-bytes", "10"), {"name": "nested_bytes", "value": 10, "needed": size}),
                        (("--nested-depth", "0"), {"name": "nested_depth", "value": 0, "needed": 1})):
        r = run(binary, "scan", "--sarif", "-", *args, p)
        assert r.returncode == 1, r
        doc = json.loads(r.stdout)
        jsonschema.Draft4Validator(json.load(open(os.path.join(HERE, "sarif-schema-2.1.0.json")))).validate(doc)
        res = doc["runs"][0]["results"]
        assert len(res) == 1 and res[0]["properties"]["limit"] == limit, res
        assert res[0]["message"]["text"].endswith("(needs %d; %s is %d)" % (limit["needed"], limit["name"],
                                                                            limit["value"])), res
    r = run(binary, "scan", "--sarif", "-", write(tmp, "p.pkl", mixed.PICKLE))  # no limit: no numbers
    res = json.loads(r.stdout)["runs"][0]["results"]
    assert len(res) == 1 and "properties" not in res[0] and "needs" not in res[0]["message"]["text"], res


def test_rule_nested_invalid(binary, tmp):
    gz = bytearray(zlib.compressobj(6, zlib.DEFLATED, 31).compress(mixed.PICKLE))
    code, o = one(binary, write(tmp, "a.gz", bytes(gz[:12])))   # cut: the deflate stream never ends
    assert code == 1 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("inflate", 0, "SCAN.nested-invalid")


def test_rule_skips(binary, tmp):
    p = write(tmp, "a.npz", mixed.CASES["clean.npz"][0])
    code, o = one(binary, p, "--max-file-size", "10")
    assert code == 2 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("skipped", 0, "SCAN.max-file-size")
    assert o["error"]["limit"] == {"name": "max_file_size", "value": 10, "needed": os.path.getsize(p)}, o["error"]
    # from a pipe its size is not known: one byte more than the limit, whatever the reads
    r = run(binary, "scan", "--jsonl", "--max-file-size", "10", "-", input=open(p, "rb").read())
    o = json.loads(r.stdout)
    assert r.returncode == 2 and o["error"]["limit"] == {"name": "max_file_size", "value": 10, "needed": 11}, o
    os.symlink(p, os.path.join(tmp, "d", "l.npz")) if os.makedirs(os.path.join(tmp, "d")) is None else None
    r = run(binary, "scan", "-r", "--jsonl", os.path.join(tmp, "d"))
    o = json.loads(r.stdout)
    assert r.returncode == 2 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("skipped", 0, "SCAN.symlink")


def test_rule_timeout(binary):
    proc = subprocess.Popen([binary, "scan", "--jsonl", "--timeout", "1", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
    data = mixed.CASES["clean.npz"][0]
    proc.stdin.write(data[:100])
    proc.stdin.flush()
    time.sleep(2.2)
    try:
        proc.stdin.write(data[100:])
        proc.stdin.close()
    except OSError:  # it gave up already
        pass
    out = proc.stdout.read()
    proc.wait(timeout=30)
    o = json.loads(out)
    assert proc.returncode == 2 and (o["error"]["code"], o["error"]["offset"], o["error"]["rule"]) == ("skipped", 0, "SCAN.timeout")
    # the limit's numbers, in whole seconds: at least one more than allowed, at most the time it took
    lim = o["error"]["limit"]
    assert lim["name"] == "timeout" and lim["value"] == 1 and 2 <= lim["needed"] <= 30, lim


# ---- the inventory's own rules (--keep-going): a member checked after the strict parser stopped ----

def after_object(members):
    """An archive that starts with an object array (the strict parser stops there), then members."""
    return zip_bytes([("meta.npy", mixed.OBJ)] + members)


def kept(binary, data, tmp, name="k.npz"):
    p = write(tmp, name, data)
    r = run(binary, "ls", "--json", "--keep-going", p)
    assert r.returncode == 1
    return json.loads(r.stdout)


def test_inv_crc(binary, tmp):
    data = bytearray(after_object([("w.npy", mixed.W)]))
    off = zipfile.ZipFile(write(tmp, "x.npz", bytes(data))).getinfo("w.npy").header_offset
    data[off + 14] ^= 1                            # the local header's CRC-32
    m = kept(binary, bytes(data), tmp)["members"][1]
    assert (m["error"]["code"], m["error"]["offset"], m["error"]["rule"]) == ("crc_mismatch", off + 30 + 5, "INV.crc")


def test_inv_truncated_and_framing(binary, tmp):
    data = after_object([("w.npy", mixed.W)])
    off = zipfile.ZipFile(write(tmp, "x.npz", data)).getinfo("w.npy").header_offset
    cut = off + 60
    o = kept(binary, data[:cut], tmp)
    m = o["members"][1]
    assert (m["error"]["code"], m["error"]["offset"], m["error"]["rule"]) == ("truncated", cut, "INV.truncated")
    junk = data[: off] + b"JUNKJUNK" + data[off:]
    o = kept(binary, junk, tmp)
    assert len(o["members"]) == 1 and o["inventory"]["error"]["rule"] == "INV.framing"
    assert (o["inventory"]["error"]["code"], o["inventory"]["error"]["offset"]) == ("zip_bad_header", off)


def test_inv_method_and_size(binary, tmp):
    data = bytearray(after_object([("w.npy", mixed.W)]))
    off = zipfile.ZipFile(write(tmp, "x.npz", bytes(data))).getinfo("w.npy").header_offset
    bad = bytearray(data)
    bad[off + 8] = 12                              # method 12 (bzip2)
    m = kept(binary, bytes(bad), tmp)["members"][1]
    assert (m["error"]["code"], m["error"]["offset"], m["error"]["rule"]) == ("zip_unsupported", off, "INV.method")
    bad = bytearray(data)
    struct.pack_into("<I", bad, off + 22, len(mixed.W) + 1)   # the declared size
    m = kept(binary, bytes(bad), tmp)["members"][1]
    assert (m["error"]["code"], m["error"]["offset"], m["error"]["rule"]) == ("size_mismatch", off + 30 + 5, "INV.size")


def test_inv_central_only(binary, tmp):
    data = after_object([("w.npy", mixed.W)])
    z = zipfile.ZipFile(write(tmp, "x.npz", data))
    cd = data.rindex(b"PK\x01\x02")                 # the last central entry: point it at no local header
    bad = bytearray(data)
    struct.pack_into("<I", bad, cd + 42, 7)
    o = kept(binary, bytes(bad), tmp)
    m = o["members"][-1]
    assert m["source"] == "central" and m["name"] == "w.npy"
    assert (m["error"]["code"], m["error"]["offset"], m["error"]["rule"]) == ("cd_mismatch", cd, "INV.central-only")
    assert len(z.namelist()) == 2


def test_inv_inflate(binary, tmp):
    data = bytearray(zip_bytes([("meta.npy", mixed.OBJ), ("w.npy", mixed.W)], zipfile.ZIP_DEFLATED))
    info = zipfile.ZipFile(write(tmp, "x.npz", bytes(data))).getinfo("w.npy")
    start = info.header_offset + 30 + 5
    data[start] = 0xFF                              # a reserved block type (3)
    m = kept(binary, bytes(data), tmp)["members"][1]
    assert (m["error"]["code"], m["error"]["rule"]) == ("inflate", "INV.inflate")
    assert m["error"]["offset"] == start


def test_inv_limit(binary, tmp):
    data = after_object([("a.npy", mixed.W), ("b.npy", mixed.W)])
    r = run(binary, "ls", "--json", "--keep-going", "--max-members", "2", write(tmp, "x.npz", data))
    o = json.loads(r.stdout)
    c = zipfile.ZipFile(os.path.join(tmp, "x.npz")).getinfo("b.npy").header_offset
    assert len(o["members"]) == 2 and o["inventory"]["error"]["rule"] == "INV.limit"
    assert (o["inventory"]["error"]["code"], o["inventory"]["error"]["offset"]) == ("limit", c)


# ---- -P N: the batch pool of check and ls, the output in the input's order ----

def same_parallel(binary, args, sarif_dir, n=4):
    """scan ARGS one at a time (no -P, -P 1) and -P n: (exit, stdout, stderr, SARIF file) each."""
    outs = []
    for p in ([], ["-P", "1"], ["-P", str(n)]):
        sarif = os.path.join(sarif_dir, "p%s.sarif" % "".join(p))
        r = run(binary, "scan", *p, *[sarif if a == "@" else a for a in args])
        data = open(sarif, "rb").read() if "@" in args else None
        outs.append((r.returncode, r.stdout, r.stderr, data))
    return outs


@pytest.mark.parametrize("mode", [[], ["--jsonl"], ["--keep-going", "--jsonl"], ["--keep-going"], ["--sarif", "-"],
                                  ["-q", "--sarif", "@"], ["--jsonl", "--keep-going", "--sarif", "@"]])
def test_parallel_mixed(binary, folder, tmp, mode):
    outs = same_parallel(binary, ["-r"] + mode + [folder, mixed.path_of(folder, "clean.npy")], tmp)
    assert outs[0] == outs[1] == outs[2]
    code, out, err, sarif = outs[0]
    assert code == 2 and (len(out) > 2000 or len(sarif) > 2000)


@pytest.fixture(scope="module")
def tree(tmp_path_factory):
    """300 files in 12 folders, some two deep: clean and pickle-bearing cases in turn, a link."""
    d = str(tmp_path_factory.mktemp("tree"))
    names = sorted(mixed.CASES)
    for i in range(300):
        sub = os.path.join(d, "f%02d" % (i % 12), *(["deep"] if i % 5 == 0 else []))
        os.makedirs(sub, exist_ok=True)
        name = names[i % len(names)]
        with open(os.path.join(sub, "%03d-%s" % (i, name)), "wb") as f:
            f.write(mixed.CASES[name][0])
    os.symlink(os.path.join(d, "f00"), os.path.join(d, "f05", "link"))
    return d


@pytest.mark.parametrize("mode", [["--jsonl"], ["--keep-going", "--jsonl", "--sarif", "@"], []])
def test_parallel_tree(binary, tree, tmp, mode):
    outs = same_parallel(binary, ["-r"] + mode + [tree], tmp)
    assert outs[0] == outs[1] == outs[2]
    code, out, err, _ = outs[0]
    assert code == 2                               # the link is skipped
    if "--jsonl" in mode:
        files = [json.loads(line)["file"] for line in out.decode().splitlines()]
        assert len(files) == 301 and files == sorted(files, key=lambda f: f.replace(os.sep, "\0"))


def test_parallel_confined(binary, tree, tmp):
    """-P 4 runs confined: its threads allowed, a file beside the tree unreadable (with Landlock)."""
    beside = os.path.join(tmp, "beside.npz")
    with open(beside, "wb") as f:
        f.write(mixed.CASES["clean.npz"][0])
    env = dict(os.environ, NPZSTREAM_SANDBOX_PROBE="read=%s,thread,fork" % beside)
    r = run(binary, "scan", "-r", "-q", "-P", "4", tree, env=env)
    lines = r.stderr.decode().splitlines()
    assert "npzstream: sandbox probe thread: allowed" in lines, lines
    assert "npzstream: sandbox probe fork: allowed" not in lines and "npzstream: sandbox probe read: allowed" not in lines
    assert r.returncode == 2


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="/proc/PID/task counts the threads")
def test_parallel_runs_threads(binary, folder):
    """-P 4 scans on 4 worker threads (the same bytes, above, whether or not it does: this shows it
    does), -P 1 on the main thread alone; seen while stdin, the first input, is held open."""
    clean = mixed.path_of(folder, "clean.npz")
    outs = {}
    for n, want in ((4, 5), (1, 1)):
        proc = subprocess.Popen([binary, "scan", "--jsonl", "-P", str(n), "-", clean], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        task = "/proc/%d/task" % proc.pid
        seen, end = 0, time.time() + 10
        while time.time() < end:
            try:
                seen = len(os.listdir(task))
            except OSError:
                break
            if seen >= want and (n == 1 or seen == want):
                time.sleep(0.3)  # settled
                seen = len(os.listdir(task))
                break
            time.sleep(0.05)
        out, err = proc.communicate(mixed.CASES["clean.npz"][0], timeout=60)
        assert proc.returncode == 0, err
        assert seen == want, (n, seen)
        outs[n] = out
    assert outs[4] == outs[1] and outs[1].count(b'"ok": true') == 2


# ---- the options shared with check: --sha256, --policy, --inflate-threads (-j) ----

def test_sha256(binary, folder):
    """--sha256: each member the parser completes has the SHA-256 of its data bytes (an array's, in
    C order here), in the JSON and the text; nested members have none; without it, no member has one."""
    names = ("clean.npz", "clean_c.npz", "clean.npy", "nested.npz")
    paths = [mixed.path_of(folder, n) for n in names]
    r = run(binary, "scan", "--jsonl", "--sha256", *paths)
    assert r.returncode == 1, r.stderr  # nested.npz: a pickle inside
    files = jsonl(r.stdout)
    for n, path in zip(names, paths):
        data = mixed.CASES[n][0]
        if n.endswith(".npy"):
            want = {None: hashlib.sha256(np.load(io.BytesIO(data)).tobytes()).hexdigest()}
        else:
            z = zipfile.ZipFile(io.BytesIO(data))
            want = {k: hashlib.sha256(np.load(io.BytesIO(z.read(k))).tobytes()).hexdigest()
                    for k in z.namelist() if k.endswith(".npy")}
        got = {m["name"]: m.get("sha256") for m in files[path]["members"] if m["kind"] == "array"}
        assert got == want, (n, got)
        for m in files[path]["members"]:
            if m["kind"] != "array":
                assert m.get("sha256") == hashlib.sha256(zipfile.ZipFile(path).read(m["name"])).hexdigest(), m
            assert all("sha256" not in c for c in (m.get("contains") or {}).get("members", [])), m
    text = run(binary, "scan", "--sha256", paths[0]).stdout.decode()
    assert all(", sha256 %s" % h in text for h in got_of(files[paths[0]]).values()), text
    plain = run(binary, "scan", "--jsonl", *paths)
    assert b"sha256" not in plain.stdout


def got_of(o):
    return {m["name"]: m["sha256"] for m in o["members"] if "sha256" in m}


def test_policy(binary, folder, tmp_path):
    """--policy: the file's .npy or .npz checked against it as check does, a violation a finding
    (code policy, its rule, the detail in words) and the exit status 1; a file that keeps it, 0."""
    strict, loose = str(tmp_path / "strict.json"), str(tmp_path / "loose.json")
    with open(strict, "w") as f:
        json.dump({"members": {"a": {"dtype": ["<i4"]}}, "allow_other_members": True}, f)
    with open(loose, "w") as f:
        json.dump({"members": {"a": {"dtype": ["<f4"]}}, "allow_other_members": True}, f)
    path = mixed.path_of(folder, "clean.npz")
    r = run(binary, "scan", "--jsonl", "--policy", strict, path)
    o = jsonl(r.stdout)[path]
    assert r.returncode == 1 and o["ok"] is False, (r.returncode, o)
    e = o["error"]
    assert e["code"] == "policy" and e["rule"] == "POLICY.dtype" and e["member"] == "a.npy", e
    assert "'a'" in e["detail"] and "<f4" in e["detail"], e
    check = json.loads(run(binary, "check", "--json", "--policy", strict, path).stdout)["error"]
    assert (e["offset"], e["rule"], e["detail"]) == (check["offset"], check["rule"], check["detail"])
    assert o["members"][0]["error"] == e and o["findings"] == [e]
    t = run(binary, "scan", "--policy", strict, path)
    assert t.returncode == 1 and b"policy at offset %d" % e["offset"] in t.stdout and b"[POLICY.dtype]" in t.stdout
    assert run(binary, "scan", "--policy", loose, path).returncode == 0
    assert run(binary, "scan", "--policy", strict, mixed.path_of(folder, "clean.npy")).returncode == 1  # "a" required


def big_compressed():
    rng = np.random.default_rng(1)
    b = io.BytesIO()
    np.savez_compressed(b, **{k: rng.integers(0, 50, 2_000_000).astype("<i8") for k in "abcdef"})
    return b.getvalue()


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="/proc/PID/task counts the threads")
def test_inflate_threads(binary, folder, tmp_path):
    """-j 4: the deflated members of a large archive inflated on worker threads (seen while stdin,
    the input, is held open two thirds in), the output the same bytes as without; -j 1 none."""
    data = big_compressed()
    outs = {}
    for j, more in (("4", True), ("1", False)):
        p = subprocess.Popen([binary, "scan", "--jsonl", "--sha256", "-j", j, "-"], stdin=subprocess.PIPE,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        p.stdin.write(data[:len(data) * 2 // 3])
        p.stdin.flush()
        seen, end = 1, time.time() + (10 if more else 1)
        while time.time() < end and seen == 1:
            try:
                seen = len(os.listdir("/proc/%d/task" % p.pid))
            except OSError:
                break
            time.sleep(0.01)
        out, err = p.communicate(data[len(data) * 2 // 3:], timeout=120)
        assert p.returncode == 0, err
        assert (seen > 1) == more, (j, seen)
        outs[j] = out
    assert outs["4"] == outs["1"] and outs["1"].count(b'"sha256"') == 6
    # the mixed folder (nested containers read through the workers' bytes) as without -j
    a = run(binary, "scan", "-r", "--keep-going", "--jsonl", "-j", "3", folder)
    b = run(binary, "scan", "-r", "--keep-going", "--jsonl", folder)
    assert (a.returncode, a.stdout) == (b.returncode, b.stdout)


# ---- --follow-symlinks (opt-in): links met while walking followed, loops walked once ----

@pytest.fixture(scope="module")
def linked(tmp_path_factory):
    """d/ walked; what its links point at is outside it (outside/), so that the sandbox must allow it."""
    root = str(tmp_path_factory.mktemp("links"))
    d, out = os.path.join(root, "d"), os.path.join(root, "outside")
    os.makedirs(os.path.join(d, "a"))
    os.makedirs(os.path.join(out, "dir"))
    for path, name in ((os.path.join(d, "a", "x.npy"), "clean.npy"), (os.path.join(out, "y.pkl"), "model.pkl"),
                       (os.path.join(out, "dir", "obj.npz"), "object.npz"), (os.path.join(out, "lone.npz"), "clean.npz")):
        with open(path, "wb") as f:
            f.write(mixed.CASES[name][0])
    os.symlink(os.path.join(out, "y.pkl"), os.path.join(d, "l-file"))
    os.symlink(os.path.join(out, "dir"), os.path.join(d, "l-dir"))
    os.symlink("..", os.path.join(d, "a", "l-loop"))          # back to d: a loop
    os.symlink("a", os.path.join(d, "l-a"))                   # a second way into a
    os.symlink("nowhere", os.path.join(d, "l-dangling"))
    return d, out


def test_follow_symlinks(binary, linked):
    d, out = linked
    r = run(binary, "scan", "-r", "--jsonl", d)
    plain = jsonl(r.stdout)
    links = ["a/l-loop", "l-a", "l-dangling", "l-dir", "l-file"]
    assert r.returncode == 2 and sorted(plain) == sorted(os.path.join(d, n) for n in links + ["a/x.npy"])
    assert all(plain[os.path.join(d, n)]["error"]["rule"] == "SCAN.symlink" for n in links)   # not followed by default
    r = run(binary, "scan", "-r", "--jsonl", "--follow-symlinks", d)
    got = jsonl(r.stdout)
    assert r.returncode == 2, r.stderr
    assert list(got) == [os.path.join(d, n) for n in ("a/l-loop", "a/x.npy", "l-a", "l-dangling", "l-dir/obj.npz", "l-file")]
    f = got[os.path.join(d, "l-file")]                        # a link to a file: scanned
    assert f["container"] == "pickle" and f["error"]["rule"] == "SCAN.pickle-file"
    o = got[os.path.join(d, "l-dir/obj.npz")]                 # a link to a directory: walked
    assert o["container"] == "npz" and o["error"]["rule"] == "PICKLE.object"
    assert got[os.path.join(d, "a/x.npy")]["ok"] is True
    for n in ("a/l-loop", "l-a"):                            # a loop, and a second way in: walked once
        e = got[os.path.join(d, n)]["error"]
        assert (e["code"], e["rule"]) == ("skipped", "SCAN.symlink") and "walked already" in e["message"], e
    e = got[os.path.join(d, "l-dangling")]["error"]
    assert (e["code"], e["rule"]) == ("skipped", "SCAN.not-regular") and "No such file" in e["message"]
    # confined (the default) and not, one at a time and -P 4: the same bytes; the targets outside d
    # were readable confined, a file beside them that no link names was not
    env = dict(os.environ, NPZSTREAM_SANDBOX_PROBE="read=" + os.path.join(out, "lone.npz"))
    outs = [run(binary, "scan", *extra, "-r", "--jsonl", "--follow-symlinks", d, env=env)
            for extra in ([], ["--no-sandbox"], ["-P", "4"])]
    assert outs[0].stdout == outs[1].stdout == outs[2].stdout == r.stdout
    layers = run(binary, "--sandbox-info").stdout.decode()
    if "landlock: on" in layers:
        assert b"sandbox probe read: refused (Permission denied)" in outs[0].stderr, outs[0].stderr
    assert b"sandbox probe read: allowed" in outs[1].stderr


def test_follow_symlinks_bounded(binary, tmp):
    """Links that would multiply the walk (each level two links to the next: 2^24 paths) and a link
    to the top: every directory walked at most twice (through links, and as itself)."""
    top = os.path.join(tmp, "chain")
    depth = 24
    for i in range(depth + 1):
        level = os.path.join(top, "L%02d" % i)
        os.makedirs(level)
        with open(os.path.join(level, "f.npy"), "wb") as f:
            f.write(mixed.CASES["clean.npy"][0])
        if i < depth:
            for name in ("p", "q"):
                os.symlink(os.path.join("..", "L%02d" % (i + 1)), os.path.join(level, name))
    os.symlink(top, os.path.join(top, "L00", "top"))
    t = time.time()
    r = run(binary, "scan", "-r", "--jsonl", "--follow-symlinks", top)
    files = jsonl(r.stdout)
    scanned = [f for f, o in files.items() if o["ok"]]
    assert r.returncode == 2 and time.time() - t < 30
    assert len(scanned) <= 2 * (depth + 1) and len(scanned) >= depth + 1
    assert sum(1 for o in files.values() if o["error"] and "walked already" in o["error"]["message"]) >= depth
