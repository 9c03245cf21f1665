"""The archives tests/engines reads (every suite of it, and bench/engines.py): written by the
NumPy of the Python running it, into a directory.

good(d): accepted archives np.load reads: stored (np.savez), deflated (np.savez_compressed),
written to a pipe (data descriptors, sizes only in the central directory), a .npy; each holds
"images" [N, 4, 3] float32 and "labels" [N] int64, N differing from file to file.
bad(d): rejected ones, each with the code and rule the library gives it (with POLICY or
without): a pickle-bearing member (labels an object array: np.savez with allow_pickle), a
truncated archive, a policy-breaking one (labels of another length than images: POLICY's shared
dimension N), an archive whose last member's CRC-32 is wrong (every member but the last is
sound: nothing of it may be handed out).
zoo(d): one stored archive of many dtypes and orders, and the odd members (0-d, empty,
structured, long double, a key with '/', a leading '.', a UTF-8 name, a deflated member).
"""
import io
import os
import struct
import zipfile

import numpy as np

#: the policy every suite reads the good archives with: POLICY's N is shared by the members
POLICY = {"members": {"images": {"dtype": ["<f4"], "shape": ["N", 4, 3]},
                      "labels": {"dtype": ["<i8"], "shape": ["N"], "range": [0, 9]}},
          "allow_other_members": False}


class Unseekable(io.RawIOBase):
    """A pipe as zipfile sees one: write only, no tell, no seek (np.savez then writes data
    descriptors and ZIP64 local headers with zero sizes)."""

    def __init__(self):
        self.buf = bytearray()

    def writable(self):
        return True

    def write(self, b):
        self.buf += b
        return len(b)


def arrays(n, seed):
    rng = np.random.default_rng(seed)
    return {"images": rng.random((n, 4, 3), dtype=np.float32), "labels": rng.integers(0, 10, n, dtype=np.int64)}


def _save(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def savez_bytes(how, arrs):
    if how == "pipe":
        u = Unseekable()
        np.savez(u, **arrs)
        return bytes(u.buf)
    b = io.BytesIO()
    (np.savez_compressed if how == "deflated" else np.savez)(b, **arrs)
    return b.getvalue()


def good(d):
    """{path: (kind, np.load's arrays)} of the accepted archives, written into d."""
    os.makedirs(d, exist_ok=True)
    out = {}
    for i, how in enumerate(["stored", "stored", "deflated", "pipe", "stored", "deflated"]):
        arrs = arrays(5 + 3 * i, i)
        out[_save(os.path.join(d, "good-%d-%s.npz" % (i, how)), savez_bytes(how, arrs))] = (how, arrs)
    return out


def npy(d, n=7):
    """A .npy of n rows of images, and its array."""
    a = arrays(n, 99)["images"]
    p = os.path.join(d, "one.npy")
    np.save(p, a)
    return p, a


def _crc_broken_last(arrs):
    """np.savez's archive with the last member's CRC-32 wrong in both headers (local and central)."""
    data = bytearray(savez_bytes("stored", arrs))
    with zipfile.ZipFile(io.BytesIO(bytes(data))) as z:
        last = z.infolist()[-1]
    lh = last.header_offset
    crc = struct.unpack_from("<I", data, lh + 14)[0] ^ 1
    struct.pack_into("<I", data, lh + 14, crc)
    cd = data.rfind(b"PK\x01\x02")  # the directory's last entry: the last member's
    struct.pack_into("<I", data, cd + 16, crc)
    return bytes(data)


def bad(d):
    """{path: (code, rule prefix)} of the rejected archives, written into d."""
    os.makedirs(d, exist_ok=True)
    out = {}
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:  # what np.savez(allow_pickle) writes: labels an object array
        with z.open("images.npy", "w") as f:
            np.lib.format.write_array(f, arrays(2, 50)["images"])
        with z.open("labels.npy", "w") as f:
            np.lib.format.write_array(f, np.array([{"a": 1}, None], dtype=object), allow_pickle=True)
    out[_save(os.path.join(d, "bad-pickle.npz"), b.getvalue())] = ("pickle", "PICKLE.object")
    whole = savez_bytes("stored", arrays(6, 51))
    out[_save(os.path.join(d, "bad-truncated.npz"), whole[:len(whole) - 30])] = ("truncated", "TRUNC.")
    arrs = arrays(6, 52)
    arrs["labels"] = arrs["labels"][:5]
    out[_save(os.path.join(d, "bad-policy.npz"), savez_bytes("stored", arrs))] = ("policy", "POLICY.")
    out[_save(os.path.join(d, "bad-crc.npz"), _crc_broken_last(arrays(6, 53)))] = ("crc_mismatch", "S-ZIP-CRC")
    return out


def zoo_arrays():
    """The dtypes and orders zarr and np.load must agree on, and the members references leave out
    (with the reason npzstream refs gives)."""
    arrs = {}
    for i, dt in enumerate(["|b1", "|i1", "|u1", "<i2", ">i2", "<u4", ">i8", "<f2", "<f4", ">f8", "<c8", ">c16",
                            "|S5", "<U3", ">U2", "|V4", "<M8[ns]", "<m8[s]", "<M8[D]"]):
        dtype = np.dtype(dt)
        raw = np.random.default_rng(i).bytes(dtype.itemsize * 6)
        a = np.arange(6).astype(dtype) if dtype.kind in "fcMm" else np.frombuffer(raw, dtype=dtype).copy()
        arrs["k%d" % i] = a.reshape(2, 3)
    arrs["fortran"] = np.asfortranarray(np.arange(12.0).reshape(3, 4))
    arrs["scalar"] = np.float32(2.5)
    arrs["empty"] = np.zeros((0, 4), "<i4")
    arrs["\u00fcber"] = np.arange(3)
    skipped = {"structured": (np.zeros(3, dtype=[("x", "<f4"), ("y", "<i2", (2,))]), "structured dtype"),
               "a/b": (np.arange(2), "key is not a zarr name"),
               ".hidden": (np.arange(2), "key is not a zarr name"),
               "s0": (np.ndarray((2,), dtype="S0"), "dtype zarr cannot read")}
    if np.dtype(np.longdouble).itemsize > 8:
        skipped["longdouble"] = (np.zeros(2, np.longdouble), "dtype zarr cannot read")
    return arrs, skipped


def zoo(d):
    """(path, {key: reason or None}) of a stored archive of the zoo, with one deflated member
    added by zipfile (np.load reads a mixed archive)."""
    os.makedirs(d, exist_ok=True)
    arrs, skipped = zoo_arrays()
    allm = dict(arrs)
    allm.update({k: a for k, (a, _) in skipped.items()})
    b = io.BytesIO()
    np.savez(b, **allm)
    with zipfile.ZipFile(b, "a", compression=zipfile.ZIP_DEFLATED) as z:
        with z.open("packed.npy", "w") as f:
            np.lib.format.write_array(f, np.arange(10.0))
    p = _save(os.path.join(d, "zoo.npz"), b.getvalue())
    reasons = {k: None for k in arrs}
    reasons.update({k: r for k, (_, r) in skipped.items()})
    reasons["packed"] = "deflated"
    return p, reasons


def with_comment(d):
    """A stored archive with a ZIP comment (the end record is not the last 22 bytes)."""
    b = io.BytesIO()
    np.savez(b, **arrays(3, 60))
    with zipfile.ZipFile(b, "a") as z:
        z.comment = b"a comment of the archive"
    return _save(os.path.join(d, "comment.npz"), b.getvalue())


def many_members(d, n=65536 + 8):
    """An archive of more members than a ZIP end record counts: ZIP64 end records."""
    b = io.BytesIO()
    with zipfile.ZipFile(b, "w") as z:
        one = io.BytesIO()
        np.lib.format.write_array(one, np.arange(2, dtype=np.int8))
        body = one.getvalue()
        for i in range(n):
            z.writestr("m%d.npy" % i, body)
    return _save(os.path.join(d, "many.npz"), b.getvalue())


def data_ranges(path):
    """The byte ranges of every stored array's data in path (from the archive's own records,
    independently of npzstream): what a planner must never read."""
    out = []
    with open(path, "rb") as f:
        data = f.read()
    if data[:6] == b"\x93NUMPY":
        v = data[6]
        hl = struct.unpack_from("<H" if v == 1 else "<I", data, 8)[0]
        start = (10 if v == 1 else 12) + hl
        return [(start, len(data))]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        for info in z.infolist():
            if info.compress_type != zipfile.ZIP_STORED:
                continue
            lh = info.header_offset
            nl, xl = struct.unpack_from("<HH", data, lh + 26)
            c = lh + 30 + nl + xl
            if data[c:c + 6] != b"\x93NUMPY":
                continue
            v = data[c + 6]
            hl = struct.unpack_from("<H" if v == 1 else "<I", data, c + 8)[0]
            start = c + (10 if v == 1 else 12) + hl
            if info.file_size > start - c:
                out.append((start, c + info.file_size))
    return out
