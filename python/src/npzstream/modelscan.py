"""A modelscan scanner (modelscan 0.8.8, `pip install modelscan`) that judges .npy and .npz files
with npzstream instead of modelscan's NumPy scanner, and hands every pickle they carry to
modelscan's own pickle analysis, so the dangerous global is named:

    modelscan --settings-file modelscan-settings.toml -p models/    # the file from:
    python -m npzstream.modelscan > modelscan-settings.toml

    from modelscan.modelscan import ModelScan
    report = ModelScan(settings=npzstream.modelscan.settings()).scan("models/")

It is configured through modelscan's settings, as its own scanners are: settings() is modelscan's
defaults with "modelscan.scanners.NumpyUnsafeOpScan" disabled (it reads headers with private NumPy
functions that NumPy 2 no longer has: every .npy member is then an error and the report says "No
issues found") and "npzstream.modelscan.NpzstreamScan" enabled for ".npy" and ".npz".  The scanner's
own keys, beside "enabled" and "supported_extensions": "max_pickle_bytes" (the largest pickle
handed on; larger ones are issues), "depth" (how deep zip and gzip members are looked into) and
"policy" (the path of an npzstream policy file the files must also pass).  modelscan opens every
zip itself and hands each member on ("archive.npz:member"): the scanner answers for every member
of an archive it judges whole (with no issue of its own: the archive's issues name the member), but
modelscan's pickle scanner still reads a `.pkl` member, so its pickle may be reported twice, and
modelscan's zip reader still says what it cannot open (NESTED_ZIP, BAD_ZIP).

settings_toml() (and `python -m npzstream.modelscan`) writes the same as the file `modelscan
--settings-file` reads, with FormatViaExtension in place of modelscan's extension middleware, whose
settings cannot be written to a file (modelscan 0.8.8's own `create-settings-file` fails: "Keys
must be strings").

What it reports for each file (npzstream.pickles.find: the parse is npzstream's, nothing is loaded
or unpickled):
- each embedded pickle (a pickle blob, an object array's data, a raw pickle) through modelscan's
  pickle analysis: its unsafe globals as modelscan's own issues (`posix.system`: CRITICAL), the
  source named "file.npz:member";
- each object array as an issue of its own (HIGH, rule PICKLE.object), whatever its pickle holds:
  np.load refuses it unless told to run pickles;
- each other rejection (truncated, CRC mismatch, a policy's rule, ...) and each part that could
  not be inspected (over a bound, unreadable) as an issue (MEDIUM and HIGH): fail-closed, a file
  npzstream cannot vouch for is never "No issues found";
- a pickle modelscan's analysis cannot parse as an issue (HIGH) rather than an error (modelscan
  drops a file's issues when its scanner reports errors)."""
from __future__ import annotations

import copy
import io
import os
import sys
from pathlib import Path
from typing import Any, Callable, Dict, List, Optional

from modelscan.issues import Issue, IssueCode, IssueDetails, IssueSeverity
from modelscan.middlewares.middleware import MiddlewareBase
from modelscan.model import Model
from modelscan.scanners.scan import ScanBase, ScanResults
from modelscan.settings import DEFAULT_SETTINGS, SupportedModelFormats
from modelscan.tools.picklescanner import scan_pickle_bytes

from . import pickles as _pickles

#: the scanner's name in modelscan's settings
NAME = "npzstream.modelscan.NpzstreamScan"
#: the extension middleware a settings file can hold (settings_toml)
FORMATS_NAME = "npzstream.modelscan.FormatViaExtension"
_NUMPY_SCANNER = "modelscan.scanners.NumpyUnsafeOpScan"
_EXTENSION_MIDDLEWARE = "modelscan.middlewares.FormatViaExtensionMiddleware"
_EXTENSIONS = [".npy", ".npz"]


class NpzstreamIssueDetails(IssueDetails):
    """An issue npzstream finds (an object array, a rejection, a part not inspected), with the
    attributes modelscan's reports read (module "npzstream", operator: the rule or code) and the
    rule, the byte offset and the member."""

    def __init__(self, rule: str, message: str, offset: int, member: str, source: str,
                 severity: IssueSeverity, scanner: str = "") -> None:
        super().__init__(scanner)
        self.module, self.operator = "npzstream", rule
        self.rule, self.message, self.offset, self.member = rule, message, offset, member
        self.source, self.severity = source, severity

    def output_lines(self) -> List[str]:
        return ["Description: npzstream: %s [%s] at byte %d%s" % (self.message, self.rule, self.offset,
                                                                  " (member %s)" % self.member if self.member else ""),
                "Source: %s" % self.source]

    def output_json(self) -> Dict[str, str]:
        return {"description": "npzstream: %s" % self.message, "operator": self.rule, "module": "npzstream",
                "rule": self.rule, "offset": str(self.offset), "member": self.member, "source": str(self.source),
                "scanner": self.scanner, "severity": self.severity.name}


def _issue(rule: str, message: str, offset: int, member: str, source: str, severity: IssueSeverity) -> Issue:
    return Issue(code=IssueCode.UNSAFE_OPERATOR, severity=severity,
                 details=NpzstreamIssueDetails(rule, message, offset, member, source, severity))


class NpzstreamScan(ScanBase):
    """modelscan's scanner of .npy and .npz files by npzstream (the module's docstring)."""

    @staticmethod
    def name() -> str:
        return "npzstream"

    @staticmethod
    def full_name() -> str:
        return NAME

    def _own(self) -> Dict[str, Any]:
        own: Dict[str, Any] = self._settings.get("scanners", {}).get(NAME, {})
        return own

    def scan(self, model: Model) -> Optional[ScanResults]:
        own = self._own()
        source = model.get_source()
        extensions = own.get("supported_extensions", _EXTENSIONS)
        if _member_of_judged(str(source), extensions):
            return self.label_results(ScanResults([], [], []))  # judged with its archive, by npzstream
        if Path(source).suffix.lower() not in extensions:
            return None
        found = _pickles.find(model.get_stream(), max_bytes=int(own.get("max_pickle_bytes", _pickles.DEFAULT_MAX_BYTES)),
                              depth=int(own.get("depth", _pickles.DEFAULT_DEPTH)), policy=own.get("policy"))
        issues: List[Issue] = []
        for p in found.pickles:
            where = "%s:%s" % (source, p.where) if p.where else str(source)
            if p.kind == "object":
                issues.append(_issue("PICKLE.object", "an object array: its data is a pickle np.load(allow_pickle=True) "
                                     "runs", p.offset, p.where, where, IssueSeverity.HIGH))
            r = scan_pickle_bytes(Model(where, io.BytesIO(p.data)), self._settings, self.name())
            issues.extend(r.issues)
            for e in r.errors:  # modelscan drops a file's issues when there are errors: each is an issue
                issues.append(_issue("PICKLE.unparsed", "a pickle modelscan could not parse: %s" % e.message,
                                     p.offset, p.where, where, IssueSeverity.HIGH))
        for f in found.findings:
            issues.append(_issue(f.rule or f.code, f.message, f.offset, f.where, str(source),
                                 IssueSeverity.HIGH if f.code == "not_inspected" else IssueSeverity.MEDIUM))
        return self.label_results(ScanResults(issues, [], []))


class FormatViaExtension(MiddlewareBase):
    """modelscan's extension middleware with its formats named as a settings file can hold them:
    {"formats": {"NUMPY": [".npy"], "PICKLE": [".pkl", ...]}}, the names of SupportedModelFormats."""

    def __call__(self, model: Model, call_next: Callable[[Model], None]) -> None:
        ext = model.get_source().suffix
        formats = [getattr(SupportedModelFormats, name) for name, exts in self._settings.get("formats", {}).items()
                   if ext in exts and hasattr(SupportedModelFormats, name)]
        if formats:
            model.set_context("formats", list(model.get_context("formats") or []) + formats)
        call_next(model)


def _member_of_judged(source: str, extensions: List[str]) -> bool:
    """Whether source names a member of an archive this scanner judges whole: modelscan opens every
    zip itself and hands each member on as "archive.npz:member" (whatever its settings say)."""
    at = source.find(":")
    while at > 0:
        if Path(source[:at]).suffix.lower() in extensions and os.path.isfile(source[:at]):
            return True
        at = source.find(":", at + 1)
    return False


def settings(base: Optional[Dict[str, Any]] = None, **own: Any) -> Dict[str, Any]:
    """modelscan settings (a copy of base, else of modelscan's defaults) with NpzstreamScan in place
    of NumpyUnsafeOpScan; own: the scanner's keys
    (max_pickle_bytes, depth, policy)."""
    s = copy.deepcopy(DEFAULT_SETTINGS if base is None else base)
    scanners = s.setdefault("scanners", {})
    if _NUMPY_SCANNER in scanners:
        scanners[_NUMPY_SCANNER]["enabled"] = False
    scanners[NAME] = dict({"enabled": True, "supported_extensions": list(_EXTENSIONS)}, **own)
    return s


def settings_toml(base: Optional[Dict[str, Any]] = None, **own: Any) -> str:
    """settings() as the TOML file `modelscan --settings-file` reads."""
    import tomlkit
    s = settings(base, **own)
    # modelscan's defaults key the extension middleware's formats by objects (Property), which a
    # file cannot hold: FormatViaExtension reads them by name
    mws = s.get("middlewares", {})
    mw = mws.pop(_EXTENSION_MIDDLEWARE, None)
    if mw is not None:
        mws[FORMATS_NAME] = {"formats": {getattr(k, "name", k): v for k, v in mw.get("formats", {}).items()}}
    return "# modelscan settings: npzstream judges .npy and .npz files (python -m npzstream.modelscan)\n\n" + \
        tomlkit.dumps(s)


if __name__ == "__main__":
    sys.stdout.write(settings_toml())
