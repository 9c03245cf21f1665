#!/usr/bin/python3
"""The budgets of this round's issues, each a ratio of two commands timed in the same run,
interleaved (round by round), the median of each kept:

  policy      `check --policy` (dtype, shape and NaN/Inf checks) against plain `check`, on the
              stored archive of SIZE MiB: at most 1.2x
  sha256      hashing's own cost (`check --sha256` less plain `check`) as a throughput, against
              `openssl speed -evp sha256` (16 KiB blocks) on the same machine: at least 0.9x
  parallel    `check -P 2 --files-from` against `check --files-from` over 2,000 small archives:
              at least 1.7x faster
  inflate-threads  `check --inflate-threads 2` against `check` over the same 2,000 archives: within 1.1x

usage: make bench-round5 [SIZE=512]   (bench/round5.py --bin build/npzstream --size 512 [--rounds 7])
Prints a Markdown table for bench/README.md.
"""
import argparse, os, re, shutil, subprocess, sys, tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import interleaved  # noqa: E402


def openssl_sha256():
    """bytes/s of `openssl speed -evp sha256` at 16 KiB blocks."""
    r = subprocess.run(["openssl", "speed", "-seconds", "3", "-bytes", "16384", "-evp", "sha256"], capture_output=True,
                       text=True)
    m = re.search(r"^sha256\s+([\d.]+)k", r.stdout, re.M)
    if not m:
        sys.exit("bench: openssl speed printed no sha256 row: %s" % r.stdout[-500:])
    return float(m.group(1)) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--keep")
    a = ap.parse_args()
    b = os.path.abspath(a.bin)
    d = a.keep or tempfile.mkdtemp(prefix="npzs-bench5-")
    os.makedirs(d, exist_ok=True)
    stored = os.path.join(d, "stored.npz")
    if not os.path.exists(stored):
        subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, %r); import gen, numpy as np; "
                        "np.savez(%r, **gen.arrays(%d, 1))" % (HERE, stored, a.size)], check=True)
    pol = os.path.join(d, "policy.json")
    open(pol, "w").write('{"members": {"*": {"dtype": ["<f4"], "shape": ["*", 256], "finite": true}},'
                         ' "allow_blobs": false}')
    small = os.path.join(d, "small")
    if not os.path.isdir(small):
        os.makedirs(small)
        rng = np.random.default_rng(0)
        for i in range(2000):
            np.savez(os.path.join(small, "f%04d.npz" % i), a=rng.random(20), b=np.arange(i % 50))
    lst = os.path.join(d, "list.txt")
    open(lst, "w").write("".join(os.path.join(small, "f%04d.npz\n" % i) for i in range(2000)))
    size = os.path.getsize(stored)
    cat = "cat %s > /dev/null" % stored  # the page cache warm
    subprocess.run(cat, shell=True)
    big = interleaved({"check": "%s check -q %s" % (b, stored),
                       "policy": "%s check -q --policy %s %s" % (b, pol, stored),
                       "sha256": "%s check -q --sha256 %s" % (b, stored)}, a.rounds)
    ssl = openssl_sha256()
    many = interleaved({"check": "%s check -q --files-from %s" % (b, lst),
                        "P2": "%s check -q -P 2 --files-from %s" % (b, lst),
                        "j2": "%s check -q --inflate-threads 2 --files-from %s" % (b, lst)}, a.rounds)
    hash_rate = size / max(big["sha256"] - big["check"], 1e-9)
    rows = [
        ("`check --policy` (dtype, shape, finite) / `check`, %d MiB stored" % a.size, big["policy"] / big["check"],
         "<= 1.2", big["policy"] / big["check"] <= 1.2,
         "%.3f s / %.3f s" % (big["policy"], big["check"])),
        ("hashing (`--sha256` less `check`) / `openssl speed -evp sha256`", hash_rate / ssl, ">= 0.9", hash_rate / ssl >= 0.9,
         "%.2f GB/s / %.2f GB/s (`--sha256` %.3f s)" % (hash_rate / 1e9, ssl / 1e9, big["sha256"])),
        ("`check --files-from` / `check -P 2 --files-from`, 2,000 archives", many["check"] / many["P2"], ">= 1.7",
         many["check"] / many["P2"] >= 1.7, "%.3f s / %.3f s" % (many["check"], many["P2"])),
        ("`check --inflate-threads 2` / `check`, 2,000 archives", many["j2"] / many["check"], "<= 1.1",
         many["j2"] / many["check"] <= 1.1, "%.3f s / %.3f s" % (many["j2"], many["check"])),
    ]
    print("| ratio | measured | target | met | times (medians of %d interleaved rounds) |" % a.rounds)
    print("|---|---:|---|---|---|")
    for name, v, tgt, met, t in rows:
        print("| %s | %.2f | %s | %s | %s |" % (name, v, tgt, "yes" if met else "**no**", t))
    if not a.keep:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
