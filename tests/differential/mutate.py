"""Seeded mutator over real .npy/.npz files for the differential oracle.

mutant(seeds, rng) -> (bytes, [op names]).  Operations:
  byte level      flips, random bytes, interesting values, insert/delete/duplicate ranges,
                  truncation, appended junk (on the raw file, or inside one member's content with
                  the CRC/sizes/deflate stream recomputed so the mutant reaches deeper rules)
  .npy header     field-aware edits of the header dict: keys (renamed, duplicated, dropped,
                  reordered, other quoting/prefixes/escapes), values (descr, shape,
                  fortran_order, from pools of aliases, quirks and corner cases), whitespace
                  and comments between tokens, padding, version, header-length field; data
                  resized to the new declared size most of the time
  ZIP records     names, sizes, offsets, methods, flags, counts, extra fields, comments,
                  descriptors, versions, disks, reordered/duplicated/dropped/hidden records,
                  ZIP64 end records, prefix/gap/suffix bytes -- on the archive model of
                  ziputil.py, which recomputes every derived field that was not pinned
  end records     (endrec_op, on the serialized archive) fake end records, ZIP64 locators and
                  ZIP64 end records planted where the stream does not interpret the bytes and
                  CPython's zipfile searches for them: the last directory entry's comment, an
                  unknown extra field of it, its name; stored member data; the archive comment;
                  signatures straddling the end record's comment-length field; a last-22-bytes
                  end record with an empty comment
"""
import ast
import struct
import zlib

import ziputil

MAGIC = b"\x93NUMPY"
INTERESTING = [0, 1, 0x7F, 0x80, 0xFF, 0x20, 0x0A, 0x0D, 0x27, 0x22, 0x2C, 0x7B, 0x7D, 0x28, 0x29, 0x5C, 0x50, 0x4B]


# ------------------------------------------------------------------ byte level
def byte_op(b, r, what=None):
    b = bytearray(b)
    ops = ["flip", "set", "interesting", "insert", "delete", "dup", "truncate", "append"]
    op = what or r.choice(ops)
    n = len(b)
    if n == 0:
        op = "insert"
    i = r.randrange(n) if n else 0
    if op == "flip":
        b[i] ^= 1 << r.randrange(8)
    elif op == "set":
        b[i] = r.randrange(256)
    elif op == "interesting":
        b[i] = r.choice(INTERESTING)
    elif op == "insert":
        k = r.choice([1, 1, 2, 4, 8, 64])
        b[i:i] = bytes(r.randrange(256) for _ in range(k)) if r.random() < 0.5 else bytes([r.choice(INTERESTING)]) * k
    elif op == "delete":
        k = min(n - i, r.choice([1, 1, 2, 4, 16, 100]))
        del b[i:i + k]
    elif op == "dup":
        k = min(n - i, r.choice([1, 4, 16, 64, 512]))
        b[i:i] = b[i:i + k]
    elif op == "truncate":
        del b[r.randrange(n):]
    elif op == "append":
        b += bytes(r.randrange(256) for _ in range(r.choice([1, 2, 16]))) if r.random() < 0.5 else b"\x00" * r.choice([1, 8])
    return bytes(b), "byte." + op


# ------------------------------------------------------------------ npy model
class Npy:
    def __init__(self):
        self.magic = MAGIC
        self.ver = (1, 0)
        self.hlen = None        # None: computed
        self.text = ""          # header text (latin-1 view of the bytes)
        self.data = b""

    @staticmethod
    def parse(raw):
        if raw[:6] != MAGIC or len(raw) < 10:
            return None
        n = Npy()
        n.ver = (raw[6], raw[7])
        if raw[6] == 1:
            hl, s = struct.unpack_from("<H", raw, 8)[0], 10
        elif raw[6] in (2, 3) and len(raw) >= 12:
            hl, s = struct.unpack_from("<I", raw, 8)[0], 12
        else:
            return None
        if s + hl > len(raw):
            return None
        n.text = raw[s:s + hl].decode("latin-1")
        n.data = raw[s + hl:]
        return n

    def serialize(self):
        tb = "".join(c if ord(c) < 256 else c.encode("utf-8").decode("latin-1") for c in self.text).encode("latin-1")
        hl = len(tb) if self.hlen is None else self.hlen
        pre = self.magic + bytes(self.ver)
        pre += struct.pack("<H", hl & 0xFFFF) if self.ver[0] in (0, 1) or self.ver[0] > 3 else struct.pack("<I", hl & 0xFFFFFFFF)
        return pre + tb + self.data


def _enc_str(s, ver):
    """Text of a Python str as the header holds it (UTF-8 for v3, latin-1 otherwise), in latin-1 view."""
    try:
        return s.encode("utf-8" if ver[0] == 3 else "latin-1").decode("latin-1")
    except UnicodeEncodeError:
        return s.encode("utf-8").decode("latin-1")


def header_items(text, ver):
    """[(key_text, value_text)] of a header NumPy can read, or None."""
    t = text.encode("latin-1").decode("utf-8" if ver[0] == 3 else "latin-1", "replace")
    try:
        d = ast.literal_eval(t.strip())
    except Exception:
        return None
    if not isinstance(d, dict):
        return None
    return [(repr(k), _enc_str(repr(v), ver)) for k, v in d.items()]


DESCR_POOL = ["'<i4'", "'<f8'", "'|b1'", "'|u1'", "'>i2'", "'<u8'", "'<f2'", "'<f16'", "'<c8'", "'<c32'", "'|S5'",
              "'|S0'", "'<U3'", "'>U2'", "'|V8'", "'|V0'", "'<M8[ns]'", "'<M8'", "'>m8[3s]'", "'<M8[generic]'",
              "'<M8[1s]'", "'<M8[ns/2]'", "'<M8[25us]'", "'float64'", "'d'", "'f8'", "'=f8'", "'|f8'", "'>i1'",
              "'<b1'", "'>S3'", "'i4,f4'", "'(2,)i4'", "'<f3'", "'<i16'", "'<M4[us]'", "'S-1'", "'|S2147483648'",
              "'|V2147483648'", "'<U1073741824'", "'<U536870912'", "'<U0'", "'|O'", "'O'", "'<O8'", "'=i1'", "'|i1'",
              "'b'", "'?'", "'<i04'", "'<i 4'", "'<c24'", "'U'", "'S'", "'V'", "'a'", "'<a3'", "'1f8'", "'<f8 '",
              "' <f8'", "'<e'", "'<g'", "'<q'", "'>M8[D]'", "'<m8[7D]'", "'<M8[B]'", "'|S2147483647'",
              "('<i4', (2,))", "('<i4', (1,))", "('<i4',)", "('<i4', 2)", "{'ab': 1}", "['ab']", "[]", "None", "1",
              "[('a', '<i4'), ('', '|O')]", "[('a', '<i4'), ('a', '<f4')]", "[((1, 'a'), '<i4')]",
              "[(('t', 'a'), '<i4')]", "[(('a', 'a'), '<i4')]", "[('', '<i4')]", "[('a', '<i4', [2])]",
              "[('a', '<i4', 2)]", "[('a', '<i4', ())]", "[('a', '<i4', 1)]", "[('c', ('<f8', (2,)), (2,))]",
              "[('a', '<i4', (-1,))]", "[('', '|V4')]", "[('a', '<i4'), ('', '|V4', (2,))]", "[['a', '<i4']]",
              "[('a', [('b', '<i4')])]", "[('a', '<i4'), ('b', '|O', (2,))]", "[('a', ('|O', (2,)))]",
              "[('a', '<i4', (2147483648,))]", "[('a', '|S2147483647'), ('b', '|S1')]", "[('a', '<i4'),]",
              "[('\\xe9', '<i4')]", "[('a\\x41', '<i4')]", "[('a\\n', '<i4')]", "[('a', 'float64')]",
              "[('a', '<i4', (2,), 'x')]", "[('a',)]", "[('', '<i4'), ('', '<f4')]", "[(b'a', '<i4')]"]

SHAPE_POOL = ["()", "(0,)", "(1,)", "(2,)", "(3,)", "(N,)", "(N, 1)", "(1, N)", "(N)", "[N]", "N", "(-1,)", "(-2,)",
              "(-0,)", "(+N,)", "(0x2,)", "(0o2,)", "(0b10,)", "(1_0,)", "(02,)", "(NL,)", "(N L,)", "(Nl,)",
              "(NLL,)", "(2**3,)", "(True,)", "(N.0,)", "(9223372036854775807,)", "(9223372036854775808,)",
              "(18446744073709551615,)", "(18446744073709551616,)", "(4294967296, 4294967296)",
              "(0, 9223372036854775807)", "(N, )", "( N ,)", "(\nN,)", "((N,))", "(N,) ", "(N, -1)", "(-1, -2)",
              "(0x10L,)", "(N,,)", "(,)", "(N, 0)", "(1, 1, 1, N)", "(" + "1, " * 32 + "N)", "(" + "1, " * 31 + "N)",
              "(1000000000,)", "(N*1,)", "None", "(N,)#", "(N.,)"]

FORTRAN_POOL = ["True", "False", "0", "1", "None", "'False'", "true", "(False)", "(True)", "False ", "not True",
                "False,", "1 == 1", "0x0"]

KEY_ALT = ["'Descr'", "'descr '", "'shap'", "'fortran'", "'extra'", "b'descr'", "u'descr'", "r'shape'",
           "'de' 'scr'", '"descr"', "'''descr'''", "'\\x64escr'", "'\\u0064escr'", "None", "1", "'shape'",
           "'fortran_order'", "'descr'", "('descr')", "'sh\\\nape'", "\"shape\""]

WS_POOL = [" ", "\t", "\n", "\r", "\r\n", "\x0c", "\x0b", "\\\n", "# c\n", "\x00", "  ", "\n\n", "\xa0", "\u2028"]
LEAD_POOL = ["", " ", "\t", "\n", "\n ", "\r", "#x\n", " \t", "\r\n", "\x0c", "\ufeff"]
TAIL_POOL = ["", " ", "\n", "\r\n", " \n", "\n\n", "\t\n", "x", "#c", " # c", ",", "\r", "\x0c", "\x00", " \n \n"]


def _nbytes_of(items, ver):
    """Declared data size of a header given as items, or None."""
    try:
        import numpy as np
        try:
            from numpy.lib import _format_impl as npf
        except ImportError:
            from numpy.lib import format as npf
        src = "{" + ", ".join("%s: %s" % kv for kv in items) + "}"
        src = src.encode("latin-1").decode("utf-8" if ver[0] == 3 else "latin-1")
        if len(src) > 20000:
            return None
        d = ast.literal_eval(src)
        dt = npf.descr_to_dtype(d["descr"])
        shape = d["shape"]
        if not isinstance(shape, tuple) or not all(isinstance(x, int) and 0 <= x < 2 ** 40 for x in shape):
            return None
        n = 1
        for x in shape:
            n *= x
        n *= dt.itemsize
        return n if 0 <= n <= (1 << 20) else None
    except BaseException:
        return None


def _render(items, lead="", tail="\n", seps=None, colons=None, trailing_comma=True, wrap=False, pad=True,
            ver=(1, 0)):
    parts = []
    for i, (k, v) in enumerate(items):
        c = colons[i] if colons else ": "
        parts.append(k + c + v)
    seps = seps or [", "] * max(0, len(parts) - 1)
    body = ""
    for i, p in enumerate(parts):
        body += p + (seps[i] if i < len(parts) - 1 else "")
    text = lead + ("(" if wrap else "") + "{" + body + (", " if trailing_comma and parts else "") + "}" + (")" if wrap else "")
    if pad:
        pre = 10 if ver[0] == 1 else 12
        total = pre + len(text) + len(tail)
        text += " " * ((-total) % 64)
    return text + tail


def npy_op(n, r, items_cache=None):
    """One field-aware edit of an Npy; returns the op name.  Resizes the data most of the time."""
    items = header_items(n.text, n.ver)
    choices = ["ver", "hlen", "text-bytes"]
    if items is not None:
        choices += ["descr"] * 4 + ["shape"] * 4 + ["fortran"] * 2 + ["key"] * 2 + ["dupkey", "dropkey", "addkey",
                    "reorder", "ws", "ws", "lead", "tail", "wrap", "nopad", "quotes", "valwrap"]
    op = r.choice(choices)
    if op == "ver":
        n.ver = r.choice([(1, 0), (2, 0), (3, 0), (1, 1), (0, 0), (4, 0), (2, 1), (255, 255), (3, 1)])
        if items is not None and r.random() < 0.5:
            n.text = _render(items, ver=n.ver, trailing_comma=True)
        return "npy.ver"
    if op == "hlen":
        L = len(n.serialize()) - (10 if n.ver[0] in (0, 1) or n.ver[0] > 3 else 12) - len(n.data)
        n.hlen = r.choice([L - 1, L + 1, L - 2, L + 64, 0, 0xFFFF, L + r.randrange(1, 200), max(0, L - r.randrange(1, 64))])
        return "npy.hlen"
    if op == "text-bytes":
        tb, name = byte_op("".join(c if ord(c) < 256 else "?" for c in n.text).encode("latin-1"), r, r.choice(["flip", "set", "interesting", "insert", "delete", "dup"]))
        n.text = tb.decode("latin-1")
        return "npy.text-" + name
    items = list(items)
    keys = [k for k, _ in items]
    idx = {ast.literal_eval(k): i for i, k in enumerate(keys)}
    kw = {}
    old_nb = _nbytes_of(items, n.ver)
    if op == "descr" and "descr" in idx:
        items[idx["descr"]] = ("'descr'", r.choice(DESCR_POOL))
    elif op == "shape" and "shape" in idx:
        s = r.choice(SHAPE_POOL)
        try:
            cur = ast.literal_eval(items[idx["shape"]][1])
            N = 1
            for x in cur:
                N *= x
        except Exception:
            N = 2
        s = s.replace("N", str(N if r.random() < 0.7 else r.choice([0, 1, 2, 3, 7, N + 1, max(0, N - 1)])))
        items[idx["shape"]] = ("'shape'", s)
    elif op == "fortran" and "fortran_order" in idx:
        items[idx["fortran_order"]] = ("'fortran_order'", r.choice(FORTRAN_POOL))
    elif op == "key":
        i = r.randrange(len(items))
        items[i] = (r.choice(KEY_ALT), items[i][1])
    elif op == "dupkey":
        i = r.randrange(len(items))
        k, v = items[i]
        if r.random() < 0.5:
            alt = {"'descr'": DESCR_POOL, "'shape'": SHAPE_POOL, "'fortran_order'": FORTRAN_POOL}.get(k)
            if alt:
                v = r.choice(alt).replace("N", "2")
        items.insert(r.randrange(len(items) + 1), (k, v))
    elif op == "dropkey":
        del items[r.randrange(len(items))]
    elif op == "addkey":
        items.insert(r.randrange(len(items) + 1), (r.choice(["'extra'", "'version'", "1", "'descr2'"]), r.choice(["1", "None", "'x'", "()"])))
    elif op == "reorder":
        r.shuffle(items)
    elif op == "quotes":
        i = r.randrange(len(items))
        k, v = items[i]
        which = r.random()
        if which < 0.3:
            v = v.replace("'", '"')
        elif which < 0.5:
            k = k.replace("'", '"')
        elif which < 0.7 and v.startswith("'"):
            v = r.choice(["u", "r", "b", "f", "U", "R", "rb"]) + v
        elif which < 0.85 and v.startswith("'") and len(v) > 3:
            v = v[:2] + "' '" + v[2:]
        else:
            v = v.replace("<", "\\x3c").replace("i", "\\u0069", 1)
        items[i] = (k, v)
    elif op == "valwrap":
        i = r.randrange(len(items))
        k, v = items[i]
        items[i] = (k, "(" + v + ")")
    if op == "ws":
        seps = [", "] * max(0, len(items) - 1)
        colons = [": "] * len(items)
        w = r.choice(WS_POOL)
        spot = r.random()
        if spot < 0.4 and seps:
            j = r.randrange(len(seps))
            seps[j] = r.choice(["," + w, w + ",", w + "," + w])
        elif spot < 0.7:
            j = r.randrange(len(colons))
            colons[j] = r.choice([w + ":", ":" + w, w + ":" + w])
        else:
            i = r.randrange(len(items))
            k, v = items[i]
            if "(" in v and r.random() < 0.5:
                v = v.replace("(", "(" + w, 1)
            elif "," in v:
                v = v.replace(",", w + ",", 1)
            else:
                v = v + w
            items[i] = (k, v)
        kw.update(seps=seps, colons=colons)
    elif op == "lead":
        kw["lead"] = r.choice(LEAD_POOL)
    elif op == "tail":
        kw["tail"] = r.choice(TAIL_POOL)
    elif op == "wrap":
        kw["wrap"] = True
    elif op == "nopad":
        kw["pad"] = False
        kw["trailing_comma"] = r.random() < 0.5
        kw["tail"] = r.choice(["", "\n"])
    kw.setdefault("trailing_comma", r.random() < 0.9)
    n.text = _render(items, ver=n.ver, **kw)
    if r.random() < 0.8:
        nb = _nbytes_of(items, n.ver)
        if nb is not None and nb != old_nb:
            if nb <= len(n.data):
                n.data = n.data[:nb]
            else:
                n.data = n.data + bytes(r.randrange(256) for _ in range(min(nb - len(n.data), 4096))) + bytes(max(0, nb - len(n.data) - 4096))
    return "npy." + op


def mutate_npy_bytes(raw, r):
    n = Npy.parse(raw)
    if n is None:
        return byte_op(raw, r)
    op = npy_op(n, r)
    return n.serialize(), op


# ------------------------------------------------------------------ zip model edits
BAD_NAMES = [b"", b"a.npy\x00evil", b"a\x01.npy", b"a\\b.npy", b"../x.npy", b"a/../b.npy", b"/abs.npy", b"dir/",
             b"\xe9.npy", b"\xc3\xa9.npy", b"\xff\xfe.npy", b"a..b.npy", b"..", b"./a.npy", b"A.NPY", b"a.npy.npy",
             b"x" * 300 + b".npy", b"sub/a.npy", b"a b.npy", b"a\x7f.npy", b"\xe6\x95\xb0.npy", b"a.np", b"a.npy/"]


def zip_op(a, r, seeds_content):
    ms = a.members
    op = r.choice(["name", "name", "cdname", "size", "size", "offset", "method", "flags", "flags", "count",
                   "extra", "extra", "comment", "reorder", "dup", "drop", "hide", "add", "z64", "cdz64", "dd",
                   "version", "disk", "prefix", "gap", "suffix", "cdcomment", "crc", "lfhsizes", "content-byte",
                   "npy", "npy", "npy", "recompress", "cdorder", "eocd", "deflate-tail", "member-tail"])
    if not ms and op not in ("add", "comment", "z64", "prefix", "suffix", "count", "eocd"):
        op = "add"
    m = r.choice(ms) if ms else None
    if op == "name":
        if r.random() < 0.5:
            m.name = r.choice(BAD_NAMES)
            if m.name and any(c >= 0x80 for c in m.name) and r.random() < 0.5:
                m.flags |= 0x800
        elif len(ms) > 1 and r.random() < 0.5:
            o = r.choice(ms)
            nm = o.name
            m.name = nm[:-4] if nm.endswith(b".npy") and r.random() < 0.5 else nm
        else:
            nm = bytearray(m.name or b"x")
            nm[r.randrange(len(nm))] = r.choice(b"aZ./\\\x00\x80_-")
            m.name = bytes(nm)
    elif op == "cdname":
        m.cd_name = (m.name[:-1] + b"X") if m.name else b"x"
        if r.random() < 0.3:
            m.cd_name = m.name.upper()
    elif op == "size":
        key = r.choice(["lfh_csize", "lfh_usize", "cd_csize", "cd_usize", "dd_csize", "dd_usize", "z64_usize", "z64_csize"])
        base = len(m.stored_data()) if "csize" in key else len(m.content)
        m.ov[key] = r.choice([base + 1, max(0, base - 1), 0, 0xFFFFFFFF, base + 4096, base * 2, 1])
    elif op == "crc":
        key = r.choice(["lfh_crc", "cd_crc", "dd_crc"])
        m.ov[key] = r.choice([0, zlib.crc32(m.content) ^ 1, 0x08074B50, 0xFFFFFFFF])
    elif op == "offset":
        m.ov["cd_offset"] = r.choice([0, 1, 0xFFFFFFFF, r.randrange(0, 4096)])
    elif op == "method":
        v = r.choice([0, 8, 12, 14, 99, 9, 1])
        w = r.random()
        if w < 0.4:
            m.method = v
            if v in (0, 8):
                m.data = None
        elif w < 0.7:
            m.cd_method = v
        else:
            m.method = v
    elif op == "flags":
        bit = r.choice([0, 1, 2, 3, 4, 5, 6, 11, 12, 13, 14, 15])
        w = r.random()
        if w < 0.5:
            m.flags ^= 1 << bit
        elif w < 0.8:
            m.cd_flags = m.flags ^ (1 << bit)
        else:
            m.flags ^= 1 << bit
            m.cd_flags = m.flags ^ (1 << bit)
    elif op == "count":
        a.eocd[r.choice(["count", "count_disk"])] = r.choice([0, len(ms) + 1, max(0, len(ms) - 1), 0xFFFF])
    elif op == "eocd":
        k = r.choice(["cd_size", "cd_offset", "disk", "cd_disk", "comment_len"])
        a.eocd[k] = r.choice([0, 1, 0xFFFF, 0xFFFFFFFF, r.randrange(1, 4096)])
    elif op == "extra":
        w = r.random()
        target = m.lfh_extra if r.random() < 0.6 else m.cd_extra
        if w < 0.25:
            target.insert(r.randrange(len(target) + 1), [r.choice([0x5455, 0x7875, 0xCAFE, 0x000A, 0x9901]), bytes(r.randrange(9))])
        elif w < 0.4:
            target.append([1, r.choice(["Z64REAL", "Z64ZERO", bytes(8), bytes(24), b""])] if target is m.lfh_extra else [1, bytes(r.choice([0, 8, 16]))])
        elif w < 0.55:
            target.append([r.choice([0x7075, 0x6375]), b"\x01" + struct.pack("<I", zlib.crc32(m.name)) + m.name])
        elif w < 0.7 and target:
            del target[r.randrange(len(target))]
        elif w < 0.85:
            key = "lfh_extra_raw" if target is m.lfh_extra else "cd_extra_raw"
            raw = b"".join(struct.pack("<HH", t, len(b) if isinstance(b, bytes) else 16) + (b if isinstance(b, bytes) else bytes(16)) for t, b in target)
            m.ov[key] = raw + r.choice([b"\x00", b"\x01\x00", b"\x01\x00\x10\x00", b"\xff\xff\x04\x00ab"])
        else:
            m.ov["lfh_extra_len"] = r.choice([0, 1, 3, 0xFFFF])
    elif op == "comment":
        a.comment = r.choice([b"hello", b"PK\x05\x06" + bytes(18), b"PK\x01\x02", b"x" * 100, b"", b"PK\x03\x04abc", b"\x00" * 3])
    elif op == "cdcomment":
        m.cd_comment = r.choice([b"c", b"PK\x05\x06", b"x" * 40])
    elif op == "reorder" and len(ms) > 1:
        r.shuffle(ms)
    elif op == "cdorder" and len(ms) > 1:
        order = list(range(len(ms)))
        r.shuffle(order)
        a.cd_order = order
    elif op == "dup":
        i = ms.index(m)
        w = r.random()
        if w < 0.5:
            ms.insert(i + 1, m.clone())
        else:
            a.cd_order = list(range(len(ms))) + [i]
    elif op == "drop":
        if r.random() < 0.5:
            ms.remove(m)
        else:
            a.cd_order = [i for i in range(len(ms)) if ms[i] is not m]
    elif op == "hide":
        ms.append(m.clone())
        ms[-1].name = b"hidden.npy"
        a.cd_order = list(range(len(ms) - 1))
    elif op == "add":
        nm = ziputil.Member()
        nm.name = r.choice([b"new.npy", b"notes.txt", b"n", b"arr_9.npy"])
        nm.content = r.choice(seeds_content) if seeds_content and r.random() < 0.7 else b"plain text\n" * r.randrange(4)
        nm.method = r.choice([0, 8])
        nm.data = None
        style = r.choice(["file", "legacy", "pipe", "dd32"])
        if style == "file":
            nm.lfh_extra = [[1, "Z64REAL"]]
        elif style == "pipe":
            nm.flags, nm.lfh_crc, nm.lfh_sizes, nm.lfh_extra, nm.dd = 8, "zero", "zero", [[1, "Z64ZERO"]], "64sig"
        elif style == "dd32":
            nm.flags, nm.lfh_crc, nm.lfh_sizes, nm.dd = 8, "zero", "zero", "32sig"
        ms.insert(r.randrange(len(ms) + 1), nm)
    elif op == "z64":
        if a.z64 is None:
            a.z64 = {}
            if r.random() < 0.5:
                a.eocd.update(count=0xFFFF, count_disk=0xFFFF, cd_size=0xFFFFFFFF, cd_offset=0xFFFFFFFF)
        else:
            k = r.choice(["size", "count", "count_disk", "cd_size", "cd_offset", "loc_offset", "loc_total", "disk", "ext"])
            a.z64[k] = b"abcd" if k == "ext" else r.choice([0, 1, 2, 45, 0xFFFFFFFF])
    elif op == "cdz64":
        if m.cd_sizes == "real":
            m.cd_sizes = "ff"
            m.cd_extra.append([1, "Z64AUTO"])
        else:
            m.cd_sizes = "real"
    elif op == "dd":
        w = r.random()
        if w < 0.5:
            # switch delimiting consistently: descriptor <-> sizes in the local header
            if m.dd:
                m.flags &= ~8
                m.dd = None
                m.lfh_crc, m.lfh_sizes = "real", "real"
                for t in m.lfh_extra:
                    if t[0] == 1:
                        t[1] = "Z64REAL"
            else:
                m.flags |= 8
                wide = any(t[0] == 1 for t in m.lfh_extra)
                m.dd = ("64" if wide else "32") + r.choice(["sig", "sig", ""])
                m.lfh_crc, m.lfh_sizes = r.choice([("zero", "zero"), ("real", "real"), ("zero", "ff")])
                for t in m.lfh_extra:
                    if t[0] == 1:
                        t[1] = "Z64ZERO"
        elif m.dd:
            m.dd = r.choice(["64sig", "32sig", "64", "32"])
        else:
            m.dd = r.choice(["64sig", "32sig"])
    elif op == "version":
        if r.random() < 0.5:
            m.ver_lfh = r.choice([10, 20, 45, 63, 64, 99, 0x3F3F])
        else:
            m.ver_cd = r.choice([10, 20, 45, 63, 64, 99])
    elif op == "disk":
        m.disk = r.choice([1, 0xFFFF])
    elif op == "prefix":
        a.prefix = r.choice([b"MZ" + bytes(30), b"\x00", b"PK\x03\x04", b"junk"])
    elif op == "gap":
        if r.random() < 0.5:
            a.cd_gap = r.choice([b"\x00", b"junk", b"PK\x07\x08" + bytes(12)])
        else:
            m.after = r.choice([b"\x00", b"junk" * 4, bytes(16)])
    elif op == "suffix":
        a.suffix = r.choice([b"\x00", b"junk", b"PK\x05\x06" + bytes(18), b"\n"])
    elif op == "lfhsizes":
        m.lfh_sizes = r.choice(["real", "zero", "ff"])
        m.lfh_crc = r.choice(["real", "zero"])
    elif op == "recompress":
        m.method = 8 if m.method == 0 else 0
        m.data = None
    elif op == "deflate-tail":
        m.method = 8
        m.data = ziputil.deflate(m.content) + r.choice([b"\x00", b"junk", b"\x03\x00"])
    elif op == "member-tail":
        m.content += r.choice([b"\x00", b"tail" * 8, b"\x93NUMPY"])
        m.data = None
    elif op == "content-byte":
        m.content, _ = byte_op(m.content, r)
        m.data = None
    elif op == "npy":
        arrays = [x for x in ms if x.content[:6] == MAGIC]
        if arrays:
            m = r.choice(arrays)
            n = Npy.parse(m.content)
            if n is not None:
                sub = npy_op(n, r)
                m.content = n.serialize()
                m.data = None
                return "zip.npy:" + sub
        m.content, _ = byte_op(m.content, r)
        m.data = None
    return "zip." + op


# ------------------------------------------------------------------ end records
def _u16(b, o):
    return struct.unpack_from("<H", b, o)[0]


def _u32(b, o):
    return struct.unpack_from("<I", b, o)[0]


def _last_cd_entry(raw):
    """(eocd, cd_start, last) offsets of a plain archive whose end record is its last 22 bytes."""
    e = len(raw) - 22
    if e < 0 or raw[e:e + 4] != b"PK\x05\x06" or _u16(raw, e + 20) != 0:
        return None
    cs, co = _u32(raw, e + 12), _u32(raw, e + 16)
    if raw[e - 20:e - 16] == b"PK\x06\x07" and e >= 76:  # a real ZIP64 pair: the directory ends before it
        z = e - 76
        cs, co = struct.unpack_from("<QQ", raw, z + 40)
    p, last = co, None
    while p < co + cs:
        if raw[p:p + 4] != b"PK\x01\x02":
            return None
        last = p
        p += 46 + _u16(raw, p + 28) + _u16(raw, p + 30) + _u16(raw, p + 32)
    return (e, co, last) if last is not None and p == co + cs else None


def _fake_z64(count, cd_size, cd_off, size=44, disk=0):
    return struct.pack("<IQHHIIQQQQ", 0x06064B50, size, 45, 45, disk, 0, count, count, cd_size, cd_off)


def _fake_loc(off, disk=0, total=1):
    return struct.pack("<IIQI", 0x07064B50, disk, off, total)


def _fake_eocd(count, cd_size, cd_off, clen=0):
    return struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, count, count, cd_size & 0xFFFFFFFF, cd_off & 0xFFFFFFFF, clen)


def endrec_op(raw, r):
    """Plant fake end records where zipfile reads them and the stream does not."""
    loc = _last_cd_entry(raw)
    if loc is None:
        return raw, "endrec.none"
    e, cd, last = loc
    has_z64 = raw[e - 20:e - 16] == b"PK\x06\x07"
    cd_end = e - 76 if has_z64 else e
    nl, xl, cl = _u16(raw, last + 28), _u16(raw, last + 30), _u16(raw, last + 32)
    entry = raw[last:cd_end]
    how = r.choice(["cd-comment", "cd-extra", "bare-locator", "archive-comment", "straddle", "fast-path"])
    if how in ("cd-comment", "cd-extra", "bare-locator"):
        # the planted bytes end the last entry; they are then right before the end record (or the
        # real ZIP64 pair) -- what zipfile reads as a locator at end - 20 and a record at end - 76
        k = r.randrange(3)
        plant_len = (56 + 20) if how != "bare-locator" else 20
        new_entry_len = len(entry) + plant_len + (4 if how == "cd-extra" else 0)
        grow = new_entry_len - len(entry)
        ne = e + grow                    # where the end record lands
        nz = ne - 76                      # the fake ZIP64 record, right before the fake locator
        tgt = r.choice([cd, nz, 0, r.randrange(max(1, cd)), cd + 1])
        if how == "bare-locator":
            plant = _fake_loc(r.choice([0, r.randrange(max(1, cd)), cd, nz]), *r.choice([(0, 1), (0, 1), (1, 1), (0, 2), (0, 0)]))
        else:
            plant = _fake_z64(r.choice([0, 1, 2]), r.choice([nz - cd, max(0, nz - tgt), 46, 0]), tgt,
                              size=r.choice([44, 44, 45, 52])) + _fake_loc(nz, *r.choice([(0, 1), (0, 1), (1, 1), (0, 0)]))
        if how == "cd-extra":
            body = struct.pack("<HH", r.choice([0xCAFE, 0x5455, 0x9901]), len(plant)) + plant
            entry = entry[:30] + struct.pack("<H", xl + len(body)) + entry[32:46 + nl + xl] + body + entry[46 + nl + xl:]
            if cl:  # the comment would come after the planted bytes: drop it
                entry = entry[:32] + b"\0\0" + entry[34:46 + nl + xl + len(body)]
                grow = len(entry) - (cd_end - last)
        else:
            entry = entry[:32] + struct.pack("<H", cl + len(plant)) + entry[34:] + plant
        out = bytearray(raw[:last] + entry + raw[cd_end:])
        grow = len(entry) - (cd_end - last)
        # the real directory size grows; offsets after it move by `grow`
        ne = e + grow
        if has_z64:
            z = ne - 76
            out[z + 40:z + 48] = struct.pack("<Q", struct.unpack_from("<Q", out, z + 40)[0] + grow)
            out[ne - 12:ne - 4] = struct.pack("<Q", z)
        cs = _u32(out, ne + 12)
        if cs != 0xFFFFFFFF:
            out[ne + 12:ne + 16] = struct.pack("<I", cs + grow)
        return bytes(out), "endrec." + how + str(k)
    if how == "archive-comment":
        # a comment holding a whole fake end record (and maybe a locator before it)
        fake = _fake_eocd(r.choice([0, 1]), r.choice([0, e - cd]), r.choice([0, cd]))
        body = (b"PK\x06\x07" + bytes(16) if r.random() < 0.3 else b"") + fake + bytes(r.choice([0, 0, 3]))
        out = bytearray(raw)
        out[e + 20:e + 22] = struct.pack("<H", len(body))
        return bytes(out) + body, "endrec.comment"
    if how == "straddle":
        at = r.choice([19, 20, 21])
        out = bytearray(raw)
        if at == 20:
            clen, head = 0x4B50, b"\x05\x06"
        elif at == 21:
            clen, head = 0x504B, b"K\x05\x06"
        else:  # the offset's high byte would have to be 'P': only the comment part is planted
            clen, head = 0x054B, b"\x06"
        out[e + 20:e + 22] = struct.pack("<H", clen)
        tail = head + bytes(clen - len(head))
        return bytes(out) + tail, "endrec.straddle%d" % at
    # the last 22 bytes: an end record with an empty comment after the real one's comment
    fake = _fake_eocd(r.choice([0, 1]), r.choice([0, e - cd]), r.choice([0, cd]))
    body = bytes(r.choice([0, 1, 7])) + fake
    out = bytearray(raw)
    out[e + 20:e + 22] = struct.pack("<H", len(body))
    return bytes(out) + body, "endrec.fastpath"


# ------------------------------------------------------------------ driver
class Seed:
    def __init__(self, name, raw):
        self.name = name
        self.raw = raw
        self.model = ziputil.parse(raw) if raw[:2] == b"PK" else None


def mutant(seeds, r, arrays_pool=()):
    s = r.choice(seeds)
    raw = s.raw
    ops = []
    k = r.choices([1, 2, 3], [6, 3, 1])[0]
    a = s.model.clone() if s.model is not None else None
    for _ in range(k):
        w = r.random()
        if a is not None and w < 0.8:
            try:
                ops.append(zip_op(a, r, arrays_pool))
                continue
            except (ValueError, IndexError, zlib.error, struct.error, UnicodeError):
                continue
        if a is not None:
            try:
                raw = a.serialize()
            except (struct.error, ValueError, OverflowError):
                pass
            a = None
        if raw[:2] == b"PK" and w > 0.9:
            raw, op = endrec_op(raw, r)
        elif raw[:6] == MAGIC and w < 0.75:
            try:
                raw, op = mutate_npy_bytes(raw, r)
            except (ValueError, IndexError, struct.error, UnicodeError):
                raw, op = byte_op(raw, r)
        else:
            raw, op = byte_op(raw, r)
        ops.append(op)
    if a is not None:
        try:
            raw = a.serialize()
        except (struct.error, ValueError, OverflowError):
            raw, op = byte_op(s.raw, r)
            ops.append("fallback-" + op)
    return raw, s.name, ops
