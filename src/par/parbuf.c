/*
 * parbuf.c -- the parallel helper's memory.  Everything goes through the parser's hooks, on the
 * caller's thread only.  Large buffers (jobs' pieces and outputs) are counted in `held` and kept
 * in a small cache for the next jobs: fresh pages cost the kernel's zeroing and faults (a third
 * of the time of a 2-worker run without it, bench/README.md).
 */
#define _DEFAULT_SOURCE /* madvise */
#include <string.h>
#include <sys/mman.h>

#include "par.h"

#ifdef NPZS_INTERNAL_H
#error "the helper sees the parser through the seam (base/seam.h, par/seam.c): not its layout (internal.h)"
#endif

void *npzs__pb_alloc(par_bufs *pb, size_t n) { return pb->al.alloc(pb->al.opaque, n ? n : 1); }

void npzs__pb_free(par_bufs *pb, void *ptr) {
    if (ptr) pb->al.free(pb->al.opaque, ptr);
}

/* Large buffers are filled once, sequentially, right after they are allocated: on Linux they ask
 * for transparent huge pages (only the whole 2 MiB pages inside them), which makes the first
 * touch of a 20 MB output one fault in 512.  Elsewhere, or for memory that is not anonymous, it
 * is nothing. */
static void huge(uint8_t *b, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t pg = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)b + pg - 1) & ~(pg - 1), e = ((uintptr_t)b + n) & ~(pg - 1);
    if (n >= (8u << 20) && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)b;
    (void)n;
#endif
}

uint8_t *npzs__pb_get(par_bufs *pb, size_t n, size_t *size) {
    unsigned best = pb->ncache; /* the smallest kept buffer that fits, at most twice as large */
    for (unsigned i = 0; i < pb->ncache; i++)
        if (pb->cache[i].n >= n && pb->cache[i].n / 2 <= n &&
            (best == pb->ncache || pb->cache[i].n < pb->cache[best].n))
            best = i;
    if (best < pb->ncache) {
        uint8_t *b = pb->cache[best].b;
        *size = pb->cache[best].n;
        pb->cache[best] = pb->cache[--pb->ncache];
        return b;
    }
    uint8_t *b = npzs__pb_alloc(pb, n);
    if (b) {
        *size = n;
        pb->held += n;
        huge(b, n);
    }
    return b;
}

void npzs__pb_put(par_bufs *pb, uint8_t *b, size_t n) {
    if (!b) return;
    if (pb->ncache == PAR_CACHE) {
        unsigned k = 0;
        for (unsigned i = 1; i < pb->ncache; i++)
            if (pb->cache[i].n < pb->cache[k].n) k = i;
        if (pb->cache[k].n > n) {
            pb->held -= n;
            npzs__pb_free(pb, b);
            return;
        }
        pb->held -= pb->cache[k].n;
        npzs__pb_free(pb, pb->cache[k].b);
        pb->cache[k] = pb->cache[--pb->ncache];
    }
    pb->cache[pb->ncache].b = b;
    pb->cache[pb->ncache].n = n;
    pb->ncache++;
}

void npzs__pb_evict(par_bufs *pb, uint64_t bound, uint64_t more) {
    while (pb->ncache && (more > bound || pb->held > bound - more)) {
        pb->ncache--;
        pb->held -= pb->cache[pb->ncache].n;
        npzs__pb_free(pb, pb->cache[pb->ncache].b);
    }
}

void npzs__pb_clear(par_bufs *pb) { npzs__pb_evict(pb, 0, 1); }
