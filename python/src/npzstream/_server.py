"""What the upload helpers of every framework share (npzstream.starlette, npzstream.aiohttp; the
Django and Flask examples use the public parts): the check of a name to spool to, the body of a
request as the file's bytes (the raw body, or one file field of multipart/form-data, streamed
through python-multipart's push parser), loading and spooling from those bytes with the parser's
heavy work off the event loop, a client that goes away, and a refusal as an HTTP answer whose
body speaks to the client.

A framework module gives an async iterator of the body's chunks, its Content-Type, and the
exceptions its framework raises when the client goes away."""
from __future__ import annotations

import logging
import os
import unicodedata
from typing import Any, AsyncIterator, Dict, List, Optional, Tuple, Type, Union

from . import _npzstream
from ._budget import Budget
from ._errors import RejectedError
from ._load import Loaded, Loader
from ._spool import Spool
from ._validate import Report

log = logging.getLogger("npzstream")

#: Retry-After (seconds) of a 503 answered when the memory budget stayed full
RETRY_AFTER = 5
# what a multipart body may hold besides the file field (other fields, part headers): bytes
_MULTIPART_OTHER_MAX = 1 << 20
# the longest name spooled to (bytes of its UTF-8): what file systems take
_NAME_MAX = 255


class UploadError(ValueError):
    """A request the upload helpers refuse before (or besides) the file's own verdict: a name
    that is not a plain file name, a file that exists already, a multipart body without the file
    field or cut inside it, a form without a file, a client that went away.

    code: "bad_name", "exists", "bad_multipart", "no_file", "disconnected"; rule: the rule id
    ("UPLOAD.name.separator", ...); message: in words; status: the HTTP status (400, or 409 for a
    name that exists); received: the request's body bytes read when it was refused."""

    def __init__(self, message: str, *, code: str, rule: str, status: int = 400, received: int = 0) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.rule = rule
        self.status = status
        self.received = received

    def __str__(self) -> str:
        return "%s: %s [%s]" % (self.code, self.message, self.rule)


# ---- names ----------------------------------------------------------------------------------

# the bidirectional controls (and the marks that reorder text the same way): a name holding one
# can print as another name (README.md, "Names in the output")
_BIDI = frozenset("\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")


def _quote(name: str) -> str:
    return "'%s'" % _npzstream.name_text(name)


def check_name(name: str) -> str:
    """name, when it is a plain file name to store an upload under; else UploadError (400,
    code "bad_name", rule UPLOAD.name.*): empty or longer than 255 bytes of UTF-8 (empty, length),
    a path separator '/' or '\\' (separator), '.', '..' or any leading dot: a hidden file (dot), a
    control character: C0, DEL, C1, line and paragraph separators (control), a bidirectional
    control (bidi) or another invisible format character: zero-width ones, U+FEFF (format),
    bytes that were not UTF-8: a lone surrogate, or U+FFFD that replaced them (not-utf8)."""
    def bad(why: str, rule: str) -> UploadError:
        return UploadError("%s is not a plain file name: %s" % (_quote(name), why), code="bad_name",
                           rule="UPLOAD.name." + rule)
    if not isinstance(name, str):
        raise TypeError("the name must be a str")
    if not name:
        raise bad("it is empty", "empty")
    if "/" in name or "\\" in name:
        raise bad("it holds a path separator", "separator")
    if name.startswith("."):
        raise bad("it starts with a dot ('.', '..' and hidden files are refused)", "dot")
    for ch in name:
        cat = unicodedata.category(ch)
        if ch in _BIDI:
            raise bad("it holds a bidirectional control", "bidi")
        if cat in ("Cc", "Zl", "Zp"):
            raise bad("it holds a control character", "control")
        if cat == "Cf":
            raise bad("it holds an invisible format character", "format")
        if cat == "Cs" or ch == "\ufffd":
            raise bad("it holds bytes that were not UTF-8", "not-utf8")
    if len(name.encode("utf-8")) > _NAME_MAX:
        raise bad("it is longer than %d bytes" % _NAME_MAX, "length")
    return name


# ---- the body as the file's bytes -------------------------------------------------------------

def _multipart_parser() -> Any:
    """python-multipart's streaming parser (Starlette's own; 0.0.13 and later: python_multipart)."""
    try:
        from python_multipart.multipart import MultipartParser, parse_options_header
    except ImportError:
        raise ImportError("npzstream: multipart/form-data uploads need python-multipart 0.0.13 or later "
                          "(pip install 'npzstream[web]')") from None
    return MultipartParser, parse_options_header


class _Multipart:
    """One file field of a multipart/form-data body, taken out as the body streams through
    python-multipart's push parser: write(chunk) returns the field's bytes in that chunk (views
    of it where they lie in it).  Other fields are skipped (at most _MULTIPART_OTHER_MAX bytes in
    all); the body is read no further than the field's end."""

    def __init__(self, content_type: str, field: Optional[str]) -> None:
        Parser, self._options = _multipart_parser()
        _, params = self._options(content_type)
        boundary = params.get(b"boundary")
        if not boundary:
            raise UploadError("a multipart/form-data body without a boundary", code="bad_multipart",
                              rule="UPLOAD.multipart.boundary")
        self.field = field
        self.state = "before"  # "before" the field, "in" it, "after" it (done)
        self._other = 0
        self._head: Dict[bytes, bytes] = {}
        self._hname: List[bytes] = []
        self._hvalue: List[bytes] = []
        self._chunk: Any = b""
        self._out: List[Any] = []
        cb = {"on_part_begin": self._part_begin, "on_header_field": self._header_field,
              "on_header_value": self._header_value, "on_header_end": self._header_end,
              "on_headers_finished": self._headers_finished, "on_part_data": self._part_data,
              "on_part_end": self._part_end}
        try:
            self._p = Parser(boundary, cb)
        except Exception as e:  # a boundary python-multipart refuses
            raise UploadError("a multipart/form-data body with a bad boundary (%s)" % e, code="bad_multipart",
                              rule="UPLOAD.multipart.boundary") from None

    def _part_begin(self) -> None:
        self._head = {}

    def _header_field(self, data: bytes, start: int, end: int) -> None:
        self._hname.append(bytes(data[start:end]))

    def _header_value(self, data: bytes, start: int, end: int) -> None:
        self._hvalue.append(bytes(data[start:end]))

    def _header_end(self) -> None:
        self._head[b"".join(self._hname).lower()] = b"".join(self._hvalue).strip(b" \t")
        self._hname.clear()
        self._hvalue.clear()

    def _headers_finished(self) -> None:
        if self.state != "before":
            return
        _, opts = self._options(self._head.get(b"content-disposition"))
        name, filename = opts.get(b"name"), opts.get(b"filename")
        if self.field is not None:  # the field named so; else the first part that is a file
            ours = name is not None and name.decode("utf-8", "replace") == self.field
        else:
            ours = filename is not None
        if ours:
            cte = self._head.get(b"content-transfer-encoding", b"binary").lower()
            if cte not in (b"binary", b"8bit", b"7bit"):
                raise UploadError("the file field is sent with Content-Transfer-Encoding %s: send it as binary"
                                  % cte.decode("latin-1", "replace"), code="bad_multipart",
                                  rule="UPLOAD.multipart.encoding")
            self.state = "in"

    def _part_data(self, data: bytes, start: int, end: int) -> None:
        if self.state == "in":
            # the chunk being parsed: a view of it; python-multipart's own buffers: a copy
            self._out.append(memoryview(data)[start:end] if data is self._chunk else bytes(data[start:end]))
        else:
            self._other += end - start
            if self._other > _MULTIPART_OTHER_MAX:
                raise UploadError("the multipart/form-data body holds more than %d bytes besides the file field"
                                  % _MULTIPART_OTHER_MAX, code="bad_multipart", rule="UPLOAD.multipart.other")

    def _part_end(self) -> None:
        if self.state == "in":
            self.state = "after"

    def write(self, chunk: Any) -> List[Any]:
        """The field's bytes in chunk (nothing once the field ended)."""
        if self.state == "after":
            return []
        self._chunk = chunk
        self._out = []
        try:
            self._p.write(chunk)
        except UploadError:
            raise
        except Exception as e:  # python-multipart's MultipartParseError and the like
            raise UploadError("a malformed multipart/form-data body (%s)" % e, code="bad_multipart",
                              rule="UPLOAD.multipart.malformed") from None
        finally:
            self._chunk = b""
        return self._out

    def end(self) -> None:
        """The body ended: the field must have been whole."""
        if self.state == "before":
            raise UploadError("no file field %s in the multipart/form-data body" % (
                "named %s" % _quote(self.field) if self.field is not None else "(a part with a filename)"),
                code="no_file", rule="UPLOAD.multipart.no-file")
        if self.state == "in":
            raise UploadError("the multipart/form-data body ended inside the file field", code="bad_multipart",
                              rule="UPLOAD.multipart.cut")


def _is_multipart(content_type: Optional[str]) -> bool:
    """Whether the body is multipart/form-data; any other type is the file itself (curl
    --data-binary says application/x-www-form-urlencoded of a raw file)."""
    return (content_type or "").split(";")[0].strip().lower() == "multipart/form-data"


class _Body:
    """The file's bytes from a request's body chunks: the raw body, or one field of a multipart
    body.  received counts the body bytes read; gone are the framework's exceptions for a client
    that went away (they end the body as a quiet UploadError)."""

    def __init__(self, chunks: AsyncIterator[Any], content_type: Optional[str], field: Optional[str],
                 gone: Tuple[Type[BaseException], ...], where: str) -> None:
        self._chunks = chunks
        self._mp = _Multipart(content_type or "", field) if _is_multipart(content_type) else None
        self._gone = gone
        self.where = where
        self.received = 0

    async def pieces(self) -> AsyncIterator[Any]:
        """The file's bytes, in pieces, as the body arrives."""
        it = self._chunks.__aiter__()
        while True:
            try:
                chunk = await it.__anext__()
            except StopAsyncIteration:
                break
            except self._gone:
                raise self.went_away() from None
            self.received += len(chunk)
            if self._mp is None:
                yield chunk
                continue
            for piece in self._mp.write(chunk):
                yield piece
            if self._mp.state == "after":
                return  # the field is whole: the rest of the body is not needed
        if self._mp is not None:
            self._mp.end()

    def went_away(self) -> UploadError:
        """The client went away: one log line, no traceback."""
        log.warning("npzstream: %s: the client went away after %d bytes", self.where, self.received)
        return UploadError("the client went away", code="disconnected", rule="UPLOAD.disconnected",
                           received=self.received)


def _received(e: Union[RejectedError, UploadError], body: _Body) -> Union[RejectedError, UploadError]:
    e.received = body.received
    return e


async def load_body(body: _Body, *, max_bytes: Union[int, str], threads: int, policy: Any,
                    budget: Optional[Budget], limits: Dict[str, Any]) -> Loaded:
    """The arrays of the request's file (Loader.afeed: heavy work off the event loop); a
    RejectedError or UploadError carries .received."""
    ld = Loader(max_bytes=max_bytes, threads=threads, policy=policy, budget=budget, **limits)
    try:
        async for piece in body.pieces():
            await ld.afeed(piece)
        return await ld.afinish()
    except (RejectedError, UploadError) as e:
        ld._fail(e)  # the arrays and what the budget lent go now, not with the traceback
        raise _received(e, body)
    except BaseException as e:  # cancelled
        ld._fail(e)
        raise


async def spool_body(body: _Body, directory: Union[str, "os.PathLike[str]"], name: str, *, overwrite: bool,
                     threads: int, policy: Any, hash: bool, mode: Optional[int], budget: Optional[Budget],
                     limits: Dict[str, Any]) -> Report:
    """The request's file validated while written to directory/name (checked: a plain file name;
    an existing file is kept unless overwrite).  Returns the accepted Report; a rejection is
    raised (the upload deleted), with .received."""
    dest = os.path.join(os.fspath(directory), check_name(name))
    if not overwrite and os.path.lexists(dest):
        raise _exists(name)
    sp = Spool(dest, threads=threads, policy=policy, hash=hash, mode=mode, overwrite=overwrite, budget=budget,
               **limits)  # (its budget's part is awaited by afeed)
    try:
        async for piece in body.pieces():
            await sp.afeed(piece)
            if sp.error is not None:
                break  # rejected: the file is deleted already, the rest of the body is not read
        report = await sp.afinish()
    except FileExistsError:  # written meanwhile by another request
        raise _received(_exists(name), body) from None
    except (RejectedError, UploadError) as e:
        raise _received(e, body)
    finally:
        if sp._report is None:
            sp.abort()
    if not report:
        assert report.error is not None
        raise _received(report.error, body)
    return report


# the docstrings of every framework module's load() and spool(): the same functions over its request
LOAD_DOC = """The arrays of the request's file, as npzstream.load returns them, made while the body
    arrives.  Raises RejectedError (the file's verdict, a limit, the budget) or UploadError (the
    request), each with .received; response() makes either an answer."""
SPOOL_DOC = """The request's file validated while it is written beside directory/name, moved there only
    when accepted (npzstream.spool).  name must be a plain file name (check_name) and must not
    exist unless overwrite=True (409).  Returns the accepted Report; raises as load() does (a
    rejected upload is deleted at once, and the rest of the body is not read)."""
RESPONSE_DOC = """A RejectedError or UploadError as a JSON response for the client (npzstream.http_response:
    400, 409, 413, or 503 with Retry-After; a body of ok, code, rule, message, detail, hint,
    member, name, offset, limit, received)."""


def _exists(name: str) -> UploadError:
    return UploadError("%s exists already" % _quote(name), code="exists", rule="UPLOAD.exists", status=409)


# ---- a refusal as an HTTP answer -------------------------------------------------------------

# what the client is told for the rules whose own hint speaks to whoever configures the parser
# (a limit to raise, a lenient flag, a policy to relax): the client cannot do that
_CLIENT_HINTS = (
    ("LIMIT.budget.full", "the server is busy: send the file again later"),
    ("LIMIT.", "the file is larger than this server accepts (the detail gives the numbers): send a smaller file"),
    ("HDR-SIZE.", "the .npy header is longer than this server accepts: write the file again with np.save"),
    ("S-NDIM.", "the array has more dimensions than this server accepts"),
    ("S-NPY-TRAIL.", "bytes follow the array: write the file again with np.save"),
    ("S-HDR-WS.after-dict", "the .npy header was written by a writer other than NumPy: write the file again with np.save"),
    ("POLICY.", "the file is not what this server accepts (the detail says what differs)"),
    ("NOMEM.", "the server ran out of memory: send the file again later"),
    ("CALL.", "the server failed: report it to its operator"),
)


def _client_hint(e: RejectedError) -> Optional[str]:
    rule = e.rule or ""
    for prefix, hint in _CLIENT_HINTS:
        if rule.startswith(prefix):
            return hint
    return e.hint


def http_response(e: Union[RejectedError, UploadError, FileExistsError], *,
                  retry_after: int = RETRY_AFTER) -> Tuple[int, Dict[str, str], Dict[str, Any]]:
    """A refusal as (status, headers, JSON body) for the client who sent the upload (a
    RejectedError, an UploadError, or the FileExistsError of a Spool that would replace a file):

    - 400 for the file's fault (and a request the helpers refuse: UploadError's own status, 409
      for a name that exists);
    - 413 for a limit (the body's "limit" gives its name, its value and what the file needed);
    - 503 with Retry-After when the memory budget stayed full, or the server ran out of memory.

    The body: ok (false), code, rule, message, detail, hint, member, name, offset, limit,
    received.  The hint tells the client what was wrong with what it sent; never how to
    configure the server (a limit's own hint, "raise max_bytes", is for the operator)."""
    if isinstance(e, FileExistsError):
        received = getattr(e, "received", 0)
        e = _exists(os.path.basename(e.filename2 or e.filename or ""))
        e.received = received
    if isinstance(e, UploadError):
        return e.status, {}, {"ok": False, "code": e.code, "rule": e.rule, "message": e.message,
                              "received": e.received}
    headers: Dict[str, str] = {}
    rule = e.rule or ""
    if rule == "LIMIT.budget.full" or e.code == "nomem":
        status = 503
        headers["Retry-After"] = str(retry_after)
    elif e.code == "limit":
        status = 413
    elif e.code == "bad_call":
        status = 500
    else:
        status = 400
    body: Dict[str, Any] = {"ok": False, "code": e.code, "rule": e.rule, "message": e.message, "detail": e.detail,
                            "hint": _client_hint(e), "member": e.member,
                            "name": None if e.name is None else e.name.decode("utf-8", "replace"),
                            "offset": e.offset, "received": getattr(e, "received", None)}
    if e.limit is not None:
        body["limit"] = e.limit._asdict()
    return status, headers, body
