"""Names for the name suites (tests/names/test_names.py: the command line; tests/python/pytest_names.py:
the Python package; tests/wasm/test_wasm.py: the WebAssembly build): seeded random names, the files
NumPy writes with them, what np.load makes of those files, and what every output must show of a
name, written here from the documentation (README.md "Names in the output"), not from the C code.

A name is any text: ASCII, characters of 2, 3 and 4 bytes placed across the 64-byte cut of the
words, controls (C0, DEL, C1), the bidirectional controls, the line separators, quotes and
backslashes; field names also lone surrogates, as NumPy writes them ('\\ud800' in the header).
"""
import io
import os
import random
import sys
import warnings

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import npy_bytes, zip_bytes  # noqa: E402,F401  (npy_bytes: the name suites call it here)

ASCII = "abcxyzABC019_-. /"
QUOTES = "'\"\\"
C0 = "\x01\x07\t\n\r\x1b\x7f"
C1 = "\x85\x9b\x80\x9f"
BIDI = "\u061c\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069"
SEPS = "\u2028\u2029"
WIDE = "\u00e9\u00df\u0436\u20ac\u4e2d\ufeff\U0001f600\U0001d11e"  # 2, 2, 2, 3, 3, 3, 4, 4 bytes
SURROGATES = "\ud800\udbff\udc00\udfff"
# every code point text output escapes (README.md, "Names in the output"): C0, DEL, C1, the bidi
# controls, the line and paragraph separators, surrogates
HIDDEN = frozenset(list(range(0x20)) + list(range(0x7F, 0xA0)) + [0x061C, 0x200E, 0x200F] + list(range(0x2028, 0x202F)) +
                   list(range(0x2066, 0x206A)) + list(range(0xD800, 0xE000)))
WORDS_MAX = 64  # bytes of a name's text in the library's words


def pick(rng, alphabet, n):
    return "".join(rng.choice(alphabet) for _ in range(n))


def name_of(rng, nbytes, surrogates=False, c0=True):
    """A random name of exactly nbytes bytes of UTF-8 (surrogates: 3 bytes each, as NumPy's field
    names may hold them; c0: C0 controls, DEL and backslashes too)."""
    pools = [ASCII, QUOTES if c0 else "'\"", C1, BIDI, SEPS, WIDE]
    pools += ([C0] if c0 else []) + ([SURROGATES] if surrogates else [])
    out, size = [], 0
    while size < nbytes:
        c = rng.choice(rng.choice(pools))
        k = len(c.encode("utf-8", "surrogatepass"))
        if size + k > nbytes:
            c, k = "a", 1
        out.append(c)
        size += k
    return "".join(out)


def member_names(seed, quick=False):
    """Member keys (names without ".npy"): one of every byte length 0..300 (quick: every 7th), each
    character of WIDE across the 64-byte cut, and short names of every kind; no NUL (zipfile cuts a
    name there) and no surrogate (zipfile cannot write one)."""
    rng = random.Random(seed)
    # most without a C0 control or a backslash: a member name with one is refused (S-ZIP-NAME.*)
    keys = [name_of(rng, n, c0=rng.random() < 0.2) for n in range(0, 301, 7 if quick else 1)]
    for c in WIDE:
        k = len(c.encode())
        for at in range(WORDS_MAX - k - 1, WORDS_MAX + 1):  # the character ends before, at and after byte 64
            keys.append("a" * at + c + "z")
    keys += [c for c in C0 + C1 + BIDI + SEPS] + ["x\u202ey", "a'b", 'a"b', "a\\b", "\u202e" * 30]
    seen, out = set(), []
    for k in keys:  # one file per key: a key once
        if k not in seen:
            seen.add(k)
            out.append(k)
    return out


def field_names(seed, n=120):
    """Field names: random, lone surrogates and pairs of them (two code points in Python), and
    short ones of every kind; never empty (NumPy names an empty field f0)."""
    rng = random.Random(seed + 1)
    names = [name_of(rng, rng.randrange(1, 90), surrogates=True) for _ in range(n)]
    names += list(SURROGATES) + ["\ud83d\ude00", "a\ud800b", "x\u202ey", "\x1b[31m", "a\nb", "'", "\\"]
    names += ["a" * at + c for c in ("\u00e9", "\u20ac", "\U0001f600", "\ud800") for at in (61, 62, 63)]
    return list(dict.fromkeys(names))


def policy_keys(seed, n=60):
    """Keys for policies: any text (a surrogate cannot be in a policy: its JSON refuses it)."""
    rng = random.Random(seed + 2)
    keys = [name_of(rng, rng.randrange(1, 200), surrogates=rng.random() < 0.1) for _ in range(n)]
    return list(dict.fromkeys(keys + ["\u202e" * 40, "a" * 63 + "\u00e9", "\ud800"]))


# ---- files ---------------------------------------------------------------------------------------

# npy_bytes (tests/common.py): NumPy is imported there when called (tests/wasm/test_browser.py runs
# where it may be missing)

def npz_bytes(members):
    """An archive as np.savez writes it (zipfile, stored, UTF-8 flag on non-ASCII names) of
    (name, array) pairs."""
    return zip_bytes([(name, npy_bytes(a)) for name, a in members])


def member_archive(key):
    """The archive of one member, key + ".npy", of np.arange(3)."""
    import numpy as np
    return npz_bytes([(key + ".npy", np.arange(3))])


def field_array(name):
    """A structured array with the field name (and a second field)."""
    import numpy as np
    other = "other" if name != "other" else "else"
    a = np.zeros(3, dtype=[(name, "<i2"), (other, "u1")])
    a[other] = [1, 2, 3]
    return a


def np_load(data):
    """What np.load(allow_pickle=False) makes of the bytes: None when it refuses them; else an
    ndarray (a .npy) or {key: ndarray or bytes}, every member read."""
    import numpy as np
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            r = np.load(io.BytesIO(data), allow_pickle=False)
            if isinstance(r, np.ndarray):
                return r
            with r:
                return {k: r[k] for k in r.files}
        except Exception:  # noqa: BLE001 -- any exception: NumPy refuses the file
            return None


def strict_rule(key):
    """The documented rule (SECURITY.md, stricter than NumPy) that refuses member name key + ".npy",
    or None: the ones a random name can hit, the first character that breaks one deciding."""
    name = key + ".npy"
    for i, c in enumerate(name):
        if ord(c) < 0x20 or c == "\x7f":
            return "S-ZIP-NAME.control"
        if c == "\\":
            return "S-ZIP-NAME.backslash"
        if name[i:i + 2] == ".." and (i == 0 or name[i - 1] == "/") and name[i + 2:i + 3] in ("", "/"):
            return "S-ZIP-NAME.dotdot"
    if name.startswith("/"):
        return "S-ZIP-NAME.absolute"
    if key == "":
        return "S-ZIP-NAME.empty-key"
    return None


# ---- what the outputs show of a name --------------------------------------------------------------

def units(text, also):
    """The name's characters as text output writes them: a hidden one as \\xHH (below 0x80) or
    \\uHHHH, a character of `also` after a backslash, any other as it is."""
    out = []
    for c in text:
        n = ord(c)
        if n in HIDDEN:
            out.append("\\x%02x" % n if n < 0x80 else "\\u%04x" % n)
        elif c in also:
            out.append("\\" + c)
        else:
            out.append(c)
    return out


def text(name):
    """A name in a text line (check, ls, the stderr messages): every character escaped as above, a
    backslash doubled."""
    return "".join(units(name, "\\"))


def in_words(name, quote=True):
    """A name in the library's words (a policy violation's detail, a policy fault's path): its text
    (a quote escaped too when quoted), cut after the last whole character within 64 bytes, "..."
    when cut."""
    out, size = [], 0
    us = units(name, "\\'" if quote else "\\")
    for u in us:
        k = len(u.encode("utf-8"))
        if size + k > WORDS_MAX:
            out.append("...")
            break
        out.append(u)
        size += k
    s = "".join(out)
    return "'%s'" % s if quote else s


def json_text(name):
    """A name as a JSON string in the output: a hidden character as \\uhhhh, a quote and a backslash
    after a backslash, any other as it is (UTF-8)."""
    out = []
    for c in name:
        n = ord(c)
        out.append("\\u%04x" % n if n in HIDDEN else "\\" + c if c in '"\\' else c)
    return '"%s"' % "".join(out)


def raw_hidden(s):
    """The characters of s that text output must never hold raw (a str; surrogates included)."""
    return sorted({"U+%04X" % ord(c) for c in s if ord(c) in HIDDEN and c not in "\n"})
