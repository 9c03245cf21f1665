"""CRC-32 implementations of src/crc.c against zlib: builds tests/crc/test_crc.c and runs it.

Three builds: against the library of the build under test (--bin's folder: build/libnpzstream.a),
and src/crc.c compiled with ASan+UBSan twice, with ISA-L where it is installed (npzs__crc32 is then
ISA-L's) and without it (the fold's, src/crcfold.c), so that the splits and combines run through
both; the sanitizer builds try fewer sizes (--quick).  The test program ends on
`crc: N passed, M failed` (the C suites' line): its N + M are this test's checks.
"""
import os
import re
import subprocess

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# ISA-L's CRC where the build has it (as the Makefile decides: its header is installed)
ISAL = os.environ.get("ISAL", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "isa-l", "crc.h")) for d in ("/usr/include", "/usr/local/include"))
SAN = ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"]
BUILDS = [("library", ISAL)] + [("asan-isal", True)] * ISAL + [("asan-fold", False)]


@pytest.mark.parametrize("build,with_isal", BUILDS, ids=[b[0] for b in BUILDS])
def test_crc(build, with_isal, bindir, tmp, record_property):
    exe = os.path.join(tmp, "test_crc")
    cmd = [os.environ.get("CC", "cc"), "-std=c11", "-g", "-Iinclude", "-Isrc", "-o", exe, "tests/crc/test_crc.c"]
    if build == "library":
        cmd[1:1] = ["-O2"]
        cmd += [os.path.join(bindir, "libnpzstream.a")]
    else:
        cmd[1:1] = SAN + (["-DNPZS_HAVE_ISAL"] if with_isal else [])
        cmd += ["src/crc.c", "src/crcfold.c"]
    cmd += (["-lisal"] if with_isal else []) + ["-lz", "-pthread"]
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    assert r.returncode == 0, "the test does not build:\n" + r.stdout + r.stderr
    r = subprocess.run([exe] + ([] if build == "library" else ["--quick"]), cwd=ROOT, capture_output=True, text=True)
    out = (r.stdout + r.stderr).rstrip()
    m = re.search(r"^crc: (\d+) passed, (\d+) failed$", out, re.M)
    assert m, "it stopped before its summary (exit %d):\n%s" % (r.returncode, out[-3000:])
    record_property("checks", int(m.group(1)) + int(m.group(2)))
    assert m.group(2) == "0" and r.returncode == 0, out[-3000:]
    assert int(m.group(1)) > 0
