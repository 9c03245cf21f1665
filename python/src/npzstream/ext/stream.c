/*
 * stream.c -- Stream, the extension's parser (module.c has the module; ext.h the files).
 *
 * Bytes are pushed with feed(), the end of input declared with finish(); feed_held() pushes bytes
 * that outlive the stream's use of them (load()'s bytes, open()'s mapping): with worker threads
 * they are read where they are (the helper's stable input), their buffers kept until release(),
 * which stops the workers first.  The events are handled here, in C:
 *   MEMBER_BEGIN  a dict for the member (index, name, method, offset);
 *   HEADER        its array fields (dtype, a dtype spec NumPy's np.dtype() takes, shape, order,
 *                 nbytes); then, when the stream has an on_header callable, its result (a
 *                 writable buffer of at least nbytes bytes, or None) becomes the array's
 *                 destination: the library writes the data there (npzs_data_into), inflating
 *                 a deflated member straight into it.  With worker threads, a member a
 *                 worker inflated whole comes as a Block (its output, taken from the helper
 *                 with npzs_par_take_data): the dict's "buffer", over which the array is made,
 *                 with no copy;
 *   BLOB          kept (keep_blobs) as bytes; then, when the stream has an on_blob callable, it is
 *                 told the bytes kept (a memory budget's charge);
 *   MEMBER_END    sizes and CRC-32s; the dict goes to .members;
 *   END           .done.
 * The GIL is released for every step that may be heavy (inflating, checking values or hashing,
 * waiting for a worker: see heavy()) and for large pushes; it is taken back for the events that
 * build Python objects.  push(data, cheap=True) runs only the cheap steps (records, headers,
 * stored bytes that nothing checks but the CRC-32) and stops before a heavy one, returning the
 * bytes it consumed: async code runs that much on its event loop and hands the rest to a thread.
 * A callback may pause the stream (on_header or on_blob returns False: a memory budget has no
 * room yet): the push returns what it consumed, and the next push or finish() first calls the
 * callback again.  A stream is used by one thread at a time (a second concurrent call raises).
 * Bytes kept (array data and blobs) are capped by max_keep: more is a rejection with code
 * "limit" and rule "LIMIT.max_bytes", raised like the library's own, with the numbers.
 */
#include "ext.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    PyObject_HEAD npzs_parser *p;
    npzs_par *q;         /* threads > 1: the parallel-inflate helper over p */
    PyObject *policy;    /* the Policy the parser enforces (kept alive with it), or NULL */
    PyObject *on_header; /* callable(member dict) -> writable buffer, None, or False (pause); or NULL */
    PyObject *on_blob;   /* callable(member dict, bytes kept) -> True, or False (pause); or NULL */
    int keep_blobs;
    uint64_t max_keep, kept;
    PyObject *members; /* list of completed member dicts */
    PyObject *cur;     /* the member being read */
    PyObject *blob;    /* list of bytes chunks of the current blob */
    Py_buffer out;     /* the destination of the current array */
    int have_out;
    int busy, done, finished;
    /* the current member: stored (its bytes are the input's own), its array's size, the array
     * data bytes the parser took so far, and the input offset of its first data byte when that
     * came straight from a push (zero copy; UINT64_MAX otherwise) */
    int cur_stored, cur_deflated, cur_block;
    uint64_t cur_nbytes, data_got, data_at;
    int checks; /* a policy or hashing: any byte may be checked or hashed (heavy) */
    /* a callback paused the stream: what to do again before the next step */
    enum { PAUSE_NONE, PAUSE_HEADER, PAUSE_BLOB } paused;
    uint64_t pause_len; /* PAUSE_BLOB: the bytes to charge */
    int map_stored;     /* open(): a stored array gets no destination, its data stays in the input */
    /* an error this module raised on its own (max_keep): the library has none */
    const char *own_code, *own_rule, *own_msg;
    uint64_t own_off, own_value, own_needed; /* the limit in force, what the input needed */
    long own_member;
    int broken; /* a Python error stopped the event handling: the stream is unusable */
    /* feed_held(): the buffers of the pushes, kept (exported) until release() or the stream's end,
     * so that the helper's workers read the bytes where they are (npzs_par_stable_input) */
    Py_buffer *held;
    Py_ssize_t nheld, held_cap;
    int holding;  /* every push from the first feed_held() on is held */
    int released; /* release(): the input is gone, the stream takes no more */
} Stream;

/* The current array's data as a Block, when a worker made it whole; NULL otherwise (the data
 * then goes to a destination or the DATA events as before), or with a Python error set. */
static PyObject *take_block(Stream *s, uint64_t nbytes) {
    void *base;
    uint64_t off;
    if (!s->q || npzs_par_take_data(s->q, 16, &base, &off) != 0) return NULL;
    return npzpy_block_new(npzpy_state_of(Py_TYPE(s)), base, (char *)base + off, (Py_ssize_t)nbytes);
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
        if (!shape) {
            Py_DECREF(base);
            return NULL;
        }
        for (uint32_t d = 0; d < n->ndim; d++) {
            PyObject *v = PyLong_FromUnsignedLongLong(n->shape[d]);
            if (!v) {
                Py_DECREF(base);
                Py_DECREF(shape);
                return NULL;
            }
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
        PyObject *nm = PyUnicode_DecodeUTF8(f->name, (Py_ssize_t)f->name_len, "surrogatepass");
        if (!nm) goto fail;
        PyList_SET_ITEM(names, i, nm);
        PyObject *fm = dt_spec(a, f->type, depth + 1);
        if (!fm) goto fail;
        PyList_SET_ITEM(formats, i, fm);
        PyObject *of = PyLong_FromUnsignedLongLong(f->offset);
        if (!of) goto fail;
        PyList_SET_ITEM(offsets, i, of);
        PyObject *ti = f->title ? PyUnicode_DecodeUTF8(f->title, (Py_ssize_t)f->title_len, "surrogatepass")
                                : Py_NewRef(Py_None);
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

/* More to keep than max_keep: len more bytes, after s->kept. */
static int own_reject(Stream *s, uint64_t off, long member, uint64_t len) {
    s->own_code = "limit";
    s->own_rule = "LIMIT.max_bytes";
    s->own_msg = "the arrays and blobs to keep exceed max_bytes";
    s->own_off = off;
    s->own_member = member;
    s->own_value = s->max_keep;
    s->own_needed = len > UINT64_MAX - s->kept ? UINT64_MAX : s->kept + len;
    return -1;
}

/* Whether the parser's next step may be heavy: inflating a deflated member, checking values or
 * hashing, or (with worker threads) waiting for a worker.  Everything else is bounded by the
 * bytes pushed (records, a header within max_header_size, stored bytes copied and CRC-32'd). */
static int heavy(const Stream *s) { return s->q || s->cur_deflated || s->checks; }

/* The destination of the array whose HEADER came (s->cur, s->cur_nbytes): a worker's output
 * (a Block), or on_header's buffer, or None.  0 (or paused), -1: a Python error. */
static int header_dest(Stream *s) {
    PyObject *c = s->cur;
    uint64_t nbytes = s->cur_nbytes;
    if (!s->cur_block) { /* taken once: a pause calls on_header again over the same dict */
        PyObject *block = take_block(s, nbytes);
        if (!block && PyErr_Occurred()) return -1;
        if (block) {
            s->cur_block = 1;
            s->kept += nbytes;
            if (set_item(c, "buffer", block) < 0) return -1;
        }
    }
    PyObject *dst = PyObject_CallOneArg(s->on_header, c);
    if (!dst) return -1;
    if (dst == Py_False) { /* no room yet: called again when the stream goes on */
        Py_DECREF(dst);
        s->paused = PAUSE_HEADER;
        return 0;
    }
    if (dst == Py_None) {
        Py_DECREF(dst);
        return 0;
    }
    if (s->cur_block) { /* the data is where the array was made */
        Py_DECREF(dst);
        PyErr_SetString(PyExc_ValueError,
                        "npzstream: on_header returned a destination for an array made over its buffer");
        return -1;
    }
    int rc = PyObject_GetBuffer(dst, &s->out, PyBUF_WRITABLE | PyBUF_ANY_CONTIGUOUS);
    Py_DECREF(dst);
    if (rc < 0) return -1;
    s->have_out = 1;
    if ((uint64_t)s->out.len < nbytes) {
        release_out(s);
        PyErr_SetString(PyExc_ValueError, "npzstream: on_header returned a buffer smaller than the array");
        return -1;
    }
    s->kept += nbytes;
    if (npzs_data_into(s->p, s->out.buf, (size_t)s->out.len) != 0) {
        release_out(s);
        PyErr_SetString(PyExc_RuntimeError, "npzstream: npzs_data_into refused right after HEADER");
        return -1;
    }
    return 0;
}

/* on_blob told of len more bytes kept (it may pause: told again when the stream goes on). */
static int charge_blob(Stream *s, uint64_t len) {
    PyObject *r = PyObject_CallFunction(s->on_blob, "OK", s->cur, (unsigned long long)len);
    if (!r) return -1;
    if (r == Py_False) {
        s->paused = PAUSE_BLOB;
        s->pause_len = len;
    }
    Py_DECREF(r);
    return 0;
}

/* What a pause left to do, done again (it may pause again). */
static int resume(Stream *s) {
    int what = s->paused;
    s->paused = PAUSE_NONE;
    if (what == PAUSE_HEADER) return header_dest(s);
    if (what == PAUSE_BLOB) return charge_blob(s, s->pause_len);
    return 0;
}

/* What HEADER says of the array; then its destination (header_dest).  -1: a Python error or a
 * rejection of our own. */
static int on_header(Stream *s, const npzs_event *ev) {
    const npzs_array_info *a = ev->array;
    PyObject *c = s->cur;
    PyObject *shape = PyTuple_New(a->ndim);
    if (!shape) return -1;
    for (uint32_t d = 0; d < a->ndim; d++) {
        PyObject *v = PyLong_FromUnsignedLongLong(a->shape[d]);
        if (!v) {
            Py_DECREF(shape);
            return -1;
        }
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
    if (a->nbytes > s->max_keep - s->kept) return own_reject(s, ev->offset, (long)ev->member, a->nbytes);
    return header_dest(s);
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
        s->cur_deflated = ev->method == NPZS_METHOD_DEFLATED;
        s->cur_block = 0;
        s->cur_nbytes = s->data_got = 0;
        s->data_at = UINT64_MAX;
        if (set_item(s->cur, "index", PyLong_FromUnsignedLong(ev->member)) < 0 || set_item(s->cur, "name", name) < 0 ||
            set_item(s->cur, "method",
                     PyUnicode_FromString(ev->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored")) < 0 ||
            set_item(s->cur, "offset", PyLong_FromUnsignedLongLong(ev->offset)) < 0 ||
            set_item(s->cur, "flags", PyLong_FromUnsignedLong(ev->flags)) < 0)
            return -1;
        return 0;
    }
    case NPZS_EV_HEADER: return on_header(s, ev);
    case NPZS_EV_BLOB:
        if (!s->keep_blobs) return 0;
        if (ev->len > s->max_keep - s->kept) return own_reject(s, ev->offset, (long)ev->member, ev->len);
        s->kept += ev->len;
        if (!s->blob && !(s->blob = PyByteArray_FromStringAndSize(NULL, 0))) return -1;
        {
            Py_ssize_t have = PyByteArray_GET_SIZE(s->blob);
            if (PyByteArray_Resize(s->blob, have + (Py_ssize_t)ev->len) < 0) return -1;
            memcpy(PyByteArray_AS_STRING(s->blob) + have, ev->data, ev->len);
        }
        /* kept first (the event's bytes are gone after this call), then charged */
        return s->on_blob ? charge_blob(s, ev->len) : 0;
    case NPZS_EV_MEMBER_END: {
        release_out(s);
        s->cur_deflated = 0;
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
        if (s->data_at != UINT64_MAX && set_item(c, "data_offset", PyLong_FromUnsignedLongLong(s->data_at)) < 0)
            return -1;
        if (ev->sha256) {
            char hex[65];
            for (int i = 0; i < 32; i++) snprintf(hex + 2 * i, 3, "%02x", ev->sha256[i]);
            if (set_item(c, "sha256", PyUnicode_FromString(hex)) < 0) return -1;
        }
        if (ev->kind == NPZS_KIND_BLOB && s->keep_blobs) {
            PyObject *data = s->blob ? PyBytes_FromStringAndSize(PyByteArray_AS_STRING(s->blob),
                                                                 PyByteArray_GET_SIZE(s->blob))
                                     : PyBytes_FromStringAndSize(NULL, 0);
            if (set_item(c, "data", data) < 0) return -1;
            Py_CLEAR(s->blob);
        }
        int rc = PyList_Append(s->members, c);
        Py_CLEAR(s->cur);
        return rc;
    }
    case NPZS_EV_END: s->done = 1; return 0;
    default: return 0;
    }
}

/* ---- the loop -------------------------------------------------------------------------------- */

/* Run the parser over in (NULL after finish), first doing again what a pause left.  The GIL is
 * let go for every heavy step and for large pushes (releasing it costs more than a small cheap
 * step does).  cheap: only cheap steps, with the GIL held; stop before a heavy one (the caller
 * hands the rest of in to a thread).  0: the input was used up, or END came, or a callback
 * paused the stream, or (cheap) a heavy step is next; -1: a Python error is set, -2: rejected
 * (the library's error or our own). */
#define GIL_FREE_MIN (64u << 10)

static int run(Stream *s, npzs_in *in, int cheap) {
    PyThreadState *ts = NULL;
    int rc = NPZS_NEED_INPUT, r = s->paused ? resume(s) : 0;
    while (r == 0 && !s->paused) {
        int hv = heavy(s);
        if (cheap && hv) break;
        int release = !cheap && (hv || !in || in->size - in->pos >= GIL_FREE_MIN);
        if (release && !ts) ts = PyEval_SaveThread();
        else if (!release && ts) {
            PyEval_RestoreThread(ts);
            ts = NULL;
        }
        npzs_event ev;
        rc = npzs_next(s->p, in, &ev); /* through the helper when one is attached */
        if (rc != NPZS_EVENT) break;
        if (ev.type == NPZS_EV_DATA) { /* counted: where the data is, how much came */
            if (ev.pos == 0 && ev.zero_copy) s->data_at = ev.offset;
            s->data_got += ev.len;
            continue;
        }
        if (ev.type == NPZS_EV_BLOB && !s->keep_blobs) continue; /* nothing to do here */
        if (ts) {
            PyEval_RestoreThread(ts);
            ts = NULL;
        }
        r = on_event(s, &ev);
        if (ev.type == NPZS_EV_END) break;
    }
    if (ts) PyEval_RestoreThread(ts);
    if (r < 0) {
        if (s->own_code) return -2;
        s->broken = 1;
        return -1;
    }
    return rc < 0 ? -2 : 0;
}

static PyObject *raise_rejected(Stream *s) {
    PyObject *cls = npzpy_state_of(Py_TYPE(s))->rejected_error;
    PyObject *name = Py_NewRef(Py_None), *kw;
    if (s->own_code) {
        PyObject *c = s->own_member >= 0 && s->cur ? PyDict_GetItemString(s->cur, "name") : NULL;
        if (c) {
            Py_DECREF(name);
            name = Py_NewRef(c);
        }
        kw = Py_BuildValue("{sssKsNsOsssOs(sKK)}", "code", s->own_code, "offset", (unsigned long long)s->own_off,
                           "member", s->own_member >= 0 ? PyLong_FromLong(s->own_member) : Py_NewRef(Py_None), "name",
                           name, "rule", s->own_rule, "content_offset", Py_None, "limit", "max_bytes",
                           (unsigned long long)s->own_value, (unsigned long long)s->own_needed);
        Py_DECREF(name);
        return kw ? npzpy_raise(cls, Py_BuildValue("(s)", s->own_msg), kw) : NULL;
    }
    int code = npzs_error(s->p);
    size_t nl = 0;
    const char *nm = npzs_error_member_name(s->p, &nl);
    if (nm) {
        Py_DECREF(name);
        name = PyBytes_FromStringAndSize(nm, (Py_ssize_t)nl);
        if (!name) return NULL;
    }
    long mi = npzs_error_member(s->p);
    uint64_t co = npzs_error_content_offset(s->p);
    const char *rule = npzs_error_rule(s->p);
    PyObject *member = mi >= 0 ? PyLong_FromLong(mi) : Py_NewRef(Py_None);
    PyObject *coff = co == UINT64_MAX ? Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(co);
    const char *lname; /* a limit's numbers: RejectedError.limit */
    uint64_t lvalue, lneeded;
    PyObject *lim = npzs_error_limit(s->p, &lname, &lvalue, &lneeded)
                        ? Py_BuildValue("(sKK)", lname, (unsigned long long)lvalue, (unsigned long long)lneeded)
                        : Py_NewRef(Py_None);
    kw = Py_BuildValue("{sssKsNsNszsNsNsNsN}", "code", npzs_error_name(code), "offset",
                       (unsigned long long)npzs_error_offset(s->p), "member", member, "name", name, "rule", rule,
                       "content_offset", coff, "detail", npzpy_words(npzs_error_detail(s->p)), "hint",
                       npzpy_words(npzs_error_hint(s->p)), "limit", lim);
    return kw ? npzpy_raise(cls, Py_BuildValue("(N)", npzpy_words(npzs_error_message(s->p))), kw) : NULL;
}

static int enter(Stream *s) {
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream is in use by another call");
        return -1;
    }
    if (s->released) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream's input was released");
        return -1;
    }
    if (s->broken) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream stopped at an exception of its callback");
        return -1;
    }
    s->busy = 1;
    return 0;
}

/* The end of a call: run()'s result as 0, or -1 with the error raised. */
static int settle(Stream *s, int r) {
    s->busy = 0;
    if (r == -2) raise_rejected(s);
    return r < 0 ? -1 : 0;
}

static PyObject *after(Stream *s, int r) { return settle(s, r) < 0 ? NULL : Py_NewRef(Py_None); }

/* A held push's buffer: a slot for it in s->held (NULL with a Python error set). */
static Py_buffer *held_slot(Stream *s) {
    if (s->nheld == s->held_cap) {
        Py_ssize_t n = s->held_cap ? 2 * s->held_cap : 4;
        Py_buffer *h = PyMem_Realloc(s->held, (size_t)n * sizeof *h);
        if (!h) {
            PyErr_NoMemory();
            return NULL;
        }
        s->held = h;
        s->held_cap = n;
    }
    return &s->held[s->nheld];
}

/* The held buffers released: only once nothing reads them (no helper, or after npzs_par_free). */
static void release_held(Stream *s) {
    for (Py_ssize_t i = 0; i < s->nheld; i++) PyBuffer_Release(&s->held[i]);
    PyMem_Free(s->held);
    s->held = NULL;
    s->nheld = s->held_cap = 0;
}

/* Push arg's bytes: 0 and *used (the bytes consumed), or -1 with a Python error set.  Held (the
 * stream holding): the buffer is kept until release(), and the helper reads it in place. */
static int push(Stream *s, PyObject *arg, int cheap, Py_ssize_t *used) {
    if (enter(s) < 0) return -1;
    if (s->own_code || npzs_error(s->p)) return settle(s, -2);
    if (s->finished) {
        s->busy = 0;
        PyErr_SetString(PyExc_RuntimeError, "npzstream: feed() after finish()");
        return -1;
    }
    Py_buffer own, *b = s->holding ? held_slot(s) : &own;
    if (!b || PyObject_GetBuffer(arg, b, PyBUF_SIMPLE) < 0) {
        s->busy = 0;
        return -1;
    }
    if (b != &own) s->nheld++;
    npzs_in in = {b->buf, (size_t)b->len, 0};
    int r = run(s, &in, cheap);
    if (b == &own) PyBuffer_Release(b);
    *used = (Py_ssize_t)in.pos;
    return settle(s, r);
}

static PyObject *Stream_feed(Stream *s, PyObject *arg) {
    Py_ssize_t used;
    if (push(s, arg, 0, &used) < 0) return NULL;
    if (s->paused) { /* only push() callers can go on after a pause */
        PyErr_SetString(PyExc_RuntimeError, "npzstream: a callback paused feed(): use push()");
        return NULL;
    }
    Py_RETURN_NONE;
}

/* feed(), the stream holding from now on: with a helper, this push's bytes and every later one's
 * are read where they are (npzs_par_stable_input: no copy), their buffers kept until release()
 * or the stream's end.  Without a helper nothing reads a push after it returns: a feed(). */
static PyObject *Stream_feed_held(Stream *s, PyObject *arg) {
    if (s->q && !s->holding && !s->busy && !s->released) {
        if (npzs_par_stable_input(s->q, 1) != 0) { /* cannot happen: turning it on */
            PyErr_SetString(PyExc_RuntimeError, "npzstream: npzs_par_stable_input refused");
            return NULL;
        }
        s->holding = 1;
    }
    return Stream_feed(s, arg);
}

/* The end of the stream's input: its helper stops (its workers joined, what it took dropped),
 * then the held buffers are released; the members, format and consumed stay, the stream takes
 * no more bytes.  Called again, nothing. */
static PyObject *Stream_release(Stream *s, PyObject *unused) {
    (void)unused;
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "npzstream: the stream is in use by another call");
        return NULL;
    }
    npzs_par_free(s->q);
    s->q = NULL;
    release_held(s);
    s->released = 1;
    Py_RETURN_NONE;
}

static PyObject *Stream_push(Stream *s, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"data", "cheap", NULL};
    PyObject *data;
    int cheap = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "O|p", kwlist, &data, &cheap)) return NULL;
    Py_ssize_t used;
    if (push(s, data, cheap, &used) < 0) return NULL;
    return PyLong_FromSsize_t(used);
}

/* The end of the input: None (the verdict is END), False (a callback paused the stream: call
 * finish() again when it may go on), or a raised error. */
static PyObject *Stream_finish(Stream *s, PyObject *unused) {
    (void)unused;
    if (enter(s) < 0) return NULL;
    if (s->own_code || npzs_error(s->p)) return after(s, -2);
    if (!s->finished) {
        s->finished = 1;
        npzs_finish(s->p); /* through the helper when one is attached */
    }
    int r = run(s, NULL, 0);
    if (r == 0 && s->paused) {
        s->busy = 0;
        Py_RETURN_FALSE;
    }
    if (r == 0 && !s->done) {
        s->busy = 0;
        PyErr_SetString(PyExc_RuntimeError, "npzstream: no verdict at the end of the input");
        return NULL;
    }
    return after(s, r);
}

/* ---- the type --------------------------------------------------------------------------------- */

static int Stream_init(Stream *s, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"limits", "on_header", "keep_blobs", "max_keep", "threads",
                             "policy", "hash",      "map_stored", "on_blob",  NULL};
    PyObject *limits = NULL, *cb = NULL, *policy = NULL, *blob_cb = NULL;
    int keep = 0, threads = 1, hash = 0, map_stored = 0;
    unsigned long long max_keep = UINT64_MAX;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|OOpKiOppO", kwlist, &limits, &cb, &keep, &max_keep, &threads, &policy,
                                     &hash, &map_stored, &blob_cb))
        return -1;
    if (policy == Py_None) policy = NULL;
    if (policy && !PyObject_TypeCheck(policy, npzpy_state_of(Py_TYPE(s))->policy)) {
        PyErr_SetString(PyExc_TypeError, "policy must be a compiled npzstream._npzstream.Policy");
        return -1;
    }
    if (hash && !npzs_sha256_built()) {
        PyErr_SetString(PyExc_ValueError,
                        "hash=True: this build of npzstream has no SHA-256 (it needs OpenSSL's libcrypto)");
        return -1;
    }
    if (threads < 1 || threads > 64) {
        PyErr_SetString(PyExc_ValueError, "threads must be between 1 and 64");
        return -1;
    }
    npzs_limits lim;
    if (npzpy_read_limits(limits, &lim) < 0) return -1;
    if (cb == Py_None) cb = NULL;
    if (cb && !PyCallable_Check(cb)) {
        PyErr_SetString(PyExc_TypeError, "on_header must be callable");
        return -1;
    }
    if (blob_cb == Py_None) blob_cb = NULL;
    if (blob_cb && !PyCallable_Check(blob_cb)) {
        PyErr_SetString(PyExc_TypeError, "on_blob must be callable");
        return -1;
    }
    if (s->p) {
        PyErr_SetString(PyExc_RuntimeError, "Stream.__init__ called twice");
        return -1;
    }
    s->p = npzs_new(&lim, NULL);
    if (!s->p) {
        PyErr_NoMemory();
        return -1;
    }
    if ((policy && npzs_policy_use(s->p, npzpy_policy_get(policy)) != 0) ||
        (hash && npzs_hash(s->p, NPZS_HASH_SHA256) != 0)) {
        PyErr_NoMemory();
        return -1;
    }
    s->policy = policy ? Py_NewRef(policy) : NULL;
    if (threads > 1) { /* 128 MiB of members held a worker, as the command line's -j */
        s->q = npzs_par_new(s->p, (unsigned)threads, (uint64_t)threads << 27);
        if (!s->q) {
            PyErr_NoMemory();
            return -1;
        }
        /* a validator (no arrays, no blobs kept, no values checked or hashed): the workers keep only
         * each member's header */
        if (!cb && !keep && !policy && !hash && npzs_par_skip_data(s->q) != 0) {
            PyErr_NoMemory();
            return -1;
        }
    }
    s->on_header = cb ? Py_NewRef(cb) : NULL;
    s->on_blob = blob_cb ? Py_NewRef(blob_cb) : NULL;
    s->checks = policy || hash;
    s->keep_blobs = keep;
    s->map_stored = map_stored;
    s->max_keep = max_keep;
    s->own_member = -1;
    s->members = PyList_New(0);
    return s->members ? 0 : -1;
}

/* The references Stream_clear gives back (the policy's goes in Stream_dealloc, after the parser
 * that used it). */
#define STREAM_REFS(X) X(on_header) X(on_blob) X(members) X(cur) X(blob)
#define STREAM_VISIT(f) Py_VISIT(s->f);
#define STREAM_CLEAR(f) Py_CLEAR(s->f);

static int Stream_traverse(Stream *s, visitproc visit, void *arg) {
    Py_VISIT(Py_TYPE(s)); /* a heap type */
    Py_VISIT(s->policy);
    STREAM_REFS(STREAM_VISIT)
    /* s->out.obj is not visited: the export the stream holds would make it garbage with the
     * stream, and a memoryview cleared while it has an export (memory_clear) drops its managed
     * buffer, so the release in Stream_clear then freed it through a NULL pointer (a segfault in
     * gc.collect()).  Unvisited, it outlives the cycle and is released by Stream_clear; a
     * destination that refers back to the stream would keep the cycle alive (a leak, never a
     * crash). */
    return 0;
}

static int Stream_clear(Stream *s) {
    release_out(s);
    STREAM_REFS(STREAM_CLEAR)
    return 0;
}

static void Stream_dealloc(Stream *s) {
    PyObject_GC_UnTrack(s);
    Stream_clear(s);
    npzs_par_free(s->q);
    release_held(s); /* after the helper that read them */
    npzs_free(s->p);
    Py_CLEAR(s->policy); /* after the parser that used it */
    npzpy_free((PyObject *)s);
}

static PyObject *Stream_get_members(Stream *s, void *c) {
    (void)c;
    return Py_NewRef(s->members ? s->members : Py_None);
}
static PyObject *Stream_get_done(Stream *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->done);
}
static PyObject *Stream_get_format(Stream *s, void *c) {
    (void)c;
    npzs_format f = s->p ? npzs_format_of(s->p) : NPZS_FORMAT_UNKNOWN;
    if (f == NPZS_FORMAT_NPY) return PyUnicode_FromString("npy");
    if (f == NPZS_FORMAT_NPZ) return PyUnicode_FromString("npz");
    Py_RETURN_NONE;
}
static PyObject *Stream_get_consumed(Stream *s, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(s->p ? npzs_consumed(s->p) : 0);
}
static PyObject *Stream_get_ahead(Stream *s, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(npzs_par_used(s->q));
}
static PyObject *Stream_get_memory(Stream *s, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(s->p ? npzs_memory(s->p) : 0);
}
static PyObject *Stream_get_helper_memory(Stream *s, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(npzs_par_memory(s->q));
}
static PyObject *Stream_get_paused(Stream *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->paused != PAUSE_NONE);
}
static PyObject *Stream_get_heavy(Stream *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->p && heavy(s));
}
static PyObject *Stream_get_kept(Stream *s, void *c) {
    (void)c;
    return PyLong_FromUnsignedLongLong(s->kept);
}
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
    {"helper_memory", (getter)Stream_get_helper_memory, NULL,
     "bytes the worker threads' helper holds now (input taken ahead, outputs, its cache); 0 without one", NULL},
    {"kept", (getter)Stream_get_kept, NULL, "array and blob bytes kept so far", NULL},
    {"paused", (getter)Stream_get_paused, NULL,
     "a callback paused the stream: the next push or finish() calls it again", NULL},
    {"heavy", (getter)Stream_get_heavy, NULL,
     "the next step may be heavy (inflate, checks, a worker): push(cheap=True) does nothing", NULL},
    {"direct", (getter)Stream_get_direct, NULL,
     "(pos, left) of the current stored array's data to read in place, or None", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Stream_methods[] = {
    {"feed", (PyCFunction)Stream_feed, METH_O, "feed(data): push bytes (any bytes-like object)"},
    {"feed_held", (PyCFunction)Stream_feed_held, METH_O,
     "feed_held(data): feed(data), this push's buffer and every later one's kept until release(): worker threads "
     "read the bytes where they are, with no copy (do not change them before release())"},
    {"release", (PyCFunction)Stream_release, METH_NOARGS,
     "release(): the end of the input: the worker threads stop, the held buffers are released; no more bytes"},
    {"push", (PyCFunction)(void (*)(void))Stream_push, METH_VARARGS | METH_KEYWORDS,
     "push(data, cheap=False) -> bytes consumed: less than all after a pause, or (cheap) before a heavy step"},
    {"finish", (PyCFunction)Stream_finish, METH_NOARGS,
     "finish(): the end of the input; raises unless valid; False after a pause"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Stream_slots[] = {
    {Py_tp_doc,
     (void *)"Stream(limits=None, on_header=None, keep_blobs=False, max_keep=2**64-1, threads=1, policy=None, "
             "hash=False, map_stored=False, on_blob=None): the parser"},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_init, (void *)Stream_init},
    {Py_tp_dealloc, (void *)Stream_dealloc},
    {Py_tp_traverse, (void *)Stream_traverse},
    {Py_tp_clear, (void *)Stream_clear},
    {Py_tp_methods, Stream_methods},
    {Py_tp_getset, Stream_getset},
    {0, NULL},
};

PyType_Spec npzpy_stream_spec = {"npzstream._npzstream.Stream", sizeof(Stream), 0, NPZPY_TPFLAGS | Py_TPFLAGS_HAVE_GC,
                                 Stream_slots};
