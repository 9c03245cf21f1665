#!/usr/bin/python3
"""Write the C-only test vectors: every case of tests/bad/cases.py as tests/vectors/<name>.bin,
and MANIFEST.tsv with what each must give.

usage: /usr/bin/python3 tests/vectors/gen.py --bin build/npzstream

The expected verdict, error code and offset of a case come from cases.py (written by hand),
its rule from tests/bad/rules.tsv (reviewed when it changes); the member index the error
belongs to is read from the CLI (`"member_index"`), which must also agree on the code, the
offset and the rule, or nothing is written.  tests/bad/test_bad.py (test_vectors_current) fails
when the files in the repository differ from what would be written (cases.py changed and the
vectors were not regenerated).  run_vectors.c reads the result with nothing but a C compiler and zlib.
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


def cli_verdict(binary):
    """The function giving a case's `check --json` object from the CLI."""
    def verdict(c):
        r = subprocess.run([binary, "check", "--json"] + c.args + ["-"], input=c.data, capture_output=True,
                           cwd=os.path.join(HERE, "..", ".."))
        return json.loads(r.stdout.decode())
    return verdict


def build(verdict):
    """({vector file: bytes}, MANIFEST.tsv's bytes, problems); verdict(case): its check --json object."""
    rules = rules_tsv()
    files, rows, problems = {}, [], []
    for c in cases():
        e = verdict(c)["error"]
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


def stale(files, manifest):
    """What in the repository differs from what would be written: [problem]."""
    pols = policy_files()
    have_pol = set(os.listdir(POLICY_DIR)) if os.path.isdir(POLICY_DIR) else set()
    out = ["policy %s is out of date" % f for f in pols
           if f not in have_pol or open(os.path.join(POLICY_DIR, f), "rb").read() != pols[f]]
    out += ["policy %s is not one of cases.POLICIES" % f for f in sorted(have_pol - set(pols))]
    have = {f for f in os.listdir(HERE) if f.endswith(".bin")}
    out += ["vector %s is out of date" % f for f in files if f not in have or open(os.path.join(HERE, f), "rb").read() != files[f]]
    out += ["vector %s is no case's" % f for f in sorted(have - set(files))]
    old = open(os.path.join(HERE, MANIFEST), "rb").read() if os.path.exists(os.path.join(HERE, MANIFEST)) else b""
    if old != manifest:
        out.append("%s is out of date" % MANIFEST)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    a = ap.parse_args()
    pols = policy_files()
    os.makedirs(POLICY_DIR, exist_ok=True)
    for f in set(os.listdir(POLICY_DIR)) - set(pols):
        os.unlink(os.path.join(POLICY_DIR, f))
    for f, data in pols.items():
        with open(os.path.join(POLICY_DIR, f), "wb") as fh:
            fh.write(data)
    files, manifest, problems = build(cli_verdict(a.bin))
    for p in problems:
        print("FAIL " + p)
    if problems:
        print("vectors: %d cases disagree with the CLI; nothing written" % len(problems))
        return 1
    have = {f for f in os.listdir(HERE) if f.endswith(".bin")}
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
