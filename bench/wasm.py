#!/usr/bin/python3
"""make bench-wasm: the WebAssembly build's size and its speed under Node against the native command.

    wasm.py --bin build/npzstream [--bin-zlib build/bench-zlib/npzstream] --wasm build/wasm
            [--size MIB] [--rounds N] [--keep DIR]

Datasets (bench/gen.py's recipes, written by Debian's NumPy into a temporary folder): stored.npz
(np.savez, 8 float32 arrays, SIZE MiB) and deflated.npz (np.savez_compressed of SIZE/2 MiB
deflating ~3.3x).  Each round times, one after the other, `npzstream check -q FILE` (native) and
the same file validated by build/wasm/npzstream.mjs in one Node process (bench/wasm-validate.mjs:
the wasm loaded once, as a page or a server keeps it, the file read into the wasm's memory as
npzstream-check.mjs reads it: Validator.readFrom, 256 KiB at a time), and once the whole `node npzstream-check.mjs FILE` (Node's start-up included).  --bin-zlib
is a native build without ISA-L (make ISAL=0): src/bytes/crcfold.c's CRC-32, the one the wasm runs: the same algorithms.  Times are
medians over the rounds; the file is in the page cache.  Prints a Markdown table for
bench/README.md.
"""
import argparse, base64, gzip, json, os, platform, re, shutil, statistics, subprocess, sys, tempfile, time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
TARGETS = {"stored.npz": 0.5, "deflated.npz": 0.7}


def datasets(d, size):
    import numpy as np
    import gen
    np.savez(os.path.join(d, "stored.npz"), **gen.arrays(size, 1))
    np.savez_compressed(os.path.join(d, "deflated.npz"), **gen.compressible(size, np.random.default_rng(2)))


def timed(cmd):
    t0 = time.perf_counter()
    r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    dt = time.perf_counter() - t0
    if r.returncode not in (0,):
        sys.exit("bench-wasm: %s: exit %d %s" % (" ".join(cmd), r.returncode, r.stderr.decode()[-500:]))
    return dt, r.stdout


def sizes(wasm):
    """The wasm's bytes (decoded from the data URI npzstream.mjs carries) and the module's, raw and gzipped."""
    mjs = open(os.path.join(wasm, "npzstream.mjs"), "rb").read()
    m = re.search(rb"data:application/octet-stream;base64,([A-Za-z0-9+/=]+)", mjs)
    raw = base64.b64decode(m.group(1))
    return {"wasm": len(raw), "wasm_gz": len(gzip.compress(raw, 9)), "mjs": len(mjs), "mjs_gz": len(gzip.compress(mjs, 9))}


def cpu():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "?"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default="build/npzstream")
    ap.add_argument("--bin-zlib")
    ap.add_argument("--wasm", default="build/wasm")
    ap.add_argument("--size", type=int, default=512)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--keep")
    a = ap.parse_args()
    node = shutil.which("node")
    if not node or not os.path.exists(os.path.join(a.wasm, "npzstream.mjs")):
        sys.exit("bench-wasm: needs node and make wasm")
    d = a.keep or tempfile.mkdtemp(prefix="npzs-bench-wasm-")
    os.makedirs(d, exist_ok=True)
    try:
        if not all(os.path.exists(os.path.join(d, f)) for f in TARGETS):
            print("bench-wasm: writing %d MiB datasets into %s ..." % (a.size, d), flush=True)
            datasets(d, a.size)
        rows = []
        for name, target in TARGETS.items():
            f = os.path.join(d, name)
            for _ in range(2):  # the page cache
                subprocess.run(["cat", f], stdout=subprocess.DEVNULL)
            nat, natz, was = [], [], []
            for _ in range(a.rounds):
                nat.append(timed([a.bin, "check", "-q", f])[0])
                if a.bin_zlib:
                    natz.append(timed([a.bin_zlib, "check", "-q", f])[0])
                out = timed([node, os.path.join(HERE, "wasm-validate.mjs"), a.wasm, f, "2"])[1]
                r = json.loads(out)
                if not r["ok"]:
                    sys.exit("bench-wasm: the wasm rejected %s" % f)
                was += r["seconds"]
            cmd = timed([node, os.path.join(a.wasm, "npzstream-check.mjs"), f])[0]
            rep = json.loads(timed([a.bin, "check", "--json", f])[1])
            content = sum(m["nbytes"] if m["kind"] == "array" else m["size"] for m in rep["members"])
            n, w = statistics.median(nat), statistics.median(was)
            nz = statistics.median(natz) if natz else None
            rows.append((name, os.path.getsize(f), content, n, nz, w, cmd, target))
        s = sizes(a.wasm)
    finally:
        if not a.keep:
            shutil.rmtree(d, ignore_errors=True)
    load = os.getloadavg()
    print("\nMeasured %s on %s (%d cores), Node %s, load average %.1f at the end; SIZE=%d MiB, %d rounds, medians.\n"
          % (time.strftime("%d %B %Y"), cpu(), os.cpu_count(), subprocess.run([node, "--version"], capture_output=True,
             text=True).stdout.strip(), load[0], a.size, a.rounds))
    print("| file | bytes (array data) | native check | native without ISA-L (the fold) | wasm in Node (module loaded) | wasm / native |"
          " target | wasm / native without ISA-L | `node npzstream-check.mjs` |")
    print("|---|---:|---:|---:|---:|---:|---|---:|---:|")
    rate = lambda t, content: "%.3f s (%.2f GB/s)" % (t, content / t / 1e9)
    for name, size, content, n, nz, w, cmd, target in rows:
        ratio = n / w
        print("| %s | %d (%d) | %s | %s | %s | **%.2fx** | >= %.1fx: %s | %s | %.3f s |"
              % (name, size, content, rate(n, content), rate(nz, content) if nz else "-", rate(w, content), ratio, target,
                 "met" if ratio >= target else "NOT met", "%.2fx" % (nz / w) if nz else "-", cmd))
    print("\nGB/s: of array data (a deflated archive's, inflated).")
    print("\n| what a page downloads | bytes | gzip -9 |\n|---|---:|---:|")
    print("| the wasm (library, zlib's inflate, the report's printer) | %d | %d |" % (s["wasm"], s["wasm_gz"]))
    print("| npzstream.mjs (the wasm inlined as base64, the glue, the API) | %d | %d |" % (s["mjs"], s["mjs_gz"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
