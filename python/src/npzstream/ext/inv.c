/*
 * inv.c -- Inventory: the fail-closed inventory walker (npzstream_inv.h) for keep_going=True.
 * Fed the same bytes as the Stream from the first; told where the Stream's error is
 * (check_after), it checks each later member on its own.  Its members are dicts as the package
 * makes Members of them (npzstream._validate): the framing, what the content is when checked, and
 * the member's own error (a dict: code, rule, message, offset, content_offset), or None.
 */
#include "ext.h"

#include <stdint.h>
#include <string.h>

#include "npzstream_inv.h"

typedef struct {
    PyObject_HEAD npzs_inv *v;
    int finished;
} Inventory;

static int Inventory_init(Inventory *s, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"limits", NULL};
    PyObject *limits = NULL;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "|O", kwlist, &limits)) return -1;
    npzs_limits lim;
    if (npzpy_read_limits(limits, &lim) < 0) return -1;
    if (s->v) {
        PyErr_SetString(PyExc_RuntimeError, "Inventory.__init__ called twice");
        return -1;
    }
    s->v = npzs_inv_new(&lim, NULL);
    if (!s->v) {
        PyErr_NoMemory();
        return -1;
    }
    return 0;
}

static void Inventory_dealloc(Inventory *s) {
    npzs_inv_free(s->v);
    npzpy_free((PyObject *)s);
}

static int ready(Inventory *s) {
    if (s->v && !s->finished) return 0;
    PyErr_SetString(PyExc_RuntimeError,
                    s->v ? "npzstream: Inventory used after finish()" : "npzstream: Inventory not initialised");
    return -1;
}

static PyObject *Inventory_check_after(Inventory *s, PyObject *arg) {
    if (ready(s) < 0) return NULL;
    unsigned long long off = PyLong_AsUnsignedLongLong(arg);
    if (off == (unsigned long long)-1 && PyErr_Occurred()) return NULL;
    npzs_inv_check_after(s->v, off);
    Py_RETURN_NONE;
}

static PyObject *Inventory_feed(Inventory *s, PyObject *arg) {
    if (ready(s) < 0) return NULL;
    Py_buffer b;
    if (PyObject_GetBuffer(arg, &b, PyBUF_SIMPLE) < 0) return NULL;
    int rc = npzs_inv_push(s->v, b.buf, (size_t)b.len);
    PyBuffer_Release(&b);
    if (rc) return PyErr_NoMemory(); /* the listing stopped (npzs_inv_error says where) */
    Py_RETURN_NONE;
}

static PyObject *Inventory_finish(Inventory *s, PyObject *unused) {
    (void)unused;
    if (ready(s) < 0) return NULL;
    s->finished = 1;
    npzs_inv_finish(s->v);
    Py_RETURN_NONE;
}

/* An error as a dict (code, rule, message, offset, content_offset, limit): limit (NULL: none) with
 * its value and need is a limit's numbers, as the tuple RejectedError.limit takes them. */
static PyObject *error_dict(int code, const char *rule, const char *message, uint64_t off, uint64_t coff,
                            const char *limit, uint64_t value, uint64_t needed) {
    PyObject *co = coff == UINT64_MAX ? Py_NewRef(Py_None) : PyLong_FromUnsignedLongLong(coff);
    if (!co) return NULL;
    PyObject *lim = limit ? Py_BuildValue("(sKK)", limit, (unsigned long long)value, (unsigned long long)needed)
                          : Py_NewRef(Py_None);
    if (!lim) {
        Py_DECREF(co);
        return NULL;
    }
    return Py_BuildValue("{ssszsNsKsNsN}", "code", npzs_error_name(code), "rule", rule, "message", npzpy_words(message),
                         "offset", (unsigned long long)off, "content_offset", co, "limit", lim);
}

static const char *source_name(unsigned source) {
    return source == (NPZS_INV_LOCAL | NPZS_INV_CENTRAL) ? "local+central"
           : source == NPZS_INV_CENTRAL                  ? "central"
                                                         : "local";
}

static const char *method_name(int method) {
    return method == NPZS_METHOD_STORED ? "stored" : method == NPZS_METHOD_DEFLATED ? "deflated" : "other";
}

static PyObject *member_dict(const npzs_inv_member *m) {
    PyObject *err = m->error ? error_dict(m->error, m->rule, m->message, m->error_offset, m->content_offset, m->limit,
                                          m->limit_value, m->limit_needed)
                             : Py_NewRef(Py_None);
    if (!err) return NULL;
    int arr = m->kind == NPZS_KIND_ARRAY && m->dtype[0];
    PyObject *shape = arr ? PyTuple_New(m->ndim) : Py_NewRef(Py_None);
    for (uint32_t k = 0; arr && shape && k < m->ndim; k++) {
        /* past the 8 dimensions the walker keeps: unknown (-1) */
        PyObject *d = k < 8 ? PyLong_FromUnsignedLongLong(m->shape[k]) : PyLong_FromLong(-1);
        if (!d) Py_CLEAR(shape);
        else PyTuple_SET_ITEM(shape, k, d);
    }
    if (!shape) {
        Py_DECREF(err);
        return NULL;
    }
    const char *kind = m->kind == NPZS_KIND_ARRAY ? "array" : m->kind == NPZS_KIND_BLOB ? "blob" : NULL;
    return Py_BuildValue("{sy#sIsssssKsKsKsKsOszszszsNsOsNsN}", "name", m->name, (Py_ssize_t)m->name_len, "flags",
                         m->flags, "source", source_name(m->source), "method", method_name(m->method), "offset",
                         (unsigned long long)m->offset, "csize", (unsigned long long)m->csize, "size",
                         (unsigned long long)m->size, "crc32", (unsigned long long)m->crc32, "checked",
                         m->checked ? Py_True : Py_False, "kind", kind, "sniff",
                         m->sniff ? npzs_sniff_name(m->sniff) : NULL, "dtype", arr ? m->dtype : NULL, "shape", shape,
                         "fortran_order", arr ? (m->fortran_order ? Py_True : Py_False) : Py_None, "nbytes",
                         arr ? PyLong_FromUnsignedLongLong(m->nbytes) : Py_NewRef(Py_None), "error", err);
}

static PyObject *Inventory_get_members(Inventory *s, void *c) {
    (void)c;
    size_t n = s->v ? npzs_inv_count(s->v) : 0;
    PyObject *l = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; l && i < n; i++) {
        PyObject *d = member_dict(npzs_inv_get(s->v, i));
        if (!d) Py_CLEAR(l);
        else PyList_SET_ITEM(l, (Py_ssize_t)i, d);
    }
    return l;
}

/* Where the listing itself stopped (INV.framing, INV.truncated, INV.limit, out of memory), or None. */
static PyObject *Inventory_get_error(Inventory *s, void *c) {
    (void)c;
    const char *rule = NULL;
    uint64_t off = 0;
    int code = s->v ? npzs_inv_error(s->v, &rule, &off) : 0;
    if (!code) Py_RETURN_NONE;
    const char *msg = "";
    for (size_t i = 0; rule && i < npzs_rule_count(); i++)
        if (!strcmp(npzs_rule_id(i), rule)) msg = npzs_rule_message(i);
    const char *lname;
    uint64_t lvalue, lneeded;
    if (!npzs_inv_error_limit(s->v, &lname, &lvalue, &lneeded)) lname = NULL;
    return error_dict(code, rule, msg, off, UINT64_MAX, lname, lvalue, lneeded);
}

static PyObject *Inventory_get_zip(Inventory *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->v && npzs_inv_is_zip(s->v));
}
static PyObject *Inventory_get_complete(Inventory *s, void *c) {
    (void)c;
    return PyBool_FromLong(s->v && npzs_inv_complete(s->v));
}

static PyGetSetDef Inventory_getset[] = {
    {"members", (getter)Inventory_get_members, NULL, "the members listed so far (dicts), in the order met", NULL},
    {"error", (getter)Inventory_get_error, NULL, "where the listing stopped (a dict), or None", NULL},
    {"zip", (getter)Inventory_get_zip, NULL, "the input started as a ZIP archive", NULL},
    {"complete", (getter)Inventory_get_complete, NULL, "the end record was reached", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef Inventory_methods[] = {
    {"check_after", (PyCFunction)Inventory_check_after, METH_O,
     "check_after(offset): members whose local header starts after offset are checked on their own"},
    {"feed", (PyCFunction)Inventory_feed, METH_O, "feed(data): the next bytes of the input (all taken)"},
    {"finish", (PyCFunction)Inventory_finish, METH_NOARGS, "finish(): the end of the input"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Inventory_slots[] = {
    {Py_tp_doc, (void *)"Inventory(limits=None): every member the stream can frame after the first error"},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_init, (void *)Inventory_init},
    {Py_tp_dealloc, (void *)Inventory_dealloc},
    {Py_tp_methods, Inventory_methods},
    {Py_tp_getset, Inventory_getset},
    {0, NULL},
};

PyType_Spec npzpy_inv_spec = {"npzstream._npzstream.Inventory", sizeof(Inventory), 0, NPZPY_TPFLAGS, Inventory_slots};
