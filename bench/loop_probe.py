#!/usr/bin/env python3
"""Run a server script with a probe of its event loop: how late the loop runs a task that sleeps
1 ms, and for each wake-up later than 4 ms where the time went (Linux's schedstat of the loop's
thread: on a CPU, waiting for one, or neither: asleep on a lock, the GIL, or the machine).

    python3 bench/loop_probe.py OUT SCRIPT ARGS...     # SCRIPT runs as __main__ with ARGS

OUT gets one JSON object a line: {"t": when (time.monotonic()), "lag_ms", "cpu_ms", "runq_ms",
"asleep_ms"}, and at the end of every second {"t", "probes": wake-ups so far}.  The probe starts
with the script's first event loop (uvicorn's, asyncio.run's).  bench/web_load.py --probe uses it;
the probe's own cost is a wake-up a millisecond on the loop."""
import asyncio
import json
import os
import runpy
import sys
import threading
import time

LATE_MS = 4.0


def _schedstat(tid):
    """(ns on a CPU, ns waiting for one) of a thread; None off Linux."""
    try:
        with open("/proc/self/task/%d/schedstat" % tid) as f:
            run, wait, _ = f.read().split()
        return int(run), int(wait)
    except OSError:
        return None


async def probe(out):
    tid = threading.get_native_id()
    prev, ps, n, tick = time.monotonic(), _schedstat(tid), 0, time.monotonic()
    while True:
        await asyncio.sleep(0.001)
        now, s = time.monotonic(), _schedstat(tid)
        n += 1
        lag = (now - prev - 0.001) * 1e3
        if lag > LATE_MS:
            rec = {"t": round(prev, 4), "lag_ms": round(lag, 1)}
            if s and ps:
                cpu, runq = (s[0] - ps[0]) / 1e6, (s[1] - ps[1]) / 1e6
                rec.update(cpu_ms=round(cpu, 1), runq_ms=round(runq, 1), asleep_ms=round(max(0.0, lag + 1 - cpu - runq), 1))
            out.write(json.dumps(rec) + "\n")
        if now - tick >= 1:
            out.write(json.dumps({"t": round(now, 4), "probes": n}) + "\n")
            tick = now
        prev, ps = now, s


def main():
    out = open(sys.argv[1], "w", buffering=1)
    script = sys.argv[2]
    run_forever = asyncio.BaseEventLoop.run_forever

    def probed(loop):
        if not getattr(probed, "started", False):
            probed.started = True
            loop.call_soon(lambda: loop.create_task(probe(out)))
        return run_forever(loop)
    asyncio.BaseEventLoop.run_forever = probed
    sys.argv = sys.argv[2:]
    sys.path.insert(0, os.path.dirname(os.path.abspath(script)))
    runpy.run_path(script, run_name="__main__")


if __name__ == "__main__":
    main()
