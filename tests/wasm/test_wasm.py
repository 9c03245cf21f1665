"""The WebAssembly build against the native command (issue 27): make test-all (marked rest), with
--wasm build/wasm (--quick: of corpus/, only corpus/peers).

Every file of corpus/ (recursively) and every tests/vectors/*.bin (with its manifest's options:
limits, policies, --sequence) goes through build/wasm/npzstream.mjs under Node in six ways (one
push, 1-byte pushes, an async iterable of 7-byte chunks, a ReadableStream of 4096-byte chunks, a
Blob, Validator.readFrom with reads of 1 to 13 bytes): each report must be byte for byte what `build/npzstream check --json FILE` prints, with
the same exit status, and the progress reported must count up to what was read.  Then
npzstream-check.mjs: `--json FILE...` prints exactly the native outputs one after the other, and
without --json exactly what `npzstream check FILE...` prints, exit status and stderr included for
the I/O and usage cases; the random names of tests/names (member names, field names, with and
without a policy quoting them) give the native JSON and text byte for byte; and the wasm's memory
stays flat on a 512 MiB input.  Skipped where Node or emscripten is missing (make wasm cannot build).
"""
import glob
import json
import os
import re
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "names"))
from common import ok  # noqa: E402
import names as N  # noqa: E402

pytestmark = pytest.mark.rest
MODES = ("whole", "1", "7", "4096", "blob", "read")
LIMIT_KEYS = {"--max-header-size": "max_header_size", "--max-ndim": "max_ndim", "--max-fields": "max_fields",
              "--max-depth": "max_depth", "--max-members": "max_members", "--max-name-len": "max_name_len",
              "--max-extra-len": "max_extra_len", "--max-total-bytes": "max_total_bytes",
              "--inflate-window": "inflate_window", "--max-memory": "max_memory"}


def inputs(quick=False):
    """(path, native check args) for every corpus file (quick: corpus/peers only) and every vector."""
    top = os.path.join(ROOT, "corpus", "peers" if quick else "")
    files = [(f, []) for f in sorted(glob.glob(os.path.join(top, "**", "*"), recursive=True)) if os.path.isfile(f)]
    args = {}
    with open(os.path.join(ROOT, "tests", "vectors", "MANIFEST.tsv")) as f:
        for line in f:
            if line.startswith("#"):
                continue
            cols = line.rstrip("\n").split("\t")
            args[cols[0]] = cols[5].split() if len(cols) > 5 else []
    for v in sorted(glob.glob(os.path.join(ROOT, "tests", "vectors", "*.bin"))):
        files.append((v, args.get(os.path.basename(v)[:-4], [])))
    return files


def js_options(args):
    """The native check options as the JavaScript module's."""
    o, limits, i = {}, {}, 0
    while i < len(args):
        a = args[i]
        if a == "--policy":
            o["policy"] = open(os.path.join(ROOT, args[i + 1]), encoding="utf-8").read()
            i += 1
        elif a == "--sequence":
            o["sequence"] = True
        elif a.startswith("--lenient-"):
            limits[a[2:].replace("-", "_")] = True
        elif a in LIMIT_KEYS:
            limits[LIMIT_KEYS[a]] = args[i + 1]
            i += 1
        else:
            raise ValueError("no JavaScript option for %s" % a)
        i += 1
    if limits:
        o["limits"] = limits
    return o


def native(binary, args, path):
    r = subprocess.run([binary, "check", "--json"] + args + [path], capture_output=True, cwd=ROOT, timeout=120)
    return r.returncode, r.stdout.decode("utf-8", "surrogateescape"), r.stderr.decode("utf-8", "surrogateescape")


MAX_MEMORY_NEED = (re.compile(r'("name": "max_memory", "value": \d+, "needed": )\d+'),
                   re.compile(r"\(needs \d+(; max_memory is \d+\))"))


def platform_neutral(text):
    """text with max_memory's need masked: the parser's own memory, whose size is the platform's
    (the wasm's 32-bit pointers make it smaller); every other byte is compared."""
    text = MAX_MEMORY_NEED[0].sub(r"\1N", text)
    return MAX_MEMORY_NEED[1].sub(r"(needs N\1", text)


def hashing_refused(err):
    return "SHA-256" in err


def policy_hashes(args):
    """True when a --policy file of args pins a member's SHA-256: the wasm, without SHA-256, refuses
    such a policy whatever the file holds (natively it may pass, or fail on a pin checked before the hash)."""
    for a, b in zip(args, args[1:]):
        if a == "--policy":
            def pins(o):
                if isinstance(o, dict):
                    return "sha256" in o or any(pins(v) for v in o.values())
                return isinstance(o, list) and any(pins(v) for v in o)
            with open(os.path.join(ROOT, b), encoding="utf-8") as f:
                return pins(json.load(f))
    return False


def test_module(binary, wasm, files, tmp):
    with ThreadPoolExecutor(4) as ex:
        want = list(ex.map(lambda f: native(binary, f[1], f[0]), files))
    lst = os.path.join(tmp, "list.jsonl")
    with open(lst, "w") as f:
        for path, args in files:
            f.write(json.dumps({"path": path, "options": js_options(args)}) + "\n")
    r = subprocess.run(["node", os.path.join(ROOT, "tests", "wasm", "driver.mjs"), wasm, lst], capture_output=True,
                       timeout=1800)
    if not ok(r.returncode == 0, "driver.mjs ran", r.stderr.decode()[-2000:]):
        return
    got = {}
    misuse = None
    for line in r.stdout.decode("utf-8").splitlines():
        i, mode, rest = line.split(" ", 2)
        if i == "X":
            misuse = rest
            continue
        got[(int(i), mode)] = rest
    ok(misuse == "ok", "readFrom: a reader returning no count of 0 to view.length throws RangeError (%s)" % misuse)
    shown = 0
    for i, (path, args) in enumerate(files):
        rc, out, err = want[i]
        rel = os.path.relpath(path, ROOT)
        for mode in MODES:
            rec = got.get((i, mode))
            if rec is None:
                ok(False, "%s [%s]: no record" % (rel, mode))
                continue
            if rec.startswith("E "):
                # the one expected refusal: a policy that hashes, where the wasm has no SHA-256
                name, msg = rec[2:].split(" ", 1)
                good = name == "PolicyError" and hashing_refused(msg) and policy_hashes(args)
                ok(good, "%s [%s]: the module threw %s %s" % (rel, mode, name, msg[:200]))
                continue
            status, progress, js = rec.split(" ", 2)
            same = int(status) == rc and platform_neutral(js) == platform_neutral(out.rstrip("\n")) and progress == "ok"
            if not same and shown < 10:
                shown += 1
                print("   native (exit %d): %s\n   wasm   (exit %s, progress %s): %s" % (rc, out.strip()[:600], status,
                                                                                         progress, js[:600]))
            ok(same, "%s [%s %s]: the wasm's report is the native one" % (rel, mode, " ".join(args)))


def run_check(wasm, args, cwd=ROOT):
    r = subprocess.run(["node", os.path.join(wasm, "npzstream-check.mjs")] + args, capture_output=True, cwd=cwd,
                       timeout=600)
    return r.returncode, r.stdout.decode("utf-8", "surrogateescape"), r.stderr.decode("utf-8", "surrogateescape")


def test_command(binary, wasm, files, tmp):
    # --json FILE...: each file's native object, one after the other; the worst exit status
    plain = [p for p, a in files if not a]
    groups = {}
    for p, a in files:
        if a and not any(x.startswith("--policy") and "pinned" in y for x, y in zip(a, a[1:])):
            groups.setdefault(tuple(a), []).append(p)
    batches = [([], plain[k:k + 800]) for k in range(0, len(plain), 800)] + [(list(a), ps) for a, ps in groups.items()]
    for args, paths in batches:
        want = [native(binary, args, p) for p in paths] if args else None
        if want is None:
            with ThreadPoolExecutor(4) as ex:
                want = list(ex.map(lambda p: native(binary, [], p), paths))
        rc, out, err = run_check(wasm, ["--json"] + args + paths)
        ok(platform_neutral(out) == platform_neutral("".join(w[1] for w in want)),
           "npzstream-check.mjs --json %s (%d files): stdout" % (" ".join(args), len(paths)))
        ok(rc == max(w[0] for w in want), "npzstream-check.mjs --json %s (%d files): exit %d" % (" ".join(args), len(paths), rc))
        # the text output: native check takes many files too
        n = subprocess.run([binary, "check"] + args + paths, capture_output=True, cwd=ROOT, timeout=600)
        rc, out, err = run_check(wasm, args + paths)
        ok(platform_neutral(out) == platform_neutral(n.stdout.decode("utf-8", "surrogateescape")) and rc == n.returncode,
           "npzstream-check.mjs %s (%d files): the text and exit status of npzstream check" % (" ".join(args), len(paths)),
           "exit %d vs %d" % (rc, n.returncode))
    # I/O: a missing file and a directory among good ones; stderr too
    good = os.path.join(ROOT, "corpus", "peers", "whisper", "mel_filters.npz")
    for names in (["nosuch.npz"], [good, "nosuch.npz", tmp, good], ["corpus/peers"], ["no\u202esuch\x1b\\.npz"]):
        want = [native(binary, [], p) for p in names]
        rc, out, err = run_check(wasm, ["--json"] + names)
        ok(out == "".join(w[1] for w in want) and err == "".join(w[2] for w in want) and rc == max(w[0] for w in want),
           "npzstream-check.mjs --json %s: stdout, stderr and exit %d as native" % (" ".join(names), rc), out + err)
        n = subprocess.run([binary, "check"] + names, capture_output=True, cwd=ROOT)
        rc, out, err = run_check(wasm, names)
        ok(out.encode() == n.stdout and err.encode() == n.stderr and rc == n.returncode,
           "npzstream-check.mjs %s: text, stderr and exit %d as native" % (" ".join(names), rc), out + err)
    # stdin
    data = open(good, "rb").read()
    n = subprocess.run([binary, "check", "--json", "-"], input=data, capture_output=True)
    r = subprocess.run(["node", os.path.join(wasm, "npzstream-check.mjs"), "--json"], input=data, capture_output=True)
    ok(r.stdout == n.stdout and r.returncode == n.returncode, "npzstream-check.mjs --json < FILE: as native")
    # --feed N never changes the output
    some = plain[:40]
    want = "".join(native(binary, [], p)[1] for p in some)
    for feed in ("1", "7", "4096"):
        rc, out, err = run_check(wasm, ["--json", "--feed", feed] + some)
        ok(out == want, "npzstream-check.mjs --json --feed %s: the same output" % feed)
    # a malformed policy: the native usage error, word for word
    bad = os.path.join(tmp, "bad-policy.json")
    with open(bad, "w") as f:
        f.write('{"members": {"w": {"shape": [1, -2]}}}')
    n = subprocess.run([binary, "check", "--policy", bad, good], capture_output=True)
    rc, out, err = run_check(wasm, ["--policy", bad, good])
    ok(rc == 2 == n.returncode and err.encode() == n.stderr and out == "", "a malformed policy: usage error as native", err)
    # bad limits: usage errors (exit 2) naming the flag
    for args in (["--max-fields", "0"], ["--inflate-window=0"], ["--max-ndim", "5000000000"], ["--max-total-bytes", "1X"],
                 ["--no-such-flag"]):
        n = subprocess.run([binary, "check"] + args + [good], capture_output=True)
        rc, out, err = run_check(wasm, args + [good])
        first = n.stderr.decode().split("\n")[0]
        ok(rc == 2 == n.returncode and out == "" and err.split("\n")[0] == first,
           "%s: a usage error (exit 2), the native message" % " ".join(args), "%r vs %r" % (err, first))
    # hashing: refused, and said so
    rc, out, err = run_check(wasm, ["--sha256", good])
    ok(rc == 2 and "SHA-256" in err and out == "", "--sha256: refused, exit 2", err)
    rc, out, err = run_check(wasm, ["--policy", "examples/policies/pinned-model.json", good])
    ok(rc == 2 and "SHA-256" in err and out == "", "a policy pinning hashes: refused, exit 2", err)


# policies whose bytes are not plain UTF-8 JSON: the command must read them as the native one does
# (their bytes to the library's compiler, no decoding on the way: U+FFFD in place of a bad byte
# would turn a refused policy into another, accepted one)
POLICY_BYTES = {
    "invalid-utf8-in-string": b'{"members": {"w\xff": {"dtype": ["float32"]}}}',
    "invalid-utf8-outside": b'{"members": {}}\xff',
    "bom": b'\xef\xbb\xbf{"members": {}}',
    "nul-in-string": b'{"members": {"w\x00": {"dtype": ["float32"]}}}',
    "nul-after": b'{"members": {}}\x00',
    "overlong-slash": b'{"members": {"\xc0\xaf": {}}}',
    "overlong-quote": b'{"members": {\xc0\xa2w": {}}}',
    "surrogate-bytes": b'{"members": {"\xed\xa0\x80": {}}}',
    "lone-surrogate-escape": b'{"members": {"\\ud800": {}}}',
    "lone-low-surrogate-escape": b'{"members": {"\\udc00w": {}}}',
    "surrogate-pair-escape": b'{"members": {"\\ud83d\\ude00": {}}}',
    "valid-non-ascii": '{"members": {"\u00e9": {}}}'.encode(),
    "latin1-name": b'{"members": {"caf\xe9": {}}}',
}


def test_policy_bytes(binary, wasm, tmp):
    """Each policy of POLICY_BYTES: npzstream-check.mjs --policy FILE gives what npzstream check
    --policy FILE gives, stdout, stderr and exit status; and a file whose name is not UTF-8 is
    opened by its bytes (Node decodes its arguments as UTF-8: the name would be another)."""
    good = os.path.join(ROOT, "corpus", "peers", "whisper", "mel_filters.npz")
    refused = 0
    for name, data in POLICY_BYTES.items():
        path = os.path.join(tmp, "policy-%s.json" % name)
        with open(path, "wb") as f:
            f.write(data)
        n = subprocess.run([binary, "check", "--policy", path, good], capture_output=True, cwd=ROOT)
        w = subprocess.run(["node", os.path.join(wasm, "npzstream-check.mjs"), "--policy", path, good],
                           capture_output=True, cwd=ROOT, timeout=120)
        refused += n.returncode == 2
        ok(w.returncode == n.returncode and w.stdout == n.stdout and w.stderr == n.stderr,
           "a policy %s: npzstream-check.mjs as native (exit %d)" % (name, n.returncode),
           "wasm exit %d %r %r; native %r %r" % (w.returncode, w.stdout[-300:], w.stderr[-300:], n.stdout[-300:],
                                                n.stderr[-300:]))
    ok(refused >= 5, "the native command refuses %d of the %d policies (the test tests refusals)" % (refused, len(POLICY_BYTES)))
    # a policy that is a FIFO (no writer: reading it would wait forever) or a directory: refused at once, as natively
    fifo = os.path.join(tmp, "policy.fifo")
    os.mkfifo(fifo)
    for path in (fifo, tmp):
        n = subprocess.run([binary, "check", "--policy", path, good], capture_output=True, cwd=ROOT, timeout=120)
        w = subprocess.run(["node", os.path.join(wasm, "npzstream-check.mjs"), "--policy", path, good],
                           capture_output=True, cwd=ROOT, timeout=120)
        ok(n.returncode == 2 and b"not a regular file" in n.stderr and (w.returncode, w.stdout, w.stderr) ==
           (n.returncode, n.stdout, n.stderr), "--policy %s: refused at once, as natively" % os.path.basename(path),
           "wasm %d %r; native %d %r" % (w.returncode, w.stderr, n.returncode, n.stderr))
    # a file name that is not UTF-8, and one that is the U+FFFD Node would make of it
    data = open(good, "rb").read()
    raw, decoy = os.path.join(os.fsencode(tmp), b"m\xe9l.npz"), os.path.join(tmp, "m\ufffdl.npz")
    for p, d in ((raw, data), (decoy, data[:100])):
        with open(p, "wb") as f:
            f.write(d)
    for args in (["--json"], []):
        n = subprocess.run([binary, "check"] + [a.encode() for a in args] + [raw], capture_output=True)
        w = subprocess.run([b"node", os.path.join(wasm, "npzstream-check.mjs").encode()] + [a.encode() for a in args] + [raw],
                           capture_output=True, timeout=120)
        ok(n.returncode == 0 and w.returncode == n.returncode and w.stdout == n.stdout,
           "npzstream-check.mjs %s on a name that is not UTF-8: the file itself, as native" % " ".join(args),
           "wasm exit %d %r; native exit %d %r" % (w.returncode, w.stdout[-300:], n.returncode, n.stdout[-300:]))


API_SCRIPT = r"""
const {validate, Validator, PolicyError, UnsupportedError, ruleHint, ruleMessage, version, memoryBytes,
       sha256Available} = await import(process.argv[2]);
const out = {};
for (const [k, p] of [['bytes', new Uint8Array([0x7b, 0x7d, 0xff])], ['surrogate', '{"members": {"\ud800": {}}}'],
                      ['fine', new TextEncoder().encode('{"members": {}}')]]) {
  try { await Validator.create({policy: p}); out[k] = 'accepted'; } catch (e) { out[k] = e.name; } }
try { await Validator.create({policy: '{"members": 3}'}); } catch (e) {
  out.policy = {name: e.name, isPolicyError: e instanceof PolicyError, line: e.line, column: e.column, path: e.path}; }
try { await Validator.create({limits: {max_sides: 1}}); } catch (e) { out.unknown = e.name; }
try { await Validator.create({limits: {max_fields: 0}}); } catch (e) { out.zero = [e.name, e.message]; }
try { await validate(new Uint8Array(0), {hash: true}); } catch (e) {
  out.hash = {unsupported: e instanceof UnsupportedError, rule: e.rule, message: e.message}; }
try { await validate('not bytes'); } catch (e) { out.string = e.name; }
out.hint = ruleHint('TRUNC.archive');
out.message = ruleMessage('TRUNC.archive');
out.version = version();
out.sha = sha256Available();
/* 512 MiB of one stored .npy pushed 1 MiB at a time: the wasm's memory stays what the parser needs */
const n = 128 * 1024 * 1024, dict = "{'descr': '<f4', 'fortran_order': False, 'shape': (" + n + ",), }";
const head = new TextEncoder().encode(dict.padEnd(118) + '\n');
const pre = new Uint8Array([0x93, 78, 85, 77, 80, 89, 1, 0, head.length & 255, head.length >> 8]);
const zeros = new Uint8Array(1 << 20);
async function* big() { yield pre; yield head; for (let i = 0; i < 512; i++) yield zeros; }
const before = memoryBytes();
const r = await validate(big(), {limits: {max_total_bytes: '1Gi'}});
out.big = {ok: r.ok, before, after: memoryBytes(), nbytes: r.members[0] && r.members[0].nbytes};
/* an early rejection stops the reading */
let pulled = 0;
async function* bad() { yield new Uint8Array([1, 2, 3, 4]); for (;;) { pulled++; yield zeros; } }
const rej = await validate(bad());
out.early = {code: rej.error.code, pulled, status: rej.status};
console.log(JSON.stringify(out));
"""


def test_names(binary, wasm, tmp, quick):
    """The random names of tests/names (member names, field names): the wasm's JSON and text are the
    native ones byte for byte, with and without a policy that quotes the name in its detail."""
    d = os.path.join(tmp, "names")
    os.makedirs(d)
    paths = []
    for i, key in enumerate(N.member_names(7, quick)):
        paths.append(os.path.join(d, "m%03d.npz" % i))
        with open(paths[-1], "wb") as f:
            f.write(N.member_archive(key))
    for i, name in enumerate(N.field_names(7, 40 if quick else 120)):
        paths.append(os.path.join(d, "f%03d.npy" % i))
        with open(paths[-1], "wb") as f:
            f.write(N.npy_bytes(N.field_array(name)))
    pol = os.path.join(d, "no-others.json")
    with open(pol, "w") as f:
        f.write('{"allow_other_members": false}')
    for args in ([], ["--policy", pol]):
        for json_args in (["--json"], []):
            if json_args:
                n = [native(binary, args, p) for p in paths]
                want, code = "".join(w[1] for w in n), max(w[0] for w in n)
            else:
                r = subprocess.run([binary, "check"] + args + paths, capture_output=True, cwd=ROOT, timeout=600)
                want, code = r.stdout.decode("utf-8", "surrogateescape"), r.returncode
            rc, out, err = run_check(wasm, json_args + args + paths)
            ok(out == want and rc == code and not N.raw_hidden(out),
               "names: npzstream-check.mjs %s (%d files): the native output, byte for byte" % (" ".join(json_args + args),
                                                                                            len(paths)),
               "exit %d vs %d; %s" % (rc, code, next(("%r vs %r" % (a, b) for a, b in zip(out.split("\n"), want.split("\n"))
                                                      if a != b), "")))


def test_api(wasm, tmp, binary):
    script = os.path.join(tmp, "api.mjs")
    with open(script, "w") as f:
        f.write(API_SCRIPT)
    r = subprocess.run(["node", script, "file://" + os.path.abspath(os.path.join(wasm, "npzstream.mjs"))],
                       capture_output=True, timeout=300)
    if not ok(r.returncode == 0, "the API script ran", r.stderr.decode()[-2000:]):
        return
    o = json.loads(r.stdout)
    p = o.get("policy", {})
    ok(p.get("isPolicyError") and p.get("line") == 1 and p.get("column") and p.get("path") == "members",
       "a malformed policy: PolicyError with line, column and path", str(p))
    ok(o.get("bytes") == "PolicyError" and o.get("surrogate") == "TypeError" and o.get("fine") == "accepted",
       "a policy as bytes is compiled as given (invalid UTF-8 refused); a string with a lone surrogate is a TypeError",
       "%r %r %r" % (o.get("bytes"), o.get("surrogate"), o.get("fine")))
    ok(o.get("unknown") == "RangeError", "an unknown limit: RangeError")
    ok(o.get("zero", [""])[0] == "RangeError" and "max_fields" in o["zero"][1], "max_fields 0: RangeError naming it")
    h = o.get("hash", {})
    ok(h.get("unsupported") and h.get("rule") == "CALL.hash" and "SHA-256" in h.get("message", ""),
       "hash: true: UnsupportedError, rule CALL.hash", str(h))
    ok(o.get("string") == "TypeError", "a string source: TypeError")
    ok(bool(o.get("hint")) and bool(o.get("message")), "ruleHint and ruleMessage of TRUNC.archive", str(o))
    v = subprocess.run([binary, "--version"], capture_output=True, text=True).stdout
    ok(o.get("version") and o["version"] in v, "version() is the library's: %s" % o.get("version"), v)
    ok(o.get("sha") is False, "sha256Available() is false")
    b = o["big"]
    ok(b["ok"] and b["nbytes"] == 512 << 20, "512 MiB .npy accepted through an async iterable", str(b))
    ok(b["after"] <= 32 << 20, "the wasm's memory stayed flat: %d bytes after 512 MiB" % b["after"], str(b))
    e = o["early"]
    ok(e["code"] == "bad_magic" and e["pulled"] <= 1 and e["status"] == 1, "an early rejection stops the reading", str(e))


def test_types(wasm, tmp):
    """npzstream.d.mts: the documented uses type-check under tsc (Debian's node-typescript), a misuse does not."""
    tsc = shutil.which("tsc")
    if not tsc:
        print("wasm: the TypeScript declarations not checked: no tsc (apt-get install node-typescript)")
        return
    d = os.path.join(tmp, "ts")
    os.makedirs(d)
    for f in ("npzstream.mjs", "npzstream.d.mts"):
        shutil.copy(os.path.join(wasm, f), d)
    good = open(os.path.join(ROOT, "tests", "wasm", "types.mts")).read()
    args = [tsc, "--noEmit", "--strict", "--module", "nodenext", "--moduleResolution", "nodenext", "--target", "es2022",
            "--lib", "es2022,dom"]
    for name, text, want in (("good.mts", good, 0), ("bad.mts", good + "\nvalidate(new Uint8Array(1), {limits: {max_sides: 1}});\n", 2),
                             ("bad2.mts", good + "\nconst n: number = new Validator().push(new Uint8Array(1));\n", 2)):
        with open(os.path.join(d, name), "w") as f:
            f.write(text)
        r = subprocess.run(args + [name], cwd=d, capture_output=True, text=True)
        ok(r.returncode == want, "tsc %s: exit %d (want %d)" % (name, r.returncode, want), r.stdout[-1000:])


@pytest.fixture(scope="module")
def wasm(wasm_dir):
    """The build (make wasm), or a skip where emscripten or Node is missing."""
    if not os.path.exists(os.path.join(wasm_dir, "npzstream.mjs")):
        if not shutil.which("emcc") or not shutil.which("node"):
            pytest.skip("no emscripten or no Node.js (apt-get install emscripten); make wasm builds %s" % wasm_dir)
        pytest.fail("%s/npzstream.mjs is missing (make wasm)" % wasm_dir)
    return wasm_dir


@pytest.fixture(scope="module")
def files(quick):
    files = inputs(quick)
    peers = [f for f, _ in files if os.sep + "peers" + os.sep in f]
    vectors = [f for f, _ in files if f.endswith(".bin")]
    assert len(peers) >= 50 and len(vectors) >= 1000, "files to compare: %d (%d of corpus/peers, %d vectors)" % (
        len(files), len(peers), len(vectors))
    return files


def test_zlib(wasm):
    """The wasm's zlib: the native one's source, or one wasm/zlib-source.sh took for a reason it
    wrote down that is not a lack of fixes (WASM_ZLIB_ALLOW_OLD=1 asks for that, and says so)."""
    stamp = os.path.join(wasm, "zlib", ".npzs-version")
    assert os.path.exists(stamp), "%s says which zlib the wasm has" % stamp
    v = dict(line.split(" ", 1) for line in open(stamp).read().split("\n") if " " in line)
    print("wasm: zlib %s (the native build's: %s)%s" % (v.get("source"), v.get("native"),
          "" if v.get("source") == v.get("native") else ": " + v.get("why", "(no reason given)")))
    old = v.get("why", "").startswith("WASM_ZLIB_ALLOW_OLD")
    assert v.get("source") == v.get("native") or ("why" in v and (not old or os.environ.get("WASM_ZLIB_ALLOW_OLD") == "1")), \
        "the wasm's zlib (%s) has the fixes of the native one (%s): %s" % (v.get("source"), v.get("native"), v.get("why", ""))
