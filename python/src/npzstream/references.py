"""Validated kerchunk references: `npzstream.refs(path)`, the reference set (version 1) of the
stored arrays of an accepted .npz or .npy, as `npzstream refs FILE` prints it.

    refs = npzstream.refs("s3://bucket/run7.npz", storage_options={"anon": False})
    fs = fsspec.filesystem("reference", fo=refs, remote_protocol="s3")
    group = zarr.open_group(fs.get_mapper(""), mode="r", zarr_format=2)
    w = group["w"][...]                      # np.load's array, read by byte range

The file is streamed once through the validator (the policy and limits are load's): nothing is
returned for a rejected file (FileRejectedError, naming it).  A stored member's array data is one
run of the file's bytes, where its content starts plus its .npy header's length: a zarr v2 array
of one chunk (chunks = shape, no compressor, no filter, the header's dtype and order) whose chunk
is that byte range.  What zarr would not read exactly as np.load does is never referenced, and
the group's attributes ("npzstream" in .zattrs) say so for every member: a deflated member (raw
deflate with the .npy header inside: no standard codec reads it), a structured dtype, a dtype
zarr has not (long double, an empty item such as 'S0'), a member that is not an array, a key that
is not a zarr name (a '/' in it, or a leading '.').  A .npy is the root array itself (a group
when its array cannot be referenced).

The command line (cli/cmd_refs.c) makes the same set: _reason() below and refs_reason() there
test the same things in the same order (tests/engines/test_refs.py compares the two)."""
from __future__ import annotations

import importlib
import json
import os
import re
from typing import Any, Dict, List, Optional

from . import _files

__all__ = ["refs"]

_READ = 1 << 20


def _zarr_dtype(dt: str) -> bool:
    """zarr reads the dtype as NumPy does (dtype.str: byte order, kind, item size, and a
    datetime's unit): no long double ('<f16', '<c32'), no empty item ('|S0', '<U0', '|V0')."""
    digits = re.match(r"[0-9]*", dt[2:])
    size = int(digits.group()) if digits and digits.group() else 0
    kind = dt[1:2]
    if kind and kind in "biuMm":
        return True
    if kind == "f":
        return size in (2, 4, 8)
    if kind == "c":
        return size in (8, 16)
    if kind and kind in "SUV":
        return size > 0
    return False


def _key(m: Dict[str, Any]) -> Optional[str]:
    """np.load's key of a member (its name without '.npy'); None for a .npy.  The library accepts
    only ASCII names, or UTF-8 ones flagged so."""
    raw = m["name"]
    if raw is None:
        return None
    name = raw.decode("utf-8")
    return name[:-4] if name.endswith(".npy") and len(name) > 4 else name


def _reason(m: Dict[str, Any]) -> Optional[str]:
    """Why a member is not referenced, or None: refs_reason() of cli/cmd_refs.c."""
    if m["kind"] != "array":
        return "not an array"
    if m["method"] != "stored":
        return "deflated"
    if not isinstance(m["descr"], str):
        return "structured dtype"
    if not _zarr_dtype(m["dtype"]):
        return "dtype zarr cannot read"
    key = _key(m)
    if key is not None and ("/" in key or m["name"].startswith(b".")):
        return "key is not a zarr name"
    return None


def _text(obj: Any) -> str:
    """Zarr metadata as kerchunk keeps it: JSON text, compact, UTF-8 kept (as the command line
    writes it)."""
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=False)


def _zarray(m: Dict[str, Any]) -> str:
    shape = list(m["shape"])
    return _text({"chunks": [d or 1 for d in shape], "compressor": None, "dtype": m["dtype"], "fill_value": None,
                  "filters": None, "order": "F" if m["fortran_order"] else "C", "shape": shape, "zarr_format": 2})


def _zattrs(members: List[Dict[str, Any]], fmt: str) -> str:
    listed = []
    for m in members:
        why = _reason(m)
        entry: Dict[str, Any] = {"key": _key(m), "referenced": why is None}
        if why is not None:
            entry["reason"] = why
        listed.append(entry)
    return _text({"npzstream": {"format": fmt, "members": listed}})


def _data_at(m: Dict[str, Any]) -> int:
    """Where a stored array's data starts: its content's start plus its header; where the parser
    saw the data in place, it must be there."""
    at = int(m["content_at"]) + int(m["header_len"])
    if m.get("data_offset", at) != at:
        raise RuntimeError("npzstream: the data of member %d is at %r, its header ends at %d"
                           % (m["index"], m.get("data_offset"), at))
    return at


def reference_set(members: List[Dict[str, Any]], fmt: str, url: str) -> Dict[str, Any]:
    """The kerchunk reference set (version 1) of an accepted file's members (the Stream's dicts)."""
    out: Dict[str, Any] = {}
    root_array = fmt == "npy" and len(members) == 1 and _reason(members[0]) is None
    if root_array:
        out[".zarray"] = _zarray(members[0])
    else:
        out[".zgroup"] = _text({"zarr_format": 2})
    out[".zattrs"] = _zattrs(members, fmt)
    for m in members:
        if _reason(m) is not None:
            continue
        key = _key(m)
        prefix = "" if key is None else key + "/"
        if key is not None:
            out[prefix + ".zarray"] = _zarray(m)
        if m["nbytes"]:
            chunk = ".".join("0" for _ in m["shape"]) or "0"
            out[prefix + chunk] = [url, _data_at(m), int(m["nbytes"])]
    return {"version": 1, "refs": out}


def refs(path: Any, *, url: Optional[str] = None, storage_options: Optional[Dict[str, Any]] = None,
         policy: Any = None, **limits: Any) -> Dict[str, Any]:
    """The kerchunk reference set (version 1) of the stored arrays of the .npz or .npy at path
    (a local path, or a URL fsspec opens with storage_options), made only once the whole file
    was accepted (policy and limits as load's).  url: what the references name (default: path as
    given).  Raises FileRejectedError (a RejectedError naming the file) for a rejected file,
    OSError when it cannot be read.  See the module's documentation for what is referenced."""
    name = os.fspath(path)
    pol = _files.shippable_policy(policy)
    limits = _files.checked_limits(limits)
    s = _files.stream(limits, policy=pol)
    scheme, _ = _files.split_url(name)
    if scheme:
        fsspec = importlib.import_module("fsspec")  # by name: optional (npzstream[refs])
        f = fsspec.open(name, "rb", **(storage_options or {})).open()
    else:
        f = open(name, "rb", buffering=0)
    try:
        for chunk in iter(lambda: f.read(_READ), b""):
            s.feed(chunk)
        s.finish()
    except _files.npzstream.RejectedError as e:
        raise _files.FileRejectedError.of(name, e) from None
    finally:
        f.close()
    return reference_set(s.members, s.format, name if url is None else url)
