/* prove/stubs.c -- the parser's services (src/view/handle.h, in src/core/) that the analysed
 * sources call, re-stated small over the handle of stubs.h: an allocation that may fail at any
 * call (EVA's malloc model, and its calloc for a zeroed one), its release, and the sticky error.
 * Assumptions of the proof (SECURITY.md, "What is proven"): core/'s versions do what these do.
 * The buffer grown over them is core/buffer.c itself, analysed with the header parser. */
#include <stdlib.h>
#include "__fc_builtin.h"
#include "stubs.h"

void *npzs__alloc(npzs_parser *p, size_t n) {
    (void)p;
    if (Frama_C_interval(0, 1)) return NULL; /* max_memory, or the hooks, refuse it */
    return malloc(n ? n : 1);
}

void *npzs__alloc0(npzs_parser *p, size_t n) {
    (void)p;
    if (Frama_C_interval(0, 1)) return NULL;
    return calloc(1, n ? n : 1); /* mem.c: npzs__alloc and a memset of the n bytes */
}

void npzs__free(npzs_parser *p, void *ptr) {
    (void)p;
    free(ptr);
}

int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule) {
    if (p->err) return p->err;
    p->err = code;
    p->off = off;
    p->rule = rule;
    return code;
}

int npzs__fail_content(npzs_parser *p, int code, uint64_t coff, int rule) {
    int rc = npzs__fail(p, code, coff, rule);
    p->coff = coff;
    return rc;
}

void npzs__limit_need(npzs_parser *p, uint64_t n) {
    (void)p;
    (void)n;
}
