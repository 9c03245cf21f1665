#!/usr/bin/python3
"""A policy's patterns through the command line, against Python's own fnmatch.fnmatchcase.

usage: pytest tests/policy/test_patterns.py --bin build/npzstream [--quick]

Each round draws patterns and exact keys (classes, ranges, '!', unclosed '[', '*', '?', multi-byte
characters) and member names, some made from the patterns so that they match.  The policy gives
its i-th entry `"elements": i` (with `"allow_other_members": false`); each member is an array of as
many elements as the index Python picks for its key (an exact key, else the first pattern in the
policy's order that fnmatchcase matches).  The archive is accepted only if npzstream picked the
same entry for every member; a key that nothing matches is refused alone with POLICY.members.
Then the scale: 20,000 patterns of each shape against 20,000 members (as bench/policy_scale.py),
accepted, well within the suite's time.
"""
import fnmatch, io, json, os, random, subprocess, sys, time, zipfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import ok  # noqa: E402

ROUNDS = 60
PAT = list("ab-!]^[*?z0") + ["é", "ж", "€", "😀", "a", "*", "[", "]"]
KEY = list("ab-!]^[*?z0cy") + ["é", "ж", "€", "😀"]


def npy(count):
    """A .npy of `count` uint8 elements, as np.save writes it (version 1.0)."""
    head = "{'descr': '|u1', 'fortran_order': False, 'shape': (%d,), }" % count
    head += " " * (63 - (10 + len(head)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(head).to_bytes(2, "little") + head.encode() + bytes(count)


def archive(members):
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", zipfile.ZIP_STORED) as z:
        for name, count in members:
            z.writestr(name + ".npy", npy(count))
    return bio.getvalue()


def is_glob(p):
    return any(c in p for c in "*?[")


def expected(entries, key):
    """The index of the entry a member's key takes: an exact key, else the first pattern."""
    for i, p in enumerate(entries):
        if not is_glob(p) and p == key:
            return i
    for i, p in enumerate(entries):
        if is_glob(p) and fnmatch.fnmatchcase(key, p):
            return i
    return None


def name_ok(k):
    return k and "/" not in k and "\\" not in k


def check(binary, tmp, entries, members):
    policy = {"allow_other_members": False,
              "members": {p: ({"elements": i} if is_glob(p) else {"elements": i, "optional": True})
                          for i, p in enumerate(entries)}}
    pp, ap = os.path.join(tmp, "p.json"), os.path.join(tmp, "a.npz")
    with open(pp, "w") as f:
        json.dump(policy, f, ensure_ascii=False)
    with open(ap, "wb") as f:
        f.write(archive(members))
    r = subprocess.run([binary, "check", "--json", "--policy", pp, ap], capture_output=True, timeout=120)
    try:
        return r.returncode, json.loads(r.stdout)
    except ValueError:
        return r.returncode, {"raw": r.stdout[-500:] + r.stderr[-500:]}


def random_round(binary, tmp, rng):
    entries = []
    for _ in range(rng.randint(1, 40)):
        p = "".join(rng.choice(PAT) for _ in range(rng.randint(1, 8)))
        if p not in entries:
            entries.append(p)
    keys = set()
    for _ in range(200):
        if rng.random() < 0.5:  # a pattern's text, its '*' and '?' replaced: a key it may match
            p = rng.choice(entries)
            k = "".join("".join(rng.choice(KEY) for _ in range(rng.randint(0, 3))) if c == "*" else
                        rng.choice(KEY) if c == "?" else c for c in p)
        else:
            k = "".join(rng.choice(KEY) for _ in range(rng.randint(1, 7)))
        if name_ok(k):
            keys.add(k)
    keys = sorted(keys)
    rng.shuffle(keys)
    picked = [(k, expected(entries, k)) for k in keys]
    hits = [(k, e) for k, e in picked if e is not None]
    misses = [k for k, e in picked if e is None]
    rc, out = check(binary, tmp, entries, hits)
    ok(rc == 0, "%d entries, %d members each taking Python's entry" % (len(entries), len(hits)),
       "%r; entries %r" % (out.get("error", out), entries))
    for k in misses[:2]:
        rc, out = check(binary, tmp, entries, [(k, 0)])
        err = out.get("error") or {}
        ok(rc == 1 and err.get("rule") == "POLICY.members", "%r matches no entry: POLICY.members" % k,
           "%r; entries %r" % (err or out, entries))
    return len(hits), len(misses)


SHAPES = {  # a pattern of index i, a member name only it matches
    "prefix": (lambda i: "layer.%d.*" % i, lambda i: "layer.%d.weight" % i),
    "suffix": (lambda i: "*.bias_%d" % i, lambda i: "blk.bias_%d" % i),
    "infix": (lambda i: "*.blk%d.*" % i, lambda i: "model.blk%d.w" % i),
    "class": (lambda i: "[mn]odel.blk%d.[wb]" % i, lambda i: "model.blk%d.w" % i),
}


def scale(binary, tmp, n):
    rng = random.Random(39)
    for shape, (pat, name) in SHAPES.items():
        order = list(range(n))
        rng.shuffle(order)
        pp, ap = os.path.join(tmp, "s.json"), os.path.join(tmp, "s.npz")
        with open(pp, "w") as f:
            json.dump({"allow_other_members": False, "members": {pat(i): {} for i in range(n)}}, f)
        with open(ap, "wb") as f:
            f.write(archive([(name(i), 0) for i in order]))
        t = time.perf_counter()
        r = subprocess.run([binary, "check", "-q", "--policy", pp, ap], capture_output=True, timeout=300)
        dt = time.perf_counter() - t
        # 10 s: the bound of a loaded test machine; the bench (bench/policy_scale.py) measures it
        ok(r.returncode == 0 and dt < 10, "%d %s patterns x %d members: accepted in %.2f s" % (n, shape, n, dt),
           (r.stdout + r.stderr)[-300:].decode(errors="replace"))


def test_random_rounds(binary, tmp, quick):
    rng = random.Random(20260)
    hits = misses = 0
    for _ in range(ROUNDS // 3 if quick else ROUNDS):
        h, m = random_round(binary, str(tmp), rng)
        hits += h
        misses += m
    ok(hits > 1000 and misses > 100, "the rounds had members with and without an entry (%d, %d)" % (hits, misses))


def test_scale(binary, tmp, quick):
    scale(binary, str(tmp), 2000 if quick else 20000)
