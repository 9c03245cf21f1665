#!/usr/bin/python3
"""Seeds for fuzz_inflate_diff: raw deflate streams of every block kind, and hand-built dynamic
block headers zlib refuses (incomplete and over-subscribed code sets, too many codes, a repeat
past the end, no end-of-block code), distances too far back, streams that end early or carry
trailing bytes.  Each seed is [ctl][deflate bytes]; ctl varies the pushes and windows.

usage: /usr/bin/python3 fuzz/gen_inflate_seeds.py OUTDIR
"""
import hashlib
import os
import random
import sys
import zlib


class Bits:
    """A deflate bit writer (LSB first; Huffman codes are written MSB first, as RFC 1951 says)."""

    def __init__(self):
        self.out, self.acc, self.n = bytearray(), 0, 0

    def put(self, v, n):
        for i in range(n):
            self.acc |= ((v >> i) & 1) << self.n
            self.n += 1
            if self.n == 8:
                self.out.append(self.acc)
                self.acc, self.n = 0, 0

    def code(self, c, length):  # a Huffman code, most significant bit first
        for i in reversed(range(length)):
            self.put((c >> i) & 1, 1)

    def done(self):
        if self.n:
            self.out.append(self.acc)
        return bytes(self.out)


def canonical(lengths):
    """RFC 1951 3.2.2: codes from lengths (None where the set cannot be coded)."""
    maxl = max(lengths) if lengths else 0
    count = [0] * (maxl + 1)
    for l in lengths:
        if l:
            count[l] += 1
    code, nxt = 0, [0] * (maxl + 2)
    for b in range(1, maxl + 1):
        code = (code + count[b - 1]) << 1
        nxt[b] = code
    out = []
    for l in lengths:
        if l:
            out.append(nxt[l])
            nxt[l] += 1
        else:
            out.append(None)
    return out


CL_ORDER = [16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15]


def dynamic_block(lit_lengths, dist_lengths, symbols, final=1, cl_lengths=None, hlit=None, hdist=None):
    """One dynamic block with the given code lengths (written with code-length codes of length
    cl_lengths, default all 4 bits for 0..15), then `symbols`: a list of (lit) or (len, dist)
    written with whatever codes the lengths give (a symbol without a code is skipped)."""
    b = Bits()
    b.put(final, 1)
    b.put(2, 2)
    nl = hlit if hlit is not None else len(lit_lengths)
    nd = hdist if hdist is not None else len(dist_lengths)
    b.put(nl - 257, 5)
    b.put(nd - 1, 5)
    cl = cl_lengths or {i: 4 for i in range(16)}
    cll = [cl.get(i, 0) for i in range(19)]
    ncl = 19
    while ncl > 4 and cll[CL_ORDER[ncl - 1]] == 0:
        ncl -= 1
    b.put(ncl - 4, 4)
    for i in range(ncl):
        b.put(cll[CL_ORDER[i]], 3)
    clc = canonical(cll)
    for l in list(lit_lengths) + list(dist_lengths):
        if clc[l] is not None:
            b.code(clc[l], cll[l])
    lc, dc = canonical(list(lit_lengths)), canonical(list(dist_lengths))
    for s in symbols:
        if isinstance(s, int):
            if s < len(lc) and lc[s] is not None:
                b.code(lc[s], lit_lengths[s])
        else:
            ln, dist = s  # length code 257 (3 bytes), distance code `dist`
            if lc[257] is not None and dist < len(dc) and dc[dist] is not None:
                b.code(lc[257], lit_lengths[257])
                b.code(dc[dist], dist_lengths[dist])
    if 256 < len(lc) and lc[256] is not None:
        b.code(lc[256], lit_lengths[256])
    return b.done()


def seeds():
    rng = random.Random(1951)
    out = []
    texts = [b"", b"a", b"abc" * 100, bytes(range(256)) * 8, os.urandom(3000), b"\0" * 100000,
             bytes(rng.randrange(4) for _ in range(20000)),
             b"".join(i.to_bytes(4, "little") for i in range(5000))]
    for t in texts:
        for level in (0, 1, 6, 9):
            for strat in (zlib.Z_DEFAULT_STRATEGY, zlib.Z_FIXED, zlib.Z_HUFFMAN_ONLY, zlib.Z_RLE, zlib.Z_FILTERED):
                c = zlib.compressobj(level, zlib.DEFLATED, -15, 9, strat)
                s = c.compress(t) + c.flush()
                out.append(s)
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        s = c.compress(t[:len(t) // 2]) + c.flush(zlib.Z_SYNC_FLUSH) + c.compress(t[len(t) // 2:]) + c.flush()
        out.append(s)                      # a sync flush: an empty stored block inside
        out.append(s[:len(s) // 2])        # ends early
        out.append(s + b"trailing bytes")  # bytes after the stream
    # smaller windows: distances the stream may use
    for wbits in (9, 12):
        c = zlib.compressobj(9, zlib.DEFLATED, -wbits)
        out.append(c.compress(bytes(range(256)) * 40) + c.flush())
    lit = [8] * 144 + [9] * 112 + [7] * 24 + [8] * 6  # 286 codes: the fixed code's lengths
    dist = [5] * 30
    sym = [65, 66, (3, 0), 67]
    out.append(dynamic_block(lit, dist, sym))                                   # valid
    # incomplete literal/length set: one code length missing
    inc = list(lit)
    inc[65] = 0
    out.append(dynamic_block(inc, dist, [66, 67]))
    # over-subscribed literal/length set: one code too many of length 7
    over = list(lit)
    over[0] = 7
    out.append(dynamic_block(over, dist, [66, 67]))
    # incomplete distance set with more than one code, and a single distance code of length 1
    out.append(dynamic_block(lit, [2, 2, 2] + [0] * 27, [65, (3, 1)]))
    out.append(dynamic_block(lit, [1] + [0] * 29, [65, (3, 0), 66]))
    out.append(dynamic_block(lit, [0] * 30, [65, 66]))                          # no distance codes
    out.append(dynamic_block(lit, [2, 2, 2, 3, 3] + [0] * 25, [65, (3, 1)]))   # over-subscribed distances
    # no end-of-block code
    noeob = list(lit)
    noeob[256] = 0
    out.append(dynamic_block(noeob, dist, [65, 66]))
    # distance too far back at the start of the stream
    out.append(dynamic_block(lit, dist, [(3, 5), 65]))
    # too many codes declared (HLIT = 30 over 286, HDIST = 32 over 30)
    out.append(dynamic_block(lit + [8, 8], dist, [65], hlit=288))
    out.append(dynamic_block(lit, dist + [5, 5], [65], hdist=32))
    # incomplete / over-subscribed code-length codes
    out.append(dynamic_block(lit, dist, [65], cl_lengths={7: 1, 8: 2, 9: 2, 5: 3}))
    out.append(dynamic_block(lit, dist, [65], cl_lengths={i: 3 for i in range(16)}))
    # a stored block whose length and complement disagree, and a reserved block type
    out.append(bytes([0x01, 0x05, 0x00, 0xfb, 0xff]) + b"hello")
    out.append(bytes([0x01, 0x05, 0x00, 0xfa, 0xff]) + b"hello")
    out.append(bytes([0x07, 0x00]))
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    d = sys.argv[1]
    os.makedirs(d, exist_ok=True)
    ctls = [0x00, 0x01, 0x09, 0x12, 0x23, 0x3c, 0x45, 0x66, 0x87, 0xc5, 0x2f, 0xff]
    n = 0
    for i, s in enumerate(seeds()):
        for ctl in (ctls[i % len(ctls)], ctls[(i * 7 + 3) % len(ctls)]):
            data = bytes([ctl]) + s
            name = hashlib.sha1(data).hexdigest()
            with open(os.path.join(d, name), "wb") as f:
                f.write(data)
            n += 1
    print("gen_inflate_seeds: %d seeds in %s" % (n, d))


if __name__ == "__main__":
    main()
