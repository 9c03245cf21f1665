"""Large archives streamed through a pipe: memory must stay flat, ZIP64 must work for real.

CPython's zipfile writes each archive to the CLI's stdin (a pipe, so zipfile uses data
descriptors and, past 4 GiB, ZIP64 central records, a ZIP64 end record and locator), with a
.npy header in front of zero-filled data that is produced in pieces: nothing is ever held whole.
Checked: `npzstream check --json --max-total-bytes 8Gi -` accepts (the default budget, 1 GiB in all,
refuses such files at their first header: checked too), reports the shape/nbytes/CRC that the writer
computed, and its peak RSS stays under a bound that does not depend on the data size.

make test: the archives of 64 MiB; make test-all (marked rest): of 4.5 GiB (1 GiB deflated).
"""
import json
import os
import subprocess
import tempfile
import threading
import zipfile
import zlib

import numpy as np
import pytest

RSS_LIMIT_KIB = 8 * 1024


def npy_header(shape, descr="<f4"):
    bio = __import__("io").BytesIO()
    np.lib.format.write_array_header_1_0(bio, {"descr": descr, "fortran_order": False, "shape": shape})
    return bio.getvalue()


def writer(pipe, members, compress):
    """members: list of (name, nbytes_of_zeros); crcs filled into the returned list."""
    crcs = []
    with zipfile.ZipFile(pipe, "w", compression=zipfile.ZIP_DEFLATED if compress else zipfile.ZIP_STORED,
                         allowZip64=True) as zf:
        chunk = bytes(1 << 20)
        for name, nbytes in members:
            hdr = npy_header((nbytes // 4,))
            with zf.open(name, "w", force_zip64=True) as f:
                f.write(hdr)
                crc, left = 0, nbytes
                while left:
                    n = min(left, len(chunk))
                    f.write(chunk[:n])
                    crc = zlib.crc32(chunk[:n], crc)
                    left -= n
            crcs.append(crc)
    pipe.close()
    return crcs


def run(binary, members, compress, budget=("--max-total-bytes", "8Gi")):
    # peak RSS from /usr/bin/time: a forked child's ru_maxrss would include the Python parent
    rssf = tempfile.NamedTemporaryFile(prefix="npzs-rss-", delete=False).name
    timer = ["/usr/bin/time", "-f", "%M", "-o", rssf] if os.path.exists("/usr/bin/time") else []
    p = subprocess.Popen(timer + [binary, "check", "--json"] + list(budget) + ["-"], stdin=subprocess.PIPE,
                         stdout=subprocess.PIPE)
    box = {}

    def write():
        try:
            box["crcs"] = writer(p.stdin, members, compress)
        except (BrokenPipeError, ValueError):  # the reader stopped at a rejection
            pass

    t = threading.Thread(target=write)
    t.start()
    out = p.stdout.read()
    p.wait()
    t.join()
    rss = None
    try:
        txt = open(rssf).read().split()
        rss = int(txt[-1]) if timer and txt else None
    finally:
        os.unlink(rssf)
    return p.returncode, json.loads(out), box.get("crcs"), rss


GIB = 1 << 30
SIZES = [pytest.param(64 << 20, id="64MiB"), pytest.param(4 * GIB + GIB // 2, id="4.5GiB", marks=pytest.mark.rest)]
SHAPES = {"stored": lambda n: ([("big.npy", n)], False), "stored-two": lambda n: ([("a.npy", n // 2), ("b.npy", n // 2)], False),
          "deflated": lambda n: ([("z.npy", min(n, GIB))], True)}  # 1 GiB of zeros at most


@pytest.mark.parametrize("size", SIZES)
@pytest.mark.parametrize("shape", list(SHAPES))
def test_big(binary, sanitized, shape, size):
    """Accepted, with the writer's shapes, sizes and CRCs, in flat memory."""
    members, compress = SHAPES[shape](size)
    rc, d, crcs, rss = run(binary, members, compress)
    assert rc == 0 and d.get("ok"), "rejected: %s" % json.dumps(d.get("error"))
    got = [(m["name"], m["shape"], m["nbytes"], m["data_crc32"]) for m in d["members"]]
    assert got == [(n, [b // 4], b, c) for (n, b), c in zip(members, crcs)]
    print("peak RSS %s KiB" % rss)
    assert rss is None or rss <= RSS_LIMIT_KIB or sanitized, "peak RSS %d KiB > %d KiB" % (rss, RSS_LIMIT_KIB)


def test_default_budget(binary):
    """The default budget refuses a trusted big file at its first .npy header (the data descriptor
    hides the sizes from the local header): the error names the limit to raise."""
    rc, d, crcs, rss = run(binary, [("big.npy", 2 * GIB)], False, budget=())
    e = d.get("error") or {}
    assert rc == 1 and e.get("rule") == "LIMIT.max_total_bytes.array" and e.get("offset") == 30 + 7 + 20 + 10, \
        "exit %d, %s" % (rc, e)
