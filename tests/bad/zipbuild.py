"""Hand-built .npy / .npz byte builders for the bad-input suite (stdlib only).

Everything is built in memory with correct CRCs and sizes unless a field is
overridden on purpose.  The layout of every archive is returned next to its
bytes so that tests can name exact offsets (local header, data start, data
descriptor, central-directory records, end records).
"""
import struct
import zlib

MAGIC = b"\x93NUMPY"

# ---------------------------------------------------------------- npy -------


def npy_preamble(version, header_len):
    major, minor = version
    if major == 1:
        return MAGIC + bytes([major, minor]) + struct.pack("<H", header_len)
    return MAGIC + bytes([major, minor]) + struct.pack("<I", header_len)


def preamble_len(version):
    return 10 if version[0] == 1 else 12


def encode_text(text, version):
    if isinstance(text, bytes):
        return text
    return text.encode("utf-8" if version[0] == 3 else "latin-1")


def pad_header(text_b, version, align=64):
    """Pad the dict text with spaces and a final newline the way NumPy does."""
    plen = preamble_len(version)
    total = plen + len(text_b) + 1
    pad = (-total) % align
    return text_b + b" " * pad + b"\n"


def npy(text, data=b"", version=(1, 0), pad=True, header_len=None, magic=MAGIC):
    """A .npy file.  text: str or bytes (the dict text, unpadded when pad=True)."""
    tb = encode_text(text, version)
    if pad:
        tb = pad_header(tb, version)
    hl = len(tb) if header_len is None else header_len
    pre = npy_preamble(version, hl)
    pre = magic + pre[6:]
    return pre + tb + data


MARK = b"@@"


def npy_marked(text, data=b"", version=(1, 0), pad=True):
    """Like npy(), but text holds one '@@' marker; returns (bytes, offset of the marker).

    The offset is the absolute offset (from the start of the .npy) of the byte
    that followed the marker."""
    tb = encode_text(text, version) if not isinstance(text, bytes) else text
    i = tb.index(MARK)
    tb = tb[:i] + tb[i + len(MARK):]
    assert MARK not in tb
    return npy(tb, data, version, pad), preamble_len(version) + i


# ---------------------------------------------------------------- zip -------

SIG_LFH = 0x04034B50
SIG_CDH = 0x02014B50
SIG_EOCD = 0x06054B50
SIG_DD = 0x08074B50
SIG_Z64EOCD = 0x06064B50
SIG_Z64LOC = 0x07064B50
FF32 = 0xFFFFFFFF


def deflate(content, level=6):
    c = zlib.compressobj(level, zlib.DEFLATED, -15)
    return c.compress(content) + c.flush()


def z64_extra(*values):
    """ZIP64 extended information extra field holding 8-byte values."""
    body = b"".join(struct.pack("<Q", v) for v in values)
    return struct.pack("<HH", 1, len(body)) + body


def tlv(tag, body):
    return struct.pack("<HH", tag, len(body)) + body


def lfh_bytes(name, version, flags, method, crc, csize, usize, extra, mtime=0, mdate=0x21):
    return struct.pack("<IHHHHHIIIHH", SIG_LFH, version, flags, method, mtime, mdate,
                       crc & FF32, csize & FF32, usize & FF32, len(name), len(extra)) + name + extra


def cdh_bytes(name, made_by, version, flags, method, crc, csize, usize, offset, extra=b"",
              comment=b"", disk=0, iattr=0, eattr=0o600 << 16, mtime=0, mdate=0x21):
    return struct.pack("<IHHHHHHIIIHHHHHII", SIG_CDH, made_by, version, flags, method, mtime, mdate,
                       crc & FF32, csize & FF32, usize & FF32, len(name), len(extra), len(comment),
                       disk, iattr, eattr, offset & FF32) + name + extra + comment


def dd_bytes(crc, csize, usize, wide, sig=True):
    fmt = "<IQQ" if wide else "<III"
    return (struct.pack("<I", SIG_DD) if sig else b"") + struct.pack(fmt, crc & FF32, csize, usize)


def eocd_bytes(count, cd_size, cd_offset, comment=b"", disk=0, cd_disk=0, count_disk=None,
               comment_len=None):
    return struct.pack("<IHHHHIIH", SIG_EOCD, disk, cd_disk,
                       count if count_disk is None else count_disk, count, cd_size & FF32,
                       cd_offset & FF32, len(comment) if comment_len is None else comment_len) + comment


def z64eocd_bytes(count, cd_size, cd_offset, size=44, disk=0, cd_disk=0, count_disk=None, ext=b"",
                  made_by=45, version=45):
    return struct.pack("<IQHHIIQQQQ", SIG_Z64EOCD, size, made_by, version, disk, cd_disk,
                       count if count_disk is None else count_disk, count, cd_size, cd_offset) + ext


def z64loc_bytes(offset, disk=0, total_disks=1):
    return struct.pack("<IIQI", SIG_Z64LOC, disk, offset, total_disks)


# Local-header layouts real writers produce (zip.md section 1.2):
#   file     - np.savez to a seekable file, CPython <= 3.11.3: flags 0, v20, real sizes, ZIP64 extra
#   py3114   - same, CPython >= 3.11.4: v45, 32-bit sizes 0xFFFFFFFF, ZIP64 extra with real sizes
#   pipe     - np.savez to a pipe, CPython <= 3.11.3: bit 3, v20, 0/0/0, ZIP64 extra 0/0, 24-byte DD
#   pipe3114 - pipe, CPython >= 3.11.4: bit 3, v45, 0/FFFFFFFF/FFFFFFFF, ZIP64 extra 0/0, 24-byte DD
#   legacy   - old numpy / cnpy: flags 0, v20, real sizes, no extra field
#   dd32     - bit 3, no ZIP64 extra, 16-byte DD with signature
#   dd32nosig, dd64nosig - descriptors without the PK\7\8 signature
STYLES = ("file", "py3114", "pipe", "pipe3114", "legacy", "dd32", "dd32nosig", "dd64nosig")


class Member:
    def __init__(self, name, content, method=0, style="file", **ov):
        if isinstance(name, str):
            name = name.encode("utf-8")
        assert style in STYLES, style
        self.name = name
        self.content = content
        self.method = method
        self.style = style
        self.ov = ov
        unknown = set(ov) - KNOWN_OVERRIDES
        assert not unknown, unknown

    def get(self, key, default):
        return self.ov.get(key, default)


KNOWN_OVERRIDES = {
    "data",            # raw compressed bytes (default: content, deflated when method 8)
    "flags", "lfh_flags", "cd_flags",
    "lfh_method", "cd_method",
    "lfh_version", "cd_version", "made_by",
    "lfh_name", "cd_name",
    "lfh_crc", "lfh_csize", "lfh_usize", "lfh_extra",
    "dd_crc", "dd_csize", "dd_usize", "dd", "dd_raw",   # dd: None/'64sig'/'32sig'/'64'/'32'
    "cd_crc", "cd_csize", "cd_usize", "cd_extra", "cd_offset", "cd_disk", "cd_zip64", "cd_comment",
    "in_cd",           # False: local header only (hidden member)
    "after_data",      # raw bytes inserted after data and descriptor
}


class Layout:
    def __init__(self):
        self.m = []       # per member: dict(lfh, data, data_end, dd, end)
        self.cd = []      # offsets of the central-directory records, in order
        self.cd_start = None
        self.cd_end = None
        self.z64eocd = None
        self.z64loc = None
        self.eocd = None
        self.comment_end = None
        self.total = None


def build_zip(members, prefix=b"", comment=b"", comment_len=None, after=b"", extra_cd=(),
              z64=None, eocd=None, cd_order=None):
    """Build an archive.  Returns (bytes, Layout).

    extra_cd: dicts appended to the central directory, each cloning member `of` with overrides.
    z64: None or a dict of overrides for a ZIP64 end record + locator (put before the end record).
    eocd: dict of overrides for the end record (count, cd_size, cd_offset, disk, cd_disk,
          count_disk).
    """
    out = bytearray(prefix)
    L = Layout()
    recs = []   # per member: fields for its CD record
    for m in members:
        c = m.content
        data = m.get("data", deflate(c) if m.method == 8 else c)
        crc = zlib.crc32(c)
        cs, us = len(data), len(c)
        st = m.style
        flags = m.get("flags", 0x08 if st in ("pipe", "pipe3114", "dd32", "dd32nosig", "dd64nosig") else 0)
        version = 45 if st in ("py3114", "pipe3114") else 20
        if st == "file":
            f = (crc, cs, us, z64_extra(us, cs), None)
        elif st == "py3114":
            f = (crc, FF32, FF32, z64_extra(us, cs), None)
        elif st == "pipe":
            f = (0, 0, 0, z64_extra(0, 0), "64sig")
        elif st == "pipe3114":
            f = (0, FF32, FF32, z64_extra(0, 0), "64sig")
        elif st == "legacy":
            f = (crc, cs, us, b"", None)
        elif st == "dd32":
            f = (0, 0, 0, b"", "32sig")
        elif st == "dd32nosig":
            f = (0, 0, 0, b"", "32")
        elif st == "dd64nosig":
            f = (0, 0, 0, z64_extra(0, 0), "64")
        lcrc, lcs, lus, lextra, ddkind = f
        lfh_off = len(out)
        name = m.get("lfh_name", m.name)
        out += lfh_bytes(name, m.get("lfh_version", version), m.get("lfh_flags", flags),
                         m.get("lfh_method", m.method), m.get("lfh_crc", lcrc),
                         m.get("lfh_csize", lcs), m.get("lfh_usize", lus), m.get("lfh_extra", lextra))
        data_off = len(out)
        out += data
        data_end = len(out)
        ddkind = m.get("dd", ddkind)
        dd_off = None
        if "dd_raw" in m.ov:
            dd_off = len(out)
            out += m.ov["dd_raw"]
        elif ddkind:
            dd_off = len(out)
            out += dd_bytes(m.get("dd_crc", crc), m.get("dd_csize", cs), m.get("dd_usize", us),
                            wide=ddkind.startswith("64"), sig=ddkind.endswith("sig"))
        out += m.get("after_data", b"")
        L.m.append(dict(lfh=lfh_off, data=data_off, data_end=data_end, dd=dd_off, end=len(out)))
        cd_z64 = m.get("cd_zip64", False)
        rec = dict(name=m.get("cd_name", m.name), made_by=m.get("made_by", (3 << 8) | version),
                   version=m.get("cd_version", version), flags=m.get("cd_flags", flags),
                   method=m.get("cd_method", m.method), crc=m.get("cd_crc", crc),
                   csize=m.get("cd_csize", cs), usize=m.get("cd_usize", us),
                   offset=m.get("cd_offset", lfh_off - len(prefix)), disk=m.get("cd_disk", 0),
                   comment=m.get("cd_comment", b""))
        if cd_z64:
            rec["extra"] = z64_extra(rec["usize"], rec["csize"])
            rec["csize"] = rec["usize"] = FF32
        rec["extra"] = m.get("cd_extra", rec.get("extra", b""))
        recs.append(rec if m.get("in_cd", True) else None)
    cd_list = [r for r in recs if r is not None]
    if cd_order is not None:
        cd_list = [cd_list[i] for i in cd_order]
    for e in extra_cd:
        e = dict(e)
        base = dict(recs[e.pop("of")])
        base.update(e)
        cd_list.append(base)
    L.cd_start = len(out)
    for r in cd_list:
        L.cd.append(len(out))
        out += cdh_bytes(r["name"], r["made_by"], r["version"], r["flags"], r["method"], r["crc"],
                         r["csize"], r["usize"], r["offset"], extra=r["extra"], disk=r["disk"],
                         comment=r.get("comment", b""))
    L.cd_end = len(out)
    n = len(cd_list)
    cd_size = L.cd_end - L.cd_start
    cd_off = L.cd_start - len(prefix)
    if z64 is not None:
        zo = dict(count=n, cd_size=cd_size, cd_offset=cd_off)
        zo.update(z64)
        loc_off = zo.pop("loc_offset", None)
        loc_disk = zo.pop("loc_disk", 0)
        loc_total = zo.pop("loc_total", 1)
        no_record = zo.pop("no_record", False)
        L.z64eocd = len(out)
        if not no_record:
            out += z64eocd_bytes(**zo)
        L.z64loc = len(out)
        out += z64loc_bytes(L.z64eocd - len(prefix) if loc_off is None else loc_off, loc_disk, loc_total)
    eo = dict(count=n, cd_size=cd_size, cd_offset=cd_off)
    if eocd:
        eo.update(eocd)
    L.eocd = len(out)
    out += eocd_bytes(eo["count"], eo["cd_size"], eo["cd_offset"], comment=comment,
                      disk=eo.get("disk", 0), cd_disk=eo.get("cd_disk", 0),
                      count_disk=eo.get("count_disk"), comment_len=comment_len)
    L.comment_end = len(out)
    out += after
    L.total = len(out)
    return bytes(out), L
