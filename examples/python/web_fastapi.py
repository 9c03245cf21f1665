#!/usr/bin/env python3
"""FastAPI (Starlette) upload endpoints for .npy/.npz files, with npzstream.starlette.

    pip install fastapi uvicorn python-multipart ./python
    python3 examples/python/web_fastapi.py --port 8000 --upload-dir /tmp/uploads --memory-budget 512Mi
    curl -T weights.npz http://127.0.0.1:8000/load                    # PUT, the raw body
    curl --data-binary @weights.npz http://127.0.0.1:8000/load        # POST, the raw body
    curl -F file=@weights.npz http://127.0.0.1:8000/spool/weights.npz # a form, as browsers send it

GET  /ping                 {"ok": true}
POST /load  (or PUT)       the arrays, loaded while the body arrives, and a summary
POST /spool/NAME (or PUT)  the file validated while it is written beside UPLOAD_DIR/NAME, moved into
                           place only when accepted; NAME must be a plain file name and new
The file is the body, or the field "file" of a multipart/form-data body.  All requests share one
memory budget (--memory-budget): an upload waits for room, or is told to retry (503).  A refusal is
JSON holding ok (false), code, rule, message, detail, hint, member, name, offset, limit and
received: 400 for the file's fault, 413 for a limit, 503 with Retry-After when the budget stays
full, 409 for a name that exists.  The parser's heavy work runs off the event loop: GET /ping
answers while uploads inflate.
"""
import argparse
import os

from fastapi import FastAPI, Request

import npzstream
import npzstream.starlette as upload

MAX_BYTES = 256 << 20       # what one upload may make the server allocate
UPLOAD_DIR = os.environ.get("UPLOAD_DIR", "/tmp/uploads")
BUDGET = npzstream.Budget("512Mi")  # what all uploads may hold at once (--memory-budget)
REFUSED = (npzstream.RejectedError, npzstream.UploadError)
app = FastAPI()


def summary(arrays):
    if not isinstance(arrays, dict):  # a .npy: one array
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


@app.get("/ping")
async def ping():
    return {"ok": True}


@app.api_route("/load", methods=["POST", "PUT"])
async def load(request: Request):
    try:
        arrays = await upload.load(request, max_bytes=MAX_BYTES, budget=BUDGET)
    except REFUSED as e:
        return upload.response(e)
    return {"ok": True, "members": summary(arrays)}


@app.api_route("/spool/{name}", methods=["POST", "PUT"])
async def spool(name: str, request: Request):
    try:
        report = await upload.spool(request, UPLOAD_DIR, name, budget=BUDGET)
    except REFUSED as e:
        return upload.response(e)
    return {"ok": True, "path": name, "bytes": report.consumed,
            "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape} for m in report.members]}


if __name__ == "__main__":
    import uvicorn
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=UPLOAD_DIR)
    ap.add_argument("--memory-budget", default="512Mi", help="what all uploads may hold at once (512Mi, 2Gi, ...)")
    a = ap.parse_args()
    UPLOAD_DIR = a.upload_dir
    BUDGET = npzstream.Budget(a.memory_budget)
    os.makedirs(UPLOAD_DIR, exist_ok=True)
    uvicorn.run(app, host="127.0.0.1", port=a.port, log_level="warning")
