#!/usr/bin/python3
"""Run the npzstream test suites; called by `make test` and `make test-all`.

--tier test (make test): every suite once, in about ten minutes on an idle 2-core machine: the C
    API suite over every file and the vectors at every push size (through the parallel helper
    too), the policy suite, one pass of the API suite under ASan+UBSan, every tests/*/test_*.py
    with the plain build against the default reader (the Python package in both NumPy
    environments), and a short fuzz smoke.
--tier rest (what make test-all adds): the vectors and every script under ASan+UBSan, the thread
    sanitizer, clang's sanitizers, the suites that compare with np.load once more for every other
    reference reader, the 4.5 GiB archives, the web recipes' servers and the Dask cluster (tests/web,
    tests/dask), the mapped file twice the size of RAM (tests/mapped), the corpus replay and the state
    gate, and the WebAssembly build against the native command and in headless Chromium (tests/wasm).
--tier all: both.
Each suite prints a last line `NAME: N passed, M failed` (or `NAME: skipped: why` where its tools
are missing: counted as skipped, or as a failure when CI is set, as CI installs every tool); this
script adds them up (a suite that tested nothing, 0 passed and 0 failed, counts as a failure),
prints a table of what each suite took and the total as its own last line.  Exit status 1 if anything failed.
"""
import argparse, glob, os, re, subprocess, sys, tempfile, time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readers as READERS  # noqa: E402
MATRIX_SUITES = ("differential", "real")
# suites that run only in the rest tier (make test-all): the web frameworks' servers, the Dask
# cluster, and the mapped file twice the size of RAM (tests/mapped in make test: a 3 GiB one)
REST_ONLY = ("web", "dask")
SMOKE_SECONDS = {"test": 4, "rest": 30}  # a fuzz smoke: seconds per harness
LAST = re.compile(r"^(?:(\w[\w-]*): )?(\d+) passed, (\d+) failed")
SKIPPED = re.compile(r"^(\w[\w-]*): skipped: ")  # a suite whose tools are missing: counted as skipped
# suites run by name (tests/wasm: the rest tier, with the WebAssembly build), not as tests/*/test_*.py
OWN_SUITES = ("wasm",)


def run_suite(name, cmd, env=None):
    t0 = time.time()
    print("== %s: %s" % (name, " ".join(cmd[:4]) + (" ..." if len(cmd) > 4 else "")), flush=True)
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    out = (r.stdout or "") + (r.stderr or "")
    lines = [l for l in out.splitlines() if l.strip()]
    if lines and SKIPPED.match(lines[-1].strip()) and r.returncode == 0:
        if os.environ.get("CI"):  # CI installs every tool: a suite that skips there has failed
            print("   %s: under CI -> counted as 1 failure (%.1fs)" % (lines[-1].strip(), time.time() - t0), flush=True)
            return 0, 1, 0
        print("   %s (%.1fs)" % (lines[-1].strip(), time.time() - t0), flush=True)
        return 0, 0, 1
    m = None
    for l in reversed(lines):
        m = LAST.match(l.strip())
        if m:
            break
    if not m:
        print(out[-4000:])
        print("   %s: no result line, exit %d -> counted as 1 failure" % (name, r.returncode))
        return 0, 1, 0
    p, f = int(m.group(2)), int(m.group(3))
    if p == 0 and f == 0:  # a suite that tested nothing has not passed
        print(out[-2000:])
        print("   %s: 0 passed, 0 failed -> counted as 1 failure (it tested nothing)" % name)
        return 0, 1, 0
    if f or r.returncode != 0:
        fails = [l for l in lines if l.startswith(("FAIL", "ERROR", "==", "SUMMARY")) or "runtime error" in l]
        print("\n".join(fails[:60]))
        if r.returncode != 0 and f == 0:
            print(out[-3000:])
            f = 1
    print("   %s: %d passed, %d failed (%.1fs)" % (name, p, f, time.time() - t0), flush=True)
    return p, f, 0


def suite_name(rel, scripts):
    """tests/DIR/test_X.py: DIR, or DIR-X when DIR has more scripts and X is not its main one."""
    d, stem = rel.split("/")[1], os.path.basename(rel)[5:-3]
    siblings = [r for r in scripts if r.split("/")[1] == d]
    return d if len(siblings) == 1 or stem == d else d + "-" + stem


def fuzz_smoke(seconds):
    return ("fuzz-smoke-%ds" % seconds, ["make", "-s", "fuzz-smoke", "SMOKE_SECONDS=%d" % seconds])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", default="build")
    ap.add_argument("--san", default="build/san")
    ap.add_argument("--tier", choices=("test", "rest", "all"), default="test")
    a = ap.parse_args()
    tiers = ("test", "rest") if a.tier == "all" else (a.tier,)
    total_p = total_f = total_s = 0
    times = []
    t_all = time.time()
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
        readers, skipped = READERS.available()
        scripts = sorted(os.path.relpath(r, ROOT) for r in glob.glob(os.path.join(ROOT, "tests", "*", "test_*.py"))
                         if os.path.relpath(r, ROOT).split(os.sep)[1] not in OWN_SUITES)
        suites = []
        if "test" in tiers:
            suites += [
                ("api", [os.path.join(a.plain, "test_api")] + files),
                # the vectors at every push size, and through the parallel helper
                ("vectors", [os.path.join(a.plain, "run_vectors"), "--par"]),
                ("policy-c", [os.path.join(a.plain, "test_policy")]),
                ("inflate-c", [os.path.join(a.plain, "test_fastinf")]),
                ("inflate-c-asan", [os.path.join(a.san, "test_fastinf")]),
                # one sanitizer pass: the API suite over every file under ASan+UBSan
                ("api-asan", [os.path.join(a.san, "test_api")] + files),
                ("policy-c-asan", [os.path.join(a.san, "test_policy")]),
                ("vectors-current", [PY, "tests/vectors/gen.py", "--bin", os.path.join(a.plain, "npzstream"), "--check"]),
            ]
            for rel in scripts:
                name = suite_name(rel, scripts)
                if name in REST_ONLY:  # the servers and the cluster: make test-all's
                    continue
                args = ["--quick"] if name == "big" or name == "mapped" else []
                suites.append((name, [PY, rel, "--bin", os.path.join(a.plain, "npzstream")] + args))
            if os.path.exists(os.path.join(ROOT, "fuzz", "fuzz.mk")):
                suites.append(fuzz_smoke(SMOKE_SECONDS["test"]))
        if "rest" in tiers:
            suites += [
                ("vectors-asan", [os.path.join(a.san, "run_vectors")]),
                ("vectors-par-asan", [os.path.join(a.san, "run_vectors"), "--par-only"]),
                ("vectors-par-tsan", [os.path.join(a.plain, "tsan", "run_vectors"), "--par-only"]),
            ]
            clang_api = os.path.join(a.plain, "clang-san", "test_api")
            if os.path.exists(clang_api):
                suites.append(("api-clang-san", [clang_api] + files))
            else:
                print("api-clang-san skipped: %s not built (needs clang and libclang-rt)" % clang_api)
            for line in skipped:
                print(line)
            for rd, path, info in readers:
                print("reader %s: %s (%s)" % (rd[0], rd[3], info))
            for rel in scripts:
                name = suite_name(rel, scripts)
                if name == "python":  # the package's extension has no sanitizer build: the plain run is its test
                    continue
                if name in REST_ONLY or name == "mapped":  # the Python package's: no sanitizer build to try
                    suites.append((name, [PY, rel, "--bin", os.path.join(a.plain, "npzstream")]))
                    continue
                suites.append((name + "-asan", [PY, rel, "--bin", os.path.join(a.san, "npzstream"), "--quick"]))
                if rel.split("/")[1] in MATRIX_SUITES:
                    for rd, path, info in readers:
                        if rd[0] != READERS.DEFAULT:
                            suites.append((name + "@" + rd[0], [path, rel, "--bin", os.path.join(a.plain, "npzstream")],
                                           READERS.env_for(rd, env)))
                if name == "big":
                    suites.append(("big-4.5GiB", [PY, rel, "--bin", os.path.join(a.plain, "npzstream")]))
            # the WebAssembly build (make wasm) against the native command, and its demo page in
            # headless Chromium: each says "skipped" where emscripten, Node or Chromium is missing
            wasm = os.path.join(a.plain, "wasm")
            suites.append(("wasm", [PY, "tests/wasm/test_wasm.py", "--bin", os.path.join(a.plain, "npzstream"),
                                    "--wasm", wasm]))
            suites.append(("wasm-browser", [PY, "tests/wasm/test_browser.py", "--bin", os.path.join(a.plain, "npzstream"),
                                            "--wasm", wasm, "--python", os.path.join(a.plain, "venv-selenium", "bin", "python")]))
            if os.path.exists(os.path.join(ROOT, "fuzz", "fuzz.mk")):
                suites.append(("regress", ["make", "-s", "regress"]))
                suites.append(("state-gate", ["make", "-s", "state-gate"]))
                suites.append(fuzz_smoke(SMOKE_SECONDS["rest"]))
        for suite in suites:
            name, cmd = suite[:2]
            t0 = time.time()
            p, f, k = run_suite(name, cmd, suite[2] if len(suite) > 2 else env)
            times.append((name, time.time() - t0, p, f, k))
            total_p += p
            total_f += f
            total_s += k
    print("\n%-28s %9s %10s %7s" % ("suite (%s)" % "+".join(tiers), "seconds", "passed", "failed"))
    for name, dt, p, f, k in times:
        print("%-28s %9.1f %10s %7d" % (name, dt, "skipped" if k else p, f))
    print("%-28s %9.1f %10d %7d" % ("total (suites and their setup)", time.time() - t_all, total_p, total_f))
    print("%d passed, %d failed" % (total_p, total_f) + (", %d skipped" % total_s if total_s else ""))
    return 1 if total_f else 0


if __name__ == "__main__":
    sys.exit(main())
