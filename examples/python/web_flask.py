#!/usr/bin/env python3
"""Flask upload endpoints for .npy/.npz files, with npzstream.

    pip install flask ./python
    python3 examples/python/web_flask.py --port 8000 --upload-dir /tmp/uploads

POST /load            the arrays, loaded from request.stream as it arrives, and a summary
POST /spool/NAME      the body validated while it is written beside UPLOAD_DIR/NAME; moved into place
                      only when accepted (fsynced, renamed), deleted when rejected
A rejection is 400 with {"ok": false, "code", "rule", "member", "name", "offset", "message", "hint",
"received"} as soon as the bytes decide it: the rest of the body is not read.  Werkzeug's server
takes chunked bodies (request.stream ends at the last chunk); the connection is closed after a
rejection.
"""
import argparse
import os
import re

from flask import Flask, jsonify, request

import npzstream

MAX_BYTES = 256 << 20
CHUNK = 1 << 20
app = Flask(__name__)
app.config["UPLOAD_DIR"] = os.environ.get("UPLOAD_DIR", "/tmp/uploads")


def rejected(e, received):
    r = jsonify({"ok": False, "code": e.code, "rule": e.rule, "member": e.member,
                 "name": None if e.name is None else e.name.decode("utf-8", "replace"),
                 "offset": e.offset, "message": e.message, "hint": e.hint, "received": received})
    r.status_code = 400
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


@app.post("/load")
def load():
    loader = npzstream.Loader(max_bytes=MAX_BYTES)
    received = 0
    try:
        for chunk in body():
            received += len(chunk)
            loader.feed(chunk)               # raises as soon as the bytes are bad
        arrays = loader.finish()             # the verdict
    except npzstream.RejectedError as e:
        return rejected(e, received)
    return jsonify({"ok": True, "members": summary(arrays)})


@app.post("/spool/<name>")
def spool(name):
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}", name):
        return jsonify({"ok": False, "code": "bad_name", "message": "a plain file name"}), 400
    received = 0
    with npzstream.spool(os.path.join(app.config["UPLOAD_DIR"], name)) as sp:
        for chunk in body():
            received += len(chunk)
            sp.feed(chunk)
            if sp.error:
                break
        report = sp.finish()
    if not report:
        return rejected(report.error, received)
    return jsonify({"ok": True, "path": name, "bytes": received,
                    "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape} for m in report.members]})


if __name__ == "__main__":
    from werkzeug.serving import run_simple
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=app.config["UPLOAD_DIR"])
    a = ap.parse_args()
    app.config["UPLOAD_DIR"] = a.upload_dir
    os.makedirs(a.upload_dir, exist_ok=True)
    run_simple("127.0.0.1", a.port, app, threaded=True)
