#!/usr/bin/env python3
"""Django upload views for .npy/.npz files, with npzstream: a one-file Django project.

    pip install django ./python
    python3 examples/python/web_django.py --port 8000 --upload-dir /tmp/uploads --memory-budget 512Mi
    curl -F file=@weights.npz http://127.0.0.1:8000/load

It serves on 127.0.0.1:PORT with Django's development server (runserver --noreload); any other
arguments are a command of Django's manage.py instead (web_django.py check, ...).

The file comes as the "file" field of a multipart/form-data POST (what browsers and curl -F send).
GET  /ping          {"ok": true}
POST /load          the arrays, loaded while Django's multipart parser reads the body: an upload
                    handler feeds each chunk to npzstream and stops the upload at a rejection
POST /load-chunks   the same from UploadedFile.chunks() in the view: the simplest code, but Django
                    has then received (and stored) the whole upload before the view runs
POST /spool/NAME    the upload validated while it is written beside UPLOAD_DIR/NAME (an upload
                    handler); moved into place only when accepted, deleted when rejected; NAME must be
                    a plain file name (npzstream.check_name) and new
All requests share one memory budget (--memory-budget; a thread waits for room).  A refusal
is npzstream.http_response's answer (400 the file's fault, 413 a limit, 503 and Retry-After when the
budget stays full, 409 a name that exists), JSON holding ok, code, rule, message, detail, hint,
member, name, offset, limit and received.  Django's development server (WSGI) needs a
Content-Length: it reads no chunked body; Django parses multipart bodies of POST requests only.
"""
import os
import sys

import django
from django.conf import settings

settings.configure(
    DEBUG=False, SECRET_KEY="npzstream-example-not-secret", ROOT_URLCONF=__name__,
    ALLOWED_HOSTS=["127.0.0.1", "localhost"],
    MIDDLEWARE=[], INSTALLED_APPS=[], DATA_UPLOAD_MAX_MEMORY_SIZE=None,
    UPLOAD_DIR=os.environ.get("UPLOAD_DIR", "/tmp/uploads"),
)
django.setup()

from django.core.files.uploadhandler import FileUploadHandler, StopUpload  # noqa: E402
from django.http import JsonResponse  # noqa: E402
from django.urls import path  # noqa: E402
from django.views.decorators.csrf import csrf_exempt  # noqa: E402

import npzstream  # noqa: E402

MAX_BYTES = 256 << 20
BUDGET = npzstream.Budget("512Mi")  # what all uploads may hold at once (--memory-budget)


def rejected(e, received):
    e.received = received
    status, headers, body = npzstream.http_response(e)
    r = JsonResponse(body, status=status)
    for k, v in headers.items():
        r[k] = v
    return r


def summary(arrays):
    if not isinstance(arrays, dict):
        arrays = {"": arrays}
    return {k: ({"dtype": a.dtype.str, "shape": list(a.shape)} if not isinstance(a, bytes) else {"blob": len(a)})
            for k, a in arrays.items()}


class NpzHandler(FileUploadHandler):
    """Takes the "file" field's chunks as the multipart parser reads them: target(chunk) checks
    each; a rejection stops the upload there (the rest of the body is not read)."""

    def __init__(self, request, target):
        super().__init__(request)
        self.target = target
        self.received = 0
        self.error = None

    def new_file(self, field_name, *args, **kw):
        super().new_file(field_name, *args, **kw)
        if field_name != "file":
            raise StopUpload(connection_reset=True)

    def receive_data_chunk(self, raw_data, start):
        self.received += len(raw_data)
        try:
            self.target.feed(raw_data)
        except npzstream.RejectedError as e:  # Loader.feed raises; a Spool keeps its error
            self.error = e
        if self.error is None:
            self.error = getattr(self.target, "error", None)
        if self.error is not None:
            raise StopUpload(connection_reset=True)
        return None  # nothing for the handlers after this one

    def file_complete(self, file_size):
        return None


@csrf_exempt
def load(request):
    loader = npzstream.Loader(max_bytes=MAX_BYTES, budget=BUDGET)
    h = NpzHandler(request, loader)
    request.upload_handlers = [h]
    _ = request.FILES  # the multipart parser runs here, feeding the handler
    if h.error is None:
        try:
            arrays = loader.finish()  # the verdict
        except npzstream.RejectedError as e:
            h.error = e
    if h.error is not None:
        return rejected(h.error, h.received)
    return JsonResponse({"ok": True, "members": summary(arrays)})


@csrf_exempt
def load_chunks(request):
    f = request.FILES.get("file")  # an UploadedFile: Django has it whole (in memory or a temp file)
    if f is None:
        return JsonResponse({"ok": False, "code": "no_file", "message": "POST a file field named 'file'"}, status=400)
    loader = npzstream.Loader(max_bytes=MAX_BYTES, budget=BUDGET)
    received = 0
    try:
        for chunk in f.chunks():
            received += len(chunk)
            loader.feed(chunk)
        arrays = loader.finish()
    except npzstream.RejectedError as e:
        return rejected(e, received)
    return JsonResponse({"ok": True, "members": summary(arrays)})


@csrf_exempt
def spool(request, name):
    try:
        dest = os.path.join(settings.UPLOAD_DIR, npzstream.check_name(name))
    except npzstream.UploadError as e:
        return rejected(e, 0)
    with npzstream.spool(dest) as sp:
        h = NpzHandler(request, sp)
        request.upload_handlers = [h]
        _ = request.FILES  # the handler feeds the spool as the parser reads
        try:
            report = sp.finish()  # accepted: fsync, rename into place; rejected: already deleted
        except FileExistsError as e:  # an existing file is kept
            return rejected(e, h.received)
    if not report:
        return rejected(report.error, h.received)
    return JsonResponse({"ok": True, "path": name, "bytes": h.received,
                         "members": [{"key": m.key, "dtype": m.dtype, "shape": m.shape} for m in report.members]})


def ping(request):
    return JsonResponse({"ok": True})


urlpatterns = [path("ping", ping), path("load", load), path("load-chunks", load_chunks),
               path("spool/<str:name>", spool)]

if __name__ == "__main__":
    import argparse

    from django.core.management import execute_from_command_line
    ap = argparse.ArgumentParser(epilog="other arguments: a command of Django's manage.py instead of runserver")
    ap.add_argument("--port", type=int, default=8000)
    ap.add_argument("--upload-dir", default=settings.UPLOAD_DIR)
    ap.add_argument("--memory-budget", default="512Mi", help="what all uploads may hold at once (512Mi, 2Gi, ...)")
    a, rest = ap.parse_known_args()
    settings.UPLOAD_DIR = a.upload_dir
    BUDGET = npzstream.Budget(a.memory_budget)
    os.makedirs(settings.UPLOAD_DIR, exist_ok=True)
    execute_from_command_line([sys.argv[0]] + (rest or ["runserver", "127.0.0.1:%d" % a.port, "--noreload"]))
