#!/usr/bin/env python3
"""The upload servers under concurrency (issue 41): examples/python/web_fastapi.py and
web_aiohttp.py, each started on 127.0.0.1 with one memory budget, then sent at once N uploads of
a 200 KB .npz that inflates to 200 MB (to /load) plus good and bad files (to /load and
/spool/NAME; raw POST bodies, PUT, and multipart/form-data as curl -F sends it), while another
process pings GET /ping every 10 ms.

Checked: every good upload is accepted or told to retry (503, LIMIT.budget.full, Retry-After);
every bad one is refused with its rule; the server's log holds no traceback; its peak RSS (VmHWM)
stays under the budget + 64 MiB; /ping's p99 under 20 ms (issue 41's budgets: the RSS bound and
the structure are checked always, the latency with --strict, on an idle machine).

Where a slow ping's time went: the pinger reads how long it waited for a CPU itself (Linux's
schedstat), and the output gives the p99 with that wait taken off; --probe runs each server under
bench/loop_probe.py, which reports its event loop's late wake-ups (on a CPU, waiting for one, or
asleep) -- a server whose loop never stalls can still answer late to a client that gets no CPU.

    .venv-web/bin/python bench/web_load.py                      # both frameworks, 32 uploads, 512Mi
    .venv-web/bin/python bench/web_load.py --framework aiohttp --uploads 8 --budget 256Mi
    nice -n 10 .venv-web/bin/python bench/web_load.py --json out.json --strict
    .venv-web/bin/python bench/web_load.py --probe             # and the servers' loop stalls

Who runs where: each server in a session of its own (Linux weighs sessions, "autogroups", before
the threads in them), the pinger in another; the upload clients (curl) stay in the bench's session,
each at nice 19, and main() sets that session's own weight to the lowest (its autogroup at nice
19).  On a real server the 69 uploaders are other machines: here they share its two cores, and
their CPU is the clients', not the server's, so they get what the server and the pinger leave.
--clients-nice 0 runs them as the machine is (the runs of bench/README.md before 6 December
2026, 16:00).

Needs .venv-web (make web-env: FastAPI, uvicorn, aiohttp, python-multipart, NumPy) and curl.
Loopback only; bounded: every request has a 120 s timeout, the whole run a few minutes at most.
tests/web/pytest_load.py runs it under pytest (make test-all).  Numbers: bench/README.md.
"""
import argparse
import io
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
import zipfile

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))
EXAMPLES = os.path.join(ROOT, "examples", "python")
PING_EVERY = 0.010
RSS_SLACK_MIB = 64   # issue 41: server RSS <= budget + 64 MiB
PING_P99_MS = 20     # issue 41: /ping p99 <= 20 ms (on an idle machine)
# what the 503 of a full budget says
RETRY = "LIMIT.budget.full"


def _npy_head(shape, descr="<f4"):
    """A .npy's preamble and header for an array of shape (its data not included)."""
    hdr = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    hdr += " " * (63 - (10 + len(hdr)) % 64) + "\n"
    return b"\x93NUMPY\x01\x00" + len(hdr).to_bytes(2, "little") + hdr.encode()


def _bomb(path, nbytes):
    """A deflated .npz of one float32 array of nbytes zeros (the sizes in its local header)."""
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, allowZip64=True) as z:
        with z.open("w.npy", "w", force_zip64=True) as m:
            m.write(_npy_head("(%d,)" % (nbytes // 4)))
            chunk = bytes(1 << 24)
            left = nbytes
            while left:
                n = min(left, len(chunk))
                m.write(chunk[:n])
                left -= n


def make_files(d):
    """The uploads (the shapes of user trial 4's web tester), in d: name -> (path, expected),
    expected None for a good file, else the rule it must be refused with: one rule, or (at /load,
    at /spool) when a spool, which keeps nothing, decides elsewhere."""
    os.makedirs(d, exist_ok=True)
    P = lambda n: os.path.join(d, n)  # noqa: E731
    np.savez(P("good.npz"), w=np.arange(12, dtype=np.float32).reshape(3, 4), b=np.zeros(4, np.float32))
    np.savez_compressed(P("good_c.npz"), w=np.ones((256, 256), np.float32))
    np.save(P("good.npy"), np.eye(3))
    with zipfile.ZipFile(P("blob_member.npz"), "w") as z:  # a valid archive with a non-.npy member
        z.writestr("w.npy", open(P("good.npy"), "rb").read())
        z.writestr("config.json", b'{"layers": 3}')
    good = open(P("good.npz"), "rb").read()
    open(P("truncated.npz"), "wb").write(good[:len(good) // 2])
    i = good.index(b"'descr'")
    open(P("bad_header.npz"), "wb").write(good[:i] + b"'dascr'" + good[i + 7:])
    b = io.BytesIO()
    np.savez(b, w=np.ones(3, np.float32), meta=np.array([{"a": 1}], dtype=object))
    open(P("objarr.npz"), "wb").write(b.getvalue())
    open(P("over_max_bytes.npy"), "wb").write(_npy_head("(%d,)" % ((300 << 20) // 4)) + bytes(4096))
    _bomb(P("bomb_2g.npz"), 2 << 30)
    _bomb(P("bomb_200m.npz"), 200 << 20)
    return {
        "good.npz": (P("good.npz"), None), "good_c.npz": (P("good_c.npz"), None),
        "good.npy": (P("good.npy"), None), "blob_member.npz": (P("blob_member.npz"), None),
        "bomb_200m.npz": (P("bomb_200m.npz"), None),
        "truncated.npz": (P("truncated.npz"), "TRUNC.archive"),
        "bad_header.npz": (P("bad_header.npz"), "HDR-DICT.unknown-key"),
        "objarr.npz": (P("objarr.npz"), "PICKLE.object"),
        # declares 300 MiB: over /load's max_bytes (256 MiB); cut short after 4 KiB of data
        "over_max_bytes.npy": (P("over_max_bytes.npy"), ("LIMIT.max_bytes", "TRUNC.array")),
        "bomb_2g.npz": (P("bomb_2g.npz"), "LIMIT.max_total_bytes.member"),
    }


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def status_kib(pid, field):
    for line in open("/proc/%d/status" % pid):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise RuntimeError("no %s" % field)


def cpu_s(pid, tid=None):
    """CPU seconds (user + system) of a process, or of one of its threads (the event loop runs in
    the main thread: tid = pid)."""
    path = "/proc/%d/task/%d/stat" % (pid, tid) if tid else "/proc/%d/stat" % pid
    fields = open(path).read().rpartition(")")[2].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def parse_size(s):
    units = {"Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "K": 10**3, "M": 10**6, "G": 10**9}
    for u in sorted(units, key=len, reverse=True):
        if s.endswith(u):
            return int(s[:-len(u)]) * units[u]
    return int(s)


class Server:
    """An example server on 127.0.0.1 (its own process group), its output in a log file."""

    def __init__(self, framework, python, tmp, budget, probe=None):
        self.framework = framework
        self.dir = os.path.join(tmp, framework + "-uploads")
        os.makedirs(self.dir)
        self.port = free_port()
        self.log_path = os.path.join(tmp, framework + ".log")
        self.log = open(self.log_path, "wb")
        cmd = [python, os.path.join(EXAMPLES, "web_%s.py" % framework), "--port", str(self.port),
               "--upload-dir", self.dir, "--memory-budget", budget]
        if probe:  # the loop's late wake-ups, to the file probe
            cmd[1:1] = [os.path.join(ROOT, "bench", "loop_probe.py"), probe]
        self.p = subprocess.Popen(cmd, stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.url = "http://127.0.0.1:%d" % self.port
        t0 = time.time()
        while True:
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if self.p.poll() is not None or time.time() - t0 > 60:
                    self.close()
                    raise RuntimeError("%s did not start: %s" % (framework, self.log_text()[-2000:]))
                time.sleep(0.1)

    def log_text(self):
        with open(self.log_path, "rb") as f:
            return f.read().decode("utf-8", "replace")

    def close(self):
        if self.p.poll() is None:
            os.killpg(self.p.pid, signal.SIGTERM)
            try:
                self.p.wait(10)
            except subprocess.TimeoutExpired:
                os.killpg(self.p.pid, signal.SIGKILL)
                self.p.wait()
        self.log.close()


# the pinger: its own process (the driver's threads and curls must not delay its clock); for each
# ping, how long it took and how long of that the pinger itself waited for a CPU
PINGER = r"""
import http.client, json, sys, time, select
def waited():
    try:
        with open("/proc/thread-self/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, IndexError, ValueError):
        return 0.0
c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
every = float(sys.argv[2]); lat = []; wait = []; errors = 0
while not select.select([sys.stdin], [], [], 0)[0]:
    t = time.perf_counter(); w = waited()
    try:
        c.request("GET", "/ping"); r = c.getresponse(); r.read()
        lat.append(time.perf_counter() - t); wait.append(waited() - w)
    except Exception:
        errors += 1; c.close(); c = http.client.HTTPConnection("127.0.0.1", int(sys.argv[1]), timeout=30)
    time.sleep(max(0.0, every - (time.perf_counter() - t)))
print(json.dumps({"lat": lat, "wait": wait, "errors": errors}))
"""


def quantile(xs, f):
    """The f-quantile of xs (sorted here), or None for none."""
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(len(xs) * f))] if xs else None


def loop_stalls(path, t0, t1):
    """What bench/loop_probe.py saw between t0 and t1 (time.monotonic()): the loop's wake-ups, how
    many came more than 20 ms late, the latest, and where the time of those went."""
    recs = [json.loads(line) for line in open(path)] if os.path.exists(path) else []
    probes = [r["probes"] for r in recs if "probes" in r]
    late = [r for r in recs if "lag_ms" in r and t0 <= r["t"] <= t1]
    big = [r for r in late if r["lag_ms"] > PING_P99_MS]
    return {"wakeups": probes[-1] if probes else 0, "late_over_4ms": len(late), "late_over_20ms": len(big),
            "max_ms": max((r["lag_ms"] for r in late), default=0.0),
            "over_20ms_on_cpu_ms": round(sum(r.get("cpu_ms", 0) for r in big), 1),
            "over_20ms_waiting_for_cpu_ms": round(sum(r.get("runq_ms", 0) for r in big), 1),
            "over_20ms_asleep_ms": round(sum(r.get("asleep_ms", 0) for r in big), 1)}


# the upload clients' nice value (main's --clients-nice; see the docstring)
CLIENTS_NICE = 19


def clients_session_nice(n):
    """The bench's own session (its autogroup) at nice n: the clients' weight against the server's
    and the pinger's sessions.  False where the kernel has no autogroups."""
    try:
        with open("/proc/self/autogroup", "w") as f:
            f.write("%d" % n)
        return True
    except OSError:
        return False


def curl(url, path, how, timeout=120):
    """One upload with curl: how is "raw" (POST, the file as the body), "put" (curl -T) or
    "form" (curl -F file=@...).  Returns (status, JSON body or None, seconds)."""
    cmd = ["nice", "-n", str(CLIENTS_NICE)] if CLIENTS_NICE else []
    cmd += ["curl", "-sS", "-m", str(timeout), "-o", "-", "-w", "\n%{http_code}"]
    if how == "raw":
        cmd += ["-H", "Content-Type: application/octet-stream", "--data-binary", "@" + path]
    elif how == "put":
        cmd += ["-T", path]
    else:
        cmd += ["-F", "file=@" + path]
    t0 = time.perf_counter()
    r = subprocess.run(cmd + [url], capture_output=True, text=True, timeout=timeout + 30)
    dt = time.perf_counter() - t0
    out, _, code = r.stdout.rpartition("\n")
    try:
        body = json.loads(out)
    except ValueError:
        body = None
    return (int(code) if code.isdigit() else 0), body, dt, r.stderr.strip()


def judge(expected, status, body):
    """'accepted', 'retry', 'refused' (with the expected rule), or a failure in words."""
    if expected is None:
        if status == 200 and body and body.get("ok") is True:
            return "accepted"
        if status == 503 and body and body.get("rule") == RETRY:
            return "retry"
        return "FAIL: a good file got %s %s" % (status, json.dumps(body)[:300])
    if body and body.get("ok") is False and body.get("rule") == expected and status in (400, 413):
        return "refused"
    if status == 503 and body and body.get("rule") == RETRY:
        return "retry"  # a bad file may meet the full budget before its fault
    return "FAIL: expected %s, got %s %s" % (expected, status, json.dumps(body)[:300])


def run(framework, python, files, tmp, budget="512Mi", uploads=32, log=print, probe=False):
    """One framework under load; returns the results (see main's output)."""
    probe_path = os.path.join(tmp, framework + ".probe") if probe else None
    srv = Server(framework, python, tmp, budget, probe_path)
    try:
        rss0 = status_kib(srv.p.pid, "VmRSS")
        cpu0, loop0 = cpu_s(srv.p.pid), cpu_s(srv.p.pid, srv.p.pid)
        jobs = [("/load", "bomb_200m.npz", "raw") for _ in range(uploads)]
        for name in files:
            if name != "bomb_200m.npz":
                jobs += [("/load", name, how) for how in ("raw", "put", "form")]
            jobs.append(("/spool/s-" + name, name, "form" if name == "bomb_200m.npz" else "raw"))
        # the pinger in a session of its own: a client elsewhere, not one of the uploaders
        pinger = subprocess.Popen([python, "-c", PINGER, str(srv.port), str(PING_EVERY)], stdin=subprocess.PIPE,
                                  stdout=subprocess.PIPE, text=True, start_new_session=True)
        time.sleep(0.5)  # a few idle pings
        results = [None] * len(jobs)

        def go(i):
            path_url, name, how = jobs[i]
            status, body, dt, err = curl(srv.url + path_url, files[name][0], how)
            expected = files[name][1]
            if isinstance(expected, tuple):
                expected = expected[path_url.startswith("/spool")]
            results[i] = (path_url, name, how, status, body, dt, err, judge(expected, status, body))

        threads = [threading.Thread(target=go, args=(i,)) for i in range(len(jobs))]
        t0, m0 = time.time(), time.monotonic()
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        wall = time.time() - t0
        loop = loop_stalls(probe_path, m0, time.monotonic()) if probe else None
        time.sleep(0.5)
        out, _ = pinger.communicate(input="stop\n", timeout=60)
        pings = json.loads(out)
        cpu1, loop1 = cpu_s(srv.p.pid), cpu_s(srv.p.pid, srv.p.pid)
        hwm = status_kib(srv.p.pid, "VmHWM")
        rss_end = status_kib(srv.p.pid, "VmRSS")
        left = sorted(n for n in os.listdir(srv.dir) if n.endswith(".part") or n.startswith("."))
    finally:
        srv.close()
    text = srv.log_text()
    lat = sorted(pings["lat"])
    q = (lambda f: lat[min(len(lat) - 1, int(len(lat) * f))] * 1e3) if lat else (lambda f: float("nan"))
    # each ping less the time the pinger itself waited for a CPU meanwhile: what the server took
    wait_p99 = quantile(pings["wait"], 0.99)
    less_p99 = quantile([a - w for a, w in zip(pings["lat"], pings["wait"])], 0.99)
    verdicts = {}
    for r in results:
        verdicts[r[7] if not r[7].startswith("FAIL") else "FAIL"] = verdicts.get(
            r[7] if not r[7].startswith("FAIL") else "FAIL", 0) + 1
    budget_b = parse_size(budget)
    res = {
        "framework": framework, "budget": budget, "uploads": len(jobs), "bombs": uploads, "wall_s": round(wall, 2),
        "verdicts": verdicts, "failures": [r for r in results if r[7].startswith("FAIL")],
        "ping": {"n": len(lat), "errors": pings["errors"], "p50_ms": round(q(0.5), 1), "p99_ms": round(q(0.99), 1),
                 "max_ms": round(lat[-1] * 1e3, 1) if lat else None,
                 "pinger_cpu_wait_p99_ms": None if wait_p99 is None else round(wait_p99 * 1e3, 1),
                 "p99_less_pinger_cpu_wait_ms": None if less_p99 is None else round(less_p99 * 1e3, 1)},
        "loop": loop,
        "rss_mib": {"start": rss0 // 1024, "peak": hwm // 1024, "end": rss_end // 1024,
                    "bound": budget_b // (1 << 20) + RSS_SLACK_MIB},
        "cpu_s": {"process": round(cpu1 - cpu0, 2), "loop_thread": round(loop1 - loop0, 2)},
        "traceback": "Traceback" in text, "log_lines": len(text.splitlines()), "temp_files_left": left,
        "bomb_seconds": sorted(round(r[5], 2) for r in results if r[1] == "bomb_200m.npz" and r[0] == "/load"),
    }
    log("%s: %d uploads (%d x 200 MB bombs) in %.1f s: %s; /ping n=%d p50 %.1f p99 %.1f max %s ms (%d errors; "
        "the pinger's own wait for a CPU p99 %s ms, the p99 less it %s ms); "
        "RSS %d -> peak %d MiB (bound %d); CPU %.1f s, of which the event loop's thread %.2f s; "
        "traceback in log: %s; log lines %d"
        % (framework, len(jobs), uploads, wall, verdicts, len(lat), q(0.5), q(0.99), res["ping"]["max_ms"],
           pings["errors"], res["ping"]["pinger_cpu_wait_p99_ms"], res["ping"]["p99_less_pinger_cpu_wait_ms"],
           rss0 // 1024, hwm // 1024, res["rss_mib"]["bound"], cpu1 - cpu0, loop1 - loop0,
           res["traceback"], res["log_lines"]))
    if loop is not None:
        log("  %s's event loop: %d wake-ups, %d later than 4 ms, %d later than 20 ms (latest %.1f ms; their time "
            "on a CPU %.1f ms, waiting for one %.1f ms, asleep %.1f ms)"
            % (framework, loop["wakeups"], loop["late_over_4ms"], loop["late_over_20ms"], loop["max_ms"],
               loop["over_20ms_on_cpu_ms"], loop["over_20ms_waiting_for_cpu_ms"], loop["over_20ms_asleep_ms"]))
    for f in res["failures"]:
        log("  FAIL %s %s %s: %s %s" % f[:3] + (f[7], f[6]))
    if res["traceback"]:
        log(text[-3000:])
    return res


def problems(res, strict):
    """What breaks issue 41's budgets in res (the latency only when strict)."""
    out = []
    if res["failures"]:
        out.append("%d uploads did not get their verdict" % len(res["failures"]))
    if res["traceback"]:
        out.append("a traceback in the server's log")
    if res["rss_mib"]["peak"] > res["rss_mib"]["bound"]:
        out.append("peak RSS %d MiB over the bound %d" % (res["rss_mib"]["peak"], res["rss_mib"]["bound"]))
    if res["temp_files_left"]:
        out.append("temporary files left: %s" % res["temp_files_left"])
    if strict and not res["ping"]["p99_ms"] <= PING_P99_MS:
        out.append("/ping p99 %.1f ms over %d" % (res["ping"]["p99_ms"], PING_P99_MS))
    return out


def main():
    # the bench in a session of its own, whose weight it then sets (clients_session_nice): never
    # the session of the shell that started it, which would keep that weight after the run
    if os.getsid(0) != os.getpid():
        child = subprocess.Popen([sys.executable] + sys.argv, start_new_session=True)
        try:
            return child.wait()
        except KeyboardInterrupt:  # the child, in another session, did not get it: it stops its servers
            child.send_signal(signal.SIGINT)
            return child.wait()
    global CLIENTS_NICE
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--framework", choices=("fastapi", "aiohttp", "both"), default="both")
    ap.add_argument("--python", default=sys.executable, help="the Python with the frameworks (.venv-web)")
    ap.add_argument("--budget", default="512Mi")
    ap.add_argument("--uploads", type=int, default=32, help="concurrent 200 MB bombs (besides the other files)")
    ap.add_argument("--json", help="write the results here")
    ap.add_argument("--strict", action="store_true", help="also fail when /ping's p99 is over 20 ms")
    ap.add_argument("--probe", action="store_true", help="report each server's event loop stalls (bench/loop_probe.py)")
    ap.add_argument("--clients-nice", type=int, default=CLIENTS_NICE,
                    help="the upload clients' nice value, and their session's (default 19; 0: as the machine is)")
    a = ap.parse_args()
    CLIENTS_NICE = a.clients_nice
    grouped = clients_session_nice(a.clients_nice)
    print("the upload clients: nice %d, their session's autogroup %s" % (
        a.clients_nice, ("at nice %d" % a.clients_nice) if grouped else "not set (no autogroups here)"))
    tmp = tempfile.mkdtemp(prefix="npzs-webload-")
    try:
        files = make_files(os.path.join(tmp, "files"))
        load0 = os.getloadavg()
        out = []
        for fw in (("fastapi", "aiohttp") if a.framework == "both" else (a.framework,)):
            out.append(run(fw, a.python, files, tmp, a.budget, a.uploads, probe=a.probe))
        load1 = os.getloadavg()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("load average (1, 5, 15 min): %.2f %.2f %.2f before, %.2f %.2f %.2f after; %d CPUs"
          % (load0 + load1 + (os.cpu_count(),)))
    bad = []
    for r in out:
        r["load_before"], r["load_after"] = load0, load1
        bad += ["%s: %s" % (r["framework"], p) for p in problems(r, a.strict)]
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)
    for b in bad:
        print("FAIL " + b)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
