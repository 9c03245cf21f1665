#!/usr/bin/python3
"""Write the fuzz_vlen seeds (fuzz/fuzz_vlen.c input format) into DIR (default corpus/fuzz_vlen).

    /usr/bin/python3 tests/vlen/gen_seeds.py [DIR]        (also: make vlen-seeds)

Seed = [ctl][arg][pattern][chunk]; see fuzz/fuzz_vlen.c.  Chunks are encoded with numcodecs
VLenBytes / VLenArray when importable, else with the same framing written by struct.
Deterministic: the same files every run.
"""
import os, struct, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from framing import encoder, frame, frame_arrays  # noqa: E402

DT = ["bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16", "float32",
      "float64", "complex64", "complex128", "<f4", "|b1"]
NP = [np.bool_, np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64, np.float16,
      np.float32, np.float64, np.complex64, np.complex128, np.float32, np.bool_]
PAT = {"null": 0, "null,2": 1, "null,3,4": 2, "[null, 1]": 3, "null,1,1,5": 4}
FIXED = {"null": (), "null,2": (2,), "null,3,4": (3, 4), "[null, 1]": (1,), "null,1,1,5": (1, 1, 5)}


def seed(ctl, arg, pattern, chunk):
    p = bytes([PAT[pattern]]) if pattern in PAT else pattern.encode() + b"\0"
    return bytes([ctl, arg]) + p + chunk


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else "corpus/fuzz_vlen"
    os.makedirs(out, exist_ok=True)
    seeds = {}
    # valid chunks: every dtype, a few patterns, schedules 0..3
    for d in range(16):
        for j, pat in enumerate(PAT):
            if (d + j) % 3:
                continue
            fixed = FIXED[pat]
            arrs = [np.arange(n * int(np.prod(fixed, dtype=np.int64)), dtype=NP[d]).reshape((n,) + fixed)
                    for n in (2, 0, 1)]
            chunk = frame_arrays(arrs, np.dtype(NP[d]))
            sched = (d + j) % 4
            seeds["ok-%s-%s-s%d" % (DT[d].strip("<|"), pat.replace(",", "_").strip("[]").replace(" ", ""),
                                     sched)] = seed(d | (sched << 6), 5 + d, pat, chunk)
    f32 = 10
    e8 = bytes(range(8))
    seeds["ok-empty-chunk"] = seed(f32, 0, "null,2", frame([]))
    seeds["ok-empty-elements"] = seed(f32 | 0x40, 0, "null,2", frame([b"", b"", b""]))
    seeds["ok-points"] = seed(f32 | 0xC0, 3, "null,2", frame([e8 * 3, b"", e8]))
    seeds["ok-pattern-text"] = seed(f32 | 0x80, 0, "[null, 2]", frame([e8, e8 * 2]))
    seeds["ok-pattern-text-3d"] = seed(5, 0, " null , 2 , 3 ", frame([b"\1" * 6, b"", b"\2" * 12]))
    # rejections
    seeds["trunc-empty"] = seed(f32, 0, "null,2", b"")
    seeds["trunc-count"] = seed(f32, 0, "null,2", b"\x02\x00")
    seeds["trunc-no-elements"] = seed(f32 | 0x40, 0, "null,2", struct.pack("<I", 3))
    seeds["trunc-length-field"] = seed(f32, 0, "null,2", frame([e8, e8])[:18])
    seeds["trunc-data"] = seed(f32 | 0x80, 0, "null,2", frame([e8, e8 * 2])[:-3])
    seeds["trunc-missing-element"] = seed(f32, 0, "null,2", struct.pack("<I", 2) + frame([e8])[4:])
    seeds["trunc-huge-count"] = seed(5, 0, "null", struct.pack("<I", 0xFFFFFFFF))
    seeds["trunc-huge-length"] = seed(5, 0, "null", struct.pack("<II", 1, 0xFFFFFFFF) + b"xyz")
    seeds["mismatch-row"] = seed(f32, 0, "null,2", frame([e8, e8 + b"\0" * 4]))
    seeds["mismatch-itemsize"] = seed(11, 0, "null", frame([e8[:5]]))
    seeds["mismatch-3d"] = seed(2, 0, "null,3,4", frame([b"\0" * 24, b"\0" * 22]))
    seeds["trailing-empty-chunk"] = seed(f32, 0, "null,2", frame([]) + b"\0")
    seeds["trailing-after-last"] = seed(f32 | 0x40, 0, "null,2", frame([e8, b""]) + b"\0\0\0\0\0")
    seeds["limit-elements"] = seed(f32 | 0x10, 0, "null,2", frame([b""] * 5))
    seeds["limit-element-bytes"] = seed(f32 | 0x10, 0, "null,2", frame([e8, e8 * 9]))
    seeds["limit-total-bytes"] = seed(f32 | 0x10, 0, "null,2", frame([e8 * 8, e8 * 8, e8 * 8, e8 * 7]))
    seeds["limit-total-count"] = seed(f32 | 0x20, 7, "null,2", frame([b""] * 3))
    seeds["limit-total-edge"] = seed(f32 | 0x20, 16, "null,2", frame([e8, b""]))
    seeds["limit-arg"] = seed(5 | 0x30, 2, "null", frame([b"ab", b"0123456789abcdefg"]))
    # configuration errors
    seeds["cfg-second-null"] = seed(f32, 0, "null,2,null", frame([]))
    seeds["cfg-not-leading"] = seed(f32, 0, "2,null", frame([]))
    seeds["cfg-zero-dim"] = seed(f32, 0, "null,0", frame([]))
    seeds["cfg-overflow"] = seed(f32, 0, "null,4294967296,4294967296", frame([]))
    seeds["cfg-bracket"] = seed(f32, 0, "[null,2", frame([]))
    seeds["cfg-33-dims"] = seed(5, 0, "null" + ",1" * 32, frame([]))
    for name, data in sorted(seeds.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    print("%d seeds in %s (%s)" % (len(seeds), out, encoder()))


if __name__ == "__main__":
    main()
