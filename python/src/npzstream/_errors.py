"""What the package raises and warns: a rejection of the input (RejectedError), a fault of the
policy itself (PolicyError), a policy that likely says what was not meant (PolicyWarning).

They are defined here, in Python, and the extension imports this module when it is initialised
(_npzstream's module state holds the two classes it raises).  They pickle by their fields, so that
a report made in one of scan()'s worker processes arrives whole in the parent."""
# (no `from __future__ import annotations`: the classes are npzstream's, whose namespace has no
# typing names to resolve string annotations in)
from typing import Any, NamedTuple, Optional, Tuple


class Limit(NamedTuple):
    """The numbers of a "limit" rejection: the limit's name ("max_total_bytes", "max_bytes",
    "budget", ...), its value in force, and what the input needed or declared (bytes, members,
    characters: the limit's own unit)."""
    name: str
    value: int
    needed: int

    def words(self) -> str:
        """The numbers in words: "needs 209715200 bytes (200.0 MiB); max_bytes is 67108864 bytes
        (64.0 MiB)", "needs 4 members; max_members is 3"."""
        unit = _UNITS.get(self.name)
        if unit is None:
            return "needs %s; %s is %s" % (_bytes(self.needed), self.name, _bytes(self.value))
        return "needs %d %s; %s is %d" % (self.needed, unit, self.name, self.value)


# the limits not counted in bytes, and their unit
_UNITS = {"max_members": "members", "max_fields": "fields", "max_depth": "levels", "max_header_size": "characters",
          "max_ndim": "dimensions"}


def _bytes(n: int) -> str:
    """A byte count, with its size in MiB or GiB past 1 MiB."""
    for suffix, shift in (("GiB", 30), ("MiB", 20)):
        if n >= 1 << shift:
            return "%d bytes (%.1f %s)" % (n, n / (1 << shift), suffix)
    return "%d bytes" % n


class _Fields:
    """An exception whose fields are its constructor's arguments (the message, then keywords),
    named by _FIELDS in their order: kept as attributes, compared, and pickled as its class and
    their values (multiprocessing sends it to another process)."""
    _FIELDS: Tuple[str, ...]

    def _keep(self, *values: Any) -> None:
        assert len(values) == len(self._FIELDS)
        for f, v in zip(self._FIELDS, values):
            setattr(self, f, v)

    def _fields(self) -> Tuple[Any, ...]:
        return tuple(getattr(self, f) for f in self._FIELDS)

    def __reduce__(self) -> Any:
        return (_rebuild, (type(self), self._fields()))


def _rebuild(cls: Any, fields: Tuple[Any, ...]) -> Any:
    return cls(fields[0], **dict(zip(cls._FIELDS[1:], fields[1:])))


class RejectedError(_Fields, ValueError):
    """The input is not a valid .npy/.npz, breaks a limit, or breaks the caller's policy.

    code: stable name ("truncated", "bad_header", "crc_mismatch", "limit", "policy", ...);
    offset: absolute input offset; member: 0-based member index or None; name: the member's raw
    name (bytes) or None; rule: the stable rule id ("S-HDR-WS.after-dict", "LIMIT.max_bytes",
    "POLICY.dtype"); content_offset: the position inside the member's content, or None; detail:
    what a policy check found, in words, or None; hint: what can be done about it, or None; limit:
    when a limit decided the rejection (code "limit"; "header_too_large", HDR-SIZE.*; "bad_shape"
    for more dimensions than max_ndim, S-NDIM.*), the numbers (a `Limit`: which limit, its value
    in force, what the input needed or declared; detail then says them in words), else None."""
    _FIELDS = ("message", "code", "offset", "member", "name", "rule", "content_offset", "detail", "hint", "limit")
    message: str
    code: str
    offset: int
    member: Optional[int]
    name: Optional[bytes]
    rule: Optional[str]
    content_offset: Optional[int]
    detail: Optional[str]
    hint: Optional[str]
    limit: Optional[Limit]
    #: the request's body bytes read when an upload helper (npzstream.starlette, ...) raised it,
    #: else None (not a field: not compared, not pickled)
    received: Optional[int] = None

    def __init__(self, message: str, *, code: str, offset: int, member: Optional[int] = None,
                 name: Optional[bytes] = None, rule: Optional[str] = None,
                 content_offset: Optional[int] = None, detail: Optional[str] = None,
                 hint: Optional[str] = None, limit: Optional[Tuple[str, int, int]] = None) -> None:
        super().__init__(message)
        if hint is None and rule is not None:
            hint = _rule_hint(rule)
        if limit is not None:
            limit = Limit(*limit)
            if detail is None:
                detail = limit.words()
        self._keep(message, code, offset, member, name, rule, content_offset, detail, hint, limit)

    def __str__(self) -> str:
        if self.member is None:
            where = ""
        elif self.name is None:
            where = " in the array"  # a plain .npy has no members
        else:
            where = " in member %d (%r)" % (self.member, self.name.decode("utf-8", "replace"))
        detail = "" if self.detail is None else ": " + self.detail
        return "%s at offset %d%s: %s%s [%s]" % (self.code, self.offset, where, self.message, detail, self.rule)

    def __eq__(self, other: object) -> bool:  # the same rejection: the same fields (a pickled copy, a rerun)
        if not isinstance(other, RejectedError):
            return NotImplemented
        return self._fields() == other._fields()

    def __hash__(self) -> int:
        return hash(self._fields())


def _rule_hint(rule: str) -> Optional[str]:
    # imported here, not above: the extension imports this module while it is initialised
    from ._npzstream import rule_hint
    return rule_hint(rule)


class PolicyError(_Fields, ValueError):
    """A policy that is itself malformed (a usage error, not a rejection of the input).

    message: what is wrong; path: the field ("members.images.shape[1]", "" for the document);
    line, column: where in the JSON file (None for a dict or a Policy); offset: the byte offset
    in the JSON text; source: the file's path, or None."""
    _FIELDS = ("message", "path", "line", "column", "offset", "source")
    message: str
    path: str
    line: Optional[int]
    column: Optional[int]
    offset: int
    source: Optional[str]

    def __init__(self, message: str, *, path: str = "", line: Optional[int] = None,
                 column: Optional[int] = None, offset: int = 0, source: Optional[str] = None) -> None:
        super().__init__(message)
        self._keep(message, path, line, column, offset, source)

    def __str__(self) -> str:
        if self.source is None:
            where = ""
        elif self.line is None:
            where = "%s: " % self.source
        else:
            where = "%s:%d:%s: " % (self.source, self.line, self.column)
        return "policy: %s%s%s" % (where, self.path + ": " if self.path else "", self.message)


class PolicyWarning(UserWarning):
    """A policy that compiles but likely does not say what was meant: a `members` key that ends
    in ".npy" (a policy's keys are np.load's, without it: "w.npy" names the member stored as
    "w.npy.npy").  Issued once for each such key, when the policy is compiled."""


# named as they are caught and printed (npzstream.RejectedError: ...), where they are re-exported
for _cls in (Limit, RejectedError, PolicyError, PolicyWarning):
    _cls.__module__ = "npzstream"
del _cls
