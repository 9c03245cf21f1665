#!/usr/bin/python3
"""CLI tests for `npzstream ls`, `extract`, --help/--version and the limit flags (issue 7).

usage: /usr/bin/python3 tests/cli/test_cli.py --bin build/npzstream [--quick]

Every archive is written by NumPy (np.savez to a pipe, np.savez_compressed, write_array with
versions 1.0/2.0/3.0) or by Python's zipfile; every expected value comes from np.load and
zipfile, never from a previous run of npzstream.  Input always reaches the CLI through a pipe.
Last line: `cli: N passed, M failed`.
"""
import argparse, io, json, os, re, struct, subprocess, sys, tempfile, zipfile, zlib
import numpy as np
from numpy.lib import format as npf

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import Tally  # noqa: E402
PY = "/usr/bin/python3"
ERR_LINE = re.compile(r"^npzstream: (.+?): offset (\d+): (?:member (.+?): )?(.+) \((\w+)\)$")
LIMIT_FLAGS = ["--max-header-size", "--max-ndim", "--max-fields", "--max-depth", "--max-members",
               "--max-name-len", "--max-extra-len", "--max-total-bytes", "--inflate-window"]

T = Tally("cli")
ok = T.ok


def run(binary, args, data=b"", **kw):
    return subprocess.run([binary] + args, input=data, capture_output=True, timeout=120, **kw)


# ---- inputs, all written by NumPy / zipfile -----------------------------------------------------

def savez_via_pipe(code):
    """Bytes of an archive NumPy wrote to a pipe (so its members have data descriptors)."""
    r = subprocess.run([PY, "-c", "import sys, numpy as np\n" + code], stdout=subprocess.PIPE, check=True)
    return r.stdout


PIPE_CODE = ("np.savez(sys.stdout.buffer, w=np.arange(256, dtype='<f4').reshape(4, 64),"
             " f=np.asfortranarray(np.arange(15.).reshape(3, 5)), s=np.float64(3.5),"
             " e=np.zeros((0, 3), dtype='>i2'), u=np.array(['ab', 'cde']),"
             " r=np.zeros(3, dtype=[('a', '<i4'), ('b', 'S3'), ('c', [('d', '<f2')], (2,))]))")


def compressed_archive():
    bio = io.BytesIO()
    np.savez_compressed(bio, big=np.arange(100000, dtype='<i8') % 7, m=np.eye(5, dtype='<c8'),
                        t=np.array(['2020-01-01'], dtype='M8[D]'))
    return bio.getvalue()


def npy_bytes(arr, version=None):
    bio = io.BytesIO()
    npf.write_array(bio, arr, version=version)
    return bio.getvalue()


def zipped(members, compress=zipfile.ZIP_STORED):
    bio = io.BytesIO()
    with zipfile.ZipFile(bio, "w", compress) as z:
        for name, raw in members:
            z.writestr(name, raw)
    return bio.getvalue()


def handwritten_npy():
    """A header NumPy accepts but does not write: other key order, double quotes, no padding."""
    text = b'{"shape": (2, 3), "fortran_order": False, "descr": "<i2"}\n'
    return b"\x93NUMPY\x01\x00" + struct.pack("<H", len(text)) + text + np.arange(6, dtype="<i2").tobytes()


def mixed_archive():
    return zipped([("x.npy", npy_bytes(np.arange(10, dtype="<u2"), (2, 0))),
                   ("notes.txt", b"hello, not an array\n"),
                   ("v3.npy", npy_bytes(np.zeros(2, dtype=[("\u00e9t\u00e9", "<i4"), ("\u65e5", "<f8")]), (3, 0))),
                   ("l1.npy", npy_bytes(np.zeros(2, dtype=[("caf\u00e9", "<i4")]), (1, 0))),
                   ("hand.npy", handwritten_npy()),
                   ("empty.bin", b"")], zipfile.ZIP_DEFLATED)


def truth(data):
    """{name: dict} from zipfile + np.load for an .npz held in memory."""
    out = {}
    with zipfile.ZipFile(io.BytesIO(data)) as zf, np.load(io.BytesIO(data), allow_pickle=False) as z:
        for info in zf.infolist():
            raw = zf.read(info)
            key = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            t = {"name": info.filename, "key": key, "raw": raw, "stored_size": info.compress_size,
                 "size": info.file_size, "crc32": info.CRC, "offset": info.header_offset,
                 "method": "deflated" if info.compress_type == zipfile.ZIP_DEFLATED else "stored"}
            v = z[key]
            if isinstance(v, np.ndarray):
                data_bytes = raw[len(raw) - v.nbytes:] if v.nbytes else b""
                t.update(kind="array", arr=v, dtype=v.dtype.str, shape=list(v.shape), nbytes=v.nbytes,
                         fortran=bool(v.flags.f_contiguous and not v.flags.c_contiguous and v.ndim > 1),
                         data_crc32=zlib.crc32(data_bytes), data_size=v.nbytes)
            else:
                t.update(kind="blob", data_crc32=zlib.crc32(raw), data_size=len(raw))
            out[info.filename] = t
    return out


# ---- ls ----------------------------------------------------------------------------------------

def test_ls(binary, label, data, quick):
    want = truth(data)
    r = run(binary, ["ls", "--json", "-"], data)
    ok(r.returncode == 0, "%s: ls --json exit %d: %s" % (label, r.returncode, r.stderr[:300]))
    try:
        d = json.loads(r.stdout)
    except ValueError:
        return ok(False, "%s: ls --json is not one JSON object" % label)
    ok(d["ok"] is True and d["error"] is None and d["format"] == "npz", "%s: ls --json verdict" % label)
    ok([m["name"] for m in d["members"]] == list(want), "%s: ls --json member order %s" % (
        label, [m["name"] for m in d["members"]]))
    for m in d["members"]:
        t = want.get(m["name"])
        if not t:
            continue
        fields = ["key", "kind", "method", "stored_size", "size", "crc32", "offset", "data_crc32", "data_size"]
        if t["kind"] == "array":
            fields += ["dtype", "shape", "nbytes"]
            ok(m["fortran_order"] == t["fortran"] or len(m["shape"]) < 2,
               "%s: %s fortran_order %r" % (label, m["name"], m["fortran_order"]))
        for k in fields:
            ok(m.get(k) == t[k], "%s: ls --json %s.%s = %r, want %r" % (label, m["name"], k, m.get(k), t[k]))
    s = d.get("summary", {})
    ok(s.get("members") == len(want) and s.get("input_bytes") == len(data)
       and s.get("stored_bytes") == sum(t["stored_size"] for t in want.values())
       and s.get("data_bytes") == sum(t["data_size"] for t in want.values()), "%s: ls summary %r" % (label, s))
    # ls --json is check --json extended: every key check prints, with the same value
    c = json.loads(run(binary, ["check", "--json", "-"], data).stdout)
    ok(all(all(mc[k] == ml[k] for k in mc) for mc, ml in zip(c["members"], d["members"]))
       and len(c["members"]) == len(d["members"]), "%s: ls --json is not a superset of check --json" % label)

    # text: header, one row per member, the summary line
    r = run(binary, ["ls", "-"] + ([] if quick else ["--feed", "7"]), data)
    lines = r.stdout.decode("utf-8").splitlines()
    ok(r.returncode == 0 and len(lines) == len(want) + 4, "%s: ls text has %d lines, exit %d" % (
        label, len(lines), r.returncode))
    for line, t in zip(lines[2:], want.values()):
        cols = line.split(None, 7)
        if not ok(len(cols) == 8, "%s: ls row %r" % (label, line)):
            continue
        exp_shape = "-" if t["kind"] == "blob" else repr(tuple(t["shape"]))
        exp = [str(t["data_size"]), str(t["stored_size"]), t["kind"], t["method"],
               t.get("dtype", "-"), exp_shape.replace(" ", "")]
        got = cols[:5] + [cols[5]]
        # the shape column may contain spaces: re-split from the right instead
        m = re.match(r"^\s*(\d+)\s+(\d+)\s+(\w+)\s+(\w+)\s+(\S+)\s+(\(.*?\)|-)\s+([CF-])\s+(.*)$", line)
        if ok(m is not None, "%s: ls row does not parse: %r" % (label, line)):
            got = list(m.groups()[:5]) + [m.group(6).replace(" ", "")]
            ok(got == exp and m.group(8) == t["name"], "%s: ls row %r, want %r %s" % (label, line, exp, t["name"]))
            if t["kind"] == "array":
                ok(m.group(7) == ("F" if t["fortran"] else "C"), "%s: order column of %r" % (label, line))
    ok(lines[-1].endswith(": ok") and " %d members" % len(want) in lines[-1], "%s: summary %r" % (label, lines[-1]))


def test_ls_npy(binary):
    a = np.asfortranarray(np.arange(12, dtype=">i4").reshape(3, 4))
    raw = npy_bytes(a)
    r = run(binary, ["ls", "--json"], raw)
    d = json.loads(r.stdout)
    m = d["members"][0] if d["members"] else {}
    ok(r.returncode == 0 and d["format"] == "npy" and len(d["members"]) == 1 and m["name"] is None
       and m["shape"] == [3, 4] and m["dtype"] == a.dtype.str and m["fortran_order"] is True
       and m["data_size"] == a.nbytes and m["size"] == len(raw) and m["data_crc32"] == zlib.crc32(
           a.tobytes(order="A")), "ls of a plain .npy: %s" % r.stdout[:400])
    r = run(binary, ["ls"], raw)
    rows = r.stdout.decode().splitlines()
    ok(r.returncode == 0 and len(rows) == 5 and rows[2].split()[-1] == "-" and " F " in rows[2],
       "ls text of a .npy: %r" % rows)


def test_ls_rejected(binary, data):
    want = truth(data)
    names = list(want)
    cut = data[:len(data) - 30]  # inside the end record: every member complete, the verdict missing
    r = run(binary, ["ls", "-"], cut)
    out = r.stdout.decode().splitlines()
    err = r.stderr.decode().splitlines()
    ok(r.returncode == 1, "ls of a truncated archive: exit %d" % r.returncode)
    ok(len(out) == len(names) + 4 and "REJECTED (truncated)" in out[-1], "ls truncated stdout %r" % out[-2:])
    m = ERR_LINE.match(err[0]) if err else None
    ok(m is not None and m.group(1) == "-" and int(m.group(2)) == len(cut) and m.group(5) == "truncated",
       "ls truncated: stderr line %r" % err)
    r = run(binary, ["ls", "--json", "-"], cut)
    d = json.loads(r.stdout)
    ok(r.returncode == 1 and d["ok"] is False and d["error"]["code"] == "truncated"
       and d["error"]["offset"] == len(cut), "ls --json truncated: %s" % r.stdout[-300:])


# ---- check (text) --------------------------------------------------------------------------------

def check_line(t):
    """The line `check` prints for a member, from zipfile + np.load."""
    if t["kind"] == "array":
        shape = t["shape"]
        sh = "(%s)" % (", ".join(map(str, shape)) + ("," if len(shape) == 1 else ""))
        what = "%s %s%s, %d" % (t["dtype"], sh, " fortran" if t["fortran"] else "", t["nbytes"])
    else:
        what = "blob, %d" % t["size"]
    return "  %s: %s bytes, %s, crc32 %08x" % (t["name"], what, t["method"], t["data_crc32"])


def test_check_text(binary, label, data, quick):
    """One line per member as it completes, then the verdict; the same under small pushes."""
    want = truth(data)
    exp = [check_line(t) for t in want.values()] + ["-: ok (npz, %d member%s)" % (len(want), "" if len(want) == 1 else "s")]
    for feed in ([None] if quick else [None, 7, 4096]):
        r = run(binary, ["check", "-"] + (["--feed", str(feed)] if feed else []), data)
        lines = r.stdout.decode("utf-8").splitlines()
        ok(r.returncode == 0 and r.stderr == b"", "%s: check exit %d, stderr %r" % (label, r.returncode, r.stderr[:200]))
        ok(lines == exp, "%s: check text (feed %s):\n%s\nwant\n%s" % (label, feed, "\n".join(lines), "\n".join(exp)))
    # rejected inside the end record: every member line, then REJECTED, and the error on stderr
    cut = data[:len(data) - 30]
    r = run(binary, ["check", "-"], cut)
    lines = r.stdout.decode("utf-8").splitlines()
    err = r.stderr.decode().splitlines()
    ok(r.returncode == 1 and lines[:-1] == exp[:-1] and lines[-1].startswith("-: REJECTED: truncated at offset %d"
                                                                              % len(cut)),
       "%s: check text of a truncated archive: %r" % (label, lines[-2:]))
    m = ERR_LINE.match(err[0]) if err else None
    ok(m is not None and int(m.group(2)) == len(cut) and m.group(5) == "truncated",
       "%s: check stderr of a truncated archive: %r" % (label, err))


def test_check_text_names(binary):
    """Names reach the terminal escaped: control bytes as \\xHH, a backslash doubled."""
    for name, shown in (("tab\there.bin", "tab\\x09here.bin"), ("back\\slash.bin", "back\\\\slash.bin")):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w") as zf:
            zf.writestr(name, b"x" * 3)
        r = run(binary, ["check", "-"], b.getvalue())
        lines = r.stdout.decode("utf-8").splitlines()
        ok(r.returncode == 1 and len(lines) == 1 and lines[0].startswith("-: REJECTED: bad_name")
           and "(member %s)" % shown in lines[0], "check text of the name %r: %r" % (name, lines))


# ---- extract -----------------------------------------------------------------------------------

def test_extract_all(binary, label, data, tmp, quick, exact=True):
    want = truth(data)
    for i, (name, t) in enumerate(want.items()):
        out = os.path.join(tmp, "out%d" % i)
        key = t["key"] if i % 2 == 0 else name  # np.load's key, or the full name
        args = ["extract", key, "-o", out, "-"] + (["--feed", "5"] if (i == 1 and not quick) else [])
        r = run(binary, args, data)
        if not ok(r.returncode == 0 and os.path.exists(out), "%s: extract %s: exit %d %s" % (
                label, key, r.returncode, r.stderr[:300])):
            continue
        got = open(out, "rb").read()
        if t["kind"] == "blob" or exact:
            ok(got == t["raw"], "%s: extract %s is not the member's bytes (%d vs %d bytes)" % (
                label, key, len(got), len(t["raw"])))
        if t["kind"] == "array":
            a = np.load(out, allow_pickle=False)
            ok(a.dtype == t["arr"].dtype and a.shape == t["arr"].shape and np.array_equal(
                a.view(np.uint8) if a.dtype.names else a, t["arr"].view(np.uint8) if a.dtype.names else t["arr"])
               and a.tobytes(order="A") == t["arr"].tobytes(order="A"),
               "%s: extract %s does not load as np.load's array" % (label, key))
            v = npf.read_magic(io.BytesIO(got))
            ok(v == npf.read_magic(io.BytesIO(t["raw"])), "%s: extract %s changed the version %r" % (label, key, v))
        if quick:
            break
    # to stdout, by pipe
    name, t = next(iter(want.items()))
    r = run(binary, ["extract", t["key"]], data)
    ok(r.returncode == 0 and (r.stdout == t["raw"] or not exact), "%s: extract to stdout" % label)


def test_extract_misc(binary, data, tmp):
    want = truth(data)
    out = os.path.join(tmp, "nf.npy")
    r = run(binary, ["extract", "no-such-key", "-o", out, "-"], data)
    ok(r.returncode == 2 and not os.path.exists(out) and b"no such member" in r.stderr,
       "extract of a missing key: exit %d, %r" % (r.returncode, r.stderr))
    r = run(binary, ["extract", "x", "-"], npy_bytes(np.arange(3)))
    ok(r.returncode == 2 and r.stdout == b"", "extract from a plain .npy: exit %d" % r.returncode)
    r = run(binary, ["extract"], data)
    ok(r.returncode == 2, "extract without KEY: exit %d" % r.returncode)

    # rejected after the member was written: corrupt the central directory's copy of the LAST
    # member's CRC; the first member streams out completely before the error is seen.
    names = list(want)
    first, last = want[names[0]], want[names[-1]]
    cd = data.rfind(b"PK\x01\x02")
    ok(data[cd + 46:cd + 46 + len(last["name"])] == last["name"].encode(), "test setup: last CD entry")
    bad = bytearray(data)
    bad[cd + 16] ^= 0xFF
    bad = bytes(bad)
    try:
        zipfile.ZipFile(io.BytesIO(bad)).read(last["name"])
        ok(False, "test setup: zipfile accepts the corrupted CRC")
    except zipfile.BadZipFile:
        pass
    out = os.path.join(tmp, "late.npy")
    r = run(binary, ["extract", first["key"], "-o", out, "-"], bad)
    err = r.stderr.decode().splitlines()
    m = ERR_LINE.match(err[0]) if err else None
    ok(r.returncode == 1, "rejected after write: exit %d" % r.returncode)
    ok(not os.path.exists(out), "rejected after write: OUT was not removed")
    ok(m is not None and m.group(1) == "-" and m.group(5) == "cd_mismatch" and int(m.group(2)) >= cd,
       "rejected after write: stderr %r" % err)
    ok(any("removed" in l and out in l for l in err), "rejected after write: no 'removed' message: %r" % err)
    r = run(binary, ["extract", first["key"], "-"], bad)
    err = r.stderr.decode()
    ok(r.returncode == 1 and r.stdout == first["raw"] and "must be discarded" in err
       and "%d bytes" % len(first["raw"]) in err, "rejected after write to stdout: exit %d %r" % (r.returncode, err))
    # rejected before the member: nothing is created
    junk = b"PK\x03\x04" + b"\xff" * 40
    out = os.path.join(tmp, "never.npy")
    r = run(binary, ["extract", first["key"], "-o", out, "-"], junk)
    ok(r.returncode == 1 and not os.path.exists(out) and ERR_LINE.match(r.stderr.decode().splitlines()[0]),
       "rejected before the member: exit %d, exists %s" % (r.returncode, os.path.exists(out)))
    # an I/O error on the output: exit 2
    r = run(binary, ["extract", first["key"], "-o", os.path.join(tmp, "no", "such", "dir"), "-"], data)
    ok(r.returncode == 2, "extract into a missing directory: exit %d" % r.returncode)


# ---- help, version, limits ------------------------------------------------------------------------

def test_help(binary):
    hdr = open(os.path.join(ROOT, "include", "npzstream.h")).read()
    ver = re.search(r'#define NPZS_VERSION "([^"]+)"', hdr).group(1)
    r = run(binary, ["--version"])
    ok(r.returncode == 0 and r.stdout.decode().strip() == "npzstream " + ver, "--version: %r" % r.stdout)
    for args, head in ((["--help"], "usage: npzstream check"), (["help"], "usage: npzstream check"),
                       (["check", "--help"], "usage: npzstream check"), (["ls", "--help"], "usage: npzstream ls"),
                       (["extract", "--help"], "usage: npzstream extract"), (["help", "ls"], "usage: npzstream ls"),
                       (["help", "extract"], "usage: npzstream extract")):
        r = run(binary, args)
        text = r.stdout.decode()
        ok(r.returncode == 0 and text.startswith(head) and all(f in text for f in LIMIT_FLAGS + ["--feed"]),
           "%s: exit %d, %r" % (" ".join(args), r.returncode, text[:80]))
    for args in (["nosuch"], ["ls", "--bogus"], ["extract", "k", "--bogus"], ["help", "nosuch"], []):
        r = run(binary, args)
        ok(r.returncode == 2 and r.stderr, "%s: exit %d (want 2, with a message)" % (args, r.returncode))


def test_limits(binary, tmp):
    nd = io.BytesIO()
    np.savez(nd, a=np.zeros((2, 3)), long_name=np.zeros((2, 2, 2)))
    nd = nd.getvalue()
    st = npy_bytes(np.zeros(2, dtype=[("x", [("y", "<i4"), ("z", "<i2")]), ("w", "<f8")]))
    dz = io.BytesIO()
    np.savez_compressed(dz, z=np.zeros(50000))
    dz = dz.getvalue()
    cases = [  # flag, tight value, loose value, input, error codes a tight value may give
        ("--max-header-size", 10, 10000, nd, {"header_too_large"}),
        ("--max-ndim", 2, 3, nd, {"limit", "bad_shape"}),
        ("--max-fields", 1, 7, st, {"limit"}),
        ("--max-depth", 1, 2, st, {"limit"}),
        ("--max-members", 1, 2, nd, {"limit"}),
        ("--max-name-len", 5, 13, nd, {"limit"}),
        ("--max-extra-len", 4, 65535, nd, {"limit"}),
        ("--max-total-bytes", 300000, 400128, dz, {"limit"}),
    ]
    for flag, tight, loose, data, codes in cases:
        for cmd in (["ls", "--json"], ["check", "--json"]):
            r = run(binary, cmd + [flag, str(tight), "-"], data)
            d = json.loads(r.stdout or b"{}")
            ok(r.returncode == 1 and d.get("error") and d["error"]["code"] in codes,
               "%s %s %d: exit %d %s" % (cmd[0], flag, tight, r.returncode, r.stdout[-200:]))
            r = run(binary, cmd + ["%s=%d" % (flag, loose), "-"], data)
            ok(r.returncode == 0, "%s %s=%d: exit %d %s" % (cmd[0], flag, loose, r.returncode, r.stdout[-200:]))
        # extract honours the limits too
        r = run(binary, ["extract", "a", "-o", os.path.join(tmp, "lim.npy"), flag, str(tight), "-"], data)
        ok(r.returncode in (1, 2) and not os.path.exists(os.path.join(tmp, "lim.npy")),
           "extract %s %d: exit %d" % (flag, tight, r.returncode))
    # the inflate window changes chunking only, never the result
    base = json.loads(run(binary, ["ls", "--json", "-"], dz).stdout)
    for w in ("1", "100", "1000000"):
        r = run(binary, ["ls", "--json", "--inflate-window", w, "-"], dz)
        ok(r.returncode == 0 and json.loads(r.stdout) == base, "--inflate-window %s changed the listing" % w)
    for bad in (["--max-ndim", "x"], ["--max-ndim"], ["--max-ndim", "-1"], ["--max-ndim", "1000"],
                ["--inflate-window", "0"], ["--max-depth", "99999999999"], ["--feed", "1.5"]):
        for cmd in ("ls", "extract", "check"):
            args = [cmd] + (["a"] if cmd == "extract" else []) + bad + ["-"]
            r = run(binary, args, nd)
            ok(r.returncode == 2 and r.stderr.startswith(b"npzstream: ") and r.stdout == b"",
               "%s: exit %d %r" % (" ".join(args), r.returncode, r.stderr[:200]))
    r = run(binary, ["ls", "--max-ndim", "1000", "-"], nd)
    ok(b"--max-ndim" in r.stderr, "an out-of-range limit is not named: %r" % r.stderr)


def guarded(fn, *args):
    """Run one test function; an exception is a failure, not the end of the suite."""
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001
        ok(False, "%s raised %s: %s" % (fn.__name__, type(e).__name__, e))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    binary = os.path.abspath(a.bin)
    pipe = savez_via_pipe(PIPE_CODE)
    with tempfile.TemporaryDirectory(prefix="npzs-cli-") as tmp:
        ok(b"PK\x07\x08" in pipe, "test setup: np.savez to a pipe wrote no data descriptors")
        inputs = [("savez-pipe", pipe, True), ("mixed", mixed_archive(), False)]
        if not a.quick:
            inputs.append(("savez-compressed", compressed_archive(), True))
        for label, data, exact in inputs:
            guarded(test_check_text, binary, label, data, a.quick)
            guarded(test_ls, binary, label, data, a.quick)
            guarded(test_extract_all, binary, label, data, tmp, a.quick, exact)
        # the mixed archive: every member byte-identical except the hand-written header
        want = truth(inputs[1][1])
        for name, t in want.items():
            if name == "hand.npy":
                continue
            out = os.path.join(tmp, "m.bin")
            r = run(binary, ["extract", name, "-o", out, "-"], inputs[1][1])
            ok(r.returncode == 0 and open(out, "rb").read() == t["raw"], "mixed: %s not byte-identical" % name)
        guarded(test_check_text_names, binary)
        guarded(test_ls_npy, binary)
        guarded(test_ls_rejected, binary, pipe)
        guarded(test_extract_misc, binary, pipe, tmp)
        guarded(test_help, binary)
        guarded(test_limits, binary, tmp)
    return T.summary()


if __name__ == "__main__":
    sys.exit(main())
