"""The upload helpers npzstream.starlette and npzstream.aiohttp (issue 41), through the FastAPI and
aiohttp examples, each a real server on 127.0.0.1 (started by bench/web_load.py's Server, with
--memory-budget) driven by real clients: curl (-F, -T, --data-binary), httpx (chunked bodies) and
raw sockets (a browser's FormData sent in small pieces, paths no client library would send, a
client that goes away mid-upload).

Checked: every way a file arrives gives the arrays np.load gives (the server's summary); every
unsafe spool name is refused (UPLOAD.name.*) and writes nothing; an existing file is kept (409);
a limit is 413 with its numbers, and the hint speaks to the client; a client that disconnects at
any point leaves no file, no traceback and at most one log line; the log holds no traceback."""
import io
import json
import os
import random
import socket
import subprocess
import sys
import time
import urllib.parse

import httpx
import numpy as np
import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "bench"))
sys.path.insert(0, os.path.join(ROOT, "tests"))
import web_load  # noqa: E402  (bench/web_load.py: the servers, curl, the files)
from common import ok  # noqa: E402

FRAMEWORKS = ["fastapi", "aiohttp"]
NEEDS = {"fastapi": ("fastapi", "uvicorn", "python_multipart"), "aiohttp": ("aiohttp", "python_multipart")}


def npz(compress=False, **arrays):
    b = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(b, **arrays)
    return b.getvalue()


W = np.arange(6000, dtype="<f4").reshape(60, 100)
L = np.arange(10, dtype="<i8")
GOOD = npz(w=W, labels=L)
GOOD_C = npz(True, w=W, labels=L)
SUMMARY = {"w": {"dtype": "<f4", "shape": [60, 100]}, "labels": {"dtype": "<i8", "shape": [10]}}


def bad_header(data):
    i = data.index(b"'descr'")
    return data[:i] + b"'dascr'" + data[i + 7:]


def start(framework, tmp_path_factory, budget):
    for mod in NEEDS[framework]:
        pytest.importorskip(mod, reason="%s: %s is not installed in .venv-web (make web-env)" % (framework, mod))
    return web_load.Server(framework, sys.executable, str(tmp_path_factory.mktemp("helpers")), budget)


@pytest.fixture(scope="module", params=FRAMEWORKS)
def server(request, tmp_path_factory):
    s = start(request.param, tmp_path_factory, "512Mi")
    yield s
    s.close()


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("files")
    out = {}
    for name, data in (("good.npz", GOOD), ("good_c.npz", GOOD_C), ("bad.npz", bad_header(GOOD))):
        out[name] = str(d / name)
        with open(out[name], "wb") as f:
            f.write(data)
    return out


def raw(server, method, path, body=b"", headers=(), pieces=None, timeout=60):
    """One request on a socket of our own: the path exactly as given (no client normalizes it);
    the body in pieces of the given size (None: at once).  Returns (status, JSON body or None)."""
    s = socket.create_connection(("127.0.0.1", server.port), timeout=timeout)
    try:
        head = "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: %d\r\nConnection: close\r\n" % (
            method, path, len(body))
        head += "".join("%s: %s\r\n" % h for h in headers) + "\r\n"
        s.sendall(head.encode("latin-1"))
        step = pieces or max(1, len(body))
        try:
            for i in range(0, len(body), step):
                s.sendall(body[i:i + step])
        except OSError:
            pass  # the server answered before the whole body and closed: its answer is read below
        got = b""
        while True:
            try:
                b = s.recv(65536)
            except ConnectionResetError:
                break
            if not b:
                break
            got += b
    finally:
        s.close()
    status = int(got.split(b" ", 2)[1])
    text = got.partition(b"\r\n\r\n")[2]
    try:
        return status, json.loads(text)
    except ValueError:
        return status, None


def form_body(parts, boundary):
    """multipart/form-data as a browser's FormData sends it: parts (name, filename or None, bytes)."""
    out = b""
    for name, filename, data in parts:
        out += b"--" + boundary + b"\r\n"
        if filename is None:
            out += b'Content-Disposition: form-data; name="%s"\r\n\r\n' % name.encode()
        else:
            out += b'Content-Disposition: form-data; name="%s"; filename="%s"\r\n' % (name.encode(), filename.encode())
            out += b"Content-Type: application/octet-stream\r\n\r\n"
        out += data + b"\r\n"
    return out + b"--" + boundary + b"--\r\n"


BROWSER_BOUNDARY = b"----WebKitFormBoundary7MA4YWxkTrZu0gW"


# ---- every way a file arrives ---------------------------------------------------------------------

@pytest.mark.parametrize("how", ["raw", "put", "form"])
@pytest.mark.parametrize("name", ["good.npz", "good_c.npz"])
def test_curl(server, files, how, name):
    status, body, _, err = web_load.curl(server.url + "/load", files[name], how)
    assert status == 200 and body["ok"] and body["members"] == SUMMARY, (status, body, err)


def test_chunked_post_and_put(server):
    def gen(data, n=1000):
        for i in range(0, len(data), n):
            yield data[i:i + n]
    with httpx.Client(timeout=60) as c:
        for method in ("POST", "PUT"):
            r = c.request(method, server.url + "/load", content=gen(GOOD_C))
            assert r.request.headers.get("transfer-encoding") == "chunked"
            assert r.status_code == 200 and r.json()["members"] == SUMMARY, (method, r.text)


@pytest.mark.parametrize("pieces", [None, 7, 1500])
def test_browser_formdata(server, pieces):
    """Fields before and after the file, a WebKit boundary, sent whole or in 7-byte pieces (the
    boundary then falls across every piece)."""
    body = form_body([("note", None, b"weights of run 12"), ("file", "w.npz", GOOD_C), ("after", None, b"x" * 100)],
                     BROWSER_BOUNDARY)
    ct = ("Content-Type", "multipart/form-data; boundary=" + BROWSER_BOUNDARY.decode())
    status, e = raw(server, "POST", "/load", body, [ct], pieces)
    assert status == 200 and e["members"] == SUMMARY, (status, e)
    status, e = raw(server, "PUT", "/spool/form-%s.npz" % pieces, body, [ct], pieces)
    assert status == 200, (status, e)
    assert open(os.path.join(server.dir, "form-%s.npz" % pieces), "rb").read() == GOOD_C


MULTIPART_REFUSALS = {
    "no file field": ([("note", None, b"x")], 400, "no_file", "UPLOAD.multipart.no-file"),
    "other field name": ([("upload", "w.npz", GOOD)], 400, "no_file", "UPLOAD.multipart.no-file"),
    "bad file": ([("file", "w.npz", bad_header(GOOD))], 400, "bad_header", None),
}


@pytest.mark.parametrize("case", sorted(MULTIPART_REFUSALS))
def test_multipart_refusals(server, case):
    parts, status, code, rule = MULTIPART_REFUSALS[case]
    ct = ("Content-Type", "multipart/form-data; boundary=" + BROWSER_BOUNDARY.decode())
    st, e = raw(server, "POST", "/load", form_body(parts, BROWSER_BOUNDARY), [ct])
    assert st == status and e["ok"] is False and e["code"] == code and e["rule"], (st, e)
    if rule:
        assert e["rule"] == rule, e
    cut = form_body([("file", "w.npz", GOOD)], BROWSER_BOUNDARY)[:-300]
    st, e = raw(server, "POST", "/load", cut, [ct])
    assert st == 400 and e["code"] == "bad_multipart" and e["rule"] == "UPLOAD.multipart.cut", (st, e)
    st, e = raw(server, "POST", "/load", GOOD, [("Content-Type", "multipart/form-data")])
    assert st == 400 and e["rule"] == "UPLOAD.multipart.boundary", (st, e)


# ---- spool: the names, no overwrite ---------------------------------------------------------------

UNSAFE = {  # the path's last segment as sent -> the rule (None: the router may refuse it first)
    ".profile": "UPLOAD.name.dot", "..": "UPLOAD.name.dot", "%2e%2e": "UPLOAD.name.dot",
    "%2E%2E": "UPLOAD.name.dot", ".": "UPLOAD.name.dot", "%2e": "UPLOAD.name.dot", ".x.npz": "UPLOAD.name.dot",
    "a%5Cb.npz": "UPLOAD.name.separator", "a%2Fb.npz": None, "%2F..%2Fetc": None,
    "a%01b.npz": "UPLOAD.name.control", "a%0Ab.npz": "UPLOAD.name.control", "a%7Fb.npz": "UPLOAD.name.control",
    "a%C2%85b.npz": "UPLOAD.name.control", "a%E2%80%A8b.npz": "UPLOAD.name.control",
    "a%E2%80%AEb.npz": "UPLOAD.name.bidi", "a%E2%81%A6b.npz": "UPLOAD.name.bidi", "a%E2%80%8Fb": "UPLOAD.name.bidi",
    "a%E2%80%8Bb.npz": "UPLOAD.name.format", "a%EF%BB%BFb.npz": "UPLOAD.name.format",
    "a%FFb.npz": "UPLOAD.name.not-utf8", "a" * 256: "UPLOAD.name.length", "%C3%A9" * 128: "UPLOAD.name.length",
}


def test_every_unsafe_name_is_refused(server):
    before = sorted(os.listdir(server.dir))
    parent = os.listdir(os.path.dirname(server.dir))
    for seg, rule in sorted(UNSAFE.items()):
        for method in ("POST", "PUT"):
            status, e = raw(server, method, "/spool/" + seg, GOOD)
            if status == 200 and e["path"] == seg and "%FF" in seg:  # aiohttp keeps an undecodable escape as is
                os.unlink(os.path.join(server.dir, seg))
                continue
            if rule is None:
                ok(status in (400, 404) and (status == 404 or e["code"] == "bad_name"), "%s /spool/%s refused" % (
                    method, seg), (status, e))
            else:
                ok(status == 400 and e and e["code"] == "bad_name" and e["rule"] == rule,
                   "%s /spool/%s: 400 %s" % (method, seg, rule), (status, e))
    assert sorted(os.listdir(server.dir)) == before, "a file was written"
    assert os.listdir(os.path.dirname(server.dir)) == parent, "a file was written beside the upload folder"
    for seg in ("w.npz", "weights-v2_final.npz", "%C3%A9t%C3%A9.npz", "a%20b.npz", "x..npz"):
        status, e = raw(server, "POST", "/spool/" + seg, GOOD)
        name = urllib.parse.unquote(seg)
        ok(status == 200 and open(os.path.join(server.dir, name), "rb").read() == GOOD,
           "a plain name is taken: %r" % name, (status, e))


def test_no_overwrite(server):
    dest = os.path.join(server.dir, "once.npz")
    status, e = raw(server, "POST", "/spool/once.npz", GOOD)
    assert status == 200, e
    status, e = raw(server, "PUT", "/spool/once.npz", GOOD_C)
    assert status == 409 and e["code"] == "exists" and e["rule"] == "UPLOAD.exists", (status, e)
    assert open(dest, "rb").read() == GOOD
    status, e = raw(server, "POST", "/spool/bad.npz", bad_header(GOOD))
    assert status == 400 and e["code"] == "bad_header" and not os.path.exists(os.path.join(server.dir, "bad.npz"))
    assert not [n for n in os.listdir(server.dir) if n.endswith(".part")]


# ---- limits: 413 with the numbers, a hint for the client ------------------------------------------

def test_limit_is_413_with_numbers(server):
    head = web_load._npy_head("(%d,)" % ((300 << 20) // 4)) + bytes(4096)  # declares 300 MiB
    status, e = raw(server, "POST", "/load", head)
    assert status == 413 and e["code"] == "limit" and e["rule"] == "LIMIT.max_bytes" and e["member"] == 0, (status, e)
    assert e["limit"] == {"name": "max_bytes", "value": 256 << 20, "needed": 300 << 20}, e["limit"]
    for word in ("max_bytes", "raise", "max-", "--"):
        assert word not in (e["hint"] or ""), e["hint"]  # server advice is not for the uploader
    assert "smaller" in e["hint"], e["hint"]


def test_budget_smaller_than_the_file(tmp_path_factory):
    s = start("fastapi", tmp_path_factory, "16Mi")
    try:
        data = npz(a=np.zeros(5 << 20, "<f4"))  # 20 MiB
        status, e = raw(s, "POST", "/load", data)
        assert status == 413 and e["rule"] == "LIMIT.budget.size", (status, e)
        assert e["limit"] == {"name": "budget", "value": 16 << 20, "needed": 20 << 20}, e["limit"]
        status, e = raw(s, "POST", "/load", GOOD)
        assert status == 200, (status, e)
        assert "Traceback" not in s.log_text()
    finally:
        s.close()


def test_http_response_statuses():
    import npzstream
    full = npzstream.RejectedError("the memory budget is in use", code="limit", offset=0, rule="LIMIT.budget.full",
                                   limit=("budget", 100, 80))
    status, headers, body = npzstream.http_response(full)
    assert status == 503 and headers == {"Retry-After": "5"} and body["rule"] == "LIMIT.budget.full"
    assert body["limit"] == {"name": "budget", "value": 100, "needed": 80} and "later" in body["hint"]
    bad = npzstream.RejectedError("bad", code="bad_header", offset=10, rule="HDR-DICT.unknown-key")
    assert npzstream.http_response(bad)[0] == 400
    lim = npzstream.RejectedError("big", code="limit", offset=10, rule="LIMIT.max_members")
    status, _, body = npzstream.http_response(lim)
    assert status == 413 and "max_members" not in body["hint"] and "--" not in body["hint"]
    e = npzstream.UploadError("x", code="exists", rule="UPLOAD.exists", status=409)
    assert npzstream.http_response(e)[0] == 409
    assert npzstream.http_response(FileExistsError(17, "exists", "/up/a.npz"))[2]["rule"] == "UPLOAD.exists"


# ---- a client that goes away ----------------------------------------------------------------------

def test_disconnect_at_random_points(server, files):
    """24 uploads cut at random points (seeded), raw and multipart, to /load and /spool: the server
    answers on, leaves no file, logs no traceback and at most one line an upload."""
    big = web_load._npy_head("(%d,)" % (8 << 20)) + bytes(32 << 20)  # a 32 MiB .npy
    bigc = npz(True, a=np.zeros(32 << 20, np.uint8))
    rng = random.Random(41)
    lines0 = len(server.log_text().splitlines())
    cuts = 0
    for i in range(24):
        data = (big, bigc, GOOD)[i % 3]
        multipart = i % 2 == 1
        path = "/load" if i % 4 < 2 else "/spool/gone-%d.npz" % i
        body = form_body([("file", "x.npz", data)], BROWSER_BOUNDARY) if multipart else data
        ct = "multipart/form-data; boundary=" + BROWSER_BOUNDARY.decode() if multipart else "application/octet-stream"
        cut = rng.randrange(1, len(body))
        s = socket.create_connection(("127.0.0.1", server.port), timeout=30)
        s.sendall(("POST %s HTTP/1.1\r\nHost: x\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
                   % (path, ct, len(body))).encode())
        try:
            s.sendall(body[:cut])
        except OSError:
            pass  # the server answered and closed already (a verdict before the cut)
        if i % 2:  # half of them reset the connection, half close it
            s.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00")
        s.close()
        cuts += 1
    time.sleep(1.5)
    status, e = raw(server, "GET", "/ping")
    assert status == 200 and e == {"ok": True}
    status, e = raw(server, "POST", "/load", GOOD)  # the budget was given back: a load still fits
    assert status == 200, (status, e)
    left = [n for n in os.listdir(server.dir) if n.startswith("gone-") or n.endswith(".part")]
    assert not left, left
    text = server.log_text()
    assert "Traceback" not in text, text[-3000:]
    new = text.splitlines()[lines0:]
    assert len(new) <= cuts, new
    print("%s: %d disconnects, %d log lines: %s" % (server.name if hasattr(server, "name") else server.framework,
                                                     cuts, len(new), new[:3]))


def test_log_has_no_traceback(server):
    text = server.log_text()
    assert "Traceback" not in text and "Exception in ASGI" not in text, text[-3000:]
    assert server.p.poll() is None, "the server died"


def test_the_recipes_stay_thin():
    """The examples use the helpers: no chunk loop, no name check, no error mapper of their own."""
    for fw in FRAMEWORKS:
        src = open(os.path.join(ROOT, "examples", "python", "web_%s.py" % fw)).read()
        for own in ("re.fullmatch", "async for", ".feed(", "status_code=400", "status=400"):
            assert own not in src, (fw, own)
        assert "upload.load(" in src and "upload.spool(" in src and "upload.response(" in src, fw
    r = subprocess.run([sys.executable, os.path.join(ROOT, "examples", "python", "web_fastapi.py"), "--help"],
                       capture_output=True, text=True, timeout=60)
    for flag in ("--port", "--upload-dir", "--memory-budget"):
        assert flag in r.stdout, r.stdout
