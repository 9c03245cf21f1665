#!/usr/bin/python3
"""Run the npzstream test suites; called by `make test` and `make test-all`.

--tier test (make test): every suite once, in about eight minutes on an idle 2-core machine: the C
    API suite over every file and the vectors at every push size (through the parallel helper
    too), the policy and vlen API suites, one pass of the API and policy suites under ASan+UBSan,
    every Python suite (tests/*/test_*.py) with the plain build and Debian's NumPy 1.24, the
    package's suites (tests/python, tests/engines/pytest_refs.py) in both NumPy environments, and
    a short fuzz smoke.
--tier rest (what make test-all adds): the vectors under ASan+UBSan and the thread sanitizer, clang's
    sanitizers, the vlen API suite under ASan+UBSan; the suites that drive the command line's own
    code (ASAN_SUITES) once more with the sanitizer build; the suites that compare with np.load once
    more for every other reference reader; the tests marked `rest` (the 4.5 GiB archives, the mapped
    file twice the size of RAM, the WebAssembly build against the native command); the web recipes'
    servers, the Ray and Dask readers on their clusters with an S3 server, the demo page in headless
    Chromium, each in its environment; the corpus replay, the state gate and a longer fuzz smoke.
--tier all: both.

The suites run two at a time (--jobs N; by default the machine's cores, at most 2): each C suite,
make target and pytest module is a job; those in ALONE (they keep both cores busy, or measure a time
a neighbour would lengthen) run first, one by one with nothing beside them, then the others the
longest first (by the seconds of the last run, build/test-logs/seconds.json; a job without a record
first of all).  A job's output is printed whole when it ends; the table keeps its fixed order.

The C suites and make's (fuzz-smoke, regress, state-gate) end on a line `NAME: N passed, M failed`
(their contract), read here with the exit status.  The Python suites are pytest modules
(tests/README.md): pytest runs once per module and environment (pytest_runs) with --junitxml and a
--basetemp of its own, and their results are read from that file: each test module is a suite of
the table (tests/DIR/test_X.py: DIR, or DIR-X; a suffix names the environment).  A suite that
tested nothing counts as a failure; a skipped test counts as skipped, or as a failure when CI is
set (CI installs every tool).  The table gives
each suite's seconds, its tests and its checks (the C suites' count, and the soft checks of the
Python tests, common.ok); the total is the last line.  Exit status 1 if anything failed.
"""
import argparse
import concurrent.futures
import glob
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import readers as READERS  # noqa: E402

SMOKE_SECONDS = {"test": 4, "rest": 20}  # a fuzz smoke: seconds per harness (two at once)
LAST = re.compile(r"^(?:(\w[\w-]*): )?(\d+) passed, (\d+) failed")
# The Python suites run once more with the sanitizer build (--quick): those that drive the command
# line's own code (its options, output, extract, batch pool, vlen, refs and scan commands, the
# examples).
# The library under ASan+UBSan is the C suites' (api-asan, the vectors, the fuzz smoke and replay);
# the other suites' checks of the library through the command line repeat theirs.
ASAN_SUITES = ("bad/test_bad.py", "cli/test_cli.py", "cli/test_sandbox.py", "examples/test_examples.py",
               "names/test_names.py", "real/test_real.py", "vlen/test_vlen.py", "engines/test_refs.py", "scan/test_scan.py")
# the package's suites: in the package environments (make python-env), which import npzstream
PKG_FILES = ("python/pytest_*.py", "engines/pytest_refs.py")
# the suites that compare with np.load once more for every other reference reader (tests/readers.py)
MATRIX_FILES = ("differential/test_diff.py", "real/test_real.py")

# What runs alone (nothing beside it): the suites that use both cores, and those that measure a
# time another suite beside them would lengthen.  The others run JOBS at a time (--jobs).  (The
# thread sanitizer's vectors are not among them: their helper's threads take turns, 1.0 cores.)
ALONE = {
    "fuzz-smoke": "two harnesses at once",
    "bad/test_bad.py": "its cases as many at once as the machine has cores",
    "python/pytest_budget.py": "the event loop's lag under load (a p99 in milliseconds)",
    "web/pytest_load.py": "32 uploads at once against a server, /ping's p99",
    "engines/pytest_engines.py": "Ray and Dask start workers on every core",
}
# a job's seconds, to start the longest first (so that no long one starts last while the other
# core idles); a run records what it measured (build/test-logs/seconds.json) and the next run
# orders by that.  Jobs without a record keep their order: the C suites and make's, then pytest's.
SECONDS_FILE = "seconds.json"


def system_files():
    """tests/*/test_*.py but those run in an environment of their own."""
    own = {"wasm/test_browser.py"}
    return tuple(sorted(f for f in (os.path.relpath(p, os.path.join(ROOT, "tests"))
                                    for p in glob.glob(os.path.join(ROOT, "tests", "*", "test_*.py"))) if f not in own))


class Run:
    """One pytest run: `python -m pytest ARGS FILES` (files under tests/, globs allowed); its suites'
    names end on suffix; stopped after timeout seconds (None: never)."""

    def __init__(self, tag, what, python, files, args, suffix="", env=None, timeout=None):
        self.tag, self.what, self.python, self.files, self.args = tag, what, python, files, args
        self.suffix, self.env, self.timeout = suffix, env or {}, timeout


def pytest_runs(tiers, plain, san):
    # "--bin=PATH", one word: pytest finds tests/conftest.py (which defines --bin) from the paths it
    # is given before it knows the option, and would take a separate PATH for one of them
    b = ["--bin=" + os.path.join(plain, "npzstream")]
    wasm = ["--wasm=" + os.path.join(plain, "wasm")]

    def venv(d):
        return os.path.join(ROOT, d, "bin", "python")
    runs = []
    if "test" in tiers:
        runs.append(Run("system", "Debian's Python and NumPy 1.24", PY, system_files(), b + ["-m", "not rest"]))
        runs.append(Run("pkg", ".venv-pkg (make python-env)", venv(".venv-pkg"), PKG_FILES, b, "@pkg"))
        # and the policy oracle with NumPy 2's reading of the arrays
        runs.append(Run("pkg-np2", ".venv-pkg-np2 (make python-env)", venv(".venv-pkg-np2"),
                        PKG_FILES + ("policy/test_oracle.py",), b, "@pkg-np2"))
    if "rest" in tiers:
        runs.append(Run("rest", "the tests marked rest", PY, system_files(), b + wasm + ["-m", "rest"]))
        runs.append(Run("asan", "the sanitizer build", PY, ASAN_SUITES,
                        ["--bin=" + os.path.join(san, "npzstream"), "--quick", "-m", "not rest"], "-asan"))
        readers, skipped = READERS.available()
        for line in skipped:
            print(line)
        for rd, path, info in readers:
            print("reader %s: %s (%s)" % (rd[0], rd[3], info))
            if rd[0] != READERS.DEFAULT:
                runs.append(Run("reader-" + rd[0], "the reader " + rd[0], path, MATRIX_FILES, b + ["-m", "not rest"],
                                "@" + rd[0], READERS.env_for(rd, {})))
        runs.append(Run("web", ".venv-web (make web-env)", venv(".venv-web"), ("web/pytest_*.py",), b))
        # the clusters: stopped after 15 minutes
        runs.append(Run("engines", ".venv-engines (make engines-env)", venv(".venv-engines"), ("engines/pytest_engines.py",),
                        b, timeout=900))
        # the scanner adapters against modelscan and picklescan from PyPI, on NumPy 2.x and 1.26; the
        # pre-commit hook under pre-commit (once: it installs an environment of its own)
        runs.append(Run("scanners", ".venv-scanners (make scanners-env)", venv(".venv-scanners"),
                        ("scanners/pytest_scanners.py", "scanners/pytest_precommit.py"), b, "@np2"))
        runs.append(Run("scanners-np1", ".venv-scanners-np1 (make scanners-env)", venv(".venv-scanners-np1"),
                        ("scanners/pytest_scanners.py",), b, "@np1"))
        runs.append(Run("browser", "build/venv-selenium (make test-wasm-browser)",
                        os.path.join(plain, "venv-selenium", "bin", "python"), ("wasm/test_browser.py",), b + wasm))
    return runs


def suite_name(rel, suffix):
    """DIR/test_X.py or DIR/pytest_X.py: DIR when X is DIR (or begins it), else DIR-X; then the suffix."""
    d, f = rel.split("/")[0], os.path.basename(rel)
    stem = re.sub(r"^(?:test|pytest)_", "", f[:-3])
    return (d if d.startswith(stem) else d + "-" + stem) + suffix


# ---- the C suites and make's: their last line ------------------------------------------------------

def run_c_suite(name, cmd, env, say):
    """[(suite, seconds, passed, failed, skipped, checks)] of a suite ending on `NAME: N passed, M
    failed`: one test, failed when a check failed, the exit status is not 0 or nothing was checked;
    what it printed that matters goes to say()."""
    say("== %s: %s" % (name, " ".join(cmd[:4]) + (" ..." if len(cmd) > 4 else "")))
    t0 = time.time()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
    dt = time.time() - t0
    out = (r.stdout or "") + (r.stderr or "")
    lines = [line for line in out.splitlines() if line.strip()]
    m = next((m for m in (LAST.match(line.strip()) for line in reversed(lines)) if m), None)
    if not m:
        say(out[-4000:])
        say("   %s: no result line, exit %d -> a failure" % (name, r.returncode))
        return [(name, dt, 0, 1, 0, 0)]
    p, f = int(m.group(2)), int(m.group(3))
    if p == 0 and f == 0:
        say(out[-2000:])
        say("   %s: 0 passed, 0 failed -> a failure (it tested nothing)" % name)
        return [(name, dt, 0, 1, 0, 0)]
    if f or r.returncode != 0:
        say("\n".join([line for line in lines if line.startswith(("FAIL", "ERROR", "==", "SUMMARY"))
                       or "runtime error" in line][:60]))
        if r.returncode != 0 and f == 0:
            say(out[-3000:])
    bad = 1 if f or r.returncode != 0 else 0
    say("   %s: %d checks, %d failed, exit %d" % (name, p + f, f, r.returncode))
    return [(name, dt, 1 - bad, bad, 0, p + f)]


def c_suites(tiers, a, files):
    """[[(name, command), ...]] of the C suites and make's: each list one job, its suites one after
    the other."""
    suites = []
    fuzz = os.path.exists(os.path.join(ROOT, "fuzz", "fuzz.mk"))
    if "test" in tiers:
        suites += [
            ("api", [os.path.join(a.plain, "test_api")] + files),
            # the vectors at every push size, and through the parallel helper
            ("vectors", [os.path.join(a.plain, "run_vectors"), "--par"]),
            ("policy-c", [os.path.join(a.plain, "test_policy")]),
            # the default decoder against zlib on hand-made deflate streams
            ("inflate-c", [os.path.join(a.plain, "test_fastinf")]),
            ("inflate-c-asan", [os.path.join(a.san, "test_fastinf")]),
            ("vlen-c", [os.path.join(a.plain, "test_vlen_api")]),
            ("inv-c", [os.path.join(a.plain, "test_inv")]),
            # one sanitizer pass: the API suite over every file under ASan+UBSan
            ("api-asan", [os.path.join(a.san, "test_api")] + files),
            ("policy-c-asan", [os.path.join(a.san, "test_policy")]),
            ("inv-c-asan", [os.path.join(a.san, "test_inv")]),
            # a library that cannot load libcrypto: every request for a hash refused
            ("policy-c-nocrypto", [os.path.join(a.plain, "nocrypto", "test_policy"), "--sha256-absent"]),
        ]
        if fuzz:
            suites.append(fuzz_smoke(SMOKE_SECONDS["test"]))
    if "rest" in tiers:
        suites += [
            ("vectors-asan", [os.path.join(a.san, "run_vectors"), "--par"]),
            ("vectors-par-tsan", [os.path.join(a.plain, "tsan", "run_vectors"), "--par-only"]),
            ("vlen-c-asan", [os.path.join(a.san, "test_vlen_api"), "--quick"]),
        ]
        clang_api = os.path.join(a.plain, "clang-san", "test_api")
        if os.path.exists(clang_api):
            suites.append(("api-clang-san", [clang_api] + files))
        else:
            print("api-clang-san skipped: %s not built (needs clang and libclang-rt)" % clang_api)
        if fuzz:
            # one job: both make the same replay harnesses first (build/fuzz-replay) where they are
            # not up to date, which two makes at once would both write
            suites.append([("regress", ["make", "-s", "regress"]), ("state-gate", ["make", "-s", "state-gate"])])
            suites.append(fuzz_smoke(SMOKE_SECONDS["rest"]))
    return [job if isinstance(job, list) else [job] for job in suites]


def fuzz_smoke(seconds):
    return ("fuzz-smoke-%ds" % seconds, ["make", "-s", "fuzz-smoke", "SMOKE_SECONDS=%d" % seconds])


# ---- pytest: once per environment, its JUnit XML read ------------------------------------------------

def junit_results(path, suffix):
    """{suite: {"seconds", "passed", "failed", "skipped", "checks", "problems": [...]}} from pytest's
    JUnit XML (xunit1: each test case names its file)."""
    out = {}
    for case in ET.parse(path).getroot().iter("testcase"):
        rel = case.get("file") or (case.get("name", "").replace(".", "/") + ".py")  # a module that did not import
        s = out.setdefault(suite_name(rel, suffix), dict(seconds=0.0, passed=0, failed=0, skipped=0, checks=0,
                                                         problems=[]))
        s["seconds"] += float(case.get("time") or 0)
        for prop in case.iter("property"):
            if prop.get("name") == "checks":
                s["checks"] += int(prop.get("value"))
        test = "%s::%s" % (rel, case.get("name"))
        bad = case.find("failure") if case.find("failure") is not None else case.find("error")
        if bad is not None:
            s["failed"] += 1
            s["problems"].append("FAIL %s: %s\n%s" % (test, bad.get("message", ""), (bad.text or "")[-3000:]))
        elif case.find("skipped") is not None:
            s["skipped"] += 1
            s["problems"].append("SKIPPED %s: %s" % (test, case.find("skipped").get("message", "")))
        else:
            s["passed"] += 1
    return out


def run_paths(run):
    """The modules of a run (its files, globs expanded), as paths."""
    return sorted({p for f in run.files for p in glob.glob(os.path.join(ROOT, "tests", f))})


def env_missing(run):
    """Why run's environment cannot run pytest, or None."""
    if not os.access(run.python, os.X_OK) or subprocess.run([run.python, "-c", "import pytest"],
                                                            capture_output=True).returncode:
        return "%s is not set up, or has no pytest" % run.what
    return None


def skipped_rows(run, why, say):
    """The rows of a run whose environment is not set up: its suites skipped (under CI, which sets
    up all, failed)."""
    say("== pytest-%s: skipped: %s" % (run.tag, why))
    ci = bool(os.environ.get("CI"))
    return [(suite_name(os.path.relpath(p, os.path.join(ROOT, "tests")), run.suffix), 0.0, 0, 1 if ci else 0,
             0 if ci else 1, 0) for p in run_paths(run)]


def run_pytest(run, path, logs, base_env, say):
    """(rows, failures, selected) of one module of a pytest run: rows [(suite, seconds, passed, failed,
    skipped, checks)] of its suites, failures the row of a pytest run that failed without saying
    where (or []), selected False when the run's -m left no test of the module (pytest's exit 5)."""
    rel = os.path.relpath(path, os.path.join(ROOT, "tests"))
    tag = "%s.%s" % (run.tag, suite_name(rel, ""))
    name = "pytest-%s %s" % (run.tag, rel)
    xml, log, base = (os.path.join(logs, tag + ext) for ext in (".xml", ".log", ".tmp"))
    for f in (xml, log):
        if os.path.exists(f):
            os.unlink(f)
    say("== %s: %s (its output: %s)" % (name, run.what, os.path.relpath(log, ROOT)))
    cmd = [run.python, "-m", "pytest", "-q", "--continue-on-collection-errors", "--junitxml", xml,
           "--basetemp", base] + run.args + [path]
    t0 = time.time()
    with open(log, "w") as lf:
        # its own process group: on a timeout pytest and whatever it started (a cluster) stop together
        proc = subprocess.Popen(cmd, cwd=ROOT, stdout=lf, stderr=subprocess.STDOUT, env=dict(base_env, **run.env),
                                start_new_session=True)
        try:
            rc = proc.wait(timeout=run.timeout)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            rc = proc.wait()
            say("   %s: stopped after %d seconds" % (name, run.timeout))
    wall = time.time() - t0
    shutil.rmtree(base, ignore_errors=True)
    results = junit_results(xml, run.suffix) if os.path.exists(xml) else {}
    if rc == 5 and not results:  # no test of this module is selected here (-m)
        say("   %s: no test selected (%s)" % (name, " ".join(run.args[-2:])))
        return [], [], False
    rows = []
    for suite, s in sorted(results.items()):
        fails, skips = s["failed"], s["skipped"]
        if os.environ.get("CI") and skips:  # CI installs every tool: a test that skips there has failed
            fails, skips = fails + skips, 0
        if s["passed"] + fails == 0 and not skips:
            fails = 1
        for p in s["problems"][:40]:
            if p.startswith("FAIL") or os.environ.get("CI"):
                say(p)
        say("   %s: %d passed, %d failed%s (%.1fs, %d checks)" % (
            suite, s["passed"], fails, ", %d skipped" % skips if skips else "", s["seconds"], s["checks"]))
        rows.append((suite, s["seconds"], s["passed"], fails, skips, s["checks"]))
    failures = []
    if rc not in (0, 1) or not results or (rc == 1 and not any(r[3] for r in rows)):
        with open(log) as lf:
            say(lf.read()[-6000:])
        say("   %s: pytest exit %d%s -> a failure" % (name, rc, "" if results else ", no results"))
        failures.append((name, 0.0, 0, 1, 0, 0))
    say("   %s: %.1fs in all, %.1fs of it outside the tests (start, collection)" % (
        name, wall, wall - sum(r[1] for r in rows)))
    return rows, failures, True


def test_files(tmp):
    """The files the C API suites read: corpus/peers, what tests/real/gen.py writes (under 4 MiB) and
    the hand-built bad inputs (split invariance and allocation failures on every one)."""
    files = sorted(glob.glob(os.path.join(ROOT, "corpus", "peers", "**", "*.np[yz]"), recursive=True))
    problems = 0
    r = subprocess.run([PY, os.path.join(ROOT, "tests", "real", "gen.py"), tmp], cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stdout[-2000:], r.stderr[-2000:])
        problems += 1
    files += sorted(f for f in glob.glob(os.path.join(tmp, "**", "*"), recursive=True)
                    if os.path.isfile(f) and os.path.getsize(f) < (4 << 20))
    bad = os.path.join(tmp, "bad")
    r = subprocess.run([PY, "-c", "import os,sys; sys.path.insert(0,'tests/bad'); from cases import cases\n"
                        "d=sys.argv[1]; os.makedirs(d)\n"
                        "for c in cases():\n"
                        "  open(os.path.join(d, c.name), 'wb').write(c.data)", bad],
                       cwd=ROOT, capture_output=True, text=True)
    if r.returncode != 0:
        print(r.stderr[-2000:])
        problems += 1
    else:
        files += sorted(glob.glob(os.path.join(bad, "*")))
    return files, problems


class Job:
    """One thing the pool runs: a C suite (or make's), or one module of a pytest run.  work(say)
    returns its result; key names it in the record of seconds; alone: nothing runs beside it."""

    def __init__(self, key, work, alone):
        self.key, self.work, self.alone = key, work, alone


def alone(name):
    """Whether the C suite or pytest module (a path under tests/) named runs alone (ALONE)."""
    return any(name == k or name.startswith(k + "-") for k in ALONE)


def run_jobs(jobs, n, seconds):
    """Runs jobs: first those that run alone, one at a time, then the others n at a time, the
    longest first (by seconds: a job without a record first of all); each job's output printed
    whole when it ends.  ({key: result}, {key: seconds})."""
    results, took = {}, {}

    def one(job):
        out = []
        t0 = time.time()
        res = job.work(out.append)
        return job, res, out, time.time() - t0

    def report(job, res, out, dt):
        print("\n".join(out), flush=True)
        results[job.key], took[job.key] = res, dt

    for job in (j for j in jobs if j.alone):
        report(*one(job))
    shared = sorted((j for j in jobs if not j.alone), key=lambda j: -seconds.get(j.key, float("inf")))
    with concurrent.futures.ThreadPoolExecutor(max(1, n)) as ex:
        for f in concurrent.futures.as_completed([ex.submit(one, j) for j in shared]):
            report(*f.result())
    return results, took


def load_seconds(path):
    try:
        with open(path) as f:
            return {k: float(v) for k, v in json.load(f).items()}
    except (OSError, ValueError, AttributeError):
        return {}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--plain", default="build")
    ap.add_argument("--san", default="build/san")
    ap.add_argument("--tier", choices=("test", "rest", "all"), default="test")
    ap.add_argument("--jobs", type=int, default=None,
                    help="suites at a time (default: the machine's cores, at most 2)")
    a = ap.parse_args()
    jobs_at_once = a.jobs if a.jobs else min(2, os.cpu_count() or 1)
    tiers = ("test", "rest") if a.tier == "all" else (a.tier,)
    rows = []
    t_all = time.time()
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=1:abort_on_error=0",
               UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1")
    logs = os.path.join(ROOT, a.plain, "test-logs")
    os.makedirs(logs, exist_ok=True)
    seconds_file = os.path.join(logs, SECONDS_FILE)
    with tempfile.TemporaryDirectory(prefix="npzs-test-") as tmp:
        files, problems = test_files(tmp)
        if problems:
            rows.append(("(the C suites' input files)", 0.0, 0, problems, 0, 0))
        # the jobs, and the table's order: the C suites and make's, then each pytest run's modules
        jobs, order = [], []
        for suites in c_suites(tiers, a, files):
            key = "+".join(name for name, _ in suites)
            def work(say, suites=suites):
                return [r for name, cmd in suites for r in run_c_suite(name, cmd, env, say)]
            jobs.append(Job(key, work, any(alone(name) for name, _ in suites)))
            order.append(("c", key))
        for run in pytest_runs(tiers, a.plain, a.san):
            why = env_missing(run)
            if why:
                order.append(("rows", skipped_rows(run, why, print)))
                continue
            keys = []
            for path in run_paths(run):
                rel = os.path.relpath(path, os.path.join(ROOT, "tests"))
                key = "%s:%s" % (run.tag, rel)
                jobs.append(Job(key, lambda say, run=run, path=path: run_pytest(run, path, logs, env, say), alone(rel)))
                keys.append(key)
            order.append(("pytest", run, keys))
        print("%d jobs, %d at a time (%d alone: %s)" % (
            len(jobs), jobs_at_once, sum(j.alone for j in jobs), ", ".join(j.key for j in jobs if j.alone)), flush=True)
        results, took = run_jobs(jobs, jobs_at_once, load_seconds(seconds_file))
    with open(seconds_file, "w") as f:
        json.dump(dict(load_seconds(seconds_file), **{k: round(v, 1) for k, v in took.items()}), f, indent=1, sort_keys=True)
    for what in order:
        if what[0] == "c":
            rows += results[what[1]]
        elif what[0] == "rows":
            rows += what[1]
        else:
            run, got = what[1], [results[k] for k in what[2]]
            # a run's suites in the order of their names, then its failures without a suite
            rows += sorted((r for res in got for r in res[0]), key=lambda r: r[0]) + [r for res in got for r in res[1]]
            if not any(res[2] for res in got):
                print("   pytest-%s: no test selected in any module -> a failure" % run.tag)
                rows.append(("pytest-" + run.tag, 0.0, 0, 1, 0, 0))
    print("\n%-30s %9s %8s %7s %8s %9s" % ("suite (%s)" % "+".join(tiers), "seconds", "passed", "failed", "skipped",
                                           "checks"))
    for name, dt, p, f, k, n in rows:
        print("%-30s %9.1f %8d %7d %8s %9d" % (name, dt, p, f, k or "", n))
    total = [sum(r[i] for r in rows) for i in (2, 3, 4, 5)]
    print("%-30s %9.1f %8d %7d %8s %9d" % ("total (suites and their setup)", time.time() - t_all, total[0], total[1],
                                           total[2] or "", total[3]))
    print("%d passed, %d failed" % (total[0], total[1]) + (", %d skipped" % total[2] if total[2] else ""))
    return 1 if total[1] else 0


if __name__ == "__main__":
    sys.exit(main())
