"""Timing for the budget scripts (round5.py, round6.py): commands timed in the same run,
interleaved round by round, the median of each kept."""
import statistics, subprocess, sys, time


def timed(cmd):
    """Seconds of one run of the shell command (its exit status 0 or 1: a verdict)."""
    t0 = time.perf_counter()
    r = subprocess.run(cmd, shell=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode not in (0, 1):
        sys.exit("bench: %s failed: %s" % (cmd, r.stderr[-500:]))
    return dt


def interleaved(cmds, rounds):
    """{name: median seconds}: every command once a round, the rounds one after the other."""
    t = {k: [] for k in cmds}
    for _ in range(rounds):
        for k, c in cmds.items():
            t[k].append(timed(c))
    return {k: statistics.median(v) for k, v in t.items()}
