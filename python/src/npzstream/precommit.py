"""npzstream-check: the pre-commit hook (hook id npzstream-check, .pre-commit-hooks.yaml at the
repository root) and a command of its own: each FILE validated by npzstream against a policy.

    npzstream-check [--policy FILE] FILE...

Without --policy the files must pass SAFE_POLICY: the library's defaults and no blob that is a
pickle, a zip or a gzip stream (np.load hands such a member back as bytes, and whoever unpickles or
opens it runs what it holds); object arrays are refused by every policy.  With --policy the files
must pass that policy (a JSON file, as `npzstream check --policy FILE` reads it) instead.

One line a rejected file, as `npzstream check` prints it (`FILE: REJECTED: code at offset N (member
M): message [RULE]`, then its hint); nothing for a file that passes.  Exit status 0 when every file
passes, 1 when one is rejected, 2 when one cannot be read or the policy is malformed."""
from __future__ import annotations

import argparse
import sys
from typing import Any, Dict, Optional, Sequence

from ._errors import PolicyError, RejectedError
from ._scan import _policy_text, check_file

#: the policy of a check without --policy: no blob a loader would unpickle or open
SAFE_POLICY: Dict[str, Any] = {"allow_blobs": ["text", "binary", "empty"]}


def _line(path: str, e: RejectedError) -> str:
    member = "" if e.name is None else " (member %s)" % e.name.decode("utf-8", "replace")
    detail = "" if e.detail is None else ": " + e.detail
    hint = "" if e.hint is None else "\n  hint: " + e.hint
    return "%s: REJECTED: %s at offset %d%s: %s%s [%s]%s" % (path, e.code, e.offset, member, e.message, detail,
                                                             e.rule, hint)


def main(argv: Optional[Sequence[str]] = None) -> int:
    ap = argparse.ArgumentParser(prog="npzstream-check", description="Check .npy/.npz files against a policy "
                                 "(by default: no pickles, no nested archives).")
    ap.add_argument("--policy", metavar="FILE", help="a JSON policy file (default: npzstream.precommit.SAFE_POLICY)")
    ap.add_argument("files", nargs="*")
    a = ap.parse_args(argv)
    try:
        text = _policy_text(a.policy if a.policy is not None else SAFE_POLICY)
    except (PolicyError, OSError) as e:
        print("npzstream-check: %s" % e, file=sys.stderr)
        return 2
    status = 0
    for path in a.files:
        r = check_file(path, text)
        if r.ok:
            continue
        err = r.error
        assert err is not None
        print(_line(path, err), flush=True)
        status = max(status, 2 if err.code == "io" else 1)
    return status


if __name__ == "__main__":
    sys.exit(main())
