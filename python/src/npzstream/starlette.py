"""Upload helpers for Starlette and FastAPI: the arrays of a request's file, or the file spooled
to a directory, with the parser's heavy work off the event loop, and a refusal as a response.

    from fastapi import FastAPI, Request
    import npzstream, npzstream.starlette as upload

    budget = npzstream.Budget("512Mi")        # what all requests may hold at once

    @app.api_route("/load", methods=["POST", "PUT"])
    async def load(request: Request):
        try:
            arrays = await upload.load(request, budget=budget, max_bytes="256Mi")
        except (npzstream.RejectedError, npzstream.UploadError) as e:
            return upload.response(e)    # 400 the file's fault, 413 a limit, 503 the budget full
        ...

The file is the request's body (any method, Content-Length or chunked), or one field of a
multipart/form-data body (``curl -F file=@x.npz``, a browser's form or FormData; field=, "file"
by default), streamed through python-multipart's parser (Starlette's own; ``pip install
python-multipart``): nothing is buffered whole.  A client that goes away costs one log line
(logger "npzstream") and no file: UploadError "disconnected"."""
from __future__ import annotations

import os
from typing import Any, Optional, Union

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from ._budget import Budget
from ._limits import DEFAULT_MAX_BYTES
from ._load import Loaded
from ._policy import PolicyLike
from ._server import (LOAD_DOC, RESPONSE_DOC, RETRY_AFTER, SPOOL_DOC, UploadError, _Body, check_name,
                      http_response, load_body, spool_body)
from ._validate import Report

__all__ = ["load", "spool", "response", "check_name", "UploadError"]


def _body(request: Request, field: Optional[str]) -> _Body:
    return _Body(request.stream(), request.headers.get("content-type"), field, (ClientDisconnect,),
                 "%s %s" % (request.method, request.url.path))


async def load(request: Request, *, field: Optional[str] = "file", max_bytes: Union[int, str] = DEFAULT_MAX_BYTES,
               threads: int = 1, policy: Optional[PolicyLike] = None, budget: Optional[Budget] = None,
               **limits: Any) -> Loaded:
    return await load_body(_body(request, field), max_bytes=max_bytes, threads=threads, policy=policy,
                           budget=budget, limits=limits)


async def spool(request: Request, directory: Union[str, "os.PathLike[str]"], name: str, *,
                field: Optional[str] = "file", overwrite: bool = False, threads: int = 1,
                policy: Optional[PolicyLike] = None, hash: bool = False, mode: Optional[int] = None,
                budget: Optional[Budget] = None, **limits: Any) -> Report:
    return await spool_body(_body(request, field), directory, name, overwrite=overwrite, threads=threads,
                            policy=policy, hash=hash, mode=mode, budget=budget, limits=limits)


def response(e: Exception, *, retry_after: int = RETRY_AFTER) -> JSONResponse:
    status, headers, body = http_response(e, retry_after=retry_after)  # type: ignore[arg-type]
    return JSONResponse(body, status_code=status, headers=headers)


load.__doc__, spool.__doc__, response.__doc__ = LOAD_DOC, SPOOL_DOC, RESPONSE_DOC
