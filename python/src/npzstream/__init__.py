"""npzstream: load NumPy .npy and .npz files from untrusted streams.

    import npzstream
    arrays = npzstream.load(request_body)            # bytes, a file, a pipe, a socket, chunks
    arrays = await npzstream.aload(request.content)  # an async stream (aiohttp, Starlette, ...)

`load` returns what ``np.load(f, allow_pickle=False)`` returns (an ndarray for a .npy; for an
.npz a dict of key -> ndarray, or bytes for a member that is not a .npy), made from the very bytes
the parser validated: it never calls np.load, and it returns only after the END verdict (for an
.npz, after the central directory at the very end was checked against everything streamed).
Bad input raises `RejectedError` (a ValueError) with the code, offset, member, rule and a hint.

Every entry point takes ``policy=``: what you accept (the members, their dtypes, shapes, values
and hashes), as a dict, a `Policy`, or the path of a JSON file; the C library enforces it while
the bytes arrive, with the same verdicts as ``npzstream check --policy FILE``:

    report = npzstream.validate(upload, policy={"members": {"w": {"dtype": ["<f4"]}},
                                               "allow_other_members": False})
    if report:            # a Report is true only when the input was accepted
        store(upload)

The defaults are one set for every entry point and the command line (`DEFAULT_LIMITS`, from the
library): at most 1 GiB of array data in all, so a 2 MB archive that inflates to 2 GiB is refused
at the header that declares it.
"""
# One module a concern, re-exported here (a public name is npzstream.NAME, whatever module holds it):
#   _errors     RejectedError, PolicyError, PolicyWarning (the extension imports them at its init)
#   _limits     the library's limits and what this build has; the checks of limit keywords
#   _regular    regular files (a policy file, open()'s and scan()'s files): never a FIFO or a device
#   _policy     Policy, MemberPolicy, the policy text (dict -> JSON) and the compile cache
#   _sources    the bytes of any source, in pieces; feeding from async code (heavy work on a thread)
#   _budget     Budget: one memory budget for the calls of a process
#   _arrays     a member's key and array, from the extension's member dict
#   _load       load, aload, Loader            _validate  validate, avalidate, Validator, Report, Member
#   _mapped     open, Mapped                   _spool     spool, Spool
#   _scan       scan, check_file               _npzstream the extension over the C library (ext/)
#   references  refs (kerchunk references)     ray, dask  the engines' readers (imported by their users)
#   starlette, aiohttp  upload helpers for those frameworks (imported by their users), over _server
from ._budget import Budget
from ._errors import Limit, PolicyError, PolicyWarning, RejectedError
from ._limits import DEFAULT_LIMITS, DEFAULT_MAX_BYTES, FAST_INFLATE, LIMITS, SHA256, library_version
from ._load import DIRECT_PIECE as DIRECT_PIECE, Loaded as Loaded, Loader, aload, load
from ._mapped import POPULATE_MAX as POPULATE_MAX, Mapped, open
from ._policy import MemberPolicy, Policy, PolicyLike as PolicyLike
from ._scan import check_file as check_file, scan
from ._server import UploadError, check_name, http_response
from ._sources import READ_SIZE as READ_SIZE, Source as Source
from ._spool import Spool, spool
from ._validate import Member, Report, Validator, avalidate, validate
from .references import refs as refs

__all__ = ["load", "aload", "validate", "avalidate", "open", "Mapped", "spool", "Spool", "scan",
           "Loader", "Validator", "Report", "Member", "RejectedError", "Limit", "Budget",
           "UploadError", "check_name", "http_response",
           "Policy", "MemberPolicy", "PolicyError", "PolicyWarning", "DEFAULT_LIMITS", "DEFAULT_MAX_BYTES", "LIMITS",
           "FAST_INFLATE", "SHA256", "library_version", "__version__"]

#: The version of the libnpzstream compiled into this module (the package's version too).
__version__: str = library_version()
