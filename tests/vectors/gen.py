#!/usr/bin/python3
"""Write the C-only test vectors: every case of tests/bad/cases.py as tests/vectors/<name>.bin,
and MANIFEST.tsv with what each must give.

usage: /usr/bin/python3 tests/vectors/gen.py --bin build/npzstream [--check]

The expected verdict, error code and offset of a case come from cases.py (written by hand),
its rule from tests/bad/rules.tsv (reviewed when it changes); the member index the error
belongs to is read from the CLI (`"member_index"`), which must also agree on the code, the
offset and the rule, or nothing is written.  --check writes nothing: it fails when the files in
the repository differ from what would be written (cases.py changed and the vectors were not
regenerated).  run_vectors.c reads the result with nothing but a C compiler and zlib.
"""
import argparse
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "bad"))
from cases import POLICIES, cases  # noqa: E402

MANIFEST = "MANIFEST.tsv"
HEAD = ("# name\tverdict\toffset\trule\tmember\targs  -- written by tests/vectors/gen.py from tests/bad/cases.py;\n"
        "# verdict is ok or an error name (npzs_error_name), offset/rule/member are '-' for ok,\n"
        "# member is -1 when the error belongs to no member; args are npzstream check options.\n")


def rules_tsv():
    out = {}
    for line in open(os.path.join(HERE, "..", "bad", "rules.tsv")):
        if line.startswith("#") or not line.strip():
            continue
        name, rule = line.rstrip("\n").split("\t")
        out[name] = rule
    return out


def build(binary):
    rules = rules_tsv()
    files, rows, problems = {}, [], []
    for c in cases():
        r = subprocess.run([binary, "check", "--json"] + c.args + ["-"], input=c.data, capture_output=True,
                           cwd=os.path.join(HERE, "..", ".."))
        j = json.loads(r.stdout.decode())
        e = j["error"]
        if c.code is None:
            if e is not None:
                problems.append("%s: must be accepted, CLI says %s" % (c.name, e["code"]))
            rows.append((c.name, "ok", "-", "-", "-", " ".join(c.args)))
        else:
            rule = rules.get(c.name)
            if e is None or e["code"] != c.code or e["offset"] != c.offset or e.get("rule") != rule:
                problems.append("%s: expected %s@%s rule %s, CLI says %s" % (c.name, c.code, c.offset, rule, e))
                continue
            rows.append((c.name, c.code, str(c.offset), rule, str(e.get("member_index", -1)), " ".join(c.args)))
        files[c.name + ".bin"] = c.data
    text = HEAD + "".join("\t".join(row) + "\n" for row in rows)
    return files, text.encode(), problems


POLICY_DIR = os.path.join(HERE, "..", "bad", "policies")


def policy_files():
    """tests/bad/policies/NAME.json of cases.POLICIES (the policy cases read them from there)."""
    return {n + ".json": (json.dumps(d, indent=1) + "\n").encode() for n, d in POLICIES.items()}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    pols = policy_files()
    have_pol = set(os.listdir(POLICY_DIR)) if os.path.isdir(POLICY_DIR) else set()
    if a.check:
        stale_pol = [f for f in pols if f not in have_pol or open(os.path.join(POLICY_DIR, f), "rb").read() != pols[f]]
        stale_pol += sorted(have_pol - set(pols))
        for f in stale_pol:
            print("FAIL policy %s is out of date" % f)
        if stale_pol:
            print("vectors-current: 0 passed, %d failed  (run: /usr/bin/python3 tests/vectors/gen.py --bin build/npzstream)"
                  % len(stale_pol))
            return 1
    else:
        os.makedirs(POLICY_DIR, exist_ok=True)
        for f in have_pol - set(pols):
            os.unlink(os.path.join(POLICY_DIR, f))
        for f, data in pols.items():
            with open(os.path.join(POLICY_DIR, f), "wb") as fh:
                fh.write(data)
    files, manifest, problems = build(a.bin)
    for p in problems:
        print("FAIL " + p)
    if problems:
        print("vectors: %d cases disagree with the CLI; nothing written" % len(problems))
        return 1
    have = {f for f in os.listdir(HERE) if f.endswith(".bin")}
    if a.check:
        stale = [f for f in files if f not in have or open(os.path.join(HERE, f), "rb").read() != files[f]]
        extra = sorted(have - set(files))
        old = open(os.path.join(HERE, MANIFEST), "rb").read() if os.path.exists(os.path.join(HERE, MANIFEST)) else b""
        bad = len(stale) + len(extra) + (old != manifest)
        for f in stale[:10] + extra[:10]:
            print("FAIL vector %s is out of date" % f)
        if old != manifest:
            print("FAIL %s is out of date" % MANIFEST)
        print("vectors-current: %d passed, %d failed%s" % (len(files) + 1 - bad, bad,
              "  (run: /usr/bin/python3 tests/vectors/gen.py --bin build/npzstream)" if bad else ""))
        return 1 if bad else 0
    for f in have - set(files):
        os.unlink(os.path.join(HERE, f))
    for f, data in files.items():
        with open(os.path.join(HERE, f), "wb") as fh:
            fh.write(data)
    with open(os.path.join(HERE, MANIFEST), "wb") as fh:
        fh.write(manifest)
    print("vectors: %d written" % len(files))
    return 0


if __name__ == "__main__":
    sys.exit(main())
