"""Names through the command line: random member names, field names and policy keys (tests/names/
names.py: every byte length 0..300, characters of 2, 3 and 4 bytes across the 64-byte cut of the
words, controls, bidi controls, line separators, quotes, backslashes, lone surrogates in field
names), in archives and .npy files NumPy's zipfile and np.save write, through check and ls (text and
JSON), trace, extract, vlen and --policy, with and without a policy whose violation quotes the name.

For each: the verdict is np.load's (allow_pickle=False), or the documented stricter rule a name
breaks (SECURITY.md, S-ZIP-NAME.*); the JSON gives the name back exactly, with no raw control, bidi
control or separator in its text; a text line shows the name escaped as README.md ("Names in the
output") says, every character of it, and nothing raw; a policy's words quote the name's first 64
bytes of text, cut on a character's end.

Seeded (--seed N; the seed is printed, and shown with a failure); a few seconds.
"""
import base64
import json
import os
import subprocess
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))
sys.path.insert(0, HERE)
from common import ok  # noqa: E402
import names as N  # noqa: E402

SEED = 20240607


def run(binary, args, data=None, cwd=None):
    r = subprocess.run([binary] + args, input=data, capture_output=True, timeout=300, cwd=cwd)
    return r.returncode, r.stdout.decode("utf-8", "surrogateescape"), r.stderr.decode("utf-8", "surrogateescape")


def utf8(b):
    """The bytes as text when they are strict UTF-8, else None."""
    try:
        return b.decode("utf-8")
    except UnicodeDecodeError:
        return None


def clean(what, out):
    """Printed text: strict UTF-8 and no raw character text output escapes (newlines end lines)."""
    return ok(utf8(out.encode("utf-8", "surrogateescape")) is not None and not N.raw_hidden(out),
              "%s: strict UTF-8, nothing raw" % what, "%s in %r" % (N.raw_hidden(out), out[:300]))


def expect(key, truth):
    """(accepted, rule or None) for an archive of one member key + ".npy"."""
    rule = N.strict_rule(key)
    if truth is None:
        return False, None
    return rule is None, rule


def members(binary, tmp, keys):
    files, want = [], []
    for i, key in enumerate(keys):
        data = N.member_archive(key)
        path = os.path.join(tmp, "m%03d.npz" % i)
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
        want.append(expect(key, N.np_load(data)))
    pol = os.path.join(tmp, "no-others.json")
    with open(pol, "w") as f:
        f.write('{"allow_other_members": false}')
    # check --jsonl and ls --jsonl: one object a file, the name exactly, the verdict np.load's
    for cmd in (["check", "--jsonl"], ["ls", "--jsonl"], ["check", "--jsonl", "--policy", pol]):
        rc, out, err = run(binary, cmd + files)
        lines = out.split("\n")[:-1]
        if not ok(len(lines) == len(files), "%s: one line a file (%d for %d)" % (" ".join(cmd[:2]), len(lines), len(files)),
                  err[-500:]):
            continue
        clean(" ".join(cmd), out)
        for key, (acc, rule), line in zip(keys, want, lines):
            o = json.loads(line)
            e = o["error"] or {}
            what = "%s %r" % (" ".join(cmd[:2]), key)
            if "--policy" in cmd and acc:  # the policy refuses every member: its words quote the key
                ok(not o["ok"] and e.get("rule") == "POLICY.members" and
                   e.get("detail") == N.in_words(key) + " is not a member the policy lists" and
                   e.get("member") == key + ".npy", what + ": the policy's rejection quotes the key", line[:400])
                continue
            ok(o["ok"] == acc, what + ": accepted %s as np.load" % acc, line[:400])
            if acc:
                m = o["members"][0]
                ok(m["name"] == key + ".npy" and m["key"] == key, what + ": the name exactly", line[:400])
            elif rule:
                ok(e.get("rule") == rule and e.get("member") == key + ".npy", what + ": rule %s" % rule, line[:400])
    # the text of check and ls: each name as README.md says, whole; nothing raw; no line added
    for cmd in (["check"], ["ls"], ["check", "--policy", pol]):
        rc, out, err = run(binary, cmd + files)
        clean(" ".join(cmd) + " (text)", out + err)
        lines = out.split("\n")
        for path, key, (acc, _) in zip(files, keys, want):
            what = "%s (text) %r" % (" ".join(cmd[:2]), key)
            shown = N.text(key + ".npy")
            if cmd == ["check"]:
                good = ("  %s: <i8 (3,), 24 bytes, stored, crc32 " % shown) if acc else \
                       ("%s: REJECTED: bad_name at offset 0 (member %s): " % (path, shown))
            elif cmd == ["ls"]:
                good = ("  %s" % shown) if acc else "REJECTED"
            else:
                good = ("(member %s): a member the policy does not list (allow_other_members is false): %s is not a "
                        "member the policy lists [POLICY.members]" % (shown, N.in_words(key))) if acc else "REJECTED"
            ok(any(good in ln for ln in lines), what + ": the line", good[:200])
        if cmd[0] == "check":  # two lines a file: its member and its verdict, or its rejection and hint
            ok(len(lines) == 2 * len(files) + 1,
               "%s (text): %d lines for %d files" % (" ".join(cmd), len(lines), len(files)))
    # trace: the names as JSON strings, nothing raw
    for path, key in list(zip(files, keys))[::9]:
        rc, out, err = run(binary, ["trace", path])
        clean("trace %r" % key, out + err)
        ok(N.json_text(key + ".npy") in out, "trace %r: the name as a JSON string" % key, out[-300:])
    return files


def fields(binary, tmp, names):
    files, want, texts = [], [], []
    for i, name in enumerate(names):
        data = N.npy_bytes(N.field_array(name))
        path = os.path.join(tmp, "f%03d.npy" % i)
        with open(path, "wb") as f:
            f.write(data)
        files.append(path)
        truth = N.np_load(data)
        want.append(truth is not None)
        other = truth.dtype.names[1] if truth is not None else "other"
        t = "[('%s', '<i2'), ('%s', '|u1')] (3,), 9 bytes" % ("".join(N.units(name, "\\'")), other)
        if len(t.encode()) - len(" (3,), 9 bytes") >= 240:  # the dtype's text is cut at 240 bytes (ls's column too)
            d = t[:-len(" (3,), 9 bytes")].encode()[:236]
            while d and (d[-1] & 0xC0) == 0x80 or (d and d[-1] >= 0xC0):
                d = d[:-1]
            t = d.decode() + "... (3,), 9 bytes"
        texts.append(t)
    ok(all(want), "np.load loads every field name NumPy writes (%d)" % len(want),
       repr([n for n, w in zip(names, want) if not w][:5]))
    rc, out, err = run(binary, ["check", "--jsonl"] + files)
    lines = out.split("\n")[:-1]
    if ok(len(lines) == len(files), "check --jsonl (fields): one line a file", err[-300:]):
        for name, acc, line in zip(names, want, lines):
            ok(json.loads(line)["ok"] == acc, "field %r: accepted %s as np.load" % (name, acc), line[:300])
    rc, out, err = run(binary, ["check"] + files)
    clean("check (fields, text)", out + err)
    lines = out.split("\n")
    for name, t in zip(names, texts):
        ok(any(ln.startswith("  " + t + ", stored, crc32 ") for ln in lines), "check (text) field %r: %s" % (name, t[:120]))
    rc, out, err = run(binary, ["ls"] + files)
    clean("ls (fields, text)", out + err)


def policy_keys(binary, tmp, keys, target):
    for i, key in enumerate(keys):
        what = "policy key %r" % key
        pol = os.path.join(tmp, "p%03d.json" % i)
        for ascii_only in (True, False):
            if not ascii_only and any(0xD800 <= ord(c) < 0xE000 for c in key):
                continue  # a lone surrogate cannot be written as UTF-8
            with open(pol, "w", encoding="utf-8") as f:
                f.write(json.dumps({"members": {key: {}}}, ensure_ascii=ascii_only))
            rc, out, err = run(binary, ["check", "--json", "--policy", pol, target])
            clean(what, out + err)
            if any(0xD800 <= ord(c) < 0xE000 for c in key):
                ok(rc == 2 and out == "" and "surrogate" in err and err.count("\n") == 1, what + ": refused (a surrogate)",
                   err)
                continue
            e = (json.loads(out)["error"] if out else None) or {}
            ok(rc == 1 and e.get("rule") == "POLICY.required" and
               e.get("detail") == N.in_words(key) + " is required by the policy and missing", what + ": required", out[:400])
        if any(0xD800 <= ord(c) < 0xE000 for c in key):
            continue
        # a fault under the key: the path holds it as in the words, unquoted
        with open(pol, "w", encoding="utf-8") as f:
            f.write(json.dumps({"members": {key: {"dtype": 5}}}))
        rc, out, err = run(binary, ["check", "--policy", pol, target])
        clean(what + " (a fault)", err)
        path = "members.%s.dtype: dtype is a list of dtypes" % N.in_words(key, quote=False)
        ok(rc == 2 and err.count("\n") == 1 and path in err, what + ": the fault's path", "%r vs %r" % (err, path))


def test_messages(binary, tmp):
    """stderr names: a file, a member at extract, a key asked for; vlen's text."""
    odd = "x\u202ey\u2066\x1b[31m"
    path = os.path.join(tmp, odd + ".npz")
    rc, out, err = run(binary, ["check", path])
    ok(rc == 2 and err == "npzstream: %s: No such file or directory\n" % N.text(path), "check of a missing file: its name",
       repr(err))
    rc, out, err = run(binary, ["check", "--json", path])
    ok(rc == 2 and json.loads(out)["error"]["code"] == "io" and not N.raw_hidden(out + err), "check --json: io", out + err)
    data = N.member_archive("w\u202e")
    with open(os.path.join(tmp, "odd.npz"), "wb") as f:
        f.write(data)
    rc, out, err = run(binary, ["extract", odd, os.path.join(tmp, "odd.npz")])
    ok(rc == 2 and err == "npzstream: %s: %s: no such member\n" % (os.path.join(tmp, "odd.npz"), N.text(odd)),
       "extract: a key not there", repr(err))
    d = os.path.join(tmp, "out")
    os.makedirs(d)
    open(os.path.join(d, "w\u202e.npy"), "w").close()
    rc, out, err = run(binary, ["extract", "--all", "-d", d, os.path.join(tmp, "odd.npz")])
    ok(rc == 2 and err == "npzstream: %s/%s exists (--force replaces it); nothing written\n" % (d, N.text("w\u202e.npy")),
       "extract --all: a member's file that exists", repr(err))
    # names that are not UTF-8 (refused: S-ZIP-NAME.no-utf8-flag, S-ZIP-NAME.utf8): text shows their
    # bytes as escapes (a surrogate's three as its \\u escape), JSON U+FFFD and the bytes in member_b64
    for raw, flagged, shown, rule in ((b"\x82a.npy", "Xa.npy", "\\x82a.npy", "S-ZIP-NAME.no-utf8-flag"),
                                      (b"\xed\xa0\x80\xed\xa0\x80a.npy", "\u00ff\u00ff\u00ffa.npy",
                                       "\\ud800\\ud800a.npy", "S-ZIP-NAME.utf8")):
        data = N.npz_bytes([(flagged, N.field_array("x"))])
        assert data.count(flagged.encode()) == 2
        p = os.path.join(tmp, "raw.npz")
        with open(p, "wb") as f:
            f.write(data.replace(flagged.encode(), raw))
        rc, out, err = run(binary, ["check", p])
        ok(rc == 1 and out.startswith("%s: REJECTED: bad_name at offset 0 (member %s): " % (p, shown)) and
           ("[%s]" % rule) in out and not N.raw_hidden(out), "a name that is not UTF-8 (%r): text" % raw, repr(out))
        rc, out, err = run(binary, ["check", "--json", p])
        e = json.loads(out)["error"]
        ok(e["member"] == raw.decode("utf-8", "replace") and base64.b64decode(e["member_b64"]) == raw and
           e["rule"] == rule and "\\ud" not in out, "a name that is not UTF-8 (%r): JSON" % raw, out)
    vl = os.path.join(tmp, odd + ".bin")
    with open(vl, "wb") as f:
        f.write(b"\x01")
    rc, out, err = run(binary, ["vlen", "--dtype", "<f4", "--shape", "[-1]", vl])
    ok(rc == 1 and out.startswith(N.text(vl) + ": REJECTED: ") and not N.raw_hidden(out + err), "vlen: the file's name",
       repr(out + err))


@pytest.fixture(scope="module")
def name_seed(seed):
    s = int(seed) if seed is not None else SEED
    print("names: seed %d" % s)
    return s


def test_members(binary, tmp, name_seed, quick):
    members(binary, tmp, N.member_names(name_seed, quick))


def test_fields(binary, tmp, name_seed, quick):
    fields(binary, tmp, N.field_names(name_seed, 40 if quick else 120))


def test_policy_keys(binary, tmp, name_seed, quick):
    """Against the archive of the second member name."""
    target = os.path.join(tmp, "m001.npz")
    with open(target, "wb") as f:
        f.write(N.member_archive(N.member_names(name_seed, quick)[1]))
    policy_keys(binary, tmp, N.policy_keys(name_seed, 20 if quick else 60), target)
