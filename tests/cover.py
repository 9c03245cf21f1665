#!/usr/bin/python3
"""Drive the coverage build (make cover) through every suite and the corpus, then print a
gcov table of line and branch coverage per source file of src/.

usage: cover.py COVDIR SRC...
"""
import glob, os, re, subprocess, sys, tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PY = "/usr/bin/python3"


def main():
    cov, srcs = sys.argv[1], sys.argv[2:]
    cli = os.path.join(cov, "npzstream")
    with tempfile.TemporaryDirectory(prefix="npzs-cov-") as tmp:
        files = sorted(glob.glob(os.path.join(ROOT, "corpus", "**", "*"), recursive=True))
        files = [f for f in files if os.path.isfile(f) and os.path.getsize(f) < (1 << 20)]
        subprocess.run([PY, "tests/real/gen.py", os.path.join(tmp, "real")], cwd=ROOT, capture_output=True)
        subprocess.run([PY, "-c", "import os,sys; sys.path.insert(0,'tests/bad'); from cases import cases\n"
                        "d=sys.argv[1]; os.makedirs(d)\n"
                        "for c in cases():\n  open(os.path.join(d, c.name), 'wb').write(c.data)",
                        os.path.join(tmp, "bad")], cwd=ROOT, capture_output=True)
        files += [f for f in glob.glob(os.path.join(tmp, "**", "*"), recursive=True)
                  if os.path.isfile(f) and os.path.getsize(f) < (4 << 20)]
        subprocess.run([os.path.join(cov, "test_api")] + files, cwd=ROOT, capture_output=True)
        suites = [t for t in sorted(glob.glob(os.path.join(ROOT, "tests", "*", "test_*.py"))) if "/big/" not in t]
        subprocess.run([PY, "-m", "pytest", "-q", "--continue-on-collection-errors", "-m", "not rest", "--bin", cli,
                        "--quick", "--basetemp", os.path.join(tmp, "pytest")] + suites, cwd=ROOT, capture_output=True)
    print("%-16s %8s %8s %10s" % ("file", "lines", "branches", "taken"))
    tl = tn = 0
    for s in srcs:
        r = subprocess.run(["gcov", "-b", "-n", "-o", cov, s], cwd=ROOT, capture_output=True, text=True)
        out = r.stdout
        m = re.search(r"File '%s'\s*\nLines executed:([\d.]+)%% of (\d+)" % re.escape(s), out)
        b = re.search(r"File '%s'.*?Branches executed:([\d.]+)%% of (\d+).*?Taken at least once:([\d.]+)%%"
                      % re.escape(s), out, re.S)
        if not m:
            print("%-16s (no data)" % s)
            continue
        pct, n = float(m.group(1)), int(m.group(2))
        tl += pct * n / 100
        tn += n
        print("%-16s %7.1f%% %7.1f%% %9.1f%%" % (s, pct, float(b.group(1)) if b else 0,
                                                float(b.group(3)) if b else 0))
    if tn:
        print("%-16s %7.1f%% of %d lines" % ("total", 100 * tl / tn, tn))


if __name__ == "__main__":
    main()
