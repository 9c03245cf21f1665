#!/usr/bin/python3
"""The inflater's scope: zlib (the one np.load uses here, CPython's zlib module) against zlib-ng
(the `zlib-ng` package on PyPI, which bundles it), on the same raw deflate streams.

npzstream inflates with zlib and promises that what it accepts is what np.load loads *with that
zlib*.  A Python built against zlib-ng (zlib-ng's compat mode replaces zlib on some
distributions) may decide some streams otherwise; this harness measures where.

Seeds: every deflated member of every ZIP under corpus/ (local headers walked in order, sizes
from the header), the raw streams of corpus/fuzz_inflate_diff/ (their first byte is the
harness's control byte), and the first 64 KiB of corpus/peers files as zlib's and zlib-ng's
encoders write them (levels 0, 1, 6, 9, every strategy).  Each input is a seed mutated 1-4 times (bit flips, bytes set, cut,
insertion, deletion, duplication, splice of two seeds, trailing bytes, flips in the first 32
bytes where the block headers are), fed to both inflaters whole or in the same random pushes,
output capped at 1 MiB.  Each run gives a verdict: `end` (the stream ended; where, and every
output byte), `invalid` (with zlib's message), `more` (needs more input) or `capped`.  A
disagreement is classed by the two verdicts (and the messages), or, where both ended, by what
differed (`end offset`, `output`); where both refused or wait, by the output both made so far.

usage: inflate_diff_zlibng.py [--cpu-seconds S | --count N] [--seed K] [--out DIR] [--json FILE]
       inflate_diff_zlibng.py --merge RUN.json...
Needs `import zlib_ng` (make inflate-diff-zlibng makes a venv with it).  Prints a summary and, as
its last line, `inflate-diff-zlibng: N passed, M failed` where failed counts the classes of
disagreement (0: none) when --strict is given, else 0.
"""
import argparse
import glob
import json
import os
import random
import struct
import sys
import time
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
CAP = 1 << 20
MAX_SEED = 256 << 10


def zip_deflate_members(data):
    """Raw deflate data of the members of a ZIP, walking its local headers in order."""
    out, i = [], 0
    while i + 30 <= len(data) and data[i:i + 4] == b"PK\x03\x04":
        flags, method = struct.unpack_from("<HH", data, i + 6)
        csize, = struct.unpack_from("<I", data, i + 18)
        nlen, xlen = struct.unpack_from("<HH", data, i + 26)
        start = i + 30 + nlen + xlen
        if flags & 8 or csize == 0xFFFFFFFF:  # sizes in a descriptor or ZIP64: take what inflates
            if method == 8:
                d = zlib.decompressobj(-15)
                try:
                    d.decompress(data[start:start + MAX_SEED * 4])
                except zlib.error:
                    break
                if not d.eof:
                    break
                csize = len(data[start:start + MAX_SEED * 4]) - len(d.unused_data)
            else:
                break
        if method == 8 and 0 < csize <= MAX_SEED:
            out.append(bytes(data[start:start + csize]))
        i = start + csize
        if flags & 8:  # a descriptor: skip its optional signature, CRC and 32-bit sizes
            i += 16 if data[i:i + 4] == b"PK\x07\x08" else 12
    return out


def seeds():
    found = set()
    for path in sorted(glob.glob(os.path.join(ROOT, "corpus", "**", "*"), recursive=True)):
        if not os.path.isfile(path) or os.path.getsize(path) > 64 << 20:
            continue
        with open(path, "rb") as f:
            data = f.read()
        if "fuzz_inflate_diff" in path.split(os.sep):
            if len(data) > 1:
                found.add(data[1:MAX_SEED + 1])
        elif data[:4] == b"PK\x03\x04":
            found.update(zip_deflate_members(data))
    return sorted(found)


# zlib's and zlib-ng's own encoders, on the contents of corpus files: dynamic and fixed Huffman
# blocks, stored blocks, every strategy, the two encoders' block layouts
STRATEGIES = ("Z_DEFAULT_STRATEGY", "Z_FILTERED", "Z_HUFFMAN_ONLY", "Z_RLE", "Z_FIXED")


def encoded_seeds(mods, files=48, size=64 << 10):
    paths = [p for p in sorted(glob.glob(os.path.join(ROOT, "corpus", "peers", "**", "*"), recursive=True))
             if os.path.isfile(p)][:files]
    out = set()
    for i, path in enumerate(paths):
        with open(path, "rb") as f:
            data = f.read(size)
        for mod in mods:
            for level in (0, 1, 6, 9):
                st = STRATEGIES[(i + level) % len(STRATEGIES)]
                c = mod.compressobj(level, mod.DEFLATED, -15, 8, getattr(mod, st))
                out.add(c.compress(data) + c.flush())
    return sorted(out)


def mutate(rng, s, pool):
    b = bytearray(s)
    for _ in range(rng.randint(1, 4)):
        k = rng.randrange(9)
        if not b:
            b = bytearray(rng.randbytes(rng.randint(1, 8)))
            continue
        if k == 0:  # bit flips
            for _ in range(rng.randint(1, 8)):
                j = rng.randrange(len(b))
                b[j] ^= 1 << rng.randrange(8)
        elif k == 1:  # bytes set
            for _ in range(rng.randint(1, 4)):
                b[rng.randrange(len(b))] = rng.choice((0, 0xFF, 0x7F, 0x80, 1, rng.randrange(256)))
        elif k == 2:  # cut
            b = b[:rng.randrange(len(b) + 1)]
        elif k == 3:  # insertion
            j = rng.randrange(len(b) + 1)
            b[j:j] = rng.randbytes(rng.randint(1, 16))
        elif k == 4:  # deletion
            j = rng.randrange(len(b))
            del b[j:j + rng.randint(1, 16)]
        elif k == 5:  # duplication
            j = rng.randrange(len(b))
            n = rng.randint(1, 64)
            b[j:j] = b[j:j + n]
        elif k == 6:  # splice with another seed
            t = rng.choice(pool)
            b = b[:rng.randrange(len(b) + 1)] + t[rng.randrange(len(t) + 1):]
        elif k == 7:  # trailing bytes
            b += rng.randbytes(rng.randint(1, 8))
        else:  # block headers
            for _ in range(rng.randint(1, 4)):
                j = rng.randrange(min(32, len(b)))
                b[j] ^= 1 << rng.randrange(8)
    return bytes(b)


def run(mod, data, pushes, cap=CAP):
    """(verdict, output, end, message) of one inflater on a raw deflate stream."""
    d = mod.decompressobj(-15)
    out, total, off = [], 0, 0
    try:
        for n in pushes:
            buf = data[off:off + n]
            base = off
            off += n
            while buf:
                room = cap - total
                if room <= 0:
                    return "capped", b"".join(out), None, None
                o = d.decompress(buf, room)
                out.append(o)
                total += len(o)
                if d.eof:
                    return "end", b"".join(out), base + len(buf) - len(d.unused_data), None
                tail = d.unconsumed_tail
                if not o and len(tail) == len(buf):
                    break
                base += len(buf) - len(tail)
                buf = tail
            if total >= cap:
                return "capped", b"".join(out), None, None
    except mod.error as e:
        msg = str(e)
        return "invalid", b"".join(out), None, msg.split(": ", 1)[-1]
    return "more", b"".join(out), None, None


def classify(a, b):
    """None when the two runs agree, else the class of the disagreement."""
    (va, oa, ea, ma), (vb, ob, eb, mb) = a, b
    if va != vb:
        return "zlib %s%s / zlib-ng %s%s" % (va, " (%s)" % ma if ma else "", vb, " (%s)" % mb if mb else "")
    if va == "end" and ea != eb:
        return "both end, at different offsets"
    if va in ("end", "capped") and oa != ob:
        return "both %s, different output" % va
    m = min(len(oa), len(ob))
    if oa[:m] != ob[:m]:
        return "both %s, different output before it" % va
    return None


def pushes_for(rng, n):
    if rng.random() < 0.5:
        return [max(n, 1)]
    out, left = [], n
    while left > 0:
        k = rng.choice((1, 2, 3, 7, 64, 511, 4096, rng.randint(1, 300)))
        out.append(min(k, left))
        left -= k
    return out or [1]


def merge(paths):
    """The runs' JSON results (--json) added up: one summary for runs with different seeds."""
    tot = {"streams": 0, "cpu_seconds": 0.0, "differ": 0, "agree": {}, "classes": {}, "runs": []}
    for path in paths:
        with open(path) as f:
            r = json.load(f)
        tot["runs"].append({k: r[k] for k in ("seed", "streams", "cpu_seconds", "differ", "zlib", "zlib_ng", "python")})
        for k in ("streams", "cpu_seconds", "differ"):
            tot[k] += r[k]
        for d in ("agree", "classes"):
            for c, n in r[d].items():
                tot[d][c] = tot[d].get(c, 0) + n
    print("%d runs: %d mutated streams in %.1f CPU s, %d differ" % (
        len(paths), tot["streams"], tot["cpu_seconds"], tot["differ"]))
    print("agree: %s" % ", ".join("%s %d" % kv for kv in sorted(tot["agree"].items())))
    for c, n in sorted(tot["classes"].items(), key=lambda kv: -kv[1]):
        print("  %8d  %s" % (n, c))
    return tot


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--merge", nargs="+", metavar="JSON", help="add up the results of earlier runs and stop")
    ap.add_argument("--cpu-seconds", type=float, default=0)
    ap.add_argument("--count", type=int, default=0)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--out", default=os.path.join(ROOT, "build", "zlibng-diff"))
    ap.add_argument("--json")
    ap.add_argument("--examples", type=int, default=5, help="inputs kept for each class")
    ap.add_argument("--strict", action="store_true", help="count each class of disagreement as a failure")
    ap.add_argument("--progress", type=float, default=0, help="print the counts every S CPU seconds")
    a = ap.parse_args(argv)
    if a.merge:
        merge(a.merge)
        return 0
    try:
        from zlib_ng import zlib_ng
    except ImportError:
        print("inflate-diff-zlibng skipped: no zlib_ng module (pip install zlib-ng; make inflate-diff-zlibng)")
        print("inflate-diff-zlibng: 0 passed, 0 failed")
        return 0
    if not a.cpu_seconds and not a.count:
        a.count = 10000
    pool = seeds()
    n_corpus = len(pool)
    pool = sorted(set(pool) | set(encoded_seeds((zlib, zlib_ng))))
    if not pool:
        print("no deflate seeds under corpus/")
        print("inflate-diff-zlibng: 0 passed, 1 failed")
        return 1
    rng = random.Random(a.seed)
    os.makedirs(os.path.join(a.out, "examples"), exist_ok=True)
    classes, agree_kinds, kept, messages = {}, {}, {}, {}
    streams = 0
    t0 = time.process_time()
    last = t0
    # the seeds themselves first: real members, which both must inflate alike
    seed_bad = 0
    for s in pool:
        if classify(run(zlib, s, [len(s)]), run(zlib_ng, s, [len(s)])):
            seed_bad += 1
    def result():
        return {
            "zlib": zlib.ZLIB_RUNTIME_VERSION,
            "zlib_ng": getattr(zlib_ng, "ZLIBNG_VERSION", "?"),
            "python": sys.version.split()[0],
            "seed": a.seed,
            "seeds": len(pool),
            "seeds_from_corpus": n_corpus,
            "seeds_differing": seed_bad,
            "streams": streams,
            "cpu_seconds": round(time.process_time() - t0, 1),
            "agree": dict(agree_kinds),
            "differ": sum(classes.values()),
            "classes": dict(sorted(classes.items(), key=lambda kv: -kv[1])),
            "invalid_messages_differ": dict(sorted(messages.items(), key=lambda kv: -kv[1])),
        }

    while True:
        cpu = time.process_time() - t0
        if (a.count and streams >= a.count) or (a.cpu_seconds and cpu >= a.cpu_seconds):
            break
        data = mutate(rng, rng.choice(pool), pool)
        pushes = pushes_for(rng, len(data))
        rz = run(zlib, data, pushes)
        rn = run(zlib_ng, data, pushes)
        streams += 1
        c = classify(rz, rn)
        if c is None:
            agree_kinds[rz[0]] = agree_kinds.get(rz[0], 0) + 1
            if rz[0] == "invalid" and rz[3] != rn[3]:  # the same verdict, said otherwise
                k = "%s / %s" % (rz[3], rn[3])
                messages[k] = messages.get(k, 0) + 1
        else:
            classes[c] = classes.get(c, 0) + 1
            k = kept.setdefault(c, 0)
            if k < a.examples:
                kept[c] = k + 1
                with open(os.path.join(a.out, "examples", "%s-%d.deflate" % (
                        "".join(ch if ch.isalnum() else "_" for ch in c)[:80], k)), "wb") as f:
                    f.write(data)
        if a.progress and time.process_time() - last >= a.progress:
            last = time.process_time()
            print("%.0f CPU s: %d streams, %d differ" % (last - t0, streams, sum(classes.values())), flush=True)
            if a.json:  # what has run so far survives a run that is stopped
                write_json(a.json, result())
    res = result()
    differ = res["differ"]
    cpu = res["cpu_seconds"]
    if a.json:
        write_json(a.json, res)
    print("zlib %s against zlib-ng %s (Python %s): %d seeds (%d differ), %d mutated streams in %.1f CPU s" % (
        res["zlib"], res["zlib_ng"], res["python"], len(pool), seed_bad, streams, cpu))
    print("agree: %s" % ", ".join("%s %d" % kv for kv in sorted(agree_kinds.items())))
    print("differ: %d" % differ)
    for c, n in res["classes"].items():
        print("  %8d  %s" % (n, c))
    if messages:
        print("both invalid, with other messages (not a disagreement): %d" % sum(messages.values()))
        for c, n in res["invalid_messages_differ"].items():
            print("  %8d  %s" % (n, c))
    failed = (len(classes) if a.strict else 0) + seed_bad
    print("inflate-diff-zlibng: %d passed, %d failed" % (streams - differ, failed))
    return 1 if failed else 0


def write_json(path, res):
    with open(path + ".tmp", "w") as f:
        json.dump(res, f, indent=1)
        f.write("\n")
    os.replace(path + ".tmp", path)


if __name__ == "__main__":
    sys.exit(main())
