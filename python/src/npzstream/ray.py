"""A validated .npz/.npy reader for Ray Data: `read_npz`, a file-based datasource of Ray Data's
own (ray.data.Datasource: FileBasedDatasource) over local paths and any pyarrow or fsspec
filesystem (S3, GCS, ...).

    pip install 'npzstream[ray]'         # ray[data] (pyarrow); s3fs or pyarrow's S3 for s3://

    import npzstream.ray
    ds = npzstream.ray.read_npz("s3://bucket/shards/", policy={"members": {
            "images": {"dtype": ["<f4"], "shape": ["N", 28, 28]},
            "labels": {"dtype": ["<i8"], "shape": ["N"]}}, "allow_other_members": False},
        on_error="skip", rejects="rejects.jsonl")
    for batch in ds.iter_batches(batch_size=256): ...   # {"images": (256, 28, 28), "labels": (256,)}

Each file is streamed through the parser as Ray reads it (the sequential stream Ray opens: no
whole-object copy, no seek; a stored array's data read straight into the array), with the policy
and the limits, and its rows are handed to Ray only after the verdict: for an .npz the END event,
once the central directory was checked against everything streamed.  So a read task holds one
file's arrays until that file's END: at most max_bytes (a limit like the others, 1 GiB unless
said otherwise: a header declaring more is a rejection before anything is allocated).

Rows are shaped as read_numpy and read_parquet shape them: one row a position along the arrays'
first axis, a column a key (a tensor column for arrays of two dimensions or more; a .npy's
column is "data", as read_numpy names it), plus "path" with include_paths=True.  The arrays of a
file must share their first axis (a policy's shared dimension, "N" above, says so per file);
rows="file" makes one row a file instead (each key's whole array in its cell).

A rejected file: on_error="raise" (the default) fails the read task with FileRejectedError (the
object's URL, the code and the rule); on_error="skip" leaves it out and records it: rejects= is
a JSON Lines file on the machine that called read_npz (appended to, one object a file: path,
code, rule, offset, member, name, message, detail), or a callable given that object.  Both are
served by one small actor on the caller's node, one record at a time (a callable runs there, not
in the calling process).  A file whose arrays cannot be rows (RowsError: a 0-d array, a member
that is not a .npy, first axes that differ) is raised or skipped the same way, with code "rows".

Progress is Ray Data's: the read operator ("ReadNPZ") has its progress bar."""
from __future__ import annotations

import importlib
import json
import logging
import os
from typing import Any, Callable, Dict, Iterator, Optional, Sequence, Union, cast

import numpy

import npzstream

from . import _files
from ._files import FileRejectedError

__all__ = ["read_npz", "FileRejectedError", "RowsError"]

INSTALL = "pip install 'npzstream[ray]'  (ray[data] and pyarrow)"
ON_ERROR = ("raise", "skip")
ROWS = ("leading", "file")
#: the column of a .npy's array, as ray.data.read_numpy names it
NPY_COLUMN = "data"
logger = logging.getLogger(__name__)


class RowsError(ValueError):
    """A file's arrays cannot be made rows (a 0-d array, a member that is not a .npy, first axes
    that differ): path names it; code is "rows"."""
    code = "rows"

    def __init__(self, path: str, message: str) -> None:
        super().__init__("%s: %s" % (path, message))
        self.path = path
        self.message = message

    def __reduce__(self):
        return (RowsError, (self.path, self.message))


def _record(e: Union[FileRejectedError, RowsError]) -> Dict[str, Any]:
    if isinstance(e, FileRejectedError):
        return _files.record(e.path, e)
    return {"path": e.path, "code": e.code, "rule": None, "offset": None, "member": None, "name": None,
            "message": e.message, "detail": None}


class _Rejects:
    """The recorder of skipped files (an actor on the caller's node): appends a JSON line to a
    file, or calls a function, one record at a time."""

    def __init__(self, target: Union[str, Callable[[Dict[str, Any]], Any]]) -> None:
        self.target = target

    def record(self, rec: Dict[str, Any]) -> None:
        if callable(self.target):
            self.target(rec)
            return
        with open(self.target, "a", encoding="utf-8") as f:
            f.write(json.dumps(rec) + "\n")


def _need_ray() -> Any:
    """Ray, with Ray Data (imported by name: Ray is optional, and where it is absent the type
    checkers need not find it)."""
    try:
        ray = importlib.import_module("ray")
        importlib.import_module("ray.data")
    except ImportError as e:
        raise ImportError("npzstream.ray needs Ray Data: %s (%s)" % (INSTALL, e)) from None
    return ray


def _rows(loaded: Any, url: str, rows: str) -> Dict[str, numpy.ndarray]:
    """The batch (column -> array, rows along the first axis) of a file's arrays."""
    arrays = {NPY_COLUMN: loaded} if isinstance(loaded, numpy.ndarray) else loaded
    lengths = {}
    for k, a in arrays.items():
        if not isinstance(a, numpy.ndarray):
            raise RowsError(url, "member %r is not a .npy array (np.load gives its bytes)" % k)
        if rows == "leading":
            if not a.ndim:
                raise RowsError(url, "%r is a 0-d array: it has no rows (rows=\"file\": one row a file)" % k)
            lengths[k] = a.shape[0]
    if len(set(lengths.values())) > 1:
        raise RowsError(url, "the arrays' first axes differ (%s): rows are positions along one first axis "
                             "(rows=\"file\": one row a file)" % ", ".join("%s %d" % kv for kv in lengths.items()))
    if rows == "file":
        return {k: a[numpy.newaxis] for k, a in arrays.items()}
    return arrays


_DATASOURCE: Any = None


def __getattr__(name: str) -> Any:
    """npzstream.ray.NpzDatasource: the datasource class, made on first use (Ray is imported
    then, not with npzstream); pickles refer to it by this name."""
    if name == "NpzDatasource":
        return _datasource()
    raise AttributeError("module %r has no attribute %r" % (__name__, name))


class _NpzReading:
    """What NpzDatasource adds to Ray Data's FileBasedDatasource (its other base, known only
    once Ray is imported): each file validated by npzstream as it is streamed."""

    def __init__(self, paths: Any, *, policy: Optional[npzstream.Policy], limits: Dict[str, Any], on_error: str,
                 rejects: Any, rows: str, scheme: str, **kw: Any) -> None:
        cast(Any, super()).__init__(paths, **kw)  # FileBasedDatasource's
        self._npz_policy = policy
        self._npz_limits = limits
        self._npz_on_error = on_error
        self._npz_rejects = rejects
        self._npz_rows = rows
        self._npz_scheme = scheme

    def get_name(self) -> str:
        return "NPZ"

    def _read_stream(self, f: Any, path: str) -> Iterator[Any]:
        url = path if "://" in path else self._npz_scheme + path
        try:
            try:
                loaded = npzstream.load(f, policy=self._npz_policy, **self._npz_limits)
            except npzstream.RejectedError as e:
                raise FileRejectedError.of(url, e) from None
            batch = _rows(loaded, url, self._npz_rows)
        except (FileRejectedError, RowsError) as e:
            if self._npz_on_error == "raise":
                raise
            if self._npz_rejects is None:
                logger.warning("npzstream.ray: skipped %s", e)
            else:
                _need_ray().get(self._npz_rejects.record.remote(_record(e)))
            return
        if batch:  # the rows, only now: after the file's verdict
            yield importlib.import_module("ray.data.block").BlockAccessor.batch_to_block(batch)


def _datasource() -> Any:
    global _DATASOURCE
    if _DATASOURCE is None:
        _need_ray()
        base: type = importlib.import_module("ray.data.datasource").FileBasedDatasource
        _DATASOURCE = type("NpzDatasource", (_NpzReading, base), {
            "__module__": __name__, "__doc__": ".npz and .npy files, each validated by npzstream as it is streamed.",
            "_FILE_EXTENSIONS": ["npz", "npy"]})
    return _DATASOURCE


def _recorder(ray: Any, rejects: Any) -> Any:
    """The actor that records skipped files, on this node (where a rejects path is meant)."""
    if rejects is None:
        return None
    if isinstance(rejects, (str, os.PathLike)):
        target: Any = os.path.abspath(os.fspath(rejects))
        with open(target, "a", encoding="utf-8"):  # a path that cannot be written fails here
            pass
    elif callable(rejects):
        target = rejects
    else:
        raise TypeError("rejects must be the path of a JSON Lines file or a callable, not %s" % type(rejects).__name__)
    NodeAffinitySchedulingStrategy = importlib.import_module("ray.util.scheduling_strategies").NodeAffinitySchedulingStrategy
    if not ray.is_initialized():
        ray.init()
    here = NodeAffinitySchedulingStrategy(ray.get_runtime_context().get_node_id(), soft=False)
    return ray.remote(num_cpus=0)(_Rejects).options(scheduling_strategy=here).remote(target)


def read_npz(paths: Union[str, Sequence[str]], *, filesystem: Any = None, policy: Any = None, on_error: str = "raise",
             rejects: Any = None, include_paths: bool = False, file_extensions: Optional[Sequence[str]] = ("npz", "npy"),
             rows: str = "leading", override_num_blocks: Optional[int] = None, concurrency: Optional[int] = None,
             **limits: Any) -> Any:
    """A ray.data.Dataset of the .npz and .npy files at paths (files, directories, globs; local
    or URLs: s3://, gs://, ...; filesystem: a pyarrow or fsspec filesystem, as read_numpy takes),
    every file validated by npzstream as it is streamed (policy=, and the limits: load's keywords,
    max_bytes included).  Columns: an .npz's keys (a .npy's "data"), rows along the first axis
    (rows="file": one row a file).  on_error="raise" fails on the first rejected file
    (FileRejectedError: URL, code, rule); "skip" leaves it out and records it in rejects (a
    JSON Lines path on this machine, or a callable), or logs it when rejects is None.
    file_extensions: the files read (as read_numpy's: npz and npy; None reads every file)."""
    ray = _need_ray()
    if on_error not in ON_ERROR:
        raise ValueError("on_error must be one of %s" % ", ".join(ON_ERROR))
    if rejects is not None and on_error != "skip":
        raise ValueError("rejects= records skipped files: it goes with on_error=\"skip\"")
    if rows not in ROWS:
        raise ValueError("rows must be one of %s" % ", ".join(ROWS))
    pol = _files.shippable_policy(policy)
    limits = _files.checked_limits(limits)
    first = paths if isinstance(paths, str) else next(iter(paths), "")
    scheme, _ = _files.split_url(str(first))
    source = _datasource()(paths, policy=pol, limits=limits, on_error=on_error, rejects=_recorder(ray, rejects),
                           rows=rows, scheme=scheme, filesystem=filesystem, include_paths=include_paths,
                           file_extensions=None if file_extensions is None else list(file_extensions))
    return ray.data.read_datasource(source, override_num_blocks=override_num_blocks, concurrency=concurrency)
