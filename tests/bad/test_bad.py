"""Every hand-built bad (and must-accept) input of cases.py through `npzstream check`.

For each case (one test each) the bytes are piped into `BIN check --json [ARGS] -` three times:
whole, with --feed 1 and with --feed 7.  Each run must exit 1 (0 for accept cases), print one JSON
object whose error code and offset equal the expected ones (error null and ok true for accept
cases), and the three JSON objects must be identical.  The cases run 2 at a time (the machine's
cores), before the first of their tests.

Each rejection must name the rule tests/bad/rules.tsv expects for the case (the library's rule
ids, src/base/rules.h); a case with a strict mark must be rejected by a rule of that SECURITY.md group;
and every rule of src/base/rules.h must be the expected rule of some case (CALL.* and NOMEM.* are
covered by tests/test_api.c).  --update-rules rewrites rules.tsv from what the CLI reports (read
the diff before committing it).

For every rejected case NumPy 1.24 (allow_pickle=False, every member touched) is run on the
same bytes (not in the --quick pass): a case NumPy accepts must carry a strict-rule mark in cases.py.
    /usr/bin/python3 -m pytest tests/bad [-k NAME] [--bin build/npzstream]
"""
import concurrent.futures
import importlib.util
import json
import os
import re
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from cases import cases, numpy_args, numpy_view  # noqa: E402
from common import ok  # noqa: E402

# tests/vectors/gen.py, by its path: tests/real has a gen module too (one name in sys.modules)
_spec = importlib.util.spec_from_file_location("vectors_gen", os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "vectors", "gen.py"))
vectors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(vectors)

FEEDS = (None, 1, 7)
HERE = os.path.dirname(os.path.abspath(__file__))
RULES_TSV = os.path.join(HERE, "rules.tsv")
RULES_H = os.path.join(HERE, "..", "..", "src", "base", "rules.h")
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


CASES = cases()
BY_NAME = {c.name: c for c in CASES}
SECURITY_MD = os.path.join(HERE, "..", "..", "SECURITY.md")


@pytest.fixture(scope="module")
def cli(request, binary, pytestconfig):
    """{case name: (problems, results, rule)} of the cases this run selected, 2 at a time."""
    update = pytestconfig.getoption("--update-rules")
    want = expected_rules()
    names = {item.callspec.params["name"] for item in request.session.items
             if item.originalname == "test_case" and item.module.__name__ == request.module.__name__}
    with concurrent.futures.ThreadPoolExecutor(max_workers=os.cpu_count() or 2) as ex:
        futs = {n: ex.submit(check, binary, BY_NAME[n], None if update or BY_NAME[n].code is None
                             else want.get(n, "(none in rules.tsv)")) for n in sorted(names)}
        out = {n: f.result() for n, f in futs.items()}
    if update:
        got = {} if len(names) == len(CASES) else dict(want)  # -k: the others' rules kept
        got.update({n: r[2] for n, r in out.items() if BY_NAME[n].code is not None})
        with open(RULES_TSV, "w") as f:
            f.write("# case\texpected rule (src/base/rules.h); written by test_bad.py --update-rules, read by test_bad.py\n")
            for name in sorted(got):
                f.write("%s\t%s\n" % (name, got[name]))
        print("wrote %s (%d cases)" % (RULES_TSV, len(got)))
    return out


@pytest.mark.parametrize("name", [c.name for c in CASES])
def test_case(cli, name):
    c = BY_NAME[name]
    problems, results, rule = cli[name]
    if problems:
        feed, rc, out, err = results[0]
        pytest.fail("%s  (expect %s%s%s)\n%s\n  cli (whole): exit %s: %s%s\n  args: %s   input (%d bytes):\n%s" % (
            c.name, c.code or "ACCEPT", "" if c.offset is None else "@%d" % c.offset,
            "; ambiguous: " + c.ambig if c.ambig else "", "\n".join("  - " + p for p in problems), rc, out.strip()[:400],
            "\n  stderr: " + err.strip()[:400] if err.strip() else "", " ".join(c.args) or "-", len(c.data),
            hexdump(c.data, 256)), pytrace=False)


def test_strict_marks_are_documented():
    """Every strict-rule mark names a rule documented in SECURITY.md."""
    sec = open(SECURITY_MD).read()
    marks = sorted({c.strict for c in CASES if c.strict and c.strict.startswith("S-")})
    assert len(marks) >= 20
    for rule in marks:
        ok("| " + rule + " |" in sec, "strict rule %s is documented in SECURITY.md" % rule)


def test_method_rule_names_the_methods(binary):
    """The compression methods some zipfile reads are named where the method rule is explained: in
    its message (npzstream explain, the man page's RULES) and in SECURITY.md's row, with the CPython
    that reads each."""
    sec = open(SECURITY_MD).read()
    r = subprocess.run([binary, "explain", "S-ZIP-FEATURES.method"], capture_output=True, text=True)
    row = [line for line in sec.splitlines() if line.startswith("| S-ZIP-FEATURES |")]
    for what, text, words in (("npzstream explain S-ZIP-FEATURES.method", r.stdout, ("bzip2 12", "LZMA 14", "Zstandard 93")),
                              ("SECURITY.md's S-ZIP-FEATURES row", row[0] if row else "",
                               ("bzip2 (12)", "LZMA (14)", "CPython 3.3", "Zstandard (93)", "CPython 3.14",
                                "npz-method-93-readable"))):
        missing = [w for w in words if w not in text]
        ok(not missing, "%s names every method" % what, "it does not name %s" % ", ".join(missing))


@pytest.mark.slow
def test_numpy_agrees():
    """NumPy differential (expected verdicts only; independent of the CLI): a case we accept must
    load in NumPy; a case NumPy accepts may be rejected only under a documented strict rule."""
    n = 0
    for c in CASES:
        if "--sequence" in c.args:  # a mode np.load does not have (cases.sequence_cases)
            continue
        n += 1
        seen = numpy_view(c.data, numpy_args(c.args))
        acc = seen is not None
        if c.sees is not None:
            ok(seen == c.sees, "%s: NumPy loads what the case says" % c.name, "%r, the case says %r" % (seen, c.sees))
        elif c.code is not None:
            ok(not acc or c.strict, "%s: NumPy accepts but the case expects %s and has no strict-rule mark" % (c.name, c.code))
        else:
            ok(acc, "%s: an accept case NumPy 1.24 loads" % c.name)
    assert n >= 1000


@pytest.mark.slow
def test_vectors_current(cli, binary):
    """tests/vectors (the C-only vectors, MANIFEST.tsv) and tests/bad/policies are what
    tests/vectors/gen.py writes from cases.py, rules.tsv and the CLI's whole-input verdicts (the
    runs above; a case not run here is run now): else run /usr/bin/python3 tests/vectors/gen.py
    --bin build/npzstream."""
    run = vectors.cli_verdict(binary)

    def verdict(c):
        return json.loads(cli[c.name][1][0][2]) if c.name in cli and not cli[c.name][0] else run(c)
    files, manifest, problems = vectors.build(verdict)
    assert not problems, "cases that disagree with the CLI:\n" + "\n".join(problems)
    assert len(files) == len(CASES)
    out = vectors.stale(files, manifest)
    assert not out, "\n".join(out[:20]) + "\n(run: /usr/bin/python3 tests/vectors/gen.py --bin build/npzstream)"


def test_every_rule_is_expected():
    """Every rule of the library is the expected rule of some case (C-only paths aside; the
    inventory's and the scanner's rules are no verdict of the strict parser: tests/inv/test_inv.c
    and tests/scan/test_scan.py check each one's code, offset and rule)."""
    covered = set(expected_rules().values())
    missing = [r for r in library_rules()
               if r not in covered and r not in NOT_FROM_CLI and not r.startswith(("CALL.", "NOMEM.", "INV.", "SCAN."))]
    assert len(covered) > 100
    assert not missing, "rules no case expects (add a case for each): %s" % ", ".join(missing)
