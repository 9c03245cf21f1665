#!/usr/bin/python3
"""The budgets of the parallel helper and of -P, each a ratio of two commands timed in the same
run, interleaved (round by round), the median of each kept; peak RSS from /usr/bin/time:

  -P 2        `check -P 2 --files-from` against `check --files-from` over 2,000 small archives
              (np.savez_compressed of 100 KB of float32 each): at least 1.7x faster; also shown on
              2,000 tiny ones (two arrays of 20 and up to 50 values), where the kernel's open and
              read are the work
  -j 2 small  `check -j 2 --files-from` against `check --files-from` over the same 2,000 (and the
              2,000 tiny): within 1.1x (no thread starts: no member is large enough)
  -j 2 RSS    peak RSS of `check -j 2` against `check -j 1` on an archive of 200 deflated
              members under 1 MiB each: within 1 MiB
  -j 2 big    `check -j 2` on the deflated archive of SIZE/2 MiB of data (bench/gen.py's
              deflated.npz) against the bare zlib inflate + CRC-32 of its members (bench/limit
              inflate): at least 1.8x; peak RSS of -j 1, -j 2 and -j 2 --inflate-memory 64Mi

usage: make bench-round6 [SIZE=512]   (bench/round6.py --bin build/npzstream --limit build/bench/limit)
Prints a Markdown table for bench/README.md.
"""
import argparse, os, shutil, subprocess, sys, tempfile

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from timing import interleaved  # noqa: E402


def rss_kib(cmd, runs=3):
    """The smallest peak RSS of a few runs (the others are noise from the page cache)."""
    best = None
    for _ in range(runs):
        r = subprocess.run("/usr/bin/time -f %%M %s" % cmd, shell=True, stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
        v = int(r.stderr.strip().splitlines()[-1])
        best = v if best is None else min(best, v)
    return best


def files(d, name, n, make):
    sub = os.path.join(d, name)
    if not os.path.isdir(sub):
        os.makedirs(sub)
        rng = np.random.default_rng(0)
        for i in range(n):
            make(os.path.join(sub, "f%04d.npz" % i), rng, i)
    lst = os.path.join(d, name + ".txt")
    open(lst, "w").write("".join(os.path.join(sub, "f%04d.npz\n" % i) for i in range(n)))
    subprocess.run("cat %s/* > /dev/null" % sub, shell=True)
    return lst


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--limit", default="build/bench/limit")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--keep")
    a = ap.parse_args()
    b, lim = os.path.abspath(a.bin), os.path.abspath(a.limit)
    d = a.keep or tempfile.mkdtemp(prefix="npzs-bench6-")
    os.makedirs(d, exist_ok=True)
    small = files(d, "small", 2000, lambda p, rng, i: np.savez_compressed(
        p, a=np.round(rng.random(25000), 2).astype("f4"), b=np.arange(i % 50)))
    tiny = files(d, "tiny", 2000, lambda p, rng, i: np.savez(p, a=rng.random(20), b=np.arange(i % 50)))
    under = os.path.join(d, "under1mib.npz")
    if not os.path.exists(under):
        rng = np.random.default_rng(3)
        np.savez_compressed(under, **{"m%03d" % i: rng.integers(0, 64, 200_000).astype("f4") for i in range(200)})
    big = os.path.join(d, "data", "deflated.npz")
    if not os.path.exists(big):
        subprocess.run([sys.executable, os.path.join(HERE, "gen.py"), os.path.join(d, "data"), str(a.size)], check=True)
    subprocess.run("cat %s %s > /dev/null" % (under, big), shell=True)

    rows = []
    for name, lst in (("2,000 small archives", small), ("2,000 tiny archives", tiny)):
        t = interleaved({"one": "%s check -q --files-from %s" % (b, lst),
                         "P2": "%s check -q -P 2 --files-from %s" % (b, lst),
                         "j2": "%s check -q -j 2 --files-from %s" % (b, lst)}, a.rounds)
        p = t["one"] / t["P2"]
        rows.append(("`check --files-from` / `check -P 2 --files-from`, %s" % name, "%.2f" % p,
                     ">= 1.7" if "small" in name else "(shown)", "yes" if p >= 1.7 else ("**no**" if "small" in name else "-"),
                     "%.3f s / %.3f s" % (t["one"], t["P2"])))
        j = t["j2"] / t["one"]
        rows.append(("`check -j 2 --files-from` / `check --files-from`, %s" % name, "%.2f" % j, "<= 1.1",
                     "yes" if j <= 1.1 else "**no**", "%.3f s / %.3f s" % (t["j2"], t["one"])))
    r1, r2 = rss_kib("%s check -q -j 1 %s" % (b, under)), rss_kib("%s check -q -j 2 %s" % (b, under))
    rows.append(("peak RSS `check -j 2` less `check -j 1`, 200 deflated members of 800 KB", "%+d KiB" % (r2 - r1),
                 "<= 1024 KiB", "yes" if r2 - r1 <= 1024 else "**no**", "%d KiB / %d KiB" % (r2, r1)))
    t = interleaved({"zlib": "%s inflate %s" % (lim, big), "j2": "%s check -q -j 2 %s" % (b, big),
                     "j1": "%s check -q %s" % (b, big)}, a.rounds)
    x = t["zlib"] / t["j2"]
    rows.append(("bare zlib inflate + CRC-32 / `check -j 2`, deflated.npz (%d MiB)" % (os.path.getsize(big) >> 20),
                 "%.2f" % x, ">= 1.8", "yes" if x >= 1.8 else "**no**",
                 "%.3f s / %.3f s (`check` alone %.3f s)" % (t["zlib"], t["j2"], t["j1"])))
    m1 = rss_kib("%s check -q %s" % (b, big))
    m2 = rss_kib("%s check -q -j 2 %s" % (b, big))
    m3 = rss_kib("%s check -q -j 2 --inflate-memory 64Mi %s" % (b, big))
    rows.append(("peak RSS, deflated.npz: `check`, `-j 2`, `-j 2 --inflate-memory 64Mi`", "%d / %d / %d MiB" % (
        m1 >> 10, m2 >> 10, m3 >> 10), "(documented)", "-", "%+d MiB a worker" % ((m2 - m1) / 2 / 1024)))
    print("| ratio | measured | target | met | times (medians of %d interleaved rounds) |" % a.rounds)
    print("|---|---:|---|---|---|")
    for r in rows:
        print("| %s |" % " | ".join(r))
    if not a.keep:
        shutil.rmtree(d)


if __name__ == "__main__":
    main()
