"""What the suites share: soft checks (ok), a block that must not hang (Alarm), files as NumPy and
zipfile write them (npy_bytes, zip_bytes) and a socket that sends one (through_socket), a zip bomb
built in a fraction of a second (zeros_bomb).  Standard library only at import (NumPy where a
function needs it): the package suites import this in every environment (tests/README.md).

    from common import ok
    def test_x(binary):
        for case in cases:
            ok(cond, "what was checked", "detail shown when it fails")  # -> cond; the test goes on

A soft check counts as one check of the running test (tests/conftest.py begins and ends each test's
list); the test fails at its end when one failed, listing all that did.  ok() outside a test (a
module-level loop, a fixture of wider scope than the test) is an error: use assert there.
"""
import threading


class Checks:
    """The soft checks of one test: how many ran, the text of each that failed."""

    def __init__(self, test):
        self.test = test
        self.count = 0
        self.failures = []
        self.lock = threading.Lock()  # tests check from worker threads too


_current = None


def begin_checks(test):
    global _current
    _current = Checks(test)
    return _current


def end_checks(checks):
    global _current
    if _current is checks:
        _current = None


def failed_checks():
    """How many soft checks of the running test have failed so far."""
    return len(_current.failures)


def ok(cond, what, detail=""):
    """One soft check of the running test: counted, and when cond is false its failure is kept
    (what, then detail) and the test goes on; returns cond."""
    checks = _current
    if checks is None:
        raise RuntimeError("common.ok() outside a test: %s" % what)
    with checks.lock:
        checks.count += 1
        if not cond:
            checks.failures.append("FAIL " + what + (": " + str(detail) if detail else ""))
    return cond


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


# ---- files as NumPy and zipfile write them --------------------------------------------------------

def npy_bytes(a, version=None, allow_pickle=True):
    """The .npy NumPy writes of a (np.save's bytes; version: a format version to write, (1, 0),
    (2, 0) or (3, 0), rather than the one NumPy picks).  NumPy's warning that it chose 3.0 (a
    field name beyond latin-1) is not shown."""
    import io
    import warnings
    import numpy as np
    from numpy.lib import format as npf
    b = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        npf.write_array(b, np.asanyarray(a), version=version, allow_pickle=allow_pickle)
    return b.getvalue()


def zip_bytes(members, method=None):
    """A ZIP of (name, bytes) pairs as zipfile writes it (np.savez's writer), stored or with method
    (zipfile.ZIP_DEFLATED: np.savez_compressed's)."""
    import io
    import zipfile
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w", zipfile.ZIP_STORED if method is None else method) as z:
        for name, data in members:
            z.writestr(name, data)
    return b.getvalue()


def through_socket(data, read):
    """read(sock) of a socket whose peer, a thread, sends data then closes; its result (the socket
    closed after)."""
    import socket
    a, b = socket.socketpair()
    t = threading.Thread(target=lambda: (a.sendall(data), a.close()))
    t.start()
    try:
        return read(b)
    finally:
        t.join()
        b.close()


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
    op = [0xEDB88320] + [1 << n for n in range(31)]  # the operator for one zero bit
    op = _gf2_square(_gf2_square(op))                  # four zero bits
    while len2 > 0:
        op = _gf2_square(op)  # a zero byte, then two, four, ...: len2's bits from the lowest
        if len2 & 1:
            crc1 = _gf2_times(op, crc1)
        len2 >>= 1
    return crc1 ^ crc2


def zeros_bomb(zeros=2 << 30, pipe=False):
    """An .npz of one |u1 array of `zeros` zero bytes, deflated (at level 9, about 1032:1): a
    2 GiB array in about 2 MB.  pipe: written as np.savez writes to a pipe (sizes in a data
    descriptor), else with the sizes in the local header.  Built from one compressed block
    repeated (a full flush resets the compressor, so every block after the first compresses to
    the same bytes) and the CRC-32 combined, never by compressing 2 GiB."""
    import io
    import os
    import sys
    import zlib
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
