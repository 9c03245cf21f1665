/*
 * block.c -- Block: an array's data where a worker thread inflated it (npzs_par_take_data).  A
 * writable buffer over the data, made by the stream only; the allocation (the parser's default
 * hooks: malloc) is freed with the last reference, the array made over it.
 */
#include "ext.h"

#include <stdlib.h>

typedef struct {
    PyObject_HEAD void *base;
    char *data;
    Py_ssize_t len;
} Block;

PyObject *npzpy_block_new(npzpy_state *st, void *base, char *data, Py_ssize_t len) {
    Block *b = PyObject_New(Block, st->block);
    if (!b) {
        free(base); /* the parser reads it until the member's end: the stream stops here (the error) */
        return NULL;
    }
    b->base = base;
    b->data = data;
    b->len = len;
    return (PyObject *)b;
}

/* Block() from Python: refused (a Block is only ever a worker's output) */
static PyObject *Block_new(PyTypeObject *t, PyObject *args, PyObject *kw) {
    (void)args;
    (void)kw;
    PyErr_Format(PyExc_TypeError, "cannot create '%s' instances", t->tp_name);
    return NULL;
}

static int Block_getbuffer(Block *b, Py_buffer *view, int flags) {
    return PyBuffer_FillInfo(view, (PyObject *)b, b->data, b->len, 0, flags);
}

static void Block_dealloc(Block *b) {
    free(b->base);
    npzpy_free((PyObject *)b);
}

static PyType_Slot Block_slots[] = {
    {Py_tp_doc, (void *)"an array's data where a worker thread inflated it"},
    {Py_tp_new, (void *)Block_new},
    {Py_tp_dealloc, (void *)Block_dealloc},
    {Py_bf_getbuffer, (void *)Block_getbuffer},
    {0, NULL},
};

PyType_Spec npzpy_block_spec = {"npzstream._npzstream.Block", sizeof(Block), 0, NPZPY_TPFLAGS, Block_slots};
