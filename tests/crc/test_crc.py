#!/usr/bin/python3
"""CRC-32 implementations of src/crc.c against zlib: builds tests/crc/test_crc.c and runs it.

--bin points at the npzstream binary of the build under test: build/npzstream links the test
against build/libnpzstream.a; a sanitizer build (build/san/npzstream) compiles src/crc.c with
ASan+UBSan, twice where ISA-L is installed (with it, and without: the fold behind npzs__crc32).
The last line is `crc: N passed, M failed`.
"""
import argparse, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "npzstream"))
    ap.add_argument("--quick", action="store_true")
    a = ap.parse_args()
    bindir = os.path.dirname(os.path.abspath(a.bin))
    cc = os.environ.get("CC", "cc")
    # ISA-L's CRC where the build has it (as the Makefile decides: its header is installed)
    isal = os.environ.get("ISAL", "auto") != "0" and any(
        os.path.exists(os.path.join(d, "isa-l", "crc.h")) for d in ("/usr/include", "/usr/local/include"))
    san = os.path.basename(bindir) == "san"
    # the sanitizer build twice where ISA-L is there: npzs__crc32 is then ISA-L's, and without it the
    # fold's (src/crcfold.c), so the splits and combines run through both
    runs = [isal, False] if san and isal else [isal]
    sums = [0, 0]
    status = 0
    with tempfile.TemporaryDirectory(prefix="npzs-crc-") as tmp:
        for k, with_isal in enumerate(runs):
            exe = os.path.join(tmp, "test_crc%d" % k)
            cmd = [cc, "-std=c11", "-g", "-Iinclude", "-Isrc", "-o", exe, "tests/crc/test_crc.c"]
            if san:
                cmd[1:1] = ["-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=all"] + (
                    ["-DNPZS_HAVE_ISAL"] if with_isal else [])
                cmd += ["src/crc.c", "src/crcfold.c"]
            else:
                cmd[1:1] = ["-O2"]
                cmd += [os.path.join(bindir, "libnpzstream.a")]
            cmd += (["-lisal"] if with_isal else []) + ["-lz", "-pthread"]
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
            if r.returncode != 0:
                print(r.stdout + r.stderr)
                sums[1] += 1
                status = 1
                continue
            r = subprocess.run([exe] + (["--quick"] if a.quick else []), cwd=ROOT, capture_output=True, text=True)
            out = (r.stdout + r.stderr).rstrip()
            last = (out.splitlines() or [""])[-1]
            print("\n".join(out.splitlines()[:-1]))
            m = re.match(r"crc: (\d+) passed, (\d+) failed$", last)
            if not m:  # crashed before its summary
                print(last)
                sums[1] += 1
                status = 1
                continue
            sums[0] += int(m.group(1))
            sums[1] += int(m.group(2))
            status = max(status, r.returncode)
    print("crc: %d passed, %d failed" % tuple(sums))
    return status if sums[1] == 0 else max(status, 1)

if __name__ == "__main__":
    sys.exit(main())
