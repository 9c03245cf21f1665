/*
 * _npzstream.c -- the CPython extension over libnpzstream (compiled together with the library's
 * sources, so the structs are the C compiler's and no layout is copied by hand).
 *
 * One type, Stream: bytes are pushed with feed(), the end of input declared with finish(); the
 * events are handled here, in C:
 *   MEMBER_BEGIN  a dict for the member (index, name, method, offset);
 *   HEADER        its array fields (dtype, a dtype spec NumPy's np.dtype() takes, shape, order,
 *                 nbytes); then, when the stream has an on_header callable, its result (a
 *                 writable buffer of at least nbytes bytes, or None) becomes the array's
 *                 destination: the library writes the data there (npzs_data_into), inflating
 *                 a deflated member straight into it.  With worker threads, a member a
 *                 worker inflated whole comes as a Block (its output, taken from the helper
 *                 with npzs_par_take_data): the dict's "buffer", over which the array is made,
 *                 with no copy;
 *   BLOB          kept (keep_blobs) as bytes;
 *   MEMBER_END    sizes and CRC-32s; the dict goes to .members;
 *   END           .done.
 * The parser runs with the GIL released (for pushes of 64 KiB and more); it is taken back for
 * the events that build Python objects.  A stream is used by one thread at a time (a second concurrent call raises).
 * Bytes kept (array data and blobs) are capped by max_keep: more is a rejection with code
 * "limit" and rule "LIMIT.max_bytes", raised like the library's own.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

#include <stdint.h>
#include <string.h>

#include "npzstream.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) { Py_INCREF(o); return o; }
#endif
#if PY_VERSION_HEX < 0x03090000
#define PyObject_CallOneArg(f, a) PyObject_CallFunctionObjArgs((f), (a), NULL)
#endif

/* ---- Policy: a compiled policy (npzs_policy_new), shared read-only by the streams that use it -- */
typedef struct {
    PyObject_HEAD
    npzs_policy *pol;
} Policy;

static PyObject *PolicyErrorBase; /* set by the Python package: npzstream.PolicyError */

static int Policy_init(Policy *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"text", NULL};
    Py_buffer b;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "s*", kwlist, &b)) return -1;
    if (self->pol) {
        PyBuffer_Release(&b);
        PyErr_SetString(PyExc_RuntimeError, "Policy.__init__ called twice");
        return -1;
    }
    npzs_policy_error e;
    self->pol = npzs_policy_new(b.buf, (size_t)b.len, NULL, &e);
    PyBuffer_Release(&b);
    if (self->pol) return 0;
    PyObject *cls = PolicyErrorBase ? PolicyErrorBase : PyExc_ValueError;
    PyObject *line = e.line ? PyLong_FromUnsignedLong(e.line) : Py_NewRef(Py_None);
    PyObject *col = e.line ? PyLong_FromUnsignedLong(e.column) : Py_NewRef(Py_None);
    PyObject *kwd = Py_BuildValue("{sNsNsssK}", "line", line, "column", col, "path", e.path, "offset",
                                  (unsigned long long)e.offset);
    PyObject *a = kwd ? Py_BuildValue("(s)", e.message) : NULL;
    PyObject *err = a ? PyObject_Call(cls, a, kwd) : NULL;
    Py_XDECREF(a);
    Py_XDECREF(kwd);
    if (err) { PyErr_SetObject(cls, err); Py_DECREF(err); }
    return -1;
}

static void Policy_dealloc(Policy *self) {
    npzs_policy_free(self->pol);
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyTypeObject PolicyType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npzstream._npzstream.Policy",
    .tp_basicsize = sizeof(Policy),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Policy(text): a policy compiled from its JSON text (raises PolicyError)",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Policy_init,
    .tp_dealloc = (destructor)Policy_dealloc,
};

typedef struct {
    PyObject_HEAD
    npzs_parser *p;
    npzs_par *q; /* threads > 1: the parallel-inflate helper over p */
    PyObject *policy;     /* the Policy the parser enforces (kept alive with it), or NULL */
    PyObject *on_header;  /* callable(member dict) -> writable buffer or None; or NULL */
    int keep_blobs;
    uint64_t max_keep, kept;
    PyObject *members;    /* list of completed member dicts */
    PyObject *cur;        /* the member being read */
    PyObject *blob;       /* list of bytes chunks of the current blob */
    Py_buffer out;        /* the destination of the current array */
    int have_out;
    int busy, done, finished;
    /* the current member: stored (its bytes are the input's own), its array's size, the array
     * data bytes the parser took so far, and the input offset of its first data byte when that
     * came straight from a push (zero copy; UINT64_MAX otherwise) */
    int cur_stored;
    uint64_t cur_nbytes, data_got, data_at;
    int map_stored;       /* open(): a stored array gets no destination, its data stays in the input */
    /* an error this module raised on its own (max_keep): the library has none */
    const char *own_code, *own_rule, *own_msg;
    uint64_t own_off;
    long own_member;
    int broken;           /* a Python error stopped the event handling: the stream is unusable */
} Stream;

static PyObject *RejectedBase; /* set by the Python package: npzstream.RejectedError */

/* ---- Block: an array's data where a worker inflated it (npzs_par_take_data) ------------------
 * A writable buffer over the data; the allocation (the parser's default hooks: malloc) is freed
 * with the last reference, the array made over it. */
typedef struct {
    PyObject_HEAD
    void *base;
    char *data;
    Py_ssize_t len;
} Block;

static int Block_getbuffer(Block *b, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->len, 0, flags);
}

static void Block_dealloc(Block *b) {
    free(b->base);
    Py_TYPE(b)->tp_free((PyObject *)b);
}

static PyBufferProcs Block_as_buffer = {(getbufferproc)Block_getbuffer, NULL};

static PyTypeObject BlockType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npzstream._npzstream.Block",
    .tp_basicsize = sizeof(Block),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "an array's data where a worker thread inflated it",
    .tp_dealloc = (destructor)Block_dealloc,
    .tp_as_buffer = &Block_as_buffer,
};

/* ---- Map: a private, read-only mapping of a file (open()) ------------------------------------
 * PROT_READ and MAP_PRIVATE: the arrays over it cannot write it, it costs no private memory and no
 * commit charge (a read-only private mapping is not accounted, so a file larger than RAM maps).
 * It is unmapped with its last reference: the arrays made over it hold one (ndarray.base), so
 * there is no close() that could leave an array pointing at unmapped memory. */
#if defined(__unix__) || defined(__APPLE__)
#define NPZS_HAVE_MMAP 1
#include <sys/mman.h>
#endif

typedef struct {
    PyObject_HEAD
    void *addr;
    Py_ssize_t len;
} Map;

static int Map_init(Map *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"fd", "length", "populate", NULL};
    int fd, populate = 0;
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "in|p", kwlist, &fd, &len, &populate)) return -1;
    if (self->addr) { PyErr_SetString(PyExc_RuntimeError, "Map.__init__ called twice"); return -1; }
    if (len < 0) { PyErr_SetString(PyExc_ValueError, "length must be >= 0"); return -1; }
    if (len == 0) return 0; /* nothing to map: an empty buffer */
#ifdef NPZS_HAVE_MMAP
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (populate) flags |= MAP_POPULATE;
#endif
    void *a;
    Py_BEGIN_ALLOW_THREADS
    a = mmap(NULL, (size_t)len, PROT_READ, flags, fd, 0);
    Py_END_ALLOW_THREADS
    if (a == MAP_FAILED) { PyErr_SetFromErrno(PyExc_OSError); return -1; }
    self->addr = a;
    self->len = len;
    return 0;
#else
    (void)fd;
    (void)populate;
    PyErr_SetString(PyExc_OSError, "npzstream: no mmap on this platform");
    return -1;
#endif
}

static void Map_dealloc(Map *self) {
#ifdef NPZS_HAVE_MMAP
    if (self->addr) munmap(self->addr, (size_t)self->len);
#endif
    Py_TYPE(self)->tp_free((PyObject *)self);
}

static int Map_getbuffer(Map *self, Py_buffer *view, int flags) {
    static char empty;
    return PyBuffer_FillInfo(view, (PyObject *)self, self->addr ? self->addr : &empty, self->len, 1, flags);
}

static PyBufferProcs Map_as_buffer = {(getbufferproc)Map_getbuffer, NULL};

/* madvise(advice): "normal", "sequential", "random", "willneed" or "dontneed"; False where the
 * system has no madvise (advice only: nothing depends on it). */
static PyObject *Map_madvise(Map *self, PyObject *arg) {
    const char *a = PyUnicode_AsUTF8(arg);
    if (!a) return NULL;
#if defined(NPZS_HAVE_MMAP) && defined(MADV_NORMAL)
    int adv;
    if (!strcmp(a, "normal")) adv = MADV_NORMAL;
    else if (!strcmp(a, "sequential")) adv = MADV_SEQUENTIAL;
    else if (!strcmp(a, "random")) adv = MADV_RANDOM;
    else if (!strcmp(a, "willneed")) adv = MADV_WILLNEED;
    else if (!strcmp(a, "dontneed")) adv = MADV_DONTNEED;
    else { PyErr_Format(PyExc_ValueError, "unknown advice %s", a); return NULL; }
    if (!self->addr) Py_RETURN_FALSE;
    if (madvise(self->addr, (size_t)self->len, adv) != 0) { PyErr_SetFromErrno(PyExc_OSError); return NULL; }
    Py_RETURN_TRUE;
#else
    (void)self;
    Py_RETURN_FALSE;
#endif
}

static Py_ssize_t Map_length(Map *self) { return self->len; }
static PySequenceMethods Map_as_sequence = {.sq_length = (lenfunc)Map_length};

static PyMethodDef Map_methods[] = {
    {"madvise", (PyCFunction)Map_madvise, METH_O, "madvise(advice): normal, sequential, random, willneed, dontneed"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject MapType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npzstream._npzstream.Map",
    .tp_basicsize = sizeof(Map),
    .tp_flags = Py_TPFLAGS_DEFAULT,
    .tp_doc = "Map(fd, length, populate=False): a private read-only mapping of a file, unmapped with its last reference",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Map_init,
    .tp_dealloc = (destructor)Map_dealloc,
    .tp_as_buffer = &Map_as_buffer,
    .tp_as_sequence = &Map_as_sequence,
    .tp_methods = Map_methods,
};

/* The current array's data as a Block, when a worker made it whole; NULL otherwise (the data
 * then goes to a destination or the DATA events as before), or with a Python error set. */
static PyObject *take_block(Stream *s, const npzs_array_info *a) {
    void *base;
    uint64_t off;
    if (!s->q || npzs_par_take_data(s->q, 16, &base, &off) != 0) return NULL;
    Block *b = PyObject_New(Block, &BlockType);
    if (!b) {
        free(base); /* the parser reads it until the member's end: the stream stops here (the error) */
        return NULL;
    }
    b->base = base;
    b->data = (char *)base + off;
    b->len = (Py_ssize_t)a->nbytes;
    return (PyObject *)b;
}

/* ---- the dtype as np.dtype() takes it, from the library's tree ------------------------------ */

static PyObject *dt_spec(const npzs_array_info *a, uint32_t k, int depth) {
    if (k >= a->dt_nnodes || depth > 2100) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: a malformed dtype tree");
        return NULL;
    }
    const npzs_dtnode *n = &a->dt_nodes[k];
    if (n->kind == NPZS_DT_SCALAR) return PyUnicode_FromString(n->dtype);
    if (n->kind == NPZS_DT_SUBARRAY) {
        PyObject *base = dt_spec(a, n->base, depth + 1);
        if (!base) return NULL;
        PyObject *shape = PyTuple_New(n->ndim);
        if (!shape) { Py_DECREF(base); return NULL; }
        for (uint32_t d = 0; d < n->ndim; d++) {
            PyObject *v = PyLong_FromUnsignedLongLong(n->shape[d]);
            if (!v) { Py_DECREF(base); Py_DECREF(shape); return NULL; }
            PyTuple_SET_ITEM(shape, d, v);
        }
        PyObject *t = PyTuple_Pack(2, base, shape);
        Py_DECREF(base);
        Py_DECREF(shape);
        return t;
    }
    /* a struct: {'names', 'formats', 'offsets', 'titles', 'itemsize'}, NumPy's descr_to_dtype */
    PyObject *names = PyList_New(n->count), *formats = PyList_New(n->count), *offsets = PyList_New(n->count),
             *titles = PyList_New(n->count), *d = NULL;
    if (!names || !formats || !offsets || !titles) goto fail;
    for (uint32_t i = 0; i < n->count; i++) {
        const npzs_dtfield *f = &a->dt_fields[n->first + i];
        PyObject *nm = PyUnicode_DecodeUTF8(f->name, (Py_ssize_t)f->name_len, "strict");
        if (!nm) goto fail;
        PyList_SET_ITEM(names, i, nm);
        PyObject *fm = dt_spec(a, f->type, depth + 1);
        if (!fm) goto fail;
        PyList_SET_ITEM(formats, i, fm);
        PyObject *of = PyLong_FromUnsignedLongLong(f->offset);
        if (!of) goto fail;
        PyList_SET_ITEM(offsets, i, of);
        PyObject *ti = f->title ? PyUnicode_DecodeUTF8(f->title, (Py_ssize_t)f->title_len, "strict") : Py_NewRef(Py_None);
        if (!ti) goto fail;
        PyList_SET_ITEM(titles, i, ti);
    }
    d = Py_BuildValue("{sOsOsOsOsK}", "names", names, "formats", formats, "offsets", offsets, "titles", titles,
                      "itemsize", (unsigned long long)n->itemsize);
fail:
    Py_XDECREF(names);
    Py_XDECREF(formats);
    Py_XDECREF(offsets);
    Py_XDECREF(titles);
    return d;
}

/* ---- events ---------------------------------------------------------------------------------- */

static int set_item(PyObject *d, const char *key, PyObject *v) {
    if (!v) return -1;
    int rc = PyDict_SetItemString(d, key, v);
    Py_DECREF(v);
    return rc;
}

static void release_out(Stream *s) {
    if (s->have_out) PyBuffer_Release(&s->out);
    s->have_out = 0;
}

static int own_reject(Stream *s, uint64_t off, long member) {
    s->own_code = "limit";
    s->own_rule = "LIMIT.max_bytes";
    s->own_msg = "the arrays and blobs to keep exceed max_bytes";
    s->own_off = off;
    s->own_member = member;
    return -1;
}

/* What HEADER says of the array; then its destination.  -1: a Python error (set or in
 * cb_error) or a rejection of our own. */
static int on_header(Stream *s, const npzs_event *ev) {
    const npzs_array_info *a = ev->array;
    PyObject *c = s->cur;
    PyObject *shape = PyTuple_New(a->ndim);
    if (!shape) return -1;
    for (uint32_t d = 0; d < a->ndim; d++) {
        PyObject *v = PyLong_FromUnsignedLongLong(a->shape[d]);
        if (!v) { Py_DECREF(shape); return -1; }
        PyTuple_SET_ITEM(shape, d, v);
    }
    if (set_item(c, "kind", PyUnicode_FromString("array")) < 0 || set_item(c, "shape", shape) < 0 ||
        set_item(c, "dtype", PyUnicode_FromString(a->dtype)) < 0 ||
        set_item(c, "descr", a->structured ? dt_spec(a, 0, 0) : PyUnicode_FromString(a->dtype)) < 0 ||
        set_item(c, "fortran_order", PyBool_FromLong(a->fortran_order)) < 0 ||
        set_item(c, "version", Py_BuildValue("(ii)", a->version_major, a->version_minor)) < 0 ||
        set_item(c, "nbytes", PyLong_FromUnsignedLongLong(a->nbytes)) < 0 ||
        set_item(c, "header_len", PyLong_FromUnsignedLongLong(a->header_len)) < 0 ||
        set_item(c, "content_at", PyLong_FromUnsignedLongLong(ev->offset)) < 0)
        return -1;
    s->cur_nbytes = a->nbytes;
    if (!s->on_header || (s->map_stored && s->cur_stored)) return 0;
    if (a->nbytes > s->max_keep - s->kept) return own_reject(s, ev->offset, (long)ev->member);
    PyObject *block = take_block(s, a);
    if (!block && PyErr_Occurred()) return -1;
    if (block) {
        s->kept += a->nbytes;
        if (set_item(c, "buffer", block) < 0) return -1;
    }
    PyObject *dst = PyObject_CallOneArg(s->on_header, c);
    if (!dst) return -1;
    if (dst == Py_None) { Py_DECREF(dst); return 0; }
    if (block) { /* the data is where the array was made */
        Py_DECREF(dst);
        PyErr_SetString(PyExc_ValueError, "npzstream: on_header returned a destination for an array made over its buffer");
        return -1;
    }
    int rc = PyObject_GetBuffer(dst, &s->out, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS);
    Py_DECREF(dst);
    if (rc < 0) return -1;
    s->have_out = 1;
    if ((uint64_t)s->out.len < a->nbytes) {
        release_out(s);
        PyErr_SetString(PyExc_ValueError, "npzstream: on_header returned a buffer smaller than the array");
        return -1;
    }
    s->kept += a->nbytes;
    if (npzs_data_into(s->p, s->out.buf, (size_t)s->out.len) != 0) {
        release_out(s);
        PyErr_SetString(PyExc_RuntimeError, "npzstream: npzs_data_into refused right after HEADER");
        return -1;
    }
    return 0;
}

static int on_event(Stream *s, const npzs_event *ev) {
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN: {
        Py_CLEAR(s->cur);
        Py_CLEAR(s->blob);
        s->cur = PyDict_New();
        if (!s->cur) return -1;
        PyObject *name = ev->name ? PyBytes_FromStringAndSize(ev->name, (Py_ssize_t)ev->name_len) : Py_NewRef(Py_None);
        s->cur_stored = ev->method == NPZS_METHOD_STORED;
        s->cur_nbytes = s->data_got = 0;
        s->data_at = UINT64_MAX;
        if (set_item(s->cur, "index", PyLong_FromUnsignedLong(ev->member)) < 0 || set_item(s->cur, "name", name) < 0 ||
            set_item(s->cur, "method", PyUnicode_FromString(ev->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored")) < 0 ||
            set_item(s->cur, "offset", PyLong_FromUnsignedLongLong(ev->offset)) < 0 ||
            set_item(s->cur, "flags", PyLong_FromUnsignedLong(ev->flags)) < 0)
            return -1;
        return 0;
    }
    case NPZS_EV_HEADER:
        return on_header(s, ev);
    case NPZS_EV_BLOB:
        if (!s->keep_blobs) return 0;
        if (ev->len > s->max_keep - s->kept) return own_reject(s, ev->offset, (long)ev->member);
        s->kept += ev->len;
        if (!s->blob && !(s->blob = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
        {
            Py_ssize_t have = PyByteArray_GET_SIZE(s->blob);
            if (PyByteArray_Resize(s->blob, have + (Py_ssize_t)ev->len) < 0) return -1;
            memcpy(PyByteArray_AS_STRING(s->blob) + have, ev->data, ev->len);
        }
        return 0;
    case NPZS_EV_MEMBER_END: {
        release_out(s);
        PyObject *c = s->cur;
        if (set_item(c, "kind", PyUnicode_FromString(ev->kind == NPZS_KIND_ARRAY ? "array" : "blob")) < 0 ||
            set_item(c, "size", PyLong_FromUnsignedLongLong(ev->size)) < 0 ||
            set_item(c, "csize", PyLong_FromUnsignedLongLong(ev->csize)) < 0 ||
            set_item(c, "crc32", PyLong_FromUnsignedLong(ev->crc32)) < 0 ||
            set_item(c, "data_crc32", PyLong_FromUnsignedLong(ev->data_crc32)) < 0 ||
            set_item(c, "data_size", PyLong_FromUnsignedLongLong(ev->data_size)) < 0 ||
            set_item(c, "end", PyLong_FromUnsignedLongLong(ev->offset)) < 0 ||
            set_item(c, "sniff", PyUnicode_FromString(npzs_sniff_name(ev->sniff))) < 0)
            return -1;
        if (s->data_at != UINT64_MAX && set_item(c, "data_offset", PyLong_FromUnsignedLongLong(s->data_at)) < 0) return -1;
        if (ev->sha256) {
            char hex[65];
            for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", ev->sha256[i]);
            if (set_item(c, "sha256", PyUnicode_FromString(hex)) < 0) return -1;
        }
        if (ev->kind == NPZS_KIND_BLOB && s->keep_blobs) {
            PyObject *data = s->blob ? PyBytes_FromStringAndSize(PyByteArray_AS_STRING(s->blob), PyByteArray_GET_SIZE(s->blob))
                                     : PyBytes_FromStringAndSize(NULL, 0);
            if (set_item(c, "data", data) < 0) return -1;
            Py_CLEAR(s->blob);
        }
        int rc = PyList_Append(s->members, c);
        Py_CLEAR(s->cur);
        return rc;
    }
    case NPZS_EV_END:
        s->done = 1;
        return 0;
    default:
        return 0;
    }
}

/* ---- the loop -------------------------------------------------------------------------------- */

/* Run the parser over in (NULL after finish) with the GIL released.  0: the input was used up
 * (or END came), -1: a Python error is set, -2: rejected (the library's error or our own). */
#define GIL_FREE_MIN (64u << 10) /* smaller pushes keep the GIL: releasing it costs more than they do */

static int run(Stream *s, npzs_in *in) {
    /* with workers, a call may wait for one: the GIL is always let go */
    int release = s->q || !in || in->size - in->pos >= GIL_FREE_MIN;
    PyThreadState *ts = release ? PyEval_SaveThread() : NULL;
    int rc, r = 0;
    for (;;) {
        npzs_event ev;
        rc = s->q ? npzs_par_next(s->q, in, &ev) : npzs_next(s->p, in, &ev);
        if (rc != NPZS_EVENT) break;
        if (ev.type == NPZS_EV_DATA) { /* counted: where the data is, how much came */
            if (ev.pos == 0 && ev.zero_copy) s->data_at = ev.offset;
            s->data_got += ev.len;
            continue;
        }
        if (ev.type == NPZS_EV_BLOB && !s->keep_blobs) continue; /* nothing to do here */
        if (release) PyEval_RestoreThread(ts);
        r = on_event(s, &ev);
        if (release) ts = PyEval_SaveThread();
        if (r < 0 || ev.type == NPZS_EV_END) break;
    }
    if (release) PyEval_RestoreThread(ts);
    if (r < 0) {
        if (s->own_code) return -2;
        s->broken = 1;
        return -1;
    }
    return rc < 0 ? -2 : 0;
}

static PyObject *raise_rejected(Stream *s) {
    PyObject *cls = RejectedBase ? RejectedBase : PyExc_ValueError;
    PyObject *name = Py_NewRef(Py_None), *kw;
    if (s->own_code) {
        PyObject *c = s->own_member >= 0 && s->cur ? PyDict_GetItemString(s->cur, "name") : NULL;
        if (c) { Py_DECREF(name); name = Py_NewRef(c); }
        kw = Py_BuildValue("{sssKsNsOsssO}", "code", s->own_code, "offset", (unsigned long long)s->own_off, "member",
                           s->own_member >= 0 ? PyLong_FromLong(s->own_member) : Py_NewRef(Py_None), "name", name,
                           "rule", s->own_rule, "content_offset", Py_None);
        Py_DECREF(name);
        if (!kw) return NULL;
        PyObject *args = Py_BuildValue("(s)", s->own_msg);
        PyObject *e = args ? PyObject_Call(cls, args, kw) : NULL;
        Py_XDECREF(args);
        Py_DECREF(kw);
        if (e) { PyErr_SetObject(cls, e); Py_DECREF(e); }
        return NULL;
    }
    int code = npzs_error(s->p);
    size_t nl = 0;
    const char *nm = npzs_error_member_name(s->p, &nl);
    if (nm) { Py_DECREF(name); name = PyBytes_FromStringAndSize(nm, (Py_ssize_t)nl); if (!name) return NULL; }
    long mi = npzs_error_member(s->p);
    uint64_t co = npzs_error_content_offset(s->p);
    const char *rule = npzs_error_rule(s->p);
    PyObject *member = mi >= 0 ? PyLong_FromLong(mi) : Py_NewRef(Py_None);
    PyObject *coff = co == UINT64_MAX ? Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(co);
    kw = Py_BuildValue("{sssKsNsNszsNszsz}", "code", npzs_error_name(code), "offset",
                       (unsigned long long)npzs_error_offset(s->p), "member", member, "name", name, "rule", rule,
                       "content_offset", coff, "detail", npzs_error_detail(s->p), "hint", npzs_error_hint(s->p));
    if (!kw) return NULL;
    PyObject *args = Py_BuildValue("(s)", npzs_error_message(s->p));
    PyObject *e = args ? PyObject_Call(cls, args, kw) : NULL;
    Py_XDECREF(args);
    Py_DECREF(kw);
    if (e) { PyErr_SetObject(cls, e); Py_DECREF(e); }
    return NULL;
}

static int enter(Stream *s) {
    if (s->busy) { PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream is in use by another call"); return -1; }
    if (s->broken) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream stopped at an exception of its callback");
        return -1;
    }
    s->busy = 1;
    return 0;
}

static PyObject *after(Stream *s, int r) {
    s->busy = 0;
    if (r == -1) return NULL;
    if (r == -2) return raise_rejected(s);
    Py_RETURN_NONE;
}

static PyObject *Stream_feed(Stream *s, PyObject *arg) {
    if (enter(s) < 0) return NULL;
    if (s->own_code || npzs_error(s->p)) return after(s, -2);
    if (s->finished) {
        s->busy = 0;
        PyErr_SetString(PyExc_RuntimeError, "npzstream: feed() after finish()");
        return NULL;
    }
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) { s->busy = 0; return NULL; }
    npzs_in in = {b.buf, (size_t)b.len, 0};
    int r = run(s, &in);
    PyBuffer_Release(&b);
    return after(s, r);
}

static PyObject *Stream_finish(Stream *s, PyObject *unused) {
    (void)unused;
    if (enter(s) < 0) return NULL;
    if (s->own_code || npzs_error(s->p)) return after(s, -2);
    s->finished = 1;
    if (s->q) npzs_par_finish(s->q);
    else npzs_finish(s->p);
    int r = run(s, NULL);
    if (r == 0 && !s->done) {
        s->busy = 0;
        PyErr_SetString(PyExc_RuntimeError, "npzstream: no verdict at the end of the input");
        return NULL;
    }
    return after(s, r);
}

/* ---- the type --------------------------------------------------------------------------------- */

/* the limits: the library's table (NPZS_LIMITS_MAP), and the lenient bits */
static const struct { const char *name; int wide; size_t off; } LIMITS[] = {
#define X(f, bits, def, lo, hi, opt, help) {#f, (bits) == 64, offsetof(npzs_limits, f)},
    NPZS_LIMITS_MAP(X)
#undef X
    {"lenient", 0, offsetof(npzs_limits, lenient)},
};

/* limits: a dict of field -> int; every value range-checked (never wrapped), every field known */
static int read_limits(PyObject *d, npzs_limits *lim) {
    npzs_limits_default(lim);
    if (!d || d == Py_None) return 0;
    if (!PyDict_Check(d)) { PyErr_SetString(PyExc_TypeError, "limits must be a dict"); return -1; }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!name) { PyErr_SetString(PyExc_TypeError, "limit names must be str"); return -1; }
        size_t i = 0;
        while (i < sizeof LIMITS / sizeof *LIMITS && strcmp(LIMITS[i].name, name)) i++;
        if (i == sizeof LIMITS / sizeof *LIMITS) { PyErr_Format(PyExc_TypeError, "unknown limit %s", name); return -1; }
        if (!PyLong_Check(v) || PyBool_Check(v)) { PyErr_Format(PyExc_TypeError, "%s must be an int", name); return -1; }
        unsigned long long x = PyLong_AsUnsignedLongLong(v);
        if (x == (unsigned long long)-1 && PyErr_Occurred()) {
            PyErr_Clear();
            PyErr_Format(PyExc_ValueError, "%s must be between 0 and %llu", name,
                         LIMITS[i].wide ? (unsigned long long)UINT64_MAX : (unsigned long long)UINT32_MAX);
            return -1;
        }
        if (!LIMITS[i].wide && x > UINT32_MAX) {
            PyErr_Format(PyExc_ValueError, "%s must be between 0 and %lu", name, (unsigned long)UINT32_MAX);
            return -1;
        }
        char *at = (char *)lim + LIMITS[i].off;
        if (LIMITS[i].wide) { uint64_t w = x; memcpy(at, &w, sizeof w); }
        else { uint32_t w = (uint32_t)x; memcpy(at, &w, sizeof w); }
    }
    const char *bad = npzs_limits_check(lim);
    if (bad) { PyErr_Format(PyExc_ValueError, "%s is out of the range the library accepts", bad); return -1; }
    return 0;
}

static int Stream_init(Stream *s, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"limits", "on_header", "keep_blobs", "max_keep", "threads", "policy", "hash",
                             "map_stored", NULL};
    PyObject *limits = NULL, *cb = NULL, *policy = NULL;
    int keep = 0, threads = 1, hash = 0, map_stored = 0;
    unsigned long long max_keep = UINT64_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOpKiOpp", kwlist, &limits, &cb, &keep, &max_keep, &threads, &policy,
                                     &hash, &map_stored))
        return -1;
    if (policy == Py_None) policy = NULL;
    if (policy && !PyObject_TypeCheck(policy, &PolicyType)) {
        PyErr_SetString(PyExc_TypeError, "policy must be a compiled npzstream._npzstream.Policy");
        return -1;
    }
    if (hash && !npzs_sha256_built()) {
        PyErr_SetString(PyExc_ValueError, "hash=True: this build of npzstream has no SHA-256 (it needs OpenSSL's libcrypto)");
        return -1;
    }
    if (threads < 1 || threads > 64) {
        PyErr_SetString(PyExc_ValueError, "threads must be between 1 and 64");
        return -1;
    }
    npzs_limits lim;
    if (read_limits(limits, &lim) < 0) return -1;
    if (cb == Py_None) cb = NULL;
    if (cb && !PyCallable_Check(cb)) { PyErr_SetString(PyExc_TypeError, "on_header must be callable"); return -1; }
    if (s->p) { PyErr_SetString(PyExc_RuntimeError, "Stream.__init__ called twice"); return -1; }
    s->p = npzs_new(&lim, NULL);
    if (!s->p) { PyErr_NoMemory(); return -1; }
    if ((policy && npzs_policy_use(s->p, ((Policy *)policy)->pol) != 0) || (hash && npzs_hash(s->p, NPZS_HASH_SHA256) != 0)) {
        PyErr_NoMemory();
        return -1;
    }
    s->policy = policy ? Py_NewRef(policy) : NULL;
    if (threads > 1) { /* 128 MiB of members held a worker, as the command line's -j */
        s->q = npzs_par_new(s->p, (unsigned)threads, (uint64_t)threads << 27);
        if (!s->q) { PyErr_NoMemory(); return -1; }
        /* a validator (no arrays, no blobs kept, no values checked or hashed): the workers keep only
         * each member's header */
        if (!cb && !keep && !policy && !hash && npzs_par_skip_data(s->q) != 0) { PyErr_NoMemory(); return -1; }
    }
    s->on_header = cb ? Py_NewRef(cb) : NULL;
    s->keep_blobs = keep;
    s->map_stored = map_stored;
    s->max_keep = max_keep;
    s->own_member = -1;
    s->members = PyList_New(0);
    return s->members ? 0 : -1;
}

static int Stream_traverse(Stream *s, visitproc visit, void *arg) {
    Py_VISIT(s->on_header);
    Py_VISIT(s->policy);
    Py_VISIT(s->members);
    Py_VISIT(s->cur);
    Py_VISIT(s->blob);
    if (s->have_out) Py_VISIT(s->out.obj);
    return 0;
}

static int Stream_clear(Stream *s) {
    release_out(s);
    Py_CLEAR(s->on_header);
    Py_CLEAR(s->members);
    Py_CLEAR(s->cur);
    Py_CLEAR(s->blob);
    return 0;
}

static void Stream_dealloc(Stream *s) {
    PyObject_GC_UnTrack(s);
    Stream_clear(s);
    npzs_par_free(s->q);
    npzs_free(s->p);
    Py_CLEAR(s->policy); /* after the parser that used it */
    Py_TYPE(s)->tp_free((PyObject *)s);
}

static PyObject *Stream_get_members(Stream *s, void *c) { (void)c; return Py_NewRef(s->members ? s->members : Py_None); }
static PyObject *Stream_get_done(Stream *s, void *c) { (void)c; return PyBool_FromLong(s->done); }
static PyObject *Stream_get_format(Stream *s, void *c) {
    (void)c;
    npzs_format f = s->p ? npzs_format_of(s->p) : NPZS_FORMAT_UNKNOWN;
    if (f == NPZS_FORMAT_NPY) return PyUnicode_FromString("npy");
    if (f == NPZS_FORMAT_NPZ) return PyUnicode_FromString("npz");
    Py_RETURN_NONE;
}
static PyObject *Stream_get_consumed(Stream *s, void *c) { (void)c; return PyLong_FromUnsignedLongLong(s->p ? npzs_consumed(s->p) : 0); }
static PyObject *Stream_get_ahead(Stream *s, void *c) { (void)c; return PyLong_FromUnsignedLongLong(npzs_par_used(s->q)); }
static PyObject *Stream_get_memory(Stream *s, void *c) { (void)c; return PyLong_FromUnsignedLongLong(s->p ? npzs_memory(s->p) : 0); }
static PyObject *Stream_get_kept(Stream *s, void *c) { (void)c; return PyLong_FromUnsignedLongLong(s->kept); }
/* (pos, left): the current array is stored and has a destination, and the parser wants its data
 * bytes pos .. pos + left next, nothing else: the caller may read them straight into the
 * destination at pos and push that span (the parser finds the bytes already in place: no copy,
 * the CRC-32 and every check as for any push).  None otherwise (no helper: it reads ahead). */
static PyObject *Stream_get_direct(Stream *s, void *c) {
    (void)c;
    if (!s->p || s->q || !s->have_out || !s->cur_stored || s->own_code || s->finished || npzs_error(s->p) ||
        s->data_got >= s->cur_nbytes)
        Py_RETURN_NONE;
    return Py_BuildValue("(KK)", (unsigned long long)s->data_got, (unsigned long long)(s->cur_nbytes - s->data_got));
}

static PyGetSetDef Stream_getset[] = {
    {"members", (getter)Stream_get_members, NULL, "completed members (dicts), in input order", NULL},
    {"done", (getter)Stream_get_done, NULL, "the END verdict was reached: the input is valid", NULL},
    {"format", (getter)Stream_get_format, NULL, "'npy', 'npz', or None before the first byte", NULL},
    {"consumed", (getter)Stream_get_consumed, NULL, "input bytes consumed", NULL},
    {"inflated_ahead", (getter)Stream_get_ahead, NULL, "members inflated by the worker threads", NULL},
    {"memory", (getter)Stream_get_memory, NULL, "bytes the parser holds now", NULL},
    {"kept", (getter)Stream_get_kept, NULL, "array and blob bytes kept so far", NULL},
    {"direct", (getter)Stream_get_direct, NULL, "(pos, left) of the current stored array's data to read in place, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Stream_methods[] = {
    {"feed", (PyCFunction)Stream_feed, METH_O, "feed(data): push bytes (any bytes-like object)"},
    {"finish", (PyCFunction)Stream_finish, METH_NOARGS, "finish(): the end of the input; raises unless valid"},
    {NULL, NULL, 0, NULL},
};

static PyTypeObject StreamType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "npzstream._npzstream.Stream",
    .tp_basicsize = sizeof(Stream),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
    .tp_doc = "Stream(limits=None, on_header=None, keep_blobs=False, max_keep=2**64-1): the parser",
    .tp_new = PyType_GenericNew,
    .tp_init = (initproc)Stream_init,
    .tp_dealloc = (destructor)Stream_dealloc,
    .tp_traverse = (traverseproc)Stream_traverse,
    .tp_clear = (inquiry)Stream_clear,
    .tp_methods = Stream_methods,
    .tp_getset = Stream_getset,
};

static PyObject *mod_set_rejected(PyObject *m, PyObject *cls) {
    (void)m;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "an exception class");
        return NULL;
    }
    Py_XDECREF(RejectedBase);
    RejectedBase = Py_NewRef(cls);
    Py_RETURN_NONE;
}

static PyObject *mod_set_policy_error(PyObject *m, PyObject *cls) {
    (void)m;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, (PyTypeObject *)PyExc_Exception)) {
        PyErr_SetString(PyExc_TypeError, "an exception class");
        return NULL;
    }
    Py_XDECREF(PolicyErrorBase);
    PolicyErrorBase = Py_NewRef(cls);
    Py_RETURN_NONE;
}

/* The library's default limits, as a dict (the one source of the defaults). */
static PyObject *mod_default_limits(PyObject *m, PyObject *unused) {
    (void)m;
    (void)unused;
    npzs_limits lim;
    npzs_limits_default(&lim);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < sizeof LIMITS / sizeof *LIMITS; i++) {
        const char *at = (const char *)&lim + LIMITS[i].off;
        unsigned long long v;
        if (LIMITS[i].wide) { uint64_t w; memcpy(&w, at, sizeof w); v = w; }
        else { uint32_t w; memcpy(&w, at, sizeof w); v = w; }
        if (set_item(d, LIMITS[i].name, PyLong_FromUnsignedLongLong(v)) < 0) Py_CLEAR(d);
    }
    return d;
}

/* The hint of a rule id ("what to do"), or None. */
static PyObject *mod_rule_hint(PyObject *m, PyObject *arg) {
    (void)m;
    const char *r = PyUnicode_AsUTF8(arg);
    if (!r) return NULL;
    const char *h = npzs_rule_hint(r);
    if (!h) Py_RETURN_NONE;
    return PyUnicode_FromString(h);
}

static PyObject *mod_version(PyObject *m, PyObject *unused) {
    (void)m;
    (void)unused;
    unsigned long v = npzs_version();
    return PyUnicode_FromFormat("%lu.%lu.%lu", v >> 16, (v >> 8) & 0xFF, v & 0xFF);
}

static PyMethodDef mod_methods[] = {
    {"_set_rejected", mod_set_rejected, METH_O, "the exception class rejections raise"},
    {"_set_policy_error", mod_set_policy_error, METH_O, "the exception class policy faults raise"},
    {"default_limits", mod_default_limits, METH_NOARGS, "the library's default limits (npzs_limits_default)"},
    {"rule_hint", mod_rule_hint, METH_O, "what the user can do about a rule id, or None"},
    {"library_version", mod_version, METH_NOARGS, "the version of the libnpzstream compiled in"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef moddef = {PyModuleDef_HEAD_INIT, "_npzstream", "libnpzstream, compiled in", -1, mod_methods,
                                    NULL, NULL, NULL, NULL};

PyMODINIT_FUNC PyInit__npzstream(void) {
    if (PyType_Ready(&StreamType) < 0 || PyType_Ready(&BlockType) < 0 || PyType_Ready(&PolicyType) < 0 ||
        PyType_Ready(&MapType) < 0)
        return NULL;
    PyObject *m = PyModule_Create(&moddef);
    if (!m) return NULL;
    Py_INCREF(&StreamType);
    Py_INCREF(&PolicyType);
    Py_INCREF(&MapType);
    if (PyModule_AddObject(m, "Stream", (PyObject *)&StreamType) < 0 ||
        PyModule_AddObject(m, "Map", (PyObject *)&MapType) < 0 ||
        PyModule_AddObject(m, "Policy", (PyObject *)&PolicyType) < 0 ||
        PyModule_AddIntConstant(m, "SHA256", npzs_sha256_built()) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_NPY_TRAILING", NPZS_LENIENT_NPY_TRAILING) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_HEADER_NEWLINE", NPZS_LENIENT_HEADER_NEWLINE) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_FAST_INFLATE", NPZS_LENIENT_FAST_INFLATE) < 0 ||
        PyModule_AddIntConstant(m, "INFLATE_ZLIB", NPZS_INFLATE_ZLIB) < 0 ||
        PyModule_AddIntConstant(m, "FAST_INFLATE", npzs_fast_inflate()) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    return m;
}
