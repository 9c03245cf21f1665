#!/usr/bin/env python3
"""aiohttp upload endpoints for .npy/.npz files, with npzstream.

    pip install aiohttp ./python
    python3 examples/python/web_aiohttp.py --port 8000 --upload-dir /tmp/uploads

POST /load            the arrays, loaded from request.content as it arrives, and a summary
POST /spool/NAME      the body validated while it is written beside UPLOAD_DIR/NAME; moved into place
                      only when accepted (fsynced, renamed), deleted when rejected
A rejection is 400 with {"ok": false, "code", "rule", "member", "name", "offset", "message", "hint",
"received"} as soon as the bytes decide it: the rest of the body is not read.
"""
import argparse
import os
import re

from aiohttp import web

import npzstream

MAX_BYTES = 256 << 20
CHUNK = 1 << 20
routes = web.RouteTableDef()


def rejected(e, received):
    return web.json_response({"ok": False, "code": e.code, "rule": e.rule, "member": e.member,
                              "name": None if e.name is None else e.name.decode("utf-8", "replace"),
                              "offset": e.offset, "message": e.message, "hint": e.hint, "received": received},
                             status=400)


def summary(arrays):
    if not isinstance(arrays, dict):
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


@routes.post("/load")
async def load(request):
    loader = npzstream.Loader(max_bytes=MAX_BYTES)
    received = 0
    try:
        async for chunk in request.content.iter_chunked(CHUNK):
            received += len(chunk)
            loader.feed(chunk)               # raises as soon as the bytes are bad
        arrays = loader.finish()             # the verdict
    except npzstream.RejectedError as e:
        return rejected(e, received)
    return web.json_response({"ok": True, "members": summary(arrays)})


@routes.post("/spool/{name}")
async def spool(request):
    name = request.match_info["name"]
    if not re.fullmatch(r"[A-Za-z0-9_-][A-Za-z0-9._-]{0,99}", name):
        return web.json_response({"ok": False, "code": "bad_name", "message": "a plain file name"}, status=400)
    received = 0
    with npzstream.spool(os.path.join(request.app["upload_dir"], name)) as sp:
        async for chunk in request.content.iter_chunked(CHUNK):
            received += len(chunk)
            await sp.afeed(chunk)
            if sp.error:
                break
        report = sp.finish()
    if not report:
        return rejected(report.error, received)
    return web.json_response({"ok": True, "path": name, "bytes": received,
                              "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape}
                                          for m in report.members]})


def make_app(upload_dir):
    app = web.Application(client_max_size=1 << 40)  # the parser's limits bound what is kept
    app["upload_dir"] = upload_dir
    app.add_routes(routes)
    return app


async def serve(port, upload_dir):
    """aiohttp's runner: the app on 127.0.0.1:port until cancelled."""
    import asyncio
    runner = web.AppRunner(make_app(upload_dir))
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
    a = ap.parse_args()
    os.makedirs(a.upload_dir, exist_ok=True)
    asyncio.run(serve(a.port, a.upload_dir))
