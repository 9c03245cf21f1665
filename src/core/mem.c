/*
 * mem.c -- allocation.  Every allocation goes through the caller's hooks with a small header that
 * remembers its size, so that what the parser holds is known at every moment (npzs_memory) and
 * capped by max_memory; a refusal by the cap is reported as limit (LIMIT.max_memory), one by the
 * hooks as nomem.  A buffer grown over these: buffer.c.
 */
#include <string.h>

#include "../internal.h"

#define AHDR 16 /* the size header in front of every allocation: keeps the hook's alignment (>= 8) */

void *npzs__alloc(npzs_parser *p, size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX - AHDR) return NULL;
    if (p->lim.max_memory && (n > p->lim.max_memory || p->mem_used > p->lim.max_memory - n)) {
        p->mem_capped = 1;
        p->lim_need = n > UINT64_MAX - p->mem_used ? UINT64_MAX : p->mem_used + n;
        return NULL;
    }
    uint8_t *h = p->al.alloc(p->al.opaque, AHDR + n);
    if (!h) return NULL;
    memcpy(h, &n, sizeof n); /* the hook's alignment may be less than a max_align_t's */
    p->mem_used += n;
    if (p->mem_used > p->mem_peak) p->mem_peak = p->mem_used;
    return h + AHDR;
}

void *npzs__alloc0(npzs_parser *p, size_t n) {
    void *b = npzs__alloc(p, n);
    if (b) memset(b, 0, n ? n : 1);
    return b;
}

void npzs__free(npzs_parser *p, void *ptr) {
    if (!ptr) return;
    uint8_t *h = (uint8_t *)ptr - AHDR;
    size_t n;
    memcpy(&n, h, sizeof n);
    p->mem_used -= n;
    p->al.free(p->al.opaque, h);
}
