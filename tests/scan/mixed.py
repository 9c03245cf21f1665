"""The mixed folder of tests/scan: model files as a scanner meets them, each with what a scan must
say of it (its container, whether it carries a pickle, its members), known from how it was made."""
import gzip
import os
import pickle
import sys
import zipfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from common import npy_bytes, zip_bytes  # noqa: E402


class Evil:
    """A pickle that names os.system (never unpickled here)."""

    def __reduce__(self):
        return (os.system, ("true",))


PICKLE = pickle.dumps(Evil(), protocol=4)
PICKLE0 = pickle.dumps({"a": [1, 2]}, protocol=0)
PICKLE1 = pickle.dumps({"a": [1, 2]}, protocol=1)


OBJ = npy_bytes(np.array([1, {"x": 2}], dtype=object), allow_pickle=True)
W = npy_bytes(np.arange(6, dtype="<f4").reshape(2, 3))

# name -> (bytes, container, pickle-bearing, member names (None: not a ZIP))
CASES = {
    "clean.npz": (zip_bytes([("a.npy", W), ("b.npy", npy_bytes(np.zeros(3)))]), "npz", False, ["a.npy", "b.npy"]),
    "clean_c.npz": (zip_bytes([("a.npy", W)], zipfile.ZIP_DEFLATED), "npz", False, ["a.npy"]),
    "clean.npy": (W, "npy", False, None),
    "object.npy": (OBJ, "npy", True, None),
    "object.npz": (zip_bytes([("meta.npy", OBJ), ("w.npy", W)]), "npz", True, ["meta.npy", "w.npy"]),
    "pkl_member.npz": (zip_bytes([("w.npy", W), ("optimizer.pkl", PICKLE)]), "npz", True, ["w.npy", "optimizer.pkl"]),
    "multi.npz": (zip_bytes([("meta.npy", OBJ), ("opt.pkl", PICKLE), ("w.npy", W)]), "npz", True,
                  ["meta.npy", "opt.pkl", "w.npy"]),
    "disguised.npz": (zip_bytes([("w.npy", PICKLE)]), "npz", True, ["w.npy"]),
    "nested.npz": (zip_bytes([("README.txt", b"weights\n"), ("w.npy", W),
                           ("extra.zip", zip_bytes([("inner.pkl", PICKLE)]))]), "npz", True,
                   ["README.txt", "w.npy", "extra.zip"]),
    "gz_member.npz": (zip_bytes([("w.npy", W), ("state.gz", gzip.compress(PICKLE))]), "npz", True, ["w.npy", "state.gz"]),
    "model.pt": (zip_bytes([("archive/data.pkl", PICKLE), ("archive/data/0", b"\0" * 16), ("archive/version", b"3\n")]),
                 "torch", True, ["archive/data.pkl", "archive/data/0", "archive/version"]),
    "model.keras": (zip_bytes([("metadata.json", b'{"keras_version": "3.0"}'), ("config.json", b'{"class_name": "Sequential"}'),
                            ("model.weights.h5", b"\x89HDF\r\n\x1a\n" + b"\0" * 64)], zipfile.ZIP_DEFLATED), "keras", False,
                    ["metadata.json", "config.json", "model.weights.h5"]),
    "plain.zip": (zip_bytes([("notes.txt", b"hello\n")]), "zip", False, ["notes.txt"]),
    "model.pkl": (PICKLE, "pickle", True, None),
    "proto0.pkl": (PICKLE0, "pickle", True, None),
    "proto1.pkl": (PICKLE1, "pickle", True, None),
    "weights.gz": (gzip.compress(PICKLE), "gzip", True, None),
    "clean.gz": (gzip.compress(W), "gzip", False, None),
    "model.safetensors": ((12).to_bytes(8, "little") + b'{"a": "b"}  ' + b"\0" * 8, "safetensors", False, None),
    "junk.bin": (bytes(range(256)) * 4, "unknown", False, None),
    "empty.npz": (b"", "unknown", False, None),
}
# cut short: the strict parser refuses it (a finding), its container still named
TRUNC = zip_bytes([("a.npy", W), ("b.npy", W)])
CASES["truncated.npz"] = (TRUNC[: len(TRUNC) // 2], "npz", None, None)


def write(folder):
    """The folder: every case, a symbolic link and an unreadable file (when not root)."""
    os.makedirs(os.path.join(folder, "sub"), exist_ok=True)
    for name, (data, *_rest) in CASES.items():
        with open(os.path.join(folder, "sub" if name.endswith(".gz") else "", name), "wb") as f:
            f.write(data)
    os.symlink("clean.npz", os.path.join(folder, "link.npz"))
    locked = os.path.join(folder, "locked.npz")
    with open(locked, "wb") as f:
        f.write(CASES["clean.npz"][0])
    os.chmod(locked, 0)
    return folder


def path_of(folder, name):
    return os.path.join(folder, "sub" if name.endswith(".gz") else "", name)
