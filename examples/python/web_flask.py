#!/usr/bin/env python3
"""Flask upload endpoints for .npy/.npz files, with npzstream.

    pip install flask ./python
    python3 examples/python/web_flask.py --port 8000 --upload-dir /tmp/uploads --memory-budget 512Mi
    curl -T weights.npz http://127.0.0.1:8000/load

GET  /ping                {"ok": true}
POST /load (or PUT)       the arrays, loaded from request.stream as it arrives, and a summary
POST /spool/NAME (or PUT) the body validated while it is written beside UPLOAD_DIR/NAME; moved into
                          place only when accepted (fsynced, renamed), deleted when rejected; NAME
                          must be a plain file name (npzstream.check_name) and new
The file is the request's body (this example takes no multipart form: see web_django.py, or the
FastAPI and aiohttp examples).  All requests share one memory budget (--memory-budget; a thread
waits for room).  A refusal is npzstream.http_response's answer (400 the file's fault, 413 a limit,
503 and Retry-After when the budget stays full, 409 a name that exists), JSON holding ok, code,
rule, message, detail, hint, member, name, offset, limit and received, as soon as the bytes decide
it: the rest of the body is not read.  Werkzeug's server takes chunked bodies (request.stream ends
at the last chunk); the connection is closed after a refusal.
"""
import argparse
import os

from flask import Flask, jsonify, request

import npzstream

MAX_BYTES = 256 << 20
CHUNK = 1 << 20
BUDGET = npzstream.Budget("512Mi")
app = Flask(__name__)
app.config["UPLOAD_DIR"] = os.environ.get("UPLOAD_DIR", "/tmp/uploads")


def rejected(e, received):
    e.received = received
    status, headers, body = npzstream.http_response(e)
    r = jsonify(body)
    r.status_code = status
    r.headers.update(headers)
    r.headers["Connection"] = "close"  # the rest of the body is not read
    return r


def summary(arrays):
    if not isinstance(arrays, dict):
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


def body():
    while True:
        chunk = request.stream.read(CHUNK)
        if not chunk:
            return
        yield chunk


@app.get("/ping")
def ping():
    return jsonify(ok=True)


@app.route("/load", methods=["POST", "PUT"])
def load():
    loader = npzstream.Loader(max_bytes=MAX_BYTES, budget=BUDGET)
    received = 0
    try:
        for chunk in body():
            received += len(chunk)
            loader.feed(chunk)               # raises as soon as the bytes are bad
        arrays = loader.finish()             # the verdict
    except npzstream.RejectedError as e:
        return rejected(e, received)
    return jsonify({"ok": True, "members": summary(arrays)})


@app.route("/spool/<name>", methods=["POST", "PUT"])
def spool(name):
    received = 0
    try:
        dest = os.path.join(app.config["UPLOAD_DIR"], npzstream.check_name(name))
        with npzstream.spool(dest) as sp:  # an existing file is kept: FileExistsError at finish()
            for chunk in body():
                received += len(chunk)
                sp.feed(chunk)
                if sp.error:
                    break
            report = sp.finish()
    except npzstream.UploadError as e:
        return rejected(e, received)
    except FileExistsError as e:  # an existing file is kept
        return rejected(e, received)
    if not report:
        return rejected(report.error, received)
    return jsonify({"ok": True, "path": name, "bytes": received,
                    "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape} for m in report.members]})


if __name__ == "__main__":
    from werkzeug.serving import run_simple
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=app.config["UPLOAD_DIR"])
    ap.add_argument("--memory-budget", default="512Mi", help="what all uploads may hold at once (512Mi, 2Gi, ...)")
    a = ap.parse_args()
    app.config["UPLOAD_DIR"] = a.upload_dir
    BUDGET = npzstream.Budget(a.memory_budget)
    os.makedirs(a.upload_dir, exist_ok=True)
    run_simple("127.0.0.1", a.port, app, threaded=True)
