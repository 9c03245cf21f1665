"""`npzstream vlen`: Zarr vlen-ndarray chunks (numcodecs VLenBytes framing), issue 8.

- real framing: chunks encoded by numcodecs (VLenBytes over the arrays' bytes, and
  VLenArray for 1-D patterns) when `import numcodecs` works (Debian: python3-numcodecs),
  else by an independent struct-based encoder (the script says which); every chunk must
  come back with the arrays' exact shapes, byte counts and CRC-32s;
- empty elements, empty chunks (count 0), every dtype name and '<f4'-style string;
- every rejection path with its code, offset and element (input, --dtype, --shape, limits);
- split invariance: the output is identical for the whole input, --feed 1, --feed 7, stdin;
- usage / I/O errors exit 2.
The C-level tests (tests/vlen/test_vlen_api.c) are a C suite of tests/run_all.py (vlen-c).
"""
import json
import os
import random
import struct
import subprocess
import sys
import zlib

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import ok  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from framing import decode, encoder, frame, frame_arrays, frame_struct  # noqa: E402

DTYPES = {  # name -> (numpy dtype, dtype.str)
    "bool": (np.bool_, "|b1"), "int8": (np.int8, "|i1"), "int16": (np.int16, "<i2"),
    "int32": (np.int32, "<i4"), "int64": (np.int64, "<i8"), "uint8": (np.uint8, "|u1"),
    "uint16": (np.uint16, "<u2"), "uint32": (np.uint32, "<u4"), "uint64": (np.uint64, "<u8"),
    "float16": (np.float16, "<f2"), "float32": (np.float32, "<f4"), "float64": (np.float64, "<f8"),
    "complex64": (np.complex64, "<c8"), "complex128": (np.complex128, "<c16"),
}


def random_array(rng, npdt, fixed, n):
    shape = (n,) + tuple(fixed)
    size = int(np.prod(shape)) if shape else 1
    if npdt == np.bool_:
        a = rng.integers(0, 2, size=size).astype(np.bool_)
    elif np.issubdtype(npdt, np.integer):
        info = np.iinfo(npdt)
        a = rng.integers(info.min, info.max, size=size, dtype=np.int64 if info.min < 0 else np.uint64,
                         endpoint=True).astype(npdt)
    elif np.issubdtype(npdt, np.complexfloating):
        a = (rng.standard_normal(size) + 1j * rng.standard_normal(size)).astype(npdt)
    else:
        a = rng.standard_normal(size).astype(npdt)
    return a.reshape(shape)


# ---- running the CLI -------------------------------------------------------------------------
class Runner:
    def __init__(self, binary, tmp):
        self.bin = binary
        self.tmp = tmp
        self.k = 0

    def write(self, data):
        self.k += 1
        p = os.path.join(self.tmp, "chunk%05d.bin" % self.k)
        with open(p, "wb") as f:
            f.write(data)
        return p

    def run(self, args, data=None, path=None, stdin=False):
        cmd = [self.bin, "vlen"] + list(args)
        inp = None
        if data is not None:
            if stdin:
                cmd.append("-")
                inp = data
            else:
                cmd.append(path or self.write(data))
        r = subprocess.run(cmd, input=inp, capture_output=True)
        return r.returncode, r.stdout.decode("utf-8", "replace"), r.stderr.decode("utf-8", "replace")

    def json(self, dtype, shape, data, extra=(), feeds=(None, 1, 7), stdin_too=True):
        """Run with --json under every feed (and from stdin); all outputs must be identical.
        Returns (exit code, parsed JSON or None)."""
        path = self.write(data)
        outs = []
        for feed in feeds:
            args = ["--json", "--dtype", dtype, "--shape", shape] + list(extra)
            if feed:
                args += ["--feed", str(feed)]
            outs.append(("feed %s" % feed,) + self.run(args, data, path=path)[:2])
        if stdin_too:
            outs.append(("stdin",) + self.run(["--json", "--dtype", dtype, "--shape", shape] + list(extra),
                                              data, stdin=True)[:2])
        first = outs[0]
        for o in outs[1:]:
            if (o[1], o[2]) != (first[1], first[2]):
                ok(False, "split invariance %s %s (%s vs %s)" % (dtype, shape, first[0], o[0]),
                   "%r / %r" % (first[1:], o[1:]))
                break
        else:
            ok(True, "split invariance %s %s (%d runs)" % (dtype, shape, len(outs)))
        try:
            j = json.loads(first[2])
        except ValueError:
            ok(False, "JSON output %s %s" % (dtype, shape), repr(first[2][:300]))
            j = None
        return first[1], j


# ---- tests -----------------------------------------------------------------------------------------
def check_roundtrip(R, name, dtype, pattern, arrays, dtstr, feeds=(None, 1, 7)):
    data = frame_arrays(arrays, np.dtype(dtstr))
    # the framing itself is what numcodecs decodes back to the same bytes
    dec = decode(data)
    if dec is not None:
        ok(dec == [a.tobytes() for a in arrays], "%s: numcodecs decodes its own chunk" % name)
    rc, j = R.json(dtype, pattern, data, feeds=feeds)
    if not ok(rc == 0 and j is not None and j["ok"] is True and j["error"] is None,
              "%s: accepted" % name, "exit %s %s" % (rc, j and j.get("error"))):
        return
    ok(j["dtype"] == dtstr, "%s: dtype %s" % (name, j["dtype"]))
    ok(j["count"] == len(arrays) and len(j["elements"]) == len(arrays), "%s: count" % name)
    good = True
    for e, a in zip(j["elements"], arrays):
        b = a.tobytes()
        if e["shape"] != list(a.shape) or e["nbytes"] != len(b) or e["crc32"] != zlib.crc32(b):
            good = False
            ok(False, "%s: element" % name, "%r vs shape %r nbytes %d crc %d" % (e, a.shape, len(b), zlib.crc32(b)))
            break
    if good:
        ok(True, "%s: %d elements: shapes, sizes, CRC-32s" % (name, len(arrays)))


def test_roundtrip(R, quick):
    rng = np.random.default_rng(8)
    patterns = [("null", ()), ("null,2", (2,)), ("[null, 3, 4]", (3, 4)), ("null,1,5", (1, 5))]
    names = list(DTYPES)
    for dtype in names:
        npdt, dtstr = DTYPES[dtype]
        pats = patterns if not quick else patterns[:2]
        for pattern, fixed in pats:
            arrays = [random_array(rng, npdt, fixed, int(n)) for n in rng.integers(0, 6, size=5)]
            arrays.insert(2, random_array(rng, npdt, fixed, 0))  # an empty element, always
            check_roundtrip(R, "%s %s" % (dtype, pattern), dtype, pattern, arrays, dtstr,
                            feeds=(None, 1, 7) if not quick or pattern == "null,2" else (None, 7))
        # NumPy's type string names the same dtype
        check_roundtrip(R, "%s as %s" % (dtype, dtstr), dtstr, "null",
                        [random_array(rng, npdt, (), 3)], dtstr, feeds=(None,))
    # the examples: (n, 2) float32 point sets, (n,) uint64 lists
    pts = [random_array(rng, np.float32, (2,), n) for n in (3, 0, 1, 17, 0)]
    check_roundtrip(R, "point sets", "float32", "null,2", pts, "<f4")
    lists = [np.arange(n, dtype=np.uint64) * 3 for n in (0, 1, 2, 100)]
    check_roundtrip(R, "uint64 lists", "uint64", "null", lists, "<u8")
    # empty chunk (count 0), and only empty elements
    check_roundtrip(R, "empty chunk", "float32", "null,2", [], "<f4")
    check_roundtrip(R, "only empty elements", "int16", "null,7",
                    [np.zeros((0, 7), np.int16) for _ in range(4)], "<i2")
    check_roundtrip(R, "empty chunk 1-D", "uint8", "null", [], "|u1")
    if not quick:
        # elements larger than the CLI's 1 MiB read buffer
        big = [random_array(rng, np.float64, (3,), n) for n in (50000, 0, 70000)]
        check_roundtrip(R, "large elements", "float64", "null,3", big, "<f8", feeds=(None, 7))
        many = [random_array(rng, np.int32, (), int(n)) for n in rng.integers(0, 3, size=3000)]
        check_roundtrip(R, "3000 elements", "int32", "null", many, "<i4", feeds=(None, 1))


def expect_reject(R, name, dtype, pattern, data, code, offset, element, extra=(), completed=None, count="any"):
    rc, j = R.json(dtype, pattern, data, extra=extra)
    if not ok(rc == 1 and j is not None and j["ok"] is False and j["error"] is not None,
              "%s: rejected" % name, "exit %s %r" % (rc, j)):
        return
    e = j["error"]
    ok(e["code"] == code and e["offset"] == offset and e["element"] == element and e["where"] == "input"
       and e["message"], "%s: %s at %d (element %s)" % (name, code, offset, element),
       "got %s at %s (element %s)" % (e["code"], e["offset"], e["element"]))
    if completed is not None:
        ok(len(j["elements"]) == completed, "%s: %d elements before the error" % (name, completed),
           "got %d" % len(j["elements"]))
    if count != "any":
        ok(j["count"] == count, "%s: count %s" % (name, count), "got %s" % j["count"])


def test_rejections(R):
    s = frame_struct
    e8 = bytes(range(8))
    # truncated: count, length field, element bytes, missing elements
    expect_reject(R, "empty input", "float32", "null,2", b"", "truncated", 0, None, count=None)
    expect_reject(R, "count cut", "float32", "null,2", b"\x01\x00\x00", "truncated", 0, None, count=None)
    expect_reject(R, "count promises more", "float32", "null,2", s([e8])[:4], "truncated", 4, 0, completed=0,
                  count=1)
    expect_reject(R, "second element missing", "float32", "null,2", struct.pack("<I", 2) + s([e8])[4:],
                  "truncated", 16, 1, completed=1, count=2)
    expect_reject(R, "length field cut", "float32", "null,2", s([e8, e8 * 2])[:18], "truncated", 16, 1,
                  completed=1)
    expect_reject(R, "length runs past the input", "float32", "null,2", s([e8, e8 * 2])[:-1], "truncated", 16, 1,
                  completed=1)
    expect_reject(R, "huge length", "uint8", "null", struct.pack("<II", 1, 0xFFFFFFFF) + b"abc", "truncated", 4, 0)
    expect_reject(R, "huge count", "uint8", "null", struct.pack("<I", 0xFFFFFFFF), "truncated", 4, 0)
    # length not divisible by the fixed element size
    expect_reject(R, "length % (4*2)", "float32", "null,2", s([e8, e8 + b"\0" * 4]), "size_mismatch", 16, 1,
                  completed=1)
    expect_reject(R, "length % itemsize", "float64", "null", s([e8[:7]]), "size_mismatch", 4, 0)
    expect_reject(R, "length % (2*3*4)", "int16", "null,3,4", s([b"\0" * 24, b"\0" * 12]), "size_mismatch", 32, 1)
    # trailing bytes
    expect_reject(R, "trailing after empty chunk", "float32", "null,2", s([]) + b"\0", "trailing_data", 4, None,
                  count=0)
    expect_reject(R, "trailing after last", "float32", "null,2", s([e8, b""]) + b"\0\0\0\0", "trailing_data", 20,
                  None, completed=2)
    # limits
    three = s([e8, b"", e8 * 2])
    expect_reject(R, "max elements", "float32", "null,2", three, "limit", 0, None, extra=["--max-elements", "2"],
                  count=None)
    rc, j = R.json("float32", "null,2", three, extra=["--max-elements", "3"])
    ok(rc == 0, "max elements edge accepted")
    expect_reject(R, "max element bytes", "float32", "null,2", three, "limit", 20, 2,
                  extra=["--max-element-bytes", "15"], completed=2)
    rc, j = R.json("float32", "null,2", three, extra=["--max-element-bytes", "16"])
    ok(rc == 0, "max element bytes edge accepted")
    expect_reject(R, "max total bytes", "float32", "null,2", three, "limit", 20, 2,
                  extra=["--max-total-bytes", str(len(three) - 1)], completed=2)
    expect_reject(R, "max total bytes (count)", "float32", "null,2", three, "limit", 0, None,
                  extra=["--max-total-bytes", "15"])
    rc, j = R.json("float32", "null,2", three, extra=["--max-total-bytes", str(len(three))])
    ok(rc == 0, "max total bytes edge accepted")


def test_config(R):
    data = frame_struct([])
    cases = [  # dtype, pattern, code, where, offset
        ("float32", "2,null", "bad_shape", "shape", 0),
        ("float32", "null,2,null", "bad_shape", "shape", 7),
        ("float32", "null,null", "bad_shape", "shape", 5),
        ("float32", "2,3", "bad_shape", "shape", 0),
        ("float32", "", "bad_shape", "shape", 0),
        ("float32", "null,0", "bad_shape", "shape", 5),
        ("float32", "null,-1", "bad_shape", "shape", 5),
        ("float32", "[null,2", "bad_shape", "shape", 7),
        ("float32", "null" + ",1" * 32, "bad_shape", "shape", 67),
        ("float64", "null,4294967296,4294967296", "size_overflow", "shape", 16),
        ("float33", "null", "bad_dtype", "dtype", 0),
        (">f4", "null", "bad_dtype", "dtype", 0),
        ("object", "null", "bad_dtype", "dtype", 0),
    ]
    for dt, pat, code, where, off in cases:
        rc, out, err = R.run(["--json", "--dtype", dt, "--shape", pat], data)
        try:
            j = json.loads(out)
        except ValueError:
            ok(False, "config %s %r: JSON" % (dt, pat), out)
            continue
        e = j.get("error") or {}
        ok(rc == 1 and j["ok"] is False and e.get("code") == code and e.get("where") == where
           and e.get("offset") == off and e.get("message"),
           "config --dtype %s --shape %r: %s in %s at %d" % (dt, pat, code, where, off),
           "exit %d %r" % (rc, e))
        rc2, out2, _ = R.run(["--dtype", dt, "--shape", pat], data)
        ok(rc2 == 1 and "REJECTED: %s" % code in out2, "config %s %r: text output" % (dt, pat), out2)
    # accepted pattern spellings
    for pat in ["null,2", "[null, 2]", " [ null ,2 ] ", "null , 2"]:
        rc, j = R.json("float32", pat, frame_struct([b"\0" * 16]), feeds=(None,), stdin_too=False)
        ok(rc == 0 and j["elements"][0]["shape"] == [2, 2] and j["pattern"] == [None, 2],
           "pattern spelling %r" % pat, repr(j))


def test_usage(R):
    data = frame_struct([])
    p = R.write(data)
    for args, what in [
        (["--shape", "null"], "missing --dtype"),
        (["--dtype", "int8"], "missing --shape"),
        (["--dtype", "int8", "--shape"], "--shape without value"),
        (["--dtype", "int8", "--shape", "null", "--feed", "x"], "bad --feed"),
        (["--dtype", "int8", "--shape", "null", "--feed", "-1"], "negative --feed"),
        (["--dtype", "int8", "--shape", "null", "--max-total-bytes", "3"], "--max-total-bytes < 4"),
        (["--dtype", "int8", "--shape", "null", "--bogus"], "unknown option"),
        (["--dtype", "int8", "--shape", "null", p, p], "two files"),
        (["--dtype", "int8", "--shape", "null", os.path.join(R.tmp, "does-not-exist")], "missing file"),
    ]:
        rc, out, err = R.run(args)
        ok(rc == 2 and err, "usage: %s exits 2" % what, "exit %d out %r" % (rc, out))
    rc, out, err = R.run(["--help"])
    ok(rc == 0 and "--dtype" in out, "--help")
    # text output of an accepted chunk
    rc, out, err = R.run(["--dtype", "float32", "--shape", "null,2"], frame_struct([b"\0" * 8, b""]))
    ok(rc == 0 and "(1, 2) 8 bytes" in out and "(0, 2) 0 bytes" in out and ": ok (vlen <f4 [null, 2], 2 elements)"
       in out, "text output", out)
    rc, out, err = R.run(["--dtype", "uint8", "--shape", "null"], frame_struct([b"ab"]) + b"x")
    ok(rc == 1 and "REJECTED: trailing_data at offset 10" in out, "text rejection", out)


def test_random_damage(R, quick):
    """Valid chunks with one byte flipped, cut or appended: whatever the verdict, every feed agrees."""
    rng = random.Random(8)
    n = 15 if quick else 60
    for i in range(n):
        items = [bytes(rng.randrange(256) for _ in range(4 * rng.randrange(4))) for _ in range(rng.randrange(5))]
        data = bytearray(frame_struct(items))
        how = i % 3
        if how == 0 and data:
            data[rng.randrange(len(data))] ^= 1 << rng.randrange(8)
        elif how == 1 and data:
            del data[rng.randrange(len(data)):]
        else:
            data += b"\0"
        rc, j = R.json("int32", "null", bytes(data), feeds=(None, 1, 7), stdin_too=False)
        ok(rc in (0, 1) and j is not None, "damaged chunk %d: verdict" % i, "exit %s" % rc)


@pytest.fixture()
def R(binary, tmp):
    """The runner of `npzstream vlen` (its framing: numcodecs where importable)."""
    print("framing: " + encoder())
    R = Runner(binary, tmp)
    rc, out, err = R.run(["--help"])
    assert rc == 0 and "--dtype" in out, "`%s vlen --help` works: exit %d %s" % (binary, rc, (out + err)[-500:])
    return R
