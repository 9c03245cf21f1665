"""What this build of the library takes: its limits (one default set for every entry point and
the command line, from the library's table), the features it was built with, and the checks of
the keyword arguments that carry them (sizes such as "4Gi", threads, max_bytes)."""
from __future__ import annotations

from typing import Any, Dict, Union

from . import _npzstream

#: The library's default limits (npzs_limits_default): the same for every entry point and the
#: command line.  max_total_bytes, 1 GiB, bounds the array data of an input in all.
DEFAULT_LIMITS: Dict[str, int] = dict(_npzstream.default_limits())
#: What `load` keeps at most (array data and blobs), unless max_bytes says otherwise: an upload
#: cannot make the server allocate more than this, whatever its headers declare.  It is the
#: library's max_total_bytes default.
DEFAULT_MAX_BYTES = DEFAULT_LIMITS["max_total_bytes"]
#: hash=True and policies that hash are available: the module was built with OpenSSL's libcrypto.
SHA256 = bool(_npzstream.SHA256)
#: The library's limits, as keyword arguments (see SECURITY.md), with the lenient flags and
#: inflate_zlib: the numeric ones are the C library's table (NPZS_LIMITS_MAP), in its order.
#: inflate_zlib=True inflates with zlib alone (NPZS_INFLATE_ZLIB); by default the library's own
#: decoder, whose verdict and bytes are zlib's (SECURITY.md, "The inflater"), is 1.4x to 2.7x faster.
LIMITS = tuple(k for k in DEFAULT_LIMITS if k != "lenient") + (
    "lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate", "inflate_zlib")
#: lenient_fast_inflate=True is available: the module was built with ISA-L.  It inflates about
#: twice as fast as zlib and may accept deflate data zlib (and so np.load) refuses (SECURITY.md).
FAST_INFLATE = bool(_npzstream.FAST_INFLATE)


def library_version() -> str:
    """The version of the libnpzstream compiled into this module."""
    return _npzstream.library_version()


def _check_threads(threads: Any) -> int:
    if not isinstance(threads, int) or isinstance(threads, bool) or not 1 <= threads <= 64:
        raise ValueError("threads must be an int from 1 to 64")
    return threads


_SUFFIX = {"K": 10**3, "M": 10**6, "G": 10**9, "T": 10**12, "P": 10**15, "E": 10**18,
           "Ki": 1 << 10, "Mi": 1 << 20, "Gi": 1 << 30, "Ti": 1 << 40, "Pi": 1 << 50, "Ei": 1 << 60}


#: the limits that count bytes, which also take sizes such as "4Gi" (as the command line does)
_SIZE_LIMITS = ("max_total_bytes", "max_memory", "inflate_window")


def _size(name: str, v: Any) -> int:
    """An int, or a size as the command line takes it ("512Mi", "4G")."""
    if isinstance(v, bool) or not isinstance(v, (int, str)):
        raise TypeError("%s must be an int or a size such as \"1Gi\"" % name)
    if isinstance(v, int):
        return v
    digits = v.rstrip("KMGTPEi")
    unit = v[len(digits):]
    if not digits.isdigit() or not digits.isascii() or (unit and unit not in _SUFFIX):
        raise ValueError("%s: %r is not a size (digits, then K M G T P E or Ki Mi Gi Ti Pi Ei)" % (name, v))
    return int(digits) * _SUFFIX.get(unit, 1)


def _limits(kw: Dict[str, Any]) -> Dict[str, int]:
    out: Dict[str, int] = {}
    lenient = 0
    for k, v in kw.items():
        if k in ("lenient_npy_trailing", "lenient_header_newline", "lenient_fast_inflate", "inflate_zlib"):
            if not isinstance(v, bool):
                raise TypeError("%s must be a bool" % k)
            if k == "lenient_fast_inflate" and v and not FAST_INFLATE:
                raise ValueError("lenient_fast_inflate: this build of npzstream has no ISA-L")
            if v:
                lenient |= {"lenient_npy_trailing": _npzstream.LENIENT_NPY_TRAILING,
                            "lenient_header_newline": _npzstream.LENIENT_HEADER_NEWLINE,
                            "lenient_fast_inflate": _npzstream.LENIENT_FAST_INFLATE,
                            "inflate_zlib": _npzstream.INFLATE_ZLIB}[k]
        elif k in _SIZE_LIMITS:
            out[k] = _size(k, v)  # range-checked by the module, never wrapped
        elif k in LIMITS:
            if isinstance(v, bool) or not isinstance(v, int):
                raise TypeError("%s must be an int" % k)
            out[k] = v
        else:
            raise TypeError("unknown limit %r (the limits are: %s)" % (k, ", ".join(LIMITS)))
    out["lenient"] = lenient
    return out


def _check_max_bytes(max_bytes: Union[int, str]) -> int:
    max_bytes = _size("max_bytes", max_bytes)
    if not 0 <= max_bytes < 1 << 64:
        raise ValueError("max_bytes must be between 0 and 2**64 - 1")
    return max_bytes

