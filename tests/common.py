"""What the test scripts share: the pass/fail tally whose last line tests/run_all.py reads.

    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from common import Tally
    T = Tally("cli")
    ok = T.ok          # ok(cond, what[, detail]) -> cond
    ...
    return T.summary() # prints "cli: N passed, M failed"; 1 if anything failed
"""


class Tally:
    def __init__(self, name, verbose=False):
        self.name = name
        self.verbose = verbose
        self.passed = 0
        self.failed = 0

    def ok(self, cond, what, detail=""):
        if cond:
            self.passed += 1
            if self.verbose:
                print("ok   " + what)
        else:
            self.failed += 1
            print("FAIL " + what + (": " + detail if detail else ""))
        return cond

    def summary(self):
        print("%s: %d passed, %d failed" % (self.name, self.passed, self.failed))
        return 1 if self.failed else 0


# ---- a block that must not hang ----------------------------------------------------------------

class Alarm:
    """with Alarm(10): ... raises TimeoutError (in the main thread) instead of hanging when the block
    takes longer than 10 s: a blocking call is interrupted by SIGALRM."""

    def __init__(self, seconds):
        self.seconds = seconds

    def __enter__(self):
        import signal

        def ring(*_):
            raise TimeoutError("blocked for %d s" % self.seconds)
        self.old = signal.signal(signal.SIGALRM, ring)
        signal.alarm(self.seconds)

    def __exit__(self, *exc):
        import signal
        signal.alarm(0)
        signal.signal(signal.SIGALRM, self.old)


# ---- a zip bomb, built in a fraction of a second ------------------------------------------------

def _gf2_times(mat, vec):
    s = 0
    i = 0
    while vec:
        if vec & 1:
            s ^= mat[i]
        vec >>= 1
        i += 1
    return s


def _gf2_square(mat):
    return [_gf2_times(mat, mat[n]) for n in range(32)]


def crc32_combine(crc1, crc2, len2):
    """zlib's crc32_combine: the CRC-32 of A + B from crc32(A), crc32(B) and len(B)."""
    if len2 <= 0:
        return crc1
    odd = [0xEDB88320] + [1 << n for n in range(31)]  # the operator for one zero bit
    even = _gf2_square(odd)                           # two zero bits
    odd = _gf2_square(even)                           # four
    while True:
        even = _gf2_square(odd)
        if len2 & 1:
            crc1 = _gf2_times(even, crc1)
        len2 >>= 1
        if not len2:
            break
        odd = _gf2_square(even)
        if len2 & 1:
            crc1 = _gf2_times(odd, crc1)
        len2 >>= 1
        if not len2:
            break
    return crc1 ^ crc2


def zeros_bomb(zeros=2 << 30, pipe=False):
    """An .npz of one |u1 array of `zeros` zero bytes, deflated (at level 9, about 1032:1): a
    2 GiB array in about 2 MB.  pipe: written as np.savez writes to a pipe (sizes in a data
    descriptor), else with the sizes in the local header.  Built from one compressed block
    repeated (a full flush resets the compressor, so every block after the first compresses to
    the same bytes) and the CRC-32 combined, never by compressing 2 GiB."""
    import io, struct, sys, zlib, os
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "bad"))
    from zipbuild import Member, build_zip
    from numpy.lib import format as npf
    hdr = io.BytesIO()
    npf.write_array_header_1_0(hdr, {"descr": "|u1", "fortran_order": False, "shape": (zeros,)})
    hdr = hdr.getvalue()
    block = 1 << 24
    assert zeros % block == 0 and zeros >= 3 * block
    c = zlib.compressobj(9, zlib.DEFLATED, -15)
    first = c.compress(hdr + bytes(block)) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(bytes(block)) + c.flush(zlib.Z_FULL_FLUSH)
    assert c.compress(bytes(block)) + c.flush(zlib.Z_FULL_FLUSH) == again
    stream = first + again * (zeros // block - 2) + c.compress(bytes(block)) + c.flush()
    crc = zlib.crc32(bytes(block))
    n = block
    while n < zeros:
        crc = crc32_combine(crc, crc, n)
        n *= 2
    assert n == zeros, "zeros must be 16 MiB times a power of two"
    crc = crc32_combine(zlib.crc32(hdr), crc, zeros)
    usize = len(hdr) + zeros
    ov = dict(data=stream, cd_crc=crc, cd_usize=usize)
    if pipe:
        ov.update(dd_crc=crc, dd_usize=usize)
    else:
        ov.update(lfh_crc=crc, lfh_usize=usize)
    b, L = build_zip([Member("z.npy", b"", 8, "pipe" if pipe else "legacy", **ov)])
    return bytes(b), L.m[0]["lfh"], L.m[0]["data"]
