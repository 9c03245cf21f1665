"""The demo page (build/wasm/demo.html) in a real browser: Debian's headless Chromium driven by
Selenium, opened as file:// and from a local server (127.0.0.1).  Files are given to its file
input as a user picks them; the verdict, the member table, the hint of a rejection and the
report must be what `build/npzstream check --json FILE` says, the progress bar must move while a
large file is checked and end at its size, and the page must keep running meanwhile (the check is
in a Web Worker).  Screenshots are kept in build/wasm-test/.  make test-all (marked rest) runs it
in build/venv-selenium (make test-wasm-browser: Selenium and pytest from PyPI), with --wasm
build/wasm.  Skipped without Chromium, its driver, Selenium or emscripten.
"""
import functools
import http.server
import io
import json
import os
import shutil
import subprocess
import sys
import threading
import time
import zipfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "names"))
from common import ok  # noqa: E402
import names as N  # noqa: E402

pytestmark = pytest.mark.rest
CHROMIUM, DRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
SHOTS = os.path.join(ROOT, "build", "wasm-test")


def npy(header_shape, data):
    d = "{'descr': '<f4', 'fortran_order': False, 'shape': %s, }" % header_shape
    h = (d + " " * (118 - len(d)) + "\n").encode()
    return b"\x93NUMPY\x01\x00" + len(h).to_bytes(2, "little") + h + data


def inputs(tmp):
    """(file name, bytes, policy or None): accepted, rejected, a policy's rejection, a large one."""
    good = io.BytesIO()
    with zipfile.ZipFile(good, "w") as z:
        z.writestr("w.npy", npy("(4, 3)", bytes(48)))
        z.writestr("notes.txt", b"hello")
    odd = io.BytesIO()
    with zipfile.ZipFile(odd, "w") as z:
        for name in ("x\u202ey\u2066z.npy", "q\u0085\u2028r\".npy", "\u00e9" * 40 + ".npy"):
            z.writestr(name, npy("(2,)", bytes(8)))
    files = [("good.npz", good.getvalue(), None),
             ("cut.npz", good.getvalue()[:-10], None),
             ("policy.npz", good.getvalue(), '{"members": {"w": {"dtype": ["float64"]}}}'),
             # names that would reorder or break the page's text: shown escaped, as the command line prints them
             ("names.npz", odd.getvalue(), None), ("names-policy.npz", odd.getvalue(), '{"allow_other_members": false}'),
             # 48 MiB: the progress bar moves while it is read
             ("large.npy", npy("(%d,)" % (12 << 20), bytes(48 << 20)), None)]
    out = []
    for name, data, policy in files:
        p = os.path.join(tmp, name)
        with open(p, "wb") as f:
            f.write(data)
        out.append((p, len(data), policy))
    return out


def native(binary, path, policy, tmp):
    args = [binary, "check", "--json"]
    if policy:
        pf = os.path.join(tmp, "policy.json")
        with open(pf, "w") as f:
            f.write(policy)
        args += ["--policy", pf]
    r = subprocess.run(args + [path], capture_output=True, text=True)
    return r.stdout


WATCH = """
window.__ticks = 0; setInterval(() => window.__ticks++, 20);
window.__seen = [];
new MutationObserver(() => window.__seen.push(Number(document.getElementById('progress').value)))
  .observe(document.getElementById('progress'), {attributes: true});
"""


def check_page(driver, url, files, binary, tmp, shots, tag):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait
    driver.get(url)
    ok(driver.title.startswith("npzstream"), "%s: the page loads (%s)" % (tag, driver.title))
    driver.execute_script(WATCH)
    for path, size, policy in files:
        name = os.path.basename(path)
        driver.execute_script("document.getElementById('policy').value = arguments[0];"
                              "document.getElementById('verdict').className = 'waiting';"
                              "window.__seen = []; window.__ticks = 0;", policy or "")
        t0 = time.time()
        driver.find_element(By.ID, "file").send_keys(path)
        WebDriverWait(driver, 120).until(
            lambda d: d.execute_script("return ['ok', 'rejected'].includes(document.getElementById('verdict').className)"))
        took = time.time() - t0
        want = native(binary, path, policy, tmp)
        exp = json.loads(want)
        state = driver.execute_script("""
            const $ = (id) => document.getElementById(id);
            return {cls: $('verdict').className, verdict: $('verdict').textContent, json: $('json').textContent,
                    rows: $('members').tBodies[0].rows.length, hint: $('hint').hidden ? null : $('hint').textContent,
                    value: Number($('progress').value), max: Number($('progress').max), text: $('progress-text').textContent,
                    upload: !$('upload').disabled, seen: window.__seen, ticks: window.__ticks,
                    names: Array.from($('members').tBodies[0].rows).map((r) => r.cells[1].textContent)};""")
        ok(state["json"] == want, "%s %s: the page's report is the native check --json" % (tag, name),
           "%r vs %r" % (state["json"][:300], want[:300]))
        ok(state["cls"] == ("ok" if exp["ok"] else "rejected") and state["upload"] == exp["ok"],
           "%s %s: verdict %s, upload %s" % (tag, name, state["cls"], "allowed" if state["upload"] else "held back"),
           state["verdict"])
        ok(state["rows"] == len(exp["members"]), "%s %s: %d rows in the member table" % (tag, name, state["rows"]))
        shown = ["(the .npy)" if m["name"] is None else N.text(m["name"]) for m in exp["members"]]
        ok(state["names"] == shown and not N.raw_hidden(state["verdict"] + "".join(state["names"])),
           "%s %s: the names as text, nothing raw" % (tag, name), "%r vs %r; %r" % (state["names"], shown, state["verdict"]))
        if not exp["ok"]:
            hint = exp["error"].get("hint")
            ok(hint and state["hint"] == "What to do: " + hint and exp["error"]["rule"] in state["verdict"],
               "%s %s: the rule and what to do are shown" % (tag, name), "%r %r" % (state["hint"], state["verdict"]))
        else:
            ok(state["value"] == size == state["max"], "%s %s: the progress bar ends at the size (%d of %d)"
               % (tag, name, state["value"], state["max"]), state["text"])
        if name == "large.npy":
            moving = sorted(set(v for v in state["seen"] if 0 < v < size))
            ok(len(moving) >= 2, "%s %s: the bar moved while checking (%d steps in %.1fs)" % (tag, name, len(moving), took))
            ok(state["ticks"] >= max(3, took * 10), "%s %s: the page kept running (%d timer ticks in %.1fs)"
               % (tag, name, state["ticks"], took))
        shot = os.path.join(shots, "demo-%s-%s.png" % (tag, name.split(".")[0]))
        driver.save_screenshot(shot)
        ok(os.path.getsize(shot) > 1000, "%s %s: screenshot %s" % (tag, name, os.path.relpath(shot, ROOT)))


class Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a):
        pass


def serve(directory):
    handler = functools.partial(Quiet, directory=directory)
    srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv


@pytest.fixture(scope="module")
def demo(wasm_dir):
    if not (os.path.exists(CHROMIUM) and os.path.exists(DRIVER)):
        pytest.skip("no %s or %s (apt-get install chromium chromium-driver)" % (CHROMIUM, DRIVER))
    pytest.importorskip("selenium", reason="no Selenium (make test-wasm-browser installs it into build/venv-selenium)")
    demo = os.path.join(wasm_dir, "demo.html")
    if not os.path.exists(demo):
        if not shutil.which("emcc"):
            pytest.skip("no emscripten: make wasm cannot build %s" % demo)
        pytest.fail("%s is missing (make wasm)" % demo)
    return demo


@pytest.fixture(scope="module")
def driver(demo):
    """Headless Chromium, quit after the module's tests."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    opts = webdriver.ChromeOptions()
    opts.binary_location = CHROMIUM
    for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--window-size=1100,900"):
        opts.add_argument(arg)
    os.makedirs(SHOTS, exist_ok=True)
    d = webdriver.Chrome(service=Service(DRIVER), options=opts)
    yield d
    d.quit()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    return inputs(str(tmp_path_factory.mktemp("browser")))


def test_page_from_file(driver, demo, files, binary, tmp):
    check_page(driver, "file://" + demo, files, binary, tmp, SHOTS, "file")


def test_page_from_a_server(driver, demo, files, binary, tmp):
    srv = serve(os.path.dirname(demo))
    try:
        check_page(driver, "http://127.0.0.1:%d/demo.html" % srv.server_address[1], files, binary, tmp, SHOTS, "http")
    finally:
        srv.shutdown()


def test_no_console_errors(driver):
    """After the pages above: nothing SEVERE in the browser's console."""
    errors = [entry for entry in driver.get_log("browser") if entry.get("level") == "SEVERE"]
    assert not errors, str(errors[:3])
