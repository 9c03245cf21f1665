"""Policies: what the caller accepts, as a Policy and its MemberPolicy values (immutable
snapshots), a dict, or a JSON file; the one JSON text each is written as (the dict -> JSON
writer, which reports a fault at its field), compiled by the library once while it is in the
cache; and the compiled policy an entry point's policy= stands for."""
from __future__ import annotations

import collections
import collections.abc as abc
import dataclasses
import io
import itertools
import json
import math
import numbers
import os
import sys
import threading
import types
import warnings
from dataclasses import dataclass
from json.encoder import encode_basestring, encode_basestring_ascii
from typing import Any, Dict, List, Mapping, Optional, Sequence, Tuple, Union, cast

import numpy

from . import _npzstream
from ._errors import PolicyError, PolicyWarning
from ._regular import _NotRegularFile, _open_regular


def _path(path: str, key: str) -> str:
    """The field below path, as the library names it ("members.images.shape"): the key's text as
    the library writes it (hidden characters and a lone surrogate escaped, at most 64 bytes)."""
    key = _npzstream.name_text(key)
    return path + "." + key if path else key


def _dtype_spec(t: Any, path: str) -> Any:
    """A NumPy dtype or scalar type as a policy writes it: its dtype.str ("<f4": what
    ``arr.dtype == t`` accepts), a name for a type of any size or unit ("str", "bytes", "void",
    "datetime64", "timedelta64"), or a structured dtype's field list (its descr)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # NumPy 1.x warns about an abstract type (numpy.floating)
            dt: Optional[numpy.dtype] = numpy.dtype(t)
    except TypeError:
        dt = None
    if dt is None or (isinstance(t, type) and dt.type is not t):
        raise PolicyError("%s is not a dtype (a NumPy type such as numpy.float32, or \"<f4\" or \"float32\")"
                          % getattr(t, "__name__", repr(t)), path=path)
    if dt.names is not None:
        return _freeze(dt.descr, path)
    if dt.itemsize == 0 and dt.kind in "SUV":
        return {"S": "bytes", "U": "str", "V": "void"}[dt.kind]
    if dt.kind in "Mm" and "[" not in dt.str:
        return "datetime64" if dt.kind == "M" else "timedelta64"
    return dt.str


def _freeze(v: Any, path: str) -> Any:
    """A policy value as the immutable, JSON-shaped snapshot a Policy holds: mappings read-only
    with string keys, lists and tuples tuples, the rest as _leaf makes it."""
    t = type(v)
    if t is str or t is int or t is bool or v is None:
        return v
    if t is dict or isinstance(v, abc.Mapping):
        return types.MappingProxyType({_str_key(k, path): _freeze(x, _path(path, k)) for k, x in v.items()})
    if t is list or t is tuple or isinstance(v, (list, tuple)):
        return tuple(_freeze(x, "%s[%d]" % (path, i)) for i, x in enumerate(v))
    if isinstance(v, (str, MemberPolicy)):
        return v  # a MemberPolicy was frozen when it was made
    leaf = _leaf(v, path)
    return _freeze(leaf, path) if type(leaf) is tuple else leaf  # a structured dtype's field list


def _frozen_fields(obj: Any) -> None:
    """Freeze the set fields of a Policy or MemberPolicy being made."""
    try:
        for k, v in _set_fields(obj).items():
            object.__setattr__(obj, k, _freeze(v, k))
    except RecursionError:
        raise _too_deep() from None


def _too_deep() -> PolicyError:
    # a container that holds itself (json.dumps: "Circular reference detected"), or nesting far
    # deeper than the library takes
    return PolicyError("nested too deeply (a dict or list that holds itself?)")


def _str_key(k: Any, path: str) -> str:
    if type(k) is not str and not isinstance(k, str):  # json.dumps would have made it a string
        raise PolicyError("a key is a string, not %s (%r)" % (type(k).__name__, k), path=path)
    return k


def _leaf(v: Any, path: str) -> Any:
    """A value that is not a string, a mapping or a list, as JSON holds it: NumPy numbers as
    Python's, a NumPy dtype or type as its policy spelling.  What JSON cannot hold (NaN, any
    other object) is a PolicyError naming the field; the rest is the library's to judge when it
    compiles the text."""
    if isinstance(v, numpy.bool_):
        return bool(v)
    if isinstance(v, numbers.Integral):
        return int(v)
    if isinstance(v, numbers.Real):
        f = float(v)
        if f != f:
            raise PolicyError("NaN is not a value JSON can hold (a range bound is a number, or null for none)",
                              path=path)
        return f
    if isinstance(v, numpy.dtype) or (isinstance(v, type) and issubclass(v, numpy.generic)):
        return _dtype_spec(v, path)
    if isinstance(v, type):
        raise PolicyError("the type %s is not JSON (a dtype is a string, \"<f8\" or \"float64\", or a NumPy dtype or "
                          "type such as numpy.float64)" % v.__name__, path=path)
    raise PolicyError("%s is not JSON (a policy holds dicts, lists, strings, numbers, booleans and None; "
                      "a dtype may also be a NumPy dtype or type)" % type(v).__name__, path=path)


def _thaw(v: Any, keep: bool = False) -> Any:
    """The JSON form of a frozen value: dicts and lists (keep: MemberPolicy objects as they are)."""
    if isinstance(v, MemberPolicy):
        return v if keep else v.to_dict()
    if isinstance(v, abc.Mapping):
        return {k: _thaw(x, keep) for k, x in v.items()}
    if isinstance(v, tuple):
        return [_thaw(x, keep) for x in v]
    return v


def _set_fields(obj: Any) -> Dict[str, Any]:
    """A policy dataclass's fields that are set (not None), in their order."""
    return {f.name: getattr(obj, f.name) for f in dataclasses.fields(obj) if getattr(obj, f.name) is not None}


def _json_str(s: str) -> str:
    if not s.isascii():
        try:
            s.encode("utf-8")
        except UnicodeEncodeError:  # a lone surrogate: written as its \u escape, which the library refuses
            return encode_basestring_ascii(s)
    return encode_basestring(s)


class _Text:
    """The JSON text of a policy (what the library compiles), from a Policy's frozen values or a
    dict as the caller gave it (in one pass: a dict is written on every call), written here
    rather than by json.dumps: an infinite bound is written 1e400 (which the library reads as
    infinity, as the command line does), a non-string key is refused (json.dumps makes it a
    string), and each value's place is kept, so that a fault the library finds in the text (a
    number too long, a NUL, a lone surrogate) is reported at its field."""

    def __init__(self, tree: Any) -> None:
        self._out: List[str] = []
        self._spans: List[Tuple[int, int, str]] = []  # (first piece, end piece, field)
        try:
            self._put(tree, "")
        except RecursionError:
            raise _too_deep() from None
        self.text = "".join(self._out).encode("utf-8")

    def _put(self, v: Any, path: str) -> None:
        out = self._out
        start = len(out)
        t = type(v)
        if t is str:
            out.append(_json_str(v))
        elif t is dict or t is types.MappingProxyType:
            self._put_object(v, path)
        elif t is list or t is tuple:
            out.append("[")
            for i, x in enumerate(v):
                if i:
                    out.append(",")
                self._put(x, "%s[%d]" % (path, i))
            out.append("]")
        elif t is int:
            try:
                out.append(int.__repr__(v))
            except ValueError:  # more digits than Python writes (sys.set_int_max_str_digits)
                raise PolicyError("number too long", path=path) from None
        elif t is bool:
            out.append("true" if v else "false")
        elif t is float and v == v:
            out.append("1e400" if v == math.inf else "-1e400" if v == -math.inf else float.__repr__(v))
        elif v is None:
            out.append("null")
        elif isinstance(v, MemberPolicy):
            self._put_object(_set_fields(v), path)
        elif isinstance(v, abc.Mapping):
            self._put_object(v, path)
        elif isinstance(v, (list, tuple)):
            self._put(tuple(v), path)
            return
        elif isinstance(v, str):
            out.append(_json_str(str.__str__(v)))
        else:
            self._put(_leaf(v, path), path)
            return
        self._spans.append((start, len(out), path))

    def _put_object(self, v: Mapping[str, Any], path: str) -> None:
        out = self._out
        out.append("{")
        for i, (k, x) in enumerate(v.items()):
            if i:
                out.append(",")
            at = len(out)
            out.append(_json_str(_str_key(k, path)))
            out.append(":")
            sub = _path(path, k)
            self._put(x, sub)
            self._spans.append((at, len(out), sub))
        out.append("}")

    def field_at(self, offset: int) -> str:
        """The innermost field whose text holds the byte at offset."""
        ends = list(itertools.accumulate(len(p.encode("utf-8")) for p in self._out))
        best, width = "", None
        for a, b, path in self._spans:
            lo, hi = ends[a - 1] if a else 0, ends[b - 1] if b else 0
            if lo <= offset < hi and (width is None or hi - lo < width):
                best, width = path, hi - lo
        return best


#: Compiled policies by their exact text: a policy text (a dict's snapshot, a file's bytes, a
#: Policy's) is compiled once while it is here, whatever object it came from; at most
#: _COMPILED_MAX of them and _COMPILED_BYTES of text in all, the least recently used dropped.
_COMPILED: "collections.OrderedDict[bytes, Any]" = collections.OrderedDict()
_COMPILED_MAX = 16
_COMPILED_BYTES = 2 * _npzstream.POLICY_MAX_TEXT
_COMPILED_LOCK = threading.Lock()


def _compile(tree: Any, text: Optional[bytes] = None, source: Optional[str] = None) -> Tuple[bytes, Any]:
    """(text, compiled policy): the library compiles the text (a file's bytes, or else the one
    _Text writes of tree: a Policy's fields, or a caller's dict as it is now); a fault raises
    PolicyError, at its line and column in a file, at its field otherwise."""
    writer = None
    if text is None:
        writer = _Text(tree)
        text = writer.text
    with _COMPILED_LOCK:
        c = _COMPILED.get(text)
        if c is not None:
            _COMPILED.move_to_end(text)
            return text, c
    try:
        c = _npzstream.Policy(text)
    except PolicyError as e:
        if writer is not None:  # written from a dict: the field says where, not a line
            e.line = e.column = None
            if not e.path:
                e.path = writer.field_at(e.offset)
        e.source = source
        raise
    _warn_npy_keys(tree)
    with _COMPILED_LOCK:
        _COMPILED[text] = c
        while len(_COMPILED) > _COMPILED_MAX or (len(_COMPILED) > 1 and sum(map(len, _COMPILED)) > _COMPILED_BYTES):
            _COMPILED.popitem(last=False)
    return text, c


def _outside_level() -> int:
    """The stacklevel of warnings.warn, called from the caller of this function, that names the
    first frame outside this package: the user's line, whatever path led into the package."""
    here = os.path.dirname(os.path.abspath(__file__))
    f = sys._getframe(1)
    level = 1
    while f.f_back is not None and os.path.dirname(os.path.abspath(f.f_code.co_filename)) == here:
        f = f.f_back
        level += 1
    return level


def _warn_npy_keys(tree: Any) -> None:
    members = tree.get("members") if isinstance(tree, abc.Mapping) else None
    if not isinstance(members, abc.Mapping):
        return
    for k in members:
        if isinstance(k, str) and k.endswith(".npy"):
            warnings.warn(PolicyWarning(
                "policy: members.%s: a policy's keys are np.load's, without '.npy': this one names the member "
                "stored as %r; for the member stored as %r, write %r" % (k, k + ".npy", k, k[:-4])),
                stacklevel=_outside_level())


def _read_policy(path: Union[str, "os.PathLike[str]"]) -> Tuple[bytes, str]:
    """A policy file's bytes, read up to one more than the library takes (a larger file is refused
    by it, never read whole) from a regular file (a FIFO or a device is refused, not waited on)."""
    src = os.fspath(path)
    try:
        fd = _open_regular(src)
    except _NotRegularFile as e:
        raise PolicyError(str(e), source=src) from None
    with io.FileIO(fd, "rb") as f:
        return _read_upto(f, _npzstream.POLICY_MAX_TEXT + 1), src


def _read_upto(f: io.FileIO, n: int) -> bytes:
    out = bytearray()
    while len(out) < n:
        b = f.read(n - len(out))
        if not b:
            break
        out += b
    return bytes(out)


@dataclass(frozen=True)
class MemberPolicy:
    """What one member (or, as Policy.array, a .npy's array) must be.  Every field is optional;
    None means "anything".  The fields and their meaning are those of the JSON policy (README.md,
    "Policies"): dtype is a list of dtype.str values ("<f4"), NumPy names ("float32"), NumPy
    dtypes or types (numpy.float32: its dtype.str) or field lists ([["x", "<f4"], ["y", "<i2",
    [2]]]); shape a list of integers, dimension names (shared between members), "*" (any one) and
    "..." (any number); range (min, max), None for no bound, an infinity for none either.

    Immutable, as a Policy: the values are snapshotted when it is made (lists become tuples)."""
    dtype: Optional[Sequence[Any]] = None
    shape: Optional[Sequence[Union[int, str]]] = None
    finite: Optional[bool] = None
    range: Optional[Tuple[Optional[float], Optional[float]]] = None
    optional: Optional[bool] = None
    fortran_order: Optional[bool] = None
    byte_order: Optional[str] = None
    elements: Optional[Tuple[Optional[int], Optional[int]]] = None
    max_bytes: Optional[Union[int, str]] = None
    sha256: Optional[str] = None
    kind: Optional[str] = None
    blob_kinds: Optional[Sequence[str]] = None

    def __post_init__(self) -> None:
        _frozen_fields(self)

    def to_dict(self) -> Dict[str, Any]:
        return {k: _thaw(v) for k, v in _set_fields(self).items()}

    def __reduce__(self) -> Any:
        return (_rebuild_policy, (type(self), self.to_dict(), None))


@dataclass(frozen=True)
class Policy:
    """A declarative description of the files you accept, enforced by the C library while the
    bytes arrive (the same semantics as ``npzstream check --policy FILE``).

        policy = npzstream.Policy(
            members={"images": npzstream.MemberPolicy(dtype=["<f4"], shape=["N", 28, 28], finite=True),
                     "labels": {"dtype": ["<i8"], "shape": ["N"], "range": [0, 9]}},
            dims={"N": (1, 60000)}, allow_other_members=False, allow_blobs=False)

    Immutable: the values are snapshotted when it is made (dicts become read-only mappings,
    lists tuples; changing the dicts it was made from changes nothing), so one Policy gives one
    verdict through every entry point and in every worker; dataclasses.replace(policy, ...)
    makes another.  Policy.from_dict(d) and Policy.load(path) read the JSON form; to_dict() and
    to_json() write it.  The library compiles it once, when first used or by check(); a fault
    raises PolicyError naming the field.  Make a Policy once and pass it to every call: a dict
    given as policy= is snapshotted and written out on each call (linear in its size), then
    compiled unless the same text was compiled lately."""
    members: Optional[Mapping[str, Union[MemberPolicy, Mapping[str, Any]]]] = None
    array: Optional[Union[MemberPolicy, Mapping[str, Any]]] = None
    dims: Optional[Mapping[str, Any]] = None
    allow_other_members: Optional[bool] = None
    allow_blobs: Optional[Union[bool, Sequence[str]]] = None
    max_members: Optional[int] = None
    max_total_bytes: Optional[Union[int, str]] = None
    format: Optional[str] = None
    hash: Optional[str] = None

    def __post_init__(self) -> None:
        _frozen_fields(self)

    def to_dict(self) -> Dict[str, Any]:
        """The JSON form, as dicts and lists (an infinite range bound as float("inf"))."""
        return {k: _thaw(v) for k, v in _set_fields(self).items()}

    def to_json(self, **kw: Any) -> str:
        """The JSON text the library compiles; with keywords, json.dumps(self.to_dict(), **kw) (for
        display: an infinite bound is then written Infinity, which no JSON reader takes)."""
        if kw:
            return json.dumps(self.to_dict(), **kw)
        return _Text(_set_fields(self)).text.decode("utf-8")

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> "Policy":
        """A Policy of the JSON form d (as json.load gives it), compiled now (PolicyError)."""
        if not isinstance(d, Mapping):
            raise TypeError("a policy is a dict (the JSON object), not %s" % type(d).__name__)
        tree = _freeze(d, "")
        text, compiled = _compile(tree)  # an unknown field is named by the library
        p = cls(**tree)
        p._keep(text, compiled)
        return p

    @classmethod
    def load(cls, path: Union[str, "os.PathLike[str]"]) -> "Policy":
        """The policy in a JSON file, compiled now from the file's very bytes, as
        ``npzstream check --policy FILE`` and ``policy=path`` compile them (the fields are those
        bytes as json.loads reads them).  The file must be a regular file of at most 1 MiB."""
        text, src = _read_policy(path)
        text, compiled = _compile(None, text, src)
        p = cls(**json.loads(text))  # the library took it: valid JSON, known fields
        _warn_npy_keys(_set_fields(p))
        p._keep(text, compiled)
        return p

    def check(self) -> None:
        """Compile the policy now: raises PolicyError for a fault."""
        self._compiled()

    def _keep(self, text: bytes, compiled: Any) -> None:
        object.__setattr__(self, "_text", text)
        object.__setattr__(self, "_compiled_policy", compiled)

    def _compiled(self) -> Any:
        c = self.__dict__.get("_compiled_policy")
        if c is None:
            self._keep(*_compile(_set_fields(self)))
            c = self.__dict__["_compiled_policy"]
        return c

    def _source(self) -> bytes:
        """The text the policy was compiled from (what scan's workers compile)."""
        self._compiled()
        return cast(bytes, self.__dict__["_text"])

    def __reduce__(self) -> Any:
        return (_rebuild_policy, (type(self), {k: _thaw(v, keep=True) for k, v in _set_fields(self).items()},
                                  self.__dict__.get("_text")))


def _rebuild_policy(cls: Any, d: Dict[str, Any], text: Optional[bytes]) -> Any:
    p = cls(**d)
    if text is not None:  # the text it was compiled from, compiled again where it is unpickled
        p._keep(*_compile(None, text))
    return p


PolicyLike = Union[Policy, Mapping[str, Any], str, os.PathLike[str]]
_CompiledPolicy = _npzstream.Policy  # what the library compiled (check_file passes one on)


def _policy_compiled(policy: Optional[PolicyLike]) -> Tuple[Optional[bytes], Any]:
    """(text, compiled policy) of policy= (None: none): a Policy's own, a dict's snapshot, a
    file's bytes."""
    if policy is None:
        return None, None
    if isinstance(policy, Policy):
        return policy._source(), policy._compiled()
    if isinstance(policy, Mapping):
        return _compile(policy)  # written as it is now: the caller's dict, read on each call
    if isinstance(policy, (str, os.PathLike)):
        p = Policy.load(policy)
        return p._source(), p._compiled()
    raise TypeError("policy must be a dict, a Policy or the path of a JSON file, not %s" % type(policy).__name__)


def _policy(policy: Optional[PolicyLike]) -> Any:
    """The compiled policy of policy= (None: none)."""
    if isinstance(policy, _CompiledPolicy):
        return policy
    return _policy_compiled(policy)[1]

