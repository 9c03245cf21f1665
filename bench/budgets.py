#!/usr/bin/python3
"""The command line's fixed costs against their budgets (issue 44; bench/README.md, "Start-up, a
member, a plain .npy"):

  npy      `check` of a plain .npy of SIZE MiB (bench/gen.py's big.npy) against `limit read`
           (read-discard: the floor) in the same hyperfine run, rounds interleaved, medians of all
           runs as bench/run.py takes them: at most 1.11x its time.  Wall time: only an idle
           machine gives the figure its meaning, so the load average is printed before and after,
           and the ratio of CPU times (user + system, medians of interleaved runs) beside it.
  member   callgrind's instructions a member: (`check` of many.npz - `check` of tiny.npz) / 20,000
           (bench/gen.py's 20,000 members of 16 float32): at most 2,000.  Exact on a loaded machine.
           Run with --no-sandbox: the sandbox's Landlock rules refuse valgrind the writing of its
           output file; it costs the same in both runs (once a process), so the difference holds.
  rss      peak RSS (/usr/bin/time -v) of `check` of tiny.npz and of a small .npy (100 KiB: less
           than one read), nothing hashed: at most 2.5 MiB, as a user runs it (confined: the
           sandbox's cost included); --no-sandbox beside it.  The SIZE MiB .npy is shown, not
           judged: a file larger than one read is mapped (cli/run.c, map_whole), and the page
           cache's pages mapped count in RSS while they are (a large folio is mapped whole: up to
           2 MiB of them); its private memory (RssAnon, sampled from /proc while it runs) beside.
           Also shown: many.npz, `--sha256` (libcrypto is loaded when a hash is asked for), the
           start-up's instructions (`check` of tiny.npz) and the libraries a run loads
           (LD_DEBUG=files).

usage: make bench-budgets [SIZE=512] [BENCH_ARGS="--rounds 10 --keep DIR --base OLD/npzstream"]
  (bench/budgets.py --bin build/npzstream --limit build/bench/limit --size 512)
--base BIN measures an earlier build in the same run (every figure, both binaries).
Prints Markdown tables for bench/README.md.
"""
import argparse, os, re, shutil, statistics, subprocess, sys, tempfile, time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen  # noqa: E402
from run import callgrind, hyperfine, peak_rss_kib, private_peak_kib  # noqa: E402

MANY = 20000
BUDGET_NPY, BUDGET_MEMBER, BUDGET_RSS_KIB = 1.11, 2000, 2560


def cpu_times(cmds, rounds):
    """{name: median CPU seconds (user + system) of a run}: every command once a round, in turns."""
    t = {n: [] for n, _ in cmds}
    for r in range(rounds + 1):
        for n, c in cmds[r % len(cmds):] + cmds[:r % len(cmds)]:
            p = subprocess.Popen(c, shell=True, stdout=subprocess.DEVNULL)
            _, status, ru = os.wait4(p.pid, 0)
            p.returncode = os.waitstatus_to_exitcode(status)
            if p.returncode != 0:
                sys.exit("bench: %s failed (exit %d)" % (c, p.returncode))
            if r:  # the first round warms the page cache up
                t[n].append(ru.ru_utime + ru.ru_stime)
    return {n: statistics.median(v) for n, v in t.items()}


def loaded_libraries(binary, args):
    """The shared libraries a run loads, as the run-time linker tells (name: how)."""
    r = subprocess.run([binary] + args, env=dict(os.environ, LD_DEBUG="files"), capture_output=True, text=True)
    libs = {}
    for m in re.finditer(r"file=(\S+) \[0\];\s+(needed by|dynamically loaded by)", r.stderr):
        libs.setdefault(m.group(1), "at start" if m.group(2) == "needed by" else "on demand")
    return libs


def unconfined(binary):
    """--no-sandbox where the build has the option (an earlier build, as --base, may not)."""
    r = subprocess.run([binary, "check", "--no-sandbox", "--help"], capture_output=True)
    return ["--no-sandbox"] if r.returncode == 0 else []


def load():
    return "%.2f %.2f %.2f" % os.getloadavg()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(os.path.dirname(HERE), "build", "npzstream"))
    ap.add_argument("--limit", default=os.path.join(os.path.dirname(HERE), "build", "bench", "limit"))
    ap.add_argument("--base", help="an earlier build of npzstream, measured in the same run")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--keep")
    a = ap.parse_args()
    for tool in ("hyperfine", "valgrind", "callgrind_annotate"):
        if not shutil.which(tool):
            sys.exit("bench: %s is missing (bench/README.md)" % tool)
    if not os.path.exists("/usr/bin/time"):
        sys.exit("bench: /usr/bin/time is missing (Debian: time)")
    bins = [("now", os.path.abspath(a.bin))] + ([("base", os.path.abspath(a.base))] if a.base else [])
    lim = os.path.abspath(a.limit)
    d = a.keep or tempfile.mkdtemp(prefix="npzs-budgets-")
    os.makedirs(d, exist_ok=True)
    try:
        return run(a, bins, lim, d)
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)


def run(a, bins, lim, d):
    npy = os.path.join(d, "big-%d.npy" % a.size)
    if not os.path.exists(npy):
        gen.big_npy(npy, a.size, np.random.default_rng(2))
    if not os.path.exists(os.path.join(d, "tiny.npz")):
        gen.small_ones(d)
    many, mixed, tiny = (os.path.join(d, f) for f in ("many.npz", "mixed.npz", "tiny.npz"))
    small = os.path.join(d, "small.npy")
    if not os.path.exists(small):
        np.save(small, np.arange(25000, dtype="<f4"))  # 100 KiB: one read, never mapped
    out = ["`bench/budgets.py --size %d --rounds %d`%s; load average %s at the start" % (
        a.size, a.rounds, " (the build `%s` as base)" % bins[1][1] if len(bins) > 1 else "", load())]

    # npy: the budget's figure (hyperfine, as bench/run.py), and CPU times beside it
    subprocess.run("cat %s > /dev/null" % npy, shell=True, check=True)
    cmds = [("limit: read-discard", "%s read %s" % (lim, npy))] + [
        ("npzstream %s" % n, "%s check %s" % (b, npy)) for n, b in bins]
    wall = hyperfine(cmds, a.rounds, a.runs, d)
    cpu = cpu_times(cmds, a.rounds)
    out += ["", "| %d MiB .npy | median (hyperfine) | / read-discard | CPU (user + system) | / read-discard |" % a.size,
            "|---|---:|---:|---:|---:|"]
    for n, _ in cmds:
        out.append("| %s | %.1f ms | %.3f | %.1f ms | %.3f |" % (
            n, wall[n] * 1e3, wall[n] / wall[cmds[0][0]], cpu[n] * 1e3, cpu[n] / cpu[cmds[0][0]]))
    out.append("")
    out.append("load average %s after the timings" % load())

    # member: callgrind
    per = {}
    out += ["", "| callgrind | start-up (tiny.npz) | many.npz | a member | `-q`: a member | mixed.npz: a member |",
            "|---|---:|---:|---:|---:|---:|"]
    for n, b in bins:
        check = [b, "check"] + unconfined(b)
        t0, _ = callgrind(check + [tiny], d)
        tm, _ = callgrind(check + [many], d)
        tq0, _ = callgrind(check + ["-q", tiny], d)
        tq, _ = callgrind(check + ["-q", many], d)
        tx, _ = callgrind(check + [mixed], d)
        per[n] = (tm - t0) / MANY
        out.append("| %s | %s | %s | **%.0f** | %.0f | %.0f |" % (
            n, format(t0, ","), format(tm, ","), per[n], (tq - tq0) / MANY, (tx - t0) / MANY))

    # rss
    rss = {}
    out += ["", "| peak RSS (KiB) | tiny.npz | small .npy | many.npz | tiny.npz `--sha256` | tiny.npz, small .npy "
            "`--no-sandbox` | %d MiB .npy (mapped): RSS; private (sampled) | libraries loaded (check of tiny.npz) |"
            % a.size, "|---|---:|---:|---:|---:|---:|---:|---|"]
    for n, b in bins:
        off = " ".join(unconfined(b))
        r = [min(peak_rss_kib("%s check %s%s > /dev/null" % (b, o, f)) for _ in range(3))
             for o, f in (("", tiny), ("", small), ("", many), ("--sha256 ", tiny), (off + " ", tiny), (off + " ", small),
                          ("", npy))]
        anon = min(private_peak_kib([b, "check", npy]) for _ in range(3))
        rss[n] = max(r[0], r[1])
        libs = loaded_libraries(b, ["check", tiny])
        out.append("| %s | %d | %d | %d | %d | %d, %d | %d; %d | %s |" % ((n,) + tuple(r) + (anon, ", ".join(
            "%s (%s)" % (k, v) for k, v in libs.items() if k != "libc.so.6"),)))

    now = "now"
    w = wall["npzstream now"] / wall["limit: read-discard"]
    busy = os.getloadavg()[0] > 0.5 * (os.cpu_count() or 1)  # a wall-time ratio then says little
    out += ["", "| budget | measured | |", "|---|---:|---|",
            "| .npy <= %.2fx read-discard's time (wall; CPU time ratio beside) | %.3fx (CPU %.3fx) | %s%s |" % (
                BUDGET_NPY, w, cpu["npzstream now"] / cpu["limit: read-discard"],
                "met" if w <= BUDGET_NPY else "**not met**", " on a loaded machine: to be confirmed idle" if busy else ""),
            "| <= %d instructions a member (callgrind) | %.0f | %s |" % (
                BUDGET_MEMBER, per[now], "met" if per[now] <= BUDGET_MEMBER else "**not met**"),
            "| peak RSS <= %d KiB, small .npz and .npy (tiny.npz, small .npy), nothing hashed | %d KiB | %s |" % (
                BUDGET_RSS_KIB, rss[now], "met" if rss[now] <= BUDGET_RSS_KIB else "**not met**")]
    out.append("")
    out.append("(%s)" % time.strftime("%d %B %Y, %H:%M"))
    print("\n".join(out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
