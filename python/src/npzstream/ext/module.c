/*
 * module.c -- the module npzstream._npzstream: libnpzstream compiled in (the library's sources
 * are compiled with these files, so the structs are the C compiler's and no layout is copied by
 * hand), for the package's Python modules.
 *
 * Multi-phase init (PEP 489): PyInit__npzstream only returns the definition; exec_module makes
 * each module object's state: the exception classes, imported from npzstream._errors (where the
 * package defines them, in Python), and the types, made for this module.  Nothing is global, so
 * every module object (a subinterpreter's, a re-import's) has its own.
 */
#include "ext.h"

#include "policy/policy.h" /* NPZS_POLICY_MAX_TEXT: how much of a policy file the package reads */
#include "bytes/text.h"    /* npzs_text_name: a key in a policy fault's path, as the library writes it */
#include "sandbox.h"       /* cli_confine: the command line's sandbox, for a confined scan's workers */

/* The hint of a rule id ("what to do"), or None. */
static PyObject *mod_rule_hint(PyObject *m, PyObject *arg) {
    (void)m;
    const char *r = PyUnicode_AsUTF8(arg);
    if (!r) return NULL;
    const char *h = npzs_rule_hint(r);
    if (!h) Py_RETURN_NONE;
    return PyUnicode_FromString(h);
}

/* A key as the library writes it in a policy fault's path (text.h, npzs_text_name: hidden
 * characters escaped, at most 64 bytes of text): the package names the fields of a policy it
 * wrote from a dict so, when the library's JSON reader refused the text before any path. */
static PyObject *mod_name_text(PyObject *m, PyObject *arg) {
    (void)m;
    PyObject *b = PyUnicode_AsEncodedString(arg, "utf-8", "surrogatepass");
    if (!b) return NULL;
    char t[NPZS_TEXT_NAME_CAP];
    size_t n = npzs_text_name(t, sizeof t, PyBytes_AS_STRING(b), (size_t)PyBytes_GET_SIZE(b), 0);
    Py_DECREF(b);
    return PyUnicode_DecodeUTF8(t, (Py_ssize_t)n, "strict");
}

/* _confine(paths, hashing): this process confined as `npzstream check` confines itself (sandbox.h):
 * reading only the files named in paths (a sequence of str or bytes), no writes but to the
 * descriptors open now, no exec, sockets or new processes.  For a worker process that has no other
 * thread (npzstream.scan(sandbox=True)); cannot be undone.  OSError when a layer failed to apply. */
static PyObject *mod_confine(PyObject *m, PyObject *args) {
    (void)m;
    PyObject *seq, *fast;
    int hashing;
    if (!PyArg_ParseTuple(args, "Op:_confine", &seq, &hashing)) return NULL;
    if (!(fast = PySequence_Fast(seq, "_confine: paths must be a sequence"))) return NULL;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    PyObject **items = PySequence_Fast_ITEMS(fast);
    PyObject **bytes = PyMem_Calloc((size_t)n + 1, sizeof *bytes);
    const char **names = PyMem_Calloc((size_t)n + 1, sizeof *names);
    PyObject *result = NULL;
    Py_ssize_t got = 0;
    if (!bytes || !names) {
        PyErr_NoMemory();
        goto done;
    }
    for (; got < n; got++) {
        if (!PyUnicode_FSConverter(items[got], &bytes[got])) goto done;
        names[got] = PyBytes_AS_STRING(bytes[got]);
    }
    cli_confine_spec s = {.prog = "npzstream", .read_files = names, .n_read_files = (size_t)n, .hashing = hashing};
    if (cli_confine(&s) < 0) {
        PyErr_SetString(PyExc_OSError, "npzstream: the sandbox could not be applied (said on stderr)");
        goto done;
    }
    result = Py_None;
    Py_INCREF(result);
done:
    for (Py_ssize_t i = 0; bytes && i < got; i++) Py_DECREF(bytes[i]);
    PyMem_Free(bytes);
    PyMem_Free(names);
    Py_DECREF(fast);
    return result;
}

static PyObject *mod_version(PyObject *m, PyObject *unused) {
    (void)m;
    (void)unused;
    unsigned long v = npzs_version();
    return PyUnicode_FromFormat("%lu.%lu.%lu", v >> 16, (v >> 8) & 0xFF, v & 0xFF);
}

static PyMethodDef mod_methods[] = {
    {"default_limits", npzpy_default_limits, METH_NOARGS, "the library's default limits (npzs_limits_default)"},
    {"rule_hint", mod_rule_hint, METH_O, "what the user can do about a rule id, or None"},
    {"library_version", mod_version, METH_NOARGS, "the version of the libnpzstream compiled in"},
    {"name_text", mod_name_text, METH_O, "a key as the library writes it in a policy fault's path"},
    {"_confine", mod_confine, METH_VARARGS,
     "confine this process to reading the files named (npzstream.scan(sandbox=True))"},
    {NULL, NULL, 0, NULL},
};

/* The type of spec, made for m into *slot; public: also the module's attribute of its name. */
static int add_type(PyObject *m, PyType_Spec *spec, PyTypeObject **slot, int public) {
    *slot = (PyTypeObject *)PyType_FromModuleAndSpec(m, spec, NULL);
    if (!*slot) return -1;
    return public ? PyModule_AddType(m, *slot) : 0;
}

/* The exception class name of npzstream._errors, into *slot. */
static int import_error(PyObject *errors, const char *name, PyObject **slot) {
    *slot = PyObject_GetAttrString(errors, name);
    return *slot ? 0 : -1;
}

static int exec_module(PyObject *m) {
    npzpy_state *st = PyModule_GetState(m);
    /* the package's own module, which imports nothing of ours at its top: no import cycle */
    PyObject *errors = PyImport_ImportModule("npzstream._errors");
    if (!errors) return -1;
    int rc = import_error(errors, "RejectedError", &st->rejected_error) < 0 ||
             import_error(errors, "PolicyError", &st->policy_error) < 0;
    Py_DECREF(errors);
    if (rc || add_type(m, &npzpy_stream_spec, &st->stream, 1) < 0 ||
        add_type(m, &npzpy_policy_spec, &st->policy, 1) < 0 || add_type(m, &npzpy_map_spec, &st->map, 1) < 0 ||
        add_type(m, &npzpy_inv_spec, &st->inv, 1) < 0 ||
        add_type(m, &npzpy_block_spec, &st->block, 0) < 0 || /* made by the stream only */
        PyModule_AddIntConstant(m, "SHA256", npzs_sha256_built()) < 0 ||
        PyModule_AddIntConstant(m, "POLICY_MAX_TEXT", NPZS_POLICY_MAX_TEXT) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_NPY_TRAILING", NPZS_LENIENT_NPY_TRAILING) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_HEADER_NEWLINE", NPZS_LENIENT_HEADER_NEWLINE) < 0 ||
        PyModule_AddIntConstant(m, "LENIENT_FAST_INFLATE", NPZS_LENIENT_FAST_INFLATE) < 0 ||
        PyModule_AddIntConstant(m, "INFLATE_ZLIB", NPZS_INFLATE_ZLIB) < 0 ||
        PyModule_AddIntConstant(m, "FAST_INFLATE", npzs_fast_inflate()) < 0)
        return -1; /* what was made so far is released by mod_clear, with the module */
    return 0;
}

/* (3.9 and later call these only once the state is allocated) */
static int mod_traverse(PyObject *m, visitproc visit, void *arg) {
    npzpy_state *st = PyModule_GetState(m);
#define VISIT(f) Py_VISIT(st->f);
    NPZPY_STATE_REFS(VISIT)
#undef VISIT
    return 0;
}

static int mod_clear(PyObject *m) {
    npzpy_state *st = PyModule_GetState(m);
#define CLEAR(f) Py_CLEAR(st->f);
    NPZPY_STATE_REFS(CLEAR)
#undef CLEAR
    return 0;
}

static void mod_free(void *m) { mod_clear((PyObject *)m); }

static PyModuleDef_Slot mod_slots[] = {
    {Py_mod_exec, (void *)exec_module},
    {0, NULL},
};

static struct PyModuleDef moddef = {
    PyModuleDef_HEAD_INIT,         .m_name = "_npzstream",   .m_doc = "libnpzstream, compiled in",
    .m_size = sizeof(npzpy_state), .m_methods = mod_methods, .m_slots = mod_slots,
    .m_traverse = mod_traverse,    .m_clear = mod_clear,     .m_free = mod_free,
};

PyMODINIT_FUNC PyInit__npzstream(void) { return PyModuleDef_Init(&moddef); }
