"""pytest suite of names through the Python package (run by tests/run_all.py (pytest) in every
environment it set up): the random member names, field names and policy keys of tests/names/names.py
(every byte length 0..300, characters across the 64-byte cut of the words, controls, bidi controls,
line separators, quotes, backslashes, lone surrogates in field names) through validate, load, aload,
open, Validator.feed, scan and Policy (from a dict and from a JSON file), with and without a policy
whose violation quotes the name.

Each call raises nothing but RejectedError or PolicyError (never UnicodeDecodeError: a detail cut
inside a character did); the verdict is np.load's (or the documented stricter rule a member name
breaks); keys, names and field names come back exactly as np.load gives them ('\\ud800' included);
a policy's words quote the name's first 64 bytes of text, cut on a character's end; str() of an
error and repr() of a report or a member hold no raw control, bidi control or separator."""
import asyncio
import json
import os
import sys

from typing import Any, NamedTuple, Optional

import numpy as np
import pytest

import npzstream

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "tests", "names"))
import names as N  # noqa: E402

SEED = 20240607
CONTRACT = (npzstream.RejectedError, npzstream.PolicyError)
NO_OTHERS = {"allow_other_members": False}


def within(what, fn, *a, **kw):
    """fn(*a, **kw): its value, or the RejectedError/PolicyError it raised; any other exception fails."""
    try:
        return fn(*a, **kw)
    except CONTRACT as e:
        return e
    except Exception as e:  # noqa: BLE001 -- outside the contract
        pytest.fail("%s: %s: %s" % (what, type(e).__name__, e))


def shown_clean(what, *texts):
    for t in texts:
        assert not N.raw_hidden(t), "%s: raw %s in %r" % (what, N.raw_hidden(t), t[:300])


class Archive(NamedTuple):
    key: str
    path: str
    data: bytes
    truth: Any      # np.load's view, or None
    accepted: bool  # np.load's verdict and no stricter rule
    rule: Optional[str]


@pytest.fixture(scope="module")
def archives(tmp_path_factory):
    """An archive of one member for every member name."""
    d = tmp_path_factory.mktemp("names")
    out = []
    for i, key in enumerate(N.member_names(SEED)):
        data = N.member_archive(key)
        path = str(d / ("m%03d.npz" % i))
        with open(path, "wb") as f:
            f.write(data)
        truth = N.np_load(data)
        rule = N.strict_rule(key)
        out.append(Archive(key, path, data, truth, truth is not None and rule is None, rule))
    return out


async def _achunks(data):
    for k in range(0, len(data), 1000):
        yield data[k:k + 1000]


def aload_all(datas):
    """aload() of each (in one event loop): its value, or the RejectedError it raised."""
    async def each():
        out = []
        for d in datas:
            try:
                out.append(await npzstream.aload(_achunks(d)))
            except CONTRACT as e:
                out.append(e)
        return out
    return within("aload", asyncio.run, each())


def test_member_names(archives):
    for a in archives:
        what = "member %r" % a.key
        r = within(what + ": validate", npzstream.validate, a.data)
        assert isinstance(r, npzstream.Report) and r.ok == a.accepted, (what, r)
        shown_clean(what + ": repr(report)", repr(r), *(repr(m) for m in r.members))
        if a.accepted:
            assert [m.key for m in r.members] == [a.key] and r.members[0].name == a.key + ".npy", what
        elif a.rule:
            assert r.error.rule == a.rule and r.error.name == (a.key + ".npy").encode(), (what, r.error)
        got = within(what + ": load", npzstream.load, a.data)
        if a.accepted:
            assert isinstance(got, dict) and list(got) == list(a.truth) == [a.key], what
            assert np.array_equal(got[a.key], a.truth[a.key]), what
        else:
            assert isinstance(got, npzstream.RejectedError), (what, got)
            shown_clean(what + ": str(error)", str(got))
        got = within(what + ": open", npzstream.open, a.path)
        if a.accepted:
            assert list(got) == [a.key] and np.array_equal(got[a.key], a.truth[a.key]), what
            shown_clean(what + ": repr(Mapped)", repr(got))
        else:
            assert isinstance(got, npzstream.RejectedError), what
        v = npzstream.Validator()
        for k in range(0, len(a.data), 37):
            within(what + ": Validator.feed", v.feed, a.data[k:k + 37])
        r = within(what + ": Validator.finish", v.finish)
        assert r.ok == a.accepted, what
    for a, got in zip(archives, aload_all([a.data for a in archives])):
        assert (list(got) == [a.key]) if a.accepted else isinstance(got, npzstream.RejectedError), ("aload", a.key, got)


def test_member_names_policy(archives):
    """A policy that refuses every member: its detail quotes the key, on a character's end."""
    for a in archives:
        what = "member %r, policy" % a.key
        for how, call, arg in (("validate", lambda d: npzstream.validate(d, policy=NO_OTHERS).raise_for_error(), a.data),
                               ("load", lambda d: npzstream.load(d, policy=NO_OTHERS), a.data),
                               ("open", lambda p: npzstream.open(p, policy=NO_OTHERS), a.path)):
            e = within(what + ": " + how, call, arg)
            assert isinstance(e, npzstream.RejectedError), (what, how, e)
            shown_clean(what + ": str(error)", str(e), repr(e))
            if a.accepted:
                assert e.rule == "POLICY.members" and e.detail == N.in_words(a.key) + " is not a member the policy lists", \
                    (what, how, e.detail)


def test_scan(archives, tmp_path):
    pol = tmp_path / "no-others.json"
    pol.write_text(json.dumps(NO_OTHERS))
    paths = [a.path for a in archives]
    for policy in (None, str(pol)):
        reports = within("scan", lambda p: list(npzstream.scan(paths, workers=0, policy=p)), policy)
        assert isinstance(reports, list) and [r.path for r in reports] == paths
        for a, r in zip(archives, reports):
            assert r.ok == (a.accepted and policy is None), ("scan", a.key, r)
            shown_clean("scan %r" % a.key, repr(r))
            if a.accepted and policy:
                assert r.error.detail == N.in_words(a.key) + " is not a member the policy lists", (a.key, r.error)


def test_field_names(tmp_path):
    """A field name np.load gives back: exactly that string ('\\ud800' too), through every entry point."""
    names = N.field_names(SEED)
    datas = [N.npy_bytes(N.field_array(name)) for name in names]
    for i, (name, data, aloaded) in enumerate(zip(names, datas, aload_all(datas))):
        what = "field %r" % name
        truth = N.np_load(data)
        assert truth is not None, what
        path = str(tmp_path / ("f%03d.npy" % i))
        with open(path, "wb") as f:
            f.write(data)
        for how, got in (("load", within(what + ": load", npzstream.load, data)),
                         ("load(path)", within(what + ": load(path)", npzstream.load, path)), ("aload", aloaded),
                         ("open", within(what + ": open", lambda p: npzstream.open(p).array, path))):
            assert isinstance(got, np.ndarray) and got.dtype == truth.dtype and got.dtype.names == truth.dtype.names, \
                (what, how, got)
            assert np.array_equal(got, truth), (what, how)
        r = within(what + ": validate", npzstream.validate, data)
        assert r.ok and r.members[0].descr["names"] == list(truth.dtype.names), (what, r)
        shown_clean(what + ": repr(member)", repr(r.members[0]))
        v = npzstream.Validator()
        for k in range(0, len(data), 5):
            v.feed(data[k:k + 5])
        assert within(what + ": Validator", v.finish).ok, what


def test_policy_keys(tmp_path):
    """Keys of a policy from a dict and from a JSON file: compiled or PolicyError; a missing member's
    detail and a fault's path quote the key as the words say."""
    target = N.npz_bytes([("zz.npy", np.arange(3))])
    for i, key in enumerate(N.policy_keys(SEED)):
        what = "policy key %r" % key
        surrogate = any(0xD800 <= ord(c) < 0xE000 for c in key)
        f = tmp_path / ("p%03d.json" % i)
        f.write_text(json.dumps({"members": {key: {}}}))
        compiled = within(what + ": Policy.from_dict", npzstream.Policy.from_dict, {"members": {key: {}}})
        if isinstance(compiled, npzstream.PolicyError):
            assert surrogate, (what, compiled)
            shown_clean(what, str(compiled))
        for how, pol in (("dict", {"members": {key: {}}}), ("file", str(f)), ("Policy", compiled)):
            if isinstance(pol, npzstream.PolicyError):
                continue
            r = within(what + ": " + how, npzstream.validate, target, policy=pol)
            if surrogate:  # a policy's JSON has no lone surrogate
                assert isinstance(r, npzstream.PolicyError), (what, how, r)
                shown_clean(what, str(r))
                continue
            assert isinstance(r, npzstream.Report) and not r.ok and r.error.rule == "POLICY.required", (what, how, r)
            assert r.error.detail == N.in_words(key) + " is required by the policy and missing", (what, r.error.detail)
            shown_clean(what, repr(r), str(r.error))
        if surrogate:
            continue
        for how, pol in (("dict", {"members": {key: {"dtype": 5}}}), ("json", json.dumps({"members": {key: {"dtype": 5}}}))):
            if how == "json":
                f.write_text(pol, encoding="utf-8")
                pol = str(f)
            e = within(what + ": a fault, " + how, npzstream.validate, target, policy=pol)
            assert isinstance(e, npzstream.PolicyError), (what, e)
            assert e.path == "members.%s.dtype" % N.in_words(key, quote=False), (what, e.path)
            shown_clean(what, str(e), e.message)


def test_titles():
    """A field's title decodes as its name does: np.load's dtype, titles included."""
    for title in N.field_names(SEED, 20):
        name = "t" if title != "t" else "u"
        data = N.npy_bytes(np.zeros(2, dtype=[((title, name), "<f4")]))
        truth = N.np_load(data)
        got = within("title %r" % title, npzstream.load, data)
        assert isinstance(got, np.ndarray) and truth is not None and got.dtype == truth.dtype, (title, got)
        assert got.dtype.fields[name][2] == title, (title, got.dtype.fields)
