"""`make install` / `make uninstall`, pkg-config, SONAME, exported symbols and man pages.


Installs into a temporary PREFIX (and once into a DESTDIR staging tree), builds a tiny C
program with `pkg-config --cflags --libs npzstream` against the installed copy, runs it
with LD_LIBRARY_PATH on an archive np.savez wrote, and compares with np.load.  It tests what
`make install` installs (not --bin).
"""
import io
import os
import re
import subprocess
import sys
import zlib

import numpy as np

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import ok  # noqa: E402

PROG = r"""
#include <stdio.h>
#include <unistd.h>
#include <npzstream.h>
int main(void) {
    unsigned char buf[4096];
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {buf, 0, 0};
    npzs_event ev;
    unsigned long crc_sum = 0;
    for (;;) {
        int rc = npzs_next(p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) {
            ssize_t n = read(0, buf, sizeof buf);
            if (n <= 0) npzs_finish(p);
            in = (npzs_in){buf, n > 0 ? (size_t)n : 0, 0};
        } else if (rc == NPZS_EVENT) {
            if (ev.type == NPZS_EV_MEMBER_END) crc_sum += ev.data_crc32;
            if (ev.type == NPZS_EV_END) {
                printf("ok %u %lu %s\n", (unsigned)ev.members, crc_sum, NPZS_VERSION);
                break;
            }
        } else {
            printf("rejected %s\n", npzs_error_name(rc));
            break;
        }
    }
    npzs_free(p);
    return 0;
}
"""


def sh(cmd, **kw):
    return subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)


def make(*args):
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    return sh(["make", "-s", "-C", ROOT] + list(args), env=env)


def header_functions():
    names = set()
    for h in sorted(os.listdir(os.path.join(ROOT, "include"))):
        if h.startswith("npzstream") and h.endswith(".h"):
            text = open(os.path.join(ROOT, "include", h)).read()
            text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
            names |= set(re.findall(r"\b(npzs_\w+)\s*\(", text))
    return names


def test_hooks():
    """The functions src/ defines only under NPZS_TESTING: the test hooks."""
    names = set()
    for d, _, files in os.walk(os.path.join(ROOT, "src")):
        for f in files:
            if f.endswith(".c"):
                text = open(os.path.join(d, f)).read()
                for block in re.findall(r"^#ifdef NPZS_TESTING\n(.*?)^#endif", text, flags=re.S | re.M):
                    names |= set(re.findall(r"^[A-Za-z_][\w \*]*?\b(npzs_\w+)\s*\([^;{]*\)\s*\{", block, flags=re.M))
    return names


def defined_symbols(path, dynamic=False):
    """The symbols nm lists as defined in an archive or a shared library (its exports: dynamic)."""
    r = sh(["nm", "--defined-only"] + (["-D"] if dynamic else []) + [path])
    assert r.returncode == 0, "nm %s: %s" % (path, r.stderr[-300:])
    return {l.split()[-1] for l in r.stdout.splitlines() if len(l.split()) == 3}


def test_install(tmp):
    hdr = open(os.path.join(ROOT, "include", "npzstream.h")).read()
    ver = re.search(r'#define NPZS_VERSION "([^"]+)"', hdr).group(1)
    bio = io.BytesIO()
    np.savez(bio, a=np.arange(10), b=np.ones((3, 4), dtype="<f4"), c=np.array(b"xyz"))
    archive = bio.getvalue()
    with np.load(io.BytesIO(archive)) as z:
        crc_sum = sum(zlib.crc32(z[k].tobytes(order="A")) for k in z.files)

    pre = os.path.join(tmp, "prefix")
    r = make("install", "PREFIX=" + pre)
    assert r.returncode == 0, "make install: %s" % (r.stdout + r.stderr)[-1500:]
    lib = os.path.join(pre, "lib")
    real = os.path.join(lib, "libnpzstream.so." + ver)
    for rel in ["include/npzstream.h", "lib/libnpzstream.a", "lib/libnpzstream.so." + ver,
                "lib/pkgconfig/npzstream.pc", "bin/npzstream", "share/man/man1/npzstream.1",
                "share/man/man3/npzstream.3"]:
        ok(os.path.isfile(os.path.join(pre, rel)) and not os.path.islink(os.path.join(pre, rel)),
           "installed file missing: " + rel)
    ok(os.path.islink(os.path.join(lib, "libnpzstream.so.0"))
       and os.readlink(os.path.join(lib, "libnpzstream.so.0")) == "libnpzstream.so." + ver,
       "libnpzstream.so.0 is not a symlink to the versioned file")
    ok(os.path.islink(os.path.join(lib, "libnpzstream.so"))
       and os.path.realpath(os.path.join(lib, "libnpzstream.so")) == os.path.realpath(real),
       "libnpzstream.so is not a symlink to the library")
    r = sh(["objdump", "-p", real])
    ok(re.search(r"SONAME\s+libnpzstream\.so\.0\b", r.stdout) is not None, "SONAME: %s" % r.stdout[-500:])

    # exported symbols: exactly the public npzs_* functions of the installed headers
    r = sh(["nm", "-D", "--defined-only", real])
    exported = {l.split()[-1] for l in r.stdout.splitlines() if l.strip()}
    public = header_functions()
    ok(exported and all(s.startswith("npzs_") for s in exported), "non-npzs exports: %s" % sorted(
        s for s in exported if not s.startswith("npzs_")))
    ok(exported <= public, "exported but not declared in a public header: %s" % sorted(exported - public))
    core = set(re.findall(r"\b(npzs_\w+)\s*\(", re.sub(r"/\*.*?\*/", "", hdr, flags=re.S)))
    ok(core <= exported, "declared in npzstream.h but not exported: %s" % sorted(core - exported))

    # the test hooks: the library's test build defines every one (nm sees them), the installed
    # libraries none (not even hidden), nor exports one
    hooks = test_hooks()
    ok(len(hooks) >= 12 and {"npzs__visited", "npzs__par_keep", "npzs_vlen__visited"} <= hooks,
       "the test hooks of src/ (under NPZS_TESTING): %s" % sorted(hooks))
    r = make("build/testing/libnpzstream.a")
    if ok(r.returncode == 0, "make build/testing/libnpzstream.a: %s" % (r.stdout + r.stderr)[-800:]):
        missing = hooks - defined_symbols(os.path.join(ROOT, "build", "testing", "libnpzstream.a"))
        ok(not missing, "the library's test build lacks the hooks: %s" % sorted(missing))
    for path, dyn in ((real, True), (real, False), (os.path.join(lib, "libnpzstream.a"), False)):
        shipped = hooks & defined_symbols(path, dyn)
        ok(not shipped, "%s %s test hooks: %s" % (os.path.basename(path), "exports" if dyn else "defines",
                                                 sorted(shipped)))

    # pkg-config build against the installed copy
    env = dict(os.environ, PKG_CONFIG_PATH=os.path.join(lib, "pkgconfig"))
    r = sh(["pkg-config", "--cflags", "--libs", "npzstream"], env=env)
    flags = r.stdout.split()
    ok(r.returncode == 0 and "-I" + os.path.join(pre, "include") in flags and "-lnpzstream" in flags
       and "-L" + lib in flags, "pkg-config --cflags --libs: %r %s" % (r.stdout, r.stderr))
    r2 = sh(["pkg-config", "--modversion", "npzstream"], env=env)
    ok(r2.stdout.strip() == ver, "pkg-config --modversion: %r" % r2.stdout)
    r3 = sh(["pkg-config", "--static", "--libs", "npzstream"], env=env)
    ok("-lz" in r3.stdout.split(), "pkg-config --static --libs lacks -lz: %r" % r3.stdout)
    src = os.path.join(tmp, "tiny.c")
    open(src, "w").write(PROG)
    prog = os.path.join(tmp, "tiny")
    r = sh(["cc", "-std=c11", "-Wall", "-Wextra", "-Werror", "-o", prog, src] + flags, env=env)
    if ok(r.returncode == 0, "building with pkg-config flags: %s" % r.stderr[-800:]):
        runenv = dict(os.environ, LD_LIBRARY_PATH=lib)
        r = sh(["ldd", prog], env=runenv)
        m = re.search(r"libnpzstream\.so\.0 => (\S+)", r.stdout)
        ok(m is not None and os.path.realpath(m.group(1)) == os.path.realpath(real),
           "the program does not load the installed .so: %s" % r.stdout)
        r = subprocess.run([prog], input=archive, capture_output=True, env=runenv, timeout=60)
        ok(r.stdout.decode().split() == ["ok", "3", str(crc_sum), ver],
           "tiny program on an np.savez archive: %r" % r.stdout)
        r = subprocess.run([prog], input=archive[:-1], capture_output=True, env=runenv, timeout=60)
        ok(r.stdout.decode().split() == ["rejected", "truncated"], "tiny program, truncated: %r" % r.stdout)
    # static link against the installed .a
    static_libs = [f for f in r3.stdout.split() if f != "-lnpzstream" and not f.startswith("-L")]  # -lz (-lisal)
    r = sh(["cc", "-std=c11", "-o", prog + "-static", src, "-I" + os.path.join(pre, "include"),
            os.path.join(lib, "libnpzstream.a")] + static_libs)
    if ok(r.returncode == 0, "static build: %s" % r.stderr[-500:]):
        r = subprocess.run([prog + "-static"], input=archive, capture_output=True, timeout=60)
        ok(r.stdout.decode().split()[:3] == ["ok", "3", str(crc_sum)], "static program: %r" % r.stdout)

    # the installed CLI
    r = subprocess.run([os.path.join(pre, "bin", "npzstream"), "ls", "-"], input=archive, capture_output=True)
    ok(r.returncode == 0 and r.stdout.decode().splitlines()[-1].endswith(": ok"), "installed CLI ls")
    r = sh([os.path.join(pre, "bin", "npzstream"), "--version"])
    ok(r.stdout.strip() == "npzstream " + ver, "installed CLI --version: %r" % r.stdout)

    # man pages: roff without warnings, rendered by man -l and found by man -M
    for sec in ("1", "3"):
        page = os.path.join(pre, "share", "man", "man" + sec, "npzstream." + sec)
        r = sh(["groff", "-man", "-Tutf8", "-ww", "-z", page])
        ok(r.returncode == 0 and r.stderr == "", "groff warnings in npzstream.%s: %s" % (sec, r.stderr[:500]))
        r = sh(["man", "-l", page], env=dict(os.environ, MANWIDTH="80"))
        out = re.sub(r".\x08", "", r.stdout)
        ok(r.returncode == 0 and "NPZSTREAM(%s)" % sec in out and "SYNOPSIS" in out
           and "DESCRIPTION" in out, "man -l npzstream.%s: %s" % (sec, (r.stdout + r.stderr)[:300]))
        r = sh(["man", "-M", os.path.join(pre, "share", "man"), sec, "npzstream"],
               env=dict(os.environ, MANWIDTH="80"))
        ok(r.returncode == 0 and "npzstream" in r.stdout, "man -M PREFIX %s npzstream" % sec)
    r = sh(["man", "-l", os.path.join(pre, "share", "man", "man1", "npzstream.1")], env=dict(os.environ, MANWIDTH="100"))
    text = re.sub(r".\x08", "", r.stdout)
    for word in ("ls", "extract", "--max-header-size", "--max-ndim", "--max-fields", "--max-depth",
                 "--max-members", "--max-name-len", "--max-extra-len", "--max-total-bytes",
                 "--inflate-window", "EXIT STATUS"):
        ok(word in text, "npzstream(1) does not mention %s" % word)

    # DESTDIR staging: files under DESTDIR, paths in the .pc without it
    stage = os.path.join(tmp, "stage")
    r = make("install", "PREFIX=/opt/npzs", "DESTDIR=" + stage)
    pc = os.path.join(stage, "opt", "npzs", "lib", "pkgconfig", "npzstream.pc")
    ok(r.returncode == 0 and os.path.isfile(pc) and os.path.isfile(
        os.path.join(stage, "opt", "npzs", "bin", "npzstream")), "DESTDIR install: %s" % r.stderr[-500:])
    if os.path.isfile(pc):
        text = open(pc).read()
        ok("prefix=/opt/npzs" in text and stage not in text, "DESTDIR leaked into the .pc: %s" % text)

    # uninstall removes everything it installed
    r = make("uninstall", "PREFIX=" + pre)
    left = [os.path.join(d, f) for d, _, fs in os.walk(pre) for f in fs]
    left += [os.path.join(d, f) for d, ds, _ in os.walk(pre) for f in ds
             if os.path.islink(os.path.join(d, f))]
    ok(r.returncode == 0 and not left, "make uninstall left: %s" % left)
