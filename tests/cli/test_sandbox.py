"""The confined validator (issue 42, README "The sandbox", SECURITY.md "The sandbox").

check, ls and extract confine themselves once their inputs are open: a seccomp allow-list and a
Landlock ruleset.  The test hook NPZSTREAM_SANDBOX_PROBE (cli/sandbox.h) makes the confined process
try what it must not do (open another file, write one, exec, make a socket, fork, vfork, clone3,
map executable memory) and say what happened; each must be refused, a thread must not be, and
with --no-sandbox each goes through (so the test can fail).  The truth for the verdicts is the same
command with --no-sandbox, and hashlib/np.load for the bytes."""
import hashlib
import io
import json
import os
import re
import subprocess
import sys
import threading
import zipfile

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import ok  # noqa: E402

PROBE = "NPZSTREAM_SANDBOX_PROBE"
LINE = re.compile(r"^npzstream: sandbox probe (\S+): (allowed|refused \((.*)\))$")
# what no parse needs: refused by the system-call filter (EPERM; clone3 ENOSYS, glibc's fallback)
SECCOMP_REFUSED = ["exec", "socket", "socket-unix", "fork", "vfork", "clone3", "mmap-exec"]


def run(binary, args, env=None, **kw):
    e = dict(os.environ)
    e.pop(PROBE, None)
    e.update(env or {})
    return subprocess.run([binary] + args, capture_output=True, timeout=120, env=e, **kw)


def probes(stderr):
    """{name: (allowed, reason)} from the hook's lines, in order."""
    out = {}
    for line in stderr.decode(errors="replace").splitlines():
        m = LINE.match(line)
        if m:
            out.setdefault(m.group(1), []).append((m.group(2) == "allowed", m.group(3)))
    return out


@pytest.fixture(scope="module")
def layers(binary):
    r = run(binary, ["--sandbox-info"])
    assert r.returncode == 0, r.stderr
    text = r.stdout.decode()
    have = {k: bool(re.search(r"^%s: on\b" % k, text, re.M)) for k in ("seccomp", "landlock")}
    assert have["seccomp"] or have["landlock"], "neither layer here:\n" + text
    return have


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = str(tmp_path_factory.mktemp("sandbox"))
    out = {}
    for i in range(6):
        p = os.path.join(d, "f%d.npz" % i)
        arrays = {"a%d" % k: np.arange(20000 * (k + 1), dtype="<f8") * (i + 1) for k in range(4)}
        (np.savez_compressed if i % 2 else np.savez)(p, **arrays)
        out[p] = arrays
    npy = os.path.join(d, "one.npy")
    np.save(npy, np.arange(10, dtype="<i4"))
    out[npy] = None
    secret = os.path.join(d, "not-an-input.txt")
    with open(secret, "w") as f:
        f.write("not listed\n")
    return d, out, secret


def probe_env(tmp, secret, extra=()):
    return {PROBE: ",".join(["read=" + secret, "write=" + os.path.join(tmp, "made-by-probe")] + SECCOMP_REFUSED
                            + ["thread"] + list(extra))}


@pytest.mark.parametrize("cmd", [["check"], ["ls"], ["check", "-j", "4"], ["ls", "-P", "4"]])
def test_confined_refuses(binary, layers, files, tmp, cmd):
    d, arrays, secret = files
    inputs = sorted(arrays)[:3]
    r = run(binary, cmd + inputs, env=probe_env(tmp, secret))
    assert r.returncode == 0, r.stderr
    got = probes(r.stderr)
    if layers["landlock"]:
        assert got["read"] == [(False, "Permission denied")], got
    assert got["write"][0][0] is False, got
    assert not os.path.exists(os.path.join(tmp, "made-by-probe"))
    if layers["seccomp"]:
        for name in SECCOMP_REFUSED:
            want = "Function not implemented" if name == "clone3" else "Operation not permitted"
            assert got[name] == [(False, want)], (name, got)
    assert b"npzstream-sandbox-probe-exec" not in r.stdout
    assert got["thread"] == [(True, None)], got  # -j N and -P N need threads


@pytest.mark.parametrize("cmd", [["check"], ["ls"]])
def test_no_sandbox_lets_it_through(binary, files, tmp, cmd):
    """The same probes without the sandbox: each goes through (the test above can fail)."""
    d, arrays, secret = files
    env = probe_env(tmp, secret)
    env[PROBE] = env[PROBE].replace(",exec", "") + ",exec"  # exec last: it replaces the process
    r = run(binary, cmd + ["--no-sandbox", sorted(arrays)[0]], env=env)
    got = probes(r.stderr)
    for name in ["read", "write", "thread"] + [n for n in SECCOMP_REFUSED if n != "exec"]:
        assert got.get(name) == [(True, None)], (name, got)
    assert os.path.exists(os.path.join(tmp, "made-by-probe"))
    assert b"npzstream-sandbox-probe-exec" in r.stdout  # the exec ran /bin/echo
    assert r.returncode == 0


def test_verdicts_same_confined(binary, files, quick):
    """Every mode's output, confined and not: the same bytes (-j 4, -P 4, --sha256, --jsonl, a
    rejected file, a missing one, a directory)."""
    d, arrays, secret = files
    names = sorted(arrays) + [secret, os.path.join(d, "missing.npz"), d]
    modes = [["check"], ["ls"], ["check", "--jsonl"], ["ls", "--jsonl"], ["check", "-j", "4"], ["ls", "-P", "4"],
             ["check", "-P", "4", "-j", "4", "--jsonl"], ["check", "--sha256", "--jsonl"], ["ls", "-P", "4", "--sha256"]]
    for mode in modes:
        a = run(binary, mode + names)
        b = run(binary, mode + ["--no-sandbox"] + names)
        ok(a.returncode == b.returncode == 2, "%s: exit %d and %d" % (mode, a.returncode, b.returncode), a.stderr)
        ok(a.stdout == b.stdout and a.stderr == b.stderr, "%s: the same output" % mode, a.stderr + b.stderr)
    r = run(binary, ["check", "--sha256", "--jsonl"] + sorted(arrays)[:1])
    with zipfile.ZipFile(sorted(arrays)[0]) as z:
        want = hashlib.sha256(np.load(io.BytesIO(z.read("a0.npy"))).tobytes()).hexdigest()
    assert want.encode() in r.stdout, r.stdout[:400]


@pytest.mark.parametrize("null", [False, True])
def test_files_from_limits_reading(binary, layers, files, tmp, null):
    """--files-from: the names are read in before the sandbox, and only they can be opened."""
    if not layers["landlock"]:
        pytest.skip("the kernel has no Landlock: any readable file may be opened")
    d, arrays, secret = files
    names = sorted(arrays)[:4]
    lst = os.path.join(tmp, "list")
    with open(lst, "wb") as f:
        f.write(("\0" if null else "\n").join(names).encode() + (b"" if null else b"\n\n"))
    extra = ["-0"] if null else []
    env = {PROBE: "read=%s,read=%s" % (names[-1], secret)}
    for via_stdin in (False, True):
        args = ["check", "--jsonl", "--files-from", "-" if via_stdin else lst] + extra
        with open(lst, "rb") as f:
            r = run(binary, args, env=env, stdin=f if via_stdin else subprocess.DEVNULL)
        assert r.returncode == 0, r.stderr
        assert r.stdout.count(b'"ok": true') == len(names), r.stdout
        assert probes(r.stderr)["read"] == [(True, None), (False, "Permission denied")], r.stderr
        u = run(binary, args + ["--no-sandbox"], stdin=open(lst, "rb") if via_stdin else subprocess.DEVNULL)
        assert u.stdout == r.stdout


def test_new_file_at_a_listed_name_is_a_read_error(binary, layers, files, tmp):
    """A name that did not exist when the process was confined cannot be opened later: a read
    error (exit 2), never a silent pass."""
    if not layers["landlock"]:
        pytest.skip("the kernel has no Landlock")
    d, arrays, secret = files
    fifo, late = os.path.join(tmp, "fifo"), os.path.join(tmp, "late.npy")
    os.mkfifo(fifo)
    p = subprocess.Popen([binary, "check", fifo, late], stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    holder = {}
    buf = io.BytesIO()
    np.save(buf, np.arange(5))

    def feed():
        with open(fifo, "wb") as f:  # returns once check opened the FIFO: it is confined by then
            np.save(late, np.arange(3))
            f.write(buf.getvalue())
        holder["done"] = True
    t = threading.Thread(target=feed)
    t.start()
    out, err = p.communicate(timeout=60)
    t.join(10)
    assert holder.get("done")
    assert p.returncode == 2, (out, err)
    assert b"fifo: ok" in out, out
    assert ("%s: Permission denied" % late).encode() in err, err
    u = run(binary, ["check", late])
    assert u.returncode == 0  # the file itself is fine


def test_extract_writes_only_its_destination(binary, layers, files, tmp):
    d, arrays, secret = files
    src = sorted(arrays)[1]
    os.mkdir(os.path.join(tmp, "out"))
    outside = os.path.join(tmp, "outside")
    for args, inside in ((["a1", "-o", os.path.join(tmp, "out", "a1.npy")], os.path.join(tmp, "out", "probe")),
                         (["--all", "-d", os.path.join(tmp, "all", "d")], os.path.join(tmp, "all", "probe"))):
        env = {PROBE: "write=%s,write=%s,read=%s,exec,socket,fork" % (inside, outside, secret)}
        r = run(binary, ["extract"] + args + [src], env=env)
        assert r.returncode == 0, r.stderr
        got = probes(r.stderr)
        assert got["write"][0] == (True, None), got  # beneath the destination
        if layers["landlock"]:
            assert got["write"][1] == (False, "Permission denied"), got
            assert got["read"] == [(False, "Permission denied")], got
            assert not os.path.exists(outside)
        if layers["seccomp"]:
            for name in ("exec", "socket", "fork"):
                assert got[name] == [(False, "Operation not permitted")], got
    np.testing.assert_array_equal(np.load(os.path.join(tmp, "out", "a1.npy")), arrays[src]["a1"])
    for k in range(4):
        np.testing.assert_array_equal(np.load(os.path.join(tmp, "all", "d", "a%d.npy" % k)), arrays[src]["a%d" % k])
    # to stdout: no write rights at all
    r = run(binary, ["extract", "a0", src], env={PROBE: "write=" + os.path.join(tmp, "x")})
    assert np.array_equal(np.load(io.BytesIO(r.stdout)), arrays[src]["a0"])
    assert probes(r.stderr)["write"][0][0] is False


def test_sandbox_info(binary):
    r = run(binary, ["--sandbox-info"])
    lines = r.stdout.decode().splitlines()
    assert r.returncode == 0 and lines[0].startswith("seccomp: ") and lines[1].startswith("landlock: "), lines


# ---- scan: the named files for reading, the -r directories for reading beneath ----

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scan"))
import mixed  # noqa: E402  (tests/scan's mixed folder)


@pytest.fixture(scope="module")
def mixed_dir(tmp_path_factory):
    root = str(tmp_path_factory.mktemp("scanbox"))
    folder = os.path.join(root, "models")
    os.mkdir(folder)
    mixed.write(folder)
    beside = os.path.join(root, "beside.npz")  # outside the folder scanned
    with open(beside, "wb") as f:
        f.write(mixed.CASES["clean.npz"][0])
    return folder, beside


def scan_cases(folder):
    inside = mixed.path_of(folder, "clean.gz")  # beneath the folder, in sub/
    return [(["scan", mixed.path_of(folder, "clean.npz"), mixed.path_of(folder, "model.pkl")], None),
            (["scan", "-r", folder], inside), (["scan", "-r", "--keep-going", "--jsonl", folder], inside)]


def test_scan_confined_refuses(binary, layers, mixed_dir, tmp):
    """scan and scan -r: every probe refused, a thread allowed; beneath a -r directory a file can be
    read (the read-beneath rule), a file beside it cannot."""
    folder, beside = mixed_dir
    for args, inside in scan_cases(folder):
        extra = ["read=" + inside] if inside else []
        r = run(binary, args, env=probe_env(tmp, beside, extra))
        assert r.returncode in (1, 2), r.stderr
        got = probes(r.stderr)
        if layers["landlock"]:
            want = [(False, "Permission denied")] + ([(True, None)] if inside else [])
            assert got["read"] == want, (args, got)
        assert got["write"][0][0] is False, got
        assert not os.path.exists(os.path.join(tmp, "made-by-probe"))
        if layers["seccomp"]:
            for name in SECCOMP_REFUSED:
                want = "Function not implemented" if name == "clone3" else "Operation not permitted"
                assert got[name] == [(False, want)], (args, name, got)
        assert got["thread"] == [(True, None)], got
        assert b"npzstream-sandbox-probe-exec" not in r.stdout


def test_scan_no_sandbox_lets_it_through(binary, mixed_dir, tmp):
    folder, beside = mixed_dir
    for args, _ in scan_cases(folder):
        env = probe_env(tmp, beside)
        env[PROBE] = env[PROBE].replace(",exec", "") + ",exec"  # exec last: it replaces the process
        made = os.path.join(tmp, "made-by-probe")
        if os.path.exists(made):
            os.unlink(made)
        r = run(binary, args[:1] + ["--no-sandbox"] + args[1:], env=env)
        got = probes(r.stderr)
        for name in ["read", "write", "thread"] + [n for n in SECCOMP_REFUSED if n != "exec"]:
            assert got.get(name) == [(True, None)], (args, name, got)
        assert os.path.exists(made)
        assert b"npzstream-sandbox-probe-exec" in r.stdout


def test_scan_same_confined(binary, mixed_dir, tmp):
    """scan's output over the mixed folder, confined and not: the same bytes (text, --jsonl,
    --keep-going, --sarif FILE, --sarif to stdout), the same exit status (2: a link and an
    unreadable file are skipped), and a SARIF file made inside the folder is not itself scanned."""
    folder, beside = mixed_dir
    modes = [["-r"], ["-r", "--jsonl"], ["-r", "--keep-going", "--jsonl"], ["-r", "--keep-going"],
             ["-r", "--sarif", "-"], ["-r", "--keep-going", "-q", "--sarif", "@"], ["-r", "--jsonl", "--sarif", "@"],
             ["-r", "--jsonl", "--sarif", os.path.join(folder, "in-folder.sarif")]]
    for mode in modes:
        outs = []
        for unconfined in (False, True):
            sarif = os.path.join(tmp, "scan-%d.sarif" % unconfined)
            args = ["scan"] + (["--no-sandbox"] if unconfined else []) + [sarif if a == "@" else a for a in mode]
            r = run(binary, args + [folder, mixed.path_of(folder, "clean.npy"), beside])
            written = None
            for a in args:
                if a.endswith(".sarif"):
                    with open(a, "rb") as f:
                        written = f.read()
                    if a.startswith(folder):
                        os.unlink(a)
            outs.append((r.returncode, r.stdout, r.stderr, written))
        (ca, oa, ea, sa), (cb, ob, eb, sb) = outs
        ok(ca == cb == 2, "%s: exit %d and %d" % (mode, ca, cb), ea + eb)
        ok(oa == ob and ea == eb, "%s: the same output" % mode, ea + eb)
        ok(sa == sb, "%s: the same SARIF file" % mode)
        ok(len(oa) > 1000 or (sa and len(sa) > 1000), "%s: something was written" % mode)
        ok(b"in-folder.sarif" not in oa, "%s: the SARIF file is not scanned" % mode)


# Landlock stacks at most 16 rulesets on a process; a 17th is refused (E2BIG).  These are the
# system calls' numbers on every architecture (the calls after 424 have one number everywhere).
LANDLOCK_CREATE, LANDLOCK_RESTRICT, LANDLOCK_MAX_LAYERS = 444, 446, 16
LANDLOCK_MAKE_BLOCK = 1 << 11  # the right each layer handles: making block devices (with no rule: none)


def landlock_full():
    """A preexec_fn: the child stacks as many Landlock rulesets as a process may have, so that
    the confining of the program it then runs fails (its own ruleset is one too many)."""
    import ctypes
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall.restype = ctypes.c_long
    attr = ctypes.c_uint64(LANDLOCK_MAKE_BLOCK)
    if libc.prctl(38, 1, 0, 0, 0) != 0:  # PR_SET_NO_NEW_PRIVS
        raise OSError(ctypes.get_errno(), "no_new_privs")
    for _ in range(LANDLOCK_MAX_LAYERS):
        fd = libc.syscall(LANDLOCK_CREATE, ctypes.byref(attr), ctypes.c_size_t(8), ctypes.c_uint32(0))
        if fd < 0 or libc.syscall(LANDLOCK_RESTRICT, ctypes.c_int(fd), ctypes.c_uint32(0)) != 0:
            raise OSError(ctypes.get_errno(), "landlock")
        os.close(fd)


def test_scan_sarif_when_confining_fails(binary, layers, files, tmp):
    """When the process cannot be confined, nothing is scanned (exit 2, the reason on stderr),
    and --sarif still writes a SARIF document -- a failed run with a notification that says why
    -- to its FILE or to stdout, never an empty file.  The failure is real: Landlock's layers are
    all taken before the program starts."""
    if not layers["landlock"]:
        pytest.skip("no Landlock in this kernel: its failure cannot be made")
    schema = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "scan",
                          "sarif-schema-2.1.0.json")
    target = next(iter(files[1]))  # an archive of the module's files
    out = os.path.join(tmp, "failed.sarif")
    for dest in (out, "-"):
        r = subprocess.run([binary, "scan", "--sarif", dest, target], capture_output=True, timeout=60,
                           preexec_fn=landlock_full)
        assert r.returncode == 2 and b"sandbox: Landlock" in r.stderr, (r.returncode, r.stderr)
        doc = json.loads(open(out).read() if dest == out else r.stdout)
        run_ = doc["runs"][0]
        assert run_["results"] == [] and run_["invocations"][0]["executionSuccessful"] is False, doc
        notes = run_["invocations"][0]["toolExecutionNotifications"]
        assert len(notes) == 1 and "could not be confined" in notes[0]["message"]["text"], notes
        try:
            import jsonschema
        except ImportError:
            continue
        jsonschema.Draft4Validator(json.load(open(schema))).validate(doc)
    r = run(binary, ["scan", "--no-sandbox", "--sarif", out, target])  # the control: the same scan runs
    assert r.returncode == 0 and json.load(open(out))["runs"][0]["invocations"][0]["executionSuccessful"], r.stderr


def one_file_commands(arrays, tmp):
    """trace, refs and vlen, each over an input of its own kind (vlen: a chunk of two float32
    elements, numcodecs' VLenBytes framing)."""
    chunk = os.path.join(tmp, "chunk.bin")
    with open(chunk, "wb") as f:
        f.write(b"\x02\x00\x00\x00" + b"\x08\x00\x00\x00" + np.arange(2, dtype="<f4").tobytes()
                + b"\x04\x00\x00\x00" + np.ones(1, dtype="<f4").tobytes())
    src = sorted(arrays)[0]
    return {"trace": ["trace", src], "refs": ["refs", src], "vlen": ["vlen", "--dtype", "<f4", "--shape", "null", chunk]}


@pytest.mark.parametrize("name", ["trace", "refs", "vlen"])
def test_one_file_commands_confined(binary, layers, files, tmp, name):
    """trace, refs and vlen confine themselves once their input is open, as check does: the
    probes are refused (and go through with --no-sandbox: the test can fail), and the output is
    the same bytes confined and not."""
    d, arrays, secret = files
    cmd = one_file_commands(arrays, tmp)[name]
    r = run(binary, cmd, env=probe_env(tmp, secret))
    assert r.returncode == 0, r.stderr
    got = probes(r.stderr)
    if layers["landlock"]:
        assert got["read"] == [(False, "Permission denied")], got
    assert got["write"][0][0] is False and not os.path.exists(os.path.join(tmp, "made-by-probe")), got
    if layers["seccomp"]:
        for probe in SECCOMP_REFUSED:
            want = "Function not implemented" if probe == "clone3" else "Operation not permitted"
            assert got[probe] == [(False, want)], (probe, got)
    env = probe_env(tmp, secret)
    env[PROBE] = env[PROBE].replace(",exec", "") + ",exec"  # exec last: it replaces the process
    free = run(binary, cmd[:1] + ["--no-sandbox"] + cmd[1:], env=env)
    got = probes(free.stderr)
    for probe in ["read", "write", "thread"] + [n for n in SECCOMP_REFUSED if n != "exec"]:
        assert got.get(probe) == [(True, None)], (probe, got)
    os.unlink(os.path.join(tmp, "made-by-probe"))
    a, b = run(binary, cmd), run(binary, cmd[:1] + ["--no-sandbox"] + cmd[1:])
    assert a.returncode == b.returncode == 0 and a.stdout == b.stdout and len(a.stdout) > 20, (a, b)
