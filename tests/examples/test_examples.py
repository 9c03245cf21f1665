"""Run the examples/ C programs (the Python package and its example: tests/python).


The example binaries are taken from the examples/ folder next to --bin (build/examples or
build/san/examples, built by `make examples`, a prerequisite of `make test`).  Archives are
written by NumPy; the truths come from np.load and zipfile.  upload_poll is driven over a
socketpair (as its stdin) and over loopback TCP by writers that send random-sized pieces with
pauses.
"""
import io
import os
import random
import re
import select
import socket
import subprocess
import sys
import threading
import time
import zipfile
import zlib

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import ok  # noqa: E402


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

def read_stdin_of(exdir, label, data):
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


def copy_array_of(exdir, label, data):
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


def upload_socketpair_of(exdir, label, data, rng):
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


def upload_listen_of(exdir, uploads, seed):
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


@pytest.fixture(scope="module")
def exdir(bindir):
    """The examples built next to --bin (build/examples, build/san/examples)."""
    d = os.path.join(bindir, "examples")
    assert all(os.access(os.path.join(d, e), os.X_OK) for e in ("read_stdin", "upload_poll", "copy_array")), \
        "examples not built in %s (make examples)" % d
    return d


SETS = archives()
LABELS = [label for label, _ in SETS]


@pytest.mark.parametrize("i", range(len(SETS)), ids=LABELS)
def test_read_stdin(exdir, i):
    read_stdin_of(exdir, *SETS[i])


@pytest.mark.parametrize("i", range(len(SETS)), ids=LABELS)
def test_copy_array(exdir, i):
    copy_array_of(exdir, *SETS[i])


@pytest.mark.parametrize("i", range(len(SETS)), ids=LABELS)
def test_upload_socketpair(exdir, i):
    upload_socketpair_of(exdir, *SETS[i], random.Random(i))


def test_upload_listen(exdir):
    upload_listen_of(exdir, [
        ("good-" + SETS[0][0], SETS[0][1], None, False),
        ("good-" + SETS[2][0], SETS[2][1], None, False),
        ("truncated", SETS[1][1][:-100], "truncated", False),
        ("corrupted", corrupt_crc(SETS[0][1]), "crc_mismatch", False),
        ("not-npz", b"GIF89a" + os.urandom(500000), "bad_magic", True),
    ], 7)
