/* prove/stubs.c -- the parser's services (src/core/: mem.c, err.c) that the analysed sources call, re-stated
 * small: an allocation that may fail at any call (EVA's malloc model, and its calloc for a
 * zeroed one), its release, the buffer-growing helper with mem.c's doubling, and the sticky
 * error.  Assumptions of the proof (SECURITY.md, "What is proven"): core/'s versions do what
 * these do. */
#include <stdlib.h>
#include "__fc_builtin.h"
#include "internal.h"

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

int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule) {
    if (p->err) return p->err;
    p->err = code;
    p->err_off = off;
    p->err_rule = rule;
    p->state = NPZS_S_FAILED;
    return code;
}

int npzs__fail_content(npzs_parser *p, int code, uint64_t coff, int rule) {
    int rc = npzs__fail(p, code, p->c.base + coff, rule);
    p->err_coff = coff;
    return rc;
}
