#!/usr/bin/python3
"""Large archives streamed through a pipe: memory must stay flat, ZIP64 must work for real.

CPython's zipfile writes each archive to the CLI's stdin (a pipe, so zipfile uses data
descriptors and, past 4 GiB, ZIP64 central records, a ZIP64 end record and locator), with a
.npy header in front of zero-filled data that is produced in pieces: nothing is ever held whole.
Checked: `npzstream check --json --max-total-bytes 8Gi -` accepts (the default budget, 1 GiB in all,
refuses such files at their first header: checked too), reports the shape/nbytes/CRC that the writer
computed, and its peak RSS stays under a bound that does not depend on the data size.

usage: test_big.py --bin build/npzstream [--quick]   (quick: 64 MiB instead of 4.5 GiB)
Last line: `big: N passed, M failed`.
"""
import argparse, json, os, subprocess, sys, tempfile, threading, zipfile, zlib

import numpy as np

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


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    gib = 1 << 30
    size = (64 << 20) if a.quick else (4 * gib + gib // 2)
    cases = [
        ("stored, one member past 4 GiB" if not a.quick else "stored 64 MiB", [("big.npy", size)], False),
        ("stored, two members" , [("a.npy", size // 2), ("b.npy", size // 2)], False),
        ("deflated, 1 GiB of zeros" if not a.quick else "deflated 64 MiB", [("z.npy", min(size, gib))], True),
    ]
    passed = failed = 0
    for label, members, compress in cases:
        rc, d, crcs, rss = run(a.bin, members, compress)
        probs = []
        if rc != 0 or not d.get("ok"):
            probs.append("rejected: %s" % json.dumps(d.get("error")))
        else:
            got = [(m["name"], m["shape"], m["nbytes"], m["data_crc32"]) for m in d["members"]]
            want = [(n, [b // 4], b, c) for (n, b), c in zip(members, crcs)]
            if got != want:
                probs.append("members %s, want %s" % (got, want))
        if rss is not None and rss > RSS_LIMIT_KIB and "san" not in a.bin:
            probs.append("peak RSS %d KiB > %d KiB" % (rss, RSS_LIMIT_KIB))
        if probs:
            failed += 1
            print("FAIL %s: %s" % (label, "; ".join(probs)))
        else:
            passed += 1
            print("ok   %s (peak RSS %s KiB)" % (label, rss))
    # the default budget refuses a trusted big file at its first .npy header (the data descriptor
    # hides the sizes from the local header): the error names the limit to raise
    rc, d, crcs, rss = run(a.bin, [("big.npy", max(size, 2 * gib))], False, budget=())
    e = d.get("error") or {}
    if rc == 1 and e.get("rule") == "LIMIT.max_total_bytes.array" and e.get("offset") == 30 + 7 + 20 + 10:
        passed += 1
        print("ok   the default budget refuses %d bytes at the header" % max(size, 2 * gib))
    else:
        failed += 1
        print("FAIL the default budget: exit %d, %s" % (rc, e))
    print("big: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
