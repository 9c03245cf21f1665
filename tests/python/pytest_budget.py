"""The package under concurrency (issue 41): npzstream.Budget's accounting (reserved before an
array is allocated, given back when it is dropped and on every failure path, waited for or
refused with LIMIT.budget.*, never exceeded by concurrent calls from threads and tasks); the
async entry points never running the parser's heavy work on the event loop (a loop-latency
probe while deflated uploads arrive in small chunks, and a control showing the probe sees a
stall); Stream.push(cheap=True); the numbers of a limit rejection; spool's safety (no
overwrite by default, permissions without touching the umask, no file left by a dropped spool).

Truth: np.load for the arrays; Budget.used against the arrays' nbytes; time.perf_counter."""
import asyncio
import gc
import io
import os
import stat
import sys
import tempfile
import threading
import time
import zipfile

import numpy as np
import pytest

import npzstream
from npzstream import _npzstream

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import Alarm, ok, zeros_bomb, zip_bytes  # noqa: E402
from limit_cases import CASES, numbers_ok  # noqa: E402

MiB = 1 << 20


def npz(compress=False, **arrays):
    b = io.BytesIO()
    (np.savez_compressed if compress else np.savez)(b, **arrays)
    return b.getvalue()


A = np.arange(1 << 18, dtype="<f8")             # 2 MiB
B = np.ones((256, 256), dtype="<f4")            # 256 KiB
GOOD = npz(a=A, b=B)
GOOD_C = npz(True, a=A, b=B)
NBYTES = A.nbytes + B.nbytes


def with_blob():
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        z.writestr("a.npy", npz_member(A))
        z.writestr("config.json", b'{"layers": 3}' * 100)
    return b.getvalue()


def npz_member(arr):
    b = io.BytesIO()
    np.save(b, arr)
    return b.getvalue()


def pieces(data, n=16384):
    return [data[i:i + n] for i in range(0, len(data), n)]


async def apieces(data, n=16384):
    for i in range(0, len(data), n):
        yield data[i:i + n]


def idle(budget):
    """The budget holds nothing and nobody waits (every call gave its part back)."""
    return budget.used == 0 and budget.waiting == 0


# ---- Budget: the spellings ------------------------------------------------------------------------

def test_budget_sizes():
    assert npzstream.Budget("512Mi").size == 512 * MiB
    assert npzstream.Budget(1000).size == 1000
    assert npzstream.Budget("2Gi").size == 2 << 30
    for bad in ("lots", -1, "1.5x"):
        with pytest.raises((ValueError, TypeError)):
            npzstream.Budget(bad)
    with pytest.raises(ValueError):
        npzstream.Budget("1Mi", timeout=-1)
    b = npzstream.Budget("1Mi")
    assert idle(b) and "0 of 1048576" in repr(b)
    with pytest.raises(TypeError):
        npzstream.load(GOOD, budget=1 << 30)  # budget= takes a Budget, not a size


# ---- the accounting -------------------------------------------------------------------------------

@pytest.mark.parametrize("data", [GOOD, GOOD_C], ids=["stored", "deflated"])
def test_arrays_hold_their_part_until_dropped(data):
    b = npzstream.Budget("64Mi")
    got = npzstream.load(data, budget=b)
    ref = np.load(io.BytesIO(data), allow_pickle=False)
    assert sorted(got) == sorted(ref.files) and all(np.array_equal(got[k], ref[k]) for k in ref.files)
    assert b.used == NBYTES, (b.used, NBYTES)
    a = got.pop("a")
    assert b.used == NBYTES, "a still referenced: its part is held"
    del a
    assert b.used == B.nbytes, (b.used, B.nbytes)
    view = got["b"][1:]  # a view keeps its base alive: the part stays
    del got
    assert b.used == B.nbytes
    del view
    assert idle(b), b


def test_blobs_go_back_with_the_last_array():
    b = npzstream.Budget("64Mi")
    data = with_blob()
    got = npzstream.load(data, budget=b)
    blob = len(got["config.json"])
    assert b.used == A.nbytes + blob
    del got
    assert idle(b), b
    only_blob = io.BytesIO()
    with zipfile.ZipFile(only_blob, "w") as z:
        z.writestr("notes.txt", b"x" * 5000)
    got = npzstream.load(only_blob.getvalue(), budget=b)
    assert got["notes.txt"] == b"x" * 5000 and idle(b), b  # no array stands for it: back at the end


def _crc_broken(data):
    i = data.index(A.tobytes()[8000:8016])
    return data[:i] + bytes([data[i] ^ 1]) + data[i + 1:]


def _raising(data):
    def gen():
        yield data[:len(data) // 2]
        raise ConnectionResetError("the client went away")
    return gen()


# every way a call can end without a result, each after part of the budget was reserved
FAILURES = {
    "crc": (lambda: _crc_broken(GOOD), {}, npzstream.RejectedError, "crc_mismatch"),
    "truncated": (lambda: GOOD[:-5000], {}, npzstream.RejectedError, "truncated"),
    "truncated-deflated": (lambda: GOOD_C[:-200], {}, npzstream.RejectedError, "truncated"),
    "policy-2nd-member": (lambda: GOOD, {"policy": {"members": {"b": {"dtype": ["<f8"]}}}}, npzstream.RejectedError,
                          "policy"),
    "max_bytes-2nd-member": (lambda: GOOD, {"max_bytes": A.nbytes + 10}, npzstream.RejectedError, "limit"),
    "budget-size": (lambda: GOOD, {"budget_size": A.nbytes + 10}, npzstream.RejectedError, "limit"),
    "source-raises": (lambda: _raising(GOOD), {}, ConnectionResetError, None),
    "threads-truncated": (lambda: GOOD_C[:-200], {"threads": 2}, npzstream.RejectedError, "truncated"),
}


@pytest.mark.parametrize("case", sorted(FAILURES))
@pytest.mark.parametrize("how", ["load", "aload", "Loader"])
def test_every_failure_gives_the_budget_back(case, how):
    make, kw, exc, code = FAILURES[case]
    kw = dict(kw)
    b = npzstream.Budget(kw.pop("budget_size", 64 * MiB) + (256 * MiB if kw.get("threads", 1) > 1 else 0),
                         timeout=2)
    data = make()
    with Alarm(60), pytest.raises(exc) as ei:
        if how == "load":
            npzstream.load(data, budget=b, **kw)
        elif how == "aload":
            async def src():
                for piece in (data if not isinstance(data, bytes) else pieces(data)):
                    yield piece
            asyncio.run(npzstream.aload(src(), budget=b, **kw))
        else:
            def by_hand():  # (the Loader is this frame's: it goes with the traceback)
                ld = npzstream.Loader(budget=b, **kw)
                for piece in (data if not isinstance(data, bytes) else pieces(data)):
                    ld.feed(piece)
                ld.finish()
            by_hand()
    if code is not None:
        assert ei.value.code == code, ei.value
    del ei
    gc.collect()  # (the traceback's frames hold the Loader: the test drops them)
    assert idle(b), (case, how, b)


def test_dropped_loader_and_cancelled_aload_give_back():
    b = npzstream.Budget("64Mi")
    ld = npzstream.Loader(budget=b)
    ld.feed(GOOD[:len(GOOD) // 2])  # a is allocated, half fed
    assert b.used == A.nbytes
    del ld
    assert idle(b), b

    async def slow():
        yield GOOD[:len(GOOD) // 2]
        await asyncio.sleep(30)
        yield GOOD[len(GOOD) // 2:]

    async def main():
        t = asyncio.create_task(npzstream.aload(slow(), budget=b))
        for _ in range(200):
            await asyncio.sleep(0.01)
            if b.used:
                break
        assert b.used == A.nbytes
        t.cancel()
        with pytest.raises(asyncio.CancelledError):
            await t
    with Alarm(30):
        asyncio.run(main())
    gc.collect()
    assert idle(b), b


# ---- a full budget: wait, then refuse -------------------------------------------------------------

def test_full_budget_waits_then_refuses_with_numbers():
    b = npzstream.Budget(NBYTES + NBYTES // 2, timeout=0.4)
    held = npzstream.load(GOOD, budget=b)
    t0 = time.perf_counter()
    with pytest.raises(npzstream.RejectedError) as ei:
        npzstream.load(GOOD, budget=b)
    dt = time.perf_counter() - t0
    e = ei.value
    assert e.code == "limit" and e.rule == "LIMIT.budget.full", e
    assert 0.35 <= dt < 5, dt  # it waited the budget's timeout, no more
    assert e.limit == ("budget", b.size, A.nbytes) and e.limit.name == "budget", e.limit
    assert "retry" in e.hint and str(b.size) in e.detail, (e.hint, e.detail)
    assert b.used == NBYTES and b.waiting == 0
    # room given back while a call waits: it goes on
    out = []
    t = threading.Thread(target=lambda: out.append(npzstream.load(GOOD, budget=b)))
    b.timeout = 10
    t.start()
    time.sleep(0.2)
    assert b.waiting == 1 and not out
    del held
    t.join(10)
    assert not t.is_alive() and np.array_equal(out[0]["a"], A)
    assert b.used == NBYTES
    out.clear()
    assert idle(b), b


def test_budget_size_refused_at_once():
    b = npzstream.Budget(A.nbytes // 2, timeout=30)
    t0 = time.perf_counter()
    with pytest.raises(npzstream.RejectedError) as ei:
        npzstream.load(GOOD, budget=b)
    assert time.perf_counter() - t0 < 5  # no wait: it can never fit
    e = ei.value
    assert (e.code, e.rule, e.member, e.name) == ("limit", "LIMIT.budget.size", 0, b"a.npy"), e
    assert e.limit == ("budget", A.nbytes // 2, A.nbytes), e.limit
    assert idle(b)


# ---- concurrency: the budget is never exceeded ----------------------------------------------------

def test_threads_share_one_budget():
    b = npzstream.Budget(3 * NBYTES, timeout=60)
    peak = [0]
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            peak[0] = max(peak[0], b.used)
            time.sleep(0.0005)
    results = []

    def one():
        for _ in range(3):
            r = npzstream.load(pieces(GOOD_C), budget=b)
            results.append(np.array_equal(r["a"], A) and np.array_equal(r["b"], B))
            time.sleep(0.01)  # hold the arrays a while
            del r
    s = threading.Thread(target=sample)
    s.start()
    threads = [threading.Thread(target=one) for _ in range(8)]
    t0 = time.perf_counter()
    for t in threads:
        t.start()
    for t in threads:
        t.join(120)
    stop.set()
    s.join()
    assert not any(t.is_alive() for t in threads), "a load hung"
    assert results.count(True) == 24, results
    assert 0 < peak[0] <= b.size, (peak[0], b.size)
    assert idle(b), b
    print("8 threads x 3 loads under a 3-load budget: %.2f s, peak %d of %d bytes"
          % (time.perf_counter() - t0, peak[0], b.size))


@pytest.mark.parametrize("timeout", [30, 0.05], ids=["wait", "refuse"])
def test_tasks_share_one_budget(timeout):
    """16 concurrent aloads of a file that inflates to 64 MiB under a 160 MiB budget: with a long
    timeout every one is accepted (they wait their turn), with a short one some are refused with
    LIMIT.budget.full; never more than the budget held, everything back at the end."""
    data = bomb()
    b = npzstream.Budget(160 * MiB, timeout=timeout)

    async def one():
        try:
            r = await npzstream.aload(apieces(data), budget=b)
        except npzstream.RejectedError as e:
            return e.rule
        await asyncio.sleep(0.02)  # the arrays held a while
        ok_ = r["z"].shape == (64 * MiB,) and not r["z"][::4096].any()
        del r
        return "ok" if ok_ else "bad result"

    async def main():
        peak = 0
        task = asyncio.gather(*[one() for _ in range(16)])
        while not task.done():
            peak = max(peak, b.used)
            await asyncio.sleep(0.001)
        return await task, peak
    t0 = time.perf_counter()
    with Alarm(120):
        verdicts, peak = asyncio.run(main())
    dt = time.perf_counter() - t0
    assert 0 < peak <= b.size, (peak, b.size)
    assert set(verdicts) <= {"ok", "LIMIT.budget.full"}, verdicts
    if timeout > 1:
        assert verdicts.count("ok") == 16, verdicts
    else:
        assert verdicts.count("ok") >= 2 and verdicts.count("LIMIT.budget.full") >= 1, verdicts
    gc.collect()
    assert idle(b), b
    print("16 aloads (64 MiB each) under 160 MiB, timeout %g: %s in %.2f s, peak %d MiB"
          % (timeout, {v: verdicts.count(v) for v in set(verdicts)}, dt, peak // MiB))


# ---- the event loop only moves bytes --------------------------------------------------------------

async def probe(stop, lags, every=0.002):
    """How late the loop runs a task that asked to sleep `every` seconds: its lag."""
    while not stop.is_set():
        t = time.perf_counter()
        await asyncio.sleep(every)
        lags.append(time.perf_counter() - t - every)


def lag_under(work, cpu=None):
    """Run work() (a coroutine function) with the probe beside it: (result, sorted lags in ms).
    cpu, a dict, gets the CPU seconds work() took on the loop's thread ("loop") and in the whole
    process ("process"), each measured where the work ran: a CPU time, unlike a lag, does not grow
    when the machine is busy."""
    async def main():
        stop, lags = asyncio.Event(), []
        p = asyncio.create_task(probe(stop, lags))
        await asyncio.sleep(0.05)
        t0, c0 = time.thread_time(), time.process_time()
        try:
            return await work(), lags
        finally:
            if cpu is not None:
                cpu["loop"], cpu["process"] = time.thread_time() - t0, time.process_time() - c0
            stop.set()
            await p
    with Alarm(120):
        r, lags = asyncio.run(main())
    return r, sorted(x * 1e3 for x in lags)


def p99(lags):
    return lags[min(len(lags) - 1, int(len(lags) * 0.99))]


BOMB = None


def bomb():
    """A 100 KB .npz that inflates to 64 MiB (the shape of an upload that freezes a server)."""
    global BOMB
    if BOMB is None:
        BOMB = zeros_bomb(64 * MiB)[0]
    return BOMB


# Where the parse ran is measured as CPU time, which the machine's load does not change: the
# share of the work's CPU time that the loop's thread spent.  On the loop (the control below) it is
# all of it (100% measured); off the loop the loop moves bytes and runs the probe: 3-27% measured,
# and 43-47% for 64 MiB stored in pieces of 256 KiB whose values are checked off the loop (the
# loop's part: each piece's CRC and its hand-over to a worker; 61-65% in pieces of 64 KiB).
LOOP_SHARE_MAX = 0.75
LOOP_SHARE_CONTROL = 0.9
# The lag bounds tell a stall from a late wake-up; they are not the speed targets.  The targets (the
# loop's p99 lag and /ping's p99 within 20 ms under load, on an idle machine) are benchmarks:
# bench/loop_probe.py and bench/web_load.py --strict, their numbers in bench/README.md.  A parse on
# the loop, what these tests guard against, held it 1,360 ms (a 200 MB upload).
LAG_P99_MS = 100
LAG_MAX_MS = 600
# on a machine busier than its cores (a load average over the CPU count), whose scheduler delays
# any thread by 100 ms and more, the bounds are doubled: still below the stall they guard against
BUSY_FACTOR = 2


def lag_bounds():
    """(p99, max) in ms for the machine as it is now."""
    if os.getloadavg()[0] >= (os.cpu_count() or 1):
        return LAG_P99_MS * BUSY_FACTOR, LAG_MAX_MS * BUSY_FACTOR
    return LAG_P99_MS, LAG_MAX_MS


def test_probe_sees_a_stall():
    """The control: the bomb validated twice with its SHA-256 on the loop (Validator.feed in the
    coroutine, its 16 KiB pieces fed as they come, as aload fed small chunks before) holds it.  The
    measures must see it, or they prove nothing: the loop's thread took most of the CPU time, and
    the probe saw one stall as long as that CPU time (the loop ran nothing else meanwhile)."""

    async def on_loop():
        reports = []
        for _ in range(2):
            v = npzstream.Validator(hash=True)
            for piece in pieces(bomb()):
                v.feed(piece)
            reports.append(v.finish())
        return all(reports)
    cpu = {}
    r, lags = lag_under(on_loop, cpu)
    assert r, r
    share = cpu["loop"] / cpu["process"]
    print("the control: the loop's thread took %.0f of %.0f ms of CPU (%.0f%%), the loop stalled %.1f ms"
          % (cpu["loop"] * 1e3, cpu["process"] * 1e3, share * 100, lags[-1]))
    assert share >= LOOP_SHARE_CONTROL, "the parse on the loop: only %.0f%% of the CPU time on its thread" % (
        share * 100)
    assert lags[-1] >= 0.9 * cpu["loop"] * 1e3, "the probe saw no stall of the %.0f ms the loop was held" % (
        cpu["loop"] * 1e3)


async def _aload():
    budget = npzstream.Budget("256Mi")
    for _ in range(2):  # (twice: enough probes)
        r = await npzstream.aload(apieces(bomb()), budget=budget)
    return r


async def _two_aloads():
    budget = npzstream.Budget("256Mi")
    r = await asyncio.gather(*[npzstream.aload(apieces(bomb()), budget=budget) for _ in range(2)])
    return [x["z"].shape for x in r]


async def _avalidate_hash():
    rep = await npzstream.avalidate(apieces(bomb()), hash=True)
    return bool(rep)


STORED_64M = npz(a=np.zeros(8 * MiB, "<f8"))  # stored: only a policy's value check is heavy


async def _avalidate_policy_stored():
    rep = await npzstream.avalidate(apieces(STORED_64M, 1 << 18), policy={"members": {"*": {"finite": True}}})
    return bool(rep)


async def _aspool():
    d = tempfile.mkdtemp()
    sp = npzstream.spool(os.path.join(d, "up.npz"))
    for piece in pieces(bomb()):
        await sp.afeed(piece)
    rep = await sp.afinish()
    os.unlink(rep.path)
    os.rmdir(d)
    return bool(rep)


async def _loader_afeed_threads():
    ld = npzstream.Loader(threads=2)
    for piece in pieces(bomb()):
        await ld.afeed(piece)
    return (await ld.afinish())["z"].shape


@pytest.mark.parametrize("work", [_aload, _two_aloads, _avalidate_hash, _avalidate_policy_stored, _aspool,
                                  _loader_afeed_threads],
                         ids=["aload", "two-aloads", "avalidate-hash", "avalidate-policy", "Spool.afeed",
                              "Loader.afeed-threads"])
def test_loop_never_stalls(work):
    bomb()  # made before the loop runs: making it is not the parser's work

    async def run():
        return await work()
    p99_ms, max_ms = lag_bounds()
    cpu = {}
    r, lags = lag_under(run, cpu)
    assert r, r
    share = cpu["loop"] / cpu["process"]
    print("%s: %d probes, lag p50 %.2f p99 %.2f max %.1f ms; the loop's thread %.1f of %.1f ms of CPU (%.0f%%)"
          % (work.__name__, len(lags), lags[len(lags) // 2], p99(lags), lags[-1], cpu["loop"] * 1e3,
             cpu["process"] * 1e3, share * 100))
    assert share <= LOOP_SHARE_MAX, "%.0f%% of the work's CPU time on the loop's thread (at most %.0f%%)" % (
        share * 100, LOOP_SHARE_MAX * 100)
    assert len(lags) >= 10, "the probe barely ran (%d): the loop was held" % len(lags)
    ok(p99(lags) <= p99_ms, "loop lag p99 <= %d ms" % p99_ms, "%.1f ms" % p99(lags))
    ok(lags[-1] <= max_ms, "loop lag max <= %d ms" % max_ms, "%.1f ms" % lags[-1])


HOLD_S = 1.5  # longer than the largest lag lag_bounds() accepts (1,200 ms on a busy machine)


def _held_budget():
    """A budget with room for GOOD's arrays and not also for a 2-thread helper's 256 MiB, and a
    thread that lets GOOD's arrays go HOLD_S seconds from now (the arrays' part goes back when
    they are dropped): the helper's reservation waits that long."""
    b = npzstream.Budget(256 * MiB + MiB, timeout=30)
    held = [npzstream.load(GOOD, budget=b)]
    assert b.used == NBYTES
    t = threading.Timer(HOLD_S, held.clear)
    t.start()
    return b, t


def test_spool_waits_for_its_budget_off_the_loop(tmp):
    """A spool with worker threads and a budget reserves the helper's buffers; when the budget has
    no room, afeed() awaits it and the event loop runs on (the probe's lag stays within bounds),
    where the constructor used to block the loop until the room came.  The sync feed() waits."""
    bomb()

    async def spool_while_full():
        b, t = _held_budget()
        t0 = time.perf_counter()
        sp = npzstream.spool(os.path.join(tmp, "up.npz"), threads=2, budget=b)
        for piece in pieces(bomb()):
            await sp.afeed(piece)
        rep = await sp.afinish()
        waited = time.perf_counter() - t0
        t.join()
        return bool(rep) and b.used == 0 and waited >= HOLD_S * 0.9, (bool(rep), b.used, waited)
    p99_ms, max_ms = lag_bounds()
    (good, why), lags = lag_under(spool_while_full)
    assert good, why
    print("spool awaiting its budget: %d probes, lag p99 %.2f max %.1f ms" % (len(lags), p99(lags), lags[-1]))
    assert len(lags) >= 10, "the probe barely ran (%d): the loop was held" % len(lags)
    ok(lags[-1] <= max_ms, "loop lag max <= %d ms while the spool waits %.1f s for its budget" % (max_ms, HOLD_S),
       "%.1f ms" % lags[-1])
    ok(p99(lags) <= p99_ms, "loop lag p99 <= %d ms" % p99_ms, "%.1f ms" % p99(lags))
    os.unlink(os.path.join(tmp, "up.npz"))
    # the sync API: feed() waits for the room (this thread blocks), then goes on
    b, t = _held_budget()
    t0 = time.perf_counter()
    sp = npzstream.spool(os.path.join(tmp, "sync.npz"), threads=2, budget=b)
    assert time.perf_counter() - t0 < HOLD_S / 2, "the constructor waited"
    sp.feed(GOOD_C)
    assert time.perf_counter() - t0 >= HOLD_S * 0.9 and sp.finish() and b.used == 0
    t.join()


def test_spool_refused_by_its_budget_leaves_nothing(tmp):
    """A budget that stays full refuses the spool's helper (LIMIT.budget.full, after its timeout;
    LIMIT.budget.size at once for more than the whole budget): the upload is deleted, sync or async."""
    b = npzstream.Budget(256 * MiB + MiB, timeout=0.2)
    held = npzstream.load(GOOD, budget=b)
    sp = npzstream.spool(os.path.join(tmp, "a.npz"), threads=2, budget=b)
    with pytest.raises(npzstream.RejectedError) as ei:
        sp.feed(GOOD_C)
    assert ei.value.rule == "LIMIT.budget.full" and os.listdir(tmp) == [], (ei.value, os.listdir(tmp))

    async def refused():
        sp = npzstream.spool(os.path.join(tmp, "b.npz"), threads=2, budget=b)
        with pytest.raises(npzstream.RejectedError) as ei:
            await sp.afeed(GOOD_C)
        return ei.value.rule
    assert asyncio.run(refused()) == "LIMIT.budget.full" and os.listdir(tmp) == []
    small = npzstream.Budget(64 * MiB)
    sp = npzstream.spool(os.path.join(tmp, "c.npz"), threads=2, budget=small)
    with pytest.raises(npzstream.RejectedError) as ei:
        sp.feed(GOOD_C)
    assert ei.value.rule == "LIMIT.budget.size" and os.listdir(tmp) == [] and small.used == 0
    del held
    assert b.used == 0


WORKERS_SEEN = r"""
import os, sys, threading
from npzstream import _sources
pool = _sources._executor()
nices = set(pool.submit(lambda: os.getpriority(os.PRIO_PROCESS, threading.get_native_id())).result()
            for _ in range(20))
print(os.getpriority(os.PRIO_PROCESS, 0), max(nices), _sources._WORKERS)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="a thread's own nice value is Linux's")
@pytest.mark.parametrize("nice", [0, 5, 15])
def test_workers_stay_below_the_loop(nice):
    """The async pool's threads run 10 nice values below the thread that starts them (at most 19),
    whatever the process's own nice value: a server started with `nice -n 15` keeps them below its
    loop (they were set to 10, above it); and they are one fewer than the CPUs (at least one), so
    that a core stays free for the loop and the rest of the machine."""
    import subprocess
    r = subprocess.run([sys.executable, "-c", WORKERS_SEEN], capture_output=True, text=True, timeout=60,
                       preexec_fn=lambda: os.nice(nice))  # (added to this process's own: make test runs niced)
    assert r.returncode == 0, r.stderr
    loop, worker, workers = map(int, r.stdout.split())
    assert loop == min(19, os.getpriority(os.PRIO_PROCESS, 0) + nice), loop
    assert worker == min(19, loop + 10), (loop, worker)
    assert workers == max(1, min(8, len(os.sched_getaffinity(0)) - 1)), workers


# ---- Stream.push(cheap=True): the cheap steps only ------------------------------------------------

def test_push_cheap_stops_before_heavy_work():
    s = _npzstream.Stream(None, None, True)
    n = s.push(GOOD, True)  # stored, no policy, no hash: all of it is cheap
    assert n == len(GOOD) and not s.heavy and s.finish() is None
    s = _npzstream.Stream(None, None, True)
    n = s.push(GOOD_C, True)  # deflated: it stops at the first member's data
    assert 0 < n < 200 and s.heavy, n
    assert s.push(GOOD_C[n:], True) == 0  # still heavy: nothing more on the cheap path
    assert s.push(GOOD_C[n:], False) == len(GOOD_C) - n and s.finish() is None
    s = _npzstream.Stream(None, None, False, hash=True)
    assert s.push(GOOD, True) == 0 and s.heavy  # every byte is hashed: heavy from the start
    s = _npzstream.Stream(None, None, False)
    assert s.push(GOOD, True) == len(GOOD)


# ---- limit rejections carry their numbers ---------------------------------------------------------

def _limit_of(fn):
    with pytest.raises(npzstream.RejectedError) as ei:
        fn()
    return ei.value


@pytest.mark.parametrize("how", ["load", "Loader", "aload"])
def test_max_bytes_numbers(how):
    mb = A.nbytes - 1
    if how == "load":
        e = _limit_of(lambda: npzstream.load(GOOD, max_bytes=mb))
    elif how == "Loader":
        def f():
            ld = npzstream.Loader(max_bytes=mb)
            ld.feed(GOOD)
            ld.finish()
        e = _limit_of(f)
    else:
        e = _limit_of(lambda: asyncio.run(npzstream.aload(apieces(GOOD), max_bytes=mb)))
    assert (e.code, e.rule, e.member) == ("limit", "LIMIT.max_bytes", 0), e
    assert e.limit == npzstream.Limit("max_bytes", mb, A.nbytes), e.limit
    assert str(mb) in e.detail and str(A.nbytes) in e.detail, e.detail
    e2 = _limit_of(lambda: npzstream.load(GOOD, max_bytes=A.nbytes + 10))  # the 2nd member: what all need
    assert e2.member == 1 and e2.limit == ("max_bytes", A.nbytes + 10, NBYTES), e2.limit
    assert e.limit._asdict() == {"name": "max_bytes", "value": mb, "needed": A.nbytes}


def test_limit_survives_pickling():
    import pickle
    e = _limit_of(lambda: npzstream.load(GOOD, max_bytes=100))
    e2 = pickle.loads(pickle.dumps(e))
    assert e2.limit == e.limit and isinstance(e2.limit, npzstream.Limit) and e2 == e


# ---- spool: never overwrite unless asked, permissions, nothing left -------------------------------

def test_spool_never_overwrites_by_default(tmp):
    dest = os.path.join(tmp, "up.npz")
    with open(dest, "wb") as f:
        f.write(b"old")
    sp = npzstream.spool(dest)
    sp.feed(GOOD)
    with pytest.raises(FileExistsError):
        sp.finish()
    assert open(dest, "rb").read() == b"old" and os.listdir(tmp) == ["up.npz"]
    sp = npzstream.spool(dest, overwrite=True)
    sp.feed(GOOD)
    assert sp.finish() and open(dest, "rb").read() == GOOD


def test_spool_mode_leaves_the_umask_alone(tmp):
    old = os.umask(0o027)
    try:
        seen = []
        stop = threading.Event()

        def watch():  # os.umask(0) anywhere meanwhile would show here
            while not stop.is_set():
                u = os.umask(0o027)
                seen.append(u)
        sp = npzstream.spool(os.path.join(tmp, "a.npz"))
        w = threading.Thread(target=watch)
        w.start()
        for _ in range(50):
            sp2 = npzstream.spool(os.path.join(tmp, "b.npz"))
            sp2.abort()
        stop.set()
        w.join()
        sp.feed(GOOD)
        assert sp.finish()
        assert set(seen) == {0o027}, sorted(set(seen))
        assert stat.S_IMODE(os.stat(os.path.join(tmp, "a.npz")).st_mode) == 0o640
    finally:
        os.umask(old)


def test_spool_dropped_or_long_named_leaves_nothing(tmp):
    sp = npzstream.spool(os.path.join(tmp, "x.npz"))
    sp.feed(GOOD[:1000])
    temp = sp.temp
    assert os.path.exists(temp) and stat.S_IMODE(os.stat(temp).st_mode) == 0o600
    del sp
    gc.collect()
    assert os.listdir(tmp) == [], os.listdir(tmp)
    long_name = "é" * 126 + ".n"  # 254 bytes of UTF-8: the temporary name must not add to it
    assert len(long_name.encode()) == 254
    sp = npzstream.spool(os.path.join(tmp, long_name))
    assert len(os.path.basename(sp.temp).encode()) <= 255
    sp.feed(GOOD)
    assert sp.finish() and os.listdir(tmp) == [long_name]


# ---- the library's own limits carry their numbers too ---------------------------------------------

@pytest.mark.parametrize("case", sorted(k for k, c in CASES.items() if not c.flags))  # (no sequences here)
@pytest.mark.parametrize("how", ["load", "validate", "aload", "open"])
def test_library_limit_numbers(case, how, tmp):
    """Every rejection a limit decides (tests/limit_cases.py) carries its numbers in RejectedError.limit,
    and its detail says them in words, whichever call met it."""
    c = CASES[case]
    if how == "validate":
        e = npzstream.validate(c.data, **c.limits).error
    elif how == "open":
        path = os.path.join(tmp, "x.npz")
        with open(path, "wb") as f:
            f.write(c.data)
        e = _limit_of(lambda: npzstream.open(path, **c.limits))
    elif how == "aload":
        e = _limit_of(lambda: asyncio.run(npzstream.aload(apieces(c.data), **c.limits)))
    else:
        e = _limit_of(lambda: npzstream.load(c.data, **c.limits))
    assert e is not None and (e.code, e.rule) == (c.code, c.rule), e
    assert isinstance(e.limit, npzstream.Limit) and numbers_ok(c, *e.limit), (e.limit, c.numbers)
    assert str(e.limit.value) in e.detail and str(e.limit.needed) in e.detail, e.detail


def test_kept_going_limit_numbers():
    """keep_going=True: where a limit stopped the listing (Report.inventory_error) and where it
    stopped following a member (Member.error), both INV.limit, the numbers in RejectedError.limit."""
    rep = npzstream.validate(CASES["max_members"].data, keep_going=True, max_members=3)
    e = rep.inventory_error
    assert e is not None and (e.code, e.rule) == ("limit", "INV.limit"), e
    assert isinstance(e.limit, npzstream.Limit) and tuple(e.limit) == ("max_members", 3, 4), e.limit
    f = io.BytesIO()
    np.save(f, np.zeros(3, "<i8"))
    bad = f.getvalue().replace(b"'<i8'", b"'<q9'", 1)  # refused in its header
    big = zip_bytes([("a.npy", bad), ("data.bin", bytes(10000))])
    rep = npzstream.validate(big, keep_going=True, max_total_bytes=4096)
    m = rep.members[1]
    assert m.error is not None and (m.error.code, m.error.rule) == ("limit", "INV.limit"), m
    assert tuple(m.error.limit) == ("max_total_bytes", 4096, 10000), m.error.limit
    assert rep.inventory_error is None and rep.members[0].error.limit is None, rep
