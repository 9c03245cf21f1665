#!/usr/bin/python3
"""Hand-built BAD (and a few must-ACCEPT) inputs for `npzstream check`, one or more per rule.

    from cases import cases          # Case objects
    from cases import iter_cases     # (name, bytes, expected_code, expected_offset, extra_cli_args)

expected_code None means the input must be ACCEPTED (expected_offset is then None).
`strict` names the rule (npy.md section 2 / zip.md section 3.2) for cases where NumPy 1.24
accepts but npzstream must reject; `ambig` notes a case whose expected offset (or code) is
our best reading of the offset convention (listed in README.md).

Run it directly to list the cases:  /usr/bin/python3 tests/bad/cases.py [--numpy]
(--numpy also loads every case with NumPy and checks the `strict` marks.)
"""
import io
import os
import struct
import sys
import zipfile
import zlib
from collections import namedtuple

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from zipbuild import (MAGIC, FF32, Member, build_zip, cdh_bytes, deflate, dd_bytes, eocd_bytes,  # noqa: E402
                      lfh_bytes, npy, npy_marked, npy_preamble, pad_header, preamble_len, tlv, z64_extra,
                      z64eocd_bytes, z64loc_bytes)

Case = namedtuple("Case", "name data code offset args strict ambig sees")


def zstd_raw_frame(content):
    """A Zstandard frame (RFC 8878) holding content in raw blocks: the magic, a frame header with
    the single-segment flag and an 8-byte content size, then blocks of at most 128 KiB, the last
    one marked."""
    out = b"\x28\xb5\x2f\xfd" + bytes([0xE0]) + struct.pack("<Q", len(content))
    chunks = [content[i:i + (128 << 10)] for i in range(0, len(content), 128 << 10)] or [b""]
    for k, c in enumerate(chunks):
        out += struct.pack("<I", (len(c) << 3) | (k == len(chunks) - 1))[:3] + c
    return out


def C(name, data, code, offset, args=(), strict=None, ambig=None, sees=None):
    """A case that must be rejected.  sees: what np.load returns from it ({key: shape} for an
    array, {key: ("blob", size)}) when NumPy loads something other than the stream read: the
    rejection is then required, not a strict rule, and test_bad.py checks that NumPy does."""
    return Case(name, bytes(data), code, offset, list(args), strict, ambig, sees)


def A(name, data, args=(), ambig=None):
    """A case that must be accepted."""
    return Case(name, bytes(data), None, None, list(args), None, ambig, None)


# ------------------------------------------------------------------ npy bases

I4x2 = b"\x01\x00\x00\x00\x02\x00\x00\x00"           # <i4 shape (2,)
BASE = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }"


def canon(descr="'<i4'", fortran="False", shape="(2,)"):
    return "{'descr': %s, 'fortran_order': %s, 'shape': %s, }" % (descr, fortran, shape)


def good_npy(data=I4x2, **kw):
    return npy(canon(**kw), data)


def hmark(text, code, name, data=I4x2, version=(1, 0), pad=True, strict=None, ambig=None, args=()):
    b, off = npy_marked(text, data, version, pad)
    return C(name, b, code, off, args, strict, ambig)


def npy_cases():
    out = []
    add = out.append

    # ---- accept: writer output and the tolerated variants ----------------
    add(A("acc-npy-v1", good_npy()))
    add(A("acc-npy-v2", npy(BASE, I4x2, (2, 0))))
    add(A("acc-npy-v3", npy(BASE, I4x2, (3, 0))))
    add(A("acc-npy-no-padding", npy(BASE.replace(", }", "}"), I4x2, pad=False)))
    add(A("acc-npy-lead-space-tab", npy(" \t" + BASE, I4x2)))
    add(A("acc-npy-keys-any-order", npy("{'shape': (2,), 'fortran_order': False, 'descr': '<i4'}", I4x2)))
    add(A("acc-npy-double-quotes", npy('{"descr": "<i4", "fortran_order": False, "shape": (2,)}', I4x2)))
    add(A("acc-npy-newlines-inside", npy("{'descr': '<i4',\n 'fortran_order': False,\n\t'shape': (2,)\n}", I4x2)))
    add(A("acc-npy-L-suffix-v1", npy(canon(shape="(2L,)"), I4x2)))
    add(A("acc-npy-L-space-suffix-v2", npy(canon(shape="(2 L,)"), I4x2, (2, 0))))
    add(A("acc-npy-latin1-name-v1", npy(canon(descr="[('\xe9', '<i4')]"), I4x2)))
    add(A("acc-npy-escape-x41", npy(canon(descr="[('a\\x41\\'\\\\', '<i4')]"), I4x2)))
    add(A("acc-npy-scalar", good_npy(b"\x07\x00\x00\x00", shape="()")))
    add(A("acc-npy-zero-size", good_npy(b"", shape="(2, 0)")))
    add(A("acc-npy-fortran", good_npy(I4x2 * 2, fortran="True", shape="(2, 2)")))
    add(A("acc-npy-padding-field", good_npy(I4x2 * 2, descr="[('a', '<i4'), ('', '|V4')]")))
    add(A("acc-npy-title", good_npy(I4x2, descr="[(('t', 'a'), '<i4')]")))
    add(A("acc-npy-nested-subarray", good_npy(bytes(32), descr="[('c', ('<f8', (2,)), (2,))]", shape="(1,)")))
    add(A("acc-npy-types", good_npy(bytes(2 * (1 + 8 + 3 + 8 + 4 + 16 + 8 + 8)),
                                     descr="[('a', '|b1'), ('b', '>f8'), ('c', '|S3'), ('d', '<U2'), "
                                           "('e', '|V4'), ('f', '<c16'), ('g', '<M8[ns]'), ('h', '<m8[3s]')]")))
    add(A("acc-npy-S-int32max-empty", good_npy(b"", descr="'|S2147483647'", shape="(0,)")))
    # header exactly at the 10000-character limit (v1)
    t = pad_header(BASE.encode(), (1, 0))
    t = t[:-1] + b" " * (10000 - len(t)) + b"\n"
    add(A("acc-npy-header-10000", npy(t, I4x2, pad=False)))
    # v3: 10000 characters, 19xxx bytes: accepted (the limit counts characters)
    name = "\u6574" * 4950
    t = ("{'descr': [('%s', '<i4')], 'fortran_order': False, 'shape': (1,), }" % name)
    t = t + " " * (9999 - len(t)) + "\n"
    assert len(t) == 10000 and len(t.encode()) > 19000
    add(A("acc-npy-v3-utf8-10000-chars", npy(t.encode(), I4x2[:4], (3, 0), pad=False)))
    add(A("acc-npy-max-header-size-equal", good_npy(), args=["--max-header-size", str(len(good_npy()) - 10 - 8)]))

    # ---- C1 magic --------------------------------------------------------
    body = good_npy()[6:]
    for nm, mg in [("byte0", b"\x92NUMPY"), ("nul", b"\x00NUMPY"), ("lowercase", b"\x93numpy"),
                   ("last-byte", b"\x93NUMPX"), ("matlab", b"\x93MATLB")]:
        add(C("npy-magic-" + nm, mg + body, "bad_magic", 0))
    add(C("npy-magic-text", b"hello world, not an array\n", "bad_magic", 0))
    add(C("npy-magic-pickle", b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00", "bad_magic", 0))
    add(C("npy-magic-short-mismatch", b"\x93NX", "bad_magic", 0))
    add(C("npy-magic-zip-cd-sig", b"PK\x01\x02" + bytes(60), "bad_magic", 0))
    add(C("npy-magic-zip-spanning", b"PK\x07\x08" + good_npy(), "bad_magic", 0))
    for n in (0, 1, 4, 6, 7, 9):
        add(C("npy-short-%d" % n, good_npy()[:n], "truncated", n))

    # ---- P1 version -------------------------------------------------------
    for v in [(1, 1), (2, 1), (3, 1), (0, 0), (0, 1), (4, 0), (2, 2), (255, 255)]:
        b = bytearray(good_npy())
        b[6], b[7] = v
        add(C("npy-version-%d.%d" % v, b, "bad_version", 6))

    # ---- P2 header size ----------------------------------------------------
    t = pad_header(BASE.encode(), (1, 0))
    big = t[:-1] + b" " * (10001 - len(t)) + b"\n"
    add(C("npy-hlen-v1-10001", npy(big, I4x2, pad=False), "header_too_large", 8))
    add(C("npy-hlen-v2-10001", npy(big, I4x2, (2, 0), pad=False), "header_too_large", 8))
    add(C("npy-hlen-v1-65535", npy_preamble((1, 0), 65535) + t + I4x2, "header_too_large", 8))
    add(C("npy-hlen-v2-4GiB", npy_preamble((2, 0), 0xFFFFFFFF) + t + I4x2, "header_too_large", 8))
    add(C("npy-hlen-v3-40001", npy_preamble((3, 0), 40001) + t + I4x2, "header_too_large", 8))
    name = "\u6574" * 4952
    t3 = ("{'descr': [('%s', '<i4')], 'fortran_order': False, 'shape': (1,), }" % name)
    t3 = t3 + " " * (10000 - len(t3)) + "\n"
    assert len(t3) == 10001 and len(t3.encode()) < 40000
    add(C("npy-hlen-v3-10001-chars", npy(t3.encode(), I4x2[:4], (3, 0), pad=False), "header_too_large", 8))
    add(C("npy-hlen-cli-limit", good_npy(), "header_too_large", 8,
          args=["--max-header-size", str(len(good_npy()) - 10 - 8 - 1)]))

    # ---- P3 encoding (v3 UTF-8) -------------------------------------------
    def v3bad(nm, raw, ambig=None):
        txt = b"{'descr': [('a@@" + raw + b"', '<i4')], 'fortran_order': False, 'shape': (2,), }"
        add(hmark(txt, "bad_header", "npy-v3-utf8-" + nm, I4x2 * 1, (3, 0), ambig=ambig))
    v3bad("lone-continuation", b"\x80")
    v3bad("ff", b"\xff")
    v3bad("overlong-c0", b"\xc0\x80")
    v3bad("overlong-e0", b"\xe0\x80\x80", ambig="first invalid byte: E0 lead vs 80")
    v3bad("surrogate", b"\xed\xa0\x80", ambig="first invalid byte: ED lead vs A0")
    v3bad("truncated-seq", b"\xe6\xb4", ambig="first invalid byte: E6 lead vs the quote after it")
    v3bad("above-10ffff", b"\xf4\x90\x80\x80", ambig="first invalid byte: F4 lead vs 90")
    add(hmark(b"@@\xef\xbb\xbf" + BASE.encode(), "bad_header", "npy-v3-bom", I4x2, (3, 0)))
    add(C("npy-empty-header", npy_preamble((1, 0), 0) + I4x2, "bad_header", 10,
          ambig="no token at all: offset of the (missing) first token = end of preamble"))

    # ---- G1 whitespace / structure -----------------------------------------
    add(hmark("{'descr': '<i4',@@\r 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g1-cr", strict="S-HDR-WS"))
    add(hmark("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }@@\r\n", "bad_header", "npy-g1-crlf-end", pad=False, strict="S-HDR-WS"))
    add(hmark("{'descr': '<i4',@@\x0c 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g1-formfeed", strict="S-HDR-WS"))
    add(hmark("{'descr': '<i4',@@\x0b 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g1-vtab"))
    add(hmark("{'descr': '<i4', @@# comment\n 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g1-comment", strict="S-HDR-SYNTAX"))
    add(hmark("@@\n" + BASE, "bad_header", "npy-g1-leading-newline", strict="S-HDR-WS"))
    add(hmark(BASE + "@@\x00", "bad_header", "npy-g1-nul"))
    add(hmark(BASE + " @@x", "bad_header", "npy-g1-trailing-text"))
    add(hmark(BASE + "@@}", "bad_header", "npy-g1-trailing-brace"))
    add(hmark(BASE + "@@,", "bad_header", "npy-g1-trailing-comma-tuple"))
    add(hmark(BASE + "\n@@\n", "bad_header", "npy-g1-two-newlines", pad=False, strict="S-HDR-WS"))
    add(hmark(BASE + "\n@@ ", "bad_header", "npy-g1-space-after-newline", pad=False, strict="S-HDR-WS"))
    add(hmark("{'descr': '<i4',@@, 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g1-double-comma"))
    add(hmark("@@['descr', '<i4']", "bad_header", "npy-g1-list-not-dict"))
    add(hmark("@@('<i4', False, (2,))", "bad_header", "npy-g1-tuple-not-dict"))
    add(hmark("{'descr'@@, 'fortran_order', 'shape'}", "bad_header", "npy-g1-set-not-dict"))
    add(hmark("@@dict(descr='<i4', fortran_order=False, shape=(2,))", "bad_header", "npy-g1-call"))

    # ---- G2 strings ---------------------------------------------------------
    add(hmark("{'descr': '<i4' @@'', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-concat", strict="S-HDR-SYNTAX"))
    add(hmark("{'des' @@'cr': '<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-concat-key", strict="S-HDR-SYNTAX"))
    add(hmark("{'descr': @@'''<i4''', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-triple-quote",
              strict="S-HDR-SYNTAX", ambig="offending token = the whole '''...''' string (a lexer may see '' then ')"))
    add(hmark('{"descr": @@"""<i4""", "fortran_order": False, "shape": (2,), }', "bad_header", "npy-g2-triple-dquote",
              strict="S-HDR-SYNTAX", ambig="as npy-g2-triple-quote"))
    for p in "urbRUB":
        add(hmark("{'descr': @@%s'<i4', 'fortran_order': False, 'shape': (2,), }" % p, "bad_header",
                  "npy-g2-prefix-" + p + ("-upper" if p.isupper() else ""), strict=None if p in "bB" else "S-HDR-SYNTAX"))
    add(hmark("{'descr': @@f'<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-fstring"))
    for nm, esc in [("q", "\\q"), ("octal", "\\0"), ("short-hex", "\\x4"), ("named", "\\N{DIGIT ONE}"),
                    ("short-u", "\\u12"), ("line-continuation", "\\\n")]:
        add(hmark("{'descr': [('a@@%s', '<i4')], 'fortran_order': False, 'shape': (2,), }" % esc, "bad_header",
                  "npy-g2-escape-" + nm, strict=None if nm.startswith("short") else "S-HDR-SYNTAX",
                  ambig="bad escape: offset of the backslash (not the string's opening quote)"))
    add(hmark("{'descr': [('a@@\tb', '<i4')], 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-raw-tab",
              strict="S-HDR-SYNTAX"))
    add(hmark("{'descr': [('a@@\nb', '<i4')], 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-raw-newline"))
    add(hmark("{'descr': [('a@@\x01', '<i4')], 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g2-raw-ctl-01",
              strict="S-HDR-SYNTAX"))

    # ---- G3 keys -----------------------------------------------------------
    add(hmark("{'descr': '<i4', 'shape': (2,), @@}", "bad_header", "npy-g3-missing-fortran"))
    add(hmark("{'fortran_order': False, 'shape': (2,)@@}", "bad_header", "npy-g3-missing-descr"))
    add(hmark("{'descr': '<i4', 'fortran_order': False@@}", "bad_header", "npy-g3-missing-shape"))
    add(hmark("{@@}", "bad_header", "npy-g3-empty-dict"))
    add(hmark("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), @@'extra': 1, }", "bad_header", "npy-g3-extra-key"))
    add(hmark("{'descr': '<i4', @@'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g3-duplicate-key",
              strict="S-HDR-DUPKEY", ambig="code: bad_header chosen over duplicate_name ('duplicate member name or key')"))
    add(hmark("{'descr': '<i4', 'fortran_order': True, 'shape': (2,), @@'fortran_order': False}", "bad_header",
              "npy-g3-duplicate-key-last", strict="S-HDR-DUPKEY", ambig="as npy-g3-duplicate-key"))
    add(hmark("{@@1: '<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g3-int-key"))
    add(hmark("{@@None: '<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-g3-none-key"))
    add(hmark("{'Descr'@@: '<i4', 'fortran_order': False, 'shape': (2,), }".replace("'Descr'@@", "@@'Descr'"),
              "bad_header", "npy-g3-wrong-case-key"))

    # ---- G4 integers -------------------------------------------------------
    add(hmark(canon(shape="(@@0x2,)"), "bad_shape", "npy-g4-hex", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@0o2,)"), "bad_shape", "npy-g4-octal", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@0b10,)"), "bad_shape", "npy-g4-binary", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@+2,)"), "bad_shape", "npy-g4-plus", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@1_0,)"), "bad_shape", "npy-g4-underscore", I4x2 * 5, strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@02,)"), "bad_shape", "npy-g4-leading-zero"))
    add(hmark(canon(shape="(@@00,)"), "bad_shape", "npy-g4-double-zero", b"", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@2l,)"), "bad_shape", "npy-g4-lowercase-l"))
    add(hmark(canon(shape="(@@2LL,)"), "bad_shape", "npy-g4-LL"))
    add(hmark(canon(shape="(@@2L,)"), "bad_shape", "npy-g4-L-in-v3", version=(3, 0)))
    add(hmark(canon(shape="(@@0x2L,)"), "bad_shape", "npy-g4-hex-L", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@2.,)"), "bad_shape", "npy-g4-float-dot",
              ambig="float element: bad_shape at the number (a lexer may say bad_header at '.')"))

    # ---- G5 fortran_order ----------------------------------------------------
    for nm, v in [("zero", "0"), ("one", "1"), ("none", "None"), ("string", "'False'"), ("lower", "false")]:
        add(hmark(canon(fortran="@@" + v), "bad_header", "npy-g5-fortran-" + nm))

    # ---- S1-S4 shape -------------------------------------------------------
    add(hmark(canon(shape="@@[2]"), "bad_shape", "npy-s1-list"))
    add(hmark(canon(shape="@@2"), "bad_shape", "npy-s1-bare-int"))
    add(hmark(canon(shape="@@(2)"), "bad_shape", "npy-s1-paren-int", ambig="offset of '(' (start of the value)"))
    add(hmark(canon(shape="@@'(2,)'"), "bad_shape", "npy-s1-string"))
    add(hmark(canon(shape="@@None"), "bad_shape", "npy-s1-none"))
    add(hmark(canon(shape="(2, @@(1,))"), "bad_shape", "npy-s1-nested-tuple"))
    add(hmark(canon(shape="(@@-1,)"), "bad_shape", "npy-s2-negative", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@-2,)"), "bad_shape", "npy-s2-negative-2", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@-0,)"), "bad_shape", "npy-s2-minus-zero", b"", strict="S-HDR-INT"))
    add(hmark(canon(shape="(@@2.0,)"), "bad_shape", "npy-s2-float"))
    add(hmark(canon(shape="(@@True,)"), "bad_shape", "npy-s2-bool"))
    add(hmark(canon(shape="(@@None,)"), "bad_shape", "npy-s2-none-elem"))
    add(hmark(canon(shape="(@@'2',)"), "bad_shape", "npy-s2-string-elem"))
    add(hmark(canon(shape="(@@9223372036854775808,)"), "size_overflow", "npy-s2-2p63"))
    add(hmark(canon(shape="(@@18446744073709551616,)"), "size_overflow", "npy-s2-2p64"))
    add(hmark(canon(shape="(@@" + "9" * 400 + ",)"), "size_overflow", "npy-s2-400-digits"))
    add(hmark(canon(shape="(" + "1, " * 32 + "@@1,)"), "bad_shape", "npy-s3-ndim-33", I4x2[:4],
              ambig="offset of the first element past max_ndim (32, NumPy 1.x)"))
    add(hmark(canon(shape="(4294967296, @@4294967296)"), "size_overflow", "npy-s4-2p32-squared",
              ambig="offset of the dimension at which itemsize*prod first exceeds 2**63-1"))
    add(hmark(canon(shape="(0, @@4611686018427387904)"), "size_overflow", "npy-s4-zero-times-2p62", b"",
              ambig="as npy-s4-2p32-squared"))
    add(hmark(canon(shape="(@@4611686018427387904, 0)"), "size_overflow", "npy-s4-2p62-times-zero", b"",
              ambig="as npy-s4-2p32-squared"))
    add(hmark(canon(descr="'<f8'", shape="(@@2305843009213693952,)"), "size_overflow", "npy-s4-itemsize-counts",
              ambig="as npy-s4-2p32-squared"))
    add(hmark(canon(descr="'|u1'", shape="(3074457345618258603, @@3)"), "size_overflow", "npy-s4-product-u1"))
    add(hmark("{'shape': (@@4611686018427387904,), 'fortran_order': False, 'descr': '<i4'}", "size_overflow",
              "npy-s4-shape-before-descr",
              ambig="shape parsed before descr: still the offending dimension (not the descr)"))

    # ---- D1 scalar descr ---------------------------------------------------------
    for nm, d, n, s in [("float64", "'float64'", 16, "S-DESCR-ALIAS"), ("d", "'d'", 16, "S-DESCR-ALIAS"),
                        ("f8-no-order", "'f8'", 16, "S-DESCR-ALIAS"), ("eq-f8", "'=f8'", 16, "S-DESCR-ALIAS"),
                        ("pipe-f8", "'|f8'", 16, "S-DESCR-ALIAS"), ("comma-string", "'i8,f4'", 24, "S-DESCR-ALIAS"),
                        ("subarray-string", "'(2,)<i4'", 16, None),
                        ("1f8", "'1f8'", 16, "S-DESCR-ALIAS"), ("int", "'int'", 16, "S-DESCR-ALIAS"),
                        ("f3", "'<f3'", 8, None), ("i16", "'<i16'", 8, None), ("u16", "'<u16'", 8, None),
                        ("M8-bad-unit", "'<M8[B]'", 16, None), ("M8-div", "'<M8[ns/2]'", 16, "S-DESCR-ALIAS"),
                        ("M4", "'<M4[us]'", 8, None), ("space", "' <i4'", 8, None), ("empty", "''", 8, None)]:
        add(hmark(canon(descr="@@" + d), "bad_header", "npy-d1-" + nm, bytes(n), strict=s))
    for nm, d in [("S-2p31", "'|S2147483648'"), ("V-2p31", "'|V2147483648'"), ("U-2p29", "'<U536870912'"),
                  ("S-huge", "'|S99999999999999999999'"), ("S-minus1", "'|S-1'")]:
        add(hmark(canon(descr="@@" + d, shape="(0,)"), "bad_header" if nm == "S-minus1" else "size_overflow",
                  "npy-d1-size-" + nm, b"", strict="S-DESCR-ALIAS" if nm == "S-minus1" else "S-DESCR-SIZE"))
    add(hmark(canon(descr="@@'<U1073741824'", shape="(0,)"), "size_overflow", "npy-d1-size-U-2p30", b"",
              strict="S-DESCR-SIZE"))

    # ---- D2-D6 structured ----------------------------------------------------------
    add(hmark(canon(descr="@@('<i4', (1,))"), "bad_header", "npy-d6-top-tuple", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="@@{'ab': 1}"), "bad_header", "npy-d2-dict", b"\x00\x00", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="@@{'names': ['a'], 'formats': ['<i4']}"), "bad_header", "npy-d2-dict-names"))
    add(hmark(canon(descr="[@@['a', '<i4']]"), "bad_header", "npy-d2-list-field", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="[('a', '<i4', @@{'m': 1})]"), "bad_header", "npy-d4-metadata"))
    add(hmark(canon(descr="[('a', '<i4'), (@@'a', '<i4')]"), "bad_header", "npy-d3-duplicate-field", I4x2 * 2,
              ambig="code: bad_header chosen over duplicate_name"))
    add(hmark(canon(descr="[(('a', @@'a'), '<i4')]"), "bad_header", "npy-d3-title-eq-name",
              ambig="offset of the second string (the name equal to the title)"))
    add(hmark(canon(descr="[((@@1, 'a'), '<i4')]"), "bad_header", "npy-d3-int-title", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="[(@@1, '<i4')]"), "bad_header", "npy-d3-int-name"))
    add(hmark(canon(descr="[(@@'', '<i4')]"), "bad_header", "npy-d3-empty-name-nonvoid", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="[('a', '<i4'), (@@'', '<f4')]"), "bad_header", "npy-d3-empty-name-second", I4x2 * 2,
              strict="S-DESCR-FORM"))
    add(hmark(canon(descr="[('a', @@'<f3')]"), "bad_header", "npy-d1-field-f3"))
    add(hmark(canon(descr="[('a', @@'float32')]"), "bad_header", "npy-d1-field-alias", strict="S-DESCR-ALIAS"))

    # ---- D7 objects ----------------------------------------------------------------
    for nm, d in [("O", "@@'|O'"), ("O8", "@@'<O8'"), ("O-bare", "@@'O'"), ("field", "[('a', @@'|O')]"),
                  ("subarray", "[('a', (@@'|O', (2,)))]"), ("field-shape", "[('a', @@'|O', (2,))]"),
                  ("nested", "[('a', '<i4'), ('b', [('c', @@'|O')])]")]:
        add(hmark(canon(descr=d), "pickle", "npy-d7-pickle-" + nm, bytes(64)))

    # ---- E data ---------------------------------------------------------------------
    g = good_npy()
    add(C("npy-e1-data-truncated", g[:-1], "truncated", len(g) - 1))
    add(C("npy-e1-data-missing", g[:-8], "truncated", len(g) - 8))
    add(C("npy-e1-header-truncated", g[:40], "truncated", 40))
    add(C("npy-c2-trailing-byte", g + b"\x00", "trailing_data", len(g), strict="S-NPY-TRAIL"))
    add(C("npy-c2-second-array", g + g, "trailing_data", len(g), strict="S-NPY-TRAIL"))
    # escapes repr() writes, in field names (decoded before names are compared)
    esc = r"""[('a\\b\'c\"d', '<i4'), ('\n\r\t', '<i4'), ('\u6574\U0001f600', '<i4')]"""
    add(A("acc-npy-escapes-in-names", good_npy(I4x2 * 3, descr=esc)))
    add(hmark(canon(descr=r"[('\x61', '<i4'), (@@'a', '<i4')]"), "bad_header", "npy-dup-name-via-escape", I4x2 * 2))
    # descr corners
    add(hmark(canon(descr="@@'|O16'"), "bad_header", "npy-d1-object-bad-size"))
    add(hmark(canon(descr="@@'<q8'"), "bad_header", "npy-d1-unknown-code", strict="S-DESCR-ALIAS"))
    add(A("acc-npy-subarray-int-shape", good_npy(I4x2 * 3, descr="[('a', ('<i4', 3))]")))
    add(A("acc-npy-field-int-shape", good_npy(I4x2 * 3, descr="[('a', '<i4', 3)]")))
    add(hmark(canon(descr="[('a', @@3)]"), "bad_header", "npy-d2-field-type-int"))
    add(hmark(canon(fortran="@@Truex"), "bad_header", "npy-g5-truex"))
    # parentheses that only group: literal_eval accepts them, the grammar does not
    add(hmark(canon(fortran="@@(True)"), "bad_header", "npy-paren-fortran", strict="S-HDR-SYNTAX"))
    add(hmark(canon(shape="(@@(2,))"), "bad_shape", "npy-paren-shape", strict="S-HDR-SYNTAX"))
    add(hmark("{@@('descr'): '<i4', 'fortran_order': False, 'shape': (2,), }", "bad_header", "npy-paren-key",
              strict="S-HDR-SYNTAX"))
    z = good_npy(b"", shape="(0,)")
    add(C("npy-c2-trailing-after-empty", z + b"x", "trailing_data", len(z), strict="S-NPY-TRAIL"))
    # item sizes as NumPy's _convert_from_tuple computes them (descriptor.c, 1.24 and 2.x alike):
    # a zero-size S/U/V with an integer is a type that many bytes (U: characters) wide
    add(A("acc-npy-S0-int-is-S3", good_npy(b"abcdef", descr="[('a', '|S0', 3)]")))
    add(A("acc-npy-U0-int-is-U2", good_npy(bytes(16), descr="[('a', '<U0', 2)]")))
    add(A("acc-npy-V0-subarray-tuple-is-V4", good_npy(bytes(8), descr="[('a', ('|V0', 4))]")))
    add(A("acc-npy-V0-int-padding", good_npy(I4x2 * 2, descr="[('a', '<i4'), ('', '|V0', 4)]")))
    add(hmark(canon(descr="[('a', '|S0', @@(3,))]"), "bad_header", "npy-S0-tuple-width"))
    add(hmark(canon(descr="[('a', @@('<U0', (2,)))]"), "bad_header", "npy-U0-subarray-tuple-width"))
    add(hmark(canon(descr="[('a', '|S0', @@2147483648)]"), "size_overflow", "npy-S0-width-too-large"))
    add(hmark(canon(descr="[('a', '<U0', @@536870912)]"), "size_overflow", "npy-U0-width-too-large", strict="S-DESCR-SIZE",
              ambig="NumPy <= 2.1 wraps 4 * 536870912 (U0 reads as U0); 2.2+ refuses it"))
    # subarray dimensions and element counts must each fit a C int, whatever the item size
    add(hmark(canon(descr="[('a', '<i4', @@(2147483648,))]"), "size_overflow", "npy-subarray-dim-too-large"))
    add(hmark(canon(descr="[('a', [], @@(2147483648,))]"), "size_overflow", "npy-subarray-dim-too-large-0-bytes"))
    add(hmark(canon(descr="[('a', [], @@(65536, 65536))]"), "size_overflow", "npy-subarray-count-too-large-0-bytes"))
    add(A("acc-npy-subarray-0-bytes-2^31-1", good_npy(b"", descr="[('a', [], (2147483647,))]")))
    # (type, 1): a scalar field in NumPy 1.x (FutureWarning), a (1,) subarray in 2.x
    add(hmark(canon(descr="[('a', '<i4', @@1)]"), "bad_header", "npy-field-shape-bare-1", strict="S-DESCR-FORM"))
    add(hmark(canon(descr="[('a', @@('<i4', 1))]"), "bad_header", "npy-subarray-bare-1", strict="S-DESCR-FORM"))
    add(A("acc-npy-field-shape-tuple-1", good_npy(I4x2, descr="[('a', '<i4', (1,))]", shape="(2,)")))
    # a field's subarray shape counts against max_ndim (32: NumPy 1.x; 2.x allows 64)
    d33 = "(" + "1, " * 32 + "@@1)"
    add(hmark(canon(descr="[('a', '<i4', %s)]" % d33), "bad_shape", "npy-field-shape-33-dims", strict="S-NDIM",
              ambig="NumPy 1.x refuses it; 2.x reads it"))
    return out


# ------------------------------------------------------------------ npz cases

def content(shape=(2,), data=None, descr="'<i4'"):
    """Canonical npy member content."""
    if data is None:
        n = 4
        for s in shape:
            n *= s
        data = bytes((i * 7 + 1) & 0xFF for i in range(n))
    sh = "(%s)" % "".join("%d, " % s for s in shape).rstrip(" ") if shape else "()"
    sh = sh.replace(", )", ",)") if len(shape) == 1 else sh.replace(", )", ")")
    return npy(canon(descr=descr, shape=sh), data)


CA = content()
CB = content((3,))
CBIG = content((64,))    # compresses well


def Z(members, **kw):
    return build_zip(members, **kw)


def npz_cases():
    out = []
    add = out.append

    # ---- accept ----------------------------------------------------------------------
    add(A("acc-npz-empty", eocd_bytes(0, 0, 0)))
    for st in ("file", "py3114", "pipe", "pipe3114", "legacy", "dd32", "dd32nosig", "dd64nosig"):
        add(A("acc-npz-stored-" + st, Z([Member("a.npy", CA, 0, st), Member("b.npy", CB, 0, st)])[0]))
        add(A("acc-npz-deflate-" + st, Z([Member("a.npy", CBIG, 8, st), Member("b.npy", CB, 8, st)])[0]))
    add(A("acc-npz-mixed-methods", Z([Member("a.npy", CA, 0), Member("b.npy", CBIG, 8, "pipe")])[0]))
    add(A("acc-npz-blob-member", Z([Member("a.npy", CA), Member("meta", b"Name: Test")])[0]))
    add(A("acc-npz-blob-deflate-dd", Z([Member("meta", b"Name: Test" * 10, 8, "pipe")])[0]))
    add(A("acc-npz-npy-without-suffix", Z([Member("a", CA)])[0]))
    add(A("acc-npz-utf8-name-bit11", Z([Member("\u00e9t\u00e9.npy", CA, flags=0x800)])[0]))
    add(A("acc-npz-zip64-eocd", Z([Member("a.npy", CA), Member("b.npy", CB)], z64={})[0]))
    add(C("npz-c1-zip64-eocd-first", Z([], z64={})[0], "bad_magic", 0,
          ambig="an empty archive that starts with PK\\x06\\x06: NumPy's sniffing rejects it, so C1 says bad_magic"))
    add(A("acc-npz-cd-zip64-extra", Z([Member("a.npy", CA, cd_zip64=True)])[0]))
    add(A("acc-npz-zero-size-member", Z([Member("a.npy", content((0,)), 0, "pipe")])[0]))
    add(A("acc-npz-fortran-member", Z([Member("a.npy", npy(canon(fortran="True", shape="(2, 2)"), I4x2 * 2), 8)])[0]))
    add(A("acc-npz-max-members-equal", Z([Member("a.npy", CA), Member("b.npy", CB)])[0], ["--max-members", "2"]))
    add(A("acc-npz-version-63", Z([Member("a.npy", CA, lfh_version=63, cd_version=63)])[0]))

    # ---- flags (Z1, A5, D7) -----------------------------------------------------------
    for bit in (0, 4, 5, 6, 7, 12, 13, 14, 15):
        b, L = Z([Member("a.npy", CA, flags=1 << bit)])
        add(C("npz-flag-bit%d" % bit, b, "zip_unsupported", L.m[0]["lfh"],
              strict=None if bit in (0, 5, 6) else "S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB, flags=1)])
    add(C("npz-flag-encrypted-second", b, "zip_unsupported", L.m[1]["lfh"]))
    b, L = Z([Member("a.npy", CA, cd_flags=1)])
    add(C("npz-a5-encrypted-cd-only", b, "cd_mismatch", L.cd[0],
          ambig="code: zip_unsupported (bad bit in the CD record) chosen over cd_mismatch"))
    b, L = Z([Member("a.npy", CA, lfh_flags=1)])
    add(C("npz-a5-encrypted-lfh-only", b, "zip_unsupported", L.m[0]["lfh"], strict="S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA, cd_flags=0x800)])
    add(C("npz-a3-bit11-cd-only", b, "cd_mismatch", L.cd[0], strict="S-ZIP-CD"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", cd_flags=0)])
    add(C("npz-a1-bit3-lfh-only", b, "cd_mismatch", L.cd[0], strict="S-ZIP-CD"))

    # ---- methods --------------------------------------------------------------------------
    for meth in (1, 9, 12, 14, 93, 99):
        b, L = Z([Member("a.npy", CA, meth, data=CA)])
        add(C("npz-method-%d" % meth, b, "zip_unsupported", L.m[0]["lfh"]))
    # the methods zipfile reads, with data it reads: bzip2 (12) and LZMA (14) since CPython 3.3
    # (np.load loads them), Zstandard (93) since 3.14 (3.11 to 3.13 raise NotImplementedError)
    for meth in (12, 14):
        bio = io.BytesIO()
        with zipfile.ZipFile(bio, "w") as z:
            z.writestr(zipfile.ZipInfo("a.npy", (1980, 1, 1, 0, 0, 0)), CA, compress_type=meth)  # a fixed date: the same bytes
        add(C("npz-method-%d-readable" % meth, bio.getvalue(), "zip_unsupported", 0, strict="S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA, 93, data=zstd_raw_frame(CA))])
    add(C("npz-method-93-readable", b, "zip_unsupported", L.m[0]["lfh"]))
    b, L = Z([Member("a.npy", b"\xff" * 40, 0, lfh_method=8)])
    add(C("npz-a1-method-lfh8-cd0", b, "inflate", L.m[0]["data"], strict="S-ZIP-LOCAL"))
    b, L = Z([Member("a.npy", CA, 0, cd_method=8)])
    add(C("npz-a1-method-lfh0-cd8", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CBIG, 8, cd_method=0)])
    add(C("npz-a1-method-lfh8-cd0-deflated", b, "cd_mismatch", L.cd[0]))

    # ---- version needed, disks ----------------------------------------------------------------
    b, L = Z([Member("a.npy", CA, lfh_version=64, cd_version=64)])
    add(C("npz-version-64", b, "zip_unsupported", L.m[0]["lfh"]))
    b, L = Z([Member("a.npy", CA, cd_version=64)])
    add(C("npz-version-64-cd-only", b, "zip_unsupported", L.cd[0]))
    b, L = Z([Member("a.npy", CA, cd_disk=1)])
    add(C("npz-multidisk-cd-record", b, "zip_unsupported", L.cd[0], strict="S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA)], eocd=dict(disk=1, cd_disk=1))
    add(C("npz-multidisk-eocd", b, "zip_unsupported", L.eocd, strict="S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA)], eocd=dict(cd_disk=1))
    add(C("npz-multidisk-eocd-cd-disk", b, "zip_unsupported", L.eocd, strict="S-ZIP-FEATURES"))

    # ---- extra field TLV (D6) -----------------------------------------------------------------
    x = z64_extra(len(CA), len(CA))
    # 1-3 zero bytes after the last field: padding (writers align member data so); anything else is not
    for k in (1, 2, 3):
        add(A("acc-npz-extra-zero-pad-%d" % k, Z([Member("a.npy", CA, lfh_extra=x + bytes(k))])[0]))
        add(A("acc-npz-extra-zero-pad-%d-central" % k, Z([Member("a.npy", CA, cd_extra=bytes(k))])[0]))
    # zipalign-style: local extra fields padded with zero bytes so that every member's data starts
    # at a multiple of 64 (4 zero bytes read as an empty field with id 0)
    def aligned(members, align=64):
        out = []
        off = 0
        for nm, content in members:
            zx = z64_extra(len(content), len(content))
            base = off + 30 + len(nm) + len(zx)
            pad = (-base) % align
            out.append(Member(nm, content, lfh_extra=zx + bytes(pad)))
            off = base + pad + len(content)
        return Z(out)
    b, L = aligned([("a.npy", CA), ("b.npy", CB), ("c.npy", CBIG)])
    assert all(m["data"] % 64 == 0 for m in L.m)
    add(A("acc-npz-extra-zero-pad-aligned-64", b))
    b, L = Z([Member("a.npy", CA, lfh_extra=x + b"\x00\x01")])
    add(C("npz-extra-leftover-nonzero", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, cd_extra=b"\x00\x00\x07")])
    add(C("npz-extra-leftover-nonzero-central", b, "zip_bad_header", L.cd[0], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, lfh_extra=x + b"\x09\x00\x05\x00ab")])
    add(C("npz-extra-overrun", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, lfh_extra=x + x)])
    add(C("npz-extra-dup-zip64", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, lfh_extra=tlv(1, struct.pack("<QI", len(CA), 0)))])
    add(C("npz-extra-zip64-len12", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, lfh_extra=tlv(1, struct.pack("<I", 0)))])
    add(C("npz-extra-zip64-len4", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, 0, "py3114", lfh_extra=tlv(1, struct.pack("<Q", len(CA))))])
    add(C("npz-extra-zip64-len8-both-sentinels", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-EXTRA"))
    b, L = Z([Member("a.npy", CA, lfh_extra=x + tlv(0x7075, b"\x01" + struct.pack("<I", zlib.crc32(b"a.npy")) + b"x.npy"))])
    add(C("npz-a3-unicode-path-extra", b, "zip_unsupported", L.m[0]["lfh"], strict="S-ZIP-EXTRA",
          ambig="code: zip_unsupported chosen (bad_name / zip_bad_header also plausible)"))
    b, L = Z([Member("a.npy", CA, cd_extra=tlv(0x7075, b"\x01" + struct.pack("<I", zlib.crc32(b"a.npy")) + b"x.npy"))])
    add(C("npz-a3-unicode-path-extra-cd", b, "zip_unsupported", L.cd[0], strict="S-ZIP-EXTRA",
          ambig="as npz-a3-unicode-path-extra"))
    b, L = Z([Member("a.npy", CA, cd_extra=b"\x01\x00\x08\x00")])
    add(C("npz-extra-cd-overrun", b, "zip_bad_header", L.cd[0]))

    # ---- local sizes / CRC vs data (A2, Z4) ------------------------------------------------------
    b, L = Z([Member("a.npy", CA, lfh_crc=zlib.crc32(CA) ^ 1)])
    add(C("npz-lfh-crc-wrong", b, "crc_mismatch", L.m[0]["data_end"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 0, "legacy", lfh_crc=0)])
    add(C("npz-lfh-crc-zero-legacy", b, "crc_mismatch", L.m[0]["data_end"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CBIG, 8, lfh_crc=0)])
    add(C("npz-lfh-crc-wrong-deflate", b, "crc_mismatch", L.m[0]["data_end"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", dd_crc=zlib.crc32(CA) ^ 0x80000000)])
    add(C("npz-dd-crc-wrong", b, "crc_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CBIG, 8, "pipe", dd_crc=0)])
    add(C("npz-dd-crc-wrong-deflate", b, "crc_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, cd_crc=zlib.crc32(CA) ^ 1)])
    add(C("npz-cd-crc-wrong", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CA, 0, "pipe", cd_crc=0)])
    add(C("npz-cd-crc-wrong-dd", b, "cd_mismatch", L.cd[0]))
    # stored member: npy content longer / shorter than the local sizes
    b, L = Z([Member("a.npy", CA + b"JUNK")])
    add(C("npz-stored-npy-longer-than-header", b, "trailing_data", L.m[0]["data"] + len(CA), strict="S-ZIP-MEMBER-TRAIL",
          ambig="code trailing_data at the first byte after the array data (absolute, like a plain .npy)"))
    b, L = Z([Member("a.npy", CA[:-2])])
    add(C("npz-stored-npy-shorter-than-header", b, "size_mismatch", L.m[0]["data_end"],
          ambig="content ends inside the array data: size_mismatch just past the member data"))
    b, L = Z([Member("a.npy", CA, lfh_csize=len(CA) + 4, lfh_usize=len(CA) + 4, lfh_extra=z64_extra(len(CA) + 4, len(CA) + 4),
                     after_data=b"JUNK")])
    add(C("npz-lfh-sizes-larger-than-npy", b, "trailing_data", L.m[0]["data_end"], strict="S-ZIP-MEMBER-TRAIL",
          ambig="LFH promises 4 more bytes than the npy needs: trailing_data at first byte after array"))
    b, L = Z([Member("a.npy", CA, 0, "legacy", lfh_csize=len(CA) - 4, lfh_usize=len(CA) - 4)])
    add(C("npz-lfh-sizes-smaller-than-npy", b, "size_mismatch", L.m[0]["data"] + len(CA) - 4, strict="S-ZIP-LOCAL",
          ambig="size_mismatch at data start + LFH csize (where the LFH says the data ends)"))
    b, L = Z([Member("a.npy", CA, 0, "legacy", lfh_usize=len(CA) + 1)])
    add(C("npz-lfh-usize-wrong-stored", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-CRC",
          ambig="stored with csize != usize is a self-contradictory local header: zip_bad_header at the LFH"))
    b, L = Z([Member("a.npy", CBIG, 8, "legacy", lfh_usize=len(CBIG) + 1)])
    add(C("npz-lfh-usize-wrong-deflate", b, "size_mismatch", L.m[0]["data_end"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CBIG, 8, lfh_extra=z64_extra(len(CBIG) - 1, len(deflate(CBIG))))])
    add(C("npz-lfh-zip64-usize-wrong", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-CRC",
          ambig="32-bit sizes and ZIP64 extra disagree inside one LFH: zip_bad_header at the LFH"))
    b, L = Z([Member("a.npy", CA, 0, "py3114", lfh_extra=z64_extra(len(CA), len(CA) + 1))])
    add(C("npz-lfh-zip64-csize-wrong-stored", b, "zip_bad_header", L.m[0]["lfh"], strict="S-ZIP-CRC",
          ambig="stored member whose ZIP64 csize != usize: zip_bad_header at the LFH"))
    # descriptor sizes / width
    b, L = Z([Member("a.npy", CA, 0, "pipe", dd_csize=len(CA) + 1)])
    add(C("npz-dd-csize-wrong", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", dd_usize=len(CA) - 1)])
    add(C("npz-dd-usize-wrong", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CBIG, 8, "pipe", dd_csize=len(deflate(CBIG)) + 1)])
    add(C("npz-dd-csize-wrong-deflate", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", dd="32sig")])
    add(C("npz-dd-32bit-after-zip64-lfh", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC",
          ambig="24-byte DD expected (LFH has ZIP64): reading 8-byte sizes gives a wrong csize"))
    b, L = Z([Member("a.npy", CA, 0, "dd32", dd="64sig")])
    add(C("npz-dd-64bit-after-plain-lfh", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", dd_raw=b"")])
    add(C("npz-dd-missing", b, "crc_mismatch", L.m[0]["data_end"], strict="S-ZIP-CRC",
          ambig="DD absent: the CD header is read as a signature-less DD; crc_mismatch at the DD position"))
    b, L = Z([Member("a.npy", CA, 0, "pipe", lfh_crc=zlib.crc32(CA))])
    b, L = Z([Member("a.npy", CA, 0, "pipe", lfh_crc=1)])
    add(C("npz-pipe-lfh-crc-wrong", b, "crc_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC",
          ambig="bit 3 with a non-zero, wrong LFH CRC: crc_mismatch at the descriptor"))
    # stored blob with bit 3 cannot be delimited
    b, L = Z([Member("meta", b"Name: Test", 0, "pipe")])
    add(C("npz-stored-blob-bit3", b, "zip_unsupported", L.m[0]["lfh"], strict="S-ZIP-DD-BLOB"))

    # ---- deflate content (Z5, D3, D5) -------------------------------------------------------------
    b, L = Z([Member("a.npy", CA, 8, data=b"\xff" * 40)])
    add(C("npz-inflate-garbage", b, "inflate", L.m[0]["data"]))
    b, L = Z([Member("a.npy", CA, 8, "pipe", data=b"\xff" * 40)])
    add(C("npz-inflate-garbage-dd", b, "inflate", L.m[0]["data"]))
    dz = deflate(CBIG)
    b, L = Z([Member("a.npy", CBIG, 8, data=dz + b"\x00\x00\x00")])
    add(C("npz-deflate-ends-before-csize", b, "size_mismatch", L.m[0]["data_end"] - 3, strict="S-ZIP-DEFLATE-END",
          ambig="reported where the deflate stream ends, before the 3 extra bytes the header counts"))
    b, L = Z([Member("a.npy", CBIG, 8, "legacy", lfh_csize=len(dz) - 3, lfh_usize=len(CBIG), cd_csize=len(dz) - 3)])
    add(C("npz-deflate-longer-than-csize", b, "size_mismatch", L.m[0]["data"] + len(dz) - 3,
          ambig="stated csize ends inside the deflate stream: size_mismatch just past the stated data"))
    b, L = Z([Member("a.npy", CBIG + b"EXTRA", 8)])
    add(C("npz-inflated-longer-than-npy", b, "trailing_data", L.m[0]["data"], strict="S-ZIP-MEMBER-TRAIL",
          ambig="code trailing_data, offset = compressed data start"))
    b, L = Z([Member("a.npy", CBIG + b"EXTRA", 8, "pipe")])
    add(C("npz-inflated-longer-than-npy-dd", b, "trailing_data", L.m[0]["data"], strict="S-ZIP-MEMBER-TRAIL",
          ambig="as npz-inflated-longer-than-npy"))
    b, L = Z([Member("a.npy", CBIG[:-4], 8)])
    add(C("npz-inflated-shorter-than-npy", b, "size_mismatch", L.m[0]["data_end"],
          ambig="deflated content ends inside the array: size_mismatch past the member data (data start plausible)"))
    bad = npy(canon(shape="(-1,)"), bytes(256))
    b, L = Z([Member("a.npy", bad, 8)])
    add(C("npz-deflate-bad-shape-inside", b, "bad_shape", L.m[0]["data"]))
    b, L = Z([Member("a.npy", npy(canon(descr="'|O'"), bytes(16)), 8)])
    add(C("npz-deflate-pickle-inside", b, "pickle", L.m[0]["data"]))
    b, L = Z([Member("a.npy", npy("{'descr': '<i4',\r 'fortran_order': False, 'shape': (2,)}", I4x2), 8)])
    add(C("npz-deflate-bad-header-inside", b, "bad_header", L.m[0]["data"], strict="S-HDR-WS"))
    b, L = Z([Member("a.npy", MAGIC + b"\x01\x01" + CA[8:], 8)])
    add(C("npz-deflate-bad-version-inside", b, "bad_version", L.m[0]["data"]))
    # stored members: absolute offsets inside
    mem, off = npy_marked(canon(shape="(@@-1,)"), I4x2)
    b, L = Z([Member("a.npy", CA), Member("b.npy", mem)])
    add(C("npz-stored-bad-shape-inside", b, "bad_shape", L.m[1]["data"] + off))
    mem, off = npy_marked(canon(descr="[('a', @@'<O8')]"), bytes(16))
    b, L = Z([Member("b.npy", mem, 0, "pipe")])
    add(C("npz-stored-pickle-inside-dd", b, "pickle", L.m[0]["data"] + off))
    b, L = Z([Member("a.npy", MAGIC + b"\x02\x01" + CA[8:])])
    add(C("npz-stored-bad-version-inside", b, "bad_version", L.m[0]["data"] + 6))
    b, L = Z([Member("a.npy", MAGIC + b"\x01\x00\x11\x27" + CA[10:])])
    add(C("npz-stored-header-too-large-inside", b, "header_too_large", L.m[0]["data"] + 8))
    big = content((1000,))
    b, L = Z([Member("a.npy", big, 0, "pipe")])
    add(C("npz-stored-header-limit-inside", b, "header_too_large", L.m[0]["data"] + 8,
          args=["--max-header-size", "50"]))

    # ---- names (A3, A4, B1-B4) ---------------------------------------------------------------------
    b, L = Z([Member("a.npy", CA, cd_name=b"x.npy")])
    add(C("npz-a3-name-lfh-ne-cd", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CA, cd_name=b"A.npy")])
    add(C("npz-a3-name-case-differs", b, "cd_mismatch", L.cd[0]))
    for nm, name, flags, s in [("dir-slash", b"d/", 0, "S-ZIP-NAME"), ("trailing-slash", b"a.npy/", 0, "S-ZIP-NAME"),
                               ("backslash", b"d\\a.npy", 0, "S-ZIP-NAME"),
                               ("empty", b"", 0, "S-ZIP-NAME"), ("nul", b"a.npy\x00evil", 0, "S-ZIP-NAME"),
                               ("nul-only", b"\x00", 0, "S-ZIP-NAME"),
                               ("non-ascii-no-bit11", "\u00e9.npy".encode(), 0, "S-ZIP-NAME"),
                               ("cp437-no-bit11", b"\x82.npy", 0, "S-ZIP-NAME"),
                               ("bad-utf8-bit11", b"\xff.npy", 0x800, None),
                               ("dotdot", b"../a.npy", 0, "S-ZIP-NAME"), ("abs", b"/a.npy", 0, "S-ZIP-NAME"),
                               ("ctl", b"a\x01.npy", 0, "S-ZIP-NAME")]:
        b, L = Z([Member("ok.npy", CA), Member(name, CB, flags=flags)])
        add(C("npz-name-" + nm, b, "bad_name", L.m[1]["lfh"], strict=s))
    b, L = Z([Member("a.npy", CA), Member("a.npy", CB)])
    add(C("npz-b1-duplicate-name", b, "duplicate_name", L.m[1]["lfh"], strict="S-ZIP-DUP"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB), Member("a.npy", CB, 8, "pipe")])
    add(C("npz-b1-duplicate-name-third", b, "duplicate_name", L.m[2]["lfh"], strict="S-ZIP-DUP"))
    b, L = Z([Member("x.npy", CA), Member("x", CB)])
    add(C("npz-b1-x-beside-x.npy", b, "duplicate_name", L.m[1]["lfh"], strict="S-ZIP-DUP"))
    b, L = Z([Member("x", CA), Member("x.npy", CB)])
    add(C("npz-b1-x.npy-beside-x", b, "duplicate_name", L.m[1]["lfh"], strict="S-ZIP-DUP"))
    b, L = Z([Member("x.npy", CA), Member("x", b"blob")])
    add(C("npz-b1-blob-x-beside-x.npy", b, "duplicate_name", L.m[1]["lfh"], strict="S-ZIP-DUP"))
    # a member named ".npy": np.load's key is '' (name[:-4]); refused rather than reported as ''
    b, L = Z([Member("a.npy", CA), Member(".npy", CB)])
    add(C("npz-b-name-dot-npy-empty-key", b, "bad_name", L.m[1]["lfh"], strict="S-ZIP-NAME"))
    add(A("acc-npz-name-x.npy-dir", Z([Member("d/.npyx", CA), Member("x.npy.npy", CB)])[0]))

    # ---- LFH vs CD sizes (A2) --------------------------------------------------------------------------
    b, L = Z([Member("a.npy", CA, cd_csize=len(CA) + 1, cd_usize=len(CA) + 1)])
    add(C("npz-a2-cd-sizes-wrong", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CA, 0, "pipe", cd_usize=len(CA) - 1)])
    add(C("npz-a2-cd-usize-wrong-dd", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CBIG, 8, cd_csize=len(deflate(CBIG)) - 1)])
    add(C("npz-a2-cd-csize-wrong-deflate", b, "cd_mismatch", L.cd[0], strict="S-ZIP-CD"))
    b, L = Z([Member("a.npy", CA, cd_zip64=True, cd_extra=z64_extra(len(CA), len(CA) + 1))])
    add(C("npz-a2-cd-zip64-csize-wrong", b, "cd_mismatch", L.cd[0]))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB, cd_offset=0)])
    add(C("npz-cd-offset-wrong", b, "cd_mismatch", L.cd[1]))

    # ---- LFH <-> CD matching (C1a, C3, C4, D2) ---------------------------------------------------------
    b, L = Z([Member("a.npy", CA), Member("hide.npy", CB, in_cd=False)])
    add(C("npz-c1-hidden-last", b, "cd_mismatch", L.eocd, strict="S-ZIP-CD",
          ambig="all CD records matched member 0; the end record (count 1) disagrees with 2 LFHs"))
    b, L = Z([Member("hide.npy", CB, in_cd=False), Member("a.npy", CA)])
    add(C("npz-c1-hidden-first", b, "cd_mismatch", L.cd[0], strict="S-ZIP-CD"))
    b, L = Z([Member("a.npy", CA)], extra_cd=[dict(of=0, name=b"ghost.npy", offset=1000)])
    add(C("npz-c1-cd-without-lfh", b, "cd_mismatch", L.cd[1]))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)], extra_cd=[dict(of=0, name=b"c.npy")])
    add(C("npz-d2-overlap-other-name", b, "cd_mismatch", L.cd[2]))
    b, L = Z([Member("a.npy", CA)], extra_cd=[dict(of=0)])
    add(C("npz-d2-overlap-same-record", b, "cd_mismatch", L.cd[1],
          ambig="second identical CD record: cd_mismatch (no LFH left) chosen over duplicate_name"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)], cd_order=[1, 0])
    add(C("npz-cd-order-swapped", b, "cd_mismatch", L.cd[0], strict="S-ZIP-CD"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)], eocd=dict(count=3))
    add(C("npz-c3-count-too-big", b, "cd_mismatch", L.eocd, strict="S-ZIP-COUNT"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)], eocd=dict(count=1, count_disk=1))
    add(C("npz-c3-count-too-small", b, "cd_mismatch", L.eocd, strict="S-ZIP-COUNT"))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)], eocd=dict(count_disk=1))
    add(C("npz-c3-count-disk-differs", b, "cd_mismatch", L.eocd, strict="S-ZIP-COUNT",
          ambig="entries-on-this-disk != total: cd_mismatch (zip_unsupported plausible)"))
    b, L = Z([Member("a.npy", CA)])
    b2, L2 = Z([Member("a.npy", CA)], eocd=dict(cd_offset=L.cd_start + 1))
    add(C("npz-c4-cd-offset-wrong", b2, "cd_mismatch", L2.eocd))
    b2, L2 = Z([Member("a.npy", CA)], eocd=dict(cd_size=L.cd_end - L.cd_start - 1))
    add(C("npz-c4-cd-size-wrong", b2, "cd_mismatch", L2.eocd))
    b, L = Z([Member("a.npy", CA)], prefix=b"JUNK")
    add(C("npz-c4-prefix", b, "bad_magic", 0))
    b, L = Z([Member("a.npy", CA)], prefix=b"MZ\x90\x00" + bytes(60))
    add(C("npz-c4-sfx-prefix", b, "bad_magic", 0))
    b, L = Z([Member("a.npy", CA)])
    add(C("npz-c4-gap-before-cd", b[:L.cd_start] + b"\x00" * 4 + b[L.cd_start:], "zip_bad_header", L.cd_start,
          ambig="4 zero bytes where a record signature is expected: zip_bad_header at that offset"))

    # ---- end record (C2, D1) ------------------------------------------------------------------------------
    b, L = Z([Member("a.npy", CA)], after=eocd_bytes(1, 0, 0))
    add(C("npz-c2-two-eocd", b, "trailing_data", L.comment_end, strict="S-ZIP-TRAIL"))
    b, L = Z([Member("a.npy", CA)], comment=b"hi PK\x05\x06 there")
    add(C("npz-c2-comment-with-eocd-sig", b, "zip_bad_header", L.eocd,
          ambig="comment holding PK\\x05\\x06: zip_bad_header at the end record"))
    b, L = Z([Member("a.npy", CA)], comment=b"PK\x06\x06PK\x06\x07")
    add(C("npz-c2-comment-with-zip64-sigs", b, "zip_bad_header", L.eocd, strict="S-ZIP-COMMENT",
          ambig="as npz-c2-comment-with-eocd-sig"))
    b, L = Z([Member("a.npy", CA)], comment=b"abc", comment_len=10)
    add(C("npz-c2-comment-past-end", b, "truncated", len(b), strict="S-ZIP-LAYOUT"))
    b, L = Z([Member("a.npy", CA)], after=b"X")
    add(C("npz-d1-trailing-byte", b, "trailing_data", L.comment_end, strict="S-ZIP-TRAIL"))
    b, L = Z([Member("a.npy", CA)], comment=b"ok", after=b"\x00" * 100)
    add(C("npz-d1-trailing-after-comment", b, "trailing_data", L.comment_end, strict="S-ZIP-TRAIL"))
    z1, _ = Z([Member("a.npy", CA)])
    b, L = Z([Member("b.npy", CB)], after=z1)
    add(C("npz-d1-concatenated-zips", b, "trailing_data", L.comment_end, strict="S-ZIP-TRAIL"))
    b = eocd_bytes(0, 0, 0) + b"x"
    add(C("npz-d1-empty-archive-trailing", b, "trailing_data", 22, strict="S-ZIP-TRAIL"))
    add(C("npz-empty-archive-count-1", eocd_bytes(1, 0, 0), "cd_mismatch", 0, strict="S-ZIP-COUNT"))
    add(C("npz-empty-archive-cd-size", eocd_bytes(0, 46, 0), "cd_mismatch", 0))

    # ---- ZIP64 end record / locator (C5) ----------------------------------------------------------------
    b, L = Z([Member("a.npy", CA)], z64=dict(loc_offset=1))
    add(C("npz-c5-locator-offset-wrong", b, "cd_mismatch", L.z64loc, strict="S-ZIP-LAYOUT",
          ambig="code cd_mismatch at the locator (like a wrong CD offset in the end record)"))
    b, L = Z([Member("a.npy", CA)], z64=dict(size=56, ext=bytes(12)))
    add(C("npz-c5-z64eocd-size-56", b, "zip_unsupported", L.z64eocd,
          ambig="size > 44 = extensible data (an APPNOTE feature): zip_unsupported"))
    b, L = Z([Member("a.npy", CA)], z64=dict(size=45))
    add(C("npz-c5-z64eocd-size-45", b, "zip_unsupported", L.z64eocd, strict="S-ZIP-FEATURES",
          ambig="as npz-c5-z64eocd-size-56"))
    b, L = Z([Member("a.npy", CA)], z64=dict(size=40))
    add(C("npz-c5-z64eocd-size-40", b, "zip_bad_header", L.z64eocd, strict="S-ZIP-LAYOUT",
          ambig="size < 44 cannot hold the fixed fields: zip_bad_header"))
    b, L = Z([Member("a.npy", CA)], z64=dict(count=2))
    add(C("npz-c5-z64-count-wrong", b, "cd_mismatch", L.z64eocd, strict="S-ZIP-COUNT"))
    b, L = Z([Member("a.npy", CA)], z64=dict(count_disk=2))
    add(C("npz-c5-z64-count-disk-wrong", b, "cd_mismatch", L.z64eocd, strict="S-ZIP-COUNT"))
    b, L = Z([Member("a.npy", CA)], z64=dict(cd_offset=1))
    add(C("npz-c5-z64-cd-offset-wrong", b, "cd_mismatch", L.z64eocd))
    b, L = Z([Member("a.npy", CA)], z64=dict(cd_size=1))
    add(C("npz-c5-z64-cd-size-wrong", b, "cd_mismatch", L.z64eocd))
    b, L = Z([Member("a.npy", CA)], z64=dict(count=1), eocd=dict(count=2))
    add(C("npz-c5-eocd-disagrees-with-z64", b, "cd_mismatch", L.eocd, strict="S-ZIP-COUNT"))
    b, L = Z([Member("a.npy", CA)], z64=dict(disk=1))
    add(C("npz-c5-z64-multidisk", b, "zip_unsupported", L.z64eocd, strict="S-ZIP-FEATURES"))
    b, L = Z([Member("a.npy", CA)], z64=dict(loc_total=2))
    add(C("npz-c5-locator-2-disks", b, "zip_unsupported", L.z64loc))
    b, L = Z([Member("a.npy", CA)], z64=dict(no_record=True, loc_offset=0))
    add(C("npz-c5-locator-without-record", b, "zip_bad_header", L.z64loc,
          ambig="locator right after the CD, pointing at offset 0 (an LFH)"))
    b, L = Z([Member("a.npy", CA)], z64=dict())
    b = b[:L.z64loc] + b[L.eocd:]
    add(C("npz-c5-record-without-locator", b, "zip_bad_header", L.z64loc,
          ambig="ZIP64 end record followed directly by the end record: zip_bad_header at the byte after it"))

    # ---- limits ----------------------------------------------------------------------------------------
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB), Member("c.npy", CA)])
    add(C("npz-limit-max-members", b, "limit", L.m[2]["lfh"], ["--max-members", "2"], strict="L-max-members",
          ambig="limit offset: LFH of the first member over the limit"))
    b, L = Z([Member("a.npy", CA)])
    add(A("acc-npz-limit-max-members-1", b, ["--max-members", "1"]))
    b, L = Z([Member("a.npy", CBIG), Member("b.npy", CBIG)])
    add(C("npz-limit-max-total-bytes", b, "limit", L.m[1]["lfh"], ["--max-total-bytes", str(len(CBIG) + 100)], strict="L-max-total-bytes",
          ambig="limit offset: LFH of the member whose content crosses the limit"))
    b, L = Z([Member("a.npy", CBIG, 8, "pipe"), Member("b.npy", CBIG, 8, "pipe")])
    add(C("npz-limit-max-total-bytes-deflate-dd", b, "limit", L.m[1]["data"],
          ["--max-total-bytes", str(len(CBIG) + 100)], strict="L-max-total-bytes",
          ambig="sizes unknown at the LFH: found inside deflated content -> compressed data start"))
    add(A("acc-npz-max-total-bytes-equal", Z([Member("a.npy", CBIG), Member("b.npy", CBIG)])[0],
          ["--max-total-bytes", str(2 * len(CBIG))]))
    # 2^64 - 1 means no limit: the inflate output cap must not wrap (found by fuzz_limits' loosest mode)
    for st in ("file", "pipe"):
        add(A("acc-npz-deflate-%s-max-total-bytes-2^64-1" % st, Z([Member("a.npy", CBIG, 8, st)])[0],
              ["--max-total-bytes", str(2 ** 64 - 1)]))

    # ---- blobs whose first bytes look like the npy magic -------------------------------------------
    for nm, blob in [("magic-prefix-4", b"\x93NUM"), ("magic-prefix-6x", b"\x93NUMPX and more"),
                     ("magic-only-5", b"\x93NUMP"), ("one-byte", b"\x93")]:
        add(A("acc-npz-blob-" + nm, Z([Member("b.bin", blob, 0), Member("a.npy", CA, 0)])[0]))
        add(A("acc-npz-blob-deflated-" + nm, Z([Member("b.bin", blob, 8)])[0]))
        add(A("acc-npz-blob-deflated-dd-" + nm, Z([Member("b.bin", blob, 8, "pipe")])[0]))
    # a deflated blob inflating past its declared size
    big = b"x" * 5000
    b, L = Z([Member("b.bin", big, 8, "legacy", lfh_usize=100, cd_usize=100)])
    add(C("npz-blob-inflates-past-size", b, "size_mismatch", L.m[0]["data"]))
    # deferred sizes (bit 3) that are non-zero in the local header must still be right
    for nm, ov in [("csize", dict(lfh_csize=7)), ("usize", dict(lfh_usize=7))]:
        b, L = Z([Member("a.npy", CA, 8, "pipe", **ov)])
        add(C("npz-dd-local-" + nm + "-wrong", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    b, L = Z([Member("a.npy", CA, 8, "pipe", lfh_extra=z64_extra(len(CA) + 1, 0))])
    add(C("npz-dd-local-zip64-usize-wrong", b, "size_mismatch", L.m[0]["dd"], strict="S-ZIP-CRC"))
    # a central ZIP64 field whose length is not what its sentinels call for
    b, L = Z([Member("a.npy", CA, 0, cd_extra=z64_extra(len(CA)))])
    add(C("npz-cd-zip64-not-implied", b, "zip_bad_header", L.cd[0], strict="S-ZIP-EXTRA"))

    # ---- truncation -------------------------------------------------------------------------------------
    full, L = Z([Member("a.npy", CA, 0, "pipe"), Member("b.npy", CB)])
    for n in range(len(full)):
        add(C("npz-trunc-stored-%03d" % n, full[:n], "truncated", n))
    full, L = Z([Member("a.npy", CBIG, 8), Member("b.npy", CB, 8, "pipe")], z64={}, comment=b"note")
    for n in range(0, len(full), 5):
        add(C("npz-trunc-deflate-%03d" % n, full[:n], "truncated", n,
              strict="S-ZIP-LAYOUT" if n >= L.eocd + 22 else None))
    add(C("npz-trunc-deflate-last", full[:-1], "truncated", len(full) - 1, strict="S-ZIP-LAYOUT"))
    return out


# ------------------------------------------------------------------ zipfile's end-record search

HIDDEN = content((5,))   # what an archive steered by fake end records makes np.load load instead


def steered(carrier, fake=("z64", "loc"), loc_disk=0, loc_total=1):
    """(bytes, Layout, what) of an archive whose last central-directory entry carries, in
    `carrier` ("comment", "extra" or "blob"), end records that steer CPython's zipfile to a hidden
    central directory: a second member "a.npy" holding HIDDEN, whose local header sits inside the
    stored blob member "h".  fake: "z64" and "loc" put a ZIP64 end record and a locator right
    before the real end record (what zipfile before the gh-139700 fix reads); with
    carrier="blob" the hidden directory and the ZIP64 end record are inside the blob and only the
    locator is in the last entry's comment (what the fixed zipfile follows)."""
    hid_lfh = lfh_bytes(b"a.npy", 20, 0, 0, zlib.crc32(HIDDEN), len(HIDDEN), len(HIDDEN), b"")
    tail_in_blob = carrier == "blob"

    def build(cd_tail, blob_tail):
        blob = hid_lfh + HIDDEN + blob_tail
        ov = {}
        if carrier == "extra":
            ov["cd_extra"] = tlv(0xCAFE, cd_tail)
        elif cd_tail:
            ov["cd_comment"] = cd_tail
        return Z([Member("a.npy", CA), Member("h", blob, **ov)])

    n_cd = 46 + 5                     # the hidden directory: one entry named a.npy
    cd_len = (0 if tail_in_blob else n_cd + 56 * ("z64" in fake)) + 20 * ("loc" in fake)
    blob_len = (n_cd + 56) if tail_in_blob else 0
    b0, L0 = build(b"\0" * cd_len, b"\0" * blob_len)
    hid_lfh_off = L0.m[1]["data"]
    if tail_in_blob:
        hid_cd = L0.m[1]["data"] + len(hid_lfh) + len(HIDDEN)
        z64_at = hid_cd + n_cd
        R = L0.eocd - 76
        z = z64eocd_bytes(1, n_cd, hid_cd, size=44 + (R - z64_at))
        blob_tail = cdh_bytes(b"a.npy", 20, 20, 0, 0, zlib.crc32(HIDDEN), len(HIDDEN), len(HIDDEN), hid_lfh_off) + z
        cd_tail = z64loc_bytes(z64_at, loc_disk, loc_total)
    else:
        blob_tail = b""
        hid_cd = L0.eocd - cd_len
        z64_at = hid_cd + n_cd
        cd_tail = b""
        if "z64" in fake:
            cd_tail += cdh_bytes(b"a.npy", 20, 20, 0, 0, zlib.crc32(HIDDEN), len(HIDDEN), len(HIDDEN), hid_lfh_off)
            cd_tail += z64eocd_bytes(1, n_cd, hid_cd)
        if "loc" in fake:
            cd_tail += z64loc_bytes(z64_at, loc_disk, loc_total)
        cd_tail = cd_tail.rjust(cd_len, b"\0")
    b, L = build(cd_tail, blob_tail)
    assert len(b) == len(b0) and L.eocd == L0.eocd
    return b, L


def eocd_cases():
    """Archives that the stream reads one way and zipfile's end-record search another (issue 12).
    Each is rejected; np.load (the matrix in tests/differential) either rejects it too or loads
    something else than the stream saw."""
    out = []
    add = out.append
    # fake ZIP64 end record + locator in the last central entry's comment / in an unknown extra
    # field's payload: zipfile (before and with the gh-139700 fix) loads the hidden archive
    for carrier in ("comment", "extra"):
        b, L = steered(carrier)
        add(C("npz-eocd-z64-steer-in-cd-%s" % carrier, b, "cd_mismatch", L.eocd - 20, sees={"a": (5,)}))
    # a bare locator in the comment pointing at a ZIP64 end record and directory inside a stored
    # member's data: only the fixed zipfile follows it
    b, L = steered("blob")
    add(C("npz-eocd-locator-to-blob", b, "cd_mismatch", L.eocd - 20, strict="S-ZIP-EOCD-FIND",
          ambig="np.load with the fixed zipfile loads the hidden a.npy (tests/differential runs it)"))
    # a locator alone (no ZIP64 end record before it): the old zipfile ignores it, the fixed one
    # refuses the archive
    b, L = steered("comment", fake=("loc",))
    add(C("npz-eocd-locator-alone", b, "cd_mismatch", L.eocd - 20, strict="S-ZIP-EOCD-FIND",
          ambig="np.load with the fixed zipfile refuses it"))
    # a locator claiming other disks: zipfile refuses the archive
    for disk, total in ((1, 1), (0, 2)):
        b, L = steered("comment", fake=("loc",), loc_disk=disk, loc_total=total)
        add(C("npz-eocd-locator-disks-%d-%d" % (disk, total), b, "zip_unsupported", L.eocd - 20))
    # in a name: the control characters of the signature are refused first
    nm = b"x" + b"PK\x06\x07" + bytes(16)
    b, L = Z([Member(nm, CA)])
    add(C("npz-eocd-locator-in-name", b, "bad_name", 0, strict="S-ZIP-NAME"))
    # end-record signatures that start inside the end record and run into the comment: the
    # comment length field reads "PK" (0x4B50), or its high byte 'P' (0x50xx)
    # (at +21 the length is 0x504B: its low byte 'K' is harmless, its high byte 'P' starts it)
    for at, clen, head in ((20, 0x4B50, b"\x05\x06"), (21, 0x504B, b"K\x05\x06")):
        comment = head + bytes(clen - len(head))
        b, L = Z([Member("a.npy", CA)], comment=comment)
        assert b[L.eocd + at:L.eocd + at + 4] == b"PK\x05\x06"
        add(C("npz-eocd-sig-straddles-%d" % at, b, "cd_mismatch", L.eocd + at, sees={}))
    # the same with a ZIP64 end record and locator in front
    b, L = Z([Member("a.npy", CA)], z64={}, comment=b"\x05\x06" + bytes(0x4B50 - 2))
    add(C("npz-eocd-sig-straddles-20-zip64", b, "cd_mismatch", L.eocd + 20, sees={}))
    # a comment that starts with the rest of a signature the length field begins: "K\x05\x06"
    # after a length whose high byte is 'P', as above but ending in a zero-length fake record
    comment = b"K\x05\x06" + bytes(0x504B - 3 - 22) + eocd_bytes(1, 0, 0)
    b, L = Z([Member("a.npy", CA)], comment=comment)
    add(C("npz-eocd-comment-ends-with-record", b, "zip_bad_header", L.eocd, sees={}))
    return out


def rule_cases():
    """One case for every check the other sections do not reach (test_bad.py's rule gate)."""
    out = []
    add = out.append
    H = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), "
    # header strings
    add(hmark("{'descr': '<i4' @@: 'fortran_order': False, 'shape': (2,), }", "bad_header", "rule-dict-expected-comma"))
    add(hmark(H + "@@'abc", "bad_header", "rule-str-unterminated", pad=False))
    add(hmark(H + "'a@@\\x4", "bad_header", "rule-str-escape-truncated", pad=False))
    add(hmark(canon(descr="[('@@\\U00110000', '<i4')]"), "bad_header", "rule-str-escape-range"))
    # shapes
    add(hmark(H + "@@'shape': (2,), }", "bad_header", "rule-dupkey-shape", strict="S-HDR-DUPKEY"))
    add(hmark(canon(shape="(2 @@3)"), "bad_shape", "rule-shape-expected-comma"))
    add(hmark(canon(descr="[('a', '<i4', @@(3))]"), "bad_header", "rule-field-shape-parenthesized-int", I4x2 * 6,
              strict="S-HDR-SYNTAX"))
    add(hmark(canon(descr="[('a', '<i4', (2 @@3))]"), "bad_header", "rule-field-shape-expected-comma"))
    # type strings
    add(hmark(canon(descr="@@'<'"), "bad_header", "rule-descr-no-type"))
    add(hmark(canon(descr="@@'<i04'"), "bad_header", "rule-descr-leading-zero", strict="S-DESCR-ALIAS"))
    add(hmark(canon(descr="@@'<M8[s'"), "bad_header", "rule-descr-datetime-form", bytes(16)))
    add(hmark(canon(descr="@@'<M8[99999999999s]'"), "bad_header", "rule-descr-datetime-multiplier", bytes(16),
              strict="S-DESCR-ALIAS"))
    add(hmark(canon(descr="@@'<M8[0s]'"), "bad_header", "rule-descr-datetime-multiplier-zero", bytes(16),
              strict="S-DESCR-ALIAS"))
    add(hmark(canon(descr="@@'<M8[2generic]'"), "bad_header", "rule-descr-datetime-generic", bytes(16),
              strict="S-DESCR-ALIAS"))
    add(hmark(canon(descr="@@'<i4x'"), "bad_header", "rule-descr-text"))
    # field lists
    add(hmark(canon(descr="[('a', '<i4') @@('b', '<i4')]"), "bad_header", "rule-list-comma", I4x2 * 2))
    add(hmark(canon(descr="[(('t' @@x 'a'), '<i4')]"), "bad_header", "rule-title-comma"))
    add(hmark(canon(descr="[(('t', 'a' @@x), '<i4')]"), "bad_header", "rule-title-close"))
    add(hmark(canon(descr="[('a' @@x '<i4')]"), "bad_header", "rule-name-comma"))
    add(hmark(canon(descr="[('a', '<i4' @@x)]"), "bad_header", "rule-field-close"))
    add(hmark(canon(descr="[('a', ('<i4' @@x (2,)))]"), "bad_header", "rule-subarray-comma"))
    add(hmark(canon(descr="[('a', ('<i4', (2,) @@x))]"), "bad_header", "rule-subarray-close"))
    # sizes
    add(hmark(canon(descr="[('a', '<i1', @@(2147483647, 2147483647, 2147483647))]"), "size_overflow",
              "rule-subarray-count-overflow"))
    add(hmark(canon(descr="[('a', '<i8', @@(268435456,))]"), "size_overflow", "rule-field-size"))
    add(hmark(canon(descr="[('a', '|S2147483647'), @@('b', '|S1')]"), "size_overflow", "rule-struct-size"))
    # ZIP records
    b, L = Z([Member("a.npy", CA)])
    extra_lfh = lfh_bytes(b"b.npy", 20, 0, 0, 0, 0, 0, b"")
    add(C("rule-local-after-directory", b[:L.cd_end] + extra_lfh + b[L.cd_end:], "zip_bad_header", L.cd_end))
    b, L = Z([Member("a.npy", CA, cd_name=b"ab.npy")])
    add(C("rule-cd-name-length", b, "cd_mismatch", L.cd[0]))
    # lenient flags: each accepts exactly its one thing
    g = good_npy()
    LT, LH = ["--lenient-npy-trailing"], ["--lenient-header-newline"]
    add(A("acc-npy-lenient-trailing", g + b"stale bytes of a longer file", LT))
    add(A("acc-npy-lenient-trailing-second-array", g + g, LT))
    add(A("acc-npy-lenient-trailing-empty-array", good_npy(b"", shape="(0,)") + b"x" * 100, LT))
    add(C("npy-lenient-trailing-not-in-npz", Z([Member("a.npy", CA + b"xx")])[0], "trailing_data",
          Z([Member("a.npy", CA + b"xx")])[1].m[0]["data"] + len(CA), LT, strict="S-ZIP-MEMBER-TRAIL"))
    b, L = Z([Member("a.npy", CA)], after=b"x")
    add(C("npz-lenient-trailing-not-after-archive", b, "trailing_data", L.comment_end, LT, strict="S-ZIP-TRAIL"))
    nl = npy(BASE + "\n" + " " * (118 - len(BASE) - 1), I4x2, pad=False)  # data at 128, as npyjs aligns it
    add(A("acc-npy-lenient-header-newline", nl, LH))
    add(C("npy-header-newline-strict", nl, "bad_header", 10 + len(BASE) + 1, strict="S-HDR-WS",
          ambig="NumPy 1.24 and 2.x on Python 3.11 load it; 2.x on Python 3.12 refuses it"))
    add(hmark(BASE + "\n  @@x", "bad_header", "npy-lenient-header-newline-only-spaces", pad=False, args=LH))
    add(hmark(BASE + "\n@@\t", "bad_header", "npy-lenient-header-newline-no-tab", pad=False, args=LH,
              strict="S-HDR-WS"))
    # limits
    add(C("rule-limit-total-bytes-array", g, "limit", 10, ["--max-total-bytes", "10"], strict="L-max-total-bytes"))
    add(hmark(canon(descr="[('a', '<i4'), (@@'b', '<i4')]"), "limit", "rule-limit-fields", I4x2 * 2,
              args=["--max-fields", "1"], strict="L-max-fields"))
    add(hmark(canon(descr="[('a', @@[('b', '<i4')])]"), "limit", "rule-limit-depth", args=["--max-depth", "1"],
              strict="L-max-depth"))
    b, L = Z([Member("a.npy", CA)])
    add(C("rule-limit-name-len", b, "limit", 0, ["--max-name-len", "3"], strict="L-max-name-len"))
    add(C("rule-limit-extra-len", b, "limit", 0, ["--max-extra-len", "8"], strict="L-max-extra-len"))
    b, L = Z([Member("a.npy", CBIG, 8)])
    add(C("rule-limit-memory", b, "limit", 0, ["--max-memory", "30000"], strict="L-max-memory",
          ambig="zlib's state and window (~40 KiB) do not fit: limit at the member's local header"))
    b, L = Z([Member("a.npy", CA, 0, "legacy", cd_extra=tlv(0xCAFE, bytes(12)))])
    add(C("rule-limit-extra-len-central", b, "limit", L.cd[0], ["--max-extra-len", "8"], strict="L-max-extra-len"))
    return out


def sequence_cases():
    """--sequence (npzs_npy_sequence): .npy arrays back to back on one stream.  np.load has no
    such mode (it reads the first array and ignores the rest), so these are not compared with
    NumPy; tests/cli compares each array of a sequence with np.load of that array."""
    a = good_npy()
    b = npy(canon(descr="'<f8'", shape="(3,)"), bytes(24))
    c = npy(canon(descr="'|u1'", shape="()"), b"\x07", version=(2, 0))
    s = ["--sequence"]
    return [
        A("acc-npy-sequence-three", a + b + c, args=s),
        A("acc-npy-sequence-one", a, args=s),
        C("npy-sequence-empty", b"", "truncated", 0, args=s),
        C("npy-sequence-truncated-second", a + b[:-5], "truncated", len(a + b) - 5, args=s),
        C("npy-sequence-cut-in-second-magic", a + b[:3], "truncated", len(a) + 3, args=s),
        C("npy-sequence-garbage-after-first", a + b"x" + b, "bad_magic", len(a), args=s),
        C("npy-sequence-zip-after-first", a + b"PK\x03\x04", "bad_magic", len(a), args=s),
        C("npy-sequence-bad-version-second", a + b[:6] + b"\x09\x00" + b[8:], "bad_version", len(a) + 6, args=s),
        C("npy-sequence-max-members", a + b + c, "limit", len(a + b), args=s + ["--max-members", "2"]),
        C("npy-sequence-header-of-second", a + npy(canon(descr="'<i5'"), I4x2), "bad_header", len(a) + 20, args=s),
    ]


# ------------------------------------------------------------------ policies

#: The policies the policy cases use: tests/vectors/gen.py writes each to tests/bad/policies/NAME.json
#: (and --check compares them with the files), every suite reads them from there.
POLICIES = {
    "mnist": {"members": {"images": {"dtype": ["<f4"], "shape": ["N", 2, 2], "finite": True},
                          "labels": {"dtype": ["<i8", "<i4"], "shape": ["N"], "range": [0, 9]}},
              "dims": {"N": [1, 60000]}, "allow_other_members": False, "allow_blobs": False},
    "npz-only": {"format": "npz"},
    "two-members": {"max_members": 2},
    "no-blobs": {"allow_blobs": False},
    "text-blobs": {"allow_blobs": ["text", "empty"]},
    "blob-spec": {"members": {"meta": {"kind": "blob", "max_bytes": 12}, "a": {"kind": "array"}}},
    "little": {"members": {"*": {"byte_order": "little"}}, "array": {"byte_order": "little"}},
    "c-order": {"array": {"fortran_order": False}},
    "dims-3-10": {"array": {"shape": ["N"]}, "dims": {"N": [3, 10]}},
    "square": {"array": {"shape": ["N", "N"]}},
    "rest": {"array": {"shape": ["...", 2]}},
    "elements-1": {"array": {"elements": [0, 1]}},
    "array-4-bytes": {"array": {"max_bytes": 4}},
    "total-200": {"max_total_bytes": 200},
    "finite": {"array": {"finite": True}, "members": {"*": {"finite": True}}},
    "range-0-9": {"array": {"range": [0, 9]}},
    "range-1-9": {"array": {"range": [1, 9]}},
    "range-float": {"array": {"range": [-1.5, 1.5]}},
    "names": {"array": {"dtype": ["float32", "int32", "datetime64[s]"]}},
    "fields": {"array": {"dtype": [[["a", "<i4"], ["b", "<f4", [2]]]]}},
    "fields-layout": {"array": {"dtype": [{"fields": [["a", "<i4"], ["b", "<f4", [2]]], "offsets": [4, 8], "itemsize": 20,
                                           "titles": ["A", None]}]}},
    "fields-nested-sub": {"array": {"dtype": [[["a", {"base": "<i2", "shape": [3]}, [2]]]]}},
    "pinned": {"array": {"dtype": ["<i4"], "shape": [2], "fortran_order": False, "sha256": "0" * 64}},
    "pinned-empty": {"array": {"dtype": ["<i4"], "shape": [0], "fortran_order": False, "sha256": "0" * 64}},
    "pinned-ok": {"array": {"dtype": ["<i4"], "shape": [2], "fortran_order": False,
                            "sha256": "34fb5c825de7ca4aea6e712f19d439c1da0c92c37b423936c5f618545ca4fa1f"}},
    # the same 16 bytes, pinned as a 2 x 2 matrix in C order, and as a member (which a blob is not)
    "pinned-2x2": {"array": {"dtype": ["<i4"], "shape": [2, 2], "fortran_order": False,
                             "sha256": "a253b9824c31fb77401313b50bc7ea1a7d0a329953d327b36bf9a8326adb2310"}},
    "pinned-member": {"members": {"a": {"dtype": ["<i4"], "shape": [2], "fortran_order": False,
                                        "sha256": "34fb5c825de7ca4aea6e712f19d439c1da0c92c37b423936c5f618545ca4fa1f"}}},
    "bf16": {"array": {"dtype": ["bfloat16"], "finite": True, "range": [-2, 2]}},
    "void-v2": {"array": {"dtype": ["|V2"], "finite": True}},
    "required-npy": {"members": {"w": {}}},
    "no-others": {"allow_other_members": False},
    "bidi-key": {"members": {"x\u202ey\n": {}}},
}


def policy_arg(name):
    return ["--policy", "tests/bad/policies/%s.json" % name]


def policy_cases():
    """One case for every POLICY rule, at the byte that decides it (test_bad.py's rule gate covers
    them), and accepted inputs for each policy.  Each policy only adds rejections: run_vectors also
    runs every case without its policy and checks the verdict is the same unless it is a policy
    rejection."""
    out = []
    add = out.append
    P = policy_arg

    def C(name, data, code, offset, args=()):  # noqa: N802 -- a rejection by the policy: its mark
        return Case(name, bytes(data), code, offset, list(args), "POLICY", None, None)
    f4 = lambda shape, vals: npy(canon(descr="'<f4'", shape=shape), struct.pack("<%df" % len(vals), *vals))
    i8 = lambda shape, vals: npy(canon(descr="'<i8'", shape=shape), struct.pack("<%dq" % len(vals), *vals))
    img = f4("(2, 2, 2)", [0.5] * 8)
    lab = i8("(2,)", [3, 9])
    good = [Member("images.npy", img), Member("labels.npy", lab)]
    for st in ("file", "pipe", "legacy"):
        add(A("acc-pol-mnist-stored-" + st, Z([Member(m.name, m.content, 0, st) for m in good])[0], P("mnist")))
        add(A("acc-pol-mnist-deflated-" + st, Z([Member(m.name, m.content, 8, st) for m in good])[0], P("mnist")))
    hl = 128  # the npy arrays below: preamble and header padded to 128 bytes; the data at 128
    # members
    b, L = Z(good + [Member("x.npy", CA)])
    add(C("pol-members-not-listed", b, "policy", L.m[2]["lfh"], P("mnist")))
    b, L = Z([Member("images.npy", img)])
    add(C("pol-required-missing", b, "policy", L.cd[0], P("mnist")))
    add(C("pol-required-missing-empty-archive", eocd_bytes(0, 0, 0), "policy", 0, P("mnist")))
    add(C("pol-required-npy", good_npy(), "policy", 0, P("required-npy")))
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB), Member("c.npy", CA)])
    add(C("pol-max-members", b, "policy", L.m[2]["lfh"], P("two-members")))
    add(A("acc-pol-max-members-equal", Z([Member("a.npy", CA), Member("b.npy", CB)])[0], P("two-members")))
    add(C("pol-format-npy", good_npy(), "policy", 0, P("npz-only")))
    # blobs: refused at the first byte that is not the magic; a kind once 16 bytes are in
    b, L = Z([Member("a.npy", CA), Member("notes", b"\x93NUx")])
    add(C("pol-blob-refused", b, "policy", L.m[1]["data"] + 3, P("no-blobs")))
    b, L = Z([Member("notes", b"")])
    add(C("pol-blob-empty-refused", b, "policy", L.m[0]["data"], P("no-blobs")))
    b, L = Z([Member("images.npy", b"text, not an array")])
    add(C("pol-blob-where-array", b, "policy", L.m[0]["data"], P("mnist")))
    pickled = b"\x80\x04\x95\x10\x00\x00\x00\x00\x00\x00\x00}\x94\x8c\x01a\x94K\x01s."
    b, L = Z([Member("model.pkl", pickled)])
    add(C("pol-blob-kind-pickle", b, "policy", L.m[0]["data"], P("text-blobs")))
    b, L = Z([Member("model.pkl", pickled, 8, "pipe")])
    add(C("pol-blob-kind-pickle-deflated", b, "policy", L.m[0]["data"], P("text-blobs")))
    b, L = Z([Member("proto0", b"(lp0\nI1\naI2\na.")])
    add(C("pol-blob-kind-pickle-protocol-0", b, "policy", L.m[0]["data"], P("text-blobs")))
    add(A("acc-pol-blob-text", Z([Member("notes.txt", "caf\u00e9 au lait, 16+ bytes\n".encode())])[0], P("text-blobs")))
    add(A("acc-pol-blob-text-short", Z([Member("n", b"ok\n"), Member("e", b"")])[0], P("text-blobs")))
    b, L = Z([Member("zipped", b"PK\x03\x04" + bytes(20))])
    add(C("pol-blob-kind-zip", b, "policy", L.m[0]["data"], P("text-blobs")))
    b, L = Z([Member("bin", bytes(range(32)))])
    add(C("pol-blob-kind-binary", b, "policy", L.m[0]["data"], P("text-blobs")))
    b, L = Z([Member("meta.npy", CA)])
    add(C("pol-kind-array-not-blob", b, "policy", L.m[0]["data"], P("blob-spec")))
    b, L = Z([Member("meta", b"0123456789abcdef")])
    add(C("pol-blob-bytes-declared", b, "policy", L.m[0]["data"], P("blob-spec")))
    big = b"0123456789abcdefghij" * 3
    b, L = Z([Member("meta", big, 8, "pipe")])
    add(C("pol-blob-bytes-streamed", b, "policy", L.m[0]["data"], P("blob-spec")))
    b, L = Z([Member("meta", big[:12] + b"\x00" * 40, 0, "file")])
    add(C("pol-blob-bytes-stored", b, "policy", L.m[0]["data"], P("blob-spec")))
    add(A("acc-pol-blob-bytes-equal", Z([Member("meta", big[:12], 8, "pipe"), Member("a.npy", CA)])[0], P("blob-spec")))
    # headers: at the header text (the data start + 10 in a v1.0 member), before any data byte
    b, L = Z([Member("images.npy", npy(canon(descr="'<f8'", shape="(2, 2, 2)"), bytes(64))), Member("labels.npy", lab)])
    add(C("pol-dtype", b, "policy", L.m[0]["data"] + 10, P("mnist")))
    b, L = Z([Member("images.npy", f4("(2, 2, 3)", [0.0] * 12)), Member("labels.npy", lab)])
    add(C("pol-shape-fixed", b, "policy", L.m[0]["data"] + 10, P("mnist")))
    b, L = Z([Member("images.npy", f4("(2, 4)", [0.0] * 8)), Member("labels.npy", lab)])
    add(C("pol-ndim", b, "policy", L.m[0]["data"] + 10, P("mnist")))
    b, L = Z([Member("images.npy", img), Member("labels.npy", i8("(3,)", [1, 2, 3]))])
    add(C("pol-shape-var", b, "policy", L.m[1]["data"] + 10, P("mnist")))
    b, L = Z([Member("images.npy", img, 8, "pipe"), Member("labels.npy", i8("(3,)", [1, 2, 3]), 8, "pipe")])
    add(C("pol-shape-var-deflated", b, "policy", L.m[1]["data"], P("mnist")))
    add(C("pol-shape-var-square", npy(canon(shape="(2, 3)"), bytes(24)), "policy", 10, P("square")))
    add(A("acc-pol-square", npy(canon(shape="(3, 3)"), bytes(36)), P("square")))
    add(C("pol-dim-range", good_npy(), "policy", 10, P("dims-3-10")))
    add(A("acc-pol-dim-range", good_npy(bytes(12), shape="(3,)"), P("dims-3-10")))
    add(A("acc-pol-rest", npy(canon(shape="(1, 3, 2)"), bytes(24)), P("rest")))
    add(C("pol-rest-last", npy(canon(shape="(2, 3)"), bytes(24)), "policy", 10, P("rest")))
    add(C("pol-rest-ndim", good_npy(bytes(4), shape="()"), "policy", 10, P("rest")))
    add(C("pol-elements", good_npy(), "policy", 10, P("elements-1")))
    add(C("pol-member-bytes-array", good_npy(), "policy", 10, P("array-4-bytes")))
    add(A("acc-pol-member-bytes-array", good_npy(b"\x01\x00\x00\x00", shape="(1,)"), P("array-4-bytes")))
    add(C("pol-byte-order", Z([Member("a.npy", content(descr="'>i4'"))])[0], "policy",
          Z([Member("a.npy", content(descr="'>i4'"))])[1].m[0]["data"] + 10, P("little")))
    add(A("acc-pol-byte-order-one-byte", Z([Member("a.npy", content(descr="'|u1'", data=b"ab"))])[0], P("little")))
    add(C("pol-fortran-order", good_npy(I4x2 * 2, fortran="True", shape="(2, 2)"), "policy", 10, P("c-order")))
    add(C("pol-dtype-name", npy(canon(descr="'<f8'"), bytes(16)), "policy", 10, P("names")))
    add(A("acc-pol-dtype-name-float32", npy(canon(descr="'>f4'"), bytes(8)), P("names")))
    add(A("acc-pol-dtype-name-datetime", npy(canon(descr="'<M8[s]'"), bytes(16)), P("names")))
    add(C("pol-dtype-name-datetime-unit", npy(canon(descr="'<M8[ms]'"), bytes(16)), "policy", 10, P("names")))
    add(A("acc-pol-fields", npy(canon(descr="[('a', '<i4'), ('b', '<f4', (2,))]"), bytes(24)), P("fields")))
    add(C("pol-fields-shape", npy(canon(descr="[('a', '<i4'), ('b', '<f4', (3,))]"), bytes(32)), "policy", 10,
          P("fields")))
    add(C("pol-fields-name", npy(canon(descr="[('a', '<i4'), ('c', '<f4', (2,))]"), bytes(24)), "policy", 10,
          P("fields")))
    add(C("pol-fields-plain", npy(canon(descr="'<i4'"), bytes(8)), "policy", 10, P("fields")))
    # a field list is the whole layout: packed offsets, the itemsize, no titles
    add(C("pol-fields-offset", npy(canon(descr="[('', '|V4'), ('a', '<i4'), ('b', '<f4', (2,))]"), bytes(32)), "policy", 10,
          P("fields")))
    add(C("pol-fields-itemsize", npy(canon(descr="[('a', '<i4'), ('b', '<f4', (2,)), ('', '|V4')]"), bytes(32)), "policy",
          10, P("fields")))
    add(C("pol-fields-title", npy(canon(descr="[(('A', 'a'), '<i4'), ('b', '<f4', (2,))]"), bytes(24)), "policy", 10,
          P("fields")))
    add(C("pol-fields-type-byte-swapped", npy(canon(descr="[('a', '>i4'), ('b', '<f4', (2,))]"), bytes(24)), "policy", 10,
          P("fields")))
    laid = "[('', '|V4'), (('A', 'a'), '<i4'), ('b', '<f4', (2,)), ('', '|V4')]"
    add(A("acc-pol-fields-layout", npy(canon(descr=laid), bytes(40)), P("fields-layout")))
    add(C("pol-fields-layout-packed", npy(canon(descr="[(('A', 'a'), '<i4'), ('b', '<f4', (2,))]"), bytes(24)), "policy",
          10, P("fields-layout")))
    add(A("acc-pol-fields-nested-sub", npy(canon(descr="[('a', ('<i2', (3,)), (2,))]"), bytes(24)), P("fields-nested-sub")))
    add(C("pol-fields-nested-sub-flat", npy(canon(descr="[('a', '<i2', (2, 3))]"), bytes(24)), "policy", 10,
          P("fields-nested-sub")))
    # byte_order: every scalar of a structured dtype, through nested fields and subarrays
    add(C("pol-byte-order-struct", npy(canon(descr="[('a', '<f4'), ('b', [('c', '|u1'), ('d', '>i8', (2,))])]", shape="(1,)"),
                                       bytes(21)), "policy", 10, P("little")))
    add(A("acc-pol-byte-order-struct", npy(canon(descr="[('a', '<f4'), ('b', [('c', '|S3'), ('d', '<i8', (2,))])]",
                                                 shape="(1,)"), bytes(23)), P("little")))
    # fortran_order where the orders lay the bytes out alike (np.load: the same array)
    add(A("acc-pol-fortran-order-1d", good_npy(fortran="True"), P("c-order")))
    add(A("acc-pol-fortran-order-1xn", good_npy(fortran="True", shape="(1, 2)"), P("c-order")))
    # totals: the tighter of the limit and the policy's cap, at the three places that decide
    b, L = Z([Member("a.npy", CA), Member("b.npy", CB)])
    add(C("pol-total-bytes-local-header", b, "policy", L.m[1]["lfh"], P("total-200")))
    b, L = Z([Member("a.npy", CA, 0, "pipe"), Member("b.npy", CB, 0, "pipe")])
    add(C("pol-total-bytes-header", b, "policy", L.m[1]["data"] + 10, P("total-200")))
    b, L = Z([Member("meta", bytes(250), 8, "pipe")])
    add(C("pol-total-bytes-inflated", b, "policy", L.m[0]["data"], P("total-200")))
    add(A("acc-pol-total-bytes", Z([Member("a.npy", CA)])[0], P("total-200")))
    # values: at the element (its first byte), after the elements before it went out as DATA
    assert struct.unpack("<H", f4("(4,)", [0] * 4)[8:10])[0] + 10 == hl == struct.unpack("<H", good_npy()[8:10])[0] + 10
    add(C("pol-nan-f4", f4("(4,)", [0.0, 1.0, float("nan"), 2.0]), "policy", hl + 8, P("finite")))
    add(C("pol-inf-f4", f4("(4,)", [0.0, 1.0, 2.0, float("-inf")]), "policy", hl + 12, P("finite")))
    add(C("pol-nan-f8-big", npy(canon(descr="'>f8'", shape="(3,)"), struct.pack(">3d", 1, 2, float("nan"))), "policy",
          hl + 16, P("finite")))
    add(C("pol-inf-f2", npy(canon(descr="'<f2'", shape="(3,)"), struct.pack("<3e", 1, float("inf"), 2)), "policy",
          hl + 2, P("finite")))
    add(C("pol-nan-c8-imag", npy(canon(descr="'<c8'", shape="(2,)"), struct.pack("<4f", 1, 2, 3, float("nan"))),
          "policy", hl + 12, P("finite")))
    many = [0.25] * 3000
    many[2500] = float("nan")
    add(C("pol-nan-f4-block", f4("(3000,)", many), "policy", hl + 4 * 2500, P("finite")))
    b, L = Z([Member("w.npy", f4("(3000,)", many), 8, "pipe")])
    add(C("pol-nan-f4-deflated", b, "policy", L.m[0]["data"], P("finite")))
    add(A("acc-pol-finite", f4("(3000,)", [1e30] * 3000), P("finite")))
    add(A("acc-pol-finite-ints", i8("(2,)", [-1, 2]), P("finite")))
    add(C("pol-check-type-f16", npy(canon(descr="'<f16'", shape="(1,)"), bytes(16)), "policy", 10, P("finite")))
    add(C("pol-check-type-struct", npy(canon(descr="[('a', '<f4')]", shape="(1,)"), bytes(4)), "policy", 10,
          P("finite")))
    add(C("pol-range-int", i8("(3,)", [0, 9, 10]), "policy", hl + 16, P("range-0-9")))
    add(C("pol-range-negative", i8("(3,)", [0, -1, 5]), "policy", hl + 8, P("range-0-9")))
    add(C("pol-range-u1", npy(canon(descr="'|u1'", shape="(3,)"), b"\x01\x09\xff"), "policy", hl + 2, P("range-0-9")))
    add(C("pol-range-i2-big", npy(canon(descr="'>i2'", shape="(2,)"), struct.pack(">2h", 5, -3)), "policy", hl + 2,
          P("range-0-9")))
    add(A("acc-pol-range-int", i8("(2,)", [0, 9]), P("range-0-9")))
    add(C("pol-range-float", f4("(3,)", [0.0, 1.5, 1.5000001]), "policy", hl + 8, P("range-float")))
    add(C("pol-range-float-nan", f4("(2,)", [0.0, float("nan")]), "policy", hl + 4, P("range-float")))
    add(A("acc-pol-range-float", f4("(3,)", [-1.5, 0.0, 1.5]), P("range-float")))
    add(C("pol-check-type-range-complex", npy(canon(descr="'<c8'", shape="(1,)"), bytes(8)), "policy", 10,
          P("range-float")))
    # a pinned SHA-256: decided at the data's last byte
    add(C("pol-sha256", good_npy(), "policy", hl + 8, P("pinned")))
    add(A("acc-pol-sha256", good_npy(), P("pinned-ok")))
    add(C("pol-sha256-empty", good_npy(b"", shape="(0,)"), "policy", hl, P("pinned-empty")))
    # a pin binds the array np.load returns: its dtype with the byte order, its shape, its order
    # and its kind, not only the bytes
    add(C("pol-sha256-byte-swapped", good_npy(descr="'>i4'"), "policy", 10, P("pinned-ok")))
    add(C("pol-sha256-shape", good_npy(shape="(1, 2)"), "policy", 10, P("pinned-ok")))
    add(C("pol-sha256-fortran", good_npy(I4x2 * 2, fortran="True", shape="(2, 2)"), "policy", 10, P("pinned-2x2")))
    add(A("acc-pol-sha256-2x2", good_npy(I4x2 * 2, shape="(2, 2)"), P("pinned-2x2")))
    b, L = Z([Member("a.npy", I4x2)])
    add(C("pol-sha256-blob", b, "policy", L.m[0]["data"], P("pinned-member")))
    add(A("acc-pol-sha256-member", Z([Member("a.npy", good_npy())])[0], P("pinned-member")))
    # datetimes: NaT is not finite (np.isfinite, np.isnat); a range does not apply
    nat = struct.pack("<q", -(1 << 63))
    add(C("pol-nat-m8", npy(canon(descr="'<M8[s]'", shape="(3,)"), struct.pack("<q", 5) * 2 + nat), "policy", hl + 16,
          P("finite")))
    add(C("pol-nat-m8-big", npy(canon(descr="'>m8[ns]'", shape="(2,)"), nat[::-1] + bytes(8)), "policy", hl, P("finite")))
    add(A("acc-pol-nat-min-plus-one", npy(canon(descr="'<M8[s]'", shape="(1,)"), struct.pack("<q", -(1 << 63) + 1)),
          P("finite")))
    add(C("pol-check-type-datetime-range", npy(canon(descr="'<M8[s]'", shape="(1,)"), bytes(8)), "policy", 10,
          P("range-0-9")))
    # bfloat16: a |V2 the name admits, read as little-endian bfloat16; another |V2 is not checked
    add(C("pol-bf16-nan", npy(canon(descr="'|V2'", shape="(3,)"), b"\x80\x3f\x00\x00\xc1\x7f"), "policy", hl + 4,
          P("bf16")))
    add(C("pol-bf16-inf", npy(canon(descr="'|V2'", shape="(2,)"), b"\x80\xff\x00\x00"), "policy", hl, P("bf16")))
    add(C("pol-bf16-range", npy(canon(descr="'|V2'", shape="(2,)"), b"\x00\xc0\x40\xc0"), "policy", hl + 2, P("bf16")))
    add(A("acc-pol-bf16", npy(canon(descr="'|V2'", shape="(3,)"), b"\x80\x3f\x00\xc0\x00\x00"), P("bf16")))
    add(C("pol-check-type-void", npy(canon(descr="'|V2'", shape="(1,)"), bytes(2)), "policy", 10, P("void-v2")))
    add(C("pol-check-type-text", npy(canon(descr="'|S3'", shape="(1,)"), b"abc"), "policy", 10, P("finite")))
    # bool: NumPy reads any byte but 0 as True (1)
    add(C("pol-range-bool", npy(canon(descr="'|b1'", shape="(3,)"), b"\x01\x00\x00"), "policy", hl + 1,
          P("range-1-9")))
    add(A("acc-pol-range-bool-byte-2", npy(canon(descr="'|b1'", shape="(2,)"), b"\x01\x02"), P("range-1-9")))
    # names in the words of a violation: cut at 64 bytes of text on a character's end, the
    # characters no text output shows as they are escaped (the detail; the native and the wasm
    # command print these alike, tests/wasm)
    for nm, key in (("name-cut-2byte", "a" * 63 + "\u00e9"), ("name-cut-4byte", "a" * 62 + "\U0001f600"),
                    ("name-bidi", "x\u202ey\u2066z")):
        b, L = Z([Member(key + ".npy", CA, flags=0x800)])
        add(C("pol-members-" + nm, b, "policy", L.m[0]["lfh"], P("no-others")))
        add(A("acc-npz-" + nm, b))
    b, L = Z([Member("a.npy", CA)])
    add(C("pol-required-key-bidi", b, "policy", L.cd[0], P("bidi-key")))
    # field names NumPy writes with escapes: a lone surrogate, a bidi control, an escape character
    add(A("acc-npy-field-surrogate", npy(canon(descr="[('\\ud800', '<i4')]"), I4x2)))
    add(A("acc-npy-field-bidi-control", npy(canon(descr="[('a\\u202eb\\x1b', '<i4')]"), I4x2)))
    return out


def cases():
    out = npy_cases() + npz_cases() + eocd_cases() + rule_cases() + sequence_cases() + policy_cases()
    names = [c.name for c in out]
    assert len(names) == len(set(names)), [n for n in names if names.count(n) > 1]
    return out


def iter_cases():
    for c in cases():
        yield (c.name, c.data, c.code, c.offset, c.args)


# ------------------------------------------------------------------ NumPy side

def numpy_view(data, max_header_size=None):
    """What NumPy (allow_pickle=False) loads from the bytes, touching every member: None when it
    rejects them; a plain .npy's shape; an archive's {key: shape, or ("blob", size)}.

    A plain .npy counts as accepted if either np.load(BytesIO) or np.load(path) loads it
    (1.24 accepts negative dimensions only from a real file)."""
    import io
    import tempfile
    import warnings
    import numpy as np
    kw = {} if max_header_size is None else {"max_header_size": max_header_size}

    def view(r):
        if not hasattr(r, "files"):
            return tuple(r.shape)
        with r:
            out = {}
            for k in r.files:
                v = r[k]
                out[k] = tuple(v.shape) if isinstance(v, np.ndarray) else ("blob", len(v))
            return out

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            return view(np.load(io.BytesIO(data), allow_pickle=False, **kw))
        except BaseException as e:  # noqa: B902  (any exception = reject)
            if isinstance(e, KeyboardInterrupt):
                raise
        if data[:6] == MAGIC:
            with tempfile.NamedTemporaryFile(suffix=".npy") as f:
                f.write(data)
                f.flush()
                try:
                    return view(np.load(f.name, allow_pickle=False, **kw))
                except BaseException as e:  # noqa: B902
                    if isinstance(e, KeyboardInterrupt):
                        raise
    return None


def numpy_accepts(data, max_header_size=None):
    """True if NumPy (allow_pickle=False) loads the bytes, touching every member."""
    return numpy_view(data, max_header_size) is not None


def numpy_args(args):
    if "--max-header-size" in args:
        return int(args[args.index("--max-header-size") + 1])
    return None


def main():
    cs = cases()
    with_np = "--numpy" in sys.argv
    nrej = sum(1 for c in cs if c.code)
    print("%d cases: %d reject, %d accept" % (len(cs), nrej, len(cs) - nrej))
    bad = 0
    for c in cs:
        line = "%-44s %-16s %-8s %s" % (c.name, c.code or "ACCEPT", "" if c.offset is None else c.offset,
                                        c.strict or "")
        if with_np:
            acc = numpy_accepts(c.data, numpy_args(c.args))
            line += "  numpy:" + ("accepts" if acc else "rejects")
            if c.code is None and not acc:
                line += "  (NOTE: accept case NumPy rejects)"
            if c.code and acc and not c.strict:
                line += "  WARNING: unmarked strict case"
                bad += 1
            if c.code and not acc and c.strict:
                line += "  NOTE: marked strict but NumPy rejects"
        print(line)
    if with_np:
        print("unmarked strict cases: %d" % bad)


if __name__ == "__main__":
    main()
