#!/usr/bin/python3
"""An oracle for policies: random (archive, policy) pairs within the policy grammar, each archive
written by NumPy (np.save's bytes in a zip, as np.savez writes them, and blobs), each policy read
two ways: by npzstream (`check --policy`) and here, from the arrays np.load returns and NumPy's
own reading of them (dtype.str, fields, offsets, itemsize and titles, shape, the C/F-contiguous
flags, np.isfinite and np.isnat, comparisons, hashlib's SHA-256 of the array's bytes).

  - whenever npzstream accepts, np.load's arrays satisfy the policy;
  - whenever it rejects, the file breaks the policy, in the member npzstream names, by a clause
    whose rule is the one it reports (a NaN under "finite": POLICY.nan, a dtype whose values a
    check does not apply to: POLICY.check-type, ...);
  - every file is accepted without a policy (the policy only adds rejections).

The archives mix every kind of dtype a policy speaks of: floats of each width and byte order,
complex, integers, bool (bytes 0, 1 and 2), datetime64 and timedelta64 with NaT, bfloat16 as the
|V2 bytes NumPy stores it as, other void, text, long double, structured dtypes (packed, aligned,
padded, titled, nested, subarrays of subarrays); shapes of 0 to 3 dimensions, empty ones, C and
Fortran order; and twins of an array that keep its bytes (another byte order, the other order, a
blob).  The policies take their dtypes (dtype.str, names, field lists, layout objects), shapes
(integers, names shared between members, "*", "..."), orders, byte orders, finite, ranges,
elements, byte caps and pins from the arrays, or from other random ones.

Seeded (--seed, default 39) and bounded (240 policies, four archives each; --quick: 60): a few
seconds.  Run by tests/run_all.py with NumPy 1.24 (/usr/bin/python3), and again in .venv-pkg-np2
(make python-env: NumPy 2) with the seed after it on 80 policies, without the coverage gate.
"""
import fnmatch
import hashlib
import io
import json
import os
import random
import struct
import subprocess
import sys
import warnings
import zipfile

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "tests"))
from common import npy_bytes, ok, zip_bytes  # noqa: E402

NUMPY2 = int(np.__version__.split(".")[0]) >= 2

# ---- arrays --------------------------------------------------------------------------------------

SCALARS = ["<f2", ">f2", "<f4", ">f4", "<f8", ">f8", "<c8", ">c16", "|i1", "<i2", ">i4", "<i8", "|u1", ">u2", "<u8",
           "|b1", "<M8[s]", ">M8[ns]", "<m8[us]", ">m8[D]", "|V2", "|V2", "|V2", "<U3", "|S2", "|V3", "<f16"]
LEAVES = ["<f4", ">f4", "<i2", ">i8", "|u1", "|S3", "<M8[s]", "|b1", ">f8", "<c8"]
SHAPES = [(), (0,), (1,), (5,), (3, 4), (1, 4), (4, 1), (2, 3, 2), (2, 0, 3), (7,)]
FLOATS = [0.0, 0.5, 1.0, -1.5, 2.0, 9.0, 100.0, -2.0, 1.25, 3.0, -0.25]
INTS = list(range(-3, 13))
BOUNDS = [[0, 9], [-1.5, 1.5], [None, 100], [2, None], [-2, 2], [0, 1], [1, 1], [-0.25, 9]]
NAMES = {("f", 2): ["float16"], ("f", 4): ["float32"], ("f", 8): ["float64"], ("f", 16): ["float128", "longdouble"],
         ("c", 8): ["complex64"], ("c", 16): ["complex128"], ("c", 32): ["complex256", "clongdouble"],
         ("i", 1): ["int8"], ("i", 2): ["int16"], ("i", 4): ["int32"], ("i", 8): ["int64"], ("u", 1): ["uint8"],
         ("u", 2): ["uint16"], ("u", 4): ["uint32"], ("u", 8): ["uint64"], ("b", 1): ["bool"], ("V", 2): ["bfloat16", "void"]}
# what each name admits: (kind, itemsize or 0 for any) of an unstructured dtype
CLASSES = {"bool": ("b", 1), "int8": ("i", 1), "int16": ("i", 2), "int32": ("i", 4), "int64": ("i", 8), "uint8": ("u", 1),
           "uint16": ("u", 2), "uint32": ("u", 4), "uint64": ("u", 8), "float16": ("f", 2), "float32": ("f", 4),
           "float64": ("f", 8), "float128": ("f", 16), "longdouble": ("f", 16), "complex64": ("c", 8),
           "complex128": ("c", 16), "complex256": ("c", 32), "clongdouble": ("c", 32), "str": ("U", 0),
           "bytes": ("S", 0), "void": ("V", 0), "bfloat16": ("V", 2), "datetime64": ("M", 8), "timedelta64": ("m", 8)}
NAT = -(1 << 63)


def bf16_bits(vals):
    """float values as bfloat16 bits (the top half of the float32), little-endian |V2."""
    return (np.array(vals, "<f4").view("<u4") >> 16).astype("<u2").tobytes()


def bf16_values(arr):
    """A |V2 array's bytes read as little-endian bfloat16, as float64."""
    u = np.frombuffer(arr.tobytes(order="A"), "<u2").astype("<u4") << 16
    return u.view("<f4").astype(np.float64)


def scalar_bytes(R, dt, n, special):
    """n elements of unstructured dtype dt, as bytes; special: one kind of value a check is about
    among them (NaN, an infinity, NaT, a bool byte 2), or none."""
    k = dt.kind
    if k in "fc" or (k == "V" and dt.itemsize == 2):
        pool = FLOATS + ([R.choice([float("nan"), float("inf"), float("-inf")])] * 3 if special else [])
        vals = [R.choice(pool) for _ in range(n)]
        if k == "V":
            return bf16_bits(vals)
        if k == "c":
            vals = [complex(v, R.choice(pool)) for v in vals]
        return np.array(vals, dt).tobytes()
    if k in "iu":
        lo = 0 if k == "u" else -3
        return np.array([R.choice([x for x in INTS if x >= lo]) for _ in range(n)], dt).tobytes()
    if k == "b":
        return bytes(R.choice([0, 1, 1, 2] if special else [0, 1]) for _ in range(n))
    if k in "Mm":
        vals = [R.choice([-5, 0, 3, 10 ** 6, NAT + 1] + ([NAT] * 2 if special else [])) for _ in range(n)]
        return np.array(vals, dt.str[0] + "i8").tobytes()
    if k in "US":
        return np.array(["".join(R.choice("ab\u00e9" if k == "U" else "ab") for _ in range(R.randint(0, 2)))
                         for _ in range(n)], dt).tobytes()
    return bytes(R.randrange(256) for _ in range(n * dt.itemsize))


def random_struct(R, depth=0):
    """A structured dtype np.save can write: packed, aligned, padded or titled, maybe nested, with
    subarrays (of subarrays)."""
    names, formats, titles = [], [], []
    for i in range(R.randint(1, 3)):
        names.append("f%d%s" % (i, R.choice(["", "x", "\u00e9"])))
        if depth < 2 and R.random() < 0.2:
            t = random_struct(R, depth + 1)
        else:
            t = np.dtype(R.choice(LEAVES))
        r = R.random()
        if r < 0.15:
            t = np.dtype((t, (R.randint(1, 3),)))
        elif r < 0.22:
            t = np.dtype((np.dtype((t, (2,))), (R.randint(1, 2),)))  # a subarray of a subarray
        formats.append(t)
        titles.append(("T%d" % i) if R.random() < 0.15 else None)
    form = R.choice(["packed", "packed", "aligned", "padded"])
    d = {"names": names, "formats": formats}
    if any(titles):
        d["titles"] = titles
    if form == "aligned":
        return np.dtype(d, align=True)
    dt = np.dtype(d)
    if form == "padded":
        offsets, at = [], R.choice([0, 4])
        for f in formats:
            offsets.append(at)
            at += f.itemsize + R.choice([0, 0, 3])
        d["offsets"] = offsets
        d["itemsize"] = at + R.choice([0, 5])
        dt = np.dtype(d)
    return dt


def random_dtype(R):
    return random_struct(R) if R.random() < 0.2 else np.dtype(R.choice(SCALARS))


def random_array(R, dt=None, shape=None, order=None):
    dt = dt if dt is not None else random_dtype(R)
    shape = shape if shape is not None else R.choice(SHAPES)
    n = int(np.prod(shape))
    special = R.random() < 0.5
    raw = (scalar_bytes(R, dt, n, special) if dt.names is None else
           bytes(R.randrange(256) for _ in range(n * dt.itemsize)))
    a = np.frombuffer(raw, dt).reshape(shape)
    if (order or R.choice("CCF")) == "F":
        a = np.asfortranarray(a)
    return a


def fortran(a):
    return bool(a.flags.f_contiguous and not a.flags.c_contiguous)


def file_bytes(a):
    """The data bytes np.save writes for array a (Fortran order: its transpose's C order)."""
    return (a.T if fortran(a) else a).tobytes(order="C")


def data_bytes(npy):
    """The data bytes of a .npy file (what a pin hashes: np.load copies a structured array field by
    field, so its memory does not hold the file's padding bytes)."""
    if npy[6] == 1:  # version 1.0: a 2-byte header length; 2.0 and 3.0: 4 bytes
        return npy[10 + struct.unpack("<H", npy[8:10])[0]:]
    return npy[12 + struct.unpack("<I", npy[8:12])[0]:]


def twin(R, a):
    """An array (or a blob's bytes) with a's data bytes that np.load returns as something else."""
    dt = a.dtype
    kinds = ["blob"]
    if any(leaf.str[0] in "<>" for leaf in leaves(dt)):
        kinds.append("swap")
    if sum(1 for d in a.shape if d > 1) >= 2 and a.size:
        kinds.append("order")
    k = R.choice(kinds)
    b = file_bytes(a)
    if k == "blob":
        return b
    if k == "swap":
        return np.frombuffer(b, dt.newbyteorder("S")).reshape(a.shape, order="F" if fortran(a) else "C")
    return np.frombuffer(b, dt).reshape(a.shape, order="C" if fortran(a) else "F")


def npz_bytes(R, members):
    """members: [(key, array or bytes)], as np.savez (stored) or np.savez_compressed writes them."""
    method = R.choice([zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED])
    return zip_bytes([(key + ".npy", v if isinstance(v, bytes) else npy_bytes(v)) for key, v in members], method)


# ---- policies --------------------------------------------------------------------------------------

def leaves(dt):
    if dt.names is not None:
        for n in dt.names:
            yield from leaves(dt.fields[n][0])
    elif dt.subdtype is not None:
        yield from leaves(dt.subdtype[0])
    else:
        yield dt


def type_desc(dt, R, exact):
    """The policy's words for dtype dt: a dtype.str, a name (not exact), a field list or a layout
    object, a subarray object."""
    if dt.names is not None:
        return layout_desc(dt, R, exact)
    if dt.subdtype is not None:
        return {"base": type_desc(dt.subdtype[0], R, exact), "shape": list(dt.subdtype[1])}
    names = NAMES.get((dt.kind, dt.itemsize))
    if dt.kind in "Mm":
        names = ["datetime64" if dt.kind == "M" else "timedelta64"]
        names.append(names[0] + "[%s]" % np.datetime_data(dt)[0])
    elif dt.kind in "US":
        names = ["str" if dt.kind == "U" else "bytes"]
    elif dt.kind == "V":
        names = names or ["void"]
    if not exact and names and R.random() < 0.4:
        return R.choice(names)
    return dt.str


def layout_desc(dt, R, exact):
    fields, offsets, titles = [], [], []
    run = 0
    packed = True
    for n in dt.names:
        f = dt.fields[n]
        fdt, off = f[0], f[1]
        title = f[2] if len(f) > 2 else None
        if fdt.subdtype is not None:
            fields.append([n, type_desc(fdt.subdtype[0], R, exact), list(fdt.subdtype[1])])
        else:
            fields.append([n, type_desc(fdt, R, exact)])
        offsets.append(off)
        titles.append(title)
        packed = packed and off == run and title is None
        run = off + fdt.itemsize
    packed = packed and dt.itemsize == run
    if packed and R.random() < 0.8:
        return fields
    obj = {"fields": fields}
    if any(o != r for o, r in zip(offsets, [sum(dt.fields[m][0].itemsize for m in dt.names[:i])
                                            for i in range(len(dt.names))])) or R.random() < 0.3:
        obj["offsets"] = offsets
    if dt.itemsize != run or R.random() < 0.3:
        obj["itemsize"] = dt.itemsize
    if any(t is not None for t in titles):
        obj["titles"] = titles
    return obj


def shape_desc(R, shape, dims):
    out = []
    for d in shape:
        r = R.random()
        if r < 0.55:
            out.append(d)
        elif r < 0.7:
            out.append("*")
        else:
            name = R.choice(["N", "M"])
            dims.add(name)
            out.append(name)
    if shape and R.random() < 0.2:
        i = R.randrange(len(out))
        j = R.randint(i, len(out))
        out[i:j] = ["..."]
    elif R.random() < 0.1:
        out.insert(R.randint(0, len(out)), "...")
    return out


def spec_from(R, ref, dims, pin_p=0.25):
    """A member's spec taken from array ref (or from its bytes, a blob's)."""
    s = {}
    if isinstance(ref, bytes):
        if R.random() < 0.5:
            s["kind"] = "blob"
            if R.random() < 0.5:
                s["sha256"] = hashlib.sha256(ref).hexdigest()
        if R.random() < 0.2:
            s["max_bytes"] = max(0, len(ref) + R.choice([-1, 0, 5]))
        return s
    if R.random() < pin_p:
        s["dtype"] = [type_desc(ref.dtype, R, True)]
        s["shape"] = list(ref.shape)
        s["fortran_order"] = fortran(ref) if R.random() < 0.8 else not fortran(ref)
        s["sha256"] = hashlib.sha256(file_bytes(ref)).hexdigest()
    else:
        if R.random() < 0.7:
            s["dtype"] = [type_desc(ref.dtype, R, False)]
            if R.random() < 0.3:
                s["dtype"].append(type_desc(random_dtype(R), R, False))
            if R.random() < 0.5:
                R.shuffle(s["dtype"])
            if any(isinstance(e, list) and not e for e in s["dtype"]):
                del s["dtype"]
        if R.random() < 0.6:
            s["shape"] = shape_desc(R, ref.shape, dims)
        if R.random() < 0.35:
            s["fortran_order"] = R.random() < 0.3
    if R.random() < 0.3:
        s["byte_order"] = R.choice(["little", "big", "any"])
    if R.random() < 0.5:
        s["finite"] = R.random() < 0.9
    if R.random() < 0.3:
        s["range"] = R.choice(BOUNDS)
    if R.random() < 0.08:
        s["elements"] = [ref.size, ref.size + R.choice([0, 3])] if R.random() < 0.5 else ref.size + 1
    if R.random() < 0.08:
        s["max_bytes"] = max(0, ref.nbytes + R.choice([-1, 0, 8]))
    if R.random() < 0.1:
        s["kind"] = "array"
    return s


def random_policy(R, fmt, members):
    """A policy for an archive like members ([(key, array or bytes)]) or a .npy (members: one)."""
    dims = set()
    pol = {}
    if fmt == "npy":
        ref = members[0][1] if R.random() < 0.75 else random_array(R)
        pol["array"] = spec_from(R, ref, dims)
        if R.random() < 0.1:
            pol["format"] = R.choice(["npy", "npz", "any"])
    else:
        specs = {}
        for key, v in members:
            if R.random() < 0.85:
                ref = v if R.random() < 0.75 else (random_array(R) if R.random() < 0.8 else
                                                    file_bytes(random_array(R)))
                specs[key] = spec_from(R, ref, dims)
                if R.random() < 0.1:
                    specs[key]["optional"] = True
        if R.random() < 0.25:
            specs[R.choice(["*", "?", "[ab]*", "w*"])] = spec_from(R, random_array(R), dims, pin_p=0)
        if R.random() < 0.1:
            specs["zz"] = {"optional": R.random() < 0.5}
        pol["members"] = specs
        if R.random() < 0.4:
            pol["allow_other_members"] = R.random() < 0.5
        if R.random() < 0.1:
            pol["max_members"] = R.randint(1, 3)
        if R.random() < 0.1:
            pol["format"] = R.choice(["npz", "npy"])
    if R.random() < 0.3:
        pol["allow_blobs"] = R.random() < 0.5
    if dims and R.random() < 0.6:
        pol["dims"] = {d: R.choice([[0, 3], [1, None], 4, [2, 7]]) for d in sorted(dims)}
    return pol


# ---- NumPy's reading of a policy ------------------------------------------------------------------

def entry_admits(e, dt):
    """One entry of a dtype list (or a field's type) against NumPy's dtype dt."""
    if isinstance(e, str):
        if dt.names is not None or dt.subdtype is not None:
            return False
        if e[0] in "<>|":
            return dt.str == e
        if "[" in e:
            kind = "M" if e.startswith("datetime64") else "m"
            return dt.kind == kind and np.datetime_data(dt) == (e[e.index("[") + 1:-1], 1)
        kind, size = CLASSES[e]
        return dt.kind == kind and (size == 0 or dt.itemsize == size)
    if isinstance(e, list):
        return layout_admits(e, None, None, None, dt)
    if "fields" in e:
        return layout_admits(e["fields"], e.get("offsets"), e.get("itemsize"), e.get("titles"), dt)
    return dt.subdtype is not None and dt.subdtype[1] == tuple(e["shape"]) and entry_admits(e["base"], dt.subdtype[0])


def layout_admits(fields, offsets, itemsize, titles, dt):
    if dt.names is None or len(dt.names) != len(fields):
        return False
    run = end = 0
    for i, f in enumerate(fields):
        name = dt.names[i]
        if name != f[0]:
            return False
        info = dt.fields[name]
        fdt, off = info[0], info[1]
        if (info[2] if len(info) > 2 else None) != (titles[i] if titles else None):
            return False
        if off != (offsets[i] if offsets is not None else run):
            return False
        if len(f) == 3:
            if fdt.subdtype is None or fdt.subdtype[1] != tuple(f[2]) or not entry_admits(f[1], fdt.subdtype[0]):
                return False
        elif fdt.subdtype is not None or not entry_admits(f[1], fdt):
            return False
        run = off + fdt.itemsize
        end = max(end, run)
    return dt.itemsize == (itemsize if itemsize is not None else end if offsets is not None else run)


def is_array_spec(s):
    keys = {"dtype", "shape", "range", "fortran_order", "elements"}
    implied = bool(keys & set(s)) or s.get("finite") or s.get("byte_order") in ("little", "big") or "sha256" in s
    return s.get("kind") == "array" or ("kind" not in s and implied)


def value_violations(s, a):
    """The rules the elements of array a break under spec s (finite, range), or check-type."""
    out = set()
    fin, rng = s.get("finite", False), s.get("range")
    if not fin and not rng:
        return out
    dt = a.dtype
    k = dt.kind
    bf16 = dt.names is None and dt.str == "|V2" and any(e == "bfloat16" for e in s.get("dtype", []))
    if dt.names is not None or k in "USO" or (k == "V" and not bf16) or (k == "f" and dt.itemsize not in (2, 4, 8)) \
            or (k == "c" and (rng or dt.itemsize not in (8, 16))) or (k in "Mm" and rng):
        return {"POLICY.check-type"}
    if k in "Mm":
        if fin and np.isnat(a).any():
            ok(not np.isfinite(a)[np.isnat(a)].any(), "np.isfinite agrees with np.isnat on NaT")
            out.add("POLICY.nan")
        return out
    if k in "fc" or bf16:
        parts = [bf16_values(a)] if bf16 else [a.real, a.imag] if k == "c" else [a]
        for p in parts:
            if fin and np.isnan(p).any():
                out.add("POLICY.nan")
            if fin and np.isinf(p).any():
                out.add("POLICY.inf")
        if rng:
            x = parts[0].astype(np.float64)
            lo, hi = rng
            inside = np.ones(x.shape, bool)
            if lo is not None:
                inside &= x >= lo
            if hi is not None:
                inside &= x <= hi
            if not inside.all():
                out.add("POLICY.range")
        return out
    if rng:  # integers, bool (as NumPy reads it: 0 or 1)
        vals = a.astype(np.int64).ravel().tolist() if k == "b" else a.ravel().tolist()
        lo, hi = rng
        if any((lo is not None and v < lo) or (hi is not None and v > hi) for v in vals):
            out.add("POLICY.range")
    return out


def shape_violation(pattern, shape, pol, bound):
    """The first rule the shape breaks (in dimension order, as names are bound), or None."""
    rest = pattern.index("...") if "..." in pattern else None
    fixed = len(pattern) - (rest is not None)
    if (len(shape) != len(pattern)) if rest is None else len(shape) < fixed:
        return "POLICY.ndim"
    for i, p in enumerate(pattern):
        if i == rest:
            continue
        k = i if rest is None or i < rest else len(shape) - (len(pattern) - i)
        n = shape[k]
        if isinstance(p, int):
            if n != p:
                return "POLICY.shape"
        elif p != "*":
            if p in bound:
                if bound[p] != n:
                    return "POLICY.shape-var"
                continue
            r = pol.get("dims", {}).get(p, [None, None])
            lo, hi = (r, r) if isinstance(r, int) else r
            if (lo is not None and n < lo) or (hi is not None and n > hi):
                return "POLICY.dim-range"
            bound[p] = n
    return None


def member_violations(pol, s, v, raw, bound):
    """The rules member value v (an array, or a blob's bytes) breaks under spec s; raw: an array's
    data bytes in the file."""
    out = set()
    if isinstance(v, bytes):
        if pol.get("allow_blobs") is False or is_array_spec(s):
            out.add("POLICY.blob")
        if "max_bytes" in s and len(v) > s["max_bytes"]:
            out.add("POLICY.member-bytes")
        if "sha256" in s and hashlib.sha256(v).hexdigest() != s["sha256"]:
            out.add("POLICY.sha256")
        return out
    a = v
    if s.get("kind") == "blob":
        return {"POLICY.kind"}
    if "dtype" in s and not any(entry_admits(e, a.dtype) for e in s["dtype"]):
        out.add("POLICY.dtype")
    want = {"little": "<", "big": ">"}.get(s.get("byte_order"))
    if want and any(leaf.str[0] not in ("|", want) for leaf in leaves(a.dtype)):
        out.add("POLICY.byte-order")
    if "fortran_order" in s and not (a.flags.f_contiguous if s["fortran_order"] else a.flags.c_contiguous):
        out.add("POLICY.fortran-order")
    if out:  # decided at the header, in this order: later checks never run
        return out
    if "shape" in s:
        r = shape_violation(s["shape"], a.shape, pol, bound)
        if r:
            return {r}
    e = s.get("elements")
    if e is not None:
        lo, hi = (e, e) if isinstance(e, int) else e
        if (lo is not None and a.size < lo) or (hi is not None and a.size > hi):
            out.add("POLICY.elements")
    if "max_bytes" in s and a.nbytes > s["max_bytes"]:
        out.add("POLICY.member-bytes")
    values = value_violations(s, a)
    if out or "POLICY.check-type" in values:  # the header's last checks
        return out | (values & {"POLICY.check-type"})
    if values:  # an element: the data ends there
        return values
    if "sha256" in s and hashlib.sha256(raw).hexdigest() != s["sha256"]:
        out.add("POLICY.sha256")
    return out


def spec_for(pol, key):
    specs = pol.get("members", {})
    if key in specs and not any(c in key for c in "*?["):
        return specs[key]
    for k, s in specs.items():
        if any(c in k for c in "*?[") and fnmatch.fnmatchcase(key, k):
            return s
    return None


def expected(pol, fmt, loaded):
    """NumPy's reading: None when the file satisfies the policy, else (member index or -1, the
    set of rules the first clause it breaks may be reported by)."""
    if pol.get("format") in ("npy", "npz") and pol["format"] != fmt:
        return (-1, {"POLICY.format"})
    required = [k for k, s in pol.get("members", {}).items() if not any(c in k for c in "*?[") and not s.get("optional")]
    if fmt == "npy":
        if required:
            return (-1, {"POLICY.required"})
        bad = member_violations(pol, pol.get("array") or {}, loaded[0][1], loaded[0][2], {})
        return (0, bad) if bad else None
    bound = {}
    for i, (key, v, raw) in enumerate(loaded):
        if pol.get("max_members") and i >= pol["max_members"]:
            return (i, {"POLICY.max-members"})
        s = spec_for(pol, key)
        if s is None:
            if pol.get("allow_other_members") is False:
                return (i, {"POLICY.members"})
            s = {}
        bad = member_violations(pol, s, v, raw, bound)
        if bad:
            return (i, bad)
    missing = [k for k in required if k not in [m[0] for m in loaded]]
    return (-1, {"POLICY.required"}) if missing else None


def np_load(data):
    """The format and [(key, what np.load returns, the array's data bytes in the file)]."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = np.load(io.BytesIO(data), allow_pickle=False)
        if isinstance(r, np.ndarray):
            return "npy", [(None, r, data_bytes(data))]
        with r, zipfile.ZipFile(io.BytesIO(data)) as z:
            out = []
            for k in r.files:
                v = r[k]
                out.append((k, v, None if isinstance(v, bytes) else data_bytes(z.read(k + ".npy"))))
            return "npz", out


# ---- the runs ---------------------------------------------------------------------------------------

def group(R):
    """A policy and four files: the archive it was drawn from, one with a twin or new values in a
    member, one of the same keys with other arrays, and the first again as .npy or .npz."""
    fmt = "npy" if R.random() < 0.3 else "npz"
    keys = ["a", "b", "w", "x1"][:R.randint(1, 3)] if fmt == "npz" else [None]
    members = [(k, random_array(R)) for k in keys]
    pol = random_policy(R, fmt, members)
    files = []

    def add(ms):
        files.append(npy_bytes(ms[0][1]) if fmt == "npy" and not isinstance(ms[0][1], bytes) else npz_bytes(R, ms))

    add(members)
    i = R.randrange(len(members))
    k, a = members[i]
    other = twin(R, a) if R.random() < 0.6 else random_array(R, a.dtype, a.shape)
    if fmt == "npy" and isinstance(other, bytes):
        other = random_array(R, a.dtype, a.shape)
    add(members[:i] + [(k, other)] + members[i + 1:])
    add([(k, random_array(R)) for k, _ in members])
    add([(k, random_array(R, a.dtype, a.shape, "F" if R.random() < 0.5 else "C")) for k, a in members])
    return pol, files


def run_group(binary, tmp, n, pol, files, seen):
    pp = os.path.join(tmp, "p%d.json" % n)
    with open(pp, "w") as f:
        json.dump(pol, f)
    paths = []
    for j, data in enumerate(files):
        paths.append(os.path.join(tmp, "f%d_%d.%s" % (n, j, "npz" if data[:2] == b"PK" else "npy")))
        with open(paths[-1], "wb") as f:
            f.write(data)
    r = subprocess.run([binary, "check", "--jsonl", "--policy", pp] + paths, capture_output=True, timeout=120)
    if r.returncode == 2:
        ok(False, "group %d: the policy does not compile: %s\n  %s" % (n, r.stderr.decode().strip(), json.dumps(pol)))
        return []
    outs = [json.loads(line) for line in r.stdout.decode().splitlines()]
    if not ok(len(outs) == len(files), "group %d: %d reports for %d files" % (n, len(outs), len(files))):
        return []
    for j, (data, out) in enumerate(zip(files, outs)):
        fmt, loaded = np_load(data)
        want = expected(pol, fmt, loaded)
        e = out.get("error") or {}
        what = "group %d file %d (%s)" % (n, j, paths[j])
        ctx = "policy %s; npzstream: %s; NumPy's reading: %s" % (json.dumps(pol), e or "ok", want or "satisfied")
        if want is None:
            ok(out["ok"], "%s: npzstream rejects a file whose np.load arrays satisfy the policy" % what, ctx)
            seen["accepted"] = seen.get("accepted", 0) + 1
            continue
        if not ok(not out["ok"], "%s: npzstream accepts a file that breaks the policy" % what, ctx):
            continue
        member, rules = want
        got_member = e.get("member_index", -1) if e.get("member") is not None or fmt == "npy" else -1
        ok(e.get("code") == "policy" and e.get("rule") in rules and (member == -1 or got_member == member),
           "%s: npzstream's rejection is not the clause the file breaks" % what, ctx)
        seen[e.get("rule")] = seen.get(e.get("rule"), 0) + 1
    return paths


GROUPS = 240
RULES = ("accepted", "POLICY.dtype", "POLICY.byte-order", "POLICY.fortran-order", "POLICY.check-type", "POLICY.nan",
         "POLICY.inf", "POLICY.range", "POLICY.sha256", "POLICY.blob", "POLICY.kind", "POLICY.shape", "POLICY.ndim",
         "POLICY.members")


def test_oracle(binary, tmp, quick, seed):
    """NumPy 1.24: 240 groups (--quick: 60), and every clause the oracle is about was met (accepted
    files, and a rejection by each rule); NumPy 2 (.venv-pkg-np2): 80 groups of the next seed."""
    seed = int(seed) if seed is not None else 39
    groups = GROUPS // 4 if quick else GROUPS
    if NUMPY2:
        seed, groups = seed + 1, max(groups // 3, 10)
    R = random.Random(seed)
    seen = {}
    every = []
    for n in range(groups):
        pol, files = group(R)
        every += run_group(binary, tmp, n, pol, files, seen)
    # without a policy every file is accepted (np.save wrote them all)
    r = subprocess.run([binary, "check", "--jsonl"] + every, capture_output=True, timeout=300)
    outs = [json.loads(line) for line in r.stdout.decode().splitlines()]
    bad = [o["file"] for o in outs if not o["ok"]]
    ok(len(outs) == len(every) and not bad, "without a policy: %d of %d files rejected: %s" % (len(bad), len(every), bad[:3]))
    print("policy-oracle: NumPy %s, seed %d, %d groups: %s" % (np.__version__, seed, groups,
                                                             ", ".join("%s %d" % kv for kv in sorted(seen.items()))))
    assert len(every) >= 4 * groups
    if not NUMPY2 and not quick:
        for rule in RULES:
            ok(seen.get(rule, 0) > 0, "the oracle met no case of %s" % rule)
