/*
 * map.c -- Map: a private, read-only mapping of a file (open()).
 * PROT_READ and MAP_PRIVATE: the arrays over it cannot write it, it costs no private memory and no
 * commit charge (a read-only private mapping is not accounted, so a file larger than RAM maps).
 * It is unmapped with its last reference: the arrays made over it hold one (ndarray.base), so
 * there is no close() that could leave an array pointing at unmapped memory.
 */
#include "ext.h"

#include <string.h>

#if defined(__unix__) || defined(__APPLE__)
#define NPZS_HAVE_MMAP 1
#include <sys/mman.h>
#endif

typedef struct {
    PyObject_HEAD void *addr;
    Py_ssize_t len;
} Map;

static int Map_init(Map *self, PyObject *args, PyObject *kw) {
    static char *kwlist[] = {"fd", "length", "populate", NULL};
    int fd, populate = 0;
    Py_ssize_t len;
    if (!PyArg_ParseTupleAndKeywords(args, kw, "in|p", kwlist, &fd, &len, &populate)) return -1;
    if (self->addr) {
        PyErr_SetString(PyExc_RuntimeError, "Map.__init__ called twice");
        return -1;
    }
    if (len < 0) {
        PyErr_SetString(PyExc_ValueError, "length must be >= 0");
        return -1;
    }
    if (len == 0) return 0; /* nothing to map: an empty buffer */
#ifdef NPZS_HAVE_MMAP
    int flags = MAP_PRIVATE;
#ifdef MAP_POPULATE
    if (populate) flags |= MAP_POPULATE;
#endif
    void *a;
    Py_BEGIN_ALLOW_THREADS a = mmap(NULL, (size_t)len, PROT_READ, flags, fd, 0);
    Py_END_ALLOW_THREADS if (a == MAP_FAILED) {
        PyErr_SetFromErrno(PyExc_OSError);
        return -1;
    }
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
    npzpy_free((PyObject *)self);
}

static int Map_getbuffer(Map *self, Py_buffer *view, int flags) {
    static char empty;
    return PyBuffer_FillInfo(view, (PyObject *)self, self->addr ? self->addr : &empty, self->len, 1, flags);
}

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
    else {
        PyErr_Format(PyExc_ValueError, "unknown advice %s", a);
        return NULL;
    }
    if (!self->addr) Py_RETURN_FALSE;
    if (madvise(self->addr, (size_t)self->len, adv) != 0) {
        PyErr_SetFromErrno(PyExc_OSError);
        return NULL;
    }
    Py_RETURN_TRUE;
#else
    (void)self;
    Py_RETURN_FALSE;
#endif
}

static Py_ssize_t Map_length(Map *self) { return self->len; }

static PyMethodDef Map_methods[] = {
    {"madvise", (PyCFunction)Map_madvise, METH_O, "madvise(advice): normal, sequential, random, willneed, dontneed"},
    {NULL, NULL, 0, NULL},
};

static PyType_Slot Map_slots[] = {
    {Py_tp_doc,
     (void *)"Map(fd, length, populate=False): a private read-only mapping of a file, unmapped with its last "
             "reference"},
    {Py_tp_new, (void *)PyType_GenericNew},
    {Py_tp_init, (void *)Map_init},
    {Py_tp_dealloc, (void *)Map_dealloc},
    {Py_tp_methods, Map_methods},
    {Py_bf_getbuffer, (void *)Map_getbuffer},
    {Py_sq_length, (void *)Map_length},
    {0, NULL},
};

PyType_Spec npzpy_map_spec = {"npzstream._npzstream.Map", sizeof(Map), 0, NPZPY_TPFLAGS, Map_slots};
