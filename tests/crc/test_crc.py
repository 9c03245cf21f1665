#!/usr/bin/python3
"""CRC-32 implementations of src/crc.c against zlib: builds tests/crc/test_crc.c and runs it.

--bin points at the npzstream binary of the build under test: build/npzstream links the test
against build/libnpzstream.a; a sanitizer build (build/san/npzstream) compiles src/crc.c with
ASan+UBSan.  The last line is `crc: N passed, M failed`.
"""
import argparse, os, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    bindir = os.path.dirname(os.path.abspath(a.bin))
    cc = os.environ.get("CC", "cc")
    with tempfile.TemporaryDirectory(prefix="npzs-crc-") as tmp:
        exe = os.path.join(tmp, "test_crc")
        cmd = [cc, "-std=c11", "-g", "-Iinclude", "-Isrc", "-o", exe, "tests/crc/test_crc.c"]
        # ISA-L's CRC where the build has it (as the Makefile decides: its header is installed)
        isal = os.environ.get("ISAL", "auto") != "0" and any(
            os.path.exists(os.path.join(d, "isa-l", "crc.h")) for d in ("/usr/include", "/usr/local/include"))
        if os.path.basename(bindir) == "san":
            cmd[1:1] = ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"] + (["-DNPZS_HAVE_ISAL"] if isal else [])
            cmd += ["src/crc.c", "src/crcfold.c"]
        else:
            cmd[1:1] = ["-O2"]
            cmd += [os.path.join(bindir, "libnpzstream.a")]
        cmd += (["-lisal"] if isal else []) + ["-lz", "-pthread"]
        r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
        if r.returncode != 0:
            print(r.stdout + r.stderr)
            print("crc: 0 passed, 1 failed")
            return 1
        r = subprocess.run([exe] + (["--quick"] if a.quick else []), cwd=ROOT, capture_output=True, text=True)
        out = (r.stdout + r.stderr).rstrip()
        print(out)
        if not (out.splitlines() or [""])[-1].startswith("crc: "):  # crashed before its summary
            print("crc: 0 passed, 1 failed")
            return 1
        return r.returncode
    return 0


if __name__ == "__main__":
    sys.exit(main())
