"""CI entry of the differential oracle (make test; make test-all once more per reference reader).

1. every strict rule group of src/rules.h (S-...) is a row of SECURITY.md;
2. every file tests/real/gen.py --quick writes and every corpus/peers file: classified;
3. 4000 seeded mutants (--quick: 300, for the ASan build), seed "ci" (--seed S for another);
4. every tests/differential/regress/*.bin is replayed against its JSON sidecar.
A FAIL-A / FAIL-B / FAIL-ERR fails, except one whose signature (class, code, message) is recorded in
regress/ with "status": "open": those are known findings waiting for a library or SECURITY.md
change, listed as KNOWN (--strict-known makes them fail too).  A regress file with "status": "fixed"
must no longer fail.
"""
import glob
import json
import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.dirname(HERE))
import campaign  # noqa: E402
import diffcore  # noqa: E402
from common import ok  # noqa: E402

SIDECARS = sorted(glob.glob(os.path.join(HERE, "regress", "*.json")))


def sidecar(path):
    with open(path) as f:
        return json.load(f)


@pytest.fixture(scope="module")
def strict_known(pytestconfig):
    return pytestconfig.getoption("--strict-known")


@pytest.fixture(scope="module")
def known(strict_known):
    """The signatures of the open findings (none with --strict-known)."""
    return set() if strict_known else {s["signature"] for s in map(sidecar, SIDECARS) if s.get("status") == "open"}


@pytest.fixture(scope="module")
def results(binary, quick, seed):
    """The real files and the mutants, classified (2 processes)."""
    n = 300 if quick else 4000
    results, secs, nseeds, nreals = campaign.run(binary, n, seed or "ci", 2, quick_gen=True, log=lambda *x: None)
    campaign.report(results, secs, nseeds, nreals, log=lambda s: print(s) if not s.startswith("FAIL") else None)
    assert sum(r["kind"] == "mutant" for r in results) == n
    return results


def test_strict_groups_are_security_md_rows():
    table = {r.split(".")[0] for r in diffcore.library_rules(os.path.join(campaign.ROOT, "src", "rules.h"))
             if r.startswith("S-")}
    missing = sorted(table - campaign.KNOWN)
    assert not missing, "strict rule groups of src/rules.h not in SECURITY.md: %s" % ", ".join(missing)


@pytest.mark.parametrize("kind", ["file", "mutant"])
def test_classified(results, known, kind):
    """Every real file (kind file) and every mutant: no FAIL class but a known open finding."""
    mine = [r for r in results if r["kind"] == kind]
    assert len(mine) >= 50, "only %d %ss classified" % (len(mine), kind)
    nknown = 0
    for r in mine:
        failing = r["cls"] in campaign.FAIL
        if failing and campaign.signature(r) in known:
            nknown += 1
            failing = False
        data = r.get("data", "")  # kept for the failures
        ok(not failing, "%s [%s #%s from %s, ops %s]: %s" % (r["cls"], r["kind"], r["i"], r["origin"], ",".join(r["ops"]),
                                                             r["detail"]),
           "input %s%s" % (data[:400], "..." if len(data) > 400 else ""))
    if nknown:
        print("KNOWN: %d inputs hit an open finding recorded in regress/ (see its README)" % nknown)


@pytest.mark.parametrize("path", SIDECARS, ids=[os.path.basename(p)[:-5] for p in SIDECARS])
def test_regress(binary, tmp, strict_known, path):
    s = sidecar(path)
    data = open(os.path.join(HERE, "regress", s["file"]), "rb").read()
    res = diffcore.classify(binary, data, os.path.join(tmp, "r"), campaign.KNOWN)
    bad = res.cls in campaign.FAIL
    if s.get("status") == "open" and not strict_known:
        print("KNOWN %s: %s (%s)" % (s["file"], res.cls, res.detail) if bad else
              "FIXED? %s no longer fails (%s): set its status to \"fixed\"" % (s["file"], res.cls))
        return
    assert not bad, "regress %s: %s: %s" % (s["file"], res.cls, res.detail)
