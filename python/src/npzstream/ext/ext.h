/*
 * ext.h -- what the files of the extension npzstream._npzstream share.  One file a concern:
 *   module.c  the module: its state, its multi-phase init (the exceptions imported from
 *             npzstream._errors, the types made), its functions and constants;
 *   stream.c  Stream: the parser, fed bytes, its events made into member dicts and arrays;
 *   policy.c  Policy: a compiled policy;
 *   block.c   Block: an array's data where a worker thread inflated it;
 *   map.c     Map: a private, read-only mapping of a file;
 *   inv.c     Inventory: the inventory walker (npzstream_inv.h), for keep_going=True;
 *   limits.c  the limits: the library's table, as a dict and from one.
 *
 * Nothing is global: the types are heap types made for the module (PyType_FromModuleAndSpec),
 * and a method finds the module's state through its own object's type (npzpy_state_of; no type
 * here can be subclassed, so an object's type is always the one made for its module).
 */
#ifndef NPZPY_EXT_H
#define NPZPY_EXT_H

#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "npzstream.h"

#if PY_VERSION_HEX < 0x030A0000
static inline PyObject *Py_NewRef(PyObject *o) {
    Py_INCREF(o);
    return o;
}
#endif

/* The module's state: its types, and the exception classes it raises (npzstream._errors's). */
typedef struct {
    PyTypeObject *stream, *policy, *block, *map, *inv;
    PyObject *rejected_error; /* RejectedError: the input is rejected */
    PyObject *policy_error;   /* PolicyError: a policy that does not compile */
} npzpy_state;
/* every reference the state holds, for the module's traverse and clear */
#define NPZPY_STATE_REFS(X) X(stream) X(policy) X(block) X(map) X(inv) X(rejected_error) X(policy_error)

/* The state of the module the type t (one of ours) was made for. */
/* Text from the library.  Every string that may carry bytes of the input or of a policy is
 * decoded with a codec that cannot fail on them (a strict decode would raise UnicodeDecodeError,
 * an exception no entry point documents):
 *   words (a message, a detail, a hint, a policy fault's path and message): whole UTF-8 with names
 *     escaped (src/bytes/text.h), decoded with "replace", which then never replaces anything;
 *   a field name or title: "surrogatepass", so that '\ud800' (a header's Python escape, which
 *     np.load takes) comes back as exactly that string (src/bytes/text.h);
 *   a member's name: bytes (RejectedError.name, the member dicts), decoded by the package. */
static inline PyObject *npzpy_words(const char *s) {
    return s ? PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "replace") : Py_NewRef(Py_None);
}

/* Raises cls(*args, **kw), both references taken (either NULL: an error is already set); NULL. */
static inline PyObject *npzpy_raise(PyObject *cls, PyObject *args, PyObject *kw) {
    PyObject *e = args && kw ? PyObject_Call(cls, args, kw) : NULL;
    Py_XDECREF(args);
    Py_XDECREF(kw);
    if (e) {
        PyErr_SetObject(cls, e);
        Py_DECREF(e);
    }
    return NULL;
}

static inline npzpy_state *npzpy_state_of(PyTypeObject *t) { return (npzpy_state *)PyType_GetModuleState(t); }

/* The end of a type's dealloc: the object freed, then the reference it held to its type (a heap
 * type: each object holds one). */
static inline void npzpy_free(PyObject *o) {
    PyTypeObject *tp = Py_TYPE(o);
    tp->tp_free(o);
    Py_DECREF(tp);
}

/* The types' flags: immutable, as static types are (a flag of 3.10 and later). */
#ifdef Py_TPFLAGS_IMMUTABLETYPE
#define NPZPY_TPFLAGS (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE)
#else
#define NPZPY_TPFLAGS Py_TPFLAGS_DEFAULT
#endif

/* The types, as module.c makes them. */
extern PyType_Spec npzpy_stream_spec, npzpy_policy_spec, npzpy_block_spec, npzpy_map_spec, npzpy_inv_spec;

/* policy.c: the compiled policy a Policy holds (its type checked by the caller). */
npzs_policy *npzpy_policy_get(PyObject *policy);

/* block.c: a Block over the len bytes at data, in the malloc'd allocation base, which the Block
 * frees (base is freed here when no Block can be made: NULL, a Python error set). */
PyObject *npzpy_block_new(npzpy_state *st, void *base, char *data, Py_ssize_t len);

/* limits.c: limits (a dict of field -> int, or None) as npzs_limits (0), or a Python error (-1);
 * default_limits() of the module: the library's defaults as that dict. */
int npzpy_read_limits(PyObject *d, npzs_limits *lim);
PyObject *npzpy_default_limits(PyObject *m, PyObject *unused);

#endif
