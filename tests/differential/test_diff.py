#!/usr/bin/python3
"""CI entry of the differential oracle (run by tests/run_all.py, i.e. `make test`).

usage: /usr/bin/python3 tests/differential/test_diff.py [--bin build/npzstream] [--quick] [-n N]
                                                        [--seed S] [--strict-known]

1. every strict rule group of src/rules.h (S-...) is a row of SECURITY.md;
2. every file tests/real/gen.py --quick writes and every corpus/peers file: classified;
3. N seeded mutants (default 4000; --quick: 300, for the ASan build), fixed seed "ci";
4. every tests/differential/regress/*.bin is replayed against its JSON sidecar.
A FAIL-A / FAIL-B / FAIL-ERR counts as a failure, except one whose signature (class, code,
message) is recorded in regress/ with "status": "open": those are known findings waiting for a
library or SECURITY.md change, listed as KNOWN (--strict-known makes them fail too).  A regress
file with "status": "fixed" must no longer fail.  Last line: `diff: N passed, M failed`.
"""
import argparse
import glob
import json
import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import campaign  # noqa: E402
import diffcore  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(campaign.ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("-n", type=int)
    ap.add_argument("--seed", default="ci")
    ap.add_argument("--strict-known", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    n = a.n if a.n is not None else (300 if a.quick else 4000)
    passed = failed = 0

    # 1. every strict group of the library's rules is a SECURITY.md row
    table = {r.split(".")[0] for r in diffcore.library_rules(os.path.join(campaign.ROOT, "src", "rules.h"))
             if r.startswith("S-")}
    missing = sorted(table - campaign.KNOWN)
    if missing:
        print("FAIL strict rule groups of src/rules.h not in SECURITY.md: %s" % ", ".join(missing))
        failed += 1
    else:
        passed += 1

    # regress sidecars
    sides = []
    for js in sorted(glob.glob(os.path.join(HERE, "regress", "*.json"))):
        with open(js) as f:
            sides.append(json.load(f))
    known = {s["signature"] for s in sides if s.get("status") == "open"}

    # 2 + 3. real files and mutants
    results, secs, nseeds, nreals = campaign.run(binary, n, a.seed, 2, quick_gen=True, log=lambda *x: None)
    campaign.report(results, secs, nseeds, nreals, log=lambda s: print(s) if not s.startswith("FAIL") else None)
    nknown = 0
    for r in results:
        if r["cls"] not in campaign.FAIL:
            passed += 1
        elif campaign.signature(r) in known and not a.strict_known:
            nknown += 1
            passed += 1
        else:
            failed += 1
            print("FAIL %s [%s #%s from %s, ops %s]: %s\n     input %s%s" % (
                r["cls"], r["kind"], r["i"], r["origin"], ",".join(r["ops"]), r["detail"], r["data"][:400],
                "..." if len(r["data"]) > 400 else ""))
    if nknown:
        print("KNOWN: %d inputs hit an open finding recorded in regress/ (see its README)" % nknown)

    # 4. regression files
    with tempfile.TemporaryDirectory(prefix="npzs-diff-rg-") as tmp:
        for s in sides:
            data = open(os.path.join(HERE, "regress", s["file"]), "rb").read()
            res = diffcore.classify(binary, data, os.path.join(tmp, "r"), campaign.KNOWN)
            bad = res.cls in campaign.FAIL
            if s.get("status") == "open" and not a.strict_known:
                print("KNOWN %s: %s (%s)" % (s["file"], res.cls, res.detail) if bad else
                      "FIXED? %s no longer fails (%s): set its status to \"fixed\"" % (s["file"], res.cls))
                passed += 1
            elif bad:
                print("FAIL regress %s: %s: %s" % (s["file"], res.cls, res.detail))
                failed += 1
            else:
                passed += 1
    print("diff: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
