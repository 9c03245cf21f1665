"""npzstream.py -- validate NumPy .npy/.npz bytes as they arrive, with libnpzstream via ctypes.

Standard library only, no build step: the module loads the shared library from
$NPZSTREAM_LIB, else ../build/libnpzstream.so next to this file (a source checkout), else
the installed libnpzstream.so.0 (the dynamic loader's path, LD_LIBRARY_PATH included).

    import npzstream
    v = npzstream.Validator(max_total_bytes=256 << 20)
    for chunk in request_body_chunks:          # any sizes, 0 bytes included
        if not v.feed(chunk):                  # False: rejected already, stop reading
            break
    verdict = v.finish()                       # the END event (or the error) decides
    if verdict.ok:
        arrays = np.load(io.BytesIO(body), allow_pickle=False)
    else:
        print(verdict.code, verdict.offset, verdict.member, verdict.message)

Members reported before finish() are provisional: an .npz is valid only once its central
directory, at the very end, was checked against everything streamed before.

Command line: python3 npzstream.py FILE [CHUNK]   prints the verdict, exit 0/1.
"""
import ctypes
import ctypes.util
import os
import sys

__all__ = ["Validator", "Verdict", "Member", "NpzstreamError", "load_library", "validate"]

NEED_INPUT, EVENT, DONE = 0, 1, 2
EV_MEMBER_BEGIN, EV_HEADER, EV_DATA, EV_BLOB, EV_MEMBER_END, EV_END = 1, 2, 3, 4, 5, 6
KIND_ARRAY, KIND_BLOB = 1, 2
E_NOMEM = -19


class NpzsLimits(ctypes.Structure):
    _fields_ = [("max_header_size", ctypes.c_uint64), ("max_ndim", ctypes.c_uint32),
                ("max_fields", ctypes.c_uint32), ("max_depth", ctypes.c_uint32),
                ("max_members", ctypes.c_uint32), ("max_name_len", ctypes.c_uint32),
                ("max_extra_len", ctypes.c_uint32), ("max_total_bytes", ctypes.c_uint64),
                ("inflate_window", ctypes.c_uint32), ("lenient", ctypes.c_uint32),
                ("max_memory", ctypes.c_uint64)]


DT_SCALAR, DT_STRUCT, DT_SUBARRAY = 1, 2, 3


class NpzsDtNode(ctypes.Structure):
    _fields_ = [("kind", ctypes.c_int), ("itemsize", ctypes.c_uint64), ("dtype", ctypes.c_char_p),
                ("first", ctypes.c_uint32), ("count", ctypes.c_uint32), ("base", ctypes.c_uint32),
                ("ndim", ctypes.c_uint32), ("shape", ctypes.POINTER(ctypes.c_uint64))]


class NpzsDtField(ctypes.Structure):
    _fields_ = [("name", ctypes.c_void_p), ("name_len", ctypes.c_size_t), ("title", ctypes.c_void_p),
                ("title_len", ctypes.c_size_t), ("offset", ctypes.c_uint64), ("type", ctypes.c_uint32)]


class NpzsArrayInfo(ctypes.Structure):
    _fields_ = [("version_major", ctypes.c_uint8), ("version_minor", ctypes.c_uint8),
                ("fortran_order", ctypes.c_int), ("structured", ctypes.c_int),
                ("dtype", ctypes.c_char_p), ("descr", ctypes.c_char_p), ("descr_len", ctypes.c_size_t),
                ("header", ctypes.c_void_p), ("header_size", ctypes.c_size_t),
                ("ndim", ctypes.c_uint32), ("shape", ctypes.POINTER(ctypes.c_uint64)),
                ("itemsize", ctypes.c_uint64), ("count", ctypes.c_uint64), ("nbytes", ctypes.c_uint64),
                ("header_len", ctypes.c_uint64),
                ("dt_nodes", ctypes.POINTER(NpzsDtNode)), ("dt_nnodes", ctypes.c_uint32),
                ("dt_nfields", ctypes.c_uint32), ("dt_fields", ctypes.POINTER(NpzsDtField))]


class NpzsEvent(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("member", ctypes.c_uint32), ("offset", ctypes.c_uint64),
                ("name", ctypes.c_void_p), ("name_len", ctypes.c_size_t), ("method", ctypes.c_int),
                ("flags", ctypes.c_uint), ("array", ctypes.POINTER(NpzsArrayInfo)),
                ("data", ctypes.c_void_p), ("len", ctypes.c_size_t), ("pos", ctypes.c_uint64),
                ("zero_copy", ctypes.c_int), ("kind", ctypes.c_int), ("size", ctypes.c_uint64),
                ("csize", ctypes.c_uint64), ("crc32", ctypes.c_uint32), ("data_crc32", ctypes.c_uint32),
                ("data_size", ctypes.c_uint64), ("format", ctypes.c_int), ("members", ctypes.c_uint32)]


class NpzsIn(ctypes.Structure):
    _fields_ = [("src", ctypes.c_void_p), ("size", ctypes.c_size_t), ("pos", ctypes.c_size_t)]


class NpzstreamError(Exception):
    pass


_lib = None


def _candidates():
    env = os.environ.get("NPZSTREAM_LIB")
    if env:
        yield env
    here = os.path.dirname(os.path.abspath(__file__))
    yield os.path.join(here, "..", "build", "libnpzstream.so")
    yield "libnpzstream.so.0"
    found = ctypes.util.find_library("npzstream")
    if found:
        yield found


def load_library(path=None):
    """Load (once) and return the ctypes handle of libnpzstream."""
    global _lib
    if _lib is not None and path is None:
        return _lib
    errors = []
    for cand in ([path] if path else _candidates()):
        if os.sep in cand and not os.path.exists(cand):
            continue
        try:
            lib = ctypes.CDLL(cand)
            break
        except OSError as e:
            errors.append(str(e))
    else:
        raise NpzstreamError("libnpzstream not found (set NPZSTREAM_LIB): " + "; ".join(errors))
    P = ctypes.c_void_p
    lib.npzs_limits_default_.argtypes = [ctypes.POINTER(NpzsLimits), ctypes.c_size_t]
    lib.npzs_limits_default_.restype = None
    lib.npzs_new_.argtypes = [ctypes.POINTER(NpzsLimits), ctypes.c_size_t, P]
    lib.npzs_new_.restype = P
    lib.npzs_free.argtypes = [P]
    lib.npzs_free.restype = None
    lib.npzs_next_.argtypes = [P, ctypes.POINTER(NpzsIn), ctypes.POINTER(NpzsEvent), ctypes.c_size_t]
    lib.npzs_next_.restype = ctypes.c_int
    lib.npzs_finish.argtypes = [P]
    lib.npzs_finish.restype = None
    lib.npzs_error.argtypes = [P]
    lib.npzs_error.restype = ctypes.c_int
    lib.npzs_error_offset.argtypes = [P]
    lib.npzs_error_offset.restype = ctypes.c_uint64
    lib.npzs_error_message.argtypes = [P]
    lib.npzs_error_message.restype = ctypes.c_char_p
    lib.npzs_error_member_name.argtypes = [P, ctypes.POINTER(ctypes.c_size_t)]
    lib.npzs_error_member_name.restype = ctypes.c_void_p
    lib.npzs_error_name.argtypes = [ctypes.c_int]
    lib.npzs_error_name.restype = ctypes.c_char_p
    lib.npzs_consumed.argtypes = [P]
    lib.npzs_consumed.restype = ctypes.c_uint64
    lib.npzs_format_of.argtypes = [P]
    lib.npzs_format_of.restype = ctypes.c_int
    if path is None:
        _lib = lib
    return lib


class Member:
    """One member as streamed: name (str or None for a .npy), key (np.load's key), kind
    ('array'|'blob'), method ('stored'|'deflated'), and for arrays dtype, shape,
    fortran_order, nbytes; size (uncompressed), stored_size, data_crc32."""

    def __init__(self, name, method):
        self.name = name
        self.key = None if name is None else (name[:-4] if name.endswith(".npy") and len(name) > 4 else name)
        self.kind = "blob"
        self.method = "deflated" if method == 8 else "stored"
        self.dtype = self.shape = self.fortran_order = self.version = None
        self.nbytes = self.size = self.stored_size = self.data_crc32 = None

    def __repr__(self):
        if self.kind == "array":
            return "<Member %r %s %r %s>" % (self.key, self.dtype, self.shape, self.method)
        return "<Member %r blob %d bytes>" % (self.key, self.size or 0)


class Verdict:
    """ok, format ('npy'|'npz'|None), members (completed ones), bytes; on rejection code
    (e.g. 'crc_mismatch'), offset (absolute input offset), member (name or None), message."""

    def __init__(self, ok, fmt, members, nbytes, code=None, offset=None, member=None, message=None):
        self.ok, self.format, self.members, self.bytes = ok, fmt, members, nbytes
        self.code, self.offset, self.member, self.message = code, offset, member, message

    def __bool__(self):
        return self.ok

    def __repr__(self):
        if self.ok:
            return "<Verdict ok %s, %d members>" % (self.format, len(self.members))
        return "<Verdict rejected %s at %d (%s): %s>" % (self.code, self.offset, self.member, self.message)


class Validator:
    """Streaming validator: feed(bytes) any number of times, then finish() -> Verdict.

    Keyword arguments set limits (the npzs_limits fields: max_header_size, max_ndim,
    max_fields, max_depth, max_members, max_name_len, max_extra_len, max_total_bytes,
    inflate_window).  on_data(member, pos, bytes), if given, receives array data and blob
    bytes as they arrive -- provisionally, until finish() says ok."""

    _FMT = {0: None, 1: "npy", 2: "npz"}

    def __init__(self, lib=None, on_data=None, **limits):
        self._lib = lib or load_library()
        lim = NpzsLimits()
        self._lib.npzs_limits_default_(ctypes.byref(lim), ctypes.sizeof(lim))
        for k, v in limits.items():
            if k not in dict(NpzsLimits._fields_):
                raise TypeError("unknown limit %r" % k)
            setattr(lim, k, int(v))
        self._p = self._lib.npzs_new_(ctypes.byref(lim), ctypes.sizeof(lim), None)
        if not self._p:
            raise NpzstreamError("npzs_new failed: a limit is out of range, or out of memory")
        self._ev = NpzsEvent()
        self._in = NpzsIn()
        self._on_data = on_data
        self.members = []      # completed members (provisional until the verdict)
        self._cur = None
        self._verdict = None
        self._rc = 0

    def __del__(self):
        self.close()

    def close(self):
        p, self._p = getattr(self, "_p", None), None
        if p:
            self._lib.npzs_free(p)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    @property
    def rejected(self):
        return self._rc < 0

    def _pump(self, buf, n):
        lib, ev, inp = self._lib, self._ev, self._in
        inp.src, inp.size, inp.pos = buf, n, 0
        while self._rc >= 0 and self._verdict is None:
            rc = lib.npzs_next_(self._p, ctypes.byref(inp), ctypes.byref(ev), ctypes.sizeof(NpzsEvent))
            if rc == NEED_INPUT:
                return
            if rc == DONE:
                self._done()
                return
            if rc < 0:
                self._rc = rc
                return
            t = ev.type
            if t == EV_MEMBER_BEGIN:
                name = ctypes.string_at(ev.name, ev.name_len).decode("utf-8", "surrogateescape") if ev.name else None
                self._cur = Member(name, ev.method)
            elif t == EV_HEADER:
                a = ev.array.contents
                m = self._cur
                m.kind = "array"
                m.version = (a.version_major, a.version_minor)
                m.dtype = a.dtype.decode("ascii", "replace")
                m.shape = tuple(a.shape[i] for i in range(a.ndim))
                m.fortran_order = bool(a.fortran_order)
                m.nbytes = a.nbytes
            elif t in (EV_DATA, EV_BLOB):
                if self._on_data is not None and ev.len:
                    self._on_data(self._cur, ev.pos, ctypes.string_at(ev.data, ev.len))
            elif t == EV_MEMBER_END:
                m = self._cur
                m.kind = "array" if ev.kind == KIND_ARRAY else "blob"
                m.size, m.stored_size, m.data_crc32 = ev.size, ev.csize, ev.data_crc32
                if m.kind == "blob":
                    m.nbytes = ev.data_size
                self.members.append(m)
                self._cur = None
            elif t == EV_END:
                self._done()

    def _done(self):
        fmt = self._FMT.get(self._lib.npzs_format_of(self._p))
        self._verdict = Verdict(True, fmt, list(self.members), self._lib.npzs_consumed(self._p))

    def feed(self, data):
        """Push bytes.  Returns False once the input is known to be invalid (stop sending)."""
        if self._verdict is not None or self._rc < 0:
            return self._rc >= 0
        if not isinstance(data, bytes):
            data = bytes(data)
        if data:
            buf = ctypes.c_char_p(data)  # points into the bytes object: no copy
            self._pump(ctypes.cast(buf, ctypes.c_void_p), len(data))
        return self._rc >= 0

    def finish(self):
        """Declare the end of the input and return the Verdict (idempotent)."""
        if self._verdict is None and self._rc >= 0:
            self._lib.npzs_finish(self._p)
            self._pump(None, 0)
        if self._verdict is None:
            lib, p = self._lib, self._p
            code = lib.npzs_error(p)
            nl = ctypes.c_size_t(0)
            nm = lib.npzs_error_member_name(p, ctypes.byref(nl))
            self._verdict = Verdict(
                False, self._FMT.get(lib.npzs_format_of(p)), list(self.members), lib.npzs_consumed(p),
                code=lib.npzs_error_name(code).decode(), offset=lib.npzs_error_offset(p),
                member=ctypes.string_at(nm, nl.value).decode("utf-8", "surrogateescape") if nm else None,
                message=lib.npzs_error_message(p).decode("utf-8", "replace"))
            if code == E_NOMEM:
                raise MemoryError("npzstream: out of memory")
        return self._verdict


def validate(fileobj, chunk=1 << 16, **limits):
    """Validate a binary file object read in chunks; returns the Verdict."""
    with Validator(**limits) as v:
        while True:
            b = fileobj.read(chunk)
            if not b or not v.feed(b):
                break
        return v.finish()


def _main(argv):
    if len(argv) < 2:
        sys.stderr.write("usage: npzstream.py FILE [CHUNK]\n")
        return 2
    chunk = int(argv[2]) if len(argv) > 2 else 1 << 16
    f = sys.stdin.buffer if argv[1] == "-" else open(argv[1], "rb")
    with f:
        v = validate(f, chunk)
    print(v)
    for m in v.members:
        print("  ", m)
    return 0 if v.ok else 1


if __name__ == "__main__":
    sys.exit(_main(sys.argv))
