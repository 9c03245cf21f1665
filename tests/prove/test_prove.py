"""make prove's own checks (prove/prove.py): that it reads EVA's alarms, holds them against
prove/allow.txt, covers every file issue 28 names, and -- where frama-c is installed -- that a
decoder changed to read one byte too many fails it while the real sources pass.
Without frama-c the last part is skipped (said so); the rest always runs."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "prove"))
import prove  # noqa: E402
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import ok  # noqa: E402


LOG = """[eva] analysing
[eva:alarm] src/base/base.h:16: Warning: 
  accessing uninitialized left-value. assert \\initialized(b + 0);
  stack: npzs__le32_1 :: src/zrec/zlocate.c:114 <-
         npzs__zf_locate :: prove/zlocate.c:17 <-
         main
[eva:alarm] %s/zrec/zrec.c:107: Warning: 
  out of bounds read. assert \\valid_read(s + (unsigned int)(i + 2));
  stack: npzs__zr_name :: %s/zrec/zrec.c:107 <-
         main
[eva] done for function main
"""


def test_offline():
    src = os.path.join(ROOT, "build", "prove-copy")
    alarms = prove.parse_alarms(LOG % (src, src), src)
    ok(len(alarms) == 2, "two alarms read from the log (got %r)" % (alarms,))
    if len(alarms) == 2:
        ok(alarms[0] == ("src/base/base.h", "npzs__le32", "accessing uninitialized left-value. assert \\initialized(b + 0);"),
              "an alarm in an inlined helper is named by its function without the suffix: %r" % (alarms[0],))
        ok(alarms[1][0] == "src/zrec/zrec.c" and alarms[1][1] == "npzs__zr_name",
              "an alarm in a copy of the sources is named by its file under src/: %r" % (alarms[1],))
    with tempfile.TemporaryDirectory() as tmp:
        good = os.path.join(tmp, "allow.txt")
        with open(good, "w") as f:
            f.write("# comment\n\nzrec | src/zrec/zrec.c | npzs__zr_name | out of bounds read. assert x; | a reason\n")
        allow = prove.load_allow(good)
        ok(allow == {("zrec", "src/zrec/zrec.c", "npzs__zr_name", "out of bounds read. assert x;"): "a reason"},
              "an allow line is read: %r" % (allow,))
        bad = os.path.join(tmp, "bad.txt")
        with open(bad, "w") as f:
            f.write("zrec | src/zrec/zrec.c | npzs__zr_name | an alarm without a reason |\n")
        try:
            prove.load_allow(bad)
            ok(False, "an allow line without a reason is refused")
        except SystemExit:
            ok(True, "")
    # every file the proof is about has a unit, every driver and source exists
    targets = {u[3] for u in prove.UNITS}
    for rel in ("src/zrec/zrec.c", "src/zrec/zlocate.c", "src/zip/names.c", "src/bytes/crc.c", "src/npy/npyhdr.c"):
        ok(rel in targets, "%s is proved by a unit of prove/prove.py" % rel)
    for u in prove.UNITS:
        for rel in [u[1]] + u[2]:
            ok(os.path.exists(os.path.join(ROOT, rel)), "unit %s: %s exists" % (u[0], rel))
    # no analysed source sees the parser's layout (make purity); the units over pure sources take
    # no stubs of the parser's services, and the sources that see the parser as a handle (a header
    # of src/view/ in their include tree, as the compiler's -MM lists it) are named
    for u in prove.UNITS:
        for rel in u[2]:
            r = subprocess.run([os.environ.get("CC", "cc"), "-Iinclude", "-MM", "-MG", rel], cwd=ROOT,
                               capture_output=True, text=True)
            inc = r.stdout
            ok(r.returncode == 0 and rel in inc, "unit %s: the include tree of %s: %s" % (u[0], rel, r.stderr[-300:]))
            ok("internal.h" not in inc, "unit %s: %s includes internal.h" % (u[0], rel))
            sees = "/view/" in inc
            ok(sees == (rel in prove.SEES_HANDLE), "unit %s: %s %s the parser as a handle, as SEES_HANDLE says"
               % (u[0], rel, "sees" if sees else "does not see"))
    # the committed allow list parses, and each entry names a unit
    allow = prove.load_allow(os.path.join(ROOT, "prove", "allow.txt"))
    names = {u[0] for u in prove.UNITS}
    for k in allow:
        ok(k[0] in names, "prove/allow.txt: unit %s exists" % k[0])
    # what make prove leaves to the units it does not run: functions of the file, which such a unit covers
    for target, fns in prove.ONLY_NOT_DEFAULT.items():
        defined = prove.defined_functions(os.path.join(ROOT, target))
        ok(fns and fns <= defined, "ONLY_NOT_DEFAULT names functions of %s: %s" % (target, sorted(fns - defined)))
        ok(any(u[3] == target and u[0] in prove.NOT_DEFAULT for u in prove.UNITS),
              "a unit outside the default run covers %s" % target)
    # make prove runs a unit over every proved file; the units it leaves out exist
    for target in sorted(targets):
        ok(any(u[3] == target and u[0] not in prove.NOT_DEFAULT for u in prove.UNITS),
              "make prove runs a unit over %s" % target)
    ok(prove.NOT_DEFAULT <= names, "NOT_DEFAULT names units: %s" % sorted(prove.NOT_DEFAULT - names))
    ok(set(prove.UNIT_OPTS) <= names, "UNIT_OPTS names units: %s" % sorted(set(prove.UNIT_OPTS) - names))
    for u in prove.UNITS:  # a unit's own options come after the common ones, so that they win
        opts = prove.UNIT_OPTS.get(u[0])
        if opts and prove.frama_c():
            cmd = prove.cmd_for(u, os.path.join(ROOT, "src"))
            last = max(i for i, a in enumerate(cmd) if a == opts[0])
            ok(cmd[last:last + len(opts)] == opts and last > len(prove.COMMON),
                  "unit %s: its options follow the common ones" % u[0])
    # the coverage check sees the functions of a proved file
    fns = prove.defined_functions(os.path.join(ROOT, "src", "zrec", "zrec.c"))
    ok({"npzs__zr_name", "npzs__zr_extra", "npzs__zr_lfh", "name_special"} <= fns,
          "the functions of src/zrec/zrec.c are found: %s" % sorted(fns))


def test_start_order():
    """The units start longest first (by COST, or by the seconds a run recorded), whatever their
    order in UNITS; every default unit has a cost."""
    units = [(n,) for n in ("short", "long", "unknown", "middle")]
    order = [u[0] for u in prove.start_order(units, {"short": 1, "long": 100, "middle": 50})]
    ok(order == ["unknown", "long", "middle", "short"], "longest first, a unit without a cost first of all: %s" % order)
    default = {u[0] for u in prove.UNITS} - prove.NOT_DEFAULT
    ok(default <= set(prove.COST), "COST has every unit make prove runs: %s" % sorted(default - set(prove.COST)))
    with tempfile.TemporaryDirectory() as keep:
        prove.record_costs(keep, [(("zrec",), 0, "", 2.0)])
        prove.record_costs(keep, [(("crc",), 0, "", 500.0)])
        got = prove.costs(keep)
        ok(got["zrec"] == 2.0 and got["crc"] == 500.0 and got["npyhdr"] == prove.COST["npyhdr"],
           "recorded seconds override COST, one run's units at a time: %s" % got)
        order = [u[0] for u in prove.start_order([("zrec",), ("crc",), ("npyhdr",)], got)]
        ok(order == ["crc", "npyhdr", "zrec"], "the recorded seconds order the next run: %s" % order)


def test_with_frama_c(quick):
    if not prove.frama_c():
        print("prove-checks: frama-c not installed: the analysis runs skipped (apt-get install frama-c-base)")
        r = subprocess.run([sys.executable, "prove/prove.py", "--skip-missing"], cwd=ROOT, capture_output=True, text=True)
        ok(r.returncode == 0 and "prove skipped" in r.stdout, "--skip-missing without frama-c exits 0 and says so")
        return
    if quick:
        print("prove-checks: --quick: the analysis runs skipped (make prove runs them)")
        return
    with tempfile.TemporaryDirectory(prefix="npzs-prove-") as tmp:
        keep = os.path.join(tmp, "logs")
        r = subprocess.run([sys.executable, "prove/prove.py", "--units", "crc", "--keep", keep],
                           cwd=ROOT, capture_output=True, text=True)
        ok(r.returncode == 0 and "prove: 1 passed, 0 failed" in r.stdout,
              "src/bytes/crc.c proves with 0 alarms:\n" + r.stdout[-1500:])
        # a copy of the sources whose portable CRC reads one byte past the caller's buffer
        src = os.path.join(tmp, "src")
        shutil.copytree(os.path.join(ROOT, "src"), src)
        p = os.path.join(src, "bytes", "crc.c")
        with open(p) as f:
            text = f.read()
        broken = text.replace("(uint32_t)crc32(crc, buf, (uInt)len)", "(uint32_t)crc32(crc, buf, (uInt)len + 1)")
        ok(broken != text, "the mutation applies to src/bytes/crc.c")
        with open(p, "w") as f:
            f.write(broken)
        r = subprocess.run([sys.executable, "prove/prove.py", "--units", "crc", "--src", src, "--keep", keep],
                           cwd=ROOT, capture_output=True, text=True)
        ok(r.returncode == 1 and "alarm not in prove/allow.txt" in r.stdout and "src/bytes/crc.c" in r.stdout,
              "a CRC that reads one byte too many fails make prove:\n" + r.stdout[-1500:])
