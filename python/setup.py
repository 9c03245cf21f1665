"""Build of the npzstream extension: the module (src/npzstream/ext/: module.c, then one file a
type) compiled together with the C library's sources, so there is no shared library to find at
run time and no struct layout copied by hand.  In a source checkout the library is taken from
../src (its folders as they are: a layer's sources include the others by relative paths),
../include and ../cli/sandbox.[ch], copied into csrc/src, csrc/include and csrc/cli, which an
sdist then carries; zlib's headers are needed (zlib1g-dev)."""
import glob
import os
import re
import shutil

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(HERE, "csrc")
TREE = os.path.dirname(HERE)
if os.path.exists(os.path.join(TREE, "src", "npzs.c")) and os.path.exists(os.path.join(TREE, "include", "npzstream.h")):
    shutil.rmtree(CSRC, ignore_errors=True)  # a copy of an older layout would be compiled along
    for part in ("src", "include"):
        shutil.copytree(os.path.join(TREE, part), os.path.join(CSRC, part),
                        ignore=lambda d, names: [n for n in names if not n.endswith((".c", ".h"))
                                                 and not os.path.isdir(os.path.join(d, n))])
    # and the command line's sandbox (cli/sandbox.c, which uses nothing else of the command line's):
    # npzstream.scan(sandbox=True) confines its workers with it
    os.makedirs(os.path.join(CSRC, "cli"))
    for f in glob.glob(os.path.join(TREE, "cli", "sandbox.[ch]")):
        shutil.copy2(f, os.path.join(CSRC, "cli"))
if not os.path.exists(os.path.join(CSRC, "src", "npzs.c")):
    raise SystemExit("npzstream: the C library's sources are missing (build from the npzstream source tree)")
# every source of the library (the Makefile's SRC, the same files), its vlen reader, and the sandbox
LIB_SOURCES = sorted(os.path.relpath(f, HERE) for f in glob.glob(os.path.join(CSRC, "src", "**", "*.c"), recursive=True)
                     + glob.glob(os.path.join(CSRC, "cli", "*.c")))

# the extension's own sources (relative to this directory, as setuptools takes them)
EXT_SOURCES = sorted(os.path.relpath(f, HERE) for f in glob.glob(os.path.join(HERE, "src", "npzstream", "ext", "*.c")))
# every header: a build left in build/ is compiled again when one is newer than it (the copies keep
# their times; without this a change to a header alone, NPZS_VERSION's, left the old extension)
HEADERS = sorted(os.path.relpath(f, HERE) for f in glob.glob(os.path.join(CSRC, "**", "*.h"), recursive=True)
                 + glob.glob(os.path.join(HERE, "src", "npzstream", "ext", "*.h")))

# One version: the library's (NPZS_VERSION in npzstream.h), as npzstream.__version__ reports it.
with open(os.path.join(CSRC, "include", "npzstream.h")) as f:
    VERSION = re.search(r'#define NPZS_VERSION "([^"]+)"', f.read()).group(1)

# ISA-L (libisal-dev) where it is installed, for lenient_fast_inflate=True only (zlib stays the
# inflater); NPZSTREAM_ISAL=0 builds without it.
ISAL = os.environ.get("NPZSTREAM_ISAL", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "isa-l", "igzip_lib.h")) for d in ("/usr/include", "/usr/local/include"))

# OpenSSL's libcrypto (libssl-dev) where its headers are installed, for SHA-256 of array data
# (hash=True and policies that hash or pin values); NPZSTREAM_OPENSSL=0 builds without it (hashing
# is then refused).  It is not linked: the library loads it at the first request for a hash
# (src/bytes/sha256.c), as the command line does, and refuses hashing where it cannot be loaded.
OPENSSL = os.environ.get("NPZSTREAM_OPENSSL", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "openssl", "sha.h")) for d in ("/usr/include", "/usr/local/include"))

# libseccomp (libseccomp-dev) where it is installed, for the system-call filter of a confined scan
# (sandbox=True); NPZSTREAM_SECCOMP=0 builds without it (Landlock alone then confines, where the
# kernel has it).
SECCOMP = os.environ.get("NPZSTREAM_SECCOMP", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "seccomp.h")) for d in ("/usr/include", "/usr/local/include"))

ext = Extension(
    "npzstream._npzstream",
    sources=EXT_SOURCES + LIB_SOURCES,
    depends=HEADERS,
    include_dirs=["csrc/include", "csrc/src", "csrc/cli"],
    libraries=(["isal"] if ISAL else []) + (["seccomp"] if SECCOMP else []) + ["z", "m"],
    define_macros=([("NPZS_HAVE_ISAL", "1")] if ISAL else []) + ([("NPZS_HAVE_OPENSSL", "1")] if OPENSSL else [])
    + ([("NPZS_HAVE_SECCOMP", "1")] if SECCOMP else []),
    extra_compile_args=["-O2", "-fvisibility=hidden", "-pthread"],
    extra_link_args=["-pthread"],
)

setup(version=VERSION, ext_modules=[ext])
