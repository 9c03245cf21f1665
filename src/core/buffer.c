/*
 * buffer.c -- a buffer grown by doubling, over the parser's allocation.  Written against the
 * handle's services alone (view/handle.h), never the parser's layout: the proof analyses the
 * header parser with it as it is, the allocation and the error recorder re-stated (prove/stubs.c).
 */
#include "buffer.h"

#ifdef NPZS_INTERNAL_H
#error "buffer.c sees the parser only as a handle (view/handle.h): not its layout (internal.h)"
#endif

int npzs__buffer_grow(npzs_parser *p, void **buf, size_t *cap, size_t need, uint64_t off, int rule) {
    size_t n = *cap ? *cap : 64;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    void *nb = npzs__alloc(p, n);
    if (!nb) return npzs__fail(p, NPZS_E_NOMEM, off, rule);
    npzs__free(p, *buf);
    *buf = nb;
    *cap = n;
    return 0;
}
