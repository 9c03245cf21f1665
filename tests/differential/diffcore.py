"""The differential oracle: npzstream (through a pipe) against np.load (NumPy 1.24, in-process).

classify(binary, data, path) -> Result(cls, rule, detail, ours, numpy)

Classes
  agree-accept   both accept, same keys (in order), kinds, dtypes, shapes, fortran order, versions,
                 nbytes, and bytes (npzstream's data_crc32 == zlib.crc32 of the array NumPy loaded,
                 in storage order; blobs: size and CRC)
  agree-reject   both reject
  strict         NumPy accepts, npzstream rejects on a documented rule of SECURITY.md (rule names it;
                 the rule comes from a table of (error code, message) and is confirmed by a re-check
                 of the input: the header or ZIP feature the rule forbids must be present)
  numpy-alloc    NumPy would allocate more than ALLOC_LIMIT bytes before reading (not run); npzstream
                 must reject (it does not allocate by declared size, and the data is not there)
  numpy-timeout  np.load did not finish within NUMPY_TIMEOUT seconds (its header filter is quadratic on
                 some inputs); npzstream must reject
  FAIL-A         npzstream accepts and NumPy rejects, or loads something different
  FAIL-B         NumPy accepts and npzstream rejects without a confirmed documented rule
  FAIL-ERR       npzstream crashed, hung, exited with 2, or printed something that is not the contract
"""
import ast
import io
import json
import re
import signal
import struct
import subprocess
import tokenize
import warnings
import zipfile

from ziputil import walk_tlv
import zlib
from collections import namedtuple

import numpy as np
try:  # NumPy >= 2.3: numpy.lib.format re-exports only the public names
    from numpy.lib import _format_impl as npf
except ImportError:
    from numpy.lib import format as npf

warnings.simplefilter("ignore")

ALLOC_LIMIT = 64 << 20
NUMPY_TIMEOUT = 5.0
OURS_TIMEOUT = 20.0
MAGIC = b"\x93NUMPY"
Result = namedtuple("Result", "cls rule detail ours numpy")


# ----------------------------------------------------------------------------- npzstream
def run_ours(binary, data):
    try:
        r = subprocess.run([binary, "check", "--json", "-"], input=data, capture_output=True, timeout=OURS_TIMEOUT)
    except subprocess.TimeoutExpired:
        return {"_err": "timeout after %ss" % OURS_TIMEOUT}
    if r.returncode not in (0, 1):
        return {"_err": "exit %d: %s" % (r.returncode, r.stderr.decode("utf-8", "replace")[-600:])}
    try:
        d = json.loads(r.stdout)
    except ValueError:
        return {"_err": "stdout is not JSON: %r" % r.stdout[:200]}
    if not isinstance(d, dict) or (r.returncode == 0) != bool(d.get("ok")):
        return {"_err": "exit %d but ok=%r" % (r.returncode, d.get("ok") if isinstance(d, dict) else d)}
    if not d["ok"] and (not isinstance(d.get("error"), dict) or "code" not in d["error"]):
        return {"_err": "rejected without an error object"}
    return d


# ----------------------------------------------------------------------------- NumPy
class NumpyTimeout(BaseException):
    pass


def _alarm(signum, frame):
    raise NumpyTimeout()


class WouldAllocate(Exception):
    pass


def _declared(fp):
    """Read the .npy header from fp the way np.load does; returns (version, shape, fortran, dtype).
    Raises WouldAllocate if NumPy would allocate more than ALLOC_LIMIT bytes next."""
    ver = npf.read_magic(fp)
    npf._check_version(ver)
    shape, fortran, dtype = npf._read_array_header(fp, ver, max_header_size=npf._MAX_HEADER_SIZE)
    if len(shape) == 0:
        count = 1
    else:
        count = int(np.multiply.reduce(shape, dtype=np.int64))
    if count * dtype.itemsize > ALLOC_LIMIT:
        raise WouldAllocate("numpy: would allocate %d > %d bytes" % (count * dtype.itemsize, ALLOC_LIMIT))
    return ver, shape, fortran, dtype


def _array_view(a, ver, fortran, stored):
    """stored: the member's bytes after the .npy header.  The CRC is that of the stored data bytes
    NumPy read (as npzstream's data_crc32); for dtypes without fields the bytes of the loaded array
    (in storage order) must be those same bytes."""
    data = stored[:a.nbytes]
    if a.dtype.names is None:
        mem = (a.T if fortran and a.ndim > 1 else a)
        if not mem.flags.c_contiguous or mem.tobytes() != data:
            raise AssertionError("loaded array bytes differ from the stored data")
    return {"kind": "array", "dtype": a.dtype.str, "shape": list(a.shape), "fortran_order": bool(fortran),
            "version": list(ver), "nbytes": a.nbytes, "data_crc32": zlib.crc32(data)}


def numpy_view(path, timeout=NUMPY_TIMEOUT):
    """('accept', {format, members}) | ('reject', why) | ('alloc', why) | ('timeout', why)."""
    signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, timeout)
    try:
        try:
            return _numpy_view(path)
        finally:
            signal.setitimer(signal.ITIMER_REAL, 0)
    except NumpyTimeout:
        return "timeout", "numpy: no answer within %ss" % timeout
    except WouldAllocate as e:
        return "alloc", str(e)
    except BaseException as e:  # any exception = reject (MemoryError, RecursionError, ... too)
        if isinstance(e, (KeyboardInterrupt, SystemExit)):
            raise
        return "reject", "%s: %s" % (type(e).__name__, str(e)[:200])


def _numpy_view(path):
    with open(path, "rb") as f:
        head = f.read(6)
    if head == MAGIC:
        with open(path, "rb") as f:
            ver, shape, fortran, dtype = _declared(f)
            start = f.tell()
        a = np.load(path, allow_pickle=False)
        with open(path, "rb") as f:
            f.seek(start)
            stored = f.read(max(0, a.nbytes))
        return "accept", {"format": "npy", "members": [dict(_array_view(a, ver, fortran, stored), name=None, key=None)]}
    out = []
    with np.load(path, allow_pickle=False) as z:
        if not isinstance(z, np.lib.npyio.NpzFile):
            raise ValueError("not an npz")
        zf = z.zip
        for key in z.files:
            # NumPy >= 2.3 maps keys (and names) to names in a dict; before, a list of names
            name = z._files[key] if isinstance(z._files, dict) else (key if key in z._files else key + ".npy")
            info = zf.getinfo(name)
            with zf.open(name) as f:
                magic = f.read(6)
            if magic == MAGIC:
                with zf.open(name) as f:
                    ver, shape, fortran, dtype = _declared(f)
                    start = f._pos if hasattr(f, "_pos") else None
                v = z[key]
                if not isinstance(v, np.ndarray):
                    raise AssertionError("npy member loaded as %r" % type(v))
                try:
                    content = zf.read(name)
                except Exception as e:  # NumPy loaded it without reading the member to its end
                    content = b""
                h = npy_header(content)
                stored = content[(10 if ver[0] == 1 else 12) + len(h[0]):] if h else b""
                out.append(dict(_array_view(v, ver, fortran, stored), name=name, key=key))
            else:
                if info.file_size > ALLOC_LIMIT:
                    raise WouldAllocate("numpy: would read a %d-byte blob" % info.file_size)
                v = z[key]
                out.append({"kind": "blob", "name": name, "key": key, "size": len(v), "data_crc32": zlib.crc32(v)})
    return "accept", {"format": "npz", "members": out}


def compare(ours, theirs):
    """None when npzstream's accepted view equals NumPy's; else a description of the difference."""
    if ours["format"] != theirs["format"]:
        return "format %s vs numpy %s" % (ours["format"], theirs["format"])
    om, tm = ours["members"], theirs["members"]
    if len(om) != len(tm):
        return "%d members vs numpy %d" % (len(om), len(tm))
    for i, (o, t) in enumerate(zip(om, tm)):
        for k in t:
            ov = o.get(k)
            if k == "fortran_order" and len(t["shape"]) <= 1:
                continue  # 0-d/1-d: the same bytes either way
            if ov != t[k]:
                return "member %d (%r): %s = %r vs numpy %r" % (i, t.get("name"), k, ov, t[k])
    return None


# ----------------------------------------------------------------------------- rules
# Every rejection names its rule ("GROUP.check", src/base/rules.h).  A rejection of a file NumPy loads
# is allowed only under a strict group (S-...) that SECURITY.md lists, or a limit (LIMIT.*).
def library_rules(path):
    return re.findall(r'^\s*X\(\w+, "([^"]+)"', open(path, encoding="utf-8").read(), re.M)


def security_rule_ids(path):
    return set(re.findall(r"\|\s*(S-[A-Z0-9-]+)\s*\|", open(path, encoding="utf-8").read()))


def table_rule(code, msg):
    for c, sub, rule in RULES:
        if code.startswith(c) and sub in msg:
            return rule
    return None


# ----------------------------------------------------------------------------- header re-check
def redundant_paren(toks, i):
    """True when the '(' at toks[i] only groups an expression: not '()' and no top-level comma."""
    depth, comma, n = 0, False, 0
    for t in toks[i:]:
        if t.type == tokenize.OP and t.string in "([{":
            n += depth >= 1
            depth += 1
        elif t.type == tokenize.OP and t.string in ")]}":
            depth -= 1
            if depth == 0:
                return n > 0 and not comma
        elif depth == 1 and t.type == tokenize.OP and t.string == ",":
            comma = True
        elif depth >= 1 and t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.COMMENT):
            n += 1
    return False


CANON = re.compile(r"^(?:[<>|=](?:b1|[iu]1|S\d+|V\d+)|[<>](?:[iu][248]|f(?:2|4|8|16)|c(?:8|16|32)|U\d+|"
                   r"[Mm]8(?:\[(?:[1-9]\d*)?(?:Y|M|W|D|h|m|s|ms|us|ns|ps|fs|as)\]|\[generic\])?))$")
ESC_OK = re.compile(r"\\(?:[\\'\"nrt]|x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8})")


def _descr_rules(d, top, found):
    if isinstance(d, str):
        if not CANON.match(d):
            found.add("S-DESCR-ALIAS")
        else:
            m = re.search(r"([SVU])(\d+)$", d)
            if m and int(m.group(2)) * (4 if m.group(1) == "U" else 1) > 2 ** 31 - 1:
                found.add("S-DESCR-SIZE")
            if len(d) > 2 and d[1:].isdigit() is False and re.match(r"^[<>|=][SVU]0\d", d):
                found.add("S-DESCR-ALIAS")
        return
    if top and not isinstance(d, list):
        found.add("S-DESCR-FORM")
    if isinstance(d, tuple):
        if len(d) >= 1:
            _descr_rules(d[0], False, found)
        if len(d) >= 2 and not isinstance(d[1], (int, tuple)):
            found.add("S-DESCR-FORM")
        if len(d) >= 2 and type(d[1]) is int and d[1] == 1:
            found.add("S-DESCR-FORM")  # (type, 1): no subarray in NumPy 1.x, (1,) in 2.x
        if len(d) >= 2 and isinstance(d[1], tuple) and len(d[1]) > 32:
            found.add("S-NDIM")
        return
    if isinstance(d, dict):
        found.add("S-DESCR-FORM")
        return
    if isinstance(d, list):
        total = 0
        for f in d:
            if not isinstance(f, tuple):
                found.add("S-DESCR-FORM")
                continue
            if len(f) not in (2, 3):
                continue
            name = f[0]
            if isinstance(name, tuple):
                if len(name) == 2 and not isinstance(name[0], str):
                    found.add("S-DESCR-FORM")
                name = name[1] if len(name) == 2 else None
            if len(f) == 3 and not isinstance(f[2], (int, tuple)):
                found.add("S-DESCR-FORM")
            if len(f) == 3 and type(f[2]) is int and f[2] == 1:
                found.add("S-DESCR-FORM")  # a field shape of 1: scalar in NumPy 1.x, (1,) in 2.x
            if len(f) == 3 and isinstance(f[2], tuple) and len(f[2]) > 32:
                found.add("S-NDIM")
            t = f[1]
            if name == "":
                base = t[0] if isinstance(t, tuple) and t else t
                try:
                    dt = np.dtype(base) if isinstance(base, str) else None
                except Exception:
                    dt = None
                if dt is None or dt.kind != "V" or dt.names is not None:
                    found.add("S-DESCR-FORM")
                if isinstance(base, str) and "O" in base:
                    found.add("S-DESCR-OBJPAD")
            _descr_rules(t, False, found)
            try:
                total += npf.descr_to_dtype([f]).itemsize if name else 0
            except Exception:
                pass
        try:
            if npf.descr_to_dtype(d).itemsize > 2 ** 31 - 1:
                found.add("S-DESCR-SIZE")
        except Exception:
            pass
    try:
        dt = npf.descr_to_dtype(d)
        if dt.itemsize < 0:
            found.add("S-DESCR-SIZE")
    except Exception:
        pass


def header_rules(hdr, ver):
    """Documented .npy header rules (SECURITY.md) that this header text breaks."""
    found = set()
    try:
        text = hdr.decode("utf-8" if ver[0] == 3 else "latin-1")
    except UnicodeDecodeError:
        return found
    # around the dict
    o = text.find("{")
    if o < 0 or text[:o].strip(" \t") != "":
        found.add("S-HDR-WS")
    c = text.rfind("}")
    if c < 0 or not re.fullmatch(r"[ \t]*\n?", text[c + 1:]):
        found.add("S-HDR-WS")
    if re.search(r"[\r\x0b\x0c]|\\\n", text):
        found.add("S-HDR-WS")
    # tokens
    try:
        toks = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except Exception:
        toks = []
    prev = None
    for t in toks:
        if t.type == tokenize.COMMENT:
            found.add("S-HDR-SYNTAX")
        elif t.type == tokenize.STRING:
            s = t.string
            q = min(i for i in (s.find("'"), s.find('"')) if i >= 0)
            if q > 0:
                found.add("S-HDR-SYNTAX")
            body = s[q:]
            if body[:3] in ("'''", '"""'):
                found.add("S-HDR-SYNTAX")
            inner = body[1:-1]
            if "\\" in ESC_OK.sub("", inner) or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in inner):
                found.add("S-HDR-SYNTAX")
            if prev is not None and prev.type == tokenize.STRING:
                found.add("S-HDR-SYNTAX")
        elif t.type == tokenize.NUMBER:
            if not re.fullmatch(r"0|[1-9][0-9]*", t.string):
                found.add("S-HDR-INT")
        elif t.type == tokenize.OP and t.string in "+-":
            found.add("S-HDR-INT")
        elif t.type == tokenize.OP and t.string == "(" and redundant_paren(toks, toks.index(t)):
            found.add("S-HDR-SYNTAX")
        elif t.type == tokenize.NAME and t.string == "L" and ver[0] == 3:
            found.add("S-HDR-INT")
        elif t.type == tokenize.ERRORTOKEN and t.string.strip(" \t\n") == "":
            found.add("S-HDR-WS")
        if t.type not in (tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.COMMENT):
            prev = t
    # values
    try:
        filtered = npf._filter_header(text) if ver[0] in (1, 2) else text
        tree = ast.parse(filtered.strip(), mode="eval")
        if isinstance(tree.body, ast.Dict):
            keys = [ast.literal_eval(k) for k in tree.body.keys if k is not None]
            if len(keys) != len(set(map(repr, keys))):
                found.add("S-HDR-DUPKEY")
        d = ast.literal_eval(filtered.strip())
        if isinstance(d, dict):
            if "descr" in d:
                _descr_rules(d["descr"], True, found)
            sh = d.get("shape")
            if isinstance(sh, tuple) and any(isinstance(x, int) and x < 0 for x in sh):
                found.add("S-HDR-INT")
            if isinstance(sh, tuple) and len(sh) > 32:
                found.add("S-NDIM")
    except Exception:
        pass
    return found


# ----------------------------------------------------------------------------- ZIP re-check
def zip_rules(raw):
    """Documented ZIP rules (SECURITY.md) that an archive NumPy reads breaks, found by comparing
    what Python's zipfile sees (the central directory) with the local records in order."""
    found = set()
    # S-ZIP-EOCD-FIND: zipfile's end-record search lands on bytes the stream reads as something
    # else: an end-record signature starting in the 21 bytes before the record zipfile takes (inside
    # the stream's end record), or a locator before it that does not belong to a ZIP64 end record
    # right after the central directory
    try:
        er = zipfile._EndRecData(io.BytesIO(raw))
    except Exception:
        er = None
    if er:
        eloc = er[zipfile._ECD_LOCATION]
        if raw.rfind(b"PK\x05\x06", max(0, eloc - 21), eloc + 3) >= 0:
            found.add("S-ZIP-EOCD-FIND")
        if eloc >= 20 and raw[eloc - 20:eloc - 16] == b"PK\x06\x07":
            reloff = struct.unpack_from("<Q", raw, eloc - 12)[0]
            if not (eloc >= 76 and reloff == eloc - 76 and raw[eloc - 76:eloc - 72] == b"PK\x06\x06"
                    and sum(struct.unpack_from("<QQ", raw, eloc - 36)) == eloc - 76):
                found.add("S-ZIP-EOCD-FIND")
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        infos = zf.infolist()
        fp = io.BytesIO(raw)
        endrec = zipfile._EndRecData(fp)
    except Exception:
        return found
    loc = endrec[zipfile._ECD_LOCATION]
    comment = endrec[zipfile._ECD_COMMENT]
    if loc + 22 + len(comment) != len(raw):
        found.add("S-ZIP-TRAIL")
    if struct.unpack_from("<H", raw, loc + 20)[0] > len(raw) - loc - 22:
        found.add("S-ZIP-LAYOUT")  # the comment length runs past the end of the input
    if raw.count(b"PK\x05\x06") > 1 or any(s in comment for s in (b"PK\x01\x02", b"PK\x03\x04", b"PK\x05\x06", b"PK\x06\x06", b"PK\x06\x07", b"PK\x07\x08")):
        found.add("S-ZIP-COMMENT")
    if zf.start_dir != endrec[zipfile._ECD_OFFSET] or (infos and raw[:4] != b"PK\x03\x04"):
        found.add("S-ZIP-LAYOUT")
    if endrec[zipfile._ECD_DISK_NUMBER] or endrec[zipfile._ECD_DISK_START]:
        found.add("S-ZIP-FEATURES")
    # the raw 32-bit end record and the ZIP64 end record + locator, as written
    try:
        _, dsk, cdsk, nd, nt, cs32, co32, _ = struct.unpack_from("<IHHHHIIH", raw, loc)
        cd_end = loc
        z = loc >= 20 and raw[loc - 20:loc - 16] == b"PK\x06\x07"
        if z:
            _, ldisk, zoff, ltot = struct.unpack_from("<IIQI", raw, loc - 20)
            zr = struct.unpack_from("<IQHHIIQQQQ", raw, zoff) if zoff + 56 <= len(raw) else None
            if ldisk or ltot != 1:
                found.add("S-ZIP-FEATURES")
            if zr is None or zr[0] != 0x06064B50 or zoff + 56 != loc - 20:
                found.add("S-ZIP-LAYOUT")
                if zr is not None and zr[0] == 0x06064B50 and zr[1] > 44:
                    found.add("S-ZIP-FEATURES")
            else:
                cd_end = zoff
                if zr[1] != 44:
                    found.add("S-ZIP-FEATURES" if zr[1] > 44 else "S-ZIP-LAYOUT")
                if zr[4] or zr[5]:
                    found.add("S-ZIP-FEATURES")
                if zr[6] != len(infos) or zr[7] != len(infos):
                    found.add("S-ZIP-COUNT")
                if zr[9] != zf.start_dir or zr[8] != cd_end - zf.start_dir:
                    found.add("S-ZIP-LAYOUT")
        if not ((dsk == 0 or (z and dsk == 0xFFFF)) and (cdsk == 0 or (z and cdsk == 0xFFFF))):
            found.add("S-ZIP-FEATURES")
        if not all(c == len(infos) or (z and c == 0xFFFF) for c in (nd, nt)):
            found.add("S-ZIP-COUNT")
        if not (cs32 == cd_end - zf.start_dir or (z and cs32 == 0xFFFFFFFF)):
            found.add("S-ZIP-LAYOUT")
        if not (co32 == zf.start_dir or (z and co32 == 0xFFFFFFFF)):
            found.add("S-ZIP-LAYOUT")
    except struct.error:
        found.add("S-ZIP-LAYOUT")
    if endrec[zipfile._ECD_ENTRIES_TOTAL] != len(infos) or endrec[zipfile._ECD_ENTRIES_THIS_DISK] != len(infos):
        found.add("S-ZIP-COUNT")
    names = [i.filename for i in infos]
    keys = names + [n[:-4] for n in names if n.endswith(".npy")]
    if len(set(keys)) != len(keys):
        found.add("S-ZIP-DUP")
    cdraw = {}
    p = zf.start_dir
    for info in infos:
        try:
            f = struct.unpack_from("<IHHHHHHIIIHHHHHII", raw, p)
        except struct.error:
            break
        if f[0] != 0x02014B50:
            found.add("S-ZIP-LAYOUT")
            break
        cdraw[id(info)] = (f[8], f[9], f[16], f[13], raw[p + 46:p + 46 + f[10]])
        p += 46 + f[10] + f[11] + f[12]
    if p != zf.start_dir + endrec[zipfile._ECD_SIZE]:
        found.add("S-ZIP-LAYOUT")  # the records overrun (or fall short of) the stated directory size
    pos = 0
    if [i.header_offset for i in infos] != sorted(i.header_offset for i in infos):
        found.add("S-ZIP-CD")
    for info in infos:
        off = info.header_offset
        if off != pos:
            found.add("S-ZIP-CD" if raw[pos:pos + 4] == b"PK\x03\x04" else "S-ZIP-LAYOUT")
        try:
            lf = struct.unpack_from("<IHHHHHIIIHH", raw, off)
        except struct.error:
            found.add("S-ZIP-LAYOUT")
            break
        _, ver, flags, method, _, _, lcrc, lcs, lus, nl, xl = lf
        name = raw[off + 30:off + 30 + nl]
        lextra = raw[off + 30 + nl:off + 30 + nl + xl]
        if flags != info.flag_bits or method != info.compress_type:
            found.add("S-ZIP-CD")
        if (ver & 0xFF) > 63 or (info.extract_version & 0xFF) > 63 or method not in (0, 8) or flags & ~(0x808 | (6 if method == 8 else 0)):
            found.add("S-ZIP-FEATURES")
        if info.volume != 0:
            found.add("S-ZIP-FEATURES")
        nm = name
        if (not nm or any(b < 0x20 or b == 0x7F for b in nm) or b"\\" in nm or nm.startswith(b"/") or nm.endswith(b"/")
                or b".." in nm.split(b"/")
                or (any(b >= 0x80 for b in nm) and not (flags & 0x800))):
            found.add("S-ZIP-NAME")
        if any(b >= 0x80 for b in nm):
            try:
                nm.decode("utf-8")
            except UnicodeDecodeError:
                found.add("S-ZIP-NAME")
        lt = walk_tlv(lextra)
        ct = walk_tlv(info.extra)
        if lt is None or ct is None:
            found.add("S-ZIP-EXTRA")
            lt = lt or []
            ct = ct or []
        z64 = [b for t, b in lt if t == 1]
        if len(z64) > 1 or len([1 for t, b in ct if t == 1]) > 1 or any(t in (0x7075, 0x6375) for t, b in lt + ct):
            found.add("S-ZIP-EXTRA")
        if z64 and len(z64[0]) != 16:
            found.add("S-ZIP-EXTRA")
        cz = [b for t, b in ct if t == 1]
        if cz:
            rc = cdraw.get(id(info))
            if rc is not None:
                implied = 8 * sum(v == 0xFFFFFFFF for v in (rc[0], rc[1], rc[2])) + 4 * (rc[3] == 0xFFFF)
                if len(cz[0]) != implied:
                    found.add("S-ZIP-EXTRA")
        rc = cdraw.get(id(info))
        if rc is not None and rc[4] != name:
            found.add("S-ZIP-CD")
        ds = off + 30 + nl + xl
        data = raw[ds:ds + info.compress_size]
        dd = flags & 8
        if not dd:
            rcs = (struct.unpack("<Q", z64[0][8:16])[0] if lcs == 0xFFFFFFFF and z64 and len(z64[0]) == 16 else lcs)
            rus = (struct.unpack("<Q", z64[0][0:8])[0] if lus == 0xFFFFFFFF and z64 and len(z64[0]) == 16 else lus)
            if lcrc != info.CRC or rcs != info.compress_size or rus != info.file_size:
                found.add("S-ZIP-CD")
        if z64 and len(z64[0]) == 16:
            zu, zc = struct.unpack("<QQ", z64[0])
            if (zu and zu != info.file_size) or (zc and zc != info.compress_size):
                found.add("S-ZIP-CRC")
        if dd and ((lcs not in (0, 0xFFFFFFFF) and lcs != info.compress_size) or
                   (lus not in (0, 0xFFFFFFFF) and lus != info.file_size) or
                   (0xFFFFFFFF in (lcs, lus) and not z64)):
            found.add("S-ZIP-CRC")
        content = b""
        try:
            if method == 8:
                d = zlib.decompressobj(-15)
                content = d.decompress(data)
                if not d.eof or d.unused_data:
                    found.add("S-ZIP-DEFLATE-END")
            else:
                content = data
        except zlib.error:
            found.add("S-ZIP-CD")
        if zlib.crc32(content) != info.CRC or len(content) != info.file_size:
            found.add("S-ZIP-CRC")
        if content[:6] == MAGIC:
            try:
                f = io.BytesIO(content)
                v = npf.read_magic(f)
                shape, fo, dt = npf._read_array_header(f, v)
                cnt = 1
                for s in shape:
                    cnt *= s
                if f.tell() + cnt * dt.itemsize != len(content):
                    found.add("S-ZIP-MEMBER-TRAIL" if f.tell() + cnt * dt.itemsize < len(content) else "S-ZIP-CRC")
                found |= header_rules(*npy_header(content))
            except Exception:
                pass
        elif dd and method == 0:
            found.add("S-ZIP-DD-BLOB")
        end = ds + info.compress_size
        if dd:
            w = 8 if z64 else 4
            sig = raw[end:end + 4] == b"PK\x07\x08"
            b = end + (4 if sig else 0)
            try:
                dcrc = struct.unpack_from("<I", raw, b)[0]
                dcs, dus = struct.unpack_from("<QQ" if w == 8 else "<II", raw, b + 4)
                if dcrc != info.CRC or dcs != info.compress_size or dus != info.file_size:
                    found.add("S-ZIP-CRC")
                if not sig and dcrc == 0x08074B50:
                    found.add("S-ZIP-DD-SIG")
                if lcrc and lcrc != info.CRC:
                    found.add("S-ZIP-CRC")
            except struct.error:
                found.add("S-ZIP-LAYOUT")
            end = b + 4 + 2 * w
        pos = end
    if pos != zf.start_dir:
        found.add("S-ZIP-CD" if raw[pos:pos + 4] == b"PK\x03\x04" else "S-ZIP-LAYOUT")
    return found


def member_header(raw, member):
    """(header bytes, version) of npz member `member` as the central directory locates it, or None."""
    try:
        zf = zipfile.ZipFile(io.BytesIO(raw))
        info = zf.getinfo(member)
        off = info.header_offset
        nl, xl = struct.unpack_from("<HH", raw, off + 26)
        data = raw[off + 30 + nl + xl:off + 30 + nl + xl + info.compress_size]
        content = zlib.decompressobj(-15).decompress(data) if info.compress_type == 8 else data
        return npy_header(content)
    except Exception:
        return None


def shadowed(raw, index, name):
    """Is member `index` (named `name`; the stream's order, which must be the directory's) one
    that np.load does not read, because a later directory entry has the same name or key?"""
    if index is None or name is None:
        return False
    try:
        infos = zipfile.ZipFile(io.BytesIO(raw)).infolist()
    except Exception:
        return False
    if index >= len(infos):
        return False
    key = lambda n: n[:-4] if n.endswith(".npy") else n  # noqa: E731
    mine = infos[index].filename
    if mine != name:
        return False
    return any(i.filename == mine or key(i.filename) == key(mine) for i in infos[index + 1:])


def npy_header(content):
    if content[:6] != MAGIC or len(content) < 10:
        return None
    ver = (content[6], content[7])
    if ver[0] == 1:
        hl, s = struct.unpack_from("<H", content, 8)[0], 10
    else:
        hl, s = struct.unpack_from("<I", content, 8)[0], 12
    return content[s:s + hl], ver


# ----------------------------------------------------------------------------- classify
# re-check groups that mean "zipfile's view of the archive is not the stream's"
DIVERGENCE = {"S-ZIP-EOCD-FIND", "S-ZIP-LAYOUT", "S-ZIP-CD", "S-ZIP-TRAIL", "S-ZIP-COMMENT", "S-ZIP-COUNT"}


def strict_rule(ours, raw, known_ids):
    """(SECURITY.md group, how) for a rejection NumPy does not share: the group of the rule the
    library names, when it is a strict group SECURITY.md lists; else (None, why).  The re-check
    (header_rules, zip_rules: is the feature the group forbids present?) confirms it or not."""
    e = ours["error"]
    code, rule = e["code"], e.get("rule") or ""
    group = rule.split(".")[0]
    if not group.startswith("S-"):
        # the stream stopped at a plain check, but zipfile reads another archive than the local
        # records (a steered end record, a directory that skips members...): the rejection is
        # required whichever check the stream met first
        other = sorted(zip_rules(raw) & DIVERGENCE) if raw[:2] == b"PK" else []
        if other and other[0] in known_ids:
            return other[0], "zipfile reads another archive (%s); the stream stopped at %s" % (",".join(other), rule)
        # the failing member is one np.load never reads: a later entry has its name or key
        # (zipfile keeps the last), a shadowing the archive is refused for anyway (S-ZIP-DUP);
        # the stream meets the shadowed member's own fault first
        if raw[:2] == b"PK" and shadowed(raw, e.get("member_index"), e.get("member")) and "S-ZIP-DUP" in known_ids:
            return "S-ZIP-DUP", "member %d is shadowed by a later one of its name; the stream stopped at %s" % (
                e["member_index"], rule)
        return None, "rule %s is not a strict rule" % (rule or "(none)")
    if group not in known_ids:
        return None, "rule %s: group not in SECURITY.md" % rule
    found = set()
    if code in ("bad_header", "bad_shape", "size_overflow", "pickle"):
        h = npy_header(raw) if raw[:6] == MAGIC else member_header(raw, e.get("member"))
        if h is not None:
            found = header_rules(*h)
    if raw[:2] == b"PK":
        found |= zip_rules(raw)
    if raw[:1] == b"\x93" and code == "trailing_data":
        found.add("S-NPY-TRAIL")
    return group, ("confirmed" if group in found else "unconfirmed (re-check: %s)" % ",".join(sorted(found)))


def classify(binary, data, path, known_ids):
    ours = run_ours(binary, data)
    if "_err" in ours:
        return Result("FAIL-ERR", None, ours["_err"], ours, None)
    with open(path, "wb") as f:
        f.write(data)
    verdict, view = numpy_view(path)
    if verdict == "timeout" and ours["ok"]:
        # a file we accept must be checked: once more with time to spare (a loaded machine makes
        # np.load of thousands of members slow; its quadratic header filter is a reject's case)
        verdict, view = numpy_view(path, 12 * NUMPY_TIMEOUT)
    if verdict == "timeout":
        if ours["ok"]:
            return Result("FAIL-A", None, "accepted, NumPy timed out (unverified)", ours, view)
        return Result("numpy-timeout", None, view, ours, view)
    if verdict == "alloc":
        if ours["ok"]:
            return Result("FAIL-A", None, "accepted, NumPy would allocate too much (unverified)", ours, view)
        return Result("numpy-alloc", None, view, ours, view)
    if verdict == "reject":
        if ours["ok"]:
            return Result("FAIL-A", None, "accepted, NumPy rejects: " + view, ours, view)
        return Result("agree-reject", None, ours["error"]["code"], ours, view)
    if ours["ok"]:
        diff = compare(ours, view)
        if diff:
            return Result("FAIL-A", None, "loads something different: " + diff, ours, view)
        return Result("agree-accept", None, None, ours, view)
    if ours["error"]["code"] == "limit":
        return Result("limit", None, ours["error"]["message"], ours, view)
    rule, how = strict_rule(ours, data, known_ids)
    if rule is None:
        return Result("FAIL-B", None, "NumPy accepts; %s: %s (%s)" % (ours["error"]["code"], ours["error"]["message"], how), ours, view)
    return Result("strict", rule, how, ours, view)
