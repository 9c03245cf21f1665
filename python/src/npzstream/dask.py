"""Validated .npz/.npy readers for Dask: `read_npz` (dask arrays whose chunks are the files'
arrays, planned from their headers, each validated when it is computed) and `reports` (a bag of
one Report a file, for sweeps).

    pip install 'npzstream[dask]'        # dask[array] and fsspec; 'npzstream[s3]' for s3://

    import npzstream.dask
    images = npzstream.dask.read_npz("s3://bucket/shards/*.npz", "images",
                                     storage_options={"anon": False}, policy=policy)
    images.mean(axis=0).compute()        # every chunk validated as it is read

read_npz lays the graph out from the headers alone: for each file, range reads of its end
records, central directory, local headers and .npy headers (npzstream._plan; of a deflated
member, its first compressed bytes); no array data is read while the graph is made.  When a
chunk is computed its file is streamed through the library (np.load's verdict, the policy, the
limits; nothing is handed out before the END verdict), and its arrays are compared with the plan:
a header that changed since is an error naming the file (code "changed", rule "PLAN.changed").
A file that cannot be planned is streamed once through the validator while the graph is made,
so that its rejection is the library's: FileRejectedError, naming the file, with code and rule.

Progress: the chunks are ordinary tasks ("npzstream-read-..."): dask.diagnostics.ProgressBar
and the distributed dashboard show them.

Every worker needs npzstream (and the fsspec backend of the store)."""
from __future__ import annotations

import concurrent.futures
import functools
import importlib
import operator
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy

import npzstream

from . import _files, _plan
from ._files import FileRejectedError
from ._plan import FilePlan, PlanError

__all__ = ["read_npz", "reports", "plan", "FileRejectedError", "PlanError"]

INSTALL = "pip install 'npzstream[dask]'  (dask[array] and fsspec; 'npzstream[s3]' for s3://)"
#: files planned at once (each a few range reads: on an object store, requests in flight)
PLAN_THREADS = 16
COMBINE = ("concatenate", "stack")


def _need_dask() -> Any:
    """dask.array, with fsspec (imported by name: both are optional, and where they are absent
    the type checkers need not find them)."""
    try:
        importlib.import_module("fsspec")
        return importlib.import_module("dask.array")
    except ImportError as e:
        raise ImportError("npzstream.dask needs Dask and fsspec: %s (%s)" % (INSTALL, e)) from None


def _filesystem(paths: Any, storage_options: Optional[Dict[str, Any]]) -> Tuple[Any, List[str]]:
    """The fsspec filesystem of the paths (one for all: their scheme) and the paths, globs
    expanded."""
    fsspec = importlib.import_module("fsspec")
    items = [paths] if isinstance(paths, str) or hasattr(paths, "__fspath__") else list(paths)
    if not items:
        raise ValueError("npzstream.dask: no paths")
    first = str(items[0])
    schemes = {_files.split_url(str(p))[0] for p in items}
    if len(schemes) != 1:
        raise ValueError("npzstream.dask: the paths are on more than one filesystem: %s" % ", ".join(sorted(schemes)))
    fs, _ = fsspec.core.url_to_fs(first, **(storage_options or {}))
    urls = _files.expand(items, fs)
    if not urls:
        raise FileNotFoundError("npzstream.dask: no file matches %r" % (paths,))
    return fs, urls


def _verdict(fs: Any, url: str, policy: Optional[npzstream.Policy], limits: Dict[str, Any]) -> None:
    """The library's verdict on a file the planner could not read: FileRejectedError when it is
    rejected (or cannot be read: code "io"), nothing when it is accepted."""
    r = npzstream.check_file(url, None if policy is None else policy.to_json().encode("utf-8"),
                             limits={k: v for k, v in limits.items() if k != _files.MAX_BYTES}, opener=fs.open)
    if not r:
        assert r.error is not None
        raise FileRejectedError.of(url, r.error)


def _plan_one(fs: Any, url: str, keys: Optional[Sequence[str]], policy: Optional[npzstream.Policy],
              limits: Dict[str, Any]) -> FilePlan:
    try:
        # no read-ahead: only the ranges asked for are fetched ("none": fsspec's cache that fetches exactly them)
        with fs.open(url, "rb", cache_type="none") as f:
            return _plan.plan_file(url, f, int(f.size), keys, limits)
    except PlanError as e:
        _verdict(fs, url, policy, limits)
        raise PlanError("%s: the library accepts it, but its records could not be planned: %s" % (url, e)) from None
    except OSError as e:
        raise FileRejectedError(url, e.strerror or str(e), code="io", offset=0) from None


def plan(paths: Any, keys: Optional[Sequence[str]] = None, *, storage_options: Optional[Dict[str, Any]] = None,
         policy: Any = None, threads: int = PLAN_THREADS, **limits: Any) -> List[FilePlan]:
    """The plans of the files (globs expanded), in order, made PLAN_THREADS files at a time: what
    read_npz lays its chunks out from.  Each FilePlan has the arrays' headers and the byte ranges
    read to find them."""
    _need_dask()
    pol = _files.shippable_policy(policy)
    limits = _files.checked_limits(limits)
    fs, urls = _filesystem(paths, storage_options)
    return _plans(fs, urls, keys, pol, limits, threads)


def _plans(fs: Any, urls: List[str], keys: Optional[Sequence[str]], pol: Optional[npzstream.Policy],
           limits: Dict[str, Any], threads: int) -> List[FilePlan]:
    if len(urls) == 1 or threads <= 1:
        return [_plan_one(fs, u, keys, pol, limits) for u in urls]
    with concurrent.futures.ThreadPoolExecutor(max_workers=min(threads, len(urls))) as ex:
        return list(ex.map(lambda u: _plan_one(fs, u, keys, pol, limits), urls))


def _load(url: str, fs: Any, planned: Dict[Optional[str], Tuple[str, Tuple[int, ...]]],
          policy: Optional[npzstream.Policy], limits: Dict[str, Any]) -> Dict[Optional[str], numpy.ndarray]:
    """A chunk's task: the file streamed through the library (the END verdict before anything is
    returned), its arrays compared with the plan (dtype.str and shape by key; None: a .npy's)."""
    try:
        with fs.open(url, "rb") as f:
            loaded = npzstream.load(f, policy=policy, **limits)
    except npzstream.RejectedError as e:
        raise FileRejectedError.of(url, e) from None
    got: Dict[Optional[str], Any] = {}
    if isinstance(loaded, numpy.ndarray):
        got[None] = loaded
    else:
        got.update(loaded)
    out: Dict[Optional[str], numpy.ndarray] = {}
    for key, (dtype, shape) in planned.items():
        a: Any = got.get(key)
        have = (a.dtype.str, a.shape) if isinstance(a, numpy.ndarray) else None
        if have != (dtype, shape):
            what = "the array" if key is None else "member %r" % key
            raise FileRejectedError(url, "%s is %s now, the graph was planned for %s" % (
                what, "missing" if a is None else "%s %s" % have if have else "not an array", "%s %s" % (dtype, shape)),
                code="changed", offset=0, rule="PLAN.changed")
        out[key] = a
    return out


def _stack(d: Dict[Optional[str], numpy.ndarray], key: Optional[str]) -> numpy.ndarray:
    return d[key][numpy.newaxis]


def _common(plans: List[FilePlan], key: Optional[str], combine: str) -> Tuple[numpy.dtype, Tuple[int, ...]]:
    """The dtype and the shape every file must share for key (past the leading axis when
    concatenating); ValueError naming the first file that differs."""
    first = plans[0].arrays[key]
    dt = numpy.dtype(first.descr)
    for p in plans:
        h = p.arrays[key]
        what = "its array" if key is None else "member %r" % key
        if h.dtype != first.dtype or numpy.dtype(h.descr) != dt:
            raise ValueError("npzstream.dask: %s: %s is %s, %s's is %s"
                             % (p.path, what, h.dtype, plans[0].path, first.dtype))
        if combine == "concatenate":
            if not h.shape:
                raise ValueError("npzstream.dask: %s: %s is 0-d: nothing to concatenate (combine=\"stack\")"
                                 % (p.path, what))
            if h.shape[1:] != first.shape[1:]:
                raise ValueError("npzstream.dask: %s: %s has shape %s, %s's %s: they concatenate along the first axis only"
                                 % (p.path, what, h.shape, plans[0].path, first.shape))
        elif h.shape != first.shape:
            raise ValueError("npzstream.dask: %s: %s has shape %s, %s's %s: stacked arrays have one shape"
                             % (p.path, what, h.shape, plans[0].path, first.shape))
    return dt, first.shape


def _keys_of(plans: List[FilePlan], key: Optional[Union[str, Sequence[str]]]) -> List[Optional[str]]:
    if plans[0].format == "npy":
        if key is not None:
            raise ValueError("npzstream.dask: %s is a .npy: it has no keys (key=None)" % plans[0].path)
        keys: List[Optional[str]] = [None]
    elif key is None:
        keys = list(plans[0].arrays)
    else:
        keys = [key] if isinstance(key, str) else list(key)
    for p in plans:
        if (p.format == "npy") != (keys == [None]) or any(k not in p.arrays for k in keys):
            raise ValueError("npzstream.dask: %s holds %s, %s holds %s" % (
                p.path, "a .npy" if p.format == "npy" else "keys %s" % list(p.arrays),
                plans[0].path, "a .npy" if plans[0].format == "npy" else "keys %s" % keys))
    return keys


def read_npz(paths: Any, key: Optional[Union[str, Sequence[str]]] = None, *,
             storage_options: Optional[Dict[str, Any]] = None, policy: Any = None, combine: str = "concatenate",
             **limits: Any) -> Any:
    """A dask array of member `key` of every file (local paths or URLs of one fsspec filesystem,
    globs expanded), one chunk a file, concatenated along the first axis (combine="stack": a new
    first axis).  key=None: a dict key -> dask array of every array member (the files must hold
    the same keys), or for .npy files their array.  A list of keys: a dict of those.

    The chunks are planned from the headers alone (no array data read); each is validated when
    computed (policy, limits: load's; max_bytes caps what a task holds, by default 1 GiB: every
    array of its file, kept until the file's END verdict).  Raises FileRejectedError (naming the
    file, with code and rule) for a file rejected while the graph is made, ValueError when the
    files' dtypes or shapes do not line up, KeyError for a key a file has not."""
    da = _need_dask()
    dask = importlib.import_module("dask")
    HighLevelGraph = importlib.import_module("dask.highlevelgraph").HighLevelGraph
    if combine not in COMBINE:
        raise ValueError("combine must be one of %s" % ", ".join(COMBINE))
    pol = _files.shippable_policy(policy)
    limits = _files.checked_limits(limits)
    fs, urls = _filesystem(paths, storage_options)
    wanted = None if key is None else ([key] if isinstance(key, str) else list(key))
    plans = _plans(fs, urls, wanted, pol, limits, PLAN_THREADS)
    keys = _keys_of(plans, key)
    token = dask.base.tokenize(urls, [sorted((str(k), h) for k, h in p.arrays.items()) for p in plans],
                               None if pol is None else pol.to_json(), sorted(limits.items()), combine)
    load_name = "npzstream-read-" + token
    # what each task needs, bound in a partial: a literal to the scheduler (no tuple in it is taken for a task)
    load_layer = {(load_name, i): (functools.partial(_load, url, fs, {k: (p.arrays[k].dtype, p.arrays[k].shape)
                                                                     for k in keys}, pol, limits),)
                  for i, (url, p) in enumerate(zip(urls, plans))}
    out: Dict[Optional[str], Any] = {}
    layer: Dict[Any, Any]
    for k in keys:
        dt, shape = _common(plans, k, combine)
        name = "npzstream-%s-%s" % ("array" if k is None else k, token)
        rest = (0,) * (len(shape) - 1 if combine == "concatenate" else len(shape))
        if combine == "concatenate":
            chunks = (tuple(p.arrays[k].shape[0] for p in plans),) + tuple((d,) for d in shape[1:])
            layer = {(name, i) + rest: (operator.getitem, (load_name, i), k) for i in range(len(plans))}
        else:
            chunks = ((1,) * len(plans),) + tuple((d,) for d in shape)
            layer = {(name, i) + rest: (_stack, (load_name, i), k) for i in range(len(plans))}
        graph = HighLevelGraph({load_name: load_layer, name: layer}, {load_name: set(), name: {load_name}})
        out[k] = da.Array(graph, name, chunks, dtype=dt)
    if key is None and keys == [None] or isinstance(key, str):
        return out[keys[0]]
    return out


def reports(paths: Any, *, storage_options: Optional[Dict[str, Any]] = None, policy: Any = None, hash: bool = False,
            npartitions: Optional[int] = None, **limits: Any) -> Any:
    """A dask bag of one npzstream.Report a file (report.path set; a file that cannot be read is
    a report with error code "io"), in the input's order: for sweeps over many files.  The policy
    and the limits are checked here, before anything is sent (PolicyError, ValueError)."""
    _need_dask()
    bag = importlib.import_module("dask.bag")
    pol = _files.shippable_policy(policy)
    lim = _files.checked_limits(limits)
    lim.pop(_files.MAX_BYTES, None)  # validate keeps no data
    fs, urls = _filesystem(paths, storage_options)
    text = None if pol is None else pol.to_json().encode("utf-8")
    opener = None if _files.split_url(urls[0])[0] == "" else fs.open
    return bag.from_sequence(urls, npartitions=npartitions).map(
        npzstream.check_file, policy_text=text, hash=hash, limits=lim, opener=opener)

