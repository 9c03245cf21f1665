"""The package as modules: every public name where it was (npzstream.NAME), the exceptions
defined in Python (npzstream._errors) and raised by the extension, and the extension's state
kept per module object (multi-phase init), not in globals."""
import gc
import importlib.util
import inspect
import io
import pickle
import pkgutil
import subprocess
import sys
import typing
import weakref

import numpy as np
import pytest

import npzstream
from npzstream import _npzstream

# every public name of npzstream when it was one file (0.7.0): each one is still npzstream.NAME
PUBLIC = ("DEFAULT_LIMITS", "DEFAULT_MAX_BYTES", "DIRECT_PIECE", "FAST_INFLATE", "LIMITS", "Loaded", "Loader", "Mapped",
          "Member", "MemberPolicy", "POPULATE_MAX", "Policy", "PolicyError", "PolicyLike", "PolicyWarning",
          "READ_SIZE", "RejectedError", "Report", "SHA256", "Source", "Spool", "Validator", "aload", "avalidate",
          "check_file", "library_version", "load", "open", "scan", "spool", "validate", "__version__")
ALL = ["load", "aload", "validate", "avalidate", "open", "Mapped", "spool", "Spool", "scan", "Loader", "Validator",
       "Report", "Member", "RejectedError", "Limit", "Budget", "UploadError", "check_name", "http_response",
       "Policy", "MemberPolicy", "PolicyError", "PolicyWarning", "DEFAULT_LIMITS",
       "DEFAULT_MAX_BYTES", "LIMITS", "FAST_INFLATE", "SHA256", "library_version", "__version__"]


def savez(**arrays):
    b = io.BytesIO()
    np.savez(b, **arrays)
    return b.getvalue()


def test_version_is_the_library_s():
    """One version: the package's metadata (setup.py reads NPZS_VERSION), npzstream.__version__ (from
    npzs_version(), NPZS_VERSION_NUM) and, in a checkout, include/npzstream.h's NPZS_VERSION."""
    import importlib.metadata
    import os
    import re
    assert re.fullmatch(r"\d+\.\d+\.\d+", npzstream.__version__), npzstream.__version__
    assert importlib.metadata.version("npzstream") == npzstream.__version__ == npzstream.library_version()
    header = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "include", "npzstream.h")
    if os.path.exists(header):  # (an installed copy of the tests has no header beside it)
        m = re.search(r'#define NPZS_VERSION "([^"]+)"', open(header).read())
        assert m and m.group(1) == npzstream.__version__, (m and m.group(1), npzstream.__version__)


def test_every_public_name_is_where_it_was():
    missing = [n for n in PUBLIC if not hasattr(npzstream, n)]
    assert not missing
    assert npzstream.__all__ == ALL
    ns = {}
    exec("from npzstream import *", ns)
    assert set(ns) - {"__builtins__"} == set(ALL)
    # no module of the package is named as a public name: npzstream.load is load, never a module
    # that `import npzstream.load` or a dotted mock.patch target would reach instead
    modules = {m.name for m in pkgutil.iter_modules(npzstream.__path__)}
    assert "_policy" in modules and "_load" in modules and not modules & set(PUBLIC)
    for n in PUBLIC:
        assert not inspect.ismodule(getattr(npzstream, n)), n


def test_module_names_and_type_hints():
    """A public class or function names a module that holds it (pickling by reference, tracebacks,
    documentation tools); the exceptions are npzstream's, as they are caught and printed.  The
    annotations of each resolve in its module (typing.get_type_hints: pydantic, FastAPI)."""
    for n in PUBLIC:
        obj = getattr(npzstream, n)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        assert getattr(sys.modules[obj.__module__], obj.__qualname__) is obj, n
        assert obj.__module__ == "npzstream" or obj.__module__.startswith("npzstream._"), (n, obj.__module__)
        typing.get_type_hints(obj)
        for attr in vars(obj).values() if inspect.isclass(obj) else ():
            if inspect.isfunction(attr):
                typing.get_type_hints(attr)
    for cls in (npzstream.RejectedError, npzstream.PolicyError, npzstream.PolicyWarning):
        assert cls.__module__ == "npzstream"
    # the aliases hold no forward reference (it would resolve only in some modules' globals)
    for alias in (npzstream.Source, npzstream.PolicyLike, npzstream.Loaded):
        assert not [a for a in typing.get_args(alias) if isinstance(a, typing.ForwardRef)], alias


def test_the_extension_raises_the_exceptions_of_errors():
    assert npzstream._errors.RejectedError is npzstream.RejectedError
    assert not hasattr(_npzstream, "_set_rejected") and not hasattr(_npzstream, "_set_policy_error")
    s = _npzstream.Stream()
    with pytest.raises(npzstream.RejectedError) as e:
        s.feed(b"not an array file")
        s.finish()
    assert type(e.value) is npzstream.RejectedError and e.value.code == "bad_magic" and e.value.offset == 0
    with pytest.raises(npzstream.PolicyError) as p:
        _npzstream.Policy(b'{"members": 3}')
    assert type(p.value) is npzstream.PolicyError and p.value.path == "members" and p.value.line == 1


def load_extension_again():
    """A second module object of the extension, initialised from its file (as a subinterpreter
    or a re-import gets one)."""
    spec = importlib.util.find_spec("npzstream._npzstream")
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m


def test_the_extension_keeps_its_state_per_module():
    m = load_extension_again()
    assert m is not _npzstream
    assert m.Stream is not _npzstream.Stream and m.Policy is not _npzstream.Policy and m.Map is not _npzstream.Map
    # its own types, and the package's exceptions
    s = m.Stream(None, None, True, 1 << 30, 1, m.Policy(b'{"members": {"w": {"dtype": ["<f4"]}}}'))
    with pytest.raises(npzstream.RejectedError) as e:
        s.feed(savez(w=np.ones(3, "<f8")))
    assert e.value.rule == "POLICY.dtype"
    with pytest.raises(npzstream.PolicyError):
        m.Policy(b"{")
    with pytest.raises(TypeError, match="compiled"):  # a policy is the type of its own module object
        m.Stream(None, None, False, 1, 1, _npzstream.Policy(b"{}"))
    s = m.Stream(None, None, True, 1 << 30, 2)  # with a worker thread: the arrays come as its Blocks
    s.feed(savez(a=np.arange(100000.0)))
    s.finish()
    assert [d["index"] for d in s.members] == [0]
    types = [weakref.ref(t) for t in (m.Stream, m.Policy, m.Map)]
    del m, s
    gc.collect()
    assert [t() for t in types] == [None] * 3  # gone with their module object (its state traversed, cleared)


def test_exceptions_pickle_to_another_process():
    e = npzstream.RejectedError("m", code="policy", offset=7, member=1, name=b"w.npy", rule="POLICY.dtype",
                                content_offset=3, detail="d", hint="h")
    p = npzstream.PolicyError("bad", path="members.w", line=2, column=5, offset=11, source="p.json")
    code = ("import pickle, sys\n"
            "for x in pickle.loads(sys.stdin.buffer.read()):\n"
            "    print(type(x).__module__, type(x).__name__, sorted(vars(x).items()))\n")
    out = subprocess.run([sys.executable, "-c", code], input=pickle.dumps([e, p]), capture_output=True,
                         timeout=60).stdout.decode().splitlines()
    assert out == ["npzstream %s %s" % (type(x).__name__, sorted(vars(x).items())) for x in (e, p)]


def test_a_loader_feeds_the_stream_itself():
    """Without a budget, Loader.feed is the extension's method (no Python frame a chunk); with
    one, the Loader's own (it gives the budget back when the input is rejected)."""
    assert not inspect.isbuiltin(npzstream.Loader(budget=npzstream.Budget("1Mi")).feed)
    ld = npzstream.Loader()
    assert inspect.isbuiltin(ld.feed) and ld.feed.__self__ is ld._s
    for b in savez(w=np.arange(5)):
        ld.feed(bytes([b]))
    assert ld.finish()["w"].tolist() == [0, 1, 2, 3, 4]
