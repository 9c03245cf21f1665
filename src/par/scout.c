/*
 * scout.c -- the parallel helper's scout: it reads the local headers in the bytes the helper
 * takes ahead of the parser, with the parser's own record decoders (zrec.c), to find the deflated
 * members worth a worker.  Its states are in states.h (NPZS_SCOUT_MAP):
 *
 *   SC_HDR --header whole--> classify --skip--> SC_SKIP --data counted past--> SC_HDR
 *      |  (SC_VAR while its name and extra      --job---> SC_JOB  --data copied--------> SC_HDR
 *      |   field are staged)                              SC_WAIT (memory, jobs ahead) -> SC_JOB | SC_SKIP
 *      +--not a local header, sizes unknown--> SC_OFF --the parser's MEMBER_END--> SC_HDR
 *
 * The scout decides nothing about the input: a header it cannot read only stops it (SC_OFF) until
 * the parser, which judges every byte, passes the member.  This file reads and classifies; what is
 * held, and the jobs, are par.c's.
 */
#include <string.h>

#include "par.h"

#ifdef NPZS_INTERNAL_H
#error "the helper sees the parser through the seam (base/seam.h, par/seam.c): not its layout (internal.h)"
#endif

#define LFH_SIZE 30
#define DEFLATE_MAX_RATIO 1032u /* deflate makes at most 1032 bytes of one compressed byte */

void npzs__scout_to(par_scout *s, int st) {
    s->st = st;
    s->visited |= (uint32_t)1 << (st - NPZS_SC__BASE - 1);
}

void npzs__scout_reset(par_scout *s) {
    npzs__scout_to(s, NPZS_SC_HDR);
    s->have = 0;
    s->var_len = s->var_need = 0;
    s->hdr_len = 0;
    s->left = 0;
}

/* The 30 fixed bytes at b: 0, or -1 when they are not a local header the scout reads. */
static int fixed(par_scout *s, const uint8_t *b, const npzs_limits *lim) {
    npzs__zerr e;
    if (npzs__le32(b) != 0x04034b50u || npzs__zr_lfh(b, lim, &s->h, &e) < 0) return -1;
    s->hdr_len = LFH_SIZE + (size_t)s->h.f.name_len + s->h.f.extra_len;
    return 0;
}

int npzs__scout_peek(par_scout *s, const uint8_t *b, size_t n, uint64_t off, const npzs_limits *lim) {
    if (n < 4) return memcmp(b, "PK\3\4", n) ? -1 : 0;
    if (memcmp(b, "PK\3\4", 4)) return -1;
    if (n < LFH_SIZE) return 0;
    if (fixed(s, b, lim) < 0) return -1;
    if (n < s->hdr_len) return 0;
    s->lfh = off;
    return 1;
}

size_t npzs__scout_stage(par_scout *s, par_bufs *pb, const uint8_t *b, size_t n, uint64_t off, const npzs_limits *lim) {
    size_t i = 0;
    if (s->st == NPZS_SC_HDR) {
        if (s->have == 0) s->lfh = off;
        size_t k = LFH_SIZE - s->have;
        if (k > n) k = n;
        memcpy(s->fix + s->have, b, k);
        s->have += k;
        i += k;
        if (s->have < 4 && memcmp(s->fix, "PK\3\4", s->have)) {
            npzs__scout_to(s, NPZS_SC_OFF);
            return i;
        }
        if (s->have < LFH_SIZE) return i;
        if (fixed(s, s->fix, lim) < 0) {
            npzs__scout_to(s, NPZS_SC_OFF);
            return i;
        }
        s->var_need = s->hdr_len - LFH_SIZE;
        s->var_len = 0;
        if (s->var_need > s->var_cap) { /* at most 2 * 65535 bytes, whatever the header says */
            npzs__pb_free(pb, s->var);
            s->var = npzs__pb_alloc(pb, s->var_need);
            s->var_cap = s->var ? s->var_need : 0;
            if (!s->var) {
                npzs__scout_to(s, NPZS_SC_OFF);
                return i;
            }
        }
        npzs__scout_to(s, NPZS_SC_VAR);
    }
    size_t k = s->var_need - s->var_len;
    if (k > n - i) k = n - i;
    memcpy(s->var + s->var_len, b + i, k);
    s->var_len += k;
    return i + k;
}

int npzs__scout_classify(par_scout *s, const uint8_t *x, const par_scout_cfg *cfg) {
    npzs__zlfh *h = &s->h;
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    if (npzs__zr_extra(x, h->f.extra_len, 1, &z, &zl, &e) < 0 || npzs__zr_lfh_sizes(h, z, zl, &e) < 0 || !h->known)
        return SCOUT_OFF; /* the parser will say what it is; the scout picks up after its MEMBER_END */
    s->left = h->csize;
    int deflated = h->f.method == NPZS_METHOD_DEFLATED;
    int worth = deflated && cfg->workers && h->usize >= cfg->min_size && h->csize > 0 &&
                !(cfg->lim->lenient & NPZS_LENIENT_FAST_INFLATE) && cfg->parser_at <= s->lfh;
    /* an output larger than deflate can make of the input is an error the parser finds: no job
     * (and no allocation for what the header merely declares) */
    if (worth && (h->usize >= UINT64_MAX - h->csize || h->csize > UINT64_MAX / DEFLATE_MAX_RATIO ||
                  h->usize > h->csize * DEFLATE_MAX_RATIO + 1024))
        worth = 0;
    return worth ? SCOUT_JOB : SCOUT_SKIP;
}

void npzs__scout_release(par_scout *s, par_bufs *pb) {
    npzs__pb_free(pb, s->var);
    s->var = NULL;
    s->var_cap = 0;
}
