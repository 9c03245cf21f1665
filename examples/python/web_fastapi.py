#!/usr/bin/env python3
"""FastAPI (Starlette) upload endpoints for .npy/.npz files, with npzstream.

    pip install fastapi uvicorn ./python
    python3 examples/python/web_fastapi.py --port 8000 --upload-dir /tmp/uploads
    curl -T weights.npz http://127.0.0.1:8000/load          # (curl -T sends chunked from stdin: -T -)
    curl -T weights.npz http://127.0.0.1:8000/spool/weights.npz

POST /load            the arrays, loaded from the body as it arrives (request.stream()), and a summary
POST /spool/NAME      the body validated while it is written beside UPLOAD_DIR/NAME; moved into place
                      only when accepted (fsynced, renamed), deleted when rejected
A rejection is 400 with {"ok": false, "code", "rule", "member", "name", "offset", "message", "hint",
"received"} as soon as the bytes decide it: the rest of the body is not read.
"""
import argparse
import os
import re

from fastapi import FastAPI, Request
from fastapi.responses import JSONResponse

import npzstream

MAX_BYTES = 256 << 20       # what one upload may make the server allocate (load)
UPLOAD_DIR = os.environ.get("UPLOAD_DIR", "/tmp/uploads")
app = FastAPI()


def rejected(e, received):
    return JSONResponse({"ok": False, "code": e.code, "rule": e.rule, "member": e.member,
                         "name": None if e.name is None else e.name.decode("utf-8", "replace"),
                         "offset": e.offset, "message": e.message, "hint": e.hint, "received": received},
                        status_code=400)


def summary(arrays):
    if not isinstance(arrays, dict):  # a .npy: one array
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


@app.post("/load")
async def load(request: Request):
    loader = npzstream.Loader(max_bytes=MAX_BYTES)
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            loader.feed(chunk)               # raises as soon as the bytes are bad
        arrays = loader.finish()             # the verdict: only now are there arrays
    except npzstream.RejectedError as e:
        return rejected(e, received)
    return {"ok": True, "members": summary(arrays)}


@app.post("/spool/{name}")
async def spool(name: str, request: Request):
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}", name):
        return JSONResponse({"ok": False, "code": "bad_name", "message": "a plain file name"}, status_code=400)
    received = 0
    with npzstream.spool(os.path.join(UPLOAD_DIR, name)) as sp:  # an exception deletes the upload
        async for chunk in request.stream():
            received += len(chunk)
            await sp.afeed(chunk)            # validated, then written
            if sp.error:                     # rejected: stop reading, the file is gone already
                break
        report = sp.finish()                 # accepted: fsync, rename into place
    if not report:
        return rejected(report.error, received)
    return {"ok": True, "path": name, "bytes": received,
            "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape} for m in report.members]}


if __name__ == "__main__":
    import uvicorn
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=UPLOAD_DIR)
    a = ap.parse_args()
    UPLOAD_DIR = a.upload_dir
    os.makedirs(UPLOAD_DIR, exist_ok=True)
    uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")
