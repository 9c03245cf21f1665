#!/usr/bin/env python3
"""aiohttp upload endpoints for .npy/.npz files, with npzstream.aiohttp.

    pip install aiohttp python-multipart ./python
    python3 examples/python/web_aiohttp.py --port 8000 --upload-dir /tmp/uploads --memory-budget 512Mi
    curl -T weights.npz http://127.0.0.1:8000/load                    # PUT, the raw body
    curl -F file=@weights.npz http://127.0.0.1:8000/spool/weights.npz # a form, as browsers send it

GET  /ping                 {"ok": true}
POST /load  (or PUT)       the arrays, loaded while request.content arrives, and a summary
POST /spool/NAME (or PUT)  the file validated while it is written beside UPLOAD_DIR/NAME, moved into
                           place only when accepted; NAME must be a plain file name and new
The file is the body, or the field "file" of a multipart/form-data body.  All requests share one
memory budget (--memory-budget).  A refusal is JSON holding ok (false), code, rule, message,
detail, hint, member, name, offset, limit and received: 400 for the file's fault, 413 for a limit,
503 with Retry-After when the budget stays full, 409 for a name that exists.
"""
import argparse
import os

from aiohttp import web

import npzstream
import npzstream.aiohttp as upload

MAX_BYTES = 256 << 20
REFUSED = (npzstream.RejectedError, npzstream.UploadError)
routes = web.RouteTableDef()


def summary(arrays):
    if not isinstance(arrays, dict):
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


@routes.get("/ping")
async def ping(request):
    return web.json_response({"ok": True})


@routes.post("/load")
@routes.put("/load")
async def load(request):
    try:
        arrays = await upload.load(request, max_bytes=MAX_BYTES, budget=request.app["budget"])
    except REFUSED as e:
        return upload.response(e)
    return web.json_response({"ok": True, "members": summary(arrays)})


@routes.post("/spool/{name}")
@routes.put("/spool/{name}")
async def spool(request):
    name = request.match_info["name"]
    try:
        report = await upload.spool(request, request.app["upload_dir"], name, budget=request.app["budget"])
    except REFUSED as e:
        return upload.response(e)
    return web.json_response({"ok": True, "path": name, "bytes": report.consumed,
                              "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape}
                                          for m in report.members]})


def make_app(upload_dir, budget="512Mi"):
    app = web.Application(client_max_size=1 << 40)  # the parser's limits and the budget bound what is kept
    app["upload_dir"] = upload_dir
    app["budget"] = npzstream.Budget(budget)
    app.add_routes(routes)
    return app


async def serve(port, upload_dir, budget):
    """aiohttp's runner: the app on 127.0.0.1:port until cancelled."""
    import asyncio
    runner = web.AppRunner(make_app(upload_dir, budget))
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        await asyncio.Event().wait()
    finally:
        await runner.cleanup()


if __name__ == "__main__":
    import asyncio
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=os.environ.get("UPLOAD_DIR", "/tmp/uploads"))
    ap.add_argument("--memory-budget", default="512Mi", help="what all uploads may hold at once (512Mi, 2Gi, ...)")
    a = ap.parse_args()
    os.makedirs(a.upload_dir, exist_ok=True)
    asyncio.run(serve(a.port, a.upload_dir, a.memory_budget))
