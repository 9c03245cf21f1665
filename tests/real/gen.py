#!/usr/bin/python3
"""Write fresh real-world .npy/.npz test files with NumPy into OUTDIR.

usage: /usr/bin/python3 tests/real/gen.py OUTDIR [--quick]

Every file is written by NumPy itself (np.save, np.savez, np.savez_compressed,
np.lib.format.write_array), by Python's zipfile, or by Info-ZIP `zip`; nothing is
hand-patched.  Besides the files, OUTDIR/manifest.json lists one case per file:

  {"file": "npy/f4.npy",          path relative to OUTDIR
   "args": [],                    extra CLI options for this case
   "load": {},                    extra np.load() keyword arguments for NumPy's truth
   "expect_code": null,           both reject: the error code the CLI must give
   "strict_code": null,           NumPy accepts, npzstream rejects ON PURPOSE with this code
   "big": false,                  check the CLI's peak RSS
   "note": "..."}

Needs only the stdlib and numpy (Debian's /usr/bin/python3).  Runs in a few seconds.
"""
import io
import json
import os
import shutil
import subprocess
import sys
import warnings
import zipfile

import numpy as np
from numpy.lib import format as npf

PY = "/usr/bin/python3"


class Gen:
    def __init__(self, out, quick=False):
        self.out = out
        self.quick = quick
        self.cases = []

    def path(self, rel):
        p = os.path.join(self.out, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def add(self, rel, note="", args=None, load=None, expect_code=None, strict_code=None, big=False):
        assert os.path.exists(os.path.join(self.out, rel)), rel
        self.cases.append({"file": rel, "args": args or [], "load": load or {},
                           "expect_code": expect_code, "strict_code": strict_code,
                           "big": big, "note": note})

    # ---- helpers ---------------------------------------------------------
    def save(self, rel, arr, note="", version=None, **kw):
        p = self.path(rel)
        if version is None:
            np.save(p, arr, allow_pickle=True)
        else:
            with open(p, "wb") as f:
                npf.write_array(f, arr, version=version, allow_pickle=True)
        self.add(rel, note or repr(arr.dtype), **kw)
        return p


def filled(dtype, shape, seed=0):
    """An array of `dtype` whose bytes are deterministic pseudo-random (no NaN games
    matter: we compare bytes, not values)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64)) if len(shape) else 1
    rng = np.random.default_rng(seed)
    raw = rng.integers(0, 256, size=n * dt.itemsize, dtype=np.uint8).tobytes()
    if dt.kind == "b":
        raw = bytes(b & 1 for b in raw)
    if dt.kind == "U":  # keep code points valid-ish (NumPy does not check, but stay tidy)
        u = np.frombuffer(raw, dtype="<u4") % 0x24F if raw else np.zeros(0, "<u4")
        raw = (u + 0x20).astype(dt.byteorder == ">" and ">u4" or "<u4").tobytes()
    a = np.frombuffer(raw, dtype=dt) if n and dt.itemsize else np.zeros(n, dt)
    return a.reshape(shape).copy()


def header_info(dt):
    b = io.BytesIO()
    np.save(b, np.zeros(1, dt))
    v = b.getvalue()
    ver = v[6]
    n = int.from_bytes(v[8:10] if ver == 1 else v[8:12], "little")
    start = 10 if ver == 1 else 12
    return ver, len(v[start:start + n].decode("utf-8" if ver == 3 else "latin-1"))


def header_sized_dtype(fields, want, version, lo=None, hi=None):
    """A structured dtype whose NumPy-written header has exactly `want` characters (or a
    character count in [lo, hi]) and the given format version.  Bisects on the field count."""
    a, b = 1, 4000
    while a < b:  # smallest field count whose header reaches the target
        m = (a + b) // 2
        if header_info(np.dtype(fields(m)))[1] < (want if want else lo):
            a = m + 1
        else:
            b = m
    for n in range(a, a + 50):
        ver, chars = header_info(np.dtype(fields(n)))
        if ver == version and ((want and chars == want) or (not want and lo <= chars <= hi)):
            return np.dtype(fields(n))
    raise RuntimeError("no header of the wanted size (%s, %s..%s)" % (want, lo, hi))


# ---------------------------------------------------------------------------
def gen_npy(g):
    # every simple dtype kind, little and big endian
    simple = ["|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8",
              "<f2", "<f4", "<f8", "<f16", "<c8", "<c16", "<c32"]
    for d in simple:
        g.save("npy/%s.npy" % d.strip("<|"), filled(d, (3, 5), seed=len(d)))
        if d[0] == "<":
            bd = ">" + d[1:]
            g.save("npy/be_%s.npy" % d[1:], filled(bd, (4, 2)), note="big-endian " + bd)
    # strings / void, including zero itemsize
    for d in ["|S1", "|S7", "|S300", "<U1", "<U9", ">U3", "|V1", "|V16"]:
        g.save("npy/%s.npy" % d.strip("<>|").replace(">", "be"), filled(d, (6,)))
    g.save("npy/be_U3.npy", filled(">U3", (2, 2)), note=">U3")
    g.save("npy/S0.npy", np.ndarray((3,), dtype=np.dtype("S0"), buffer=b""), note="|S0 zero itemsize")
    g.save("npy/U0.npy", np.ndarray((3,), dtype=np.dtype("U0"), buffer=b""), note="<U0 zero itemsize")
    g.save("npy/V0.npy", np.zeros(4, "V0"), note="|V0 zero itemsize")
    g.save("npy/struct_empty.npy", np.zeros(2, dtype=[]), note="descr [] (V0)")
    # datetimes / timedeltas: generic, units, multipliers
    for d in ["<M8", "<m8", "<M8[Y]", "<M8[M]", "<M8[W]", "<M8[D]", "<M8[h]", "<M8[m]", "<M8[s]",
              "<M8[ms]", "<M8[us]", "<M8[ns]", "<M8[ps]", "<M8[fs]", "<M8[as]", "<m8[3s]",
              "<M8[25us]", "<m8[7D]", ">M8[ns]", ">m8[2h]"]:
        name = d.replace("<", "").replace(">", "be_").replace("[", "_").replace("]", "")
        g.save("npy/%s.npy" % name, filled(d, (5,)))
    # layouts
    g.save("npy/fortran_f8.npy", np.asfortranarray(filled("<f8", (7, 3))), note="fortran_order True")
    g.save("npy/fortran_3d_be_i4.npy", np.asfortranarray(filled(">i4", (2, 3, 4))), note="fortran >i4 3-d")
    g.save("npy/fortran_1d.npy", np.asfortranarray(filled("<f4", (5,))), note="1-d (C and F): numpy writes False")
    g.save("npy/scalar_f8.npy", np.array(3.5), note="0-d")
    g.save("npy/scalar_S5.npy", np.array(b"hello"), note="0-d S5")
    g.save("npy/scalar_struct.npy", np.zeros((), dtype=[("a", "<i4"), ("b", "<f8")]), note="0-d struct")
    g.save("npy/empty_0.npy", np.zeros((0,), "<f8"), note="shape (0,)")
    g.save("npy/empty_3x0.npy", np.zeros((3, 0), "<i2"), note="shape (3,0)")
    g.save("npy/empty_0x5_fortran.npy", np.asfortranarray(np.zeros((0, 5), "<i8")), note="shape (0,5) F")
    g.save("npy/ndim32.npy", np.zeros((1,) * 31 + (2,), "<u1"), note="32 dims (1.x max)")
    g.save("npy/wide.npy", filled("<u4", (1, 100001)), note="growth-axis digits")
    # structured
    g.save("npy/struct_simple.npy", filled([("a", "<i4"), ("b", "<f4"), ("c", "<i8")], (3,)))
    g.save("npy/struct_nested.npy",
           filled([("x", [("y", "<i2"), ("z", [("w", ">f8"), ("v", "|S3")])]), ("t", "|b1")], (4,)),
           note="nested struct")
    g.save("npy/struct_subarray.npy",
           filled([("m", "<f4", (2, 3)), ("n", [("k", "<i2", (4,))], (2,)), ("s", "|S2")], (3,)),
           note="subarray fields")
    g.save("npy/struct_align.npy",
           np.zeros(5, dtype=np.dtype([("a", "u1"), ("b", "<i4"), ("c", "u1"), ("d", "<f8")], align=True)),
           note="align=True padding")
    g.save("npy/struct_align_nested.npy",
           np.zeros(2, dtype=np.dtype([("a", "u1"),
                                       ("s", np.dtype([("p", "u1"), ("q", "<i8")], align=True))],
                                      align=True)),
           note="align=True nested padding")
    g.save("npy/struct_offsets.npy",
           np.zeros(3, dtype=np.dtype({"names": ["a", "b"], "formats": ["<i2", "<i2"],
                                       "offsets": [0, 6], "itemsize": 12})),
           note="explicit offsets + itemsize (padding fields)")
    g.save("npy/struct_titles.npy",
           filled(np.dtype({"names": ["a", "b"], "formats": ["u1", "<f8"], "titles": ["Title A", None]}), (3,)),
           note="titles")
    g.save("npy/struct_latin1_name.npy", filled([("é", "<i4"), ("b", "u1")], (2,)),
           note="latin-1 field name (v1.0, raw byte)")
    g.save("npy/struct_utf8_name_v3.npy", filled([("数据", "<i4"), ("ключ", "<f8")], (2,)),
           note="non-latin-1 field names -> numpy writes v3.0")
    g.save("npy/struct_quote_name.npy", filled([("it's", "<i4"), ('say "hi"', "u1")], (2,)),
           note="quotes in field names")
    g.save("npy/struct_dt_field.npy", filled([("t", "<M8[ms]"), ("d", ">m8[5s]")], (2,)),
           note="datetime fields")
    # versions
    g.save("npy/v2_small.npy", filled("<f8", (3, 2)), version=(2, 0), note="forced v2.0")
    g.save("npy/v3_small.npy", filled("<i4", (4,)), version=(3, 0), note="forced v3.0")
    g.save("npy/v2_struct_be.npy", filled([("a", ">i2"), ("b", "|S2")], (3,)), version=(2, 0), note="forced v2.0 struct")
    g.save("npy/v3_fortran.npy", np.asfortranarray(filled(">c8", (2, 3))), version=(3, 0), note="forced v3.0 F")
    # long header: numpy itself writes v2.0 when the header exceeds 65535 bytes
    big_dt = np.dtype([("f%05d" % i, "<i1") for i in range(7000)])
    p = g.path("npy/v2_long_header.npy")
    np.save(p, np.zeros(2, big_dt))
    with open(p, "rb") as f:
        assert npf.read_magic(f) == (2, 0)
    g.add("npy/v2_long_header.npy", "v2.0 long header, default limits: NumPy and npzstream reject",
          expect_code="header_too_large")
    g.add("npy/v2_long_header.npy", "v2.0 long header, limit raised",
          args=["--max-header-size", "200000"], load={"max_header_size": 200000})
    # NumPy-written headers right at the default max_header_size (10000 decoded characters):
    # data is 64-aligned, so header lengths are 64k-10: 9974 (accepted) and 10038 (rejected)
    for want, code in ((9974, None), (10038, "header_too_large")):
        dt = header_sized_dtype(lambda n: [("f%04d" % i, "u1") for i in range(n)], want, 1)
        g.save("npy/header_%d.npy" % want, np.zeros(2, dt), note="v1 header of %d chars" % want,
               expect_code=code)
    # v3 (UTF-8) headers: the limit counts characters, not bytes
    dt = header_sized_dtype(lambda n: [("数据%04d" % i, "u1") for i in range(n)], None, 3, lo=5000, hi=9974)
    g.save("npy/header_v3_manybytes.npy", np.zeros(2, dt), expect_code=None,
           note="v3 header, < 10000 characters but > 10000 UTF-8 bytes: NumPy accepts")
    dt = header_sized_dtype(lambda n: [("数据%04d" % i, "u1") for i in range(n)], None, 3, lo=10001, hi=11000)
    g.save("npy/header_v3_toolong.npy", np.zeros(2, dt), expect_code="header_too_large",
           note="v3 header > 10000 characters: NumPy rejects")
    # object arrays -> pickle
    g.save("npy/object.npy", np.array([1, "a", None], dtype=object), note="object", expect_code="pickle")
    g.save("npy/object_2d.npy", np.empty((2, 2), dtype=object), note="object 2-d", expect_code="pickle")
    g.save("npy/struct_object_field.npy", np.zeros(2, dtype=[("a", "<i4"), ("o", "O")]),
           note="object inside a struct", expect_code="pickle")
    # np.save twice into one file: NumPy (np.load on a path) reads the first array and ignores the rest
    p = g.path("npy/two_arrays_concat.npy")
    with open(p, "wb") as f:
        np.save(f, filled("<i4", (3,)))
        np.save(f, filled("<f8", (2,)))
    g.add("npy/two_arrays_concat.npy", "two np.save in one file: NumPy loads the first, ignores the rest",
          strict_code="trailing_data")


# ---------------------------------------------------------------------------
def arrays_basic():
    return {"w": filled("<f4", (4, 64)), "b": filled("<i8", (10,), 1),
            "s": np.array("bar"), "f": np.asfortranarray(filled(">f8", (3, 4), 2)),
            "t": filled([("a", "<i2"), ("b", "|S3")], (5,), 3)}


def savez_pipe(g, rel, compressed, script_arrays, note):
    """np.savez to a real pipe (stdout of a child): data descriptors."""
    fn = "savez_compressed" if compressed else "savez"
    code = ("import sys, numpy as np\n" + script_arrays +
            "\nnp.%s(sys.stdout.buffer, **A)\nsys.stdout.buffer.flush()\n" % fn)
    r = subprocess.run([PY, "-c", code], stdout=subprocess.PIPE, check=True)
    with open(g.path(rel), "wb") as f:
        f.write(r.stdout)
    g.add(rel, note)


def repack(g, src, rel, opts, note):
    """unzip a savez archive into a dir, repack with Info-ZIP zip."""
    d = os.path.join(g.out, "_tmp_unzip")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    with zipfile.ZipFile(src) as zf:
        zf.extractall(d)
    out = os.path.abspath(g.path(rel))
    if os.path.exists(out):
        os.unlink(out)
    subprocess.run(["zip", "-q"] + opts + ["-r", out, "."], cwd=d, check=True)
    shutil.rmtree(d)
    g.add(rel, note)


def gen_npz(g):
    A = arrays_basic()
    p = g.path("npz/savez.npz"); np.savez(p, **A); g.add("npz/savez.npz", "np.savez (stored, zip64 extras)")
    p = g.path("npz/savez_compressed.npz"); np.savez_compressed(p, **A)
    g.add("npz/savez_compressed.npz", "np.savez_compressed")
    p = g.path("npz/savez_positional.npz"); np.savez(p, filled("<u2", (3,)), np.array(1.0), filled("|b1", (2, 2)))
    g.add("npz/savez_positional.npz", "arr_0.. names")
    p = g.path("npz/savez_empty.npz"); np.savez(p); g.add("npz/savez_empty.npz", "np.savez() no members")
    p = g.path("npz/savez_compressed_empty.npz"); np.savez_compressed(p)
    g.add("npz/savez_compressed_empty.npz", "np.savez_compressed() no members")
    # zero-size members
    Z = {"e0": np.zeros((0,), "<f8"), "e30": np.zeros((3, 0), "<i4"), "v0": np.zeros(4, "V0"),
         "s0": np.ndarray((2,), dtype=np.dtype("S0"), buffer=b""), "one": np.array([7], "<i2"),
         "sc": np.array(2.5)}
    np.savez_compressed(g.path("npz/compressed_zero_size.npz"), **Z)
    g.add("npz/compressed_zero_size.npz", "deflated zero-size arrays")
    np.savez(g.path("npz/stored_zero_size.npz"), **Z)
    g.add("npz/stored_zero_size.npz", "stored zero-size arrays")
    # many dtypes in one archive
    M = {"k%02d" % i: filled(d, (3,), i) for i, d in enumerate(
        ["|b1", "<i2", ">u8", "<f2", "<f16", ">c32", "|S4", ">U2", "|V3", "<M8[D]", "<m8[2ms]"])}
    np.savez(g.path("npz/savez_dtypes.npz"), **M); g.add("npz/savez_dtypes.npz", "many dtypes stored")
    np.savez_compressed(g.path("npz/savez_compressed_dtypes.npz"), **M)
    g.add("npz/savez_compressed_dtypes.npz", "many dtypes deflated")
    # v3 header member (non-latin-1 field names) and structured padding in npz
    np.savez_compressed(g.path("npz/struct_members.npz"),
                        v3=filled([("数据", "<i4")], (3,)),
                        al=np.zeros(3, np.dtype([("a", "u1"), ("b", "<i8")], align=True)),
                        nest=filled([("x", [("y", "<i2")], (2,))], (2,)))
    g.add("npz/struct_members.npz", "v3 member, aligned struct, nested subarray")
    # UTF-8 member names
    U = {"héllo": filled("<f4", (3,)), "数据": filled("<i4", (2, 2)), "emoji_😀": np.array(1)}
    np.savez(g.path("npz/utf8_names.npz"), **U); g.add("npz/utf8_names.npz", "UTF-8 keys stored")
    np.savez_compressed(g.path("npz/utf8_names_compressed.npz"), **U)
    g.add("npz/utf8_names_compressed.npz", "UTF-8 keys deflated")
    # 2000 members
    n = 2000
    many = {"a%04d" % i: np.full((i % 5,), i, "<i4") for i in range(n)}
    np.savez(g.path("npz/members_2000.npz"), **many)
    g.add("npz/members_2000.npz", "2000 members stored")
    g.add("npz/members_2000.npz", "2000 members, --max-members 100 (CLI limit, no NumPy equivalent)",
          args=["--max-members", "100"], strict_code="limit")
    g.add("npz/members_2000.npz", "2000 members, --max-members 2000 (exactly at the limit)",
          args=["--max-members", "2000"])
    np.savez_compressed(g.path("npz/members_2000_compressed.npz"), **many)
    g.add("npz/members_2000_compressed.npz", "2000 members deflated")
    # pipes -> data descriptors
    arr_script = ("A = {'w': np.arange(256, dtype='<f4').reshape(4, 64), 'b': np.arange(10),"
                  " 's': np.array('bar'), 'e': np.zeros((3, 0)), 'f': np.asfortranarray(np.ones((3, 4), '>f8')),"
                  " 'héllo': np.array([1, 2], 'u1')}")
    savez_pipe(g, "npz/savez_pipe.npz", False, arr_script, "np.savez to a pipe: stored + data descriptors")
    savez_pipe(g, "npz/savez_compressed_pipe.npz", True, arr_script, "np.savez_compressed to a pipe")
    savez_pipe(g, "npz/savez_pipe_empty.npz", False, "A = {}", "np.savez() to a pipe, no members")
    savez_pipe(g, "npz/savez_pipe_zero.npz", False, "A = {'z': np.zeros(0, 'u1'), 'v': np.zeros(2, 'V0')}",
               "pipe, zero-size stored members")
    savez_pipe(g, "npz/savez_compressed_pipe_zero.npz", True,
               "A = {'z': np.zeros(0, 'u1'), 'v': np.zeros(2, 'V0')}", "pipe, zero-size deflated members")
    # blobs added with zipfile
    p = g.path("npz/with_blobs.npz")
    np.savez(p, **{"w": filled("<f4", (4, 4)), "b": filled("<i8", (3,))})
    buf = io.BytesIO(); np.save(buf, filled("<u2", (5,)))
    with zipfile.ZipFile(p, "a") as zf:
        zf.writestr("notes.txt", "hello world\n")
        zf.writestr("raw_npy", buf.getvalue())                    # npy content, no .npy suffix
        zf.writestr("empty.bin", b"")
        zf.writestr(zipfile.ZipInfo("deflated.txt"), b"lorem ipsum " * 50, compress_type=zipfile.ZIP_DEFLATED)
    g.add("npz/with_blobs.npz", "savez + zipfile text blob, npy member without .npy, empty blob, deflated blob")
    p = g.path("npz/zipfile_only.npz")
    with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("a.npy", buf.getvalue())
        zf.writestr("readme", "text member only\n")
    g.add("npz/zipfile_only.npz", "zipfile.writestr (no zip64 extras), deflated")
    p = g.path("npz/zipfile_pipe_blob.npz")
    code = ("import sys, zipfile, io, numpy as np\nb = io.BytesIO(); np.save(b, np.arange(6, dtype='<i2'))\n"
            "with zipfile.ZipFile(sys.stdout.buffer, 'w') as zf:\n"
            "    with zf.open('x.npy', 'w') as f: f.write(b.getvalue())\n"
            "    with zf.open('note.txt', 'w') as f: f.write(b'blob written to a pipe')\n")
    r = subprocess.run([PY, "-c", code], stdout=subprocess.PIPE, check=True)
    open(p, "wb").write(r.stdout)
    g.add("npz/zipfile_pipe_blob.npz", "zipfile to a pipe (32-bit descriptors), npy + stored blob with a "
          "data descriptor: its end cannot be found without the central directory", strict_code="zip_unsupported")
    # .npy-named member that is not npy content: NumPy returns the raw bytes
    p = g.path("npz/npy_name_not_npy.npz")
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("a.npy", buf.getvalue())
        zf.writestr("fake.npy", b"this is not an npy file")
    g.add("npz/npy_name_not_npy.npz", "member fake.npy whose content is not npy (NumPy: raw bytes)")
    # other zipfile features NumPy reads: archive comment, compression levels, bzip2/lzma,
    # a directory entry, members in a sub-folder
    p = g.path("npz/zip_comment.npz")
    np.savez(p, a=filled("<i4", (3,)))
    with zipfile.ZipFile(p, "a") as zf:
        zf.comment = b"archive comment written by zipfile"
    g.add("npz/zip_comment.npz", "savez + archive comment")
    for lvl in (1, 9):
        p = g.path("npz/deflate_level%d.npz" % lvl)
        with zipfile.ZipFile(p, "w", zipfile.ZIP_DEFLATED, compresslevel=lvl) as zf:
            zf.writestr("a.npy", buf.getvalue())
            zf.writestr("b.npy", buf.getvalue())
        g.add("npz/deflate_level%d.npz" % lvl, "zipfile deflate level %d" % lvl)
    for meth, nm in ((zipfile.ZIP_BZIP2, "bzip2"), (zipfile.ZIP_LZMA, "lzma")):
        p = g.path("npz/method_%s.npz" % nm)
        with zipfile.ZipFile(p, "w", meth) as zf:
            zf.writestr("a.npy", buf.getvalue())
        g.add("npz/method_%s.npz" % nm, "zipfile %s member: NumPy reads it, npzstream supports stored/deflate only" % nm,
              strict_code="zip_unsupported")
    p = g.path("npz/subdir_members.npz")
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("sub/a.npy", buf.getvalue())
        zf.writestr("sub/deeper/b.npy", buf.getvalue())
    g.add("npz/subdir_members.npz", "members in sub-folders (keys 'sub/a', 'sub/deeper/b')")
    # zipfile lets a writer add the same name twice (UserWarning); NumPy lists both, loads the last
    p = g.path("npz/duplicate_names.npz")
    with zipfile.ZipFile(p, "w") as zf:
        zf.writestr("a.npy", buf.getvalue())
        zf.writestr("a.npy", buf.getvalue())
    g.add("npz/duplicate_names.npz", "the same member name twice (zipfile allows it)", strict_code="duplicate_name")
    # np.lib.format.open_memmap writes the file itself
    mm = npf.open_memmap(g.path("npy/open_memmap.npy"), mode="w+", dtype=">i4", shape=(3, 7), fortran_order=True)
    mm[:] = np.arange(21).reshape(3, 7)
    mm.flush()
    del mm
    g.add("npy/open_memmap.npy", "np.lib.format.open_memmap (F order, >i4)")
    # object member inside an archive
    np.savez(g.path("npz/object_member.npz"), a=np.arange(3), o=np.array([None, 1], object))
    g.add("npz/object_member.npz", "object member", expect_code="pickle")
    # Info-ZIP repacks
    repack(g, g.path("npz/savez.npz"), "npz/infozip_deflate.npz", [], "unzip savez; zip -q -r")
    repack(g, g.path("npz/savez.npz"), "npz/infozip_stored.npz", ["-0"], "unzip savez; zip -0 -q -r")
    repack(g, g.path("npz/compressed_zero_size.npz"), "npz/infozip_zero.npz", [], "Info-ZIP, zero-size members")
    repack(g, g.path("npz/utf8_names.npz"), "npz/infozip_utf8_names.npz", [],
           "Info-ZIP, UTF-8 names WITHOUT the UTF-8 flag: zipfile decodes cp437, NumPy keys are mojibake")
    g.cases[-1]["strict_code"] = "bad_name"
    repack(g, g.path("npz/savez.npz"), "npz/infozip_zip64.npz", ["-fz"], "Info-ZIP -fz (forced Zip64)")
    repack(g, g.path("npz/savez.npz"), "npz/infozip_noextra.npz", ["-X", "-9"], "Info-ZIP -X -9 (no extra fields)")
    # Info-ZIP -r of a tree with a sub-folder: a directory entry 'sub/' (NumPy: an empty blob)
    d = os.path.join(g.out, "_tmp_tree")
    os.makedirs(os.path.join(d, "sub"), exist_ok=True)
    np.save(os.path.join(d, "top.npy"), filled("<i2", (4,)))
    np.save(os.path.join(d, "sub", "inner.npy"), filled("<f4", (2, 2)))
    out = os.path.abspath(g.path("npz/infozip_tree.npz"))
    subprocess.run(["zip", "-q", "-r", out, "top.npy", "sub"], cwd=d, check=True)
    shutil.rmtree(d)
    g.add("npz/infozip_tree.npz", "Info-ZIP -r with a sub-folder: directory entry 'sub/' (NumPy: empty blob)",
          strict_code="bad_name")
    # Info-ZIP reading a non-npy blob from stdin: deflated is self-delimiting, stored + descriptor is not
    r = subprocess.run(["zip", "-q", "-", "-"], input=b"plain text from stdin\n" * 20, stdout=subprocess.PIPE, check=True)
    open(g.path("npz/infozip_stdin_blob.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_stdin_blob.npz", "echo text | zip - - : deflated blob '-' with a data descriptor")
    # (`... | zip -0 - -` is refused by Info-ZIP: "zip -0 not supported for I/O on pipes"; with stdin
    # redirected from a regular file it works and writes stored + data descriptor)
    p = g.path("npz/_blob.txt")
    open(p, "wb").write(b"plain text from stdin\n" * 20)
    with open(p, "rb") as f:
        r = subprocess.run(["zip", "-q", "-0", "-", "-"], stdin=f, stdout=subprocess.PIPE, check=True)
    os.unlink(p)
    open(g.path("npz/infozip_stdin_blob_stored.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_stdin_blob_stored.npz", "zip -0 - - < text.txt | : stored blob with a data descriptor",
          strict_code="zip_unsupported")
    d = os.path.join(g.out, "_tmp_pipe")
    os.makedirs(d, exist_ok=True)
    np.save(os.path.join(d, "a.npy"), filled("<f8", (20, 20)))
    np.save(os.path.join(d, "b.npy"), filled(">i2", (7,)))
    r = subprocess.run(["zip", "-q", "-", "a.npy", "b.npy"], cwd=d, stdout=subprocess.PIPE, check=True)
    open(g.path("npz/infozip_pipe_out.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_pipe_out.npz", "zip -q - a.npy b.npy | (pipe)")
    r = subprocess.run(["zip", "-q", "-0", "-", "a.npy", "b.npy"], cwd=d, stdout=subprocess.PIPE, check=True)
    open(g.path("npz/infozip_pipe_out_stored.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_pipe_out_stored.npz", "zip -q -0 - a.npy b.npy | (pipe)")
    with open(os.path.join(d, "a.npy"), "rb") as f:
        npy_bytes = f.read()
    r = subprocess.run(["zip", "-q", "-", "-"], input=npy_bytes, stdout=subprocess.PIPE, check=True)
    open(g.path("npz/infozip_stdin.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_stdin.npz", "cat a.npy | zip -q - - | (member '-', deflated, data descriptor)")
    # Info-ZIP refuses -0 when stdin is a pipe; stdin redirected from the file works
    with open(os.path.join(d, "a.npy"), "rb") as f:
        r = subprocess.run(["zip", "-q", "-0", "-", "-"], stdin=f, stdout=subprocess.PIPE, check=True)
    open(g.path("npz/infozip_stdin_stored.npz"), "wb").write(r.stdout)
    g.add("npz/infozip_stdin_stored.npz", "zip -q -0 - - < a.npy | (stored npy content + data descriptor)")
    shutil.rmtree(d)


def gen_big(g):
    mb = 6 if g.quick else 22
    n = mb << 20
    rng = np.random.default_rng(42)
    # stored: random bytes; deflated: half-compressible bytes so the archive itself is > 20 MB
    big = rng.integers(0, 256, size=n, dtype=np.uint8)
    np.savez(g.path("big/stored_big.npz"), big=big.view("<f8"), tail=np.arange(5))
    g.add("big/stored_big.npz", "%d MB stored" % mb, big=True)
    # random bytes do not compress: the deflated archive is ~ as large as the data
    np.savez_compressed(g.path("big/deflated_big.npz"), big=big.reshape(-1, 1024), z=np.zeros(1 << 20))
    g.add("big/deflated_big.npz", "%d MB deflated (+ 8 MB of zeros, ratio ~1000)" % mb, big=True)
    g.add("big/deflated_big.npz", "--max-total-bytes 1000000 (CLI limit)", args=["--max-total-bytes", "1000000"],
          strict_code="limit", big=True)
    savez_pipe(g, "big/deflated_big_pipe.npz", True,
               "A = {'z': np.zeros(%d, 'u1'), 'r': np.random.default_rng(1).integers(0, 256, %d, 'u1')}"
               % (n, n // 4), "big deflated archive written to a pipe")
    g.cases[-1]["big"] = True
    np.save(g.path("big/big.npy"), big.reshape(1024, -1))
    g.add("big/big.npy", "%d MB .npy" % mb, big=True)


def generate(out, quick=False):
    os.makedirs(out, exist_ok=True)
    warnings.simplefilter("ignore")  # "Stored array in format 3.0 ..." etc.
    g = Gen(out, quick)
    gen_npy(g)
    gen_npz(g)
    gen_big(g)
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(g.cases, f, indent=1, ensure_ascii=False)
    return g.cases


if __name__ == "__main__":
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    if os.path.abspath(sys.argv[1]).startswith(os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))):
        sys.exit("gen.py: OUTDIR must not be inside the repository")
    cases = generate(sys.argv[1], quick="--quick" in sys.argv[2:])
    print("gen: %d cases, %d files in %s" % (len(cases), len({c["file"] for c in cases}), sys.argv[1]))
