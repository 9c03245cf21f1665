#!/usr/bin/python3
"""make bench-hashflood: does a crafted set of member names slow the duplicate-name table down?

    hashflood.py --bin build/npzstream --tool build/bench/hashflood [--members N] [--runs N]

Builds two stored archives of N tiny members (default 10,000): one whose names all fall on one
slot of the table npzstream 0.1.0 used (FNV-1a from a predictable seed, linear probing: each
insertion then probes every earlier name), one with random names.  Reports `npzstream check`'s
time (median of --runs) and, when valgrind is installed, its instruction count on both, the
ratio flood/random (the target is <= 2: a keyed hash cannot be flooded), and for reference the
probes the 0.1.0 table made on the same two name sets.
"""
import argparse, io, os, random, re, shutil, statistics, subprocess, sys, tempfile, time, zipfile

NPY = b"\x93NUMPY\x01\x00v\x00" + ("{'descr': '|u1', 'fortran_order': False, 'shape': (0,), }".ljust(117) + "\n").encode()


def archive(path, names):
    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED) as z:
        for n in names:
            z.writestr(n, NPY)


def timed(cmd, runs):
    ts = []
    for _ in range(runs):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def instructions(cmd):
    if not shutil.which("valgrind"):
        return None
    r = subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=/dev/null"] + cmd,
                       capture_output=True, text=True)
    m = re.search(r"Collected : (\d+)", r.stderr)
    return int(m.group(1)) if m else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--tool", default="build/bench/hashflood")
    ap.add_argument("--members", type=int, default=10000)
    ap.add_argument("--runs", type=int, default=7)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="npzs-flood-") as tmp:
        flood = subprocess.run([a.tool, "names", str(a.members), "0"], check=True, capture_output=True,
                               text=True).stdout.split()
        rng = random.Random(1)
        rand = ["r%012x.npy" % rng.getrandbits(48) for _ in range(a.members)]
        rows = []
        for tag, names in (("flood", flood), ("random", rand)):
            path = os.path.join(tmp, tag + ".npz")
            archive(path, names)
            lst = os.path.join(tmp, tag + ".txt")
            open(lst, "w").write("\n".join(names) + "\n")
            # unconfined: the sandbox refuses valgrind its output file (its cost is once a run)
            cmd = [a.bin, "check", "--no-sandbox", "--max-members", str(a.members), path]
            old = int(subprocess.run([a.tool, "old", lst], check=True, capture_output=True, text=True).stdout)
            rows.append((tag, timed(cmd, a.runs), instructions(cmd), old))
        print("%-8s %12s %16s %22s" % ("names", "check (s)", "instructions", "0.1.0 table: probes"))
        for tag, t, ins, old in rows:
            print("%-8s %12.4f %16s %22d" % (tag, t, ins if ins is not None else "-", old))
        (_, tf, inf, of), (_, tr, inr, orr) = rows
        print("flood / random: time %.2fx%s; the 0.1.0 table probed %.0fx as often"
              % (tf / tr, ", instructions %.3fx" % (inf / inr) if inf and inr else "", of / max(orr, 1)))
        print("target: flood / random <= 2: %s" % ("met" if (inf / inr if inf and inr else tf / tr) <= 2 else "NOT met"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
