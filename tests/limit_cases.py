"""Every rejection a limit decides, one case each: the input, the limits that make it fail, the
code and rule it fails with, and its numbers (the limit's name, its value in force, what the input
needed or declared).  One table for the entry points: tests/cli/test_cli.py test_limit_numbers
(check --json, ls --json and the text verdict) and tests/python/pytest_budget.py
test_library_limit_numbers (load, aload, validate, open); tests/api/input.c test_limit_numbers
builds the same cases in C.  A new rule a limit decides gets a case here (test_limit_numbers_only_for_limits
in tests/cli finds the rules from the binary's table).  Standard library only.

    from limit_cases import CASES
    for name, c in CASES.items():
        c.data, c.limits, c.flags, c.code, c.rule, c.numbers   # numbers: (name, value, needed)

needed is None where it depends on the build (max_memory's need is the parser's own memory):
then it must be more than the value."""
import os
import struct
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad"))
from zipbuild import Member, build_zip, npy  # noqa: E402  (stdlib only)


class Case:
    def __init__(self, data, limits, code, rule, numbers, flags=()):
        self.data = data
        self.limits = limits              # the Python keywords
        self.code = code
        self.rule = rule
        self.numbers = numbers            # (name, value, needed or None)
        self.flags = list(flags)          # command-line flags besides the limits'
        self.cli_limits = []              # the limits as the command line takes them
        for k, v in limits.items():
            self.cli_limits += ["--" + k.replace("_", "-"), str(v)]


def header_len(data):
    """The header length field of a .npy."""
    return struct.unpack("<H", data[8:10])[0] if data[6] == 1 else struct.unpack("<I", data[8:12])[0]


SMALL = npy("{'descr': '<i8', 'fortran_order': False, 'shape': (3,), }", bytes(24))
EXTRA = struct.pack("<HH", 0xCAFE, 96) + bytes(96)  # an extra field of 100 bytes (an unknown tag)


def archive(*members):
    return build_zip(list(members))[0]


def _cases():
    c = {}
    L, H, B = "limit", "header_too_large", "bad_shape"
    big = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }", bytes(8000))
    c["max_total_bytes.array"] = Case(big, {"max_total_bytes": 4096}, L, "LIMIT.max_total_bytes.array",
                                      ("max_total_bytes", 4096, len(big)))  # the header's bytes and the data's
    stored = archive(Member("data.bin", bytes(10000), style="legacy"))
    c["max_total_bytes.member"] = Case(stored, {"max_total_bytes": 4096}, L, "LIMIT.max_total_bytes.member",
                                       ("max_total_bytes", 4096, 10000))
    # its size unknown until it inflates (bit 3, a descriptor): it has shown one byte more than the limit
    streamed = archive(Member("data.bin", bytes(100000), 8, "pipe"))
    c["max_total_bytes.inflated"] = Case(streamed, {"max_total_bytes": 4096}, L, "LIMIT.max_total_bytes.inflated",
                                         ("max_total_bytes", 4096, 4097))
    three = npy("{'descr': [('a', '<f4'), ('b', '<f4'), ('c', '<f4')], 'fortran_order': False, 'shape': (2,), }",
                bytes(24))
    c["max_fields"] = Case(three, {"max_fields": 2}, L, "LIMIT.max_fields", ("max_fields", 2, 3))
    nested = npy("{'descr': [('a', [('b', [('c', '<f4')])])], 'fortran_order': False, 'shape': (2,), }", bytes(8))
    c["max_depth"] = Case(nested, {"max_depth": 1}, L, "LIMIT.max_depth", ("max_depth", 1, 2))
    five = archive(*[Member("m%d.npy" % i, SMALL, style="legacy") for i in range(5)])
    c["max_members"] = Case(five, {"max_members": 3}, L, "LIMIT.max_members", ("max_members", 3, 4))
    # .npy arrays back to back (--sequence): the members of a sequence are counted as well
    c["max_members.sequence"] = Case(SMALL * 3, {"max_members": 2}, L, "LIMIT.max_members", ("max_members", 2, 3),
                                     flags=["--sequence"])
    c["max_name_len"] = Case(five, {"max_name_len": 3}, L, "LIMIT.max_name_len", ("max_name_len", 3, 6))
    c["max_extra_len"] = Case(archive(Member("a.npy", SMALL, lfh_extra=EXTRA)), {"max_extra_len": 50}, L,
                              "LIMIT.max_extra_len", ("max_extra_len", 50, 100))
    c["max_extra_len.central"] = Case(archive(Member("a.npy", SMALL, style="legacy", cd_extra=EXTRA)),
                                      {"max_extra_len": 50}, L, "LIMIT.max_extra_len.central",
                                      ("max_extra_len", 50, 100))
    # a header of 9000 characters: its buffer does not fit beside the parser in 8 KiB
    long_header = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }" + " " * 8900, bytes(8))
    c["max_memory"] = Case(long_header, {"max_memory": 8192}, L, "LIMIT.max_memory", ("max_memory", 8192, None))
    c["max_header_size"] = Case(SMALL, {"max_header_size": 20}, H, "HDR-SIZE.bytes",
                                ("max_header_size", 20, header_len(SMALL)))
    # a v3 header's bytes: at least a quarter as many characters
    v3 = npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", bytes(8), version=(3, 0))
    c["max_header_size.v3-bytes"] = Case(v3, {"max_header_size": 20}, H, "HDR-SIZE.bytes",
                                         ("max_header_size", 20, -(-header_len(v3) // 4)))
    # 60 two-byte characters: fewer bytes than 4 x 100, more characters than 100
    v3c = npy("{'descr': [('%s', '<f4')], 'fortran_order': False, 'shape': (1,), }" % ("\u00e9" * 60), bytes(4),
              version=(3, 0))
    chars = len(v3c[12:12 + header_len(v3c)].decode("utf-8"))
    c["max_header_size.v3-characters"] = Case(v3c, {"max_header_size": 100}, H, "HDR-SIZE.characters",
                                              ("max_header_size", 100, chars))
    c["max_ndim"] = Case(npy("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", bytes(8)),
                         {"max_ndim": 2}, B, "S-NDIM.array", ("max_ndim", 2, 3))
    c["max_ndim.field"] = Case(npy("{'descr': [('a', '<f4', (1, 1, 1))], 'fortran_order': False, 'shape': (1,), }",
                                   bytes(4)), {"max_ndim": 2}, B, "S-NDIM.field", ("max_ndim", 2, 3))
    return c


CASES = _cases()
# the rules a limit decides: the library's table's ids that start so
PREFIXES = ("LIMIT.", "HDR-SIZE.", "S-NDIM.")
# (the inventory's INV.limit, where a limit stopped the listing that follows a rejection or the
# following of a member, has its numbers too: tests/cli/test_cli.py test_kept_going_limit_numbers,
# tests/inv/test_inv.c test_limits.  Python's own limits, LIMIT.max_bytes and the budget's, are
# tested in tests/python/pytest_budget.py.)


def numbers_ok(c, name, value, needed):
    """Whether (name, value, needed) are the case's numbers."""
    want = c.numbers
    if want[2] is None:
        return (name, value) == want[:2] and needed > value
    return (name, value, needed) == want
