"""keep_going=True (validate, Validator, avalidate, scan): every member the stream can still frame
past the first error, each with its own status and error, the verdict the first error's; accepted
archives reported exactly as without it."""
import asyncio
import io
import os
import pickle
import sys
import zipfile

import numpy as np
import pytest

import npzstream
from npzstream import _npzstream

# the scanner's mixed folder, made the same way (tests/scan/mixed.py)
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scan"))
from mixed import OBJ, PICKLE, W  # noqa: E402
from common import npy_bytes, zip_bytes  # noqa: E402  (tests/common.py: mixed.py puts tests/ on the path)

MULTI = zip_bytes([("meta.npy", OBJ), ("opt.pkl", PICKLE), ("w.npy", W)])
MULTI_C = zip_bytes([("meta.npy", OBJ), ("opt.pkl", PICKLE), ("w.npy", W)], zipfile.ZIP_DEFLATED)


def offsets(data):
    return [i.header_offset for i in zipfile.ZipFile(io.BytesIO(data)).infolist()]


@pytest.mark.parametrize("data", [MULTI, MULTI_C], ids=["stored", "deflated"])
def test_object_array_pickle_array_all_three_listed(data):
    plain = npzstream.validate(data)
    assert not plain and plain.members == []  # the strict report stops at the object array
    r = npzstream.validate(data, keep_going=True)
    assert not r and r.error == plain.error  # the verdict: the first error
    assert r.error.code == "pickle"
    assert [m.name for m in r.members] == [i.filename for i in zipfile.ZipFile(io.BytesIO(data)).infolist()]
    assert [m.offset for m in r.members] == offsets(data)
    assert [m.index for m in r.members] == [0, 1, 2]
    meta, opt, w = r.members
    # the object array: the member the parser stopped in, with the file's error
    assert meta.status == "rejected" and meta.error == r.error and meta.key == "meta"
    assert meta.error.offset >= meta.offset
    # the pickle: a blob, sniffed, accepted as np.load hands it back (bytes): its own verdict ok
    assert opt.status == "ok" and opt.error is None and opt.kind == "blob" and opt.sniff == "pickle"
    assert opt.key == "opt.pkl" and opt.size == len(PICKLE)
    # the array after it: checked on its own
    assert w.status == "ok" and w.error is None and w.kind == "array" and w.dtype == "<f4" and w.shape == (2, 3)
    assert w.key == "w" and w.nbytes == 24 and w.fortran_order is False
    assert r.inventory_error is None


def test_each_member_its_own_error():
    # an object array, then another (its own pickle error at its own header), then a clean array
    other = npy_bytes(np.array([None, 3], dtype=object), allow_pickle=True)
    data = zip_bytes([("meta.npy", OBJ), ("other.npy", other), ("w.npy", W)])
    r = npzstream.validate(data, keep_going=True)
    meta, oth, w = r.members
    assert meta.error == r.error and meta.error.rule == "PICKLE.object"
    assert oth.status == "rejected" and oth.error is not r.error
    assert oth.error.code == "pickle" and oth.error.rule == "PICKLE.object"
    assert oth.error.member == 1 and oth.error.name == b"other.npy"
    # the header's dict starts after the 10-byte preamble: the error is inside this member's data
    data_start = offsets(data)[1] + 30 + len("other.npy")
    assert data_start < oth.error.offset < offsets(data)[2]
    assert oth.error.offset - data_start == oth.error.content_offset
    assert oth.error.hint  # from the rule, as every RejectedError
    assert w.status == "ok" and w.error is None


def test_crc_error_after_the_first_is_its_own():
    bad = bytearray(zip_bytes([("meta.npy", OBJ), ("w.npy", W)]))
    at = offsets(bytes(bad))[1]
    bad[at + 30 + len("w.npy") + 140] ^= 0xFF  # an array data byte of w.npy: its CRC-32 no longer matches
    r = npzstream.validate(bytes(bad), keep_going=True)
    w = r.members[1]
    assert w.status == "rejected" and w.error.code == "crc_mismatch" and w.error.rule == "INV.crc"
    assert w.error.offset == at + 30 + len("w.npy") and w.error.member == 1


def test_truncated_listing_says_where_it_stopped():
    cut = MULTI[: offsets(MULTI)[2] + 40]  # inside w.npy
    r = npzstream.validate(cut, keep_going=True)
    assert [m.name for m in r.members] == ["meta.npy", "opt.pkl", "w.npy"]
    assert r.members[2].error.code == "truncated" and r.members[2].error.rule == "INV.truncated"
    assert r.members[2].error.offset == len(cut)
    e = r.inventory_error
    assert e is not None and e.code == "truncated" and e.rule == "INV.truncated" and e.offset == len(cut)
    assert r.error.code == "pickle"  # the verdict is still the first error


def test_central_only_member_listed_with_its_error():
    # a central directory entry whose local header the stream never met: its offset points at
    # the first member's header, which the walker already matched
    data = bytearray(zip_bytes([("meta.npy", OBJ), ("w.npy", W)]))
    cd = data.rindex(b"PK\x01\x02")  # the second central entry
    data[cd + 42: cd + 46] = (7).to_bytes(4, "little")  # its local header offset: nowhere
    r = npzstream.validate(bytes(data), keep_going=True)
    last = r.members[-1]
    assert last.name == "w.npy" and last.status == "rejected" and last.error.rule == "INV.central-only"
    assert last.error.code == "cd_mismatch" and last.error.offset == cd and last.kind == "unknown"


def test_rejected_npy_is_its_one_array():
    r = npzstream.validate(OBJ, keep_going=True)
    assert not r and len(r.members) == 1
    m = r.members[0]
    assert m.key is None and m.name is None and m.kind == "array" and m.status == "rejected" and m.error == r.error


@pytest.mark.parametrize("data", [zip_bytes([("a.npy", W), ("b.npy", npy_bytes(np.zeros(3))), ("t.txt", b"hi\n")]),
                                  zip_bytes([("a.npy", W), ("t.txt", b"hi\n")], zipfile.ZIP_DEFLATED), W],
                         ids=["stored", "deflated", "npy"])
def test_accepted_unchanged(data):
    plain, kept = npzstream.validate(data), npzstream.validate(data, keep_going=True)
    assert plain and kept and plain == kept
    assert all(m.status == "ok" and m.error is None for m in kept.members)
    assert kept.inventory_error is None


def test_every_chunking_the_same():
    want = npzstream.validate(MULTI_C, keep_going=True)
    for size in (1, 2, 3, 7, 64, 1000):
        v = npzstream.Validator(keep_going=True)
        for i in range(0, len(MULTI_C), size):
            v.feed(MULTI_C[i:i + size])
        got = v.finish()
        assert (got.error, got.members, got.inventory_error) == (want.error, want.members, want.inventory_error), size


def test_avalidate_and_scan(tmp_path):
    async def chunks():
        for i in range(0, len(MULTI), 100):
            yield MULTI[i:i + 100]
    want = npzstream.validate(MULTI, keep_going=True)
    got = asyncio.run(npzstream.avalidate(chunks(), keep_going=True))
    assert (got.error, got.members, got.inventory_error) == (want.error, want.members, want.inventory_error)
    p = tmp_path / "multi.npz"
    p.write_bytes(MULTI)
    [r] = list(npzstream.scan([p], workers=0, keep_going=True))
    assert [m.name for m in r.members] == ["meta.npy", "opt.pkl", "w.npy"] and r.path == str(p)
    assert r.members == want.members
    [plain] = list(npzstream.scan([p], workers=0))
    assert plain.members == []
    # a report with kept members pickles whole (scan's workers send it to the parent)
    assert pickle.loads(pickle.dumps(r)) == r


def test_limits_apply_to_the_listing():
    r = npzstream.validate(MULTI, keep_going=True, max_members=2)
    assert len(r.members) <= 2
    e = r.inventory_error
    assert e is not None and e.code == "limit" and e.rule == "INV.limit" and e.offset == offsets(MULTI)[2]


def test_inventory_type_misuse():
    inv = _npzstream.Inventory()
    inv.finish()
    with pytest.raises(RuntimeError):
        inv.feed(b"x")
    with pytest.raises(TypeError):
        _npzstream.Inventory({"nope": 1})
    with pytest.raises(TypeError):
        _npzstream.Inventory().feed(3)
