#!/usr/bin/env python3
"""A small upload server: POST a .npy or .npz, get back what was loaded (or why not) as JSON.

    python3 examples/python/upload_server.py [PORT]        # 0 picks a free port
    curl --data-binary @weights.npz http://127.0.0.1:PORT/upload

The request body is read from the socket in pieces and pushed into npzstream as it arrives
(Content-Length or chunked transfer encoding): nothing is buffered whole, nothing is written to
disk, np.load is never called. The arrays exist only once the archive's verdict is in; the
server caps what it keeps (MAX_BYTES) whatever the upload declares. Standard library only.
"""
import json
import sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import npzstream

MAX_BYTES = 256 << 20   # what one upload may make the server allocate
CHUNK = 64 << 10


def body_chunks(handler):
    """The request body, as it arrives."""
    if handler.headers.get("Transfer-Encoding", "").lower() == "chunked":
        while True:
            size = int(handler.rfile.readline().split(b";")[0].strip(), 16)
            if size == 0:
                while handler.rfile.readline() not in (b"\r\n", b"\n", b""):
                    pass
                return
            left = size
            while left:
                piece = handler.rfile.read(min(left, CHUNK))
                if not piece:
                    raise ConnectionError("the body ended inside a chunk")
                left -= len(piece)
                yield piece
            handler.rfile.readline()
    else:
        left = int(handler.headers.get("Content-Length", "0"))
        while left:
            piece = handler.rfile.read(min(left, CHUNK))
            if not piece:
                return  # the client hung up: the parser says "truncated"
            left -= len(piece)
            yield piece


class Upload(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def reply(self, status, obj):
        data = json.dumps(obj).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_POST(self):
        if self.path != "/upload":
            return self.reply(404, {"error": "POST to /upload"})
        loader = npzstream.Loader(max_bytes=MAX_BYTES)
        try:
            for piece in body_chunks(self):
                loader.feed(piece)        # rejects as soon as the bytes are bad
            arrays = loader.finish()      # the verdict
        except npzstream.RejectedError as e:
            self.close_connection = True  # the rest of the body is not read
            return self.reply(400, {"ok": False, "code": e.code, "offset": e.offset, "member": e.member,
                                    "rule": e.rule, "message": e.message})
        if not isinstance(arrays, dict):  # a plain .npy
            arrays = {None: arrays}
        out = {}
        for key, a in arrays.items():
            if isinstance(a, bytes):
                out[key] = {"kind": "blob", "size": len(a)}
            else:
                out[key] = {"kind": "array", "dtype": a.dtype.str, "shape": list(a.shape),
                            "sum": float(a.sum()) if a.dtype.kind in "biuf" and a.size else None}
        self.reply(200, {"ok": True, "members": out})

    def log_message(self, fmt, *args):  # quiet
        pass


def serve(port=0):
    return ThreadingHTTPServer(("127.0.0.1", port), Upload)


if __name__ == "__main__":
    srv = serve(int(sys.argv[1]) if len(sys.argv) > 1 else 8000)
    print("listening on http://127.0.0.1:%d/upload" % srv.server_address[1], flush=True)
    srv.serve_forever()
