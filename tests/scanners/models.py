"""The mixed folder of model files the scanner suites judge (made at run time; nothing here is ever
loaded or unpickled): clean archives, object arrays whose pickle runs os.system, pickle blobs (one a
`w.npy` that is a raw pickle), a pickle in a zip and in a gzip member, an object array followed by
more members, a raw pickle, and broken inputs (truncated, empty, junk).

EXPECT: file -> (the pickles npzstream.pickles.find names: {(where, kind)}, the codes of its other
findings); DANGEROUS: the files whose pickles hold os.system."""
import gzip
import io
import os
import pickle
import zipfile

import numpy as np

# the global a malicious pickle calls, as a pickle names it ("posix system" on Linux)
SYSTEM = (os.system.__module__, "system")


class Runs:
    """An object whose pickle calls os.system when unpickled (never done here)."""

    def __reduce__(self):
        return (os.system, ("echo pwned",))


def _npy(a):
    b = io.BytesIO()
    np.save(b, a, allow_pickle=True)
    return b.getvalue()


def _objects():
    o = np.empty(2, dtype=object)
    o[0], o[1] = Runs(), 1
    return o


def _zip(path, members, method=zipfile.ZIP_STORED):
    with zipfile.ZipFile(path, "w", method) as z:
        for name, data in members:
            z.writestr(name, data)


def make(d):
    """The folder, in d."""
    arr = np.arange(12, dtype="<f4").reshape(3, 4)
    np.savez(os.path.join(d, "clean.npz"), w=arr, b=np.arange(3))
    np.savez_compressed(os.path.join(d, "clean_c.npz"), w=arr)
    np.save(os.path.join(d, "clean.npy"), arr)
    np.savez(os.path.join(d, "objarr.npz"), w=arr, meta=_objects())
    np.savez_compressed(os.path.join(d, "objarr_c.npz"), w=arr, meta=_objects())
    np.save(os.path.join(d, "objarr.npy"), _objects(), allow_pickle=True)
    _zip(os.path.join(d, "pkl_member.npz"), [("w.npy", _npy(arr)), ("config.pkl", pickle.dumps(Runs(), protocol=0))])
    _zip(os.path.join(d, "disguised.npz"), [("w.npy", pickle.dumps(Runs(), protocol=4))])
    _zip(os.path.join(d, "multi.npz"), [("meta.npy", _npy(_objects())), ("opt.pkl", pickle.dumps(Runs())),
                                        ("w.npy", _npy(arr))], zipfile.ZIP_DEFLATED)
    inner = io.BytesIO()
    _zip(inner, [("evil.pkl", pickle.dumps(Runs(), protocol=2))])
    _zip(os.path.join(d, "nested.npz"), [("README", b"weights of a model\n"), ("inner.zip", inner.getvalue()),
                                         ("w.npy", _npy(arr))])
    _zip(os.path.join(d, "gz_member.npz"), [("state.gz", gzip.compress(pickle.dumps(Runs(), protocol=5)))])
    with open(os.path.join(d, "model.pkl"), "wb") as f:
        f.write(pickle.dumps(Runs()))
    with open(os.path.join(d, "clean.npz"), "rb") as f:
        whole = f.read()
    with open(os.path.join(d, "truncated.npz"), "wb") as f:
        f.write(whole[:len(whole) // 2])
    open(os.path.join(d, "empty.npz"), "wb").close()
    with open(os.path.join(d, "junk.npz"), "wb") as f:
        f.write(bytes(range(256)) * 4)


EXPECT = {
    "clean.npz": (set(), []),
    "clean_c.npz": (set(), []),
    "clean.npy": (set(), []),
    "objarr.npz": ({("meta.npy", "object")}, []),
    "objarr_c.npz": ({("meta.npy", "object")}, []),
    "objarr.npy": ({("", "object")}, []),
    "pkl_member.npz": ({("config.pkl", "blob")}, []),
    "disguised.npz": ({("w.npy", "blob")}, []),
    "multi.npz": ({("meta.npy", "object"), ("opt.pkl", "blob")}, []),
    "nested.npz": ({("inner.zip:evil.pkl", "blob")}, []),
    "gz_member.npz": ({("state.gz", "file")}, []),
    "model.pkl": ({("", "file")}, ["bad_magic"]),
    "truncated.npz": (set(), ["truncated", "not_inspected"]),
    "empty.npz": (set(), ["truncated"]),
    "junk.npz": (set(), ["bad_magic"]),
}
DANGEROUS = sorted(f for f, (p, _) in EXPECT.items() if p)
CLEAN = sorted(f for f, (p, codes) in EXPECT.items() if not p and not codes)
BROKEN = sorted(f for f, (p, codes) in EXPECT.items() if not p and codes)
