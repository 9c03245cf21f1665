"""A small editable model of a ZIP archive (stdlib only) for the differential mutator.

parse(raw) -> Archive or None (only for archives whose central directory, local headers and
descriptors can be read back); Archive.serialize() rebuilds the bytes.  Every derived field
(CRC-32, sizes, offsets, counts, lengths, ZIP64 extras) is recomputed on serialize unless the
mutator pinned it in an `ov` (override) dict, so a mutant can break exactly one field and still
get past every other integrity check.  parse(x).serialize() == x is checked per seed by the
caller; seeds where it does not hold get byte-level mutations only.
"""
import struct
import zlib

SIG_LFH, SIG_CDH, SIG_EOCD, SIG_DD = 0x04034B50, 0x02014B50, 0x06054B50, 0x08074B50
SIG_Z64EOCD, SIG_Z64LOC = 0x06064B50, 0x07064B50
FF32 = 0xFFFFFFFF


def deflate(content, level=6):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(content) + c.flush()


def inflate(data):
    d = zlib.decompressobj(-15)
    out = d.decompress(data)
    if not d.eof:
        raise ValueError("deflate stream does not end")
    return out


def walk_tlv(x):
    out, i = [], 0
    while i < len(x):
        if len(x) - i < 4:
            return None
        tag, ln = struct.unpack_from("<HH", x, i)
        if i + 4 + ln > len(x):
            return None
        out.append([tag, x[i + 4:i + 4 + ln]])
        i += 4 + ln
    return out


class Member:
    """One member: local header, data, optional descriptor, its central-directory record."""

    def __init__(self):
        self.name = b""
        self.cd_name = None          # None: same as name
        self.flags = 0
        self.cd_flags = None         # None: same as flags
        self.method = 0
        self.cd_method = None
        self.ver_lfh = 20
        self.ver_cd = 20
        self.made_by = 0x314
        self.mtime = 0
        self.mdate = 0x21
        self.iattr = 0
        self.eattr = 0
        self.disk = 0
        self.content = b""           # uncompressed
        self.data = b""              # as stored; None: recompute from content
        self.lfh_crc = "real"        # real | zero
        self.lfh_sizes = "real"      # real | zero | ff
        self.lfh_extra = []          # [tag, bytes | "Z64REAL" | "Z64ZERO"]
        self.cd_sizes = "real"       # real | ff (then a ZIP64 field in cd_extra)
        self.cd_extra = []           # [tag, bytes | "Z64AUTO"]
        self.cd_comment = b""
        self.dd = None               # None | 64sig | 32sig | 64 | 32
        self.after = b""             # bytes after data (and descriptor)
        self.ov = {}                 # pinned raw values

    def clone(self):
        m = Member()
        m.__dict__.update({k: (list(map(list, v)) if k in ("lfh_extra", "cd_extra") else
                               dict(v) if k == "ov" else v) for k, v in self.__dict__.items()})
        return m

    def stored_data(self):
        if self.data is None:
            self.data = deflate(self.content) if self.method == 8 else self.content
        return self.data


class Archive:
    def __init__(self):
        self.members = []
        self.cd_order = None         # None: members in order; else a list of indices (may repeat)
        self.z64 = None              # None or dict of overrides for the ZIP64 end record + locator
        self.eocd = {}               # overrides: count, count_disk, cd_size, cd_offset, disk, cd_disk, comment_len
        self.comment = b""
        self.prefix = b""
        self.suffix = b""
        self.cd_gap = b""            # bytes between the last member and the central directory

    def clone(self):
        a = Archive()
        a.members = [m.clone() for m in self.members]
        a.cd_order = list(self.cd_order) if self.cd_order is not None else None
        a.z64 = dict(self.z64) if self.z64 is not None else None
        a.eocd = dict(self.eocd)
        a.comment, a.prefix, a.suffix, a.cd_gap = self.comment, self.prefix, self.suffix, self.cd_gap
        return a

    # ------------------------------------------------------------------ write
    def serialize(self):
        out = bytearray(self.prefix)
        recs = []
        for m in self.members:
            data = m.stored_data()
            crc = zlib.crc32(m.content)
            cs, us = len(data), len(m.content)
            ov = m.ov
            lextra = b""
            for tag, body in m.lfh_extra:
                if body == "Z64REAL":
                    body = struct.pack("<QQ", ov.get("z64_usize", us), ov.get("z64_csize", cs))
                elif body == "Z64ZERO":
                    body = struct.pack("<QQ", ov.get("z64_usize", 0), ov.get("z64_csize", 0))
                lextra += struct.pack("<HH", tag, len(body)) + body
            lextra = ov.get("lfh_extra_raw", lextra)
            lcrc = {"real": crc, "zero": 0}[m.lfh_crc]
            lcs, lus = {"real": (cs, us), "zero": (0, 0), "ff": (FF32, FF32)}[m.lfh_sizes]
            name = m.name
            lfh_off = len(out)
            out += struct.pack("<IHHHHHIIIHH", ov.get("lfh_sig", SIG_LFH), m.ver_lfh, m.flags, m.method,
                               m.mtime, m.mdate, ov.get("lfh_crc", lcrc) & FF32, ov.get("lfh_csize", lcs) & FF32,
                               ov.get("lfh_usize", lus) & FF32, ov.get("lfh_name_len", len(name)) & 0xFFFF,
                               ov.get("lfh_extra_len", len(lextra)) & 0xFFFF) + name + lextra
            out += data
            if m.dd:
                wide = m.dd.startswith("64")
                body = struct.pack("<IQQ" if wide else "<III", ov.get("dd_crc", crc) & FF32,
                                   ov.get("dd_csize", cs) & (2 ** 64 - 1 if wide else FF32),
                                   ov.get("dd_usize", us) & (2 ** 64 - 1 if wide else FF32))
                out += (struct.pack("<I", SIG_DD) if m.dd.endswith("sig") else b"") + body
            out += m.after
            recs.append((m, crc, cs, us, lfh_off - len(self.prefix)))
        out += self.cd_gap
        cd_start = len(out)
        order = self.cd_order if self.cd_order is not None else range(len(recs))
        n = 0
        for i in order:
            if i >= len(recs):
                continue
            m, crc, cs, us, off = recs[i]
            ov = m.ov
            ccs, cus, coff = ov.get("cd_csize", cs), ov.get("cd_usize", us), ov.get("cd_offset", off)
            cextra = b""
            z64vals = []
            if m.cd_sizes == "ff":
                z64vals = [cus, ccs]
                ccs = cus = FF32
            for tag, body in m.cd_extra:
                if body == "Z64AUTO":
                    body = b"".join(struct.pack("<Q", v) for v in z64vals)
                cextra += struct.pack("<HH", tag, len(body)) + body
            cextra = ov.get("cd_extra_raw", cextra)
            cname = m.name if m.cd_name is None else m.cd_name
            out += struct.pack("<IHHHHHHIIIHHHHHII", SIG_CDH, m.made_by, m.ver_cd,
                               m.flags if m.cd_flags is None else m.cd_flags,
                               m.method if m.cd_method is None else m.cd_method, m.mtime, m.mdate,
                               ov.get("cd_crc", crc) & FF32, ccs & FF32, cus & FF32, len(cname), len(cextra),
                               len(m.cd_comment), m.disk, m.iattr, m.eattr, coff & FF32) + cname + cextra + m.cd_comment
            n += 1
        cd_end = len(out)
        cd_size, cd_off = cd_end - cd_start, cd_start - len(self.prefix)
        e = self.eocd
        if self.z64 is not None:
            z = self.z64
            z64_off = len(out) - len(self.prefix)
            ext = z.get("ext", b"")
            out += struct.pack("<IQHHIIQQQQ", SIG_Z64EOCD, z.get("size", 44 + len(ext)), 45, 45, z.get("disk", 0) & FF32,
                               z.get("cd_disk", 0) & FF32, z.get("count_disk", n), z.get("count", n),
                               z.get("cd_size", cd_size), z.get("cd_offset", cd_off)) + ext
            out += struct.pack("<IIQI", SIG_Z64LOC, z.get("loc_disk", 0), z.get("loc_offset", z64_off),
                               z.get("loc_total", 1) & FF32)
        cnt = e.get("count", n)
        out += struct.pack("<IHHHHIIH", SIG_EOCD, e.get("disk", 0) & 0xFFFF, e.get("cd_disk", 0) & 0xFFFF,
                           e.get("count_disk", cnt) & 0xFFFF, cnt & 0xFFFF, e.get("cd_size", cd_size) & FF32,
                           e.get("cd_offset", cd_off) & FF32,
                           e.get("comment_len", len(self.comment)) & 0xFFFF) + self.comment
        out += self.suffix
        return bytes(out)


# ---------------------------------------------------------------------- read
def parse(raw):
    """Archive model of raw, or None when it cannot be modelled exactly."""
    try:
        return _parse(raw)
    except (struct.error, ValueError, IndexError, KeyError, zlib.error):
        return None


def _parse(raw):
    if len(raw) < 22:
        return None
    e = raw.rfind(struct.pack("<I", SIG_EOCD))
    if e < 0:
        return None
    (_, disk, cdisk, cnt_d, cnt, cd_size, cd_off, clen) = struct.unpack_from("<IHHHHIIH", raw, e)
    if e + 22 + clen != len(raw):
        return None
    a = Archive()
    a.comment = raw[e + 22:]
    z64 = None
    if e >= 20 and struct.unpack_from("<I", raw, e - 20)[0] == SIG_Z64LOC:
        _, ld, loff, lt = struct.unpack_from("<IIQI", raw, e - 20)
        zf = struct.unpack_from("<IQHHIIQQQQ", raw, loff)
        if zf[0] != SIG_Z64EOCD or loff + 56 != e - 20 or zf[1] != 44:
            return None
        cnt, cd_size, cd_off = zf[7], zf[8], zf[9]
        a.z64 = {}
        eocd = {}
        r_cnt_d, r_cnt, r_cs, r_co = struct.unpack_from("<HHII", raw, e + 8)
        if r_cnt == 0xFFFF:
            eocd["count"] = r_cnt
        if r_cnt_d == 0xFFFF:
            eocd["count_disk"] = r_cnt_d
        if r_cs == FF32:
            eocd["cd_size"] = r_cs
        if r_co == FF32:
            eocd["cd_offset"] = r_co
        eocd["disk"], eocd["cd_disk"] = disk, cdisk
        a.eocd = eocd
        cd_end = loff
    else:
        cd_end = e
    if cd_off + cd_size != cd_end:
        return None
    pos = cd_off
    cds = []
    while pos < cd_end:
        f = struct.unpack_from("<IHHHHHHIIIHHHHHII", raw, pos)
        if f[0] != SIG_CDH:
            return None
        nl, xl, cl = f[10], f[11], f[12]
        b = pos + 46
        cds.append((f, raw[b:b + nl], raw[b + nl:b + nl + xl], raw[b + nl + xl:b + nl + xl + cl]))
        pos = b + nl + xl + cl
    if len(cds) != cnt:
        return None
    expect = 0
    for f, cname, cextra, ccomment in cds:
        (_, made_by, ver_cd, cflags, cmethod, mtime, mdate, crc, ccs, cus, _, _, _, dsk, iattr, eattr, off) = f
        m = Member()
        m.made_by, m.ver_cd, m.mtime, m.mdate, m.disk, m.iattr, m.eattr = made_by, ver_cd, mtime, mdate, dsk, iattr, eattr
        m.cd_comment = ccomment
        ctl = walk_tlv(cextra)
        if ctl is None:
            return None
        z64 = [t for t in ctl if t[0] == 1]
        if z64:
            vals = []
            body = z64[0][1]
            if ccs == FF32 and cus == FF32 and len(body) == 16:
                cus, ccs = struct.unpack("<QQ", body)
                m.cd_sizes = "ff"
                z64[0][1] = "Z64AUTO"
            else:
                return None
            del vals
        m.cd_extra = ctl
        if off != expect:
            return None
        lf = struct.unpack_from("<IHHHHHIIIHH", raw, off)
        if lf[0] != SIG_LFH:
            return None
        (_, ver, flags, method, lmt, lmd, lcrc, lcs, lus, nl, xl) = lf
        name = raw[off + 30:off + 30 + nl]
        lextra = raw[off + 30 + nl:off + 30 + nl + xl]
        if name != cname or flags != cflags or method != cmethod or (lmt, lmd) != (mtime, mdate):
            return None
        m.name, m.flags, m.method, m.ver_lfh = name, flags, method, ver
        ds = off + 30 + nl + xl
        data = raw[ds:ds + ccs]
        if len(data) != ccs:
            return None
        m.data = data
        m.content = inflate(data) if method == 8 else data if method == 0 else None
        if m.content is None or len(m.content) != cus or zlib.crc32(m.content) != crc:
            return None
        ltl = walk_tlv(lextra)
        if ltl is None:
            return None
        for t in ltl:
            if t[0] == 1:
                if len(t[1]) != 16:
                    return None
                zu, zc = struct.unpack("<QQ", t[1])
                if (zu, zc) == (cus, ccs):
                    t[1] = "Z64REAL"
                elif (zu, zc) == (0, 0):
                    t[1] = "Z64ZERO"
                else:
                    return None
        m.lfh_extra = ltl
        m.lfh_crc = "real" if lcrc == crc else "zero" if lcrc == 0 else None
        m.lfh_sizes = ("real" if (lcs, lus) == (ccs, cus) else "zero" if (lcs, lus) == (0, 0)
                       else "ff" if (lcs, lus) == (FF32, FF32) else None)
        if m.lfh_crc is None or m.lfh_sizes is None:
            return None
        end = ds + ccs
        if flags & 8:
            has_sig = raw[end:end + 4] == struct.pack("<I", SIG_DD)
            wide = any(t[0] == 1 for t in ltl)
            m.dd = ("64" if wide else "32") + ("sig" if has_sig else "")
            end += (4 if has_sig else 0) + (20 if wide else 12)
        a.members.append(m)
        expect = end
    if expect != cd_off:
        return None
    out = a.serialize()
    if out != raw:
        return None
    return a
