#!/usr/bin/python3
"""Seeds for fuzz_fastinf and the inflate campaign (fuzz/fastinf_campaign.c): raw deflate streams
as np.savez_compressed writes them (its members' data: zipfile's zlib at level 6) for three kinds
of arrays -- random floats, quantised weights, integers -- in several sizes, plus the hand-made
streams of fuzz/gen_inflate_seeds.py (every block kind, zlib's levels and strategies, flushes,
invalid headers, distances too far back, cut and trailing streams).  Each seed is
[ctl][deflate bytes].

usage: /usr/bin/python3 fuzz/gen_fastinf_seeds.py [--campaign] OUTDIR
  without --campaign: the committed corpus (corpus/fuzz_fastinf/): seeds of at most 4 KiB
  --campaign: also the larger arrays (up to 2 MiB of output, streams of many blocks)
"""
import hashlib
import io
import os
import struct
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gen_inflate_seeds  # noqa: E402


def arrays(rng, n):
    """The three kinds, n elements each."""
    floats = rng.standard_normal(n).astype(np.float32)
    quant = (np.clip(np.round(rng.standard_normal(n) * 3), -8, 7).astype(np.float32) * np.float32(0.0123))
    ints = rng.integers(0, 1000, n).astype(np.int64)
    small = rng.integers(-3, 4, n).astype(np.int8)
    return {"floats": floats, "quant": quant, "ints": ints, "small": small}


def members(npz):
    """The raw deflate data of every member of an archive (from its local headers)."""
    out = []
    with zipfile.ZipFile(io.BytesIO(npz)) as z:
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_DEFLATED:
                continue
            h = info.header_offset
            name_len, extra_len = struct.unpack("<HH", npz[h + 26:h + 30])
            start = h + 30 + name_len + extra_len
            out.append(npz[start:start + info.compress_size])
    return out


def savez_streams(sizes, seed):
    rng = np.random.default_rng(seed)
    out = []
    for n in sizes:
        for name, a in arrays(rng, n).items():
            bio = io.BytesIO()
            np.savez_compressed(bio, **{name: a})
            out += members(bio.getvalue())
    return out


def main():
    args = sys.argv[1:]
    campaign = "--campaign" in args
    args = [a for a in args if a != "--campaign"]
    if len(args) != 1:
        sys.exit(__doc__)
    d = args[0]
    os.makedirs(d, exist_ok=True)
    streams = [s for s in gen_inflate_seeds.seeds() if campaign or len(s) < 4095]
    streams += [s for s in savez_streams([1, 7, 64, 300, 1000], 44) if len(s) < 4095]
    if campaign:
        streams += savez_streams([4096, 20000, 70000], 45)
    ctls = [0x00, 0x01, 0x09, 0x12, 0x23, 0x3c, 0x45, 0x66, 0x87, 0xc5, 0x2f, 0xff, 0xa4, 0x5b]
    n = 0
    for i, s in enumerate(streams):
        data = bytes([ctls[i % len(ctls)]]) + s
        with open(os.path.join(d, hashlib.sha1(data).hexdigest()), "wb") as f:
            f.write(data)
        n += 1
    print("gen_fastinf_seeds: %d seeds in %s" % (n, d))


if __name__ == "__main__":
    main()
