#!/usr/bin/python3
"""make bench: datasets, timings against the limits and the peers, peak RSS, callgrind counts.

    run.py --bin build/npzstream --limit build/bench/limit [--size MIB] [--rounds N] [--runs N]
           [--keep DIR] [--json OUT]

Datasets go to a fresh temporary directory ($TMPDIR or /tmp; removed unless --keep).  Every
dataset's commands are timed by hyperfine, --rounds times over (each round runs every command
--runs times, so rounds interleave the commands); a command's time is the median of all its
runs.  Ratios are throughputs relative to the dataset's limit row (limit time / time).
"""
import argparse, json, os, re, shutil, statistics, subprocess, sys, tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
PY = "/usr/bin/python3"
MANY = 20000


def sh(cmd, **kw):
    return subprocess.run(cmd, shell=True, check=True, **kw)


def hyperfine(cmds, rounds, runs, tmp, slow=()):
    """Medians over rounds; commands named in slow (seconds per run) run once per round."""
    times = {n: [] for n, _ in cmds}
    out = os.path.join(tmp, "hf.json")
    for r in range(rounds):
        for batch, nruns, warm in (([x for x in cmds if x[0] not in slow], runs, "1"),
                                   ([x for x in cmds if x[0] in slow], 1, "0")):
            if not batch:
                continue
            args = ["hyperfine", "--style", "none", "--warmup", warm, "--runs", str(nruns), "--export-json", out]
            for n, c in batch:
                args += ["-n", n, c]
            subprocess.run(args, check=True, stdout=subprocess.DEVNULL)
            for res in json.load(open(out))["results"]:
                times[res["command"]] += res["times"]
    return {n: statistics.median(t) for n, t in times.items()}


def peak_rss_kib(cmd):
    r = subprocess.run(["/usr/bin/time", "-v", "sh", "-c", cmd], capture_output=True, text=True)
    m = re.search(r"Maximum resident set size \(kbytes\): (\d+)", r.stderr)
    return int(m.group(1)) if m else -1


def private_peak_kib(cmd):
    """The largest RssAnon (private memory, KiB) /proc showed while cmd ran, read as often as this
    process can: a sample, not a bound (the peak may fall between two reads)."""
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    peak, path = 0, "/proc/%d/status" % p.pid
    while p.poll() is None:
        try:
            with open(path) as f:
                m = re.search(r"^RssAnon:\s+(\d+) kB", f.read(), re.M)
        except OSError:
            break
        if m:
            peak = max(peak, int(m.group(1)))
    if p.wait() != 0:
        sys.exit("bench: %s failed" % " ".join(cmd))
    return peak


def callgrind(cmd, tmp):
    """callgrind's instructions of cmd and its top functions.  A command that confines itself
    (every one that reads a file) must be given --no-sandbox: Landlock then refuses valgrind the
    writing of its output file (the sandbox's cost is once a process: differences hold)."""
    out = os.path.join(tmp, "cg.out")
    subprocess.run(["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out] + cmd,
                   capture_output=True, text=True, check=True)
    ann = subprocess.run(["callgrind_annotate", "--inclusive=no", "--auto=no", out],
                         capture_output=True, text=True).stdout
    total, top = 0, []
    for line in ann.splitlines():
        if "Auto-annotated source" in line:
            break
        m = re.match(r"\s*([\d,]+) \(\s*[\d.]+%\)\s+(PROGRAM TOTALS|\S.*)$", line)
        if not m:
            continue
        n = int(m.group(1).replace(",", ""))
        if m.group(2) == "PROGRAM TOTALS":
            total = n
        else:
            name = m.group(2).split(":")[-1].split(" ")[0]
            if name.startswith("0x"):
                name = "libz(no symbols)" if "libz" in m.group(2) else "?"
            top.append((n, name))
    merged = {}
    for n, name in top:  # inlined parts of one function appear as several lines
        merged[name] = merged.get(name, 0) + n
    return total, sorted(((n, f) for f, n in merged.items()), reverse=True)[:6]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--limit", default=os.path.join(ROOT, "build", "bench", "limit"))
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep")
    ap.add_argument("--json")
    ap.add_argument("--no-callgrind", action="store_true")
    a = ap.parse_args()
    npzs, lim = os.path.abspath(a.bin), os.path.abspath(a.limit)
    have_ld = subprocess.run([lim, "crc-libdeflate", "/dev/null"], capture_output=True).returncode == 0
    for tool in ("hyperfine", "bsdtar", "unzip", "valgrind"):
        if not shutil.which(tool):
            sys.exit("bench: %s is missing (see bench/README.md)" % tool)
    base = os.environ.get("TMPDIR", "/tmp")
    free = shutil.disk_usage(base).free >> 20
    if free < 4 * a.size + 512:
        sys.exit("bench: %s has %d MiB free, %d needed" % (base, free, 4 * a.size + 512))
    tmp = a.keep or tempfile.mkdtemp(prefix="npzs-bench-", dir=base)
    try:
        return run(a, npzs, lim, have_ld, tmp)
    finally:
        if not a.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def run(a, npzs, lim, have_ld, tmp):
    d = os.path.join(tmp, "data")
    print("bench: generating %d MiB datasets in %s" % (a.size, d), flush=True)
    sh("%s %s %s %d" % (PY, os.path.join(HERE, "gen.py"), d, a.size))
    F = {k: os.path.join(d, k) for k in ("stored.npz", "pipe.npz", "big.npy", "deflated.npz", "many.npz", "tiny.npz")}
    for f in F.values():
        sh("cat %s > /dev/null" % f)  # page cache
    npload = "%s %s" % (PY, os.path.join(HERE, "npload.py"))
    ck = "%s check" % npzs

    def zipcmds(f):
        return [("np.load", "%s %s" % (npload, f)), ("bsdtar -xOf FILE", "bsdtar -xOf %s > /dev/null" % f),
                ("unzip -tq", "unzip -tq %s > /dev/null" % f)]

    have_isal = subprocess.run([lim, "crc-isal", "/dev/null"], capture_output=True).returncode == 0
    crcs = [("limit: read-discard", "%s read %s" % (lim, F["stored.npz"])),
            ("limit: zlib crc32", "%s crc-zlib %s" % (lim, F["stored.npz"])),
            ("limit: fastest crc32", "%s crc-fast %s" % (lim, F["stored.npz"]))]
    if have_ld:
        crcs.append(("limit: libdeflate crc32", "%s crc-libdeflate %s" % (lim, F["stored.npz"])))
    if have_isal:
        crcs.append(("limit: ISA-L crc32", "%s crc-isal %s" % (lim, F["stored.npz"])))
    fast = ([("npzstream --lenient-fast-inflate", "%s --lenient-fast-inflate %s" % (ck, F["deflated.npz"])),
             ("limit: ISA-L inflate+crc", "%s inflate-isal %s" % (lim, F["deflated.npz"]))] if have_isal else [])
    groups = [
        ("stored.npz (file)", "stored.npz", "limit: fastest crc32",
         [("npzstream", "%s %s" % (ck, F["stored.npz"])),
          ("npzstream --feed 4096", "%s --feed 4096 %s" % (ck, F["stored.npz"]))] + crcs + zipcmds(F["stored.npz"])),
        ("stored.npz (pipe)", "stored.npz", "limit: cat | read-discard",
         [("cat | npzstream", "cat %s | %s -" % (F["stored.npz"], ck)),
          ("limit: cat | read-discard", "cat %s | %s read -" % (F["stored.npz"], lim)),
          ("limit: cat | fastest crc32", "cat %s | %s crc-fast -" % (F["stored.npz"], lim)),
          ("cat | bsdtar -xOf -", "cat %s | bsdtar -xOf - > /dev/null" % F["stored.npz"])]),
        ("pipe.npz (descriptors)", "pipe.npz", "limit: cat | read-discard",
         [("npzstream", "%s %s" % (ck, F["pipe.npz"])),
          ("cat | npzstream", "cat %s | %s -" % (F["pipe.npz"], ck)),
          ("limit: fastest crc32", "%s crc-fast %s" % (lim, F["pipe.npz"])),
          ("limit: cat | read-discard", "cat %s | %s read -" % (F["pipe.npz"], lim)),
          ("cat | bsdtar -xOf -", "cat %s | bsdtar -xOf - > /dev/null" % F["pipe.npz"])] + zipcmds(F["pipe.npz"])),
        ("big.npy", "big.npy", "limit: read-discard",
         [("npzstream", "%s %s" % (ck, F["big.npy"])),
          ("npzstream --feed 4096", "%s --feed 4096 %s" % (ck, F["big.npy"])),
          ("limit: read-discard", "%s read %s" % (lim, F["big.npy"])),
          ("limit: fastest crc32", "%s crc-fast %s" % (lim, F["big.npy"])),
          ("cat | npzstream", "cat %s | %s -" % (F["big.npy"], ck)),
          ("limit: cat | read-discard", "cat %s | %s read -" % (F["big.npy"], lim)),
          ("np.load", "%s %s" % (npload, F["big.npy"]))]),
        ("deflated.npz", "deflated.npz", "limit: inflate+crc",
         [("npzstream", "%s %s" % (ck, F["deflated.npz"])),
          ("npzstream --feed 4096", "%s --feed 4096 %s" % (ck, F["deflated.npz"])),
          ("npzstream -j 2", "%s -j 2 %s" % (ck, F["deflated.npz"])),
          ("cat | npzstream", "cat %s | %s -" % (F["deflated.npz"], ck)),
          ("limit: inflate+crc", "%s inflate %s" % (lim, F["deflated.npz"]))] + fast + zipcmds(F["deflated.npz"])),
        ("many.npz (20,000 members)", "many.npz", None,
         [("npzstream", "%s %s" % (ck, F["many.npz"])),
          ("cat | npzstream", "cat %s | %s -" % (F["many.npz"], ck)),
          ("limit: read-discard", "%s read %s" % (lim, F["many.npz"]))] + zipcmds(F["many.npz"])),
        ("tiny.npz", "tiny.npz", None,
         [("npzstream", "%s %s" % (ck, F["tiny.npz"])),
          ("cat | npzstream", "cat %s | %s -" % (F["tiny.npz"], ck)),
          ("limit: read-discard", "%s read %s" % (lim, F["tiny.npz"]))] + zipcmds(F["tiny.npz"])),
    ]
    results = {"size_mib": a.size, "groups": []}
    lines = []
    for title, key, ref, cmds in groups:
        print("bench: timing %s (%d commands)" % (title, len(cmds)), flush=True)
        rounds, runs = a.rounds, a.runs
        if key == "tiny.npz" or key == "many.npz":
            runs *= 10
        med = hyperfine(cmds, rounds, runs, tmp, slow=("np.load",) if key == "many.npz" else ())
        size = os.path.getsize(F[key])
        rows = []
        for n, _ in cmds:
            t = med[n]
            row = {"name": n, "median_s": t, "gbps": size / t / 1e9}
            if ref:
                row["ratio"] = med[ref] / t
            rows.append(row)
        results["groups"].append({"title": title, "file": key, "bytes": size, "ref": ref, "rows": rows})
    # per member: (many - tiny) / 20000, for each tool present in both
    g = {x["file"]: {r["name"]: r for r in x["rows"]} for x in results["groups"]}
    per = {n: (g["many.npz"][n]["median_s"] - g["tiny.npz"][n]["median_s"]) / MANY * 1e6
           for n in g["many.npz"] if n in g["tiny.npz"]}
    results["per_member_us"] = per
    # peak RSS
    print("bench: peak RSS", flush=True)
    rss = {}
    for k, f in F.items():
        rss[k] = {"npzstream": peak_rss_kib("%s %s > /dev/null" % (ck, f)),
                  "npzstream: private (sampled)": private_peak_kib(ck.split() + [f]),
                  "cat | npzstream": peak_rss_kib("cat %s | %s - > /dev/null" % (f, ck))}
        rss[k]["np.load"] = peak_rss_kib("%s %s > /dev/null" % (npload, f))
    results["rss_kib"] = rss
    # callgrind on a fixed 16 MiB set: repeatable instruction counts
    cg = {}
    if not a.no_callgrind:
        print("bench: callgrind (16 MiB datasets)", flush=True)
        d16 = os.path.join(tmp, "cg")
        sh("%s %s %s 16" % (PY, os.path.join(HERE, "gen.py"), d16))
        base, _ = callgrind([npzs, "check", "--no-sandbox", os.path.join(d16, "tiny.npz")], tmp)
        for k, denom, unit in (("stored.npz", None, "byte"), ("big.npy", None, "byte"), ("deflated.npz", "out", "output byte"),
                               ("many.npz", MANY, "member"), ("mixed.npz", MANY, "member")):
            f = os.path.join(d16, k)
            tot, top = callgrind([npzs, "check", "--no-sandbox", f], tmp)
            n = denom if isinstance(denom, int) else (16 << 19 if denom == "out" else os.path.getsize(f))
            cg[k] = {"ir": tot, "per": (tot - base) / n, "unit": unit, "top": top}
        for mode, k, n in (("crc-fast", "stored.npz", None), ("crc-zlib", "stored.npz", None), ("read", "stored.npz", None),
                           ("inflate", "deflated.npz", 16 << 19)):
            f = os.path.join(d16, k)
            tot, top = callgrind([lim, mode, f], tmp)
            cg["limit " + mode] = {"ir": tot, "per": tot / (n or os.path.getsize(f)),
                                   "unit": "output byte" if n else "byte", "top": top}
    results["callgrind"] = cg
    report(results)
    if a.json:
        json.dump(results, open(a.json, "w"), indent=1)
    return 0


def md(s):
    return s.replace("|", "\\|")


def report(R):
    out = []
    out.append("Datasets of %d MiB; medians of all runs; GB/s = file bytes / time; ratio = limit time / time."
               % R["size_mib"])
    out.append("")
    out.append("| dataset | command | median | GB/s | ratio to limit |")
    out.append("|---|---|---:|---:|---:|")
    for g in R["groups"]:
        for r in g["rows"]:
            ratio = "%.2f" % r["ratio"] if "ratio" in r else ""
            if r["name"] == g["ref"]:
                ratio = "**limit**"
            t = r["median_s"]
            ts = "%.1f ms" % (t * 1e3) if t >= 0.01 else "%.2f ms" % (t * 1e3)
            out.append("| %s | %s | %s | %.2f | %s |" % (g["title"], md(r["name"]), ts, r["gbps"], ratio))
    out.append("")
    out.append("Per member ((many.npz - tiny.npz) / 20,000): " +
               ", ".join("%s %.2f µs" % (n, v) for n, v in R["per_member_us"].items()))
    out.append("")
    out.append("| peak RSS (KiB) | " + " | ".join(R["rss_kib"]) + " |")
    rssrows = []
    out.append("|---|" + "---:|" * len(R["rss_kib"]))
    for tool in ("npzstream", "npzstream: private (sampled)", "cat | npzstream", "np.load"):
        out.append("| %s | " % md(tool) + " | ".join(str(R["rss_kib"][k][tool]) for k in R["rss_kib"]) + " |")
    if R["callgrind"]:
        out.append("")
        out.append("| callgrind (16 MiB set) | instructions | per unit | top functions (self) |")
        out.append("|---|---:|---:|---|")
        for k, c in R["callgrind"].items():
            top = ", ".join("%s %.0f%%" % (f, 100.0 * n / c["ir"]) for n, f in c["top"][:4])
            out.append("| %s | %s | %.3f / %s | %s |" % (k, format(c["ir"], ","), c["per"], c["unit"], top))
    # targets
    g = {x["file"] + ("|pipe" if "(pipe)" in x["title"] else ""): {r["name"]: r for r in x["rows"]} for x in R["groups"]}
    t = []
    def tgt(name, val, ok, fmt):
        t.append("| %s | %s | %s |" % (md(name), fmt % val, "met" if ok else "**not met**"))
    v = g["stored.npz"]["npzstream"]["ratio"]; tgt("stored .npz from a file >= 0.9x fastest CRC pass", v, v >= 0.9, "%.2f")
    v = g["big.npy"]["npzstream"]["ratio"]; tgt(".npy from a file >= 0.9x read-discard", v, v >= 0.9, "%.2f")
    v = g["stored.npz|pipe"]["cat | npzstream"]["ratio"]; tgt("stored .npz through a pipe >= 0.9x cat | read-discard", v, v >= 0.9, "%.2f")
    v = g["pipe.npz"]["cat | npzstream"]["ratio"]; tgt("pipe.npz through a pipe >= 0.9x cat | read-discard", v, v >= 0.9, "%.2f")
    v = g["deflated.npz"]["npzstream"]["ratio"]; tgt("deflated .npz >= 0.95x inflate+crc", v, v >= 0.95, "%.2f")
    v = g["deflated.npz"]["npzstream -j 2"]["ratio"]; tgt("deflated .npz -j 2 >= 1.8x inflate+crc", v, v >= 1.8, "%.2f")
    pm = R["per_member_us"]
    tgt("20,000 members <= 0.5 µs per member", pm["npzstream"], pm["npzstream"] <= 0.5, "%.2f µs")
    v = pm["np.load"] / pm["npzstream"] if pm["npzstream"] > 0 else float("inf")
    tgt(">= 500x ahead of np.load per member", v, v >= 500, "%.0fx")
    for k in ("stored.npz", "big.npy", "deflated.npz"):
        v = g[k]["npzstream"]["median_s"] / g[k]["npzstream --feed 4096"]["median_s"]
        tgt("4 KiB feeds >= 0.9x 1 MiB feeds (%s)" % k, v, v >= 0.9, "%.2f")
    # read from a pipe, all of the process's memory is its own; a file larger than one read is
    # mapped (0.8.0), and the page cache's pages it maps count in RSS while they are (up to a
    # 2 MiB folio): shown, with the private part, but not judged
    m = max(r["cat | npzstream"] for r in R["rss_kib"].values())
    tgt("peak RSS of npzstream <= 4 MiB on every dataset (read from a pipe)", m / 1024.0, m <= 4096, "%.1f MiB")
    m = max(r["npzstream: private (sampled)"] for r in R["rss_kib"].values())
    tgt("private memory of npzstream <= 4 MiB on every dataset (from a file, sampled)", m / 1024.0, m <= 4096,
        "%.1f MiB")
    out.append("")
    out.append("| target | measured | |")
    out.append("|---|---:|---|")
    out += t
    print("\n".join(out))


if __name__ == "__main__":
    sys.exit(main())
