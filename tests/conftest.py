"""What every Python suite shares under pytest: its options, its fixtures and its soft checks
(tests/README.md says how to write a suite; tests/run_all.py runs them all).

Options (the defaults suit a run from the repository's root):
  --bin PATH   the command line under test (build/npzstream); its folder is its build's, with the
               build's other programs (build/san/npzstream: the sanitizer build's, build/san/examples)
  --quick      the sanitizer pass (make test-all runs the suites that drive the command line's own
               code under build/san/npzstream): the tests marked `slow` are left out, and a test may
               try fewer cases where it says so
  --wasm DIR   the WebAssembly build (make wasm): tests/wasm
  --seed S     the seed of a seeded suite (each has its own default, and prints the one it used)
  --strict-known  tests/differential: the open findings recorded in regress/ fail too
  --update-golden, --update-rules: rewrite tests/cli/golden, tests/bad/rules.tsv from the binary
Markers: `slow` (not in the --quick pass), `rest` (make test-all only: run with -m rest).
Soft checks: common.ok(cond, what, detail) records one check of the running test and returns
cond; a test with a failed check fails at its end, listing every failed one; the number of checks
is the test's JUnit property "checks" (run_all adds them up).  A test module that collects no test
fails: an old-style script (a main() and a tally) is not a suite.
"""
import os

import pytest

import common

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def pytest_addoption(parser):
    g = parser.getgroup("npzstream")
    g.addoption("--bin", default=os.path.join(ROOT, "build", "npzstream"), help="the npzstream command under test")
    g.addoption("--quick", action="store_true", help="the sanitizer pass: leave out the tests marked slow")
    g.addoption("--wasm", default=os.path.join(ROOT, "build", "wasm"), help="the WebAssembly build (make wasm)")
    g.addoption("--seed", default=None, help="the seed of a seeded suite (each has its default)")
    g.addoption("--strict-known", action="store_true", help="tests/differential: the open findings of regress/ fail too")
    g.addoption("--update-golden", action="store_true", help="rewrite tests/cli/golden from --bin")
    g.addoption("--update-rules", action="store_true", help="rewrite tests/bad/rules.tsv from --bin")


def pytest_configure(config):
    config.addinivalue_line("markers", "slow: left out of the --quick (sanitizer) pass")
    config.addinivalue_line("markers", "rest: make test-all's only (tests/run_all.py --tier rest runs -m rest)")
    # the command line for what runs in other processes (the package suites compare with it)
    os.environ["NPZSTREAM_BIN"] = os.path.abspath(config.getoption("--bin"))


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--quick"):
        return
    keep = [i for i in items if i.get_closest_marker("slow") is None]
    if len(keep) != len(items):
        config.hook.pytest_deselected(items=[i for i in items if i.get_closest_marker("slow") is not None])
        items[:] = keep


@pytest.hookimpl(tryfirst=True)
def pytest_collectreport(report):
    """A module that collects no test at all (no test function, or every one of them hidden from
    pytest) tests nothing: a collection error, not a quiet pass."""
    path = report.nodeid.split("::")[0]
    if report.passed and "::" not in report.nodeid and path.endswith(".py") and not report.result:
        report.outcome = "failed"
        report.longrepr = "%s: no test collected (a script with a main() and its own tally? tests/README.md)" % path


# ---- fixtures -----------------------------------------------------------------------------------

@pytest.fixture(scope="session")
def binary(pytestconfig):
    """The command line under test, an absolute path; a test that needs it fails where it is not built."""
    path = os.path.abspath(pytestconfig.getoption("--bin"))
    if not os.access(path, os.X_OK):
        pytest.fail("%s is not an executable (make)" % path, pytrace=False)
    return path


@pytest.fixture(scope="session")
def bindir(binary):
    """The folder of the build under test (build/ or build/san/)."""
    return os.path.dirname(binary)


@pytest.fixture(scope="session")
def sanitized(bindir):
    """True for the sanitizer build (build/san/npzstream)."""
    return os.path.basename(bindir) == "san"


@pytest.fixture(scope="session")
def quick(pytestconfig):
    return bool(pytestconfig.getoption("--quick"))


@pytest.fixture(scope="session")
def wasm_dir(pytestconfig):
    return os.path.abspath(pytestconfig.getoption("--wasm"))


@pytest.fixture(scope="session")
def seed(pytestconfig):
    """The --seed given, or None: the suite's default."""
    return pytestconfig.getoption("--seed")


@pytest.fixture()
def tmp(tmp_path):
    """A fresh directory of the test's own, as a str (pytest's tmp_path)."""
    return str(tmp_path)


@pytest.fixture(scope="session")
def reader():
    """The reference reader np.load runs as (tests/readers.py; run_all sets NPZS_READER)."""
    return os.environ.get("NPZS_READER", "np1.24")


# ---- soft checks (common.ok) ----------------------------------------------------------------------

@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_setup(item):
    item._npzs_checks = common.begin_checks(item.nodeid)
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    checks = getattr(item, "_npzs_checks", None)
    if checks is None:
        return
    if call.when == "teardown":
        common.end_checks(checks)
    if call.when != "call":
        return
    rep = outcome.get_result()
    if checks.count:
        item.user_properties.append(("checks", checks.count))  # junitxml writes the teardown report's
    if checks.failures:
        text = "%d of %d checks failed:\n%s" % (len(checks.failures), checks.count, "\n".join(checks.failures))
        if rep.passed:
            rep.outcome = "failed"
            rep.longrepr = text
        else:
            rep.sections.append(("failed checks", text))
