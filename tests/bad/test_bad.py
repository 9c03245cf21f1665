#!/usr/bin/python3
"""Run every hand-built bad (and must-accept) input of cases.py through `npzstream check`.

usage: /usr/bin/python3 tests/bad/test_bad.py --bin build/npzstream [--only SUBSTR] [--jobs N]
                                              [--no-numpy] [-v]

For each case the bytes are piped into `BIN check --json [ARGS] -` three times: whole, with
--feed 1 and with --feed 7.  Each run must exit 1 (0 for accept cases), print one JSON object
whose error code and offset equal the expected ones (error null and ok true for accept cases),
and the three JSON objects must be identical.

Each rejection must name the rule tests/bad/rules.tsv expects for the case (the library's rule
ids, src/rules.h); a case with a strict mark must be rejected by a rule of that SECURITY.md group;
and every rule of src/rules.h must be the expected rule of some case (CALL.* and NOMEM.* are
covered by tests/test_api.c).  --update-rules rewrites rules.tsv from what the CLI reports (read
the diff before committing it).

For every rejected case NumPy 1.24 (allow_pickle=False, every member touched) is run on the
same bytes; a case NumPy accepts must carry a strict-rule mark in cases.py, else a WARNING is
printed.  Last line: `bad: N passed, M failed`; exit status 1 if M > 0.
"""
import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cases import cases, numpy_args, numpy_view  # noqa: E402

FEEDS = (None, 1, 7)
HERE = os.path.dirname(os.path.abspath(__file__))
RULES_TSV = os.path.join(HERE, "rules.tsv")
RULES_H = os.path.join(HERE, "..", "..", "src", "rules.h")
# strict marks of cases.py that name a limit rather than a SECURITY.md rule
LIMIT_MARKS = {"L-max-members": "LIMIT.max_members", "L-max-total-bytes": "LIMIT.max_total_bytes",
               "L-max-fields": "LIMIT.max_fields", "L-max-depth": "LIMIT.max_depth",
               "L-max-name-len": "LIMIT.max_name_len", "L-max-extra-len": "LIMIT.max_extra_len",
               "L-max-memory": "LIMIT.max_memory"}
# rules no input to the CLI reaches, with where they are tested instead
NOT_FROM_CLI = {
    "S-NPY-TRAIL.after-end": "tests/test_api.c: bytes pushed after END",
    "S-ZIP-TRAIL.after-end": "tests/test_api.c: bytes pushed after END",
    # defence in depth behind the stream's own end-record checks (the fuzz oracle, fuzz/zfview.c,
    # checks the same property from the other side on every accepted archive)
    "S-ZIP-EOCD-FIND.fails": "unreachable: the stream's end record is in zipfile's window",
    "S-ZIP-EOCD-FIND.fails-fixed": "unreachable: a locator the stream parsed satisfies the fixed reading",
    "S-ZIP-EOCD-FIND.zip64-end-record": "unreachable: a ZIP64 end record must sit right before the locator",
    "S-ZIP-EOCD-FIND.directory": "unreachable: the end records' directory offset and size are checked first",
}


def library_rules():
    import re
    return re.findall(r'^\s*X\(\w+, "([^"]+)"', open(RULES_H).read(), re.M)


def expected_rules():
    if not os.path.exists(RULES_TSV):
        return {}
    out = {}
    for line in open(RULES_TSV):
        if line.strip() and not line.startswith("#"):
            name, rule = line.rstrip("\n").split("\t")
            out[name] = rule
    return out


def run(binary, case, feed):
    cmd = [binary, "check", "--json"] + (["--feed", str(feed)] if feed else []) + case.args + ["-"]
    try:
        r = subprocess.run(cmd, input=case.data, capture_output=True, timeout=60)
    except subprocess.TimeoutExpired:
        return None, "", "timeout after 60 s"
    return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")


def hexdump(data, limit=512):
    out = []
    for i in range(0, min(len(data), limit), 16):
        chunk = data[i:i + 16]
        out.append("    %06x  %-47s  %s" % (i, " ".join("%02x" % b for b in chunk),
                                            "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)))
    if len(data) > limit:
        out.append("    ... (%d bytes total)" % len(data))
    return "\n".join(out)


def check(binary, case, want_rule=None):
    """Returns (problems, results, rule) where results = [(feed, rc, stdout, stderr)]."""
    problems = []
    results = []
    parsed = []
    for feed in FEEDS:
        rc, out, err = run(binary, case, feed)
        results.append((feed, rc, out, err))
        tag = "whole" if feed is None else "feed %d" % feed
        try:
            d = json.loads(out)
        except ValueError:
            problems.append("%s: stdout is not one JSON object (exit %s)" % (tag, rc))
            parsed.append(None)
            continue
        parsed.append(d)
        want_rc = 0 if case.code is None else 1
        if rc != want_rc:
            problems.append("%s: exit %s, want %d" % (tag, rc, want_rc))
        if not isinstance(d, dict):
            problems.append("%s: JSON is not an object" % tag)
            continue
        err_obj = d.get("error")
        if case.code is None:
            if d.get("ok") is not True or err_obj is not None:
                e = err_obj or {}
                problems.append("%s: want ACCEPT, got ok=%r code=%r offset=%r (%s)" % (
                    tag, d.get("ok"), e.get("code"), e.get("offset"), e.get("message")))
        else:
            e = err_obj if isinstance(err_obj, dict) else {}
            if d.get("ok") is not False:
                problems.append("%s: want reject %s@%s, got ok=%r" % (tag, case.code, case.offset, d.get("ok")))
            elif e.get("code") != case.code or e.get("offset") != case.offset:
                problems.append("%s: want %s@%s, got %s@%s (%s)" % (tag, case.code, case.offset, e.get("code"),
                                                                    e.get("offset"), e.get("message")))
            elif want_rule is not None and e.get("rule") != want_rule:
                problems.append("%s: want rule %s, got %s (%s)" % (tag, want_rule, e.get("rule"), e.get("message")))
    base = parsed[0]
    for feed, d in zip(FEEDS[1:], parsed[1:]):
        if base is not None and d is not None and d != base:
            problems.append("feed %d: JSON differs from the whole-input run" % feed)
    rule = ((base or {}).get("error") or {}).get("rule") if isinstance(base, dict) else None
    if case.code is not None and case.strict:
        group = LIMIT_MARKS.get(case.strict, case.strict)
        if not rule or not (rule == group or rule.startswith(group + ".")):
            problems.append("marked strict %s, but the rule is %s" % (case.strict, rule))
    return problems, results, rule


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", default="build/npzstream", help="path of the npzstream CLI")
    ap.add_argument("--only", help="run only cases whose name contains this")
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 4)
    ap.add_argument("--no-numpy", action="store_true", help="skip the NumPy differential")
    ap.add_argument("--quick", action="store_true", help="same as --no-numpy (sanitizer runs)")
    ap.add_argument("-v", "--verbose", action="store_true", help="print every case")
    ap.add_argument("--update-rules", action="store_true", help="rewrite rules.tsv from the CLI's rules")
    a = ap.parse_args()
    if not os.access(a.bin, os.X_OK):
        print("test_bad: %s is not an executable" % a.bin, file=sys.stderr)
        print("bad: 0 passed, 1 failed")
        return 1
    cs = [c for c in cases() if not a.only or a.only in c.name]

    passed = failed = 0
    # every strict-rule mark names a rule documented in SECURITY.md
    sec = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "SECURITY.md")).read()
    for rule in sorted({c.strict for c in cs if c.strict and c.strict.startswith("S-")}):
        if "| " + rule + " |" not in sec:
            failed += 1
            print("FAIL strict rule %s is not documented in SECURITY.md" % rule)
    # the compression methods some zipfile reads are named where the method rule is explained: in
    # its message (npzstream explain, the man page's RULES) and in SECURITY.md's row, with the
    # CPython that reads each
    r = subprocess.run([a.bin, "explain", "S-ZIP-FEATURES.method"], capture_output=True, text=True)
    row = [l for l in sec.splitlines() if l.startswith("| S-ZIP-FEATURES |")]
    for what, text, words in (("npzstream explain S-ZIP-FEATURES.method", r.stdout, ("bzip2 12", "LZMA 14", "Zstandard 93")),
                              ("SECURITY.md's S-ZIP-FEATURES row", row[0] if row else "",
                               ("bzip2 (12)", "LZMA (14)", "CPython 3.3", "Zstandard (93)", "CPython 3.14",
                                "npz-method-93-readable"))):
        missing = [w for w in words if w not in text]
        if missing:
            failed += 1
            print("FAIL %s does not name %s" % (what, ", ".join(missing)))
        else:
            passed += 1
    # NumPy differential (expected verdicts only; independent of the CLI): a case we accept must
    # load in NumPy; a case NumPy accepts may be rejected only under a documented strict rule.
    warnings = 0
    if not (a.no_numpy or a.quick):
        for c in cs:
            if "--sequence" in c.args:  # a mode np.load does not have (cases.sequence_cases)
                continue
            seen = numpy_view(c.data, numpy_args(c.args))
            acc = seen is not None
            if c.sees is not None:
                if seen != c.sees:
                    failed += 1
                    print("FAIL %s: NumPy loads %r, the case says it loads %r" % (c.name, seen, c.sees))
            elif c.code is not None and acc and not c.strict:
                warnings += 1
                failed += 1
                print("FAIL %s: NumPy accepts but the case expects %s and has no strict-rule mark"
                      % (c.name, c.code))
            elif c.code is None and not acc:
                failed += 1
                print("FAIL %s: accept case that NumPy 1.24 rejects" % c.name)

    want = expected_rules()
    got_rules = {}
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as ex:
        futs = [(c, ex.submit(check, a.bin, c, None if a.update_rules or c.code is None else want.get(c.name, "(none in rules.tsv)")))
                for c in cs]
        for c, f in futs:
            problems, results, rule = f.result()
            if c.code is not None:
                got_rules[c.name] = rule
            if problems:
                failed += 1
                print("FAIL %s  (expect %s%s%s)" % (c.name, c.code or "ACCEPT",
                                                   "" if c.offset is None else "@%d" % c.offset,
                                                   "; ambiguous: " + c.ambig if c.ambig else ""))
                for p in problems:
                    print("  - " + p)
                feed, rc, out, err = results[0]
                print("  cli (whole): exit %s: %s" % (rc, out.strip()[:400]))
                if err.strip():
                    print("  stderr: " + err.strip()[:400])
                print("  args: %s   input (%d bytes):" % (" ".join(c.args) or "-", len(c.data)))
                print(hexdump(c.data, 256 if a.verbose else 128))
            else:
                passed += 1
                if a.verbose:
                    print("ok   %s" % c.name)
    if a.update_rules:
        if a.only:
            merged = dict(want)
            merged.update(got_rules)
            got_rules = merged
        with open(RULES_TSV, "w") as f:
            f.write("# case\texpected rule (src/rules.h); written by test_bad.py --update-rules, read by test_bad.py\n")
            for name in sorted(got_rules):
                f.write("%s\t%s\n" % (name, got_rules[name]))
        print("wrote %s (%d cases)" % (RULES_TSV, len(got_rules)))
    # every rule of the library is the expected rule of some case (C-only paths aside)
    if not a.only:
        covered = set(got_rules.values()) | set(want.values())
        missing = [r for r in library_rules()
                   if r not in covered and r not in NOT_FROM_CLI and not r.startswith(("CALL.", "NOMEM."))]
        if missing:
            failed += 1
            print("FAIL rules no case expects (add a case for each): %s" % ", ".join(missing))
        else:
            passed += 1
    if warnings:
        print("%d unmarked case(s) where NumPy accepts but we reject" % warnings)
    print("bad: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
