"""The run-time side of the proof's contracts: builds tests/contracts/test_contracts.c against the
sanitizer build's library (build/san/libnpzstream.a, compiled with -DNPZS_CONTRACTS, where each
ACSL precondition of src/zrec.c, src/zlocate.c, src/names.c, src/crc.c, src/crcfold.c and src/npyhdr.c is an
assert) and checks that every broken call aborts and every kept one works; then against the plain
library (no checks: the kept calls only).  It also checks the source: every function of those
files with an ACSL `requires` checks it with NPZS_REQUIRE in its body.  The test program ends on
`contracts: N passed, M failed` (the C suites' line): its N + M are the test's checks."""
import os
import re
import subprocess

import pytest

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


def test_every_requires_is_checked(record_property):
    missing, n = contract_lint()
    record_property("checks", n)
    assert n >= 20, "only %d functions with contracts found in %s" % (n, ", ".join(PROVED))
    assert not missing, "an ACSL requires but no NPZS_REQUIRE as the first statement: %s" % missing


@pytest.mark.parametrize("label", ["checked", "plain"])
def test_contracts(label, bindir, tmp, record_property):
    """checked: against build/san/libnpzstream.a, every broken call aborts and every kept one
    works; plain: against build/libnpzstream.a, the kept calls only (--off)."""
    build = os.path.dirname(bindir) if os.path.basename(bindir) == "san" else bindir
    lib = os.path.join(build, "san" if label == "checked" else "", "libnpzstream.a")
    flags, args = (["-O1", "-g", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"], []) if label == "checked" \
        else (["-O2"], ["--off"])
    assert os.path.exists(lib), "%s is not built (make test-build)" % os.path.relpath(lib, ROOT)
    cc = os.environ.get("CC", "cc")
    isal = ["-lisal"] if subprocess.run(["sh", "-c", "printf 'int main(void){return 0;}' | %s -x c - -lisal -o /dev/null" % cc],
                                        capture_output=True).returncode == 0 else []
    exe = os.path.join(tmp, "test_contracts_" + label)
    cmd = [cc, "-std=c11", "-D_POSIX_C_SOURCE=200809L"] + flags + ["-Iinclude", "-Isrc", "-o", exe,
                                                                 "tests/contracts/test_contracts.c", lib]
    r = subprocess.run(cmd + isal + ["-lcrypto", "-lz", "-lm", "-pthread"], cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, "the test does not build:\n" + r.stdout + r.stderr
    env = dict(os.environ, ASAN_OPTIONS="detect_leaks=0:abort_on_error=0", UBSAN_OPTIONS="halt_on_error=1")
    r = subprocess.run([exe] + args, cwd=ROOT, capture_output=True, text=True, env=env)
    out = (r.stdout + r.stderr).rstrip()
    m = re.search(r"^contracts: (\d+) passed, (\d+) failed$", out, re.M)
    assert m, "it stopped before its summary (exit %d):\n%s" % (r.returncode, out[-2000:])
    record_property("checks", int(m.group(1)) + int(m.group(2)))
    fails = [line for line in out.splitlines() if line.startswith(("FAIL", "("))]
    assert m.group(2) == "0" and r.returncode == 0, "\n".join(fails) or out[-2000:]
    assert int(m.group(1)) > 0
