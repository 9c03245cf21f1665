#!/usr/bin/python3
"""Run every npzstream test suite, plain and under ASan+UBSan; called by `make test`.

Each suite prints a last line `NAME: N passed, M failed`; this script adds them up and
prints the total as its own last line. Exit status 1 if anything failed.
"""
import argparse, glob, os, re, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readers as READERS  # noqa: E402
MATRIX_SUITES = ("differential", "real")
LAST = re.compile(r"^(?:(\w[\w-]*): )?(\d+) passed, (\d+) failed")


def run_suite(name, cmd, env=None):
    t0 = time.time()
    print("== %s: %s" % (name, " ".join(cmd[:4]) + (" ..." if len(cmd) > 4 else "")), flush=True)
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    out = (r.stdout or "") + (r.stderr or "")
    lines = [l for l in out.splitlines() if l.strip()]
    m = None
    for l in reversed(lines):
        m = LAST.match(l.strip())
        if m:
            break
    if not m:
        print(out[-4000:])
        print("   %s: no result line, exit %d -> counted as 1 failure" % (name, r.returncode))
        return 0, 1
    p, f = int(m.group(2)), int(m.group(3))
    if f or r.returncode != 0:
        fails = [l for l in lines if l.startswith(("FAIL", "ERROR", "==", "SUMMARY")) or "runtime error" in l]
        print("\n".join(fails[:60]))
        if r.returncode != 0 and f == 0:
            print(out[-3000:])
            f = 1
    print("   %s: %d passed, %d failed (%.1fs)" % (name, p, f, time.time() - t0), flush=True)
    return p, f


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", default="build")
    ap.add_argument("--san", default="build/san")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    total_p = total_f = 0
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    with tempfile.TemporaryDirectory(prefix="npzs-test-") as tmp:
        files = sorted(glob.glob(os.path.join(ROOT, "corpus", "peers", "**", "*.np[yz]"), recursive=True))
        gen = os.path.join(ROOT, "tests", "real", "gen.py")
        if os.path.exists(gen):
            r = subprocess.run([PY, gen, tmp], cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout[-2000:], r.stderr[-2000:])
                total_f += 1
            small = [f for f in glob.glob(os.path.join(tmp, "**", "*"), recursive=True)
                     if os.path.isfile(f) and os.path.getsize(f) < (4 << 20)]
            files += sorted(small)
        # the hand-built bad inputs too: split invariance and allocation failures on every one
        badgen = subprocess.run([PY, "-c", "import os,sys; sys.path.insert(0,'tests/bad'); from cases import cases\n"
                                 "d=sys.argv[1]; os.makedirs(d)\n"
                                 "for c in cases():\n"
                                 "  open(os.path.join(d, c.name), 'wb').write(c.data)", os.path.join(tmp, "bad")],
                                cwd=ROOT, capture_output=True, text=True)
        if badgen.returncode != 0:
            print(badgen.stderr[-2000:])
            total_f += 1
        else:
            files += sorted(glob.glob(os.path.join(tmp, "bad", "*")))
        suites = [
            ("api", [os.path.join(a.plain, "test_api")] + files),
            ("api-asan", [os.path.join(a.san, "test_api")] + files),
            # the C-only vectors at every push size, and that they are those of tests/bad/cases.py
            ("vectors", [os.path.join(a.plain, "run_vectors"), "--par"]),
            ("vectors-asan", [os.path.join(a.san, "run_vectors")]),
            # the parallel-inflate helper under ASan+UBSan and under the thread sanitizer
            ("vectors-par-asan", [os.path.join(a.san, "run_vectors"), "--par-only"]),
            ("vectors-par-tsan", [os.path.join(a.plain, "tsan", "run_vectors"), "--par-only"]),
            ("vectors-current", [PY, "tests/vectors/gen.py", "--bin", os.path.join(a.plain, "npzstream"), "--check"]),
        ]
        # the API suite under clang's sanitizers too (make builds it where clang's runtimes are)
        clang_api = os.path.join(a.plain, "clang-san", "test_api")
        if os.path.exists(clang_api):
            suites.append(("api-clang-san", [clang_api] + files))
        else:
            print("api-clang-san skipped: %s not built (needs clang and libclang-rt)" % clang_api)
        # every tests/<dir>/test_*.py takes --bin (and --quick for the sanitizer run); the suites
        # that compare with np.load run once more for every other reference reader that is set up
        readers, skipped = READERS.available()
        for line in skipped:
            print(line)
        for rd, path, info in readers:
            print("reader %s: %s (%s)" % (rd[0], rd[3], info))
        for rel in sorted(glob.glob(os.path.join(ROOT, "tests", "*", "test_*.py"))):
            rel = os.path.relpath(rel, ROOT)
            name = rel.split("/")[1]
            suites.append((name, [PY, rel, "--bin", os.path.join(a.plain, "npzstream")]))
            suites.append((name + "-asan", [PY, rel, "--bin", os.path.join(a.san, "npzstream"), "--quick"]))
            if name in MATRIX_SUITES:
                for rd, path, info in readers:
                    if rd[0] != READERS.DEFAULT:
                        suites.append((name + "@" + rd[0], [path, rel, "--bin", os.path.join(a.plain, "npzstream")],
                                       READERS.env_for(rd, env)))
        if os.path.exists(os.path.join(ROOT, "fuzz", "fuzz.mk")):
            suites.append(("regress", ["make", "-s", "regress"]))
            suites.append(("state-gate", ["make", "-s", "state-gate"]))
        for suite in suites:
            name, cmd = suite[:2]
            p, f = run_suite(name, cmd, suite[2] if len(suite) > 2 else env)
            total_p += p
            total_f += f
    print("%d passed, %d failed" % (total_p, total_f))
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
