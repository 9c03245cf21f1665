/*
 * limits.c -- the limits, as the library's table says them (NPZS_LIMITS_MAP, the one source of
 * their names, widths and defaults): a dict of field -> int read into npzs_limits, and the
 * library's defaults as that dict (npzstream.DEFAULT_LIMITS).
 */
#include "ext.h"

#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* the limits: the library's table (NPZS_LIMITS_MAP), and the lenient bits */
static const struct {
    const char *name;
    int wide;
    size_t off;
} LIMITS[] = {
#define X(f, bits, def, lo, hi, opt, help) {#f, (bits) == 64, offsetof(npzs_limits, f)},
    NPZS_LIMITS_MAP(X)
#undef X
        {"lenient", 0, offsetof(npzs_limits, lenient)},
};

/* limits: a dict of field -> int; every value range-checked (never wrapped), every field known */
int npzpy_read_limits(PyObject *d, npzs_limits *lim) {
    npzs_limits_default(lim);
    if (!d || d == Py_None) return 0;
    if (!PyDict_Check(d)) {
        PyErr_SetString(PyExc_TypeError, "limits must be a dict");
        return -1;
    }
    PyObject *k, *v;
    Py_ssize_t pos = 0;
    while (PyDict_Next(d, &pos, &k, &v)) {
        const char *name = PyUnicode_Check(k) ? PyUnicode_AsUTF8(k) : NULL;
        if (!name) {
            PyErr_SetString(PyExc_TypeError, "limit names must be str");
            return -1;
        }
        size_t i = 0;
        while (i < sizeof LIMITS / sizeof *LIMITS && strcmp(LIMITS[i].name, name)) i++;
        if (i == sizeof LIMITS / sizeof *LIMITS) {
            PyErr_Format(PyExc_TypeError, "unknown limit %s", name);
            return -1;
        }
        if (!PyLong_Check(v) || PyBool_Check(v)) {
            PyErr_Format(PyExc_TypeError, "%s must be an int", name);
            return -1;
        }
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
        if (LIMITS[i].wide) {
            uint64_t w = x;
            memcpy(at, &w, sizeof w);
        } else {
            uint32_t w = (uint32_t)x;
            memcpy(at, &w, sizeof w);
        }
    }
    const char *bad = npzs_limits_check(lim);
    if (bad) {
        PyErr_Format(PyExc_ValueError, "%s is out of the range the library accepts", bad);
        return -1;
    }
    return 0;
}

/* The library's default limits, as a dict (the one source of the defaults). */
PyObject *npzpy_default_limits(PyObject *m, PyObject *unused) {
    (void)m;
    (void)unused;
    npzs_limits lim;
    npzs_limits_default(&lim);
    PyObject *d = PyDict_New();
    for (size_t i = 0; d && i < sizeof LIMITS / sizeof *LIMITS; i++) {
        const char *at = (const char *)&lim + LIMITS[i].off;
        unsigned long long v;
        if (LIMITS[i].wide) {
            uint64_t w;
            memcpy(&w, at, sizeof w);
            v = w;
        } else {
            uint32_t w;
            memcpy(&w, at, sizeof w);
            v = w;
        }
        PyObject *x = PyLong_FromUnsignedLongLong(v);
        if (!x || PyDict_SetItemString(d, LIMITS[i].name, x) < 0) Py_CLEAR(d);
        Py_XDECREF(x);
    }
    return d;
}
