/*
 * fastinf_campaign -- the differential campaign of the default decoder (src/zip/fastinf.c) against
 * zlib (fuzz/README.md, ledger; SECURITY.md, "The inflater"): streams mutated from seeds, each
 * through fz_fastinf_diff (fuzz/fastinf_diff.c), which compares the verdict, every byte made and
 * where the stream ends, under pushes, output windows and block lending drawn for each stream.
 *
 *   fastinf_campaign [-n N] [-s SEED] [-m LIST] [-o DIR] [-k] PATH...
 *     PATH  files or folders of seeds, [ctl][raw deflate] each (corpus/fuzz_fastinf and the
 *           campaign's: fuzz/gen_fastinf_seeds.py)
 *     -n    streams to run (default 1000000)      -s  the generator's seed (default 1)
 *     -m    the mutators, comma separated (default all of them):
 *             havoc   uniform byte havoc: bit flips, bytes set, inserted, deleted, duplicated, cuts
 *             counts  a dynamic header's HLIT, HDIST or HCLEN set (in place)
 *             cl      a dynamic header's code-length code lengths set (in place)
 *             lens    a block's literal/length and distance code lengths changed and the block
 *                     written again: sets made incomplete, over-subscribed, empty, a single code,
 *                     no end-of-block code, codes split and merged (deeper, still complete)
 *             repeat  a header's lengths written with a repeat of no previous length, a repeat
 *                     past the lengths, no repeats, or more or too many lengths declared
 *             stored  a stored block's LEN / NLEN changed (a block made stored first if none is)
 *             dist    a distance set before the stream's first byte (or just at it), in a
 *                     dynamic or fixed block; fixed blocks' symbols 286, 287, distances 30, 31
 *             final   a block's last-block bit flipped
 *             splice  blocks of one seed followed by blocks of another (distances now reaching
 *                     before the start), or a stream cut near a block's start
 *           an aimed mutation is followed by one or two havoc edits one time in eight
 *     -o    folder for a stream that differs ([ctl][stream], fastinf-diff-<n>.bin; default .)
 *     -k    keep going after a difference (counted)
 * Every million streams a progress line goes to stderr.  At the end it prints a line per mutator
 * (streams, and zlib's verdicts: ends, refused, cut short, capped, streams with blocks lent to
 * zlib), one per message zlib refused streams with, then
 *   campaign: N streams, D differences, S seeds (P parsed), CPU T s
 * and exits 1 when D > 0.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>

#include "deflate_model.h"
#include "fastinf_diff.h"

typedef struct seed {
    uint8_t *raw;
    size_t n;
    int ok; /* parsed: the model below */
    dm_stream m;
    uint8_t *out; /* its output (ok only) */
} seed;

static seed *seeds;
static size_t nseeds, capseeds, nparsed;

static uint64_t rs;
static uint64_t rnd64(void) {
    rs ^= rs >> 12;
    rs ^= rs << 25;
    rs ^= rs >> 27;
    return rs * 0x2545F4914F6CDD1DULL;
}
static size_t rnd(size_t n) { return n ? (size_t)(rnd64() % n) : 0; }

/* ---- seeds ------------------------------------------------------------------------------------ */

static int make_output(seed *s) {
    s->out = malloc(s->m.out_len ? s->m.out_len : 1);
    if (!s->out) return -1;
    size_t o = 0;
    for (size_t k = 0; k < s->m.nb; k++) {
        const dm_block *b = &s->m.b[k];
        if (b->type == 0) {
            memcpy(s->out + o, s->raw + b->stored_at, b->stored_len);
            o += b->stored_len;
            continue;
        }
        for (size_t i = 0; i < b->nsym; i++) {
            const dm_sym *y = &s->m.s[b->sym0 + i];
            if (y->kind == DM_LIT) {
                s->out[o++] = y->lit;
            } else {
                for (unsigned j = 0; j < y->len; j++, o++) s->out[o] = s->out[o - y->dist];
            }
        }
    }
    return 0;
}

static void add_seed(const uint8_t *d, size_t n) {
    if (n < 1) return;
    if (nseeds == capseeds) {
        capseeds = capseeds ? capseeds * 2 : 256;
        seeds = realloc(seeds, capseeds * sizeof *seeds);
        if (!seeds) abort();
    }
    seed *s = &seeds[nseeds++];
    memset(s, 0, sizeof *s);
    s->n = n - 1;
    s->raw = malloc(s->n ? s->n : 1);
    if (!s->raw) abort();
    memcpy(s->raw, d + 1, s->n);
    if (dm_parse(s->raw, s->n, &s->m) == 0 && make_output(s) == 0) {
        s->ok = 1;
        nparsed++;
    }
}

static void load(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) {
        DIR *dir = opendir(path);
        if (!dir) return;
        struct dirent *e;
        while ((e = readdir(dir))) {
            if (e->d_name[0] == '.') continue;
            char sub[4096];
            snprintf(sub, sizeof sub, "%s/%s", path, e->d_name);
            load(sub);
        }
        closedir(dir);
        return;
    }
    FILE *f = fopen(path, "rb");
    if (!f) return;
    uint8_t *b = malloc((size_t)st.st_size + 1);
    size_t n = b ? fread(b, 1, (size_t)st.st_size, f) : 0;
    fclose(f);
    if (b) add_seed(b, n);
    free(b);
}

/* ---- the stream being made -------------------------------------------------------------------- */

typedef struct buf {
    uint8_t *p;
    size_t n, cap;
} buf;

static void reserve(buf *b, size_t n) {
    if (n <= b->cap) return;
    size_t c = b->cap ? b->cap : 4096;
    while (c < n) c *= 2;
    b->p = realloc(b->p, c);
    if (!b->p) abort();
    b->cap = c;
}

static void set_raw(buf *b, const uint8_t *p, size_t n) {
    reserve(b, n);
    memcpy(b->p, p, n);
    b->n = n;
}

static void take_bits(buf *b, dm_bits *w) {
    set_raw(b, w->p, w->n);
    free(w->p);
}

static void put_bits_at(uint8_t *p, size_t bit, uint32_t v, unsigned k) {
    for (unsigned i = 0; i < k; i++, bit++) {
        p[bit >> 3] = (uint8_t)((p[bit >> 3] & ~(1u << (bit & 7))) | (((v >> i) & 1u) << (bit & 7)));
    }
}

static void havoc(buf *b, unsigned edits) {
    static const uint8_t interesting[] = {0x00, 0x01, 0x7F, 0x80, 0xFF, 0xFE, 0x10, 0x20};
    for (unsigned e = 0; e < edits; e++) {
        size_t n = b->n;
        switch (rnd(9)) {
        case 0:
            if (n) b->p[rnd(n)] ^= (uint8_t)(1u << rnd(8));
            break;
        case 1:
            if (n) b->p[rnd(n)] = (uint8_t)rnd64();
            break;
        case 2:
            if (n) b->p[rnd(n)] = interesting[rnd(sizeof interesting)];
            break;
        case 3: { /* insert random bytes */
            size_t at = rnd(n + 1), k = 1 + rnd(16);
            reserve(b, n + k);
            memmove(b->p + at + k, b->p + at, n - at);
            for (size_t i = 0; i < k; i++) b->p[at + i] = (uint8_t)rnd64();
            b->n = n + k;
            break;
        }
        case 4: { /* delete a range */
            if (!n) break;
            size_t at = rnd(n), k = 1 + rnd(64);
            if (k > n - at) k = n - at;
            memmove(b->p + at, b->p + at + k, n - at - k);
            b->n = n - k;
            break;
        }
        case 5: { /* duplicate a range */
            if (!n) break;
            size_t at = rnd(n), k = 1 + rnd(64);
            if (k > n - at) k = n - at;
            reserve(b, n + k);
            memmove(b->p + at + k, b->p + at, n - at);
            b->n = n + k;
            break;
        }
        case 6: /* cut */ b->n = rnd(n + 1); break;
        case 7: { /* trailing bytes */
            size_t k = 1 + rnd(8);
            reserve(b, n + k);
            for (size_t i = 0; i < k; i++) b->p[n + i] = (uint8_t)rnd64();
            b->n = n + k;
            break;
        }
        default: { /* overwrite a range with bytes from elsewhere */
            if (n < 2) break;
            size_t from = rnd(n), to = rnd(n), k = 1 + rnd(32);
            if (k > n - from) k = n - from;
            if (k > n - to) k = n - to;
            memmove(b->p + to, b->p + from, k);
            break;
        }
        }
    }
}

/* Write seed s again with its block k replaced by nb (symbols syms, header options h, a stored
 * block's bytes data) and everything else copied bit for bit. */
static void rewrite(buf *out, const seed *s, size_t k, const dm_block *nb, const dm_sym *syms, size_t nsym,
                    const dm_hdr *h, const uint8_t *data, size_t data_len, uint32_t nlen_xor) {
    dm_bits w = {0};
    dm_copy_bits(&w, s->raw, 0, s->m.b[k].bit);
    dm_write_block(&w, nb, syms, nsym, h, data, data_len, nlen_xor);
    size_t next = k + 1 < s->m.nb ? s->m.b[k + 1].bit : s->m.end_bit;
    dm_copy_bits(&w, s->raw, next, s->n * 8);
    take_bits(out, &w);
}

static const dm_sym *syms_of(const seed *s, const dm_block *b) { return b->nsym ? s->m.s + b->sym0 : NULL; }

static long pick_block(const seed *s, int type) { /* a block of the type (-1: any Huffman block) */
    size_t c = 0;
    for (size_t i = 0; i < s->m.nb; i++)
        if (type < 0 ? s->m.b[i].type != 0 : s->m.b[i].type == type) c++;
    if (!c) return -1;
    size_t want = rnd(c);
    for (size_t i = 0; i < s->m.nb; i++)
        if ((type < 0 ? s->m.b[i].type != 0 : s->m.b[i].type == type) && want-- == 0) return (long)i;
    return -1;
}

/* A Huffman block as a dynamic one (a fixed block gets a complete code of fixed-like lengths). */
static void as_dynamic(dm_block *b) {
    if (b->type == 2) return;
    b->type = 2;
    b->nlen = 286;
    b->ndist = 30;
    memset(b->lens, 8, 144);
    memset(b->lens + 144, 9, 112);
    memset(b->lens + 256, 7, 24);
    memset(b->lens + 280, 8, 4);
    memset(b->lens + 284, 7, 2);
    memset(b->lens + 286, 5, 28);
    memset(b->lens + 314, 4, 2);
}

static int used_len(const dm_block *b, unsigned *at) { /* a used length's index, 0 when none */
    unsigned total = b->nlen + b->ndist, start = (unsigned)rnd(total);
    for (unsigned i = 0; i < total; i++) {
        unsigned j = (start + i) % total;
        if (b->lens[j]) {
            *at = j;
            return 1;
        }
    }
    return 0;
}

static void mutate_lens(dm_block *b) {
    unsigned ops = 1 + (unsigned)rnd(3), at, t;
    uint8_t *l = b->lens;
    uint8_t *dl = l + b->nlen;
    for (unsigned o = 0; o < ops; o++) {
        switch (rnd(12)) {
        case 0: /* one length up or down */
            if (used_len(b, &at))
                l[at] = (uint8_t)(rnd(2) ? (l[at] < 15 ? l[at] + 1 : 14) : (l[at] > 1 ? l[at] - 1 : 2));
            break;
        case 1: /* one code gone */
            if (used_len(b, &at)) l[at] = 0;
            break;
        case 2: l[256] = 0; break;
        case 3: /* no distance code */ memset(dl, 0, b->ndist); break;
        case 4: /* a single distance code, of one bit (zlib's exception) or more */
            memset(dl, 0, b->ndist);
            dl[rnd(b->ndist)] = (uint8_t)(rnd(3) ? 1 : 1 + rnd(15));
            break;
        case 5: /* end of block alone */
            memset(l, 0, b->nlen);
            l[256] = (uint8_t)(rnd(3) ? 1 : 1 + rnd(15));
            break;
        case 6: /* split a code in two (complete still; codes get longer, up to 15 bits) */
            for (unsigned rep = 0, n = 1 + (unsigned)rnd(6); rep < n; rep++) {
                if (!used_len(b, &at) || l[at] >= 15) continue;
                unsigned base = at < b->nlen ? 0 : b->nlen, cnt = at < b->nlen ? b->nlen : b->ndist;
                unsigned s0 = (unsigned)rnd(cnt);
                for (t = 0; t < cnt && l[base + (s0 + t) % cnt]; t++) {}
                if (t == cnt) continue;
                l[at]++;
                l[base + (s0 + t) % cnt] = l[at];
            }
            break;
        case 7: /* merge two codes of one length into one a bit shorter (complete still) */
            if (used_len(b, &at) && l[at] > 1) {
                unsigned base = at < b->nlen ? 0 : b->nlen, cnt = at < b->nlen ? b->nlen : b->ndist;
                for (t = 0; t < cnt; t++)
                    if (base + t != at && l[base + t] == l[at]) break;
                if (t < cnt) {
                    l[base + t] = 0;
                    l[at]--;
                }
            }
            break;
        case 8: { /* swap two lengths */
            unsigned a, c;
            if (used_len(b, &a) && used_len(b, &c)) {
                uint8_t x = l[a];
                l[a] = l[c];
                l[c] = x;
            }
            break;
        }
        case 9: /* any length anywhere */ l[rnd(b->nlen + b->ndist)] = (uint8_t)rnd(16); break;
        case 10: /* fewer literal/length codes declared (the last ones dropped) */
            if (b->nlen > 257) {
                unsigned nl = 257 + (unsigned)rnd(b->nlen - 257);
                memmove(l + nl, dl, b->ndist);
                b->nlen = nl;
                dl = l + nl;
            }
            break;
        default: /* more of them declared (zero lengths), up to 286 */
            if (b->nlen < 286) {
                unsigned nl = b->nlen + 1 + (unsigned)rnd(286 - b->nlen);
                memmove(l + nl, dl, b->ndist);
                memset(l + b->nlen, 0, nl - b->nlen);
                b->nlen = nl;
                dl = l + nl;
            }
            break;
        }
    }
}

static int m_lens(buf *out, const seed *s) {
    long k = pick_block(s, -1);
    if (k < 0) return -1;
    dm_block nb = s->m.b[k];
    as_dynamic(&nb);
    mutate_lens(&nb);
    rewrite(out, s, (size_t)k, &nb, syms_of(s, &nb), nb.nsym, NULL, NULL, 0, 0);
    return 0;
}

static int m_repeat(buf *out, const seed *s) {
    long k = pick_block(s, -1);
    if (k < 0) return -1;
    dm_block nb = s->m.b[k];
    as_dynamic(&nb);
    dm_hdr h = {DM_RLE_GREEDY, 0, -1, -1, 0};
    switch (rnd(6)) {
    case 0: h.rle = DM_RLE_FIRST16; break;
    case 1:
        h.rle = DM_RLE_OVERRUN;
        h.overrun = rnd(4) ? 1 + (unsigned)rnd(3) : 1 + (unsigned)rnd(140);
        break;
    case 2: h.rle = DM_RLE_NONE; break;
    case 3: h.hlit = (int)(nb.nlen + rnd(286 - nb.nlen + 1)); break; /* more lengths, all valid */
    case 4:
        h.hlit = 287 + (int)rnd(2);
        h.hdist = rnd(2) ? 31 + (int)rnd(2) : -1;
        break; /* too many */
    default: h.hdist = (int)(nb.ndist + rnd(30 - nb.ndist + 1)); break;
    }
    rewrite(out, s, (size_t)k, &nb, syms_of(s, &nb), nb.nsym, &h, NULL, 0, 0);
    return 0;
}

static int m_counts(buf *out, const seed *s) {
    long k = pick_block(s, 2);
    if (k < 0) return -1;
    set_raw(out, s->raw, s->n);
    size_t bit = s->m.b[k].bit + 3;
    static const unsigned lit_edge[] = {28, 29, 30, 31}, dist_edge[] = {28, 29, 30, 31};
    switch (rnd(3)) {
    case 0: put_bits_at(out->p, bit, rnd(2) ? lit_edge[rnd(4)] : (uint32_t)rnd(32), 5); break;
    case 1: put_bits_at(out->p, bit + 5, rnd(2) ? dist_edge[rnd(4)] : (uint32_t)rnd(32), 5); break;
    default: put_bits_at(out->p, bit + 10, (uint32_t)rnd(16), 4); break;
    }
    return 0;
}

static int m_cl(buf *out, const seed *s) {
    long k = pick_block(s, 2);
    if (k < 0) return -1;
    set_raw(out, s->raw, s->n);
    const dm_block *b = &s->m.b[k];
    for (unsigned e = 0, n = 1 + (unsigned)rnd(3); e < n; e++)
        put_bits_at(out->p, b->bit + 17 + 3 * rnd(b->ncode), (uint32_t)rnd(8), 3);
    return 0;
}

static int m_stored(buf *out, const seed *s) {
    long k = pick_block(s, 0);
    if (k >= 0 && rnd(4)) { /* in place: LEN and NLEN at the stored bytes' offset - 4 */
        const dm_block *b = &s->m.b[k];
        set_raw(out, s->raw, s->n);
        size_t at = b->stored_at - 4;
        uint32_t len = b->stored_len;
        switch (rnd(5)) {
        case 0: out->p[at + rnd(4)] ^= (uint8_t)(1u << rnd(8)); break;
        case 1: /* consistent, another length: the block ends elsewhere */
            len = (uint32_t)(rnd(2) ? (len + 1 + rnd(8)) & 0xFFFFu : (len - 1 - rnd(8)) & 0xFFFFu);
            put_bits_at(out->p, at * 8, len, 16);
            put_bits_at(out->p, at * 8 + 16, ~len & 0xFFFFu, 16);
            break;
        case 2: put_bits_at(out->p, at * 8 + 16, len, 16); break; /* NLEN = LEN */
        case 3:                                                   /* 0 or 65535 */
            len = rnd(2) ? 0 : 0xFFFFu;
            put_bits_at(out->p, at * 8, len, 16);
            put_bits_at(out->p, at * 8 + 16, ~len & 0xFFFFu, 16);
            break;
        default: put_bits_at(out->p, at * 8 + 16, (~len ^ (1u << rnd(16))) & 0xFFFFu, 16); break;
        }
        return 0;
    }
    k = pick_block(s, -1); /* a Huffman block made stored (its bytes, 65535 at most) */
    if (k < 0) return -1;
    const dm_block *b = &s->m.b[k];
    uint64_t len = (k + 1 < (long)s->m.nb ? s->m.b[k + 1].out0 : s->m.out_len) - b->out0;
    if (len > 0xFFFFu) len = 0xFFFFu;
    dm_block nb = *b;
    nb.type = 0;
    nb.stored_len = (uint32_t)len;
    uint32_t x = rnd(2) ? 0 : (uint32_t)(1u << rnd(16));
    if (rnd(3) == 0) nb.stored_len = (uint32_t)((len + (rnd(2) ? 1 : 0xFFFFu)) & 0xFFFFu); /* with NLEN to match */
    rewrite(out, s, (size_t)k, &nb, NULL, 0, NULL, s->out + b->out0, (size_t)len, x);
    return 0;
}

static int m_dist(buf *out, const seed *s) {
    long k = pick_block(s, -1);
    if (k < 0) return -1;
    const dm_block *b = &s->m.b[k];
    dm_block nb = *b;
    dm_sym *ys = malloc((b->nsym + 1) * sizeof *ys);
    if (!ys) abort();
    if (b->nsym) memcpy(ys, s->m.s + b->sym0, b->nsym * sizeof *ys);
    size_t n = b->nsym;
    if (rnd(4) == 0) { /* the fixed code's symbols zlib refuses */
        nb.type = 1;
        size_t at = rnd(n + 1);
        memmove(ys + at + 1, ys + at, (n - at) * sizeof *ys);
        n++;
        ys[at] = rnd(2) ? (dm_sym){DM_RAW_LL, 0, 0, (uint16_t)(286 + rnd(2)), 0}
                        : (dm_sym){DM_RAW_DIST, 0, 0, (uint16_t)(30 + rnd(2)), 0};
    } else { /* a match reaching before the first byte, or just to it */
        uint64_t o = b->out0;
        size_t cand = n, seen = 0;
        for (size_t i = 0; i < n && o < 32768; i++) {
            if (ys[i].kind == DM_MATCH && rnd(++seen) == 0) cand = i;
            o += ys[i].kind == DM_LIT ? 1 : ys[i].len;
        }
        if (cand == n) {
            free(ys);
            return -1;
        }
        o = b->out0;
        for (size_t i = 0; i < cand; i++) o += ys[i].kind == DM_LIT ? 1 : ys[i].len;
        uint64_t d = o + (rnd(4) == 0 ? 0 : rnd(4) ? 1 + rnd(3) : 1 + rnd(32768));
        if (d < 1) d = 1;
        if (d > 32768) d = 32768;
        ys[cand].dist = (uint32_t)d;
        unsigned sym, eb, ex;
        dm_dist_code((unsigned)d, &sym, &eb, &ex);
        if (nb.type == 2 && (sym >= nb.ndist || !nb.lens[nb.nlen + sym])) nb.type = 1; /* no code: fixed */
    }
    rewrite(out, s, (size_t)k, &nb, ys, n, NULL, NULL, 0, 0);
    free(ys);
    return 0;
}

static int m_final(buf *out, const seed *s) {
    if (!s->m.nb) return -1;
    set_raw(out, s->raw, s->n);
    size_t bit = s->m.b[rnd(s->m.nb)].bit;
    out->p[bit >> 3] ^= (uint8_t)(1u << (bit & 7));
    return 0;
}

static int m_splice(buf *out, const seed *s) {
    if (rnd(3) == 0) { /* cut near a block's start */
        size_t bit = s->m.b[rnd(s->m.nb)].bit + rnd(64);
        set_raw(out, s->raw, s->n);
        size_t n = (bit + 7) / 8 + rnd(3);
        out->n = n < s->n ? n : s->n;
        return 0;
    }
    const seed *t = &seeds[rnd(nseeds)];
    if (!t->ok) return -1;
    size_t j = rnd(s->m.nb + 1), k = rnd(t->m.nb);
    dm_bits w = {0};
    dm_copy_bits(&w, s->raw, 0, j < s->m.nb ? s->m.b[j].bit : s->m.end_bit);
    if (j == s->m.nb && s->m.nb) { /* the first seed's last block ends it: its final bit cleared */
        size_t fb = s->m.b[s->m.nb - 1].bit;
        w.p[fb >> 3] &= (uint8_t) ~(1u << (fb & 7));
    }
    dm_copy_bits(&w, t->raw, t->m.b[k].bit, t->n * 8);
    take_bits(out, &w);
    return 0;
}

static int m_havoc(buf *out, const seed *s) {
    set_raw(out, s->raw, s->n);
    havoc(out, 1 + (unsigned)rnd(8));
    return 0;
}

/* zlib's refusals by its message */
static struct {
    const char *msg;
    uint64_t n;
} why[32];
static void tally(const char *msg) {
    size_t i = 0;
    while (i < 32 && why[i].msg && strcmp(why[i].msg, msg ? msg : "?")) i++;
    if (i == 32) return;
    why[i].msg = msg ? msg : "?";
    why[i].n++;
}

typedef struct mutator {
    const char *name;
    int (*fn)(buf *, const seed *);
    int on;
    uint64_t runs, kinds[5], lent;
} mutator;

static mutator muts[] = {
    {"havoc", m_havoc, 1, 0, {0}, 0}, {"counts", m_counts, 1, 0, {0}, 0}, {"cl", m_cl, 1, 0, {0}, 0},
    {"lens", m_lens, 1, 0, {0}, 0},   {"repeat", m_repeat, 1, 0, {0}, 0}, {"stored", m_stored, 1, 0, {0}, 0},
    {"dist", m_dist, 1, 0, {0}, 0},   {"final", m_final, 1, 0, {0}, 0},   {"splice", m_splice, 1, 0, {0}, 0},
};
#define NMUT (sizeof muts / sizeof muts[0])

int main(int argc, char **argv) {
    uint64_t total = 1000000;
    unsigned long long sd = 1;
    const char *outdir = ".";
    int keep = 0, i;
    for (i = 1; i < argc && argv[i][0] == '-'; i++) {
        if (!strcmp(argv[i], "-n") && i + 1 < argc) total = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-s") && i + 1 < argc) sd = strtoull(argv[++i], NULL, 10);
        else if (!strcmp(argv[i], "-o") && i + 1 < argc) outdir = argv[++i];
        else if (!strcmp(argv[i], "-k")) keep = 1;
        else if (!strcmp(argv[i], "-m") && i + 1 < argc) {
            char *list = argv[++i];
            for (size_t m = 0; m < NMUT; m++) muts[m].on = 0;
            for (char *t = strtok(list, ","); t; t = strtok(NULL, ",")) {
                size_t m = 0;
                while (m < NMUT && strcmp(muts[m].name, t)) m++;
                if (m == NMUT) {
                    fprintf(stderr, "fastinf_campaign: no mutator %s\n", t);
                    return 2;
                }
                muts[m].on = 1;
            }
        } else {
            fprintf(stderr, "usage: fastinf_campaign [-n N] [-s SEED] [-m LIST] [-o DIR] [-k] PATH...\n");
            return 2;
        }
    }
    for (; i < argc; i++) load(argv[i]);
    if (!nseeds || !nparsed) {
        fprintf(stderr, "fastinf_campaign: %zu seeds, %zu of them valid streams: need one of each at least\n", nseeds,
                nparsed);
        return 2;
    }
    rs = sd * 0x9E3779B97F4A7C15ULL + 1;
    size_t on[NMUT], non = 0;
    for (size_t m = 0; m < NMUT; m++)
        if (muts[m].on) on[non++] = m;
    buf b = {0};
    uint64_t diffs = 0;
    for (uint64_t it = 0; it < total; it++) {
        mutator *mu = &muts[on[it % non]];
        const seed *s = &seeds[rnd(nseeds)];
        if (mu->fn != m_havoc) {
            for (int tries = 0; tries < 8 && !s->ok; tries++) s = &seeds[rnd(nseeds)];
            if (!s->ok || mu->fn(&b, s) < 0) m_havoc(&b, s);
            else if (rnd(8) == 0) havoc(&b, 1 + (unsigned)rnd(2));
        } else {
            m_havoc(&b, s);
        }
        /* the windows and pushes of fastinf_diff.h, the small ones (a call every few bytes) now
         * and then: windows of 1, 7, 64 bytes in 2, 2, 4 streams of 64; pushes of 1, 3, 7 bytes
         * in 1, 2, 2 of 32 (and rarer still in large streams) */
        static const uint8_t win_pick[16] = {0, 1, 2, 3, 3, 4, 4, 4, 5, 5, 5, 6, 6, 6, 7, 7};
        static const uint8_t push_pick[32] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 2, 3, 3, 4, 4, 4,
                                              4, 5, 5, 5, 5, 5, 6, 6, 6, 6, 6, 6, 7, 7, 7, 7};
        size_t wr = rnd(64);
        unsigned win = wr < 8 ? (unsigned)(wr < 2 ? 0 : wr < 4 ? 1 : 2) : win_pick[3 + (wr - 8) % 13];
        unsigned push = push_pick[rnd(32)];
        if (b.n > 16384 && win < 3 && rnd(16)) win = 3 + (unsigned)rnd(5);
        if (b.n > 16384 && push >= 1 && push <= 3 && rnd(8)) push = 4 + (unsigned)rnd(4);
        unsigned ctl = push | win << 3 | (unsigned)rnd(4) << 6 | (unsigned)rnd(2) << 8; /* bit 8: the portable loop */
        fz_fi_verdict z, f;
        mu->runs++;
        if (fz_fastinf_diff(ctl, b.p, b.n, &z, &f)) {
            diffs++;
            char path[4096];
            snprintf(path, sizeof path, "%s/fastinf-diff-%llu.bin", outdir, (unsigned long long)it);
            FILE *o = fopen(path, "wb");
            if (o) {
                fputc((int)(ctl & 0xFFu), o); /* fuzz_fastinf's input runs both loops */
                fwrite(b.p, 1, b.n, o);
                fclose(o);
            }
            fprintf(stderr, "fastinf_campaign: stream %llu (mutator %s) differs: %s\n", (unsigned long long)it,
                    mu->name, path);
            if (!keep) break;
        }
        mu->kinds[z.kind]++;
        if (f.zblocks) mu->lent++;
        if (z.kind == FZ_FI_BAD) tally(z.msg);
        if ((it + 1) % 1000000 == 0) { /* progress, for long runs */
            struct rusage ru;
            getrusage(RUSAGE_SELF, &ru);
            fprintf(stderr, "fastinf_campaign: %llu streams, %llu differences, CPU %ld s\n",
                    (unsigned long long)(it + 1), (unsigned long long)diffs,
                    (long)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec));
        }
    }
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    double cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
                 (double)ru.ru_stime.tv_usec / 1e6;
    uint64_t runs = 0;
    for (size_t m = 0; m < NMUT; m++) {
        if (!muts[m].on) continue;
        runs += muts[m].runs;
        printf(
            "%-7s %12llu streams: %llu end, %llu refused, %llu cut short, %llu capped; %llu with blocks lent to zlib\n",
            muts[m].name, (unsigned long long)muts[m].runs, (unsigned long long)muts[m].kinds[FZ_FI_END],
            (unsigned long long)muts[m].kinds[FZ_FI_BAD], (unsigned long long)muts[m].kinds[FZ_FI_CUT],
            (unsigned long long)muts[m].kinds[FZ_FI_CAPPED], (unsigned long long)muts[m].lent);
    }
    for (size_t w = 0; w < 32 && why[w].msg; w++)
        printf("refused: %12llu  %s\n", (unsigned long long)why[w].n, why[w].msg);
    printf("campaign: %llu streams, %llu differences, %zu seeds (%zu parsed), CPU %.0f s, generator seed %llu\n",
           (unsigned long long)runs, (unsigned long long)diffs, nseeds, nparsed, cpu, sd);
    free(b.p);
    return diffs ? 1 : 0;
}
