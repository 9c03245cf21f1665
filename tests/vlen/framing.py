"""The numcodecs VLenBytes framing of a ragged-array chunk, written for the vlen suite
(test_vlen.py) and the fuzz seeds (gen_seeds.py): u32 LE count, then per element a u32 LE byte
length and the bytes.  numcodecs' own encoders (VLenBytes; VLenArray for 1-D elements) write it
where `import numcodecs` works (Debian: python3-numcodecs), else struct does, the same bytes;
NPZS_VLEN_NO_NUMCODECS=1 in the environment forces struct (to test that path)."""
import os
import struct

import numpy as np

try:
    if os.environ.get("NPZS_VLEN_NO_NUMCODECS"):
        raise ImportError("disabled by NPZS_VLEN_NO_NUMCODECS")
    import numcodecs
    from numcodecs import VLenArray, VLenBytes
except Exception:  # depends on the machine
    numcodecs = None


def encoder():
    """Which encoder writes the chunks, in words."""
    if numcodecs:
        return "numcodecs %s (VLenBytes, VLenArray)" % numcodecs.__version__
    return "numcodecs not importable (apt-get install python3-numcodecs); using the struct encoder"


def frame_struct(items):
    """The framing written by hand, whatever is importable."""
    return struct.pack("<I", len(items)) + b"".join(struct.pack("<I", len(b)) + bytes(b) for b in items)


def frame(items):
    """A chunk of byte strings."""
    if numcodecs:
        arr = np.empty(len(items), dtype=object)
        for i, b in enumerate(items):
            arr[i] = bytes(b)
        return bytes(VLenBytes().encode(arr))
    return frame_struct(items)


def frame_arrays(arrays, dtype):
    """A chunk of ragged arrays of dtype: VLenArray's for 1-D elements when numcodecs is there, else
    their bytes framed."""
    if numcodecs and all(a.ndim == 1 for a in arrays):
        arr = np.empty(len(arrays), dtype=object)
        for i, a in enumerate(arrays):
            arr[i] = a
        return bytes(VLenArray(dtype).encode(arr))
    return frame([np.ascontiguousarray(a, dtype=dtype).tobytes() for a in arrays])


def decode(data):
    """The byte strings of a chunk, as numcodecs reads it (None without numcodecs)."""
    return [bytes(d) for d in VLenBytes().decode(data)] if numcodecs else None
