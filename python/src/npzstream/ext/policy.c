/*
 * policy.c -- Policy: a policy compiled from its JSON text (npzs_policy_new), shared read-only by
 * the streams that enforce it (each keeps a reference for as long as its parser uses it).  A text
 * the library refuses raises npzstream.PolicyError with the library's message, field, line,
 * column and offset.
 */
#include "ext.h"

typedef struct {
    PyObject_HEAD npzs_policy *pol;
} Policy;

npzs_policy *npzpy_policy_get(PyObject *policy) { return ((Policy *)policy)->pol; }

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
    PyObject *cls = npzpy_state_of(Py_TYPE(self))->policy_error;
    PyObject *line = e.line ? PyLong_FromUnsignedLong(e.line) : Py_NewRef(Py_None);
    PyObject *col = e.line ? PyLong_FromUnsignedLong(e.column) : Py_NewRef(Py_None);
    PyObject *kwd = Py_BuildValue("{sNsNsNsK}", "line", line, "column", col, "path", npzpy_words(e.path), "offset",
                                  (unsigned long long)e.offset);
    npzpy_raise(cls, kwd ? Py_BuildValue("(N)", npzpy_words(e.message)) : NULL, kwd);
    return -1;
}

static void Policy_dealloc(Policy *self) {
    npzs_policy_free(self->pol);
    npzpy_free((PyObject *)self);
}

static PyType_Slot Policy_slots[] = {
    {Py_tp_doc, (void *)"Policy(text): a policy compiled from its JSON text (raises PolicyError)"},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_init, (void *)Policy_init},
    {Py_tp_dealloc, (void *)Policy_dealloc},
    {0, NULL},
};

PyType_Spec npzpy_policy_spec = {"npzstream._npzstream.Policy", sizeof(Policy), 0, NPZPY_TPFLAGS, Policy_slots};
