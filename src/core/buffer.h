/* buffer.h -- a buffer grown by doubling over the parser's allocation (buffer.c), for the sources
 * that keep one: the staging of names, extra fields and headers, the inflate window, the header
 * parser's scratch.  Over the handle's services alone (view/handle.h). */
#ifndef NPZS_BUFFER_H
#define NPZS_BUFFER_H

#include <stddef.h>
#include <stdint.h>

#include "../view/handle.h"

/* A buffer that holds at least `need` bytes (grown by doubling, its contents not kept): 0, or
 * < 0 with nomem recorded at off with rule. */
int npzs__buffer_grow(npzs_parser *p, void **buf, size_t *cap, size_t need, uint64_t off, int rule);
static inline int npzs__buffer(npzs_parser *p, void **buf, size_t *cap, size_t need, uint64_t off, int rule) {
    return *cap >= need ? 0 : npzs__buffer_grow(p, buf, cap, need, off, rule);
}

#endif
