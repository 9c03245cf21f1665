"""What the readers of many files (npzstream.ray, npzstream.dask, npzstream.refs) share: a
rejection that names its file, the policy and limits checked once where the reader is called and
sent to the workers, a rejection as a JSON record, and opening a path or URL.

Everything here is built on the package's public API, except `stream()` and `engine_limits()`:
the extension's Stream (its member dicts say where a member's content and data start, which a
Report does not) with the package's own conversion of the limits.  They are the one place that
reaches into the package, so that a change there breaks here, loudly, in the suites that run
with make test (tests/engines/test_refs.py)."""
from __future__ import annotations

import dataclasses
import os
from typing import Any, Callable, Dict, List, Optional, Tuple

import npzstream
from npzstream import _npzstream
from npzstream._limits import _limits as _limit_values
from npzstream._policy import _policy as _compiled_policy

#: the keyword that caps the bytes load keeps: load's and Loader's, not one of the library's limits
MAX_BYTES = "max_bytes"


class FileRejectedError(npzstream.RejectedError):
    """A RejectedError that names its file: path is the URL (or local path) of the rejected
    object, as the reader was given it.  str() starts with it; every field of RejectedError is
    there (code, offset, member, name, rule, message, detail, hint)."""

    def __init__(self, path: str, message: str, **fields: Any) -> None:
        super().__init__(message, **fields)
        self.path = path

    @classmethod
    def of(cls, path: str, e: npzstream.RejectedError) -> "FileRejectedError":
        return cls(path, e.message, code=e.code, offset=e.offset, member=e.member, name=e.name, rule=e.rule,
                   content_offset=e.content_offset, detail=e.detail, hint=e.hint)

    def __str__(self) -> str:
        return "%s: %s" % (self.path, super().__str__())

    def __reduce__(self):  # picklable: it crosses process boundaries (Ray, Dask)
        return (_rebuild, (self.path, self.message, self.code, self.offset, self.member, self.name, self.rule,
                           self.content_offset, self.detail, self.hint))


def _rebuild(path, message, code, offset, member, name, rule, content_offset, detail, hint):
    return FileRejectedError(path, message, code=code, offset=offset, member=member, name=name, rule=rule,
                             content_offset=content_offset, detail=detail, hint=hint)


def record(path: str, e: npzstream.RejectedError) -> Dict[str, Any]:
    """A rejection as one JSON object (a line of a rejects file): the file and the error's fields."""
    name = e.name.decode("utf-8", "replace") if isinstance(e.name, bytes) else e.name
    return {"path": path, "code": e.code, "rule": e.rule, "offset": e.offset, "member": e.member, "name": name,
            "message": e.message, "detail": e.detail}


def shippable_policy(policy: Any) -> Optional[npzstream.Policy]:
    """policy= (a dict, a Policy, a JSON file's path) checked here, as a Policy that pickles:
    the workers compile it (once per copy); a path is read here, where it exists."""
    if policy is None:
        return None
    if isinstance(policy, npzstream.Policy):
        p = policy
    elif isinstance(policy, (str, os.PathLike)):
        p = npzstream.Policy.load(policy)
    elif isinstance(policy, dict) or hasattr(policy, "keys"):
        npzstream.Validator(policy=policy)  # the library's PolicyError, naming the field, first
        p = npzstream.Policy.from_dict(policy)
    else:
        raise TypeError("policy must be a dict, a Policy or the path of a JSON file, not %s" % type(policy).__name__)
    p.check()  # PolicyError here, not in a worker
    return dataclasses.replace(p)  # a copy without the compiled policy (the extension's, which does not pickle)


def checked_limits(limits: Dict[str, Any]) -> Dict[str, Any]:
    """The limits (and max_bytes) of a reader, checked here: a bad one is a TypeError or
    ValueError where the reader is called, not in a worker."""
    npzstream.Loader(**limits)
    return dict(limits)


def engine_limits(limits: Dict[str, Any]) -> Dict[str, int]:
    """The limits as the extension's Stream takes them (max_bytes left out: it is load's)."""
    return _limit_values({k: v for k, v in limits.items() if k != MAX_BYTES})


def stream(limits: Dict[str, Any], on_header: Optional[Callable[[Dict[str, Any]], Any]] = None,
           policy: Optional[npzstream.Policy] = None) -> Any:
    """The extension's Stream with these limits and policy, keeping no data: its member dicts
    say where each member's content ("content_at") and data ("content_at" + "header_len";
    "data_offset" where stored data was seen in place) start.  on_header(member) is called at
    each HEADER (its return value ignored)."""
    def header(m: Dict[str, Any]) -> None:
        if on_header is not None:
            on_header(m)
        return None
    return _npzstream.Stream(engine_limits(limits), header if on_header is not None else None, False, (1 << 64) - 1, 1,
                             None if policy is None else _compiled_policy(policy))


def split_url(path: str) -> Tuple[str, str]:
    """("s3://", "bucket/key") for a URL, ("", path) for a local path."""
    if "://" in path:
        scheme, rest = path.split("://", 1)
        return scheme + "://", rest
    return "", path


def expand(paths: Any, fs: Any = None) -> List[str]:
    """A path, a URL or a list of them; globs ('*', '?', '[') expanded (fsspec's glob for URLs,
    sorted), directories not: each entry names one file."""
    items = [paths] if isinstance(paths, (str, os.PathLike)) else list(paths)
    out: List[str] = []
    for p in items:
        p = os.fspath(p)
        if not any(c in p for c in "*?["):
            out.append(p)
            continue
        scheme, _ = split_url(p)
        if fs is None and not scheme:
            import glob
            out += sorted(glob.glob(p))
            continue
        out += sorted(x if "://" in x else scheme + x for x in fs.glob(p))
    return out
