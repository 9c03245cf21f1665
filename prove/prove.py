#!/usr/bin/python3
"""make prove: Frama-C's EVA over the pure parts of the library, each through its driver (prove/).

Every unit is one analysis: a driver that gives its entry points any input their contracts allow
(prove/drv.h), the source it proves, and what that source calls.  The alarms (invalid memory
access, signed overflow, uninitialised read, division by zero, invalid shift, a precondition of
a called function that may not hold, ...) are counted per source file and compared with
prove/allow.txt, where each remaining alarm is listed with its reason.  An alarm not listed
fails; a listed one that no longer appears is reported (remove it).  The analysis must also
reach every function of the file it proves and run to its end (no degeneration).

usage: prove/prove.py [--src DIR] [--units a,b | --all] [--jobs N] [--skip-missing] [--keep DIR]
Last line: `prove: N passed, M failed` (units).  Exit 1 when a unit failed, 2 without frama-c
(0 with --skip-missing, which prints why).
"""
import argparse
import concurrent.futures
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# the header parser on texts of unknown bytes: its scanners merge their states at every byte
# (slevel 0: their bounds are checked byte by byte) and the tree's node building after ten, which
# keeps the analysis in minutes
HDR_SLEVEL = "dup_keys:0,str:0,put_utf8:0,why:0,hfail:0,integer:0,tnode_scalar:10,tnode_add:10"
# the header parser on texts that are mostly known (a known prefix, whole headers, whole headers
# with a few unknown bytes): the scanners keep their states apart, so a string or an integer ends
# at the one position it ends at and what follows it is analysed at that position (merged, the
# positions of everything after the first key become intervals, and the descr parser's loop meets
# every frame kind at every one of them: it did not finish in 15 CPU-minutes).  The driver's states
# are merged between texts (main:0): each text starts from a parser of its own, so the merge joins
# only parsers that no later text uses.
TEXT_SLEVEL = "main:0,tnode_scalar:10,tnode_add:10"
# any text of any length up to 2^30 (npyhdr-big): the descr parser's loop merges its states too
# (it kept thousands apart, one per path through the frames met so far), and so does the
# publishing of the dtype tree (its loops wrote every node and field anew in each of the states
# it was called in, and the runs spent most of their time there)
BIG_SLEVEL = HDR_SLEVEL + ",descr_list:0,tree_publish:0"
# the header parser's units: it, the strict UTF-8 it calls, and the buffer it grows its scratch
# with (core/buffer.c, over the stubbed allocation)
HDR_SRC = ["src/npy/npyhdr.c", "src/bytes/utf8.c", "src/core/buffer.c"]
# name, driver, the sources analysed, the file it proves, -D for the driver, per-function slevel
UNITS = [
    ("zrec", "prove/zrec.c", ["src/zrec/zrec.c", "src/bytes/utf8.c"], "src/zrec/zrec.c", [], ""),
    ("zlocate", "prove/zlocate.c", ["src/zrec/zlocate.c", "src/zrec/zrec.c"], "src/zrec/zlocate.c", [], "get:400"),
    ("crc", "prove/crc.c", ["src/bytes/crc.c", "src/bytes/crcfold.c"], "src/bytes/crc.c", [], ""),
    ("crc-isal", "prove/crc.c", ["src/bytes/crc.c", "src/bytes/crcfold.c"], "src/bytes/crc.c", ["NPZS_HAVE_ISAL"], ""),
    ("names-sip", "prove/names.c", ["src/zip/names.c"], "src/zip/names.c", ["NAMES_LEN=0"], ""),
    ("names-len1", "prove/names.c", ["src/zip/names.c"], "src/zip/names.c", ["NAMES_LEN=1"],
     "table_run:1000,grow:1000,npzs__names_add:1000"),
    ("names-len5", "prove/names.c", ["src/zip/names.c"], "src/zip/names.c", ["NAMES_LEN=5"],
     "table_run:1000,grow:1000,npzs__names_add:1000"),
    ("names-len9", "prove/names.c", ["src/zip/names.c"], "src/zip/names.c", ["NAMES_LEN=9"],
     "table_run:1000,grow:1000,npzs__names_add:1000"),
    ("names-any", "prove/names.c", ["src/zip/names.c"], "src/zip/names.c", ["NAMES_LEN=-1"],
     "table_run:1000,grow:1000,npzs__names_add:1000"),
    ("npyhdr", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["EXACT=8"], HDR_SLEVEL),
    ("npyhdr-descr", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["DESCR_TAIL=3"], TEXT_SLEVEL),
    ("npyhdr-forms", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["FORMS=1"], TEXT_SLEVEL),
    ("npyhdr-templates", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["TEMPLATES=1"], TEXT_SLEVEL),
    ("npyhdr-names", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["TEMPLATES=2"], TEXT_SLEVEL),
    ("npyhdr-descr5", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["DESCR_TAIL=5"], TEXT_SLEVEL),
    ("npyhdr-12", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["EXACT=12"], HDR_SLEVEL),
    ("npyhdr-big", "prove/npyhdr.c", HDR_SRC, "src/npy/npyhdr.c", ["HDR_BIG=1", "HDR_MAX=1073741824"], BIG_SLEVEL),
]
# the analysed files that see the parser as a handle (they include a header of src/view/, never
# internal.h: make purity): their units take the parser's services as prove/stubs.c re-states them;
# the others are pure and take nothing
SEES_HANDLE = {"src/zip/names.c", "src/npy/npyhdr.c", "src/core/buffer.c"}
# options of a unit beyond COMMON's (the later of two options wins)
UNIT_OPTS = {
    # one block per allocating call stack (weak after its first allocation) rather than one per
    # call: on texts of any length the analysis meets the pools' allocations at every iteration
    # of the parser's loops, and a block each made the state grow without end
    "npyhdr-big": ["-eva-alloc-builtin", "by_stack"],
}
# units that make prove does not run unless named (--units) or --all is given: their analysis
# does not finish in 15 CPU-minutes (SECURITY.md, "What is proven"; make prove-big runs npyhdr-big)
NOT_DEFAULT = {"npyhdr-descr5", "npyhdr-12", "npyhdr-big"}
# functions of a proved file that only NOT_DEFAULT units reach: what make prove does not prove
# yet, named here so that SECURITY.md can say so and the coverage check holds make prove to
# exactly this list (a function that is reached, or a new one that is not, fails it).  Empty: the
# default units reach every function of every proved file.
ONLY_NOT_DEFAULT = {}
# each unit's seconds on a 2-core machine running two units at once (what make prove printed): the
# units start longest first, so that the long ones run side by side rather than one after the
# other at the end.  A run records the seconds it measured (times.json in the logs' folder), and
# the next run orders by those; a unit not listed is taken as long (it starts early).
COST = {"zrec": 117, "zlocate": 33, "crc": 9, "crc-isal": 13, "names-sip": 2, "names-len1": 8, "names-len5": 12,
        "names-len9": 16, "names-any": 12, "npyhdr": 171, "npyhdr-descr": 54, "npyhdr-forms": 61,
        "npyhdr-templates": 171, "npyhdr-names": 12}
COST_UNKNOWN = 1000
# functions of a proved file the driver does not call, with why (the coverage check skips them)
NOT_DRIVEN = {
    "src/bytes/crc.c": set(),
}

COMMON = ["-machdep", "x86_64", "-eva", "-eva-slevel", "100", "-eva-split-return", "full",
          "-eva-alloc-builtin", "fresh", "-warn-signed-overflow", "-warn-signed-downcast",
          "-warn-invalid-pointer", "-eva-warn-undefined-pointer-comparison", "none",
          "-eva-no-show-progress", "-eva-msg-key=-final-states,-imprecision", "-eva-print-callstacks",
          "-metrics", "-metrics-eva-cover", "-metrics-libc"]

ALARM = re.compile(r"^\[eva:alarm\] (\S+?):(\d+): Warning: *$")
FUNC_DEF = re.compile(r"^(?:static\s+)?(?:inline\s+)?(?:const\s+)?[A-Za-z_][\w\s\*]*?\b([A-Za-z_]\w*)\s*\([^;]*\)\s*\{",
                      re.M)


def frama_c():
    return shutil.which("frama-c")


def cmd_for(unit, src):
    name, driver, sources, _, defs, slevels = unit
    inc = [os.path.join(ROOT, "prove", "include"), os.path.join(ROOT, "include"), src]
    cpp = []
    for d in inc:
        cpp.append("-cpp-extra-args=-I" + d)
    cpp += ["-cpp-extra-args=-include", "-cpp-extra-args=" + os.path.join(ROOT, "prove", "include", "fc_prelude.h")]
    cpp += ["-cpp-extra-args=-D" + d for d in defs]
    files = [os.path.join(ROOT, driver)] + ([os.path.join(ROOT, "prove", "stubs.c")] if set(sources) & SEES_HANDLE else [])
    files += [os.path.join(src, os.path.relpath(s, "src")) for s in sources]
    extra = ["-eva-slevel-function", slevels] if slevels else []
    return [frama_c()] + cpp + COMMON + extra + UNIT_OPTS.get(name, []) + files


def parse_alarms(out, src):
    """[(file, function, text)] of every alarm, file relative to the repository."""
    lines = out.splitlines()
    res = []
    i = 0
    while i < len(lines):
        m = ALARM.match(lines[i])
        if not m:
            i += 1
            continue
        f = m.group(1)
        text, fn = [], "?"
        i += 1
        while i < len(lines) and not lines[i].startswith("["):
            l = lines[i].strip()
            if l.startswith("stack:"):
                fn = l.split()[1]
                while i + 1 < len(lines) and lines[i + 1].startswith("   ") and not lines[i + 1].startswith("  ["):
                    i += 1
                break
            text.append(l)
            i += 1
        i += 1
        f = os.path.relpath(os.path.join(ROOT, f) if not os.path.isabs(f) else f, ROOT)
        if f.startswith(os.path.relpath(src, ROOT) + os.sep) and not f.startswith("src" + os.sep):
            f = os.path.join("src", os.path.relpath(f, os.path.relpath(src, ROOT)))
        # the frame: "fn :: file:line <-"; a callee inlined from base.h is named with a suffix
        fn = re.sub(r"_\d+$", "", fn)
        res.append((f, fn, " ".join(" ".join(text).split())))
    return res


def reached_functions(out):
    """Functions EVA reached (Metrics' coverage: the unreached are listed)."""
    unreached = set()
    grab = False
    for l in out.splitlines():
        if "Unreached functions" in l or "unreached functions" in l.lower():
            grab = True
            continue
        if grab:
            if l.startswith("[") or not l.strip():
                grab = l.strip() == "" and grab
                if l.startswith("["):
                    grab = False
                continue
            for w in re.split(r"[,;\s]+", l.strip()):
                if w and re.match(r"^[A-Za-z_]\w*$", w):
                    unreached.add(w)
    return unreached


def defined_functions(path):
    with open(path) as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    names = set()
    for m in FUNC_DEF.finditer(text):
        n = m.group(1)
        if n not in ("if", "for", "while", "switch", "return", "sizeof"):
            names.add(n)
    return names


def load_allow(path):
    allow = {}
    if not os.path.exists(path):
        return allow
    with open(path) as f:
        for ln, l in enumerate(f, 1):
            l = l.rstrip("\n")
            if not l.strip() or l.lstrip().startswith("#"):
                continue
            parts = [p.strip() for p in l.split("|")]
            if len(parts) != 5 or not parts[4]:
                sys.exit("prove/allow.txt:%d: want UNIT | FILE | FUNCTION | ALARM | REASON" % ln)
            allow[(parts[0], parts[1], parts[2], " ".join(parts[3].split()))] = parts[4]
    return allow


def costs(keep):
    """{unit: seconds}: COST, overridden by what the last runs recorded in keep/times.json."""
    got = dict(COST)
    try:
        with open(os.path.join(keep, "times.json")) as f:
            got.update({k: float(v) for k, v in json.load(f).items()})
    except (OSError, ValueError, AttributeError):
        pass
    return got


def start_order(units, cost):
    """units, longest first by cost (a unit without one first of all; ties in the order given)."""
    return sorted(units, key=lambda u: -cost.get(u[0], COST_UNKNOWN))


def record_costs(keep, results):
    """Adds the seconds of this run's units to keep/times.json (the others' stay)."""
    got = costs(keep)
    got.update({unit[0]: round(dt, 1) for unit, _, _, dt in results})
    with open(os.path.join(keep, "times.json"), "w") as f:
        json.dump({k: got[k] for k in sorted(got)}, f, indent=1)


def run_unit(unit, src, keep):
    t0 = time.time()
    r = subprocess.run(cmd_for(unit, src), cwd=ROOT, capture_output=True, text=True)
    out = r.stdout + r.stderr
    if keep:
        with open(os.path.join(keep, unit[0] + ".log"), "w") as f:
            f.write(out)
    return unit, r.returncode, out, time.time() - t0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--src", default=os.path.join(ROOT, "src"), help="the sources to analyse (a copy, to compare)")
    ap.add_argument("--units", default="")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--skip-missing", action="store_true")
    ap.add_argument("--all", action="store_true", help="the units left out by default too (NOT_DEFAULT)")
    ap.add_argument("--keep", default=os.path.join(ROOT, "build", "prove"))
    ap.add_argument("--allow", default=os.path.join(ROOT, "prove", "allow.txt"))
    a = ap.parse_args()
    if not frama_c():
        print("prove skipped: frama-c is not installed (Debian: apt-get install frama-c-base)")
        print("prove: 0 passed, 0 failed")
        return 0 if a.skip_missing else 2
    src = os.path.abspath(a.src)
    wanted = a.units.split(",") if a.units else None
    units = [u for u in UNITS if (u[0] in wanted if wanted else (a.all or u[0] not in NOT_DEFAULT))]
    for u in UNITS:
        if not a.units and not a.all and u[0] in NOT_DEFAULT:
            print("%-16s %-16s not run by default (too long: SECURITY.md, \"What is proven\"; --all or --units %s)" % (u[0], u[3], u[0]))
    os.makedirs(a.keep, exist_ok=True)
    allow = load_allow(a.allow)
    seen_allowed = set()
    per_file = {}
    not_reached = {}
    passed = failed = 0
    t0 = time.time()
    # started longest first (a pool takes them in the order given), reported in the order of UNITS
    with concurrent.futures.ThreadPoolExecutor(max(1, a.jobs)) as ex:
        done = dict((r[0][0], r) for r in ex.map(lambda u: run_unit(u, src, a.keep), start_order(units, costs(a.keep))))
    results = [done[u[0]] for u in units]
    record_costs(a.keep, results)
    for unit, rc, out, dt in results:
        name, target = unit[0], unit[3]
        problems = []
        if rc != 0 or "[eva] done for function main" not in out:
            problems.append("the analysis did not complete (exit %d): %s" % (rc, out.strip().splitlines()[-1:] or ""))
        if re.search(r"degeneration|Degeneration", out):
            problems.append("the analysis degenerated")
        unreached = reached_functions(out) & (defined_functions(os.path.join(src, os.path.relpath(target, "src")))
                                             - NOT_DRIVEN.get(target, set()))
        # a function is reached when any unit over its file reaches it (checked after all units)
        not_reached[target] = not_reached.get(target, unreached) & unreached
        alarms = parse_alarms(out, src)
        new = []
        for f, fn, text in alarms:
            key = (name, f, fn, text)
            pf = per_file.setdefault(f, [0, 0])
            pf[0] += 1
            if key in allow:
                pf[1] += 1
                seen_allowed.add(key)
            else:
                new.append(key)
        for k in new:
            problems.append("alarm not in prove/allow.txt: %s | %s | %s | %s" % k)
        status = "ok" if not problems else "FAIL"
        print("%-16s %-16s %4d alarms (%d allowed)  %5.1fs  %s" % (
            name, target, len(alarms), len(alarms) - len(new), dt, status))
        for p in problems:
            print("    " + p)
        if problems:
            failed += 1
        else:
            passed += 1
    ran = {u[0] for u in units}
    for target, fns in sorted(not_reached.items()):
        over = {u[0] for u in UNITS if u[3] == target}
        if not (over - NOT_DEFAULT) <= ran:  # a partial run: only what it ran, not the file's coverage
            continue
        expected = set() if (over & NOT_DEFAULT) <= ran else ONLY_NOT_DEFAULT.get(target, set())
        if fns - expected:
            print("FAIL functions of %s that no unit reaches: %s" % (target, ", ".join(sorted(fns - expected))))
            failed += 1
        if expected - fns:
            print("FAIL functions of %s reached now, still listed in ONLY_NOT_DEFAULT (remove them): %s" % (
                target, ", ".join(sorted(expected - fns))))
            failed += 1
        if expected:
            print("not proven by default: %d functions of %s that only %s reach (SECURITY.md)" % (
                len(expected), target, ", ".join(sorted(over & NOT_DEFAULT))))
    stale = [k for k in allow if k[0] in {u[0] for u in units} and k not in seen_allowed]
    for k in stale:
        print("note: prove/allow.txt lists an alarm no longer raised (remove it): %s | %s | %s | %s" % k)
    print("\nalarms per file (allowed by prove/allow.txt, with a reason):")
    for f in sorted(set(u[3] for u in units) | set(per_file)):
        n, ok = per_file.get(f, [0, 0])
        print("  %-18s %4d (%d allowed)" % (f, n, ok))
    print("logs in %s (%.0f s)" % (os.path.relpath(a.keep, ROOT), time.time() - t0))
    print("prove: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
