"""A member as np.load gives it, from the dict the extension made of its events: its key, its
dtype, and its array (allocated for the parser to write into, made over a worker's output, or,
for open(), over the mapped file)."""
from __future__ import annotations

from typing import Any, Dict, Literal, Optional, cast

import numpy


def _key(m: Dict[str, Any]) -> Optional[str]:
    """np.load's key of a member: its name (UTF-8 when flagged so, else CP437, as zipfile
    decodes it) without a final '.npy'."""
    raw = m["name"]
    if raw is None:
        return None
    name = raw.decode("utf-8" if m["flags"] & 0x800 else "cp437")
    return name[:-4] if name.endswith(".npy") else name


def _npz_key(m: Dict[str, Any]) -> str:
    """The key of an .npz member (it has a name)."""
    k = _key(m)
    if k is None:
        raise RuntimeError("npzstream: an .npz member without a name")
    return k


def _dtype(spec: Any) -> numpy.dtype:
    """The dtype of a header, from the parsed descr (a type string, or the field list as the
    dict np.dtype() takes: names, formats, offsets, titles, itemsize), the way NumPy's
    descr_to_dtype builds it; nothing is evaluated."""
    return numpy.dtype(spec)


def _array(m: Dict[str, Any], buffer: Any = None, offset: int = 0) -> numpy.ndarray:
    """The array of a HEADER (m: the member's dict): over buffer at offset (a worker's output, a
    mapped file), or in memory of its own.  numpy.ndarray, as np.load allocates (numpy.empty
    would widen an unsized 'S0' to 'S1'); its size is the header's, or it is not made."""
    dt = _dtype(m["descr"])
    order: Literal["C", "F"] = "F" if m["fortran_order"] else "C"
    arr = numpy.ndarray(m["shape"], dtype=dt, buffer=buffer, offset=offset, order=order)
    if arr.nbytes != m["nbytes"]:
        raise RuntimeError("npzstream: dtype %r shape %r makes %d bytes, the header %d"
                           % (dt, m["shape"], arr.nbytes, m["nbytes"]))
    return arr


def _alloc_array(arrays: Dict[int, numpy.ndarray], m: Dict[str, Any]) -> Optional[memoryview]:
    """The array of a HEADER (m: the member's dict), allocated once into arrays[index]; its
    memory as bytes (the parser's destination), or None when there is nothing to write (no data,
    or a worker's output the array was made over)."""
    block = m.pop("buffer", None)  # a worker thread inflated the data: the array is made over it, no copy
    arr = arrays[m["index"]] = _array(m, block)
    if block is not None or not arr.nbytes:
        return None
    # the array's memory as bytes, in its own order (C or Fortran)
    return memoryview(cast(Any, arr.reshape(-1, order="A").view(numpy.uint8)))
