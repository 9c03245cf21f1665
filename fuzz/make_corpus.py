#!/usr/bin/python3
"""Write the fuzz seed corpus and the fuzz_state prefix table.

usage: /usr/bin/python3 fuzz/make_corpus.py [--out corpus]

Writes corpus/<harness>/ for every harness in fuzz/ (small files, < 4 KiB each) and
fuzz/state_prefixes.h (the prefixes fuzz_state picks with its first byte).  Sources:
  - real NumPy output (np.save / np.savez / np.savez_compressed, pipe-written archives,
    structured dtypes, v2.0 and v3.0 headers), made here with the NumPy of /usr/bin/python3;
  - the hand-made good and bad inputs of tests/bad/cases.py (every error code);
  - byte builders from tests/bad/zipbuild.py.
The wrappers in fuzz_zip_lfh.c, fuzz_dd.c, fuzz_cd.c and fuzz_deflate.c rebuild the same
archives in C; the seeds below are the exact bytes those wrappers expect for a valid file.
Deterministic: running it twice gives the same files.  Old generated seeds in the harness
directories are removed first; files with SHA-1 names (added by `make fuzz-merge`) are kept;
corpus/regress/ and corpus/peers/ are never touched.
"""
import argparse
import hashlib
import io
import os
import re
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(ROOT, "tests", "bad"))
from zipbuild import (FF32, Member, build_zip, cdh_bytes, dd_bytes, deflate,  # noqa: E402
                      eocd_bytes, npy, z64_extra)

import numpy as np  # noqa: E402

HARNESSES = ("fuzz_stream", "fuzz_split", "fuzz_npy_header", "fuzz_descr", "fuzz_zip_lfh", "fuzz_dd",
             "fuzz_cd", "fuzz_deflate", "fuzz_state", "fuzz_limits", "fuzz_npz_mut", "fuzz_par")
MAX_SEED = 4096

# ----------------------------------------------------------------------------- helpers


def canon(descr="'<i4'", fortran="False", shape="(2,)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


# fz_npy_small() of common.c: <i4 (2,), bytes 1, 8, 15, ...
SMALL = npy(canon(), bytes((i * 7 + 1) & 0xFF for i in range(8)))
BLOB = b"Name: Test\nVersion: 1\n"


def np_bytes(arr, version=None):
    b = io.BytesIO()
    if version is None:
        np.save(b, arr, allow_pickle=False)
    else:
        np.lib.format.write_array(b, np.asanyarray(arr), version=version, allow_pickle=False)
    return b.getvalue()


class Pipe:
    """A write-only, unseekable file: zipfile then writes data descriptors (bit 3)."""

    def __init__(self):
        self.buf = bytearray()

    def write(self, b):
        self.buf += b
        return len(b)

    def flush(self):
        pass

    def read(self, *a):  # np.savez only checks that it exists
        raise io.UnsupportedOperation("read")


def np_savez(compressed=False, pipe=False, **arrays):
    f = Pipe() if pipe else io.BytesIO()
    (np.savez_compressed if compressed else np.savez)(f, **arrays)
    return bytes(f.buf) if pipe else f.getvalue()


def numpy_files():
    """(name, bytes) of real NumPy output."""
    out = []
    arrays = {
        "f8": np.arange(4, dtype="<f8"),
        "i4-2d": np.arange(6, dtype="<i4").reshape(2, 3),
        "fortran": np.asfortranarray(np.arange(6, dtype="<i2").reshape(2, 3)),
        "be-f4": np.arange(3, dtype=">f4"),
        "bool": np.array([True, False, True]),
        "c16": np.array([1 + 2j], dtype="<c16"),
        "u3": np.array(["abc", "de"]),
        "s2": np.array([b"ab", b"c"]),
        "0d": np.array(7, dtype="<i8"),
        "empty": np.zeros((0, 3), dtype="<f4"),
        "struct": np.zeros(2, dtype=[("a", "<i4"), ("b", "<f4", (2,))]),
        "nested": np.zeros(1, dtype=[("x", [("p", "u1"), ("q", ">i2")]), ("y", "S3")]),
        "titles": np.zeros(1, dtype={"names": ["a"], "formats": ["<i4"], "titles": ["T"]}),
        "offsets": np.zeros(1, dtype={"names": ["a", "b"], "formats": ["u1", "<i4"], "offsets": [0, 4]}),
        "void": np.zeros(2, dtype="V5"),
        "datetime": np.array(["2020-01-01"], dtype="<M8[D]"),
        "timedelta": np.array([5], dtype="<m8[s]"),
        "f2": np.arange(3, dtype="<f2"),
        "ndim5": np.zeros((1, 1, 2, 1, 1), dtype="u1"),
    }
    for k, a in arrays.items():
        out.append(("np-save-" + k + ".npy", np_bytes(a)))
    out.append(("np-v2.npy", np_bytes(np.arange(3, dtype="<i4"), (2, 0))))
    out.append(("np-v3-unicode-field.npy", np_bytes(np.zeros(1, dtype=[("\u00e9t\u00e9", "<i4")]), (3, 0))))
    out.append(("np-v3.npy", np_bytes(np.arange(2, dtype="<u2"), (3, 0))))
    a, b = np.arange(5, dtype="<i4"), np.array(["xy"])
    out.append(("np-savez.npz", np_savez(a=a, b=b)))
    out.append(("np-savez-compressed.npz", np_savez(True, a=a, b=b)))
    out.append(("np-savez-pipe.npz", np_savez(pipe=True, a=a, b=b)))
    out.append(("np-savez-compressed-pipe.npz", np_savez(True, True, a=np.zeros(100, "<i2"), s=arrays["struct"])))
    out.append(("np-savez-empty.npz", np_savez()))
    out.append(("np-savez-0d.npz", np_savez(x=arrays["0d"], e=arrays["empty"])))
    out.append(("np-savez-struct.npz", np_savez(s=arrays["nested"], t=arrays["titles"])))
    return out


def case_seeds():
    """(name, bytes, code) from tests/bad/cases.py: every accept case, up to 8 per error code,
    and a sample of the truncations."""
    try:
        from cases import cases
    except Exception as e:  # pragma: no cover
        print("make_corpus: tests/bad/cases.py not usable (%s); no hand-made seeds" % e, file=sys.stderr)
        return []
    per = {}
    out = []
    for c in cases():
        if len(c.data) > MAX_SEED:
            continue
        key = c.code or "accept"
        per[key] = per.get(key, 0) + 1
        limit = 40 if key == "accept" else 12 if key == "truncated" else 8
        if key == "truncated" and per[key] % 29:
            continue
        if (key != "truncated" and per[key] > limit) or c.args:
            continue
        out.append(("case-" + c.name, c.data, c.code))
    return out


def write(dirpath, name, data):
    assert len(data) <= MAX_SEED, (name, len(data))
    os.makedirs(dirpath, exist_ok=True)
    with open(os.path.join(dirpath, name), "wb") as f:
        f.write(data)


def npy_header_text(b):
    """(version, header text) of a .npy."""
    if b[6] == 1:
        n = struct.unpack("<H", b[8:10])[0]
        return 1, b[10:10 + n]
    n = struct.unpack("<I", b[8:12])[0]
    return b[6], b[12:12 + n]


# ----------------------------------------------------------------------------- per harness


def seeds_stream(real, cases):
    out = [(n, b) for n, b in real if len(b) <= MAX_SEED]
    out += [(n, b) for n, b, _ in cases]
    return out


def seeds_split(real, cases):
    out = []
    scheds = [b"\x20", b"\x40", b"\x00", b"\x03\x01\x00\x07", b"\x02\xe0\x00", b"\x05\x01\x02\x03\x00\x05",
              b"\x11\x10", b"\x04\x00\x01\x00\x02", b"\x01\x05"]
    pool = [(n, b) for n, b in real if len(b) <= 1500] + [(n, b) for n, b, c in cases if c is None][:20]
    for i, (n, b) in enumerate(pool):
        s = scheds[i % len(scheds)]
        out.append(("split-%02d-%s" % (i, n), s + b))
    return out


def seeds_npy_header(real):
    out = []
    for n, b in real:
        if not n.endswith(".npy"):
            continue
        v, t = npy_header_text(b)
        ctl = {1: 0, 2: 1, 3: 2}[v]
        out.append(("hdr-" + n, bytes([ctl | 0x10]) + t))
    # containers: stored and deflated npz member, more data
    t = npy_header_text(SMALL)[1]
    out.append(("hdr-stored-npz", bytes([0x08 | 0x10]) + t))
    out.append(("hdr-deflated-npz", bytes([0x0C | 0x10]) + t))
    out.append(("hdr-len-off", bytes([0x03 | 0x90]) + t))
    for k, txt in enumerate([
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }",
            "{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}",
            "{\"descr\": \"<i4\", \"fortran_order\": False, \"shape\": (2,)}",
            "{'descr':'<i4','fortran_order':False,'shape':(2L,)}",
            "{'descr': '<i4', 'fortran_order': True, 'shape': (1, 2), }",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (), }",
            "{'descr': '|O', 'fortran_order': False, 'shape': (2,), }",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), 'x': 1}",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (-1,), }",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (9223372036854775807, 2), }",
            "{'descr': '<i4', 'fortran_order': 0, 'shape': (2,), }",
            "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), '\\x41': 1}"]):
        out.append(("hdr-hand-%02d" % k, bytes([0x10]) + txt.encode() + b" " * 7 + b"\n"))
    # NumPy's exact text (the parser's fast path) and its near misses, padded as NumPy pads
    fast = {
        "exact-f4": "{'descr': '<f4', 'fortran_order': False, 'shape': (16,), }",
        "exact-3d-fortran": "{'descr': '>c16', 'fortran_order': True, 'shape': (2, 3, 4), }",
        "exact-0d": "{'descr': '<M8[10s]', 'fortran_order': False, 'shape': (), }",
        "miss-object": "{'descr': '|O', 'fortran_order': False, 'shape': (3,), }",
        "miss-not-tuple": "{'descr': '<i8', 'fortran_order': False, 'shape': (16), }",
        "miss-trailing-comma": "{'descr': '<i8', 'fortran_order': False, 'shape': (2, 3,), }",
        "miss-leading-zero": "{'descr': '<i8', 'fortran_order': False, 'shape': (016,), }",
        "miss-overflow": "{'descr': '<i8', 'fortran_order': False, 'shape': (9223372036854775808,), }",
        "bad-size": "{'descr': '<i8', 'fortran_order': False, 'shape': (4611686018427387904, 2), }",
        "miss-long": "{'descr': '<i8', 'fortran_order': False, 'shape': (3L,), }",
        "bad-descr": "{'descr': '<f3', 'fortran_order': False, 'shape': (3,), }",
    }
    for name, txt in fast.items():
        pad = (64 - (10 + len(txt) + 1) % 64) % 64
        out.append(("fast-" + name, b"\x00" + txt.encode() + b" " * pad + b"\n"))
    out.append(("fast-miss-tab", b"\x00" + fast["exact-f4"].encode() + b"\t\n"))
    return out


DESCRS = [
    "'<f8'", "'<i4'", "'|b1'", "'|u1'", "'>c8'", "'<U3'", "'|S5'", "'|V12'", "'<M8[ms]'", "'<m8[D]'",
    "'|O'", "'<f16'", "'i'", "'float64'", "'<i4' ", "u'<i4'", "\"<f4\"",
    "[('a', '<i4'), ('b', '<f4')]",
    "[('a', '<i4', (2, 3)), ('b', '|S3')]",
    "[('x', [('p', '|u1'), ('q', '>i2')]), ('y', '|S3')]",
    "[(('title', 'a'), '<i4')]",
    "[('', '|V4'), ('b', '<i4')]",
    "[('a', '<i4'), ('a', '<f4')]",
    "[('a', [('b', [('c', [('d', '<i4')])])])]",
    "[('a', '<i4', ())]",
    "[('a', '<i4', 3)]",
    "[]",
    "[('\\u00e9', '<i4')]",
    "{'names': ['a'], 'formats': ['<i4']}",
    "[('a', '|O')]",
    "[('a', '<i4'),]",
]


def seeds_descr():
    out = []
    for i, d in enumerate(DESCRS):
        ctl = (i * 5) & 3 | (0x10 if i % 3 == 0 else 0) | (4 if "\\u" in d else 0)
        out.append(("descr-%02d" % i, bytes([ctl]) + d.encode("utf-8")))
    return out


def seeds_zip_lfh():
    out = []
    forms = {"pipe": 0, "pipe3114": 0, "dd32": 1, "dd64nosig": 2, "dd32nosig": 3}
    for st in ("file", "py3114", "pipe", "pipe3114", "legacy", "dd32", "dd32nosig", "dd64nosig"):
        for method in (0, 8):
            for blob in (0, 1):
                if blob and method == 0 and st in forms:
                    continue  # stored + bit 3 blob is rejected by design; keep the seeds valid
                content = BLOB if blob else SMALL
                name = "meta" if blob else "a.npy"
                b, L = build_zip([Member(name, content, method, st)])
                ctl = forms.get(st, 0) | (4 if blob else 0)
                hdr = b[4:L.m[0]["data"]]
                out.append(("lfh-%s-m%d-%s" % (st, method, "blob" if blob else "npy"), bytes([ctl]) + hdr))
    b, L = build_zip([Member("\u00e9.npy", SMALL, 0, "legacy", flags=0x800)])
    out.append(("lfh-utf8-name", bytes([0]) + b[4:L.m[0]["data"]]))
    b, L = build_zip([Member("a.npy", SMALL, 0, "legacy", lfh_extra=struct.pack("<HH", 0x5455, 5) + b"\x01abcd")])
    out.append(("lfh-extra-ut", bytes([0]) + b[4:L.m[0]["data"]]))
    b, L = build_zip([Member("a.npy", SMALL, 0, "legacy")])
    out.append(("lfh-second-member", bytes([8]) + b[4:L.m[0]["data"]]))
    return out


def seeds_dd():
    out = []
    for ctl in range(16):
        method = 8 if ctl & 1 else 0
        content = BLOB if ctl & 4 else SMALL
        data = deflate(content) if method == 8 else content
        crc, cs, us = zlib.crc32(content), len(data), len(content)
        forms = [dd_bytes(crc, cs, us, True, True), dd_bytes(crc, cs, us, False, True)]
        if ctl & 2:
            forms += [dd_bytes(crc, cs, us, False, False)]
        else:
            forms += [dd_bytes(crc, cs, us, True, False)]
        for k, f in enumerate(forms):
            if (ctl & 4) and method == 0 and k:
                continue
            out.append(("dd-c%02d-f%d" % (ctl, k), bytes([ctl]) + f))
    return out


def cd_prefix():
    """The two members fuzz_cd.c puts before the fuzz bytes, with their CD records."""
    b, L = build_zip([Member("a.npy", SMALL, 0, "legacy"), Member("b.npy", SMALL, 8, "pipe")])
    return b, L


def seeds_cd():
    out = []
    b, L = cd_prefix()
    pre = b[:L.cd_start]
    out.append(("cd-plain", b[L.cd_start:]))
    members = [Member("a.npy", SMALL, 0, "legacy"), Member("b.npy", SMALL, 8, "pipe")]
    variants = {
        "comment": dict(comment=b"hello"),
        "z64": dict(z64={}),
        "z64-ext": dict(z64=dict(size=44 + 8, ext=b"\x00" * 8)),
        "cd-zip64": dict(extra_cd=()),
        "dup": dict(extra_cd=({"of": 0},)),
        "order": dict(cd_order=[1, 0]),
        "count": dict(eocd=dict(count=3)),
        "after": dict(after=b"PK\x05\x06"),
    }
    for k, kw in variants.items():
        ms = members
        if k == "cd-zip64":
            ms = [Member("a.npy", SMALL, 0, "legacy", cd_zip64=True), Member("b.npy", SMALL, 8, "pipe")]
        bb, LL = build_zip(ms, **kw)
        assert bb[:LL.cd_start] == pre, k
        out.append(("cd-" + k, bb[LL.cd_start:]))
    # a CD entry comment and a non-ZIP64 extra field, by hand
    crc = zlib.crc32(SMALL)
    d = deflate(SMALL)
    cd = cdh_bytes(b"a.npy", 0x314, 20, 0, 0, crc, len(SMALL), len(SMALL), 0, comment=b"entry comment")
    cd += cdh_bytes(b"b.npy", 0x314, 20, 8, 8, crc, len(d), len(SMALL), L.m[1]["lfh"],
                    extra=struct.pack("<HH", 0x7875, 11) + b"\x01\x04\xe8\x03\x00\x00\x04\xe8\x03\x00\x00")
    out.append(("cd-entry-comment-extra", cd + eocd_bytes(2, len(cd), L.cd_start)))
    return out


def seeds_deflate():
    out = []
    contents = [SMALL, np_bytes(np.arange(64, dtype="<i4")), np_bytes(np.zeros((16, 16), "<f8")),
                np_bytes(np.array(["abc"])), np_bytes(np.zeros(0, "<f4"))]
    for i, c in enumerate(contents):
        for lvl, strat in ((6, zlib.Z_DEFAULT_STRATEGY), (0, zlib.Z_DEFAULT_STRATEGY), (9, zlib.Z_FIXED),
                           (1, zlib.Z_HUFFMAN_ONLY)):
            co = zlib.compressobj(lvl, zlib.DEFLATED, -15, 8, strat)
            s = co.compress(c) + co.flush()
            if len(s) + 1 > MAX_SEED:
                continue
            ctl = (i + lvl) % 8
            out.append(("deflate-c%d-l%d-s%d" % (i, lvl, strat), bytes([ctl]) + s))
    # two deflate blocks (a full flush in the middle), and an empty stream
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    s = co.compress(SMALL[:40]) + co.flush(zlib.Z_FULL_FLUSH) + co.compress(SMALL[40:]) + co.flush()
    out.append(("deflate-two-blocks", b"\x01" + s))
    co = zlib.compressobj(6, zlib.DEFLATED, -15)
    out.append(("deflate-empty", b"\x00" + co.compress(b"") + co.flush()))
    out.append(("deflate-blob", b"\x02" + deflate(BLOB * 4)))
    for ctl in (0x08, 0x10, 0x18, 0x19, 0x20, 0x21, 0x0C):
        out.append(("deflate-bad-sizes-%02x" % ctl, bytes([ctl]) + deflate(BLOB * 4 if ctl & 1 else SMALL)))
    return out


def state_prefixes():
    """(expected state, expected content state or '', bytes, cut): file cut at `cut`."""
    P = []
    small = SMALL
    hl = len(small) - 8
    P += [("NPY_CONTENT", "C_PRE", small, 3), ("NPY_CONTENT", "C_HDR", small, 20),
          ("NPY_CONTENT", "C_DATA", small, hl + 3), ("NPY_TAIL", "C_DONE", small, len(small)),
          ("START", "", small, 0)]
    v3 = np_bytes(np.zeros(1, dtype=[("\u00e9", "<i4"), ("b", [("c", "u1")])]), (3, 0))
    P.append(("NPY_CONTENT", "C_HDR", v3, 30))
    ms = [Member("a.npy", small, 0, "file"), Member("meta", BLOB * 3, 0, "legacy"),
          Member("b.npy", small, 8, "pipe"), Member("c.npy", small, 8, "dd32nosig")]
    b, L = build_zip(ms, z64={}, comment=b"archive comment")
    m = L.m
    nm = lambda i: len(ms[i].name)  # noqa: E731
    P += [("ZIP_SIG", "", b, 2), ("ZIP_LFH", "", b, 10), ("ZIP_LFH_NAME", "", b, 32),
          ("ZIP_LFH_EXTRA", "", b, 30 + nm(0) + 3),
          ("ZIP_STORED", "C_SNIFF", b, m[0]["data"] + 3), ("ZIP_STORED", "C_PRE", b, m[0]["data"] + 8),
          ("ZIP_STORED", "C_HDR", b, m[0]["data"] + 20), ("ZIP_STORED", "C_DATA", b, m[0]["data"] + hl + 2),
          ("ZIP_STORED", "C_BLOB_SNIFF", b, m[1]["data"] + 10),
          ("ZIP_DEFLATED", "C_SNIFF", b, m[2]["data"] + 2), ("ZIP_DEFLATED", "", b, m[2]["data_end"] - 2),
          ("ZIP_DD", "", b, m[2]["dd"] + 5), ("ZIP_DD", "", b, m[3]["dd"] + 3),
          ("ZIP_SIG", "", b, m[1]["lfh"] + 1),
          ("ZIP_CDH", "", b, L.cd[0] + 10), ("ZIP_CDH_NAME", "", b, L.cd[1] + 46 + 2),
          ("ZIP_CDH", "", b, L.cd[3] + 45),
          ("ZIP_Z64_EOCD", "", b, L.z64eocd + 12), ("ZIP_Z64_LOC", "", b, L.z64loc + 8),
          ("ZIP_EOCD", "", b, L.eocd + 10), ("ZIP_EOCD_COMMENT", "", b, L.eocd + 22 + 4),
          ("ZIP_TAIL", "", b, L.total)]
    b2, L2 = build_zip([Member("a.npy", small, 0, "legacy", cd_zip64=True)])
    P.append(("ZIP_CDH_EXTRA", "", b2, L2.cd[0] + 46 + 5 + 6))
    crc = zlib.crc32(small)
    lfh = b2[:L2.cd_start]
    cd = cdh_bytes(b"a.npy", 0x314, 20, 0, 0, crc, len(small), len(small), 0, comment=b"entry comment")
    b3 = lfh + cd + eocd_bytes(1, len(cd), len(lfh))
    P.append(("ZIP_CDH_COMMENT", "", b3, len(lfh) + 46 + 5 + 4))
    big = np_bytes(np.arange(3000, dtype="<i4"))
    # written to a pipe (sizes in a descriptor): the parser inflates what each push brings
    # (a member of known size gathers pushes shorter than 32 KiB before inflating them)
    b4, L4 = build_zip([Member("a.npy", big, 8, "pipe")])
    P.append(("ZIP_DEFLATED", "C_DATA", b4, (L4.m[0]["data"] + L4.m[0]["data_end"]) // 2))
    P.append(("ZIP_STORED", "C_BLOB", b, m[1]["data"] + 20))  # past the blob's sniff (16 bytes)
    return P


# States the parser passes through within a call and never waits in (NEED_INPUT is never returned
# there): no prefix can leave it in them.
TRANSIENT = {"NPY_MEMBER_END", "ZIP_MEMBER_BEGIN", "ZIP_CONTENT_END", "ZIP_MEMBER_END", "END_EMIT", "DONE", "FAILED"}


def table_states():
    """The rows of the state table (src/base/states.h: X(NAME, step, scope, record, doc)) and the content
    machine's states, in order."""
    h = open(os.path.join(os.path.dirname(HERE), "src", "base", "states.h")).read()
    top = h[h.index("#define NPZS_STATE_MAP(X)"):h.index("#define NPZS_CSTATE_MAP(X)")]
    cs = h[h.index("#define NPZS_CSTATE_MAP(X)"):h.index("enum npzs_state {")]
    return re.findall(r"\bX\((\w+),", top), re.findall(r"\bX\((C_\w+),", cs)


def check_prefixes(prefixes):
    """Every label a row of the table, and every state the parser can wait in given a prefix."""
    states, cstates = table_states()
    for st, cs, _, _ in prefixes:
        if st not in states or (cs and cs not in cstates):
            sys.exit("make_corpus: prefix labelled %s/%s: not in src/base/states.h" % (st, cs))
    missing = [s for s in states if s not in TRANSIENT and s not in {p[0] for p in prefixes}]
    if missing:
        sys.exit("make_corpus: no state prefix for %s (src/base/states.h)" % ", ".join(missing))


def write_state_header(prefixes, path):
    lines = ["/* Generated by fuzz/make_corpus.py -- do not edit.  Prefixes for fuzz_state:",
             " * feeding `bytes` (no finish) leaves the parser in `state` / content `cstate`. */",
             "static const struct fz_prefix { const char *state, *cstate; size_t n; const unsigned char *bytes; }",
             "    fz_prefixes[] = {"]
    for st, cs, data, cut in prefixes:
        bts = data[:cut]
        body = "".join("\\x%02x" % x for x in bts)
        chunks = [body[i:i + 96] for i in range(0, len(body), 96)] or [""]
        lines.append('    {"%s", "%s", %d,' % (st, cs, len(bts)))
        lines.append('     (const unsigned char *)"%s"' % chunks[0])
        lines += ['     "%s"' % c for c in chunks[1:]]
        lines[-1] += "},"
    lines.append("};")
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def limits_ctl(i):
    h = hashlib.sha256(b"limits%d" % i).digest()
    c = bytearray(h[:8])
    if i % 4 == 0:
        c[6] = 255
    if i % 3 == 0:
        c[6] = 1 + i % 7
    return bytes(c)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", default=os.path.join(ROOT, "corpus"))
    a = ap.parse_args()
    for h in HARNESSES:  # drop old generated seeds; keep what `make fuzz-merge` added (sha1 names)
        d = os.path.join(a.out, h)
        if os.path.isdir(d):
            for f in os.listdir(d):
                if not re.fullmatch("[0-9a-f]{40}", f):
                    os.remove(os.path.join(d, f))
    real = numpy_files()
    cases = case_seeds()
    sets = {
        "fuzz_stream": seeds_stream(real, cases),
        "fuzz_split": seeds_split(real, cases),
        "fuzz_par": seeds_split(real, cases),  # the same layout: [ctl][schedule][file]
        "fuzz_npy_header": seeds_npy_header(real),
        "fuzz_descr": seeds_descr(),
        "fuzz_zip_lfh": seeds_zip_lfh(),
        "fuzz_dd": seeds_dd(),
        "fuzz_cd": seeds_cd(),
        "fuzz_deflate": seeds_deflate(),
    }
    prefixes = state_prefixes()
    check_prefixes(prefixes)
    write_state_header(prefixes, os.path.join(HERE, "state_prefixes.h"))
    st = []
    for i, (s, cs, data, cut) in enumerate(prefixes):
        st.append(("state-%02d-%s%s" % (i, s, "-" + cs if cs else ""), bytes([i]) + data[cut:]))
    sets["fuzz_state"] = [x for x in st if len(x[1]) <= MAX_SEED]
    pool = [(n, b) for n, b in real if len(b) <= 1200][:16] + [(n, b) for n, b, c in cases if c is None][:24]
    sets["fuzz_limits"] = [("limits-%02d-%s" % (i, n), limits_ctl(i) + b) for i, (n, b) in enumerate(pool)
                           if len(b) + 8 <= MAX_SEED]
    sets["fuzz_npz_mut"] = [(n, b) for n, b in real if n.endswith(".npz")] + \
        [(n, b) for n, b, c in cases if c is None and b[:2] == b"PK"]
    total = 0
    for h, seeds in sets.items():
        for n, b in seeds:
            write(os.path.join(a.out, h), n, b)
            total += len(b)
        print("%-16s %4d seeds" % (h, len(seeds)))
    rd = os.path.join(a.out, "regress")
    os.makedirs(rd, exist_ok=True)
    readme = os.path.join(rd, "README.md")
    if not os.path.exists(readme):
        with open(readme, "w") as f:
            f.write("Crash/hang/leak reproducers found by fuzzing: one file per finding, named "
                    "`<harness>-<what>.bin`.  `make regress` replays every file here through every harness.\n")
    print("total %d bytes" % total)


if __name__ == "__main__":
    main()
