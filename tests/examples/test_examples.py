#!/usr/bin/python3
"""Run the examples/ programs and the ctypes module python/npzstream.py.

usage: /usr/bin/python3 tests/examples/test_examples.py --bin build/npzstream [--quick]

The example binaries are taken from the examples/ folder next to --bin (build/examples or
build/san/examples, built by `make examples`, a prerequisite of `make test`).  Archives are
written by NumPy; the truths come from np.load and zipfile.  upload_poll is driven over a
socketpair (as its stdin) and over loopback TCP by writers that send random-sized pieces with
pauses.  Last line: `examples: N passed, M failed`.
"""
import argparse, io, os, random, re, select, socket, subprocess, sys, tempfile, threading, time, zipfile, zlib
import ctypes
import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import Tally  # noqa: E402
T = Tally("examples")
ok = T.ok


def archives():
    a = io.BytesIO()
    np.savez(a, w=np.arange(3000, dtype="<f4").reshape(30, 100), f=np.asfortranarray(np.ones((4, 5), ">i8")),
             s=np.float64(2.5), t=np.array(["x", "yz"]))
    b = io.BytesIO()
    np.savez_compressed(b, big=(np.arange(200000) % 13).astype("<u2"), e=np.zeros((0,)))
    c = subprocess.run(["/usr/bin/python3", "-c", "import sys, numpy as np; np.savez(sys.stdout.buffer, "
                        "p=np.arange(40000, dtype='<i4'), q=np.eye(3))"], stdout=subprocess.PIPE, check=True).stdout
    return [("savez", a.getvalue()), ("compressed", b.getvalue()), ("pipe", c)]


def truth(data):
    out = []
    with zipfile.ZipFile(io.BytesIO(data)) as zf, np.load(io.BytesIO(data)) as z:
        for info in zf.infolist():
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            out.append((key, z[key]))
    return out


def corrupt_crc(data):
    """Flip one byte of the first member's array data: a CRC mismatch zipfile also sees."""
    bad = bytearray(data)
    bad[200] ^= 0x55
    try:
        with zipfile.ZipFile(io.BytesIO(bytes(bad))) as zf:
            for i in zf.infolist():
                zf.read(i)
        return None
    except zipfile.BadZipFile:
        return bytes(bad)


# ---- read_stdin, copy_array ------------------------------------------------------------------------

def test_read_stdin(exdir, label, data):
    r = subprocess.run([os.path.join(exdir, "read_stdin")], input=data, capture_output=True, timeout=60)
    lines = r.stdout.decode().splitlines()
    want = truth(data)
    ok(r.returncode == 0 and lines[-1:] == ["ok npz %d" % len(want)], "read_stdin %s: %r" % (label, lines[-1:]))
    for line, (key, arr) in zip(lines, want):
        exp = [key, "array", arr.dtype.str, ",".join(map(str, arr.shape)), str(arr.nbytes),
               str(zlib.crc32(arr.tobytes(order="A")))]
        ok(line.split("\t") == exp, "read_stdin %s: %r, want %r" % (label, line, exp))
    r = subprocess.run([os.path.join(exdir, "read_stdin")], input=data[:-5], capture_output=True, timeout=60)
    ok(r.returncode == 1 and r.stdout.decode().startswith("rejected truncated %d " % (len(data) - 5)),
       "read_stdin %s truncated: %r" % (label, r.stdout))


def test_copy_array(exdir, label, data):
    for key, arr in truth(data):
        r = subprocess.run([os.path.join(exdir, "copy_array"), key, str(arr.nbytes)], input=data,
                           capture_output=True, timeout=60)
        ok(r.returncode == 0 and r.stdout == arr.tobytes(order="A"),
           "copy_array %s %s: exit %d, %d bytes (want %d) %s" % (label, key, r.returncode, len(r.stdout),
                                                                 arr.nbytes, r.stderr[-200:]))
        if arr.nbytes:
            r = subprocess.run([os.path.join(exdir, "copy_array"), key, str(arr.nbytes - 1)], input=data,
                               capture_output=True, timeout=60)
            ok(r.returncode == 2 and r.stdout == b"", "copy_array %s %s over the cap: exit %d" % (
                label, key, r.returncode))
    bad = corrupt_crc(data)
    if bad:
        key = truth(data)[0][0]
        r = subprocess.run([os.path.join(exdir, "copy_array"), key, "100000000"], input=bad,
                           capture_output=True, timeout=60)
        ok(r.returncode == 1 and r.stdout == b"", "copy_array on a corrupted archive: exit %d" % r.returncode)


# ---- upload_poll -------------------------------------------------------------------------------------

def send_in_pieces(sock, data, rng, pause_max=0.004, stop=None):
    """Random-sized pieces (1 byte .. 16 KiB) with random pauses; stops on a reset or when stop()."""
    i = 0
    try:
        while i < len(data):
            if stop is not None and stop():
                return i
            n = min(len(data) - i, rng.choice([1, 2, 7, 100, 1000, 4096, 16384, rng.randint(1, 9000)]))
            sock.sendall(data[i:i + n])
            i += n
            if rng.random() < 0.3:
                time.sleep(rng.random() * pause_max)
        sock.shutdown(socket.SHUT_WR)
    except (BrokenPipeError, ConnectionResetError):
        pass
    return i


def test_upload_socketpair(exdir, label, data, rng):
    parent, child = socket.socketpair()
    p = subprocess.Popen([os.path.join(exdir, "upload_poll")], stdin=child, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE)
    child.close()
    send_in_pieces(parent, data, rng)
    out, err = p.communicate(timeout=60)
    parent.close()
    m = re.match(r"OK npz (\d+) members (\d+) bytes (\d+) reads$", out.decode().strip())
    ok(p.returncode == 0 and m and int(m.group(1)) == len(truth(data)) and int(m.group(2)) == len(data),
       "upload_poll socketpair %s: exit %s %r %r" % (label, p.returncode, out, err[-300:]))
    if len(data) > 16384:  # more than one read buffer: it cannot have come in one read
        ok(m is not None and int(m.group(3)) > 1, "upload_poll socketpair %s: read in one piece" % label)


def client(port, data, rng, result, early):
    s = socket.create_connection(("127.0.0.1", port))
    got = []

    def answered():
        r, _, _ = select.select([s], [], [], 0)
        return bool(r)
    sent = send_in_pieces(s, data, rng, stop=answered if early else None)
    s.settimeout(30)
    while True:
        try:
            b = s.recv(4096)
        except (ConnectionResetError, socket.timeout):
            break
        if not b:
            break
        got.append(b)
    s.close()
    result.append((b"".join(got).decode(), sent))


def test_upload_listen(exdir, uploads, seed):
    p = subprocess.Popen([os.path.join(exdir, "upload_poll"), "--listen", "0", "--count", str(len(uploads))],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    port = int(p.stdout.readline().split()[1])
    results = [[] for _ in uploads]
    threads = [threading.Thread(target=client, args=(port, data, random.Random(seed + i), results[i], early))
               for i, (_, data, _, early) in enumerate(uploads)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    out, err = p.communicate(timeout=60)
    ok(p.returncode == (1 if any(u[2] for u in uploads) else 0), "upload_poll --listen: exit %s %r" % (
        p.returncode, err[-300:]))
    for (label, data, want_code, early), res in zip(uploads, results):
        reply, sent = res[0] if res else ("", 0)
        if want_code is None:
            m = re.match(r"OK npz (\d+) members (\d+) bytes", reply)
            ok(m and int(m.group(1)) == len(truth(data)) and int(m.group(2)) == len(data),
               "loopback %s: reply %r" % (label, reply))
        else:
            ok(reply.startswith("REJECTED %s " % want_code), "loopback %s: reply %r, want %s" % (
                label, reply, want_code))
        if early:  # rejected while arriving: answered before the client was done sending
            ok(sent < len(data), "loopback %s: the rejection came only after %d of %d bytes" % (
                label, sent, len(data)))
    ok(len(out.decode().splitlines()) == len(uploads), "upload_poll printed %r" % out)


# ---- python/npzstream.py ---------------------------------------------------------------------------

def c_layout():
    """sizeof/offsetof of the public structs as the C compiler sees them."""
    src = r"""
#include <stddef.h>
#include <stdio.h>
#include <npzstream.h>
#define F(T, m) printf(#T " " #m " %zu\n", offsetof(T, m));
int main(void) {
    printf("npzs_event sizeof %zu\nnpzs_array_info sizeof %zu\nnpzs_limits sizeof %zu\nnpzs_in sizeof %zu\n",
           sizeof(npzs_event), sizeof(npzs_array_info), sizeof(npzs_limits), sizeof(npzs_in));
    F(npzs_event, name) F(npzs_event, array) F(npzs_event, data) F(npzs_event, pos) F(npzs_event, kind)
    F(npzs_event, size) F(npzs_event, data_crc32) F(npzs_event, data_size) F(npzs_event, format)
    F(npzs_event, members) F(npzs_array_info, dtype) F(npzs_array_info, ndim) F(npzs_array_info, shape)
    F(npzs_array_info, nbytes) F(npzs_array_info, header_len) F(npzs_limits, max_total_bytes)
    F(npzs_limits, inflate_window) F(npzs_limits, max_memory) F(npzs_array_info, dt_nodes)
    F(npzs_array_info, dt_nfields) F(npzs_array_info, dt_fields) F(npzs_dtnode, dtype) F(npzs_dtnode, base)
    F(npzs_dtnode, shape) F(npzs_dtfield, title) F(npzs_dtfield, offset) F(npzs_dtfield, type)
    printf("npzs_dtnode sizeof %zu\nnpzs_dtfield sizeof %zu\n", sizeof(npzs_dtnode), sizeof(npzs_dtfield));
    return 0;
}
"""
    with tempfile.TemporaryDirectory() as d:
        open(os.path.join(d, "l.c"), "w").write(src)
        subprocess.run(["cc", "-I" + os.path.join(ROOT, "include"), "-o", os.path.join(d, "l"),
                        os.path.join(d, "l.c")], check=True)
        out = subprocess.run([os.path.join(d, "l")], capture_output=True, text=True).stdout
    return [l.split() for l in out.splitlines()]


def test_python(datasets, quick):
    sys.path.insert(0, os.path.join(ROOT, "python"))
    import npzstream as nz
    so = os.path.join(ROOT, "build", "libnpzstream.so")
    lib = nz.load_library()
    ok(os.path.realpath(lib._name) == os.path.realpath(so), "python module loaded %s, not %s" % (lib._name, so))
    types = {"npzs_event": nz.NpzsEvent, "npzs_array_info": nz.NpzsArrayInfo, "npzs_limits": nz.NpzsLimits,
             "npzs_in": nz.NpzsIn, "npzs_dtnode": nz.NpzsDtNode, "npzs_dtfield": nz.NpzsDtField}
    for t, field, value in c_layout():
        got = ctypes.sizeof(types[t]) if field == "sizeof" else getattr(types[t], field).offset
        ok(got == int(value), "ctypes layout %s.%s = %d, C says %s" % (t, field, got, value))

    for label, data in datasets:
        want = truth(data)
        rng = random.Random(len(data))
        sizes = [1, 7, 4096, None] if not quick else [4096, None]
        for size in sizes:
            data_seen = {}

            def on_data(m, pos, b, data_seen=data_seen):
                data_seen.setdefault(m.name, bytearray()).extend(b)
            v = nz.Validator(on_data=on_data)
            i = 0
            while i < len(data):  # a request body in chunks: fixed size, or random with empty ones
                n = size if size else rng.choice([0, 1, 3, 500, 65536])
                ok_so_far = v.feed(data[i:i + n])
                i += n
                if not ok_so_far:
                    break
            verdict = v.finish()
            ok(verdict.ok and verdict.format == "npz" and verdict.bytes == len(data)
               and [m.key for m in verdict.members] == [k for k, _ in want],
               "python %s chunks %s: %r" % (label, size, verdict))
            for m, (key, arr) in zip(verdict.members, want):
                ok(m.kind == "array" and m.dtype == arr.dtype.str and m.shape == arr.shape
                   and m.nbytes == arr.nbytes and m.data_crc32 == zlib.crc32(arr.tobytes(order="A"))
                   and bytes(data_seen.get(m.name, b"")) == arr.tobytes(order="A"),
                   "python %s chunks %s member %s: %r" % (label, size, key, m))
            v.close()
        # rejections: truncated, corrupted, an early stop
        v = nz.Validator()
        for j in range(0, len(data) - 3, 1000):
            v.feed(data[j:min(j + 1000, len(data) - 3)])
        r = v.finish()
        ok(not r.ok and r.code == "truncated" and r.offset == len(data) - 3, "python truncated: %r" % r)
        bad = corrupt_crc(data)
        if bad:
            r = nz.validate(io.BytesIO(bad), chunk=333)
            ok(not r.ok and r.code in ("crc_mismatch", "inflate", "size_mismatch") and r.member == want[0][0] + ".npy",
               "python corrupted: %r" % r)
    v = nz.Validator()
    ok(v.feed(b"GIF89a....") is False, "python: bad magic not seen at once")
    r = v.finish()
    ok(r.code == "bad_magic" and r.offset == 0 and not r, "python bad magic: %r" % r)
    v = nz.Validator(max_members=1)
    r = (v.feed(datasets[0][1]), v.finish())[1]
    ok(r.code == "limit", "python max_members=1: %r" % r)
    try:
        nz.Validator(max_ndim=1000)
        ok(False, "python: an out-of-range limit was accepted")
    except nz.NpzstreamError:
        ok(True, "")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    exdir = os.path.join(os.path.dirname(os.path.abspath(a.bin)), "examples")
    if not ok(all(os.access(os.path.join(exdir, e), os.X_OK) for e in ("read_stdin", "upload_poll", "copy_array")),
              "examples not built in %s (make examples)" % exdir):
        return T.summary()
    sets = archives()
    steps = [
        lambda: [test_read_stdin(exdir, l, d) for l, d in sets],
        lambda: [test_copy_array(exdir, l, d) for l, d in sets],
        lambda: [test_upload_socketpair(exdir, l, d, random.Random(i)) for i, (l, d) in enumerate(sets)],
        lambda: test_upload_listen(exdir, [
            ("good-" + sets[0][0], sets[0][1], None, False),
            ("good-" + sets[2][0], sets[2][1], None, False),
            ("truncated", sets[1][1][:-100], "truncated", False),
            ("corrupted", corrupt_crc(sets[0][1]), "crc_mismatch", False),
            ("not-npz", b"GIF89a" + os.urandom(500000), "bad_magic", True),
        ], 7),
        lambda: test_python(sets, a.quick),
    ]
    for step in steps:
        try:
            step()
        except Exception as e:  # noqa: BLE001
            ok(False, "exception: %s: %s" % (type(e).__name__, e))
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
