/*
 * test_api.c -- C-level tests of the public API:
 *   - split invariance: every file given on the command line is parsed whole,
 *     in 1-byte pushes, 7-byte pushes, with empty pushes interleaved, and at
 *     seeded random split points; events (data chunks merged), verdict, error
 *     code and offset must be identical;
 *   - every push is copied into a fresh heap buffer that is freed right after
 *     the call, so a pointer kept across calls is a use-after-free under ASan;
 *   - the progress invariant on every call;
 *   - zero copy: stored DATA chunks point into the pushed buffer;
 *   - allocator failure: fail the i-th allocation for every i, each must end
 *     in a clean NPZS_E_NOMEM (LeakSanitizer checks nothing leaks);
 *   - API contract: sticky errors, NPZS_DONE, trailing bytes, bad arguments,
 *     invalid limits, error names;
 *   - every .npy header met is parsed again by the general parser alone and by
 *     the default path (NumPy's exact text first): the results must agree.
 * Usage: test_api FILE...   Last line: "api: N passed, M failed".
 */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h" /* fuzz/common.c: fz_header_paths */
#include "internal.h"
#include "npzstream.h"

static int passed, failed;
/* headers compared between the fast and the general parser path, and how many took the fast one */
static int check_paths;
static long headers_seen, headers_fast;
/* into_mode: every array's data goes to a destination named with npzs_data_into; the events
 * must be the same, every DATA chunk at dst + pos; direct_bytes counts what inflate wrote there */
static int into_mode;
static int seq_mode; /* parse() calls npzs_npy_sequence */
/* npzs_events: parse() asks for ev_mask when mask_on; drive() hashes only the events in ev_mask
 * (END always), and with mask_on any other event delivered breaks the run's progress flag */
static int mask_on;
static unsigned ev_mask = NPZS_EV_ALL;
static uint64_t direct_bytes, into_bad;
static long fast_checked; /* files also read with NPZS_LENIENT_FAST_INFLATE */
static long zlib_checked; /* files also read with NPZS_INFLATE_ZLIB */
#define CHECK(cond, ...)                                                      \
    do {                                                                      \
        if (cond) passed++;                                                   \
        else { failed++; printf("FAIL %s:%d: ", __FILE__, __LINE__); printf(__VA_ARGS__); printf("\n"); } \
    } while (0)

/* ---- digest of a run ---- */
typedef struct run {
    uint64_t h;          /* events, data merged */
    int verdict;         /* 1 END, <0 error */
    uint64_t err_off;
    long err_member;
    int events;
    int progress_ok;
    int zero_copy_ok;
} run;

static uint64_t mix(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) { h ^= b[i]; h *= 0x100000001b3ULL; }
    return h;
}
#define MIXV(h, v) ((h) = mix((h), &(v), sizeof(v)))

typedef struct counting {
    long n, fail_at, live, peak; /* peak: the most blocks live at once */
} counting;
static void *c_alloc(void *o, size_t n) {
    counting *c = o;
    if (c->fail_at >= 0 && c->n++ == c->fail_at) return NULL;
    if (c->fail_at < 0) c->n++;
    if (++c->live > c->peak) c->peak = c->live;
    return malloc(n);
}
static void c_free(void *o, void *p) {
    counting *c = o;
    c->live--;
    free(p);
}

/* Parse buf with pushes of the sizes produced by next_size(); 0-size pushes allowed. */
/* ---- the structured dtype's tree ---- */

/* The tree's invariants, checked on every header met: node 0 is the top-level struct and has
 * the array's itemsize; a subarray's element type comes before it and the product of its shape
 * times that type's size is its size; a field's type comes after its struct and lies inside it;
 * every field of every struct is listed once; a scalar's type string is NumPy's dtype.str.
 * 0 when they hold (the digest of the tree in *h), else a line saying which does not. */
static const char *tree_check(const npzs_array_info *a, uint64_t *h) {
    if (!a->structured) return a->dt_nodes || a->dt_nnodes || a->dt_nfields ? "tree on a plain dtype" : NULL;
    const npzs_dtnode *n = a->dt_nodes;
    if (!n || a->dt_nnodes == 0) return "no tree";
    if (n[0].kind != NPZS_DT_STRUCT || n[0].itemsize != a->itemsize) return "node 0 is not the array's struct";
    uint64_t listed = 0;
    for (uint32_t k = 0; k < a->dt_nnodes; k++) {
        const npzs_dtnode *t = &n[k];
        MIXV(*h, t->kind);
        MIXV(*h, t->itemsize);
        if (t->kind == NPZS_DT_SCALAR) {
            if (!t->dtype || strlen(t->dtype) < 3) return "scalar without a type string";
            *h = mix(*h, t->dtype, strlen(t->dtype));
            char c = t->dtype[1];
            uint64_t w = strtoull(t->dtype + 2, NULL, 10);
            if (c == 'U') w *= 4;
            if (strchr("SUV", c) && w != t->itemsize) return "a string's width is not its size";
        } else if (t->kind == NPZS_DT_SUBARRAY) {
            if (t->base >= k || t->ndim == 0 || !t->shape) return "subarray base not before it";
            uint64_t sz = n[t->base].itemsize;
            for (uint32_t d = 0; d < t->ndim; d++) { sz *= t->shape[d]; MIXV(*h, t->shape[d]); }
            if (sz != t->itemsize) return "subarray size is not shape times base";
        } else if (t->kind == NPZS_DT_STRUCT) {
            if ((uint64_t)t->first + t->count > a->dt_nfields) return "struct's fields out of range";
            for (uint32_t f = t->first; f < t->first + t->count; f++) {
                const npzs_dtfield *fd = &a->dt_fields[f];
                if (fd->type <= k || fd->type >= a->dt_nnodes) return "field type not after its struct";
                if (fd->offset + n[fd->type].itemsize > t->itemsize) return "field outside its struct";
                if (!fd->name || (!fd->title && fd->title_len)) return "a field's name or title";
                *h = mix(*h, fd->name, fd->name_len);
                if (fd->title) *h = mix(*h, fd->title, fd->title_len);
                MIXV(*h, fd->offset);
                MIXV(*h, fd->type);
            }
            listed += t->count;
        } else return "unknown node kind";
    }
    return listed == a->dt_nfields ? NULL : "a field listed twice or never";
}

/* Everything a header says, hashed; *why set when its dtype tree is inconsistent. */
static uint64_t info_hash(const npzs_array_info *a, const char **why) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = mix(h, a->dtype, strlen(a->dtype));
    h = mix(h, a->descr, a->descr_len);
    h = mix(h, a->header, a->header_size);
    h = mix(h, a->shape, a->ndim * sizeof *a->shape);
    MIXV(h, a->nbytes);
    MIXV(h, a->fortran_order);
    MIXV(h, a->version_major);
    MIXV(h, a->header_len);
    *why = tree_check(a, &h);
    return h;
}

/* One input through parser p, pushed as sched says; the parser is left as the input left it. */
static run drive(npzs_parser *p, const uint8_t *buf, size_t len, const size_t *sched, size_t nsched) {
    run r;
    memset(&r, 0, sizeof r);
    r.h = 0xcbf29ce484222325ULL;
    r.progress_ok = r.zero_copy_ok = 1;
    size_t off = 0, k = 0;
    int data_stream_member = -1;
    uint64_t data_h = 0x84222325ULL;
    uint8_t *dst = NULL;
    uint64_t dst_len = 0;
    uint64_t header_h = 0; /* info_hash of the last HEADER event */
    for (;;) {
        size_t n = len - off;
        if (nsched) { size_t s = sched[k++ % nsched]; if (n > s) n = s; }
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf + off, n);
        npzs_in in = {n ? copy : NULL, n, 0}; /* an empty push may come without a buffer */
        int fin = off + n == len;
        if (fin) npzs_finish(p);
        int stop = 0;
        for (;;) {
            npzs_event ev;
            int rc = npzs_next(p, &in, &ev);
            if (rc == NPZS_NEED_INPUT) {
                if (in.pos != in.size || fin) { r.progress_ok = 0; stop = 1; }
                break;
            }
            if (rc == NPZS_EVENT) {
                r.events++;
                if (!(((ev_mask | NPZS_EV_BIT(NPZS_EV_END)) >> ev.type) & 1u)) {
                    if (mask_on) r.progress_ok = 0; /* delivered, though not asked for */
                    continue;
                }
                if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) {
                    if (ev.zero_copy && !(ev.data >= copy && ev.data + ev.len <= copy + n)) r.zero_copy_ok = 0;
                    if (dst && (ev.type != NPZS_EV_DATA || ev.data != dst + ev.pos || ev.pos + ev.len > dst_len ||
                                ev.zero_copy))
                        into_bad++;
                    for (size_t i = 0; i < ev.len; i++) data_h = (data_h ^ ev.data[i]) * 0x100000001b3ULL;
                    if (data_stream_member != (int)ev.member) data_stream_member = (int)ev.member;
                    continue;
                }
                if (ev.type == NPZS_EV_MEMBER_END) {
                    MIXV(r.h, data_h);
                    data_h = 0;
                    data_stream_member = -1;
                    if (dst) direct_bytes += p->c.out_direct;
                    free(dst);
                    dst = NULL;
                }
                MIXV(r.h, ev.type);
                MIXV(r.h, ev.member);
                if (ev.type == NPZS_EV_MEMBER_BEGIN) {
                    if (ev.name) r.h = mix(r.h, ev.name, ev.name_len);
                    MIXV(r.h, ev.method);
                    MIXV(r.h, ev.offset);
                } else if (ev.type == NPZS_EV_HEADER) {
                    const npzs_array_info *a = ev.array;
                    if (check_paths) { /* aborts, with both results, when the paths disagree */
                        size_t pre = a->version_major == 1 ? 10 : 12;
                        headers_seen++;
                        headers_fast += fz_header_paths(a->header + pre, a->header_size - pre, a->version_major == 3);
                    }
                    if (a->header_size != a->header_len) r.progress_ok = 0;
                    const char *why = NULL;
                    header_h = info_hash(a, &why);
                    MIXV(r.h, header_h);
                    if (why) { r.progress_ok = 0; printf("  dtype tree: %s\n", why); }
                    if (into_mode && a->nbytes <= (UINT64_C(1) << 28)) {
                        dst_len = a->nbytes;
                        dst = malloc(a->nbytes ? (size_t)a->nbytes : 1);
                        if (npzs_data_into(p, dst, (size_t)a->nbytes) != 0) into_bad++;
                        if (!a->nbytes) { free(dst); dst = NULL; }
                    }
                } else if (ev.type == NPZS_EV_MEMBER_END) {
                    /* an array's MEMBER_END points at its header again: the HEADER event's, when it came */
                    const char *why = NULL;
                    uint64_t ah = ev.array ? info_hash(ev.array, &why) : 0;
                    if ((ev.array != NULL) != (ev.kind == NPZS_KIND_ARRAY) || why ||
                        (ev.array && ((ev_mask >> NPZS_EV_HEADER) & 1u) && ah != header_h))
                        r.progress_ok = 0;
                    MIXV(r.h, ah);
                    MIXV(r.h, ev.size);
                    MIXV(r.h, ev.csize);
                    MIXV(r.h, ev.crc32);
                    MIXV(r.h, ev.data_crc32);
                    MIXV(r.h, ev.offset);
                } else if (ev.type == NPZS_EV_END) {
                    MIXV(r.h, ev.members);
                    MIXV(r.h, ev.offset);
                    r.verdict = 1;
                    stop = 1;
                    break;
                }
                continue;
            }
            if (rc == NPZS_DONE) { r.progress_ok = 0; stop = 1; break; }
            r.verdict = rc;
            r.err_off = npzs_error_offset(p);
            r.err_member = npzs_error_member(p);
            const char *rule = npzs_error_rule(p); /* the rule and content offset are compared too */
            if (rule) r.h = mix(r.h, rule, strlen(rule));
            uint64_t coff = npzs_error_content_offset(p);
            MIXV(r.h, coff);
            npzs_event ev2;
            if (npzs_next(p, &in, &ev2) != rc) r.progress_ok = 0; /* sticky */
            stop = 1;
            break;
        }
        off += in.pos;
        free(copy);
        if (stop) break;
    }
    free(dst);
    return r;
}

static run parse(const uint8_t *buf, size_t len, const size_t *sched, size_t nsched, const npzs_limits *lim,
                 counting *cnt) {
    npzs_allocator al = {c_alloc, c_free, cnt};
    npzs_parser *p = npzs_new(lim, cnt ? &al : NULL);
    if (p && mask_on && npzs_events(p, ev_mask) != 0) {
        npzs_free(p);
        p = NULL;
    }
    if (p && seq_mode && npzs_npy_sequence(p) != 0) {
        npzs_free(p);
        p = NULL;
    }
    if (!p) {
        run r;
        memset(&r, 0, sizeof r);
        r.verdict = NPZS_E_NOMEM;
        return r;
    }
    run r = drive(p, buf, len, sched, nsched);
    npzs_free(p);
    return r;
}

static int same(const run *a, const run *b) {
    return a->h == b->h && a->verdict == b->verdict && a->err_off == b->err_off && a->err_member == b->err_member;
}

static uint8_t *slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (n == cap) { cap *= 2; b = realloc(b, cap); }
        size_t r = fread(b + n, 1, cap - n, f);
        if (!r) break;
        n += r;
    }
    fclose(f);
    *len = n;
    return b;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
static size_t rnd(size_t n) {
    rng ^= rng << 13; rng ^= rng >> 7; rng ^= rng << 17;
    return n ? (size_t)(rng % n) : 0;
}

static uint64_t par_used_total; /* members the helper's workers inflated, over every file */
static uint64_t par_taken_total; /* arrays whose data the caller took from a worker (npzs_par_take_data) */

static void test_file(const char *path) {
    size_t len;
    uint8_t *buf = slurp(path, &len);
    if (!buf) { CHECK(0, "cannot read %s", path); return; }
    check_paths = 1;
    run whole = parse(buf, len, NULL, 0, NULL, NULL);
    check_paths = 0;
    CHECK(whole.progress_ok, "%s: progress invariant (whole)", path);
    CHECK(whole.zero_copy_ok, "%s: zero-copy chunk outside the pushed buffer", path);
    CHECK(whole.verdict != 0, "%s: no verdict", path);
    size_t one = 1, seven = 7, withzero[3] = {0, 3, 0};
    if (len <= (1u << 20)) {
        run r1 = parse(buf, len, &one, 1, NULL, NULL);
        CHECK(same(&whole, &r1) && r1.progress_ok, "%s: 1-byte pushes differ (verdict %d/%d off %llu/%llu)", path,
              whole.verdict, r1.verdict, (unsigned long long)whole.err_off, (unsigned long long)r1.err_off);
    }
    run r7 = parse(buf, len, &seven, 1, NULL, NULL);
    CHECK(same(&whole, &r7) && r7.progress_ok, "%s: 7-byte pushes differ", path);
    if (len <= (1u << 20)) {
        run rz = parse(buf, len, withzero, 3, NULL, NULL);
        CHECK(same(&whole, &rz) && rz.progress_ok, "%s: pushes with empty ones differ", path);
    }
    /* every two-push split of a small input (http-parser's test_scan) */
    if (len <= 2048) {
        int ok = 1;
        for (size_t cut = 1; cut < len && ok; cut++) {
            size_t two[2] = {cut, len};
            run rc = parse(buf, len, two, 2, NULL, NULL);
            if (!same(&whole, &rc) || !rc.progress_ok) {
                ok = 0;
                printf("  cut at %zu: verdict %d off %llu\n", cut, rc.verdict, (unsigned long long)rc.err_off);
            }
        }
        CHECK(ok, "%s: a two-push split differs", path);
    }
    for (int t = 0; t < 4; t++) {
        size_t sched[16];
        for (int i = 0; i < 16; i++) sched[i] = rnd(t < 2 ? 64 : 70000);
        sched[0] = sched[0] ? sched[0] : 1;
        run rr = parse(buf, len, sched, 16, NULL, NULL);
        CHECK(same(&whole, &rr) && rr.progress_ok, "%s: random split %d differs", path, t);
    }
    /* the fuzz driver's invariants, and its zipfile oracle on an accepted archive (fz_run aborts
     * on a violation: what the stream accepted must be what zipfile lists, member by member);
     * without the memo of the last header, the same events */
    {
        fz_opts fo;
        fz_opts_init(&fo);
        fz_result fr, fm;
        CHECK(fz_run(buf, len, &fo, &fr) && fr.accepted == (whole.verdict == 1), "%s: fz_run differs", path);
        fo.no_memo = 1;
        fz_run(buf, len, &fo, &fm);
        CHECK(fz_same(&fr, &fm), "%s: the events differ without the header memo", path);
    }
    /* the parallel-inflate helper (npzs_par_*, every deflated member of known size inflated ahead by
     * a worker): the same events, verdict and error as the parser alone, whatever the split, the
     * workers and the bound */
    {
        fz_opts fo;
        fz_opts_init(&fo);
        fz_result alone, alone_nd, pr;
        fz_run(buf, len, &fo, &alone);
        fo.no_data = 1;
        fz_run(buf, len, &fo, &alone_nd);
        static const uint8_t s7[] = {7}, s4k[] = {0xE4}, smix[] = {1, 0xE5, 3, 0, 0xE0};
        const struct { const uint8_t *s; size_t n; unsigned th; uint64_t held; int into; uint64_t skip; int take, stable; } runs[] = {
            {NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 0, 0}, {s4k, 1, 2, UINT64_C(1) << 30, 0, 0, 0, 0}, {s4k, 1, 1, 4096, 0, 0, 0, 0},
            {smix, 5, 2, UINT64_C(1) << 30, 1, 0, 0, 0}, {s7, 1, 2, UINT64_C(1) << 30, 0, 0, 0, 0},
            {NULL, 0, 2, UINT64_C(1) << 30, 0, UINT64_MAX, 0, 0}, {s4k, 1, 2, UINT64_C(1) << 30, 0, 64, 0, 0},
            {smix, 5, 1, 1u << 20, 0, 700, 0, 0},
            /* npzs_par_take_data: any address, 16-byte aligned ones only (the rest into a destination) */
            {NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 1, 0}, {smix, 5, 2, UINT64_C(1) << 30, 1, 0, 5, 0}, {s4k, 1, 1, 1u << 20, 0, 0, 1, 0},
            /* npzs_par_stable_input: the pushes slices of one copy, held by reference */
            {s4k, 1, 2, UINT64_C(1) << 30, 0, UINT64_MAX, 0, 1}, {smix, 5, 1, 4096, 1, 0, 0, 1}, {NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 5, 1}};
        for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
            if (runs[k].s == s7 && len > (1u << 20)) continue;
            fo.sched = runs[k].s;
            fo.sched_n = runs[k].n;
            fo.par = 1;
            fo.par_threads = runs[k].th;
            fo.par_held = runs[k].held;
            fo.into = runs[k].into;
            fo.par_skip = runs[k].skip;
            fo.no_data = runs[k].skip != 0;
            fo.par_take = runs[k].take;
            fo.par_stable = runs[k].stable;
            fz_run(buf, len, &fo, &pr);
            CHECK(fz_same(runs[k].skip ? &alone_nd : &alone, &pr), "%s: through the helper (run %zu) the result differs", path, k);
        }
        par_used_total += fo.par_used;
        par_taken_total += fo.par_taken;
        /* npzs_events through the helper (asked for after it is attached): the events asked for */
        static const unsigned pmasks[] = {NPZS_EV_BIT(NPZS_EV_MEMBER_END), NPZS_EV_BIT(NPZS_EV_HEADER),
                                          NPZS_EV_BIT(NPZS_EV_DATA) | NPZS_EV_BIT(NPZS_EV_BLOB)};
        for (size_t k = 0; k < sizeof pmasks / sizeof *pmasks; k++) {
            fz_opts fa, fp;
            fz_opts_init(&fa);
            fa.mask = pmasks[k];
            fz_result ra, rp;
            fz_run(buf, len, &fa, &ra);
            fp = fa;
            fp.mask_parser = 1;
            fp.par = 1;
            fp.par_threads = 2;
            fp.par_held = UINT64_C(1) << 30;
            fp.sched = s4k;
            fp.sched_n = 1;
            fz_run(buf, len, &fp, &rp);
            CHECK(fz_same(&ra, &rp), "%s: through the helper, events masked to %#x differ", path, pmasks[k]);
        }
    }
    /* npzs_events: a parser asked for some events delivers exactly those of the whole stream, at
     * every split, with the same verdict, error and offset (the parser skipping the others) */
    {
        static const unsigned masks[] = {
            0, NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_MEMBER_END), NPZS_EV_BIT(NPZS_EV_MEMBER_END),
            NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_DATA), NPZS_EV_BIT(NPZS_EV_DATA) | NPZS_EV_BIT(NPZS_EV_BLOB),
            NPZS_EV_BIT(NPZS_EV_BLOB) | NPZS_EV_BIT(NPZS_EV_MEMBER_END), NPZS_EV_BIT(NPZS_EV_HEADER)};
        for (size_t k = 0; k < sizeof masks / sizeof *masks; k++) {
            ev_mask = masks[k];
            run ref = parse(buf, len, NULL, 0, NULL, NULL); /* every event delivered, these hashed */
            mask_on = 1;
            run m0 = parse(buf, len, NULL, 0, NULL, NULL);
            run m7 = parse(buf, len, &seven, 1, NULL, NULL);
            run m1 = len <= (1u << 16) ? parse(buf, len, &one, 1, NULL, NULL) : m0;
            run mz = len <= (1u << 16) ? parse(buf, len, withzero, 3, NULL, NULL) : m0;
            /* pushes that hold whole records (read in place) and end anywhere, empty ones between */
            int ok = 1;
            for (int t = 0; t < 3 && ok; t++) {
                size_t sched[9];
                for (int i = 0; i < 9; i++) sched[i] = i % 3 == 2 ? 0 : 1 + rnd(t ? 400 : 70000);
                run mr = parse(buf, len, sched, 9, NULL, NULL);
                if (!same(&ref, &mr) || !mr.progress_ok) ok = 0;
            }
            for (size_t cut = 1; cut < len && len <= 2048 && ok && k < 3; cut++) {
                size_t two[3] = {cut, 0, len};
                run mc = parse(buf, len, two, 3, NULL, NULL);
                if (!same(&ref, &mc) || !mc.progress_ok) {
                    ok = 0;
                    printf("  events %#x, cut at %zu: verdict %d off %llu\n", masks[k], cut, mc.verdict, (unsigned long long)mc.err_off);
                }
            }
            mask_on = 0;
            CHECK(ok && same(&ref, &m0) && same(&ref, &m7) && same(&ref, &m1) && same(&ref, &mz) && m0.progress_ok &&
                      m7.progress_ok && m1.progress_ok && mz.progress_ok && ref.verdict == whole.verdict &&
                      ref.err_off == whole.err_off,
                  "%s: events masked to %#x differ (verdict %d/%d off %llu/%llu)", path, masks[k], ref.verdict, m7.verdict,
                  (unsigned long long)ref.err_off, (unsigned long long)m7.err_off);
        }
        ev_mask = NPZS_EV_ALL;
    }
    /* direct output: the same events, whatever the split, with every array's data written into
     * the caller's buffer */
    {
        into_mode = 1;
        run d0 = parse(buf, len, NULL, 0, NULL, NULL);
        run d7 = parse(buf, len, &seven, 1, NULL, NULL);
        run d1 = len <= (1u << 18) ? parse(buf, len, &one, 1, NULL, NULL) : d0;
        into_mode = 0;
        CHECK(same(&whole, &d0) && same(&whole, &d7) && same(&whole, &d1), "%s: npzs_data_into changes the events", path);
    }
    /* npzs_reset: the same parser, reset after the input (accepted or refused), reads it again
     * exactly as a new one does, and after another input too */
    {
        npzs_parser *p = npzs_new(NULL, NULL);
        run a = drive(p, buf, len, NULL, 0);
        uint64_t peak = p->mem_peak, held = npzs_memory(p);
        npzs_reset(p);
        CHECK(npzs_error(p) == 0 && npzs_memory(p) <= held && strcmp(npzs_state_name(p), "START") == 0,
              "%s: reset leaves the error, memory or state of the input", path);
        run b = drive(p, buf, len, &seven, 1);
        npzs_reset(p);
        static const uint8_t junk[] = "PK\3\4 not an archive";
        (void)drive(p, junk, sizeof junk - 1, NULL, 0);
        npzs_reset(p);
        run c = drive(p, buf, len, NULL, 0);
        CHECK(same(&whole, &a) && same(&whole, &b) && same(&whole, &c), "%s: a reset parser reads it differently", path);
        npzs_free(p);
        /* max_memory: the peak of this input is enough, one byte less is refused as LIMIT.max_memory,
         * and npzs_memory never passes the cap */
        npzs_limits ml;
        npzs_limits_default(&ml);
        ml.max_memory = peak;
        run at = parse(buf, len, NULL, 0, &ml, NULL);
        CHECK(same(&whole, &at), "%s: max_memory = its peak (%llu) changes the result", path, (unsigned long long)peak);
        ml.max_memory = peak - 1;
        p = npzs_new(&ml, NULL);
        if (p) {
            run under = drive(p, buf, len, NULL, 0);
            const char *rule = npzs_error_rule(p);
            CHECK(under.verdict == NPZS_E_LIMIT && rule && strcmp(rule, "LIMIT.max_memory") == 0 && p->mem_peak < peak,
                  "%s: max_memory one below the peak: verdict %d rule %s", path, under.verdict, rule ? rule : "NULL");
            npzs_free(p);
        }
    }
    /* ISA-L's inflate (where built in): an accepted input gives the same events at every split;
     * a refused one is parsed to some verdict without a fault (ISA-L's may differ: the flag's
     * leniency), also with a 1-byte window */
    if (npzs_fast_inflate()) {
        npzs_limits fl;
        npzs_limits_default(&fl);
        fl.lenient = NPZS_LENIENT_FAST_INFLATE;
        run f0 = parse(buf, len, NULL, 0, &fl, NULL);
        run f7 = parse(buf, len, &seven, 1, &fl, NULL);
        run f1 = len <= (1u << 18) ? parse(buf, len, &one, 1, &fl, NULL) : f0;
        if (whole.verdict == 1)
            CHECK(same(&whole, &f0) && same(&whole, &f7) && same(&whole, &f1), "%s: ISA-L's inflate reads it differently", path);
        CHECK(f0.verdict != 0 && f0.progress_ok && f7.progress_ok && same(&f0, &f7) && same(&f0, &f1),
              "%s: ISA-L's inflate: no verdict, or one that depends on the split", path);
        /* a 1-byte window: the same for an accepted input; a refused one may be refused at another
         * point (ISA-L finds some invalid data before giving the bytes ahead of it when its output
         * room is small: SECURITY.md, "Lenient flags"), always with a verdict */
        fl.inflate_window = 1;
        run fw = parse(buf, len, &seven, 1, &fl, NULL);
        CHECK(whole.verdict == 1 ? same(&f0, &fw) : fw.verdict < 0 && fw.progress_ok,
              "%s: ISA-L's inflate with a 1-byte window differs", path);
        /* a reset parser keeps ISA-L's state and reads the input again the same (LeakSanitizer
         * checks that nothing is lost) */
        fl.inflate_window = 1u << 18;
        npzs_parser *q = npzs_new(&fl, NULL);
        run a1 = drive(q, buf, len, NULL, 0);
        npzs_reset(q);
        run a2 = drive(q, buf, len, &seven, 1);
        CHECK(same(&a1, &f0) && same(&a2, &f0), "%s: ISA-L's inflate after a reset differs", path);
        npzs_free(q);
        fast_checked++;
    }
    /* the default decoder (src/fastinf.c) against zlib alone (NPZS_INFLATE_ZLIB): the same
     * events, verdict, error, rule and offsets, whole, in 7-byte pushes and with a 1-byte window
     * (the default's own splits are checked against `whole` above and below) */
    {
        npzs_limits zl;
        npzs_limits_default(&zl);
        zl.lenient = NPZS_INFLATE_ZLIB;
        run z0 = parse(buf, len, NULL, 0, &zl, NULL);
        run z7 = parse(buf, len, &seven, 1, &zl, NULL);
        zl.inflate_window = 1;
        run zw = parse(buf, len, &seven, 1, &zl, NULL);
        CHECK(same(&whole, &z0) && same(&whole, &z7) && same(&whole, &zw),
              "%s: zlib alone reads it differently (verdict %d/%d off %llu/%llu)", path, whole.verdict, z0.verdict,
              (unsigned long long)whole.err_off, (unsigned long long)z0.err_off);
        zlib_checked++;
    }
    /* a small inflate window must not change anything either */
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.inflate_window = 1;
    run w1 = parse(buf, len, &seven, 1, &lim, NULL);
    CHECK(same(&whole, &w1), "%s: 1-byte inflate window differs", path);

    /* allocation failures: each must come back as NPZS_E_NOMEM, nothing leaks */
    if (len <= (1u << 16)) {
        counting probe = {0, -1, 0, 0};
        run pr = parse(buf, len, NULL, 0, NULL, &probe);
        CHECK(same(&whole, &pr) && probe.live == 0, "%s: counting allocator changes the result or leaks", path);
        int ok = 1;
        for (long i = 0; i < probe.n; i++) {
            counting c = {0, i, 0, 0};
            run fr = parse(buf, len, NULL, 0, NULL, &c);
            if (fr.verdict != NPZS_E_NOMEM && !same(&whole, &fr)) { ok = 0; printf("  alloc fail %ld: verdict %d\n", i, fr.verdict); }
            if (c.live != 0) { ok = 0; printf("  alloc fail %ld: %ld blocks leaked\n", i, c.live); }
        }
        CHECK(ok, "%s: allocation failure handling", path);
    }
    /* the same in 7-byte pushes (what only small pushes allocate: the inflate input) */
    if (len <= (1u << 14)) {
        counting probe = {0, -1, 0, 0};
        run pr = parse(buf, len, &seven, 1, NULL, &probe);
        int ok = same(&whole, &pr) && probe.live == 0;
        for (long i = 0; i < probe.n; i++) {
            counting c = {0, i, 0, 0};
            run fr = parse(buf, len, &seven, 1, NULL, &c);
            if ((fr.verdict != NPZS_E_NOMEM && !same(&whole, &fr)) || c.live != 0) ok = 0;
        }
        CHECK(ok, "%s: allocation failure handling in 7-byte pushes", path);
    }
    free(buf);
}

/* An archive of n stored members "m0000.npy"...; member dup (if < n) reuses the name of
 * member 3, or its key when key_only ("m0003" without .npy). */
static uint8_t *many_members(size_t n, size_t dup, int key_only, size_t *len) {
    size_t cn;
    const uint8_t *content = fz_npy_small(&cn);
    fz_member *m = calloc(n, sizeof *m);
    char (*names)[16] = calloc(n, sizeof *names);
    fz_buf z = {0};
    for (size_t i = 0; i < n; i++) {
        snprintf(names[i], sizeof names[i], i == dup ? (key_only ? "m%04u" : "m%04u.npy") : "m%04u.npy",
                 (unsigned)(i == dup ? 3 : i));
        fz_member t = {names[i], content, cn, 0, 0, 0, 0, 0};
        m[i] = t;
        fz_zip_member(&z, &m[i]);
    }
    size_t cd = z.n;
    for (size_t i = 0; i < n; i++) fz_zip_cdh(&z, &m[i]);
    fz_zip_eocd(&z, (unsigned)n, (uint32_t)(z.n - cd), (uint32_t)cd);
    free(m);
    free(names);
    *len = z.n;
    return z.p;
}

/* More members than one record chunk and one name block hold, with the name table grown
 * several times: accepted whole and split, duplicates found across chunks, and every
 * allocation failure a clean NPZS_E_NOMEM without a leak. */
static void test_many_members(void) {
    size_t len;
    uint8_t *buf = many_members(3000, SIZE_MAX, 0, &len);
    run whole = parse(buf, len, NULL, 0, NULL, NULL);
    CHECK(whole.verdict == 1, "3000 members: verdict %d", whole.verdict);
    size_t sched = 97;
    run r = parse(buf, len, &sched, 1, NULL, NULL);
    CHECK(same(&whole, &r), "3000 members: 97-byte pushes differ");
    counting probe = {0, -1, 0, 0};
    run pr = parse(buf, len, NULL, 0, NULL, &probe);
    CHECK(same(&whole, &pr) && probe.live == 0, "3000 members: counting allocator");
    CHECK(probe.n >= 8, "3000 members: only %ld allocations (the record chunks are one each)", probe.n);
    int ok = 1;
    for (long i = 0; i < probe.n; i++) {
        counting c = {0, i, 0, 0};
        run fr = parse(buf, len, NULL, 0, NULL, &c);
        if (fr.verdict != NPZS_E_NOMEM || c.live != 0) {
            ok = 0;
            printf("  3000 members, alloc fail %ld: verdict %d, %ld blocks live\n", i, fr.verdict, c.live);
        }
    }
    CHECK(ok, "3000 members: allocation failures");
    free(buf);
    for (int key_only = 0; key_only < 2; key_only++) {
        buf = many_members(3000, 2600, key_only, &len);
        run d = parse(buf, len, NULL, 0, NULL, NULL);
        CHECK(d.verdict == NPZS_E_DUPLICATE_NAME && d.err_member == 2600,
              "duplicate %s in member 2600: verdict %d member %ld", key_only ? "key" : "name", d.verdict,
              d.err_member);
        free(buf);
    }
}

/* A deflated member of ~440 KiB compressed (more than the 64 KiB the parser gathers small
 * pushes in), parsed whole and in pushes of many sizes with small inflate windows: the
 * window fills before the gathered input is used up, so the gathered bytes are topped up,
 * compacted and inflated in every order; the result must be the whole parse's. */
static void test_gathered_inflate(void) {
    size_t dn = 600000;
    uint8_t *d = malloc(dn);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < dn; i++) { /* half random bytes, half runs: deflates to ~75% */
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        d[i] = (i / 64) % 2 ? (uint8_t)x : (uint8_t)(i / 4096);
    }
    fz_buf npy = {0}, z = {0};
    fz_npy(&npy, "{'descr': '|u1', 'fortran_order': False, 'shape': (600000,), }", d, dn);
    fz_member m = {"g.npy", npy.p, npy.n, 8, 0, 0, 0, 0};
    fz_zip_member(&z, &m);
    size_t cd = z.n;
    fz_zip_cdh(&z, &m);
    fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
    CHECK(m.csize > (1u << 17), "gathered inflate: the member deflates to only %llu bytes", (unsigned long long)m.csize);
    run whole = parse(z.p, z.n, NULL, 0, NULL, NULL);
    CHECK(whole.verdict == 1, "gathered inflate: whole parse verdict %d", whole.verdict);
    static const size_t feeds[] = {1, 7, 4096, 5000, 40000, 70000};
    static const uint32_t windows[] = {1, 4096, 262144};
    for (size_t w = 0; w < sizeof windows / sizeof windows[0]; w++) {
        npzs_limits lim;
        npzs_limits_default(&lim);
        lim.inflate_window = windows[w];
        for (size_t f = 0; f < sizeof feeds / sizeof feeds[0]; f++) {
            if (feeds[f] < 4096 && windows[w] < 4096) continue; /* one output byte per byte: slow */
            run r = parse(z.p, z.n, &feeds[f], 1, &lim, NULL);
            CHECK(same(&whole, &r) && r.progress_ok, "gathered inflate: window %u, %zu-byte pushes differ",
                  (unsigned)windows[w], feeds[f]);
        }
    }
    /* truncated inside the member: every byte that arrived is inflated before the verdict */
    size_t cut = (size_t)(m.lfh_off + 30 + 5 + 20 + m.csize / 2);
    run tw = parse(z.p, cut, NULL, 0, NULL, NULL);
    size_t f7 = 4096;
    run t7 = parse(z.p, cut, &f7, 1, NULL, NULL);
    CHECK(tw.verdict == NPZS_E_TRUNCATED && same(&tw, &t7), "gathered inflate: truncated member %d/%d",
          tw.verdict, t7.verdict);
    free(d);
    fz_free_buf(&npy);
    fz_free_buf(&z);
}

/* One run through the parallel-inflate helper (q) or the parser alone (q NULL): pushes of `feed`
 * bytes; the events but DATA and BLOB (their chunks follow the pushes), with MEMBER_END's CRC and
 * size, and the verdict folded into a digest. */
typedef struct par_run {
    int verdict; /* 1 END, else the error code */
    uint64_t err_off, digest;
    const char *rule;
    long member;
} par_run;

void npzs__par_keep(npzs_par *q, uint64_t n); /* the library's, for tests */

/* An allocator whose fail-th call (counted from count = 0) fails; live counts what is held. */
typedef struct par_alloc_state {
    long count, fail, live;
} par_alloc_state;
static void *par_fail_alloc(void *opaque, size_t n) {
    par_alloc_state *st = opaque;
    if (st->count++ == st->fail) return NULL;
    void *r = malloc(n);
    if (r) st->live++;
    return r;
}
static void par_fail_free(void *opaque, void *ptr) {
    par_alloc_state *st = opaque;
    if (ptr) { st->live--; free(ptr); }
}

static int par_stable;      /* test_par: helpers take their input by reference (npzs_par_stable_input):
                               1 from the first byte, 2 from the second push on */
static uint64_t par_peak;   /* the most a helper held in par_parse's last run (npzs_par_memory) */

static npzs_par *par_mk(npzs_parser *p, unsigned threads, uint64_t max_held) {
    npzs_par *q = npzs_par_new(p, threads, max_held);
    if (q && npzs_par_stable_input(q, par_stable == 1) != 0) {
        npzs_par_free(q);
        return NULL;
    }
    return q;
}

static par_run par_parse(npzs_parser *p, npzs_par *q, const uint8_t *b, size_t n, size_t feed) {
    par_run r = {0, 0, UINT64_C(1469598103934665603), NULL, -1};
    size_t off = 0;
    par_peak = 0;
    for (int guard = 0; guard < 1 << 24; guard++) {
        if (q && par_stable == 2 && off && npzs_par_stable_input(q, 1) != 0) { r.verdict = 93; return r; }
        size_t k = n - off < feed ? n - off : feed;
        npzs_in in = {b + off, k, 0};
        if (off + k == n) { if (q) npzs_par_finish(q); else npzs_finish(p); }
        npzs_event ev;
        int rc;
        while ((rc = q ? npzs_par_next(q, &in, &ev) : npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            if (q && npzs_par_memory(q) > par_peak) par_peak = npzs_par_memory(q);
            if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) continue; /* chunks follow the pushes */
            uint64_t v = (uint64_t)ev.type << 56 ^ ev.offset ^ (ev.type == NPZS_EV_MEMBER_END ? (uint64_t)ev.crc32 << 20 ^ ev.size : 0);
            r.digest = (r.digest ^ v) * UINT64_C(1099511628211);
            if (ev.type == NPZS_EV_END) { r.verdict = 1; return r; }
        }
        off += in.pos;
        if (rc < 0) {
            r.verdict = rc;
            r.err_off = npzs_error_offset(p);
            r.rule = npzs_error_rule(p);
            r.member = npzs_error_member(p);
            return r;
        }
        if (rc != NPZS_NEED_INPUT || off == n) { r.verdict = 99; return r; }
    }
    r.verdict = 98;
    return r;
}

static int par_same(const par_run *a, const par_run *b) {
    return a->verdict == b->verdict && a->err_off == b->err_off && a->digest == b->digest && a->member == b->member &&
           (a->rule == b->rule || (a->rule && b->rule && !strcmp(a->rule, b->rule)));
}

/* The helper on an archive like np.savez_compressed's (members of 1 MiB and more are inflated
 * ahead at the default threshold), on a damaged copy, at small bounds, and its API's edges. */
static void test_par(void) {
    size_t dn = 1200000; /* members above the default threshold (1 MiB) */
    uint8_t *d = malloc(dn);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < dn; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;
        d[i] = (i / 64) % 2 ? (uint8_t)x : (uint8_t)(i / 4096);
    }
    fz_buf npy = {0}, z = {0};
    fz_npy(&npy, "{'descr': '|u1', 'fortran_order': False, 'shape': (1200000,), }", d, dn);
    fz_member m[4] = {{"a.npy", npy.p, npy.n, 8, 0, 0, 0, 0}, {"b.npy", npy.p, 200, 0, 0, 0, 0, 0},
                      {"c.npy", npy.p, npy.n, 8, 0, 0, 0, 0}, {"d.npy", npy.p, npy.n, 8, 0, 0, 0, 0}};
    fz_buf small = {0};
    fz_npy(&small, "{'descr': '|u1', 'fortran_order': False, 'shape': (100,), }", d, 100);
    m[1].content = small.p;
    m[1].content_n = small.n;
    for (int i = 0; i < 4; i++) fz_zip_member(&z, &m[i]);
    size_t cd = z.n;
    for (int i = 0; i < 4; i++) fz_zip_cdh(&z, &m[i]);
    fz_zip_eocd(&z, 4, (uint32_t)(z.n - cd), (uint32_t)cd);
    npzs_parser *p = npzs_new(NULL, NULL);
    par_run alone = par_parse(p, NULL, z.p, z.n, z.n);
    CHECK(alone.verdict == 1, "par: the archive is refused alone (%d)", alone.verdict);
    static const size_t feeds[] = {SIZE_MAX, 1u << 20, 4096, 1000};
    for (size_t f = 0; f < sizeof feeds / sizeof *feeds; f++) {
        for (unsigned th = 0; th <= 3; th++) {
            npzs_reset(p);
            npzs_par *q = par_mk(p, th, UINT64_C(1) << 30);
            CHECK(q && npzs_par_threads(q) == 0, "par: %u workers started before a job", th);
            if (!q) continue;
            par_run r = par_parse(p, q, z.p, z.n, feeds[f]);
            unsigned started = npzs_par_threads(q);
            CHECK(th ? started >= 1 && started <= th : started == 0, "par: %u workers asked, %u started", th, started);
            CHECK(par_same(&alone, &r), "par: %u workers, pushes of %zu: the result differs", th, feeds[f]);
            CHECK(npzs_par_used(q) == (th ? 3u : 0u), "par: %u workers, pushes of %zu: %llu members from the workers",
                  th, feeds[f], (unsigned long long)npzs_par_used(q));
            /* reset: the same input again, through the same threads */
            npzs_par_reset(q);
            par_run r2 = par_parse(p, q, z.p, z.n, feeds[f]);
            CHECK(par_same(&alone, &r2) && npzs_par_used(q) == (th ? 3u : 0u), "par: after npzs_par_reset the result differs");
            CHECK(npzs_par_memory(q) <= UINT64_C(1) << 30, "par: held more than its bound");
            npzs_par_free(q);
        }
    }
    /* npzs_par_skip_data: the workers keep a member's first bytes (all the header, or fewer: the
     * parser then inflates it again), the parser skips the rest as its CRC-32 */
    static const uint64_t keeps[] = {UINT64_MAX, 1, 100, 5000};
    for (size_t k = 0; k < sizeof keeps / sizeof *keeps; k++)
        for (size_t f = 0; f < sizeof feeds / sizeof *feeds; f++) {
            npzs_reset(p);
            npzs_par *qs = par_mk(p, 2, UINT64_C(1) << 30);
            CHECK(qs && npzs_par_skip_data(qs) == 0, "par: skip_data refused");
            if (keeps[k] != UINT64_MAX) npzs__par_keep(qs, keeps[k]);
            par_run r = par_parse(p, qs, z.p, z.n, feeds[f]);
            CHECK(par_same(&alone, &r) && npzs_par_used(qs) == 3, "par: skip_data keeping %llu, pushes of %zu: differs (used %llu)",
                  (unsigned long long)keeps[k], feeds[f], (unsigned long long)npzs_par_used(qs));
            /* stable input: the members' compressed bytes (600 KB and more each) are never held,
             * only the jobs' kept output (3 x 40 KB at most here) */
            CHECK(par_stable != 1 || par_peak < 256 * 1024, "par: stable input, keeping %llu, pushes of %zu: held %llu bytes",
                  (unsigned long long)keeps[k], feeds[f], (unsigned long long)par_peak);
            CHECK(npzs_par_skip_data(qs) == 0 || npzs_error(p), "par: skip_data again");
            npzs_par_free(qs);
        }
    npzs_reset(p);
    {
        npzs_par *qs = par_mk(p, 1, 1u << 20);
        npzs_event e0;
        npzs_in i0 = {z.p, 100, 0};
        (void)npzs_par_next(qs, &i0, &e0);
        CHECK(npzs_par_skip_data(qs) == NPZS_E_BAD_CALL, "par: skip_data after the first byte");
        npzs_par_free(qs);
    }
    /* npzs_par_take_data: the deflated arrays' data in blocks that become the caller's (the DATA
     * events there, the bytes the array's), the stored one not; misuse is sticky (CALL.par-take) */
    {
        npzs_reset(p);
        npzs_par *qt = par_mk(p, 2, UINT64_C(1) << 30);
        npzs_in in = {z.p, z.n, 0};
        npzs_event ev;
        void *blocks[4] = {NULL, NULL, NULL, NULL};
        const uint8_t *at = NULL;
        int taken = 0, none = 0, data_ok = 1, rc;
        npzs_par_finish(qt);
        while ((rc = npzs_par_next(qt, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {
            if (ev.type == NPZS_EV_HEADER) {
                uint64_t held = npzs_par_memory(qt), off = 0;
                void *b = NULL;
                int t = npzs_par_take_data(qt, 16, &b, &off);
                if (t == 0) {
                    blocks[taken++] = b;
                    at = (const uint8_t *)b + off;
                    CHECK(off == ev.array->header_len && npzs_par_memory(qt) < held && ((uintptr_t)at & 15) == 0,
                          "par: take: offset %llu, memory %llu -> %llu", (unsigned long long)off, (unsigned long long)held,
                          (unsigned long long)npzs_par_memory(qt));
                } else {
                    none += t == 1;
                    at = NULL;
                }
            } else if (ev.type == NPZS_EV_DATA && at) {
                data_ok &= ev.data == at + ev.pos && memcmp(ev.data, d + ev.pos, ev.len) == 0;
            }
        }
        CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && taken == 3 && none == 1 && data_ok,
              "par: take: verdict %d, %d taken, %d not, data %d", rc, taken, none, data_ok);
        npzs_par_free(qt);
        for (int i = 0; i < taken; i++) { /* the caller's: valid after the helper is gone, freed with the hooks */
            CHECK(memcmp((const uint8_t *)blocks[i] + (npy.n - dn), d, dn) == 0, "par: take: block %d lost its bytes", i);
            free(blocks[i]);
        }
        /* outside an array's data, and twice */
        npzs_reset(p);
        qt = par_mk(p, 1, UINT64_C(1) << 30);
        void *b;
        uint64_t off;
        rc = npzs_par_take_data(qt, 1, &b, &off);
        CHECK(rc == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.par-take"), "par: take before any HEADER: %d", rc);
        npzs_par_free(qt);
        npzs_reset(p);
        qt = par_mk(p, 1, UINT64_C(1) << 30);
        in = (npzs_in){z.p, z.n, 0};
        npzs_par_finish(qt);
        while (npzs_par_next(qt, &in, &ev) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {
        }
        int first = npzs_par_take_data(qt, 1, &b, &off), second = npzs_par_take_data(qt, 1, &b, &off);
        CHECK(first == 0 && second == NPZS_E_BAD_CALL && npzs_par_next(qt, &in, &ev) == NPZS_E_BAD_CALL,
              "par: take twice: %d then %d", first, second);
        npzs_par_free(qt);
        if (first == 0) free(b);
        CHECK(npzs_par_take_data(NULL, 1, &b, &off) == NPZS_E_BAD_CALL, "par: take without a helper");
        /* the helper learns of each member's end through the seam whatever events the caller asks
         * for: with HEADER alone, every job is let go at its member's end (what it held goes back
         * to the cache, in use again by the next job) and the input ends with nothing held but it */
        npzs_reset(p);
        qt = par_mk(p, 2, UINT64_C(1) << 30);
        npzs_events(p, NPZS_EV_BIT(NPZS_EV_HEADER));
        par_run masked = par_parse(p, qt, z.p, z.n, 4096);
        npzs_events(p, NPZS_EV_ALL);
        CHECK(masked.verdict == 1 && npzs_par_used(qt) == 3, "par: HEADER alone: verdict %d, %llu from the workers",
              masked.verdict, (unsigned long long)npzs_par_used(qt));
        /* npzs_reset(p) resets the helper too (it stays attached), as npzs_par_reset(q) does */
        npzs_reset(p);
        CHECK(npzs_par_memory(qt) <= UINT64_C(12) * (npy.n + 1), "par: a reset left %llu bytes held",
              (unsigned long long)npzs_par_memory(qt));
        par_run again = par_parse(p, qt, z.p, z.n, 4096);
        CHECK(par_same(&alone, &again) && npzs_par_used(qt) == 3, "par: after npzs_reset(p) the helper differs (used %llu)",
              (unsigned long long)npzs_par_used(qt));
        npzs_par_free(qt);
    }
    /* a bound smaller than a member: the parser inflates every member itself, with the same result */
    npzs_reset(p);
    npzs_par *q = par_mk(p, 2, 500000);
    par_run tight = par_parse(p, q, z.p, z.n, 4096);
    CHECK(par_same(&alone, &tight) && npzs_par_used(q) == 0, "par: a bound below a member's size (used %llu)",
          (unsigned long long)npzs_par_used(q));
    CHECK(npzs_par_memory(q) <= 500000 + 4096 + 131070, "par: held %llu bytes with a bound of 500000",
          (unsigned long long)npzs_par_memory(q));
    npzs_par_free(q);
    /* damaged deflate data in the third member, and a cut archive: the parser's own errors */
    for (int k = 0; k < 2; k++) {
        fz_buf bad = {0};
        fz_put(&bad, z.p, k == 0 ? z.n : (size_t)m[3].lfh_off + 30 + 5 + 1000);
        if (k == 0) bad.p[m[2].lfh_off + 30 + 5 + 20 + m[2].csize / 3] ^= 0x55;
        npzs_reset(p);
        par_run a = par_parse(p, NULL, bad.p, bad.n, bad.n);
        CHECK(a.verdict < 0, "par: the damaged archive %d is accepted", k);
        for (size_t f = 0; f < sizeof feeds / sizeof *feeds; f++) {
            npzs_reset(p);
            q = par_mk(p, 2, UINT64_C(1) << 30);
            if (f & 1) npzs_par_skip_data(q);
            par_run r = par_parse(p, q, bad.p, bad.n, feeds[f]);
            CHECK(par_same(&a, &r), "par: damaged archive %d, pushes of %zu: %d@%llu %s, alone %d@%llu %s", k, feeds[f],
                  r.verdict, (unsigned long long)r.err_off, r.rule ? r.rule : "-", a.verdict,
                  (unsigned long long)a.err_off, a.rule ? a.rule : "-");
            npzs_par_free(q);
        }
        fz_free_buf(&bad);
    }
    /* the helper's allocations failing one by one (the k-th after the parser's own first ones):
     * the parser's verdict, or its own out-of-memory error; nothing leaks, nothing hangs */
    for (long k = 0; k < 40; k++) {
        par_alloc_state st = {0, k, 0};
        npzs_allocator al = {par_fail_alloc, par_fail_free, &st};
        npzs_parser *pf = npzs_new(NULL, &al);
        if (!pf) continue;
        st.count = 0;
        npzs_par *qf = par_mk(pf, 2, UINT64_C(1) << 30);
        if (qf) {
            if (k & 1) npzs_par_skip_data(qf);
            par_run r = par_parse(pf, qf, z.p, z.n, k % 3 ? 4096 : z.n);
            CHECK(par_same(&alone, &r) || r.verdict == NPZS_E_NOMEM, "par: allocation %ld failing gives %d@%llu %s", k,
                  r.verdict, (unsigned long long)r.err_off, r.rule ? r.rule : "-");
            npzs_par_free(qf);
        }
        npzs_free(pf);
        CHECK(st.live == 0, "par: allocation %ld failing leaks %ld blocks", k, st.live);
    }
    /* the API's edges */
    npzs_reset(p);
    q = npzs_par_new(p, 1, 1u << 20);
    CHECK(q && !npzs_par_new(p, 1, 1u << 20), "par: a second helper on one parser");
    /* npzs_par_stable_input: before an input's first byte only, and again after a reset */
    CHECK(npzs_par_stable_input(NULL, 1) == NPZS_E_BAD_CALL, "par: stable input without a helper");
    CHECK(npzs_par_stable_input(q, 1) == 0 && npzs_par_stable_input(q, 0) == 0 && npzs_par_stable_input(q, 1) == 0,
          "par: stable input refused before the first byte");
    {
        npzs_event e1;
        npzs_in i1 = {z.p, 100, 0};
        (void)npzs_par_next(q, &i1, &e1);
        CHECK(npzs_par_stable_input(q, 0) == NPZS_E_BAD_CALL && npzs_par_stable_input(q, 1) == 0,
              "par: stable input changed after the first byte");
        npzs_par_reset(q);
        CHECK(npzs_par_stable_input(q, 0) == 0, "par: stable input not changeable after a reset");
        /* turned on after bytes were copied: allowed; off again only while nothing is held by reference */
        i1 = (npzs_in){z.p, 10, 0};
        (void)npzs_par_next(q, &i1, &e1);
        CHECK(npzs_par_stable_input(q, 1) == 0 && npzs_par_stable_input(q, 0) == 0 && npzs_par_stable_input(q, 1) == 0,
              "par: stable input not turned on and off again before a byte was held by reference");
        i1 = (npzs_in){z.p + 10, 90, 0};
        (void)npzs_par_next(q, &i1, &e1);
        CHECK(npzs_par_stable_input(q, 0) == NPZS_E_BAD_CALL, "par: stable input turned off with bytes held by reference");
        npzs_par_reset(q);
    }
    npzs_par_free(q);
    CHECK(!npzs_par_new(NULL, 1, 1u << 20) && !npzs_par_new(p, 65, 1u << 20), "par: NULL parser or 65 workers accepted");
    q = npzs_par_new(p, 1, 1u << 20);
    CHECK(q != NULL, "par: a helper after the first was freed");
    npzs_event ev;
    npzs_in in = {z.p, 10, 0};
    CHECK(npzs_par_next_(q, &in, &ev, sizeof ev - 8) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.event-size"),
          "par: a wrong event size");
    npzs_par_free(q);
    npzs_par_free(NULL);
    /* freed inside a member a worker inflated: the parser cannot go on, and says so */
    npzs_reset(p);
    q = npzs_par_new(p, 1, UINT64_C(1) << 30);
    in = (npzs_in){z.p, z.n, 0};
    int rc = NPZS_NEED_INPUT;
    npzs_par_finish(q); /* else the helper asks for more input while its worker runs */
    while ((rc = npzs_par_next(q, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
    CHECK(rc == NPZS_EVENT && npzs_par_used(q) == 1, "par: no HEADER of a member from a worker (%d)", rc);
    npzs_par_free(q);
    npzs_in rest = {z.p + npzs_consumed(p), z.n - npzs_consumed(p), 0};
    CHECK(npzs_next(p, &rest, &ev) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.par-free"),
          "par: the parser went on inside a member after its helper was freed");
    /* freed before the parser reached a worker's member: it goes on alone from what it consumed
     * (the bytes the helper took beyond that went with it) to the same verdict */
    npzs_reset(p);
    q = npzs_par_new(p, 1, UINT64_C(1) << 30);
    in = (npzs_in){z.p, (size_t)m[1].lfh_off, 0};
    while ((rc = npzs_par_next(q, &in, &ev)) == NPZS_EVENT) {}
    npzs_par_free(q);
    {
        npzs_in tail_in = {z.p + npzs_consumed(p), z.n - npzs_consumed(p), 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &tail_in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {}
        CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END, "par: freed between members, the parser alone gives %d", rc);
    }
    npzs_free(p);
    free(d);
    fz_free_buf(&npy);
    fz_free_buf(&small);
    fz_free_buf(&z);
}

static void test_contract(void) {
    /* error names are the CLI contract */
    static const char *const names[] = {"truncated", "bad_magic", "bad_version", "header_too_large", "bad_header",
                                        "pickle", "bad_shape", "size_overflow", "zip_bad_header", "zip_unsupported",
                                        "crc_mismatch", "size_mismatch", "cd_mismatch", "duplicate_name",
                                        "trailing_data", "limit", "inflate", "bad_name"};
    for (int i = 0; i < 18; i++)
        CHECK(strcmp(npzs_error_name(-1 - i), names[i]) == 0, "error %d is named %s", -1 - i, npzs_error_name(-1 - i));
    CHECK(strcmp(npzs_error_name(12345), "unknown") == 0, "unknown error name");

    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_ndim = 65;
    CHECK(npzs_new(&lim, NULL) == NULL, "max_ndim above 64 must be refused");
    npzs_limits_default(&lim);
    lim.inflate_window = 0;
    CHECK(npzs_new(&lim, NULL) == NULL, "inflate_window 0 must be refused");
    npzs_allocator half = {c_alloc, NULL, NULL};
    CHECK(npzs_new(NULL, &half) == NULL, "an allocator without free must be refused");

    /* a tiny valid .npy */
    static const char hdr[] = "{'descr': '<i2', 'fortran_order': False, 'shape': (2,), }";
    uint8_t f[128];
    size_t hl = sizeof hdr - 1;
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[8] = (uint8_t)hl; f[9] = 0;
    memcpy(f + 10, hdr, hl);
    memcpy(f + 10 + hl, "\x01\x00\x02\x00", 4);
    size_t flen = 10 + hl + 4;

    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_event ev;
    npzs_in in = {f, flen, 0};
    int types[8], nt = 0, rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && nt < 8) types[nt++] = (int)ev.type;
    CHECK(rc == NPZS_NEED_INPUT && nt == 4, "events before finish: rc %d, %d events", rc, nt);
    CHECK(nt == 4 && types[0] == NPZS_EV_MEMBER_BEGIN && types[1] == NPZS_EV_HEADER && types[2] == NPZS_EV_DATA &&
          types[3] == NPZS_EV_MEMBER_END, "event order");
    npzs_finish(p);
    rc = npzs_next(p, NULL, &ev);
    CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.format == NPZS_FORMAT_NPY, "END after finish");
    CHECK(npzs_next(p, NULL, &ev) == NPZS_DONE, "DONE after END");
    uint8_t extra = 0;
    npzs_in more = {&extra, 1, 0};
    CHECK(npzs_error_rule(p) == NULL, "no rule before an error");
    CHECK(npzs_next(p, &more, &ev) == NPZS_E_TRAILING_DATA, "a byte after END is trailing data");
    CHECK(npzs_error_rule(p) && strcmp(npzs_error_rule(p), "S-NPY-TRAIL.after-end") == 0, "rule %s",
          npzs_error_rule(p) ? npzs_error_rule(p) : "(null)");
    CHECK(npzs_next(p, NULL, &ev) == NPZS_E_TRAILING_DATA, "errors are sticky");
    npzs_free(p);
    /* the same after an archive's END (an empty archive: its end record alone) */
    {
        static const uint8_t empty[22] = {'P', 'K', 5, 6};
        npzs_parser *q = npzs_new(NULL, NULL);
        npzs_in e = {empty, sizeof empty, 0};
        while (npzs_next(q, &e, &ev) == NPZS_EVENT) {}
        npzs_finish(q);
        rc = npzs_next(q, NULL, &ev);
        CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.format == NPZS_FORMAT_NPZ, "empty archive END");
        npzs_in m2 = {&extra, 1, 0};
        CHECK(npzs_next(q, &m2, &ev) == NPZS_E_TRAILING_DATA && npzs_error_rule(q) &&
                  strcmp(npzs_error_rule(q), "S-ZIP-TRAIL.after-end") == 0, "a byte after an archive's END: %s",
              npzs_error_rule(q) ? npzs_error_rule(q) : "(null)");
        npzs_free(q);
    }

    /* versions and struct sizes: the header's macros pass sizeof(npzs_limits); a 0.1.0 binary's
     * struct (up to inflate_window) is read and written only that far */
    CHECK(npzs_version() == NPZS_VERSION_NUM, "npzs_version %#lx", npzs_version());
    {
        size_t v010 = offsetof(npzs_limits, inflate_window) + sizeof(uint32_t);
        npzs_limits big[2];
        memset(big, 0xAB, sizeof big);
        npzs_limits_default_(&big[0], v010);
        const uint8_t *b = (const uint8_t *)&big[0];
        int untouched = 1;
        for (size_t k = v010; k < sizeof big; k++) untouched &= b[k] == 0xAB;
        CHECK(untouched && big[0].max_ndim == 32, "limits_default with a 0.1.0 size writes past it");
        big[0].lenient = 0xFFFFFFFFu; /* beyond a 0.1.0 struct: must not be read */
        npzs_parser *q = npzs_new_(&big[0], v010, NULL);
        CHECK(q != NULL, "a 0.1.0-sized npzs_limits is accepted");
        npzs_free(q);
        CHECK(npzs_new_(&big[0], sizeof(npzs_limits) + 8, NULL) == NULL, "a larger npzs_limits than the library knows is refused");
        CHECK(npzs_new_(&big[0], v010 - 4, NULL) == NULL, "a npzs_limits smaller than 0.1.0's is refused");
        npzs_limits_default(&lim);
        lim.lenient = 0x80;
        CHECK(npzs_new(&lim, NULL) == NULL, "an unknown lenient bit is refused");
    }

    /* npzs_limits_check names the first field npzs_new refuses, one bad field at a time */
    {
        npzs_limits_default(&lim);
        CHECK(npzs_limits_check(&lim) == NULL, "the defaults are valid");
        static const struct { const char *field; int which; uint64_t v; } bad[] = {
            {"max_header_size", 0, 0}, {"max_header_size", 0, (UINT64_C(1) << 30) + 1}, {"max_ndim", 1, 65},
            {"max_fields", 2, 0}, {"max_depth", 3, 0}, {"max_depth", 3, 1001}, {"max_members", 4, 0},
            {"max_name_len", 5, 0}, {"max_name_len", 5, 65536}, {"max_extra_len", 6, 65536},
            {"inflate_window", 7, 0}, {"lenient", 8, 0x10}, {"max_memory", 9, 100},
        };
        for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
            npzs_limits l;
            npzs_limits_default(&l);
            uint64_t v = bad[i].v;
            switch (bad[i].which) {
            case 0: l.max_header_size = v; break;
            case 1: l.max_ndim = (uint32_t)v; break;
            case 2: l.max_fields = (uint32_t)v; break;
            case 3: l.max_depth = (uint32_t)v; break;
            case 4: l.max_members = (uint32_t)v; break;
            case 5: l.max_name_len = (uint32_t)v; break;
            case 6: l.max_extra_len = (uint32_t)v; break;
            case 7: l.inflate_window = (uint32_t)v; break;
            case 8: l.lenient = (uint32_t)v; break;
            default: l.max_memory = v; break;
            }
            const char *got = npzs_limits_check(&l);
            CHECK(got && strcmp(got, bad[i].field) == 0, "limits_check of a bad %s: %s", bad[i].field, got ? got : "NULL");
            npzs_parser *q = npzs_new(&l, NULL);
            CHECK(q == NULL, "npzs_new accepts a bad %s", bad[i].field);
            npzs_free(q);
        }
        CHECK(strcmp(npzs_limits_check_(&lim, sizeof lim + 8) ? npzs_limits_check_(&lim, sizeof lim + 8) : "", "size") == 0,
              "a struct size the library does not know is 'size'");
    }

    /* the event's size: the macro passes sizeof(npzs_event); another size is refused, never written */
    {
        npzs_parser *q = npzs_new(NULL, NULL);
        npzs_event evs[2];
        memset(evs, 0x5A, sizeof evs);
        npzs_in e0 = {f, flen, 0};
        rc = npzs_next_(q, &e0, &evs[0], sizeof(npzs_event) - 8);
        const uint8_t *eb = (const uint8_t *)evs;
        int untouched = 1;
        for (size_t k = 0; k < sizeof evs; k++) untouched &= eb[k] == 0x5A;
        CHECK(rc == NPZS_E_BAD_CALL && untouched && e0.pos == 0 && npzs_error_rule(q) &&
                  strcmp(npzs_error_rule(q), "CALL.event-size") == 0,
              "a smaller npzs_event: rc %d, rule %s", rc, npzs_error_rule(q) ? npzs_error_rule(q) : "NULL");
        npzs_free(q);
        q = npzs_new(NULL, NULL);
        CHECK(npzs_next_(q, &e0, &evs[0], sizeof(npzs_event) + 8) == NPZS_E_BAD_CALL, "a larger npzs_event is refused");
        npzs_free(q);
    }

    /* npzs_data_into: only right after an array's HEADER, with room for all of it */
    {
        uint8_t dst[4];
        for (int when = 0; when < 4; when++) { /* 0 before HEADER, 1 too small, 2 after a DATA, 3 right */
            npzs_parser *q = npzs_new(NULL, NULL);
            npzs_in qi = {f, flen, 0};
            npzs_finish(q);
            int r2 = 0, into = -99, datas = 0, at_dst = 0;
            if (when == 0) into = npzs_data_into(q, dst, sizeof dst);
            while ((r2 = npzs_next(q, &qi, &ev)) == NPZS_EVENT) {
                if (ev.type == NPZS_EV_HEADER && (when == 1 || when == 3))
                    into = npzs_data_into(q, dst, when == 1 ? sizeof dst - 1 : sizeof dst);
                if (ev.type == NPZS_EV_DATA) {
                    datas++;
                    at_dst += ev.data == dst + ev.pos;
                    if (when == 2) into = npzs_data_into(q, dst, sizeof dst);
                }
            }
            const char *rule = npzs_error_rule(q);
            if (when == 3)
                CHECK(into == 0 && r2 == NPZS_DONE && datas && at_dst == datas && memcmp(dst, f + flen - 4, 4) == 0,
                      "data_into: data not in the destination");
            else
                CHECK(into == NPZS_E_BAD_CALL && r2 == NPZS_E_BAD_CALL && rule && strcmp(rule, "CALL.data-into") == 0,
                      "data_into misuse %d: %d %d %s", when, into, r2, rule ? rule : "NULL");
            npzs_free(q);
        }
    }

    /* trailing byte before finish */
    p = npzs_new(NULL, NULL);
    f[flen] = 0;
    npzs_in in2 = {f, flen + 1, 0};
    while ((rc = npzs_next(p, &in2, &ev)) == NPZS_EVENT) {}
    CHECK(rc == NPZS_E_TRAILING_DATA && npzs_error_offset(p) == flen, "trailing data offset %llu",
          (unsigned long long)npzs_error_offset(p));
    CHECK(strlen(npzs_error_message(p)) > 0, "error message");
    npzs_free(p);

    /* truncation at every length */
    int ok = 1;
    for (size_t cut = 0; cut < flen; cut++) {
        p = npzs_new(NULL, NULL);
        npzs_in in3 = {f, cut, 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &in3, &ev)) == NPZS_EVENT) {}
        if (rc != NPZS_E_TRUNCATED || npzs_error_offset(p) != cut) {
            ok = 0;
            printf("  cut %zu: rc %d off %llu\n", cut, rc, (unsigned long long)npzs_error_offset(p));
        }
        npzs_free(p);
    }
    CHECK(ok, "truncation at every length is 'truncated' at the input length");

    /* bad arguments */
    p = npzs_new(NULL, NULL);
    npzs_in badin = {NULL, 5, 0};
    CHECK(npzs_next(p, &badin, &ev) == NPZS_E_BAD_CALL, "NULL src with a size is a bad call");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    CHECK(npzs_next(p, &in, NULL) == NPZS_E_BAD_CALL, "NULL event is a bad call");
    npzs_free(p);
    CHECK(npzs_next(NULL, &in, &ev) == NPZS_E_BAD_CALL, "NULL parser is a bad call");
    npzs_free(NULL);

    /* accessors */
    CHECK(strcmp(npzs_strerror(NPZS_E_PICKLE), "object arrays (pickle) are refused") == 0, "strerror");
    CHECK(strcmp(npzs_strerror(0), "no error") == 0 && strcmp(npzs_strerror(999), "unknown error") == 0,
          "strerror of 0 and of an unknown code");
    p = npzs_new(NULL, NULL);
    CHECK(strcmp(npzs_state_name(p), "START") == 0, "initial state name %s", npzs_state_name(p));
    CHECK(npzs_format_of(p) == NPZS_FORMAT_UNKNOWN && npzs_error(p) == 0 && npzs_error_member(p) == -1,
          "a new parser has no format and no error");
    CHECK(strcmp(npzs_error_message(p), "no error") == 0, "message without an error");
    npzs_in in4 = {f, 20, 0};
    while ((rc = npzs_next(p, &in4, &ev)) == NPZS_EVENT) {}
    CHECK(rc == NPZS_NEED_INPUT && npzs_consumed(p) == 20 && npzs_format_of(p) == NPZS_FORMAT_NPY,
          "consumed %llu", (unsigned long long)npzs_consumed(p));
    CHECK(strcmp(npzs_state_name(p), "NPY_CONTENT") == 0, "state name %s", npzs_state_name(p));
    npzs_free(p);
    /* a header error: content offset and member of a plain .npy */
    uint8_t g[128];
    memcpy(g, f, flen);
    g[10 + 11] = '?'; /* inside the descr string */
    p = npzs_new(NULL, NULL);
    npzs_in in5 = {g, flen, 0};
    while ((rc = npzs_next(p, &in5, &ev)) == NPZS_EVENT) {}
    size_t nl = 1;
    CHECK(rc == NPZS_E_BAD_HEADER && npzs_error_content_offset(p) == 20 && npzs_error_offset(p) == 20 &&
          npzs_error_member(p) == 0 && npzs_error_member_name(p, &nl) == NULL && nl == 0,
          "header error: rc %d coff %llu", rc, (unsigned long long)npzs_error_content_offset(p));
    CHECK(strcmp(npzs_state_name(p), "FAILED") == 0, "failed state name");
    npzs_free(p);

    /* state names exist for every state */
    for (int i = 0; i < NPZS_NSTATES; i++) CHECK(npzs__state_id(i) && npzs__state_doc(i), "state %d has a name", i);
    /* the public view of the table (trace): every row named, its record part labelled, the parts
     * in the rows the table gives them */
    CHECK(npzs_state_count() == NPZS_NSTATES && !npzs_state_id(-1) && !npzs_state_id(NPZS_NSTATES) &&
          npzs_state_index(NULL) == -1, "npzs_state_count and the rows' range");
    for (int i = 0; i < npzs_state_count(); i++)
        CHECK(npzs_state_id(i) && npzs_record_label(npzs_state_record(i)), "row %d: a name and a record label", i);
    CHECK(npzs_state_record(NPZS_S_ZIP_LFH - NPZS_S__BASE - 1) == NPZS_REC_LFH &&
          npzs_state_record(NPZS_S_ZIP_CDH_NAME - NPZS_S__BASE - 1) == NPZS_REC_CDH_NAME &&
          npzs_state_record(NPZS_S_ZIP_STORED - NPZS_S__BASE - 1) == NPZS_REC_NONE &&
          !strcmp(npzs_record_label(NPZS_REC_EOCD), "end record") && !npzs_record_label(NPZS_REC__END),
          "the record column");
    {
        npzs_parser *sp = npzs_new(NULL, NULL);
        CHECK(sp && !strcmp(npzs_state_id(npzs_state_index(sp)), "START") &&
                  !strcmp(npzs_state_id(npzs_state_index(sp)), npzs_state_name(sp)),
              "a new parser is in START");
        npzs_free(sp);
    }
}

/* The name table's hash is SipHash-1-3; CPython 3.11+ hashes bytes with the same function, whose
 * key is all zeros under PYTHONHASHSEED=0: these are hash(b"abc"), hash(bytes(range(15))) and
 * hash(bytes(range(64))) there (as unsigned 64-bit), an independent implementation's vectors. */
/* SipHash-1-3 as its paper gives it, the last block read byte by byte */
#define REF_ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define REF_ROUND(v0, v1, v2, v3)                                                               \
    do {                                                                                        \
        v0 += v1; v1 = REF_ROTL(v1, 13); v1 ^= v0; v0 = REF_ROTL(v0, 32);                        \
        v2 += v3; v3 = REF_ROTL(v3, 16); v3 ^= v2;                                               \
        v0 += v3; v3 = REF_ROTL(v3, 21); v3 ^= v0;                                               \
        v2 += v1; v1 = REF_ROTL(v1, 17); v1 ^= v2; v2 = REF_ROTL(v2, 32);                        \
    } while (0)
static uint64_t ref_siphash13(const uint64_t k[2], const uint8_t *m, size_t n) {
    uint64_t v0 = k[0] ^ UINT64_C(0x736f6d6570736575), v1 = k[1] ^ UINT64_C(0x646f72616e646f6d);
    uint64_t v2 = k[0] ^ UINT64_C(0x6c7967656e657261), v3 = k[1] ^ UINT64_C(0x7465646279746573);
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t w = 0;
        for (unsigned b = 0; b < 8; b++) w |= (uint64_t)m[i + b] << (8 * b);
        v3 ^= w;
        REF_ROUND(v0, v1, v2, v3);
        v0 ^= w;
    }
    uint64_t last = (uint64_t)(n & 0xFF) << 56;
    for (size_t b = 0; i + b < n; b++) last |= (uint64_t)m[i + b] << (8 * b);
    v3 ^= last;
    REF_ROUND(v0, v1, v2, v3);
    v0 ^= last;
    v2 ^= 0xFF;
    REF_ROUND(v0, v1, v2, v3);
    REF_ROUND(v0, v1, v2, v3);
    REF_ROUND(v0, v1, v2, v3);
    return v0 ^ v1 ^ v2 ^ v3;
}

static void test_siphash(void) {
    static const uint64_t zero[2] = {0, 0};
    uint8_t m[64];
    for (int i = 0; i < 64; i++) m[i] = (uint8_t)i;
    CHECK(npzs__siphash13(zero, (const uint8_t *)"abc", 3) == UINT64_C(13851880170939887858), "siphash 'abc'");
    CHECK(npzs__siphash13(zero, m, 15) == UINT64_C(17514137373579004394), "siphash 15 bytes");
    CHECK(npzs__siphash13(zero, m, 64) == UINT64_C(8493894268803903686), "siphash 64 bytes");
    /* every length and alignment against the plain byte-by-byte reading of the last block */
    static const uint64_t key[2] = {UINT64_C(0x0706050403020100), UINT64_C(0x0F0E0D0C0B0A0908)};
    int ok = 1;
    for (size_t at = 0; at < 8; at++)
        for (size_t n = 0; n + at <= 64; n++) {
            uint64_t want = ref_siphash13(key, m + at, n), got = npzs__siphash13(key, m + at, n);
            if (want != got) { ok = 0; printf("  siphash at %zu, %zu bytes\n", at, n); }
        }
    CHECK(ok, "siphash: a length or alignment differs from the reference");
    /* two parsers draw different keys */
    npzs_parser *a = npzs_new(NULL, NULL), *b = npzs_new(NULL, NULL);
    CHECK(a && b && (a->names_key[0] != b->names_key[0] || a->names_key[1] != b->names_key[1]),
          "two parsers share a name-table key");
    npzs_free(a);
    npzs_free(b);
}

/* The descr parser keeps its nesting off the C stack: a descr nested max_depth = 1000 deep (the
 * largest the API accepts) parses on a thread with a 64 KiB stack, in lists and in subarrays. */
typedef struct deep_job {
    int subarrays;
    int ok;
} deep_job;

static void *deep_thread(void *arg) {
    deep_job *j = arg;
    enum { D = 1000 };
    size_t cap = 64 * D + 256, n = 0;
    char *t = malloc(cap);
    n += (size_t)sprintf(t + n, "{'descr': [");
    if (j->subarrays) {
        n += (size_t)sprintf(t + n, "('a', ");
        for (int i = 1; i < D; i++) t[n++] = '(';
        n += (size_t)sprintf(t + n, "'<i4'");
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, ", ())");
        n += (size_t)sprintf(t + n, ")");
    } else {
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, "('a', [");
        n += (size_t)sprintf(t + n, "('a', '<i4')");
        for (int i = 1; i < D; i++) n += (size_t)sprintf(t + n, "])");
    }
    n += (size_t)sprintf(t + n, "], 'fortran_order': False, 'shape': (1,), }\n");
    size_t len = 10 + n + 4;
    uint8_t *f = malloc(len);
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[8] = (uint8_t)n;
    f[9] = (uint8_t)(n >> 8);
    memcpy(f + 10, t, n);
    memset(f + 10 + n, 7, 4);
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_depth = D;
    lim.max_header_size = 1u << 20;
    run r = parse(f, len, NULL, 0, &lim, NULL);
    lim.max_depth = D - 1; /* one level too deep: refused, not a crash either */
    run r2 = parse(f, len, NULL, 0, &lim, NULL);
    j->ok = r.verdict == 1 && r2.verdict == NPZS_E_LIMIT;
    if (!j->ok) printf("  deep descr (%s): verdicts %d, %d\n", j->subarrays ? "subarrays" : "lists", r.verdict, r2.verdict);
    free(f);
    free(t);
    return NULL;
}

static void test_deep_descr(void) {
    for (int sub = 0; sub < 2; sub++) {
        pthread_attr_t at;
        pthread_t th;
        deep_job j = {sub, 0};
        pthread_attr_init(&at);
        pthread_attr_setstacksize(&at, 64 * 1024);
        int rc = pthread_create(&th, &at, deep_thread, &j);
        CHECK(rc == 0, "pthread_create");
        if (rc == 0) pthread_join(th, NULL);
        pthread_attr_destroy(&at);
        CHECK(j.ok, "a descr nested 1000 deep (%s) on a 64 KiB stack", sub ? "subarrays" : "lists");
    }
}

/* A v1.0 .npy of the header text `t` (padded as NumPy pads) and `data` zero bytes; free() it. */
static uint8_t *npy_of(const char *t, size_t data, size_t *len) {
    size_t n = strlen(t), pad = (64 - (10 + n + 1) % 64) % 64, hl = n + pad + 1;
    uint8_t *f = calloc(1, 10 + hl + data);
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[8] = (uint8_t)hl;
    f[9] = (uint8_t)(hl >> 8);
    memcpy(f + 10, t, n);
    memset(f + 10 + n, ' ', pad);
    f[10 + n + pad] = '\n';
    *len = 10 + hl + data;
    return f;
}

/* The array-size rule (itemsize times the non-zero dims must fit in 2**63 - 1: NumPy's intp) at
 * its boundary: shapes whose product is just below, at and above it, with dims on either side of
 * 2**32 (the check multiplies two numbers below 2**32 directly and divides otherwise), against the
 * product computed in 128 bits.  The limit on total bytes is lifted so that only the rule decides. */
__extension__ typedef unsigned __int128 u128; /* GCC and Clang */

static void test_array_size_rule(void) {
    static const uint64_t dims[][3] = {
        {4294967295u, 4294967295u, 1}, {4294967295u, 2147483648u, 1}, {4294967295u, 2147483647u, 1},
        {3037000500u, 3037000500u, 1}, {3037000499u, 3037000499u, 1}, {65536, 65536, 2147483648u},
        {65536, 65536, 2147483647u}, {UINT64_C(4294967296), UINT64_C(2147483648), 1},
        {UINT64_C(4294967296), UINT64_C(2147483647), 1}, {UINT64_C(9223372036854775807), 1, 1},
        {UINT64_C(4611686018427387904), 2, 1}, {UINT64_C(4611686018427387903), 2, 1}, {0, UINT64_C(9223372036854775807), 3},
        {3, UINT64_C(3074457345618258602), 1}, {3, UINT64_C(3074457345618258603), 1},
        /* the overflow at the last dim, both factors below 2**32 */
        {1, 4294967295u, 4294967295u}, {1, 3037000500u, 3037000500u}, {1, 3037000499u, 3037000499u},
        {1, 4294967295u, 2147483648u}, {1, 4294967295u, 2147483647u}};
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_total_bytes = UINT64_MAX;
    int bad = 0;
    for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++)
        for (unsigned isz = 1; isz <= 2; isz++) {
            char t[256];
            snprintf(t, sizeof t, "{'descr': '<u%u', 'fortran_order': False, 'shape': (%llu, %llu, %llu), }", isz,
                     (unsigned long long)dims[i][0], (unsigned long long)dims[i][1], (unsigned long long)dims[i][2]);
            u128 prod = isz; /* of the non-zero dims: NumPy's rule ignores the zeros */
            for (int k = 0; k < 3; k++)
                if (dims[i][k] && prod <= ((u128)1 << 64)) prod *= dims[i][k];
            int over = prod > (u128)UINT64_C(0x7FFFFFFFFFFFFFFF);
            size_t n;
            uint8_t *f = npy_of(t, 0, &n);
            npzs_parser *p = npzs_new(&lim, NULL);
            npzs_in in = {f, n, 0};
            npzs_event ev;
            int rc, saw_header = 0;
            while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) saw_header |= ev.type == NPZS_EV_HEADER;
            int err = npzs_error(p);
            if (over ? (err != NPZS_E_SIZE_OVERFLOW || !npzs_error_rule(p) || strcmp(npzs_error_rule(p), "HDR-SHAPE.size-overflow"))
                     : !saw_header) {
                bad++;
                printf("  shape %s: error %d rule %s, expected %s\n", t, err, npzs_error_rule(p) ? npzs_error_rule(p) : "-",
                       over ? "HDR-SHAPE.size-overflow" : "a HEADER event");
            }
            npzs_free(p);
            free(f);
        }
    CHECK(bad == 0, "the array-size rule at its boundary: %d shapes decided otherwise", bad);
}

static int field_is(const npzs_array_info *a, uint32_t f, const char *name, const char *title, uint64_t off) {
    const npzs_dtfield *d = &a->dt_fields[f];
    if (d->name_len != strlen(name) || memcmp(d->name, name, d->name_len)) return 0;
    if (title ? !d->title || d->title_len != strlen(title) || memcmp(d->title, title, d->title_len) : d->title != NULL)
        return 0;
    return d->offset == off;
}

/* The tree of one structured descr, against what NumPy 1.24 and 2.x make of it
 * (np.load(...).dtype.fields): the padding field ('', '|V4') is dropped, the titled field keeps
 * its title, ('|S0', 3) is S3, and a subarray of a subarray stays two nodes. */
static void test_dtype_tree(void) {
    size_t len;
    uint8_t *f = npy_of("{'descr': [('a', '<i4'), ('', '|V4'), (('t', 'b'), [('c', '<f8', (2,)), ('d', ('|S0', 3))]), "
                        "('e', ('<u2', (2, 3)), (4,))], 'fortran_order': False, 'shape': (2,), }", 150, &len);
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {f, len, 0};
    npzs_finish(p);
    npzs_event ev;
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
    CHECK(rc == NPZS_EVENT, "no header event: %d", rc);
    if (rc == NPZS_EVENT) {
        const npzs_array_info *a = ev.array;
        uint64_t h = 0;
        const char *why = tree_check(a, &h);
        CHECK(!why, "tree: %s", why ? why : "");
        const npzs_dtnode *n = a->dt_nodes;
        CHECK(a->structured && a->itemsize == 75 && n[0].count == 3 && a->dt_nfields == 5, "top level: %d %llu %u %u",
              a->structured, (unsigned long long)a->itemsize, n[0].count, a->dt_nfields);
        if (!why && n[0].count == 3) {
            uint32_t f0 = n[0].first;
            CHECK(field_is(a, f0, "a", NULL, 0) && field_is(a, f0 + 1, "b", "t", 8) && field_is(a, f0 + 2, "e", NULL, 27),
                  "top-level fields");
            const npzs_dtnode *ta = &n[a->dt_fields[f0].type], *tb = &n[a->dt_fields[f0 + 1].type],
                              *te = &n[a->dt_fields[f0 + 2].type];
            CHECK(ta->kind == NPZS_DT_SCALAR && !strcmp(ta->dtype, "<i4") && ta->itemsize == 4, "a: <i4");
            CHECK(tb->kind == NPZS_DT_STRUCT && tb->itemsize == 19 && tb->count == 2, "b: a struct of 19 bytes");
            if (tb->kind == NPZS_DT_STRUCT && tb->count == 2) {
                CHECK(field_is(a, tb->first, "c", NULL, 0) && field_is(a, tb->first + 1, "d", NULL, 16), "b's fields");
                const npzs_dtnode *tc = &n[a->dt_fields[tb->first].type], *td = &n[a->dt_fields[tb->first + 1].type];
                CHECK(tc->kind == NPZS_DT_SUBARRAY && tc->ndim == 1 && tc->shape[0] == 2 && tc->itemsize == 16 &&
                          !strcmp(n[tc->base].dtype ? n[tc->base].dtype : "", "<f8"),
                      "c: <f8 (2,)");
                CHECK(td->kind == NPZS_DT_SCALAR && !strcmp(td->dtype, "|S3") && td->itemsize == 3, "d: |S3");
            }
            CHECK(te->kind == NPZS_DT_SUBARRAY && te->ndim == 1 && te->shape[0] == 4 && te->itemsize == 48, "e: (4,) of");
            if (te->kind == NPZS_DT_SUBARRAY) {
                const npzs_dtnode *tb2 = &n[te->base];
                CHECK(tb2->kind == NPZS_DT_SUBARRAY && tb2->ndim == 2 && tb2->shape[0] == 2 && tb2->shape[1] == 3 &&
                          tb2->itemsize == 12 && !strcmp(n[tb2->base].dtype ? n[tb2->base].dtype : "", "<u2"),
                      "e: (<u2, (2, 3))");
            }
        }
    }
    npzs_free(p);
    free(f);
    /* a plain dtype has no tree */
    f = npy_of("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), }", 4, &len);
    p = npzs_new(NULL, NULL);
    in = (npzs_in){f, len, 0};
    npzs_finish(p);
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
    CHECK(rc == NPZS_EVENT && !ev.array->structured && !ev.array->dt_nodes && !ev.array->dt_nnodes, "plain dtype tree");
    npzs_free(p);
    free(f);
}

/* A v2.0 .npy of the header text `t` (padded as NumPy pads), no data; free() it. */
static uint8_t *npy2_of(const char *t, size_t *len) {
    size_t n = strlen(t), pad = (64 - (12 + n + 1) % 64) % 64, hl = n + pad + 1;
    uint8_t *f = calloc(1, 12 + hl);
    memcpy(f, "\x93NUMPY\x02\x00", 8);
    for (int k = 0; k < 4; k++) f[8 + k] = (uint8_t)(hl >> (8 * k));
    memcpy(f + 12, t, n);
    memset(f + 12 + n, ' ', pad);
    f[12 + n + pad] = '\n';
    *len = 12 + hl;
    return f;
}

/* The header of `f` through parser p (reset first): its array info, or NULL with the error set. */
static const npzs_array_info *header_of(npzs_parser *p, const uint8_t *f, size_t len) {
    npzs_reset(p);
    npzs_in in = {f, len, 0};
    npzs_finish(p);
    npzs_event ev;
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT)
        if (ev.type == NPZS_EV_HEADER) return ev.array;
    return NULL;
}

/* A structured dtype of n fields of four kinds in turn (a plain type; a datetime of a varying
 * unit with a shape; a zero-width string given its width; a subarray of 1 to 6 dimensions as
 * the type), every seventh field titled: the header text, and what NumPy makes of field k. */
typedef struct big_field {
    char name[16], title[16], dtype[24];
    uint64_t offset, itemsize, dims[6];
    uint32_t ndim; /* 0: the field's type is the scalar dtype */
} big_field;

static char *big_descr(uint32_t n, big_field *fl) {
    size_t cap = (size_t)n * 96 + 128, at = 0;
    char *t = malloc(cap);
    uint64_t off = 0;
    at += (size_t)snprintf(t + at, cap - at, "{'descr': [");
    for (uint32_t k = 0; k < n; k++) {
        big_field *b = &fl[k];
        memset(b, 0, sizeof *b);
        snprintf(b->name, sizeof b->name, "f%u", k);
        if (k % 7 == 0) snprintf(b->title, sizeof b->title, "t%u", k);
        char nm[40];
        if (k % 7 == 0) snprintf(nm, sizeof nm, "('%s', '%s')", b->title, b->name);
        else snprintf(nm, sizeof nm, "'%s'", b->name);
        switch (k % 4) {
        case 0:
            snprintf(b->dtype, sizeof b->dtype, "<i4");
            b->itemsize = 4;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '<i4'), ", nm);
            break;
        case 1:
            snprintf(b->dtype, sizeof b->dtype, "<M8[%uus]", k % 997 + 2); /* [1us] is [us] */
            b->ndim = 2;
            b->dims[0] = k % 3 + 1;
            b->dims[1] = 2;
            b->itemsize = 8 * b->dims[0] * 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '%s', (%llu, 2)), ", nm, b->dtype,
                                   (unsigned long long)b->dims[0]);
            break;
        case 2:
            snprintf(b->dtype, sizeof b->dtype, "|S%u", k % 50 + 2);
            b->itemsize = k % 50 + 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, '|S0', %u), ", nm, k % 50 + 2);
            break;
        default: {
            snprintf(b->dtype, sizeof b->dtype, "<u2");
            b->ndim = k % 6 + 1;
            b->itemsize = 2;
            at += (size_t)snprintf(t + at, cap - at, "(%s, ('<u2', (", nm);
            for (uint32_t d = 0; d < b->ndim; d++) {
                b->dims[d] = (k >> d) % 2 + 1;
                b->itemsize *= b->dims[d];
                at += (size_t)snprintf(t + at, cap - at, "%llu,%s", (unsigned long long)b->dims[d], d + 1 < b->ndim ? " " : "");
            }
            at += (size_t)snprintf(t + at, cap - at, "))), ");
        }
        }
        b->offset = off;
        off += b->itemsize;
    }
    snprintf(t + at, cap - at, "], 'fortran_order': False, 'shape': (0,), }");
    return t;
}

/* Field k of the tree is what big_descr says; NULL when it is. */
static const char *big_field_is(const npzs_array_info *a, uint32_t k, const big_field *b) {
    const npzs_dtnode *n = a->dt_nodes;
    if (k >= n[0].count) return "missing";
    const npzs_dtfield *f = &a->dt_fields[n[0].first + k];
    if (f->name_len != strlen(b->name) || memcmp(f->name, b->name, f->name_len)) return "name";
    if (b->title[0] ? !f->title || f->title_len != strlen(b->title) || memcmp(f->title, b->title, f->title_len) : f->title != NULL)
        return "title";
    if (f->offset != b->offset) return "offset";
    const npzs_dtnode *t = &n[f->type];
    if (t->itemsize != b->itemsize) return "itemsize";
    if (b->ndim) {
        if (t->kind != NPZS_DT_SUBARRAY || t->ndim != b->ndim) return "subarray";
        for (uint32_t d = 0; d < b->ndim; d++)
            if (t->shape[d] != b->dims[d]) return "shape";
        t = &n[t->base];
    }
    if (t->kind != NPZS_DT_SCALAR || strcmp(t->dtype, b->dtype)) return "type string";
    return NULL;
}

/* Trees whose pools span many chunks and directory blocks (src/npyhdr.c, "the pools"): 40000
 * fields, every one as NumPy makes it, on one parser between small headers (what it keeps is
 * reused, and published pointers stay good while the header is current). */
static void test_big_tree(void) {
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_header_size = UINT64_C(1) << 30;
    lim.max_fields = 1000000;
    npzs_parser *p = npzs_new(&lim, NULL);
    static const uint32_t sizes[] = {3, 40000, 5, 40000, 1};
    for (size_t r = 0; r < sizeof sizes / sizeof sizes[0]; r++) {
        uint32_t n = sizes[r];
        big_field *fl = calloc(n, sizeof *fl);
        char *t = big_descr(n, fl);
        size_t len;
        uint8_t *f = npy2_of(t, &len);
        const npzs_array_info *a = header_of(p, f, len);
        CHECK(a != NULL, "big tree of %u fields: error %d rule %s", n, npzs_error(p),
              npzs_error_rule(p) ? npzs_error_rule(p) : "-");
        if (a) {
            uint64_t h = 0;
            const char *why = tree_check(a, &h);
            CHECK(!why, "big tree of %u fields: %s", n, why ? why : "");
            uint32_t bad = 0;
            const char *what = NULL;
            for (uint32_t k = 0; !why && k < n; k++) {
                const char *w = big_field_is(a, k, &fl[k]);
                if (w && !bad++) what = w;
            }
            CHECK(!why && bad == 0 && a->dt_nfields == n, "big tree of %u fields: %u differ (first: %s), %u listed", n,
                  bad, what ? what : "-", a->dt_nfields);
        }
        free(f);
        free(t);
        free(fl);
    }
    npzs_free(p);
}

/* The published tree's block, grown (src/npyhdr.c, tree_room): the last header's tree is freed
 * before the larger one is made, so a parser holds one tree at a time.  A header of one field with
 * a long name, then a shorter one of 60 fields: the second grows the tree and nothing else that
 * the first sized (the scratch), and no block is live at any moment that is not live after it.
 * Each allocation of the second header failing is out of memory inside its text (the tree's at
 * its end), with a pool's rule, and leaks nothing; the parser, reset, then parses it. */
static void test_tree_grows(void) {
    char ta[4200], tb[2000];
    int at = snprintf(ta, sizeof ta, "{'descr': [('");
    for (int k = 0; k < 3000; k++) ta[at++] = (char)('a' + k % 26);
    snprintf(ta + at, sizeof ta - (size_t)at, "', '<i4')], 'fortran_order': False, 'shape': (), }");
    at = snprintf(tb, sizeof tb, "{'descr': [");
    for (int k = 0; k < 60; k++) at += snprintf(tb + at, sizeof tb - (size_t)at, "('f%02d', '%s'), ", k, k % 2 ? "<i4" : "<f8");
    snprintf(tb + at, sizeof tb - (size_t)at, "], 'fortran_order': False, 'shape': (), }");
    size_t la, lb;
    uint8_t *fa = npy2_of(ta, &la), *fb = npy2_of(tb, &lb);
    counting cnt = {0, -1, 0, 0};
    npzs_allocator al = {c_alloc, c_free, &cnt};
    npzs_parser *p = npzs_new(NULL, &al);
    const npzs_array_info *a = p ? header_of(p, fa, la) : NULL;
    CHECK(a && a->dt_nfields == 1, "tree grows: the first header refused (%d)", p ? npzs_error(p) : -1);
    long after_a = cnt.n;
    cnt.peak = cnt.live;
    a = p ? header_of(p, fb, lb) : NULL;
    CHECK(a && a->dt_nfields == 60 && cnt.n > after_a && cnt.peak == cnt.live,
          "tree grows: %u fields, %ld allocations, %ld blocks live at most and %ld after", a ? a->dt_nfields : 0,
          cnt.n - after_a, cnt.peak, cnt.live);
    npzs_free(p);
    CHECK(cnt.live == 0, "tree grows: %ld blocks leaked", cnt.live);
    long fails = 0, bad = 0;
    for (long i = after_a; i < cnt.n; i++) {
        counting c = {0, i, 0, 0};
        al.opaque = &c;
        p = npzs_new(NULL, &al);
        if (!p || !header_of(p, fa, la)) { bad++; npzs_free(p); continue; }
        a = header_of(p, fb, lb);
        const char *rule = npzs_error_rule(p);
        uint64_t off = npzs_error_offset(p);
        if (a || npzs_error(p) != NPZS_E_NOMEM || !rule ||
            (strcmp(rule, "NOMEM.descr-stack") && strcmp(rule, "NOMEM.field-names")) || off < 12 || off > lb) {
            bad++;
            printf("  tree grows: allocation %ld failing gives %d %s at %llu\n", i, npzs_error(p), rule ? rule : "-",
                   (unsigned long long)off);
        }
        c.fail_at = -1;
        a = header_of(p, fb, lb);
        if (!a || a->dt_nfields != 60) bad++;
        npzs_free(p);
        if (c.live != 0) bad++;
        fails++;
    }
    CHECK(fails == cnt.n - after_a && fails > 0 && bad == 0, "tree grows: %ld of %ld failing allocations wrong", bad,
          fails);
    free(fa);
    free(fb);
}

/* The pools' first chunks (src/npyhdr.c, npzs__header_pools) are made before the first header,
 * plain or structured, and only then: a top block, a directory and a chunk for each of the six
 * pools.  Each of those allocations failing is out of memory at the header text's first byte
 * (10 in a version 1.0 file, 12 in 2.0), with the pool's rule, and leaks nothing. */
static void test_pools_first(void) {
    const char *t = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    for (int v = 1; v <= 2; v++) {
        size_t len;
        uint8_t *f = v == 1 ? npy_of(t, 8, &len) : npy2_of(t, &len);
        const uint64_t text_at = v == 1 ? 10 : 12;
        counting probe = {0, -1, 0, 0};
        npzs_allocator al = {c_alloc, c_free, &probe};
        npzs_parser *p = npzs_new(NULL, &al);
        long before = probe.n;
        CHECK(p && header_of(p, f, len) != NULL, "pools: v%d header refused", v);
        long first = probe.n;
        CHECK(p && header_of(p, f, len) != NULL && probe.n == first, "pools: v%d second header allocates %ld", v,
              probe.n - first);
        npzs_free(p);
        CHECK(probe.live == 0 && first - before >= 18, "pools: v%d %ld live, %ld allocations in the first header", v,
              probe.live, first - before);
        int pools = 0, names = 0, ok = 1;
        for (long i = before; i < first; i++) {
            counting c = {0, i, 0, 0};
            al.opaque = &c;
            p = npzs_new(NULL, &al);
            if (!p) { ok = 0; continue; }
            const npzs_array_info *a = header_of(p, f, len);
            const char *rule = npzs_error_rule(p);
            if (a || npzs_error(p) != NPZS_E_NOMEM || !rule) {
                ok = 0;
                printf("  pools v%d: allocation %ld failing gives %d\n", v, i, npzs_error(p));
            } else if (!strcmp(rule, "NOMEM.descr-stack") || !strcmp(rule, "NOMEM.field-names")) {
                pools++;
                names += !strcmp(rule, "NOMEM.field-names");
                if (npzs_error_offset(p) != text_at) {
                    ok = 0;
                    printf("  pools v%d: allocation %ld failing: %s at %llu\n", v, i, rule,
                           (unsigned long long)npzs_error_offset(p));
                }
            }
            npzs_free(p);
            if (c.live != 0) ok = 0;
        }
        CHECK(ok && pools == 18 && names == 3, "pools: v%d first header's allocations failing: %d pool blocks (%d of names)",
              v, pools, names);
        free(f);
    }
}

/* A pool holds at most 128 MiB (NPZS_POOL_*): a tree that needs more is out of memory, with the
 * descr's rule, at the end of the type string of the field whose node did not fit, when no other
 * limit stops it first. */
static void test_pool_full(void) {
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.max_header_size = UINT64_C(1) << 30;
    lim.max_fields = UINT32_MAX;
    lim.max_memory = 0;
    /* a node record takes at most 57 bytes of a chunk (36 of 56 bytes in 2048): 2.8 M fields
     * of one node each need more than 128 MiB of nodes */
    const size_t nf = (size_t)128 * 1024 * 1024 / 48;
    const char unit[] = "('a', '|i1'), ";
    size_t cap = nf * (sizeof unit - 1) + 128, at = 0;
    char *t = malloc(cap);
    at += (size_t)snprintf(t, cap, "{'descr': [");
    for (size_t k = 0; k < nf; k++) {
        memcpy(t + at, unit, sizeof unit - 1);
        at += sizeof unit - 1;
    }
    snprintf(t + at, cap - at, "], 'fortran_order': False, 'shape': (0,), }");
    size_t len;
    uint8_t *f = npy2_of(t, &len);
    npzs_parser *p = npzs_new(&lim, NULL);
    const npzs_array_info *a = header_of(p, f, len);
    const char *rule = npzs_error_rule(p);
    /* the text starts at 12; field k's type string ends at 12 + 11 + 14 k + 11 */
    uint64_t off = npzs_error_offset(p), k = (off - 34) / (sizeof unit - 1);
    CHECK(!a && npzs_error(p) == NPZS_E_NOMEM && rule && !strcmp(rule, "NOMEM.descr-stack") && off >= 34 && off < len &&
              (off - 34) % (sizeof unit - 1) == 0 && k > nf / 2,
          "a tree past a pool's 128 MiB: error %d rule %s at %llu (field %llu of %zu)", npzs_error(p), rule ? rule : "-",
          (unsigned long long)off, (unsigned long long)k, nf);
    npzs_free(p);
    free(f);
    free(t);
}

/* npzs_npy_sequence: three arrays back to back give three members at every split; cut inside
 * any of them, truncated at the cut; and the call is refused after the first byte. */
static void test_sequence(void) {
    size_t la, lb, lc;
    uint8_t *a = npy_of("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, &la);
    uint8_t *b = npy_of("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1), }", 16, &lb);
    uint8_t *c = npy_of("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1, &lc);
    size_t n = la + lb + lc;
    uint8_t *s = malloc(n);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc);
    s[la + lb - 16 + 3] = 0x5A; /* a data byte of b: the events must carry it */
    seq_mode = 1;
    run whole = parse(s, n, NULL, 0, NULL, NULL);
    CHECK(whole.verdict == 1 && whole.events == 3 * 4 + 1, "sequence: verdict %d, %d events", whole.verdict, whole.events);
    size_t one = 1;
    run r1 = parse(s, n, &one, 1, NULL, NULL);
    CHECK(same(&whole, &r1) && r1.progress_ok, "sequence: 1-byte pushes differ");
    int ok = 1;
    for (size_t cut = 1; cut < n && ok; cut++) {
        size_t two[2] = {cut, n};
        run rc = parse(s, n, two, 2, NULL, NULL);
        if (!same(&whole, &rc) || !rc.progress_ok) { ok = 0; printf("  sequence cut at %zu differs\n", cut); }
        run t = parse(s, cut, NULL, 0, NULL, NULL); /* the input ends at the cut */
        int between = cut == la || cut == la + lb;
        if (between ? t.verdict != 1 : (t.verdict != NPZS_E_TRUNCATED || t.err_off != cut)) {
            ok = 0;
            printf("  sequence ending at %zu: verdict %d off %llu\n", cut, t.verdict, (unsigned long long)t.err_off);
        }
    }
    CHECK(ok, "sequence: a split or a cut differs");
    /* npzs_events: an array that ends without its event (HEADER of an empty array, its last DATA)
     * leaves the bytes after it to the next array */
    static const unsigned masks[] = {0, NPZS_EV_BIT(NPZS_EV_MEMBER_END), NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                     NPZS_EV_BIT(NPZS_EV_DATA), NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN)};
    for (size_t k = 0; k < sizeof masks / sizeof *masks && ok; k++) {
        ev_mask = masks[k];
        run ref = parse(s, n, NULL, 0, NULL, NULL);
        mask_on = 1;
        for (size_t cut = 0; cut < n && ok; cut++) {
            size_t two[2] = {cut ? cut : 1, n};
            run rc = parse(s, n, two, 2, NULL, NULL);
            if (!same(&ref, &rc) || !rc.progress_ok || rc.verdict != 1) {
                ok = 0;
                printf("  sequence, events %#x, cut at %zu: verdict %d\n", masks[k], cut, rc.verdict);
            }
        }
        mask_on = 0;
    }
    ev_mask = NPZS_EV_ALL;
    CHECK(ok, "sequence: with events masked a split differs");
    seq_mode = 0;
    run plain = parse(s, n, NULL, 0, NULL, NULL);
    CHECK(plain.verdict == NPZS_E_TRAILING_DATA && plain.err_off == la, "without the mode: trailing data at %zu", la);
    /* misuse: after the first byte, and with the lenient trailing flag */
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {s, 1, 0};
    npzs_event ev;
    (void)npzs_next(p, &in, &ev);
    int rc = npzs_npy_sequence(p);
    CHECK(rc == NPZS_E_BAD_CALL && npzs_error_rule(p) && !strcmp(npzs_error_rule(p), "CALL.sequence"),
          "npzs_npy_sequence after the first byte: %d", rc);
    npzs_free(p);
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.lenient = NPZS_LENIENT_NPY_TRAILING;
    p = npzs_new(&lim, NULL);
    CHECK(npzs_npy_sequence(p) == NPZS_E_BAD_CALL, "npzs_npy_sequence with NPZS_LENIENT_NPY_TRAILING");
    npzs_free(p);
    free(a);
    free(b);
    free(c);
    free(s);
}

/* npzs_events: a bit that names no event is a bad call (sticky, CALL.events); END comes
 * whatever the mask. */
static void test_events_call(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_events(p, 0) == 0 && npzs_events(p, NPZS_EV_ALL) == 0, "npzs_events: valid masks refused");
    int rc = npzs_events(p, NPZS_EV_ALL | 1u);
    const char *rule = npzs_error_rule(p);
    CHECK(rc == NPZS_E_BAD_CALL && rule && !strcmp(rule, "CALL.events") && npzs_events(p, 0) == NPZS_E_BAD_CALL,
          "npzs_events with bit 0: %d %s", rc, rule ? rule : "NULL");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    rc = npzs_events(p, 1u << 7);
    CHECK(rc == NPZS_E_BAD_CALL, "npzs_events with bit 7: %d", rc);
    npzs_free(p);
    CHECK(npzs_events(NULL, 0) == NPZS_E_BAD_CALL, "npzs_events(NULL)");
    size_t len;
    uint8_t *a = npy_of("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, &len);
    p = npzs_new(NULL, NULL);
    npzs_events(p, 0);
    npzs_in in = {a, len, 0};
    npzs_event ev;
    npzs_finish(p);
    rc = npzs_next(p, &in, &ev);
    CHECK(rc == NPZS_EVENT && ev.type == NPZS_EV_END && ev.members == 1 && in.pos == len,
          "npzs_events(0): the first event is END (%d, type %d)", rc, rc == NPZS_EVENT ? (int)ev.type : 0);
    npzs_free(p);
    free(a);
}

/* npzs__zr_name skips its per-byte loop when a word-at-a-time scan finds none of the bytes that
 * loop looks at: against the loop run on every name (this reference), over names of 0 to 40
 * bytes drawn from the bytes on either side of each class boundary, every position of a
 * special byte and of two dots in a row inside and across 8-byte words. */
static int ref_name(const uint8_t *s, size_t n, unsigned flags, npzs_zerr *e) {
    int ascii = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 0) return e->rule = NPZS_R_NAME_NUL, -1;
        if (s[i] < 0x20 || s[i] == 0x7F) return e->rule = NPZS_R_NAME_CONTROL, -1;
        if (s[i] == '\\') return e->rule = NPZS_R_NAME_BACKSLASH, -1;
        if (s[i] >= 0x80) ascii = 0;
        if (s[i] == '.' && i + 1 < n && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') && (i + 2 == n || s[i + 2] == '/'))
            return e->rule = NPZS_R_NAME_DOTDOT, -1;
    }
    if (s[0] == '/') return e->rule = NPZS_R_NAME_ABSOLUTE, -1;
    if (n == 4 && memcmp(s, ".npy", 4) == 0) return e->rule = NPZS_R_NAME_EMPTY_KEY, -1;
    if (s[n - 1] == '/') return e->rule = NPZS_R_NAME_DIRECTORY, -1;
    if (!ascii && !(flags & 0x0800u)) return e->rule = NPZS_R_NAME_CP437, -1;
    if (!ascii && !npzs__utf8_valid(s, n)) return e->rule = NPZS_R_NAME_UTF8, -1;
    return 0;
}

static void test_zr_name(void) {
    static const uint8_t pick[] = {0x00, 0x01, 0x1F, 0x20, 'a', '.', '/', '\\', 0x5B, 0x5D, 0x7E, 0x7F, 0x80, 0xC3, 0xA9, 0xFF};
    uint8_t s[48];
    uint32_t seed = 12345;
    long bad = 0, runs = 0, slow = 0;
    for (size_t n = 1; n <= 40; n++) {
        /* one or two special bytes (or two dots) at every position among plain letters */
        for (size_t a = 0; a < n; a++)
            for (size_t k = 0; k < sizeof pick; k++) {
                memset(s, 'a', n);
                s[a] = pick[k];
                if (a + 1 < n && k == 5) { /* "/../" */
                    s[a + 1] = '.';
                    if (a) s[a - 1] = '/';
                    if (a + 2 < n) s[a + 2] = '/';
                }
                for (unsigned fl = 0; fl <= 0x800u; fl += 0x800u) {
                    npzs_zerr e1 = {0, 0}, e2 = {0, 0};
                    int r1 = npzs__zr_name(s, n, fl, &e1), r2 = ref_name(s, n, fl, &e2);
                    runs++;
                    if (r1 != r2 || (r1 && e1.rule != e2.rule)) bad++;
                }
            }
        /* random names from the same bytes */
        for (int t = 0; t < 2000; t++) {
            for (size_t i = 0; i < n; i++) {
                seed = seed * 1103515245u + 12345u;
                s[i] = (seed >> 16) % 4 ? (uint8_t)('a' + (seed >> 20) % 3) : pick[(seed >> 24) % sizeof pick];
            }
            npzs_zerr e1 = {0, 0}, e2 = {0, 0};
            int r1 = npzs__zr_name(s, n, 0x800u, &e1), r2 = ref_name(s, n, 0x800u, &e2);
            runs++;
            slow += r2 != 0;
            if (r1 != r2 || (r1 && e1.rule != e2.rule)) bad++;
        }
    }
    CHECK(bad == 0, "npzs__zr_name differs from its per-byte rules on %ld of %ld names", bad, runs);
    CHECK(slow > 1000, "too few rejected names drawn (%ld)", slow);
}

/* The memo of the last header: a member whose preamble and header text repeat the last header
 * parsed takes its results and CRC.  An archive that repeats, changes and comes back to one
 * header, with a v2.0 preamble around the same text, a structured header and one only the
 * general parser takes (both overwrite the shape, dtype and scratch the memo points into), a
 * blob, and a header that fails after one that was kept: the events and errors are those of a
 * parser without the memo, at every push size, and the memo was used where marked. */
static void npy_v2(fz_buf *b, const char *dict, const uint8_t *data, size_t dn) {
    fz_buf t = {0};
    fz_npy(&t, dict, data, dn); /* v1.0: 10-byte preamble; v2.0 has 12 and the same text */
    size_t hl = (size_t)t.p[8] | ((size_t)t.p[9] << 8);
    fz_put(b, "\x93NUMPY\x02\x00", 8);
    fz_put32(b, (uint32_t)hl);
    fz_put(b, t.p + 10, t.n - 10);
    fz_free_buf(&t);
}

static void test_header_memo(void) {
    static const uint8_t d[64] = {1, 2, 3, 4, 5, 6, 7, 8};
    const char *A = "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }";
    const char *B = "{'descr': '<i4', 'fortran_order': False, 'shape': (3,), }";
    const char *C = "{'descr': '<u2', 'fortran_order': True, 'shape': (2, 2), }";
    const char *S = "{'descr': [('a', '<i4'), ('b', '|u1', (4,))], 'fortran_order': False, 'shape': (1,), }";
    const char *G = "{'shape': (2,), 'fortran_order': False, 'descr': '>f4', }"; /* keys unsorted: general */
    const char *X = "{'descr': '<f8', 'fortran_order': False, 'shape': (4611686018427387904, 4), }";
    fz_buf c[16];
    memset(c, 0, sizeof c);
    int k = 0;
    fz_npy(&c[k++], A, d, 8);
    fz_npy(&c[k++], A, d + 1, 8); /* hit */
    fz_npy(&c[k++], B, d, 12);
    fz_npy(&c[k++], A, d, 8);
    npy_v2(&c[k++], A, d, 8);     /* the same text, another preamble */
    npy_v2(&c[k++], A, d, 8);     /* hit */
    fz_npy(&c[k++], S, d, 8);     /* structured: not kept, and the memo forgotten */
    npy_v2(&c[k++], A, d, 8);     /* not a hit: the memo went with the structured parse */
    fz_npy(&c[k++], G, d, 8);     /* the general parser's result is kept too */
    fz_npy(&c[k++], G, d + 3, 8); /* hit */
    fz_npy(&c[k++], A, d, 8);
    fz_put(&c[k++], "not an array", 12);
    fz_npy(&c[k++], A, d + 2, 8); /* hit: a blob parses nothing */
    fz_npy(&c[k++], C, d, 8);
    fz_npy(&c[k++], C, d, 8);     /* hit */
    int nk = k;
    for (int bad = 0; bad < 2; bad++) {
        fz_buf z = {0};
        fz_member m[16];
        char names[16][24];
        int n = bad ? 3 : nk;
        fz_buf xb = {0};
        fz_npy(&xb, X, d, 8);
        for (int i = 0; i < n; i++) {
            snprintf(names[i], sizeof names[i], "a%d.npy", i);
            const fz_buf *src = bad && i == 2 ? &xb : &c[i];
            fz_member t = {names[i], src->p, src->n, i % 3 == 2 ? 8 : 0, 0, 0, 0, 0};
            m[i] = t;
            fz_zip_member(&z, &m[i]);
        }
        size_t cd = z.n;
        for (int i = 0; i < n; i++) fz_zip_cdh(&z, &m[i]);
        fz_zip_eocd(&z, (unsigned)n, (uint32_t)(z.n - cd), (uint32_t)cd);
        static const uint8_t pushes[][1] = {{0}, {1}, {7}, {0xE4}};
        for (size_t s = 0; s < sizeof pushes / sizeof pushes[0]; s++) {
            fz_opts fo;
            fz_opts_init(&fo);
            if (s) {
                fo.sched = pushes[s];
                fo.sched_n = 1;
            }
            fz_result on, off;
            fz_run(z.p, z.n, &fo, &on);
            fo.no_memo = 1;
            fz_run(z.p, z.n, &fo, &off);
            CHECK(fz_same(&on, &off) && on.accepted == !bad && (!bad || on.err == NPZS_E_SIZE_OVERFLOW),
                  "header memo, archive %d, pushes %zu: with and without the memo differ (accepted %d/%d, err %d/%d)",
                  bad, s, on.accepted, off.accepted, on.err, off.err);
        }
        /* the memo was taken where the text repeats the last fast-path header */
        npzs_parser *p = npzs_new(NULL, NULL);
        npzs_in in = {z.p, z.n, 0};
        npzs_event ev;
        while (npzs_next(p, &in, &ev) == NPZS_EVENT) {
        }
        uint64_t want = bad ? 1 : 5; /* the members marked "hit" above */
        CHECK(npzs__header_memo_hits(p) == want, "header memo, archive %d: %llu hits, expected %llu", bad,
              (unsigned long long)npzs__header_memo_hits(p), (unsigned long long)want);
        npzs_free(p);
        fz_free_buf(&z);
        fz_free_buf(&xb);
    }
    for (int i = 0; i < nk; i++) fz_free_buf(&c[i]);
}

/* A file, or a directory's files (recursively, in name order): how many were read. */
static long test_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        CHECK(0, "%s: %s", path, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        test_file(path);
        return 1;
    }
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort);
    long k = 0;
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            size_t len = strlen(path) + strlen(ents[i]->d_name) + 2;
            char *sub = malloc(len);
            snprintf(sub, len, "%s/%s", path, ents[i]->d_name);
            k += test_path(sub);
            free(sub);
        }
        free(ents[i]);
    }
    free(ents);
    return k;
}

int main(int argc, char **argv) {
    test_siphash();
    test_header_memo();
    test_array_size_rule();
    test_zr_name();
    test_deep_descr();
    test_dtype_tree();
    test_big_tree();
    test_pool_full();
    test_pools_first();
    test_tree_grows();
    test_sequence();
    test_events_call();
    test_contract();
    test_many_members();
    test_gathered_inflate();
    test_par();
    par_stable = 1;
    test_par();
    par_stable = 2;
    test_par();
    /* the files: paths, or directories walked for their files; --need-files N fails a run over
     * fewer than N (make check: a corpus that went missing is a failure, not a pass) */
    long need = 0, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--need-files") && i + 1 < argc) {
            need = atol(argv[++i]);
            continue;
        }
        nfiles += test_path(argv[i]);
    }
    CHECK(nfiles >= need, "%ld files read, %ld needed", nfiles, need);
    argc = nfiles ? 2 : 1; /* below: the per-file checks apply when files were read */
    /* NumPy's own files take the fast header path; every header agreed with the general parser */
    printf("api: %ld headers, %ld through the fast path, all equal to the general parser's results\n",
           headers_seen, headers_fast);
    CHECK(argc < 2 || headers_fast > 0, "no header took the fast path");
    printf("api: %ld files also read by zlib alone (NPZS_INFLATE_ZLIB), every run equal to the default decoder's\n",
           zlib_checked);
    CHECK(argc < 2 || zlib_checked == nfiles, "%ld files read by zlib alone of %ld", zlib_checked, nfiles);
    printf("api: %s\n", npzs_fast_inflate() ? "ISA-L built in: every file read with NPZS_LENIENT_FAST_INFLATE too"
                                            : "built without ISA-L: NPZS_LENIENT_FAST_INFLATE is refused (checked)");
    if (!npzs_fast_inflate()) {
        npzs_limits fl;
        npzs_limits_default(&fl);
        fl.lenient = NPZS_LENIENT_FAST_INFLATE;
        CHECK(npzs_limits_check(&fl) && !strcmp(npzs_limits_check(&fl), "lenient"), "the fast inflate flag without ISA-L");
    }
    CHECK(into_bad == 0, "%llu DATA chunks outside the npzs_data_into destination", (unsigned long long)into_bad);
    printf("api: %llu data bytes inflated straight into npzs_data_into destinations\n", (unsigned long long)direct_bytes);
    CHECK(argc < 2 || direct_bytes > 0, "inflate never wrote into a destination");
    printf("api: %llu members inflated by the helper's workers, every run equal to the parser's alone\n",
           (unsigned long long)par_used_total);
    CHECK(argc < 2 || par_used_total > 0, "no member of the files came from a helper's worker");
    printf("api: %llu arrays taken from the workers' output (npzs_par_take_data), every run equal to the parser's alone\n",
           (unsigned long long)par_taken_total);
    CHECK(argc < 2 || par_taken_total > 0, "no array's data was taken from a worker");
    printf("api: %d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
