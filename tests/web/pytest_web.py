"""The web recipes (examples/python/web_*.py), each started on 127.0.0.1 by its own server
(uvicorn, aiohttp's runner, Django's development server, werkzeug) from .venv-web; uploads sent
by httpx: chunked transfer encoding (Django: multipart with a Content-Length, which its WSGI
development server needs).  Checked: the status, the error body (code, rule, member), that a bad
upload is refused before it has been read whole (the server says how much it had read; for the
servers that close the connection, the client stops sending too), that a spooled upload appears
only when accepted, and that the server's peak memory stays flat for a 200 MB upload."""
import io
import os
import socket
import subprocess
import sys
import time

import httpx
import numpy as np
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "bench"))
from web_load import free_port, status_kib  # noqa: E402  (bench/web_load.py)

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
EX = os.path.join(ROOT, "examples", "python")
FRAMEWORKS = ["fastapi", "aiohttp", "django", "flask"]
# what each app imports (a framework that could not be installed: its tests skip, saying so)
NEEDS = {"fastapi": ("fastapi", "uvicorn"), "aiohttp": ("aiohttp",), "django": ("django",), "flask": ("flask",)}
BIG_MB = 200
FLAT_MIB = 32  # the server's VmHWM may grow this much for a 200 MB upload


def hwm_kib(pid):
    return status_kib(pid, "VmHWM")


class Server:
    """An example, started as its docstring says: --port, --upload-dir and --memory-budget, the
    same for every framework (no environment variable)."""

    def __init__(self, name, tmp, budget="512Mi"):
        self.name = name
        self.dir = os.path.join(tmp, name + "-uploads")
        os.makedirs(self.dir)
        port = free_port()
        script = os.path.join(EX, "web_%s.py" % name)
        cmd = [sys.executable, script, "--port", str(port), "--upload-dir", self.dir, "--memory-budget", budget]
        self.log = open(os.path.join(tmp, name + ".log"), "wb")
        env = {k: v for k, v in os.environ.items() if k not in ("UPLOAD_DIR", "NPZSTREAM_BUDGET")}
        self.p = subprocess.Popen(cmd, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.url = "http://127.0.0.1:%d" % port
        t0 = time.time()
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if self.p.poll() is not None or time.time() - t0 > 60:
                    raise RuntimeError("%s did not start: %s" % (name, open(self.log.name).read()[-2000:]))
                time.sleep(0.1)

    def close(self):
        self.p.terminate()
        try:
            self.p.wait(10)
        except subprocess.TimeoutExpired:
            self.p.kill()
            self.p.wait()
        self.log.close()


def needs(name):
    for mod in NEEDS[name]:
        pytest.importorskip(mod, reason="%s: %s is not installed in .venv-web (make web-env could not "
                            "install it from PyPI)" % (name, mod))


@pytest.fixture(scope="module", params=FRAMEWORKS)
def server(request, tmp_path_factory):
    needs(request.param)
    s = Server(request.param, str(tmp_path_factory.mktemp("web")))
    yield s
    s.close()


@pytest.mark.parametrize("name", FRAMEWORKS)
def test_options_are_the_same(name, tmp_path_factory):
    """Every example takes --port, --upload-dir and --memory-budget: a 20 MiB array does not fit a
    16 MiB budget (413, LIMIT.budget.size, its numbers), a small one does and is spooled into the
    directory named."""
    needs(name)
    s = Server(name, str(tmp_path_factory.mktemp("opts")), budget="16Mi")
    try:
        r = post(s, "/load", npz(a=np.zeros(5 << 20, "<f4")))
        e = r.json()
        assert r.status_code == 413 and e["rule"] == "LIMIT.budget.size", (r.status_code, e)
        assert e["limit"] == {"name": "budget", "value": 16 << 20, "needed": 20 << 20}, e["limit"]
        r = post(s, "/spool/small.npz", npz(a=np.arange(10)))
        assert r.status_code == 200 and os.listdir(s.dir) == ["small.npz"], (r.text, os.listdir(s.dir))
    finally:
        s.close()


def npz(**arrays):
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


GOOD = npz(w=np.arange(300000, dtype="<f4").reshape(600, 500), labels=np.arange(10, dtype="<i8"))


def corrupt_header(data):
    """The first .npy header's dict broken: bad_header in member 0, a few hundred bytes in."""
    i = data.index(b"'descr'")
    return data[:i] + b"'dascr'" + data[i + 7:]


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    p = str(tmp_path_factory.mktemp("big") / "big.npz")
    np.savez(p, a=np.zeros(BIG_MB * 10**6 // 8, "<f8"))
    bad = p[:-4] + "-bad.npz"
    with open(p, "rb") as f, open(bad, "wb") as g:
        g.write(corrupt_header(f.read(4096)))
        while True:
            b = f.read(1 << 20)
            if not b:
                break
            g.write(b)
    return p, bad


def pieces(data, n=1 << 16, sent=None):
    for i in range(0, len(data), n):
        if sent is not None:
            sent[0] += min(n, len(data) - i)
        yield data[i:i + n]


def file_pieces(path, sent=None, n=1 << 20):
    with open(path, "rb") as f:
        while True:
            b = f.read(n)
            if not b:
                return
            if sent is not None:
                sent[0] += len(b)
            yield b


def post(server, path, content, name="x.npz", timeout=120):
    """POST an upload: bytes, an iterator of pieces, or (name, path) of a file; chunked (Django:
    multipart with a Content-Length, which its WSGI development server needs)."""
    url = server.url + path
    with httpx.Client(timeout=timeout) as c:
        if server.name == "django":
            if isinstance(content, tuple):
                with open(content[1], "rb") as f:
                    return c.post(url, files={"file": (name, f, "application/octet-stream")})
            return c.post(url, files={"file": (name, bytes(content), "application/octet-stream")})
        if isinstance(content, tuple):
            content = file_pieces(content[1], sent=content[0])
        return c.post(url, content=content if not isinstance(content, (bytes, bytearray)) else pieces(content))


def test_ping(server):
    """Every example serves GET /ping (README.md's table of examples)."""
    with httpx.Client(timeout=30) as c:
        r = c.get(server.url + "/ping")
    assert r.status_code == 200 and r.json() == {"ok": True}, (r.status_code, r.text)


def test_load_good(server):
    r = post(server, "/load", GOOD)
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["ok"] and body["members"] == {"w": {"dtype": "<f4", "shape": [600, 500]},
                                              "labels": {"dtype": "<i8", "shape": [10]}}


@pytest.mark.parametrize("case", ["header", "truncated", "crc", "pickle"])
def test_load_bad(server, case):
    if case == "header":
        data, code, member = corrupt_header(GOOD), "bad_header", 0
    elif case == "truncated":
        data, code, member = GOOD[:-10], "truncated", None
    elif case == "crc":
        i = GOOD.index(np.arange(300000, dtype="<f4").tobytes()[40000:40016])
        data = GOOD[:i] + bytes([GOOD[i] ^ 1]) + GOOD[i + 1:]
        code, member = "crc_mismatch", 0
    else:
        b = io.BytesIO()
        np.savez(b, ok=np.arange(3), bad=np.array([1, "x"], dtype=object))
        data, code, member = b.getvalue(), "pickle", 1
    r = post(server, "/load", data)
    assert r.status_code == 400, r.text
    e = r.json()
    assert e["ok"] is False and e["code"] == code and e["rule"] and e["message"]
    if member is not None:
        assert e["member"] == member
    if server.name == "django":
        r = post(server, "/load-chunks", data)  # UploadedFile.chunks(): the same verdict
        assert r.status_code == 400 and r.json()["code"] == code


def test_load_policy_and_limit_rules(server):
    b = io.BytesIO()
    np.save(b, np.zeros(300 << 20 >> 3))  # declares 300 MiB: over the example's MAX_BYTES
    head = b.getvalue()[:4096]
    r = post(server, "/load", head)
    assert r.status_code == 413, r.text  # a limit: 413, with its numbers
    e = r.json()
    assert e["code"] == "limit" and e["rule"] == "LIMIT.max_bytes" and e["member"] == 0
    assert e["limit"] == {"name": "max_bytes", "value": 256 << 20, "needed": 300 << 20}, e


def test_bad_upload_is_refused_before_it_is_read_whole(server, big):
    total = os.path.getsize(big[1])
    sent = [0]
    t0 = time.time()
    try:
        r = post(server, "/load", (sent, big[1]))
    except httpx.TransportError as ex:  # the server closed before the client could read the answer
        pytest.fail("%s: no response to a rejected upload: %r (sent %d)" % (server.name, ex, sent[0]))
    assert r.status_code == 400, r.text
    e = r.json()
    assert e["code"] == "bad_header" and e["member"] == 0 and e["rule"]
    assert e["received"] < total // 4, (e["received"], total)  # the server stopped reading
    print("%s: refused after the server read %d of %d bytes; the client sent %s (%.1fs)"
          % (server.name, e["received"], total, sent[0] if server.name != "django" else "(multipart)",
             time.time() - t0))


def test_spool_good_and_bad(server):
    r = post(server, "/spool/good.npz", GOOD)
    assert r.status_code == 200, r.text
    assert r.json()["ok"] and r.json()["bytes"] == len(GOOD)
    assert open(os.path.join(server.dir, "good.npz"), "rb").read() == GOOD
    for data, code in ((corrupt_header(GOOD), "bad_header"), (GOOD[:-10], "truncated")):
        r = post(server, "/spool/bad.npz", data)
        assert r.status_code == 400 and r.json()["code"] == code
    time.sleep(0.2)
    assert sorted(os.listdir(server.dir)) == ["good.npz"]  # no temporary file left, no bad.npz
    r = post(server, "/spool/..hidden", GOOD)
    assert r.status_code == 400 and r.json()["rule"] == "UPLOAD.name.dot", r.text


def test_spool_200mb_memory_stays_flat(server, big):
    total = os.path.getsize(big[0])
    before = hwm_kib(server.p.pid)
    t0 = time.time()
    r = post(server, "/spool/big.npz", ([0], big[0]))
    dt = time.time() - t0
    assert r.status_code == 200, r.text
    assert r.json()["bytes"] == total
    grew = hwm_kib(server.p.pid) - before
    assert os.path.getsize(os.path.join(server.dir, "big.npz")) == total
    print("%s: %d MB spooled in %.1fs, server peak RSS grew %d KiB" % (server.name, total // 10**6, dt, grew))
    assert grew < FLAT_MIB * 1024, "%s: the server's peak RSS grew %d KiB for a %d MB upload" % (server.name, grew,
                                                                                               total // 10**6)
    os.unlink(os.path.join(server.dir, "big.npz"))
    r = post(server, "/spool/big.npz", ([0], big[1]))
    assert r.status_code == 400 and r.json()["received"] < total // 4
    assert not os.path.exists(os.path.join(server.dir, "big.npz"))
