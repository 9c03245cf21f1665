"""The upload servers under concurrency (issue 41's load test; bench/web_load.py does the work and
gives the numbers): the FastAPI and the aiohttp example, each on 127.0.0.1 with a 512 MiB budget,
sent 32 concurrent 200 KB uploads that inflate to 200 MB plus good and bad files (raw POST, PUT,
multipart) while another process pings GET /ping every 10 ms.

Checked: every good upload accepted or told to retry (503 LIMIT.budget.full), every bad one
refused with its rule; the server's peak RSS within the budget + 64 MiB; no traceback in its log,
no temporary file left; /ping's p99 within 100 ms (200 ms when the load average is over the CPU
count): a stall, what this guards against, was 1,360 ms; every request and the whole run bounded in
time; loopback only.  The 20 ms p99 target is a benchmark, not this test's bound: bench/web_load.py
--strict on an idle machine, its numbers in bench/README.md."""
import os
import shutil
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
import web_load  # noqa: E402

NEEDS = {"fastapi": ("fastapi", "uvicorn", "python_multipart"), "aiohttp": ("aiohttp", "python_multipart")}
STALL_P99_MS = 100  # a stall, not the 20 ms target (bench/web_load.py --strict)


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    if not shutil.which("curl"):
        pytest.skip("curl is not installed (apt-get install curl)")
    return web_load.make_files(str(tmp_path_factory.mktemp("files")))


@pytest.mark.parametrize("framework", ["fastapi", "aiohttp"])
def test_32_uploads_under_one_budget(framework, files, tmp_path_factory):
    for mod in NEEDS[framework]:
        pytest.importorskip(mod, reason="%s: %s is not installed in .venv-web (make web-env)" % (framework, mod))
    busy = os.getloadavg()[0] >= (os.cpu_count() or 1)
    res = web_load.run(framework, sys.executable, files, str(tmp_path_factory.mktemp("load")), "512Mi", 32)
    assert res["bombs"] == 32 and sum(res["verdicts"].values()) == res["uploads"] > 32, res["verdicts"]
    problems = web_load.problems(res, strict=False)
    assert not problems, (problems, res["failures"][:5])
    assert res["verdicts"].get("accepted", 0) >= 10 and res["verdicts"].get("refused", 0) >= 10, res["verdicts"]
    assert res["ping"]["n"] >= 100 and res["ping"]["errors"] == 0, res["ping"]
    bound = STALL_P99_MS * (2 if busy else 1)
    assert res["ping"]["p99_ms"] <= bound, "/ping p99 %.1f ms over %d (machine %s)" % (
        res["ping"]["p99_ms"], bound, "busy" if busy else "idle")
    assert res["wall_s"] < 300, res["wall_s"]
