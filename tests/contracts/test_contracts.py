#!/usr/bin/python3
"""The run-time side of the proof's contracts: builds tests/contracts/test_contracts.c against the
sanitizer build's library (build/san/libnpzstream.a, compiled with -DNPZS_CONTRACTS, where each
ACSL precondition of src/zrec.c, src/zlocate.c, src/names.c, src/crc.c, src/crcfold.c and src/npyhdr.c is an
assert) and checks that every broken call aborts and every kept one works; then against the plain
library (no checks: the kept calls only).  It also checks the source: every function of those
files with an ACSL `requires` checks it with NPZS_REQUIRE in its body.
Last line `contracts: N passed, M failed`."""
import argparse, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PROVED = ("src/zrec.c", "src/zlocate.c", "src/names.c", "src/crc.c", "src/crcfold.c", "src/npyhdr.c")


def contract_lint():
    """[(file, function)] of functions with an ACSL requires and no NPZS_REQUIRE, and the count checked."""
    missing, n = [], 0
    for rel in PROVED:
        with open(os.path.join(ROOT, rel)) as f:
            text = f.read()
        for m in re.finditer(r"/\*@(.*?)\*/\s*([^;{]*?\b(\w+)\s*\([^;{]*\))\s*\{", text, re.S):
            if "requires" not in m.group(1):
                continue
            n += 1
            body = text[m.end():m.end() + 600]
            first = body.split(";")[0]
            if "NPZS_REQUIRE" not in first:
                missing.append((rel, m.group(3)))
    return missing, n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    passed = failed = 0
    missing, n = contract_lint()
    for rel, fn in missing:
        print("FAIL %s: %s has an ACSL requires but no NPZS_REQUIRE as its first statement" % (rel, fn))
    if n < 20:
        print("FAIL only %d functions with contracts found in %s" % (n, ", ".join(PROVED)))
        failed += 1
    failed += len(missing)
    passed += n - len(missing)
    bindir = os.path.dirname(os.path.abspath(a.bin))
    plain = os.path.join(bindir, "libnpzstream.a") if os.path.basename(bindir) != "san" else os.path.join(
        os.path.dirname(bindir), "libnpzstream.a")
    san = os.path.join(ROOT, "build", "san", "libnpzstream.a") if os.path.basename(bindir) != "san" else os.path.join(
        bindir, "libnpzstream.a")
    cc = os.environ.get("CC", "cc")
    isal = ["-lisal"] if subprocess.run(["sh", "-c", "printf 'int main(void){return 0;}' | %s -x c - -lisal -o /dev/null" % cc],
                                        capture_output=True).returncode == 0 else []
    libs = isal + ["-lcrypto", "-lz", "-lm", "-pthread"]
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0", UBSAN_OPTIONS="halt_on_error=1")
    with tempfile.TemporaryDirectory(prefix="npzs-contracts-") as tmp:
        for label, lib, flags, args in (
                ("checked", san, ["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"], []),
                ("plain", plain, ["-O2"], ["--off"])):
            if not os.path.exists(lib):
                print("FAIL %s: %s is not built (make test-build)" % (label, os.path.relpath(lib, ROOT)))
                failed += 1
                continue
            exe = os.path.join(tmp, "test_contracts_" + label)
            cmd = [cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L"] + flags + ["-Iinclude", "-Isrc", "-o", exe,
                                                                         "tests/contracts/test_contracts.c", lib] + libs
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                print("FAIL %s: the test does not build" % label)
                failed += 1
                continue
            r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, env=env)
            out = (r.stdout + r.stderr).rstrip()
            m = re.search(r"^contracts: (\d+) passed, (\d+) failed$", out, re.M)
            for l in out.splitlines():
                if l.startswith("FAIL") or l.startswith("("):
                    print("%s: %s" % (label, l))
            if not m or r.returncode != 0:
                if not m:
                    print(out[-2000:])
                failed += max(1, int(m.group(2)) if m else 1)
                passed += int(m.group(1)) if m else 0
            else:
                passed += int(m.group(1))
    print("contracts: %d passed, %d failed" % (passed, failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
