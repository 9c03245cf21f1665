/* fuzz/deflate_model.c -- see deflate_model.h. */
#include <stdlib.h>
#include <string.h>

#include "deflate_model.h"

#define MAXOUT (8u << 20)

static const uint16_t lbase[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                   31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t lext[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dbase[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                   33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                   1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dext[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                 6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};
static const uint8_t order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* length -> index in lbase, distance -> index in dbase (distances above 256 by their 128ths):
 * made on first use (test code) */
static uint8_t len_ix[259], dist_ix[512];
static void code_tables(void) {
    if (len_ix[3] == 0 && len_ix[258] == 28) return;
    for (unsigned l = 3; l <= 258; l++) {
        unsigned i = 27;
        while (lbase[i] > l) i--;
        len_ix[l] = (uint8_t)(l == 258 ? 28 : i); /* 258 only by symbol 285 */
    }
    for (unsigned d = 1; d <= 32768; d++) {
        unsigned i = 29;
        while (dbase[i] > d) i--;
        if (d <= 256) dist_ix[d] = (uint8_t)i;
        else dist_ix[256 + ((d - 1) >> 7)] = (uint8_t)i;
    }
}

void dm_len_code(unsigned len, unsigned *sym, unsigned *eb, unsigned *ex) {
    code_tables();
    unsigned i = len_ix[len];
    *sym = 257 + i;
    *eb = lext[i];
    *ex = len - lbase[i];
}

void dm_dist_code(unsigned dist, unsigned *sym, unsigned *eb, unsigned *ex) {
    code_tables();
    unsigned i = dist <= 256 ? dist_ix[dist] : dist_ix[256 + ((dist - 1) >> 7)];
    *sym = i;
    *eb = dext[i];
    *ex = dist - dbase[i];
}

/* ---- reading ------------------------------------------------------------------------------- */

typedef struct rd {
    const uint8_t *p;
    size_t n, bit;
} rd;

static int bits(rd *r, unsigned k, unsigned *v) {
    if (r->bit + k > r->n * 8) return -1;
    unsigned x = 0;
    for (unsigned i = 0; i < k; i++, r->bit++) x |= ((unsigned)r->p[r->bit >> 3] >> (r->bit & 7) & 1u) << i;
    *v = x;
    return 0;
}

/* a canonical code as counts per length and symbols in code order */
typedef struct huff {
    uint16_t count[16], sym[320];
} huff;

/* 0 for a complete code; -1 for anything else (a valid stream from zlib's deflate has complete
 * codes but for a single distance code: allowed here too, as zlib allows it) */
static int mkhuff(huff *h, const uint8_t *lens, unsigned n, int allow_single) {
    memset(h->count, 0, sizeof h->count);
    for (unsigned i = 0; i < n; i++) h->count[lens[i]]++;
    uint16_t offs[16];
    offs[1] = 0;
    for (unsigned l = 1; l < 15; l++) offs[l + 1] = (uint16_t)(offs[l] + h->count[l]);
    for (unsigned i = 0; i < n; i++)
        if (lens[i]) h->sym[offs[lens[i]]++] = (uint16_t)i;
    int left = 1;
    for (unsigned l = 1; l < 16; l++) {
        left = 2 * left - h->count[l];
        if (left < 0) return -1;
    }
    if (left == 0) return 0;
    return allow_single && h->count[0] == n - 1 && h->count[1] == 1 ? 0 : -1;
}

static int decode(rd *r, const huff *h) {
    int code = 0, first = 0, index = 0;
    for (unsigned l = 1; l < 16; l++) {
        unsigned b;
        if (bits(r, 1, &b)) return -1;
        code |= (int)b;
        int count = h->count[l];
        if (code - count < first) return h->sym[index + (code - first)];
        index += count;
        first += count;
        first <<= 1;
        code <<= 1;
    }
    return -1;
}

static int push_sym(dm_stream *m, size_t *cap, dm_sym s) {
    if (m->ns == *cap) {
        *cap = *cap ? *cap * 2 : 1024;
        dm_sym *t = realloc(m->s, *cap * sizeof *t);
        if (!t) return -1;
        m->s = t;
    }
    m->s[m->ns++] = s;
    return 0;
}

int dm_parse(const uint8_t *src, size_t n, dm_stream *m) {
    memset(m, 0, sizeof *m);
    rd r = {src, n, 0};
    size_t bcap = 0, scap = 0;
    uint64_t out = 0;
    for (;;) {
        if (m->nb == bcap) {
            bcap = bcap ? bcap * 2 : 16;
            dm_block *t = realloc(m->b, bcap * sizeof *t);
            if (!t) goto fail;
            m->b = t;
        }
        dm_block *b = &m->b[m->nb];
        memset(b, 0, sizeof *b);
        b->bit = r.bit;
        b->sym0 = m->ns;
        b->out0 = out;
        unsigned v;
        if (bits(&r, 3, &v)) goto fail;
        b->final = (int)(v & 1);
        b->type = (int)(v >> 1);
        if (b->type == 3) goto fail;
        if (b->type == 0) {
            r.bit = (r.bit + 7) & ~(size_t)7;
            unsigned len, nlen;
            if (bits(&r, 16, &len) || bits(&r, 16, &nlen) || len != (~nlen & 0xFFFFu)) goto fail;
            if (r.bit / 8 + len > n) goto fail;
            b->stored_len = len;
            b->stored_at = r.bit / 8;
            r.bit += (size_t)len * 8;
            out += len;
        } else {
            huff hl, hd;
            uint8_t *lens = b->lens;
            if (b->type == 1) {
                b->nlen = 288;
                b->ndist = 30;
                memset(lens, 8, 144);
                memset(lens + 144, 9, 112);
                memset(lens + 256, 7, 24);
                memset(lens + 280, 8, 8);
                memset(lens + 288, 5, 30);
                uint8_t d32[32];
                memset(d32, 5, sizeof d32);
                if (mkhuff(&hl, lens, 288, 0) || mkhuff(&hd, d32, 32, 0)) goto fail;
            } else {
                unsigned a, c, d;
                if (bits(&r, 5, &a) || bits(&r, 5, &c) || bits(&r, 4, &d)) goto fail;
                b->nlen = a + 257;
                b->ndist = c + 1;
                b->ncode = d + 4;
                if (b->nlen > 286 || b->ndist > 30) goto fail;
                for (unsigned i = 0; i < b->ncode; i++) {
                    if (bits(&r, 3, &v)) goto fail;
                    b->cl[order[i]] = (uint8_t)v;
                }
                huff hc;
                if (mkhuff(&hc, b->cl, 19, 0)) goto fail;
                unsigned have = 0, total = b->nlen + b->ndist;
                while (have < total) {
                    int s = decode(&r, &hc);
                    if (s < 0) goto fail;
                    if (s < 16) {
                        lens[have++] = (uint8_t)s;
                        continue;
                    }
                    unsigned rep, l = 0;
                    if (s == 16) {
                        if (!have || bits(&r, 2, &rep)) goto fail;
                        rep += 3;
                        l = lens[have - 1];
                    } else if (s == 17) {
                        if (bits(&r, 3, &rep)) goto fail;
                        rep += 3;
                    } else {
                        if (bits(&r, 7, &rep)) goto fail;
                        rep += 11;
                    }
                    if (have + rep > total) goto fail;
                    while (rep--) lens[have++] = (uint8_t)l;
                }
                if (!lens[256] || mkhuff(&hl, lens, b->nlen, 1) || mkhuff(&hd, lens + b->nlen, b->ndist, 1)) goto fail;
                if (hl.count[0] == b->nlen - 1) goto fail; /* a single literal/length code: EOB only; not kept */
            }
            for (;;) {
                int s = decode(&r, &hl);
                if (s < 0 || s > 285) goto fail;
                if (s < 256) {
                    if (push_sym(m, &scap, (dm_sym){DM_LIT, (uint8_t)s, 0, 0, 0})) goto fail;
                    out++;
                    continue;
                }
                if (s == 256) break;
                unsigned e, ds;
                if (bits(&r, lext[s - 257], &e)) goto fail;
                unsigned len = lbase[s - 257] + e;
                ds = (unsigned)decode(&r, &hd);
                if ((int)ds < 0 || ds > 29 || bits(&r, dext[ds], &e)) goto fail;
                unsigned dist = dbase[ds] + e;
                if (dist > out) goto fail;
                if (push_sym(m, &scap, (dm_sym){DM_MATCH, 0, (uint16_t)len, 0, dist})) goto fail;
                out += len;
            }
        }
        if (out > MAXOUT) goto fail;
        b->nsym = m->ns - b->sym0;
        m->nb++;
        if (b->final) break;
    }
    m->end_bit = r.bit;
    m->out_len = out;
    return 0;
fail:
    dm_free(m);
    return -1;
}

void dm_free(dm_stream *m) {
    free(m->b);
    free(m->s);
    memset(m, 0, sizeof *m);
}

/* ---- writing ------------------------------------------------------------------------------- */

static void grow(dm_bits *w, size_t need) {
    if (need <= w->cap) return;
    size_t c = w->cap ? w->cap : 256;
    while (c < need) c *= 2;
    uint8_t *t = realloc(w->p, c);
    if (!t) abort();
    w->p = t;
    w->cap = c;
}

void dm_put(dm_bits *w, uint32_t v, unsigned k) {
    while (k) {
        if (w->nb == 0) {
            if (w->n == w->cap) grow(w, w->n + 1);
            w->p[w->n++] = 0;
        }
        unsigned take = 8 - w->nb < k ? 8 - w->nb : k;
        w->p[w->n - 1] |= (uint8_t)((v & ((1u << take) - 1u)) << w->nb);
        w->nb = (w->nb + take) & 7u;
        v >>= take;
        k -= take;
    }
}

size_t dm_bitlen(const dm_bits *w) { return w->nb ? (w->n - 1) * 8 + w->nb : w->n * 8; }

void dm_align(dm_bits *w) { w->nb = 0; }

void dm_copy_bits(dm_bits *w, const uint8_t *src, size_t from, size_t to) {
    while (from < to && (from & 7)) { /* to the source's byte boundary */
        dm_put(w, (unsigned)src[from >> 3] >> (from & 7) & 1u, 1);
        from++;
    }
    size_t k = (to - from) / 8;
    if (k) {
        grow(w, w->n + k + 1);
        if (w->nb == 0) { /* aligned both: whole bytes */
            memcpy(w->p + w->n, src + from / 8, k);
        } else { /* each byte split across two */
            const uint8_t *b = src + from / 8;
            for (size_t i = 0; i < k; i++) {
                w->p[w->n - 1 + i] |= (uint8_t)(b[i] << w->nb);
                w->p[w->n + i] = (uint8_t)(b[i] >> (8 - w->nb));
            }
        }
        w->n += k;
    }
    from += k * 8;
    for (; from < to; from++) dm_put(w, (unsigned)src[from >> 3] >> (from & 7) & 1u, 1);
}

/* Huffman codes are written most significant bit first */
static void put_code(dm_bits *w, uint32_t code, unsigned len) {
    uint32_t r = 0;
    for (unsigned i = 0; i < len; i++, code >>= 1) r = (r << 1) | (code & 1u);
    dm_put(w, r, len);
}

/* canonical codes of lens[0, n) (for a set that is not a prefix code too: the codes are then
 * whatever the counting gives, cut to their lengths) */
static void codes(const uint8_t *lens, unsigned n, uint32_t *code) {
    unsigned count[16] = {0}, next[16];
    for (unsigned i = 0; i < n; i++) count[lens[i]]++;
    count[0] = 0;
    unsigned c = 0;
    for (unsigned l = 1; l < 16; l++) {
        c = (c + count[l - 1]) << 1;
        next[l] = c;
    }
    for (unsigned i = 0; i < n; i++) code[i] = lens[i] ? (next[lens[i]]++ & ((1u << lens[i]) - 1u)) : 0;
}

/* the code-length code every written header uses: 13 codes of 4 bits and 6 of 5, complete */
static uint8_t cl_len(unsigned sym) { return sym < 13 ? 4 : 5; }

static void put_cl(dm_bits *w, const uint32_t *clc, unsigned sym) { put_code(w, clc[sym], cl_len(sym)); }

static void write_lengths(dm_bits *w, const uint8_t *l, unsigned total, const dm_hdr *h) {
    uint8_t cll[19];
    uint32_t clc[19];
    for (unsigned i = 0; i < 19; i++) cll[i] = cl_len(i);
    codes(cll, 19, clc);
    int rle = h ? h->rle : DM_RLE_GREEDY;
    if (rle == DM_RLE_FIRST16) { /* zlib refuses here; the rest is written all the same */
        put_cl(w, clc, 16);
        dm_put(w, 0, 2);
    }
    unsigned i = 0;
    while (i < total) {
        unsigned run = 1;
        while (i + run < total && l[i + run] == l[i]) run++;
        int tail = i + run == total && rle == DM_RLE_OVERRUN;
        unsigned over = tail ? h->overrun : 0;
        if (rle == DM_RLE_NONE || (run < 3 && !tail)) {
            put_cl(w, clc, l[i++]);
            continue;
        }
        if (l[i] == 0) { /* one run of zeros (past the end by `over` at the tail) */
            unsigned k = run + over > 138 ? 138 : run + over;
            if (k < 3) {
                put_cl(w, clc, 0);
                i++;
                continue;
            }
            put_cl(w, clc, k >= 11 ? 18 : 17);
            dm_put(w, k - (k >= 11 ? 11 : 3), k >= 11 ? 7 : 3);
            i += k;
            continue;
        }
        put_cl(w, clc, l[i++]); /* the length, then repeats of it */
        unsigned k = run - 1 + over;
        while (k >= 3 || (tail && k > 0)) {
            unsigned r = k > 6 ? 6 : k < 3 ? 3 : k;
            put_cl(w, clc, 16);
            dm_put(w, r - 3, 2);
            i += r;
            k = r >= k ? 0 : k - r;
        }
        for (; k > 0; k--) put_cl(w, clc, l[i++]);
    }
}

void dm_write_block(dm_bits *w, const dm_block *b, const dm_sym *syms, size_t nsym, const dm_hdr *h,
                    const uint8_t *data, size_t data_len, uint32_t nlen_xor) {
    dm_put(w, (uint32_t)b->final, 1);
    dm_put(w, (uint32_t)b->type, 2);
    if (b->type == 0) {
        dm_align(w);
        dm_put(w, b->stored_len, 16);
        dm_put(w, (~b->stored_len & 0xFFFFu) ^ nlen_xor, 16);
        for (size_t i = 0; i < data_len; i++) dm_put(w, data[i], 8);
        return;
    }
    uint8_t ll[320] = {0}, dl[32] = {0};
    unsigned nlen, ndist;
    if (b->type == 1) {
        nlen = 288;
        ndist = 32;
        memset(ll, 8, 144);
        memset(ll + 144, 9, 112);
        memset(ll + 256, 7, 24);
        memset(ll + 280, 8, 8);
        memset(dl, 5, 32);
    } else {
        nlen = b->nlen;
        ndist = b->ndist;
        memcpy(ll, b->lens, nlen);
        memcpy(dl, b->lens + nlen, ndist);
        unsigned wl = h && h->hlit >= 0 ? (unsigned)h->hlit : nlen,
                 wd = h && h->hdist >= 0 ? (unsigned)h->hdist : ndist;
        uint8_t all[64 + 320];
        memset(all, 0, sizeof all);
        memcpy(all, ll, nlen < wl ? nlen : wl);
        memcpy(all + wl, dl, ndist < wd ? ndist : wd);
        dm_put(w, wl - 257, 5);
        dm_put(w, wd - 1, 5);
        dm_put(w, 19 - 4, 4);
        for (unsigned i = 0; i < 19; i++) dm_put(w, cl_len(order[i]), 3);
        write_lengths(w, all, wl + wd, h);
    }
    uint32_t lc[320], dc[32];
    codes(ll, nlen, lc);
    codes(dl, ndist, dc);
    for (size_t i = 0; i < nsym; i++) {
        const dm_sym *s = &syms[i];
        unsigned sym, eb, ex;
        switch (s->kind) {
        case DM_LIT:
            if (ll[s->lit]) put_code(w, lc[s->lit], ll[s->lit]);
            break;
        case DM_RAW_LL:
            if (s->raw < nlen && ll[s->raw]) put_code(w, lc[s->raw], ll[s->raw]);
            break;
        case DM_RAW_DIST:
            if (!ll[257]) break;
            put_code(w, lc[257], ll[257]);
            if (s->raw < ndist && dl[s->raw]) put_code(w, dc[s->raw], dl[s->raw]);
            break;
        default:
            dm_len_code(s->len, &sym, &eb, &ex);
            if (sym >= nlen || !ll[sym]) break;
            put_code(w, lc[sym], ll[sym]);
            dm_put(w, ex, eb);
            dm_dist_code(s->dist, &sym, &eb, &ex);
            if (sym < ndist && dl[sym]) {
                put_code(w, dc[sym], dl[sym]);
                dm_put(w, ex, eb);
            }
            break;
        }
    }
    if (ll[256] && !(h && h->no_eob)) put_code(w, lc[256], ll[256]);
}
