/*
 * alloc.c -- the allocator hooks when the caller gives none (malloc and free): a parser's, a
 * compiled policy's, a vlen parser's.  A parser counts and caps what it takes through them
 * (core/mem.c).
 */
#include <stdlib.h>

#include "base.h"

#ifdef NPZS_INTERNAL_H
#error "base/ is pure: it sees no parser (internal.h)"
#endif

static void *def_alloc(void *o, size_t n) {
    (void)o;
    return malloc(n);
}
static void def_free(void *o, void *ptr) {
    (void)o;
    free(ptr);
}
const npzs_allocator npzs__malloc = {def_alloc, def_free, NULL};
