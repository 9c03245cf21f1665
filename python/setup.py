"""Build of the npzstream extension: the module (src/npzstream/ext/: module.c, then one file a
type) compiled together with the C library's sources, so there is no shared library to find at
run time and no struct layout copied by hand.  In a source checkout the library is taken from
../src and ../include (copied into csrc/, which an sdist then carries); zlib's headers are
needed (zlib1g-dev)."""
import glob
import os
import re
import shutil

from setuptools import Extension, setup

HERE = os.path.dirname(os.path.abspath(__file__))
CSRC = os.path.join(HERE, "csrc")
TREE = os.path.dirname(HERE)
if os.path.exists(os.path.join(TREE, "src", "npzs.c")) and os.path.exists(os.path.join(TREE, "include", "npzstream.h")):
    os.makedirs(CSRC, exist_ok=True)
    for f in glob.glob(os.path.join(TREE, "src", "*.[ch]")) + glob.glob(os.path.join(TREE, "include", "*.h")):
        shutil.copy2(f, CSRC)
if not os.path.exists(os.path.join(CSRC, "npzs.c")):
    raise SystemExit("npzstream: the C library's sources are missing (build from the npzstream source tree)")
# every source of the library (the Makefile's SRC, the same files), and its vlen reader
LIB_SOURCES = sorted(os.path.basename(f) for f in glob.glob(os.path.join(CSRC, "*.c")))

# the extension's own sources (relative to this directory, as setuptools takes them)
EXT_SOURCES = sorted(os.path.relpath(f, HERE) for f in glob.glob(os.path.join(HERE, "src", "npzstream", "ext", "*.c")))

# One version: the library's (NPZS_VERSION in npzstream.h), as npzstream.__version__ reports it.
with open(os.path.join(CSRC, "npzstream.h")) as f:
    VERSION = re.search(r'#define NPZS_VERSION "([^"]+)"', f.read()).group(1)

# ISA-L (libisal-dev) where it is installed, for lenient_fast_inflate=True only (zlib stays the
# inflater); NPZSTREAM_ISAL=0 builds without it.
ISAL = os.environ.get("NPZSTREAM_ISAL", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "isa-l", "igzip_lib.h")) for d in ("/usr/include", "/usr/local/include"))

# OpenSSL's libcrypto (libssl-dev) where its headers are installed, for SHA-256 of array data
# (hash=True and policies that hash or pin values); NPZSTREAM_OPENSSL=0 builds without it (hashing
# is then refused).  It is not linked: the library loads it at the first request for a hash
# (src/sha256.c), as the command line does, and refuses hashing where it cannot be loaded.
OPENSSL = os.environ.get("NPZSTREAM_OPENSSL", "auto") != "0" and any(
    os.path.exists(os.path.join(d, "openssl", "sha.h")) for d in ("/usr/include", "/usr/local/include"))

ext = Extension(
    "npzstream._npzstream",
    sources=EXT_SOURCES + [os.path.join("csrc", f) for f in LIB_SOURCES],
    include_dirs=["csrc"],
    libraries=(["isal"] if ISAL else []) + ["z", "m"],
    define_macros=([("NPZS_HAVE_ISAL", "1")] if ISAL else []) + ([("NPZS_HAVE_OPENSSL", "1")] if OPENSSL else []),
    extra_compile_args=["-O2", "-fvisibility=hidden", "-pthread"],
    extra_link_args=["-pthread"],
)

setup(version=VERSION, ext_modules=[ext])
