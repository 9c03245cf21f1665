/* tests/api/par.c -- the parallel-inflate helper (npzs_par_*) on an archive like
 * np.savez_compressed's: every worker count, push size, bound and skip_data keep against the
 * parser alone; take_data, stable input, damaged and cut archives, allocation failures, the API's
 * edges; once with the input copied, once held by reference from the first byte, once from the
 * second push on. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

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

static int par_stable;    /* test_par: helpers take their input by reference (npzs_par_stable_input):
                               1 from the first byte, 2 from the second push on */
static uint64_t par_peak; /* the most a helper held in par_parse's last run (npzs_par_memory) */
static int par_one_entry; /* par_parse drives a parser with a helper by npzs_next and npzs_finish
                               on the parser (the one entry), not npzs_par_next and npzs_par_finish */

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
        if (q && par_stable == 2 && off && npzs_par_stable_input(q, 1) != 0) {
            r.verdict = 93;
            return r;
        }
        size_t k = n - off < feed ? n - off : feed;
        npzs_in in = {b + off, k, 0};
        int by_par = q && !par_one_entry;
        if (off + k == n) {
            if (by_par) npzs_par_finish(q);
            else npzs_finish(p);
        }
        npzs_event ev;
        int rc;
        while ((rc = by_par ? npzs_par_next(q, &in, &ev) : npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            if (q && npzs_par_memory(q) > par_peak) par_peak = npzs_par_memory(q);
            if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) continue; /* chunks follow the pushes */
            uint64_t v = (uint64_t)ev.type << 56 ^ ev.offset ^
                         (ev.type == NPZS_EV_MEMBER_END ? (uint64_t)ev.crc32 << 20 ^ ev.size : 0);
            r.digest = (r.digest ^ v) * UINT64_C(1099511628211);
            if (ev.type == NPZS_EV_END) {
                r.verdict = 1;
                return r;
            }
        }
        off += in.pos;
        if (rc < 0) {
            r.verdict = rc;
            r.err_off = npzs_error_offset(p);
            r.rule = npzs_error_rule(p);
            r.member = npzs_error_member(p);
            return r;
        }
        if (rc != NPZS_NEED_INPUT || off == n) {
            r.verdict = 99;
            return r;
        }
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
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        d[i] = (i / 64) % 2 ? (uint8_t)x : (uint8_t)(i / 4096);
    }
    fz_buf npy = {0}, z = {0};
    fz_npy(&npy, "{'descr': '|u1', 'fortran_order': False, 'shape': (1200000,), }", d, dn);
    fz_member m[4] = {{"a.npy", npy.p, npy.n, 8, 0, 0, 0, 0},
                      {"b.npy", npy.p, 200, 0, 0, 0, 0, 0},
                      {"c.npy", npy.p, npy.n, 8, 0, 0, 0, 0},
                      {"d.npy", npy.p, npy.n, 8, 0, 0, 0, 0}};
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
            CHECK(par_same(&alone, &r2) && npzs_par_used(q) == (th ? 3u : 0u),
                  "par: after npzs_par_reset the result differs");
            CHECK(npzs_par_memory(q) <= UINT64_C(1) << 30, "par: held more than its bound");
            npzs_par_free(q);
        }
    }
    /* one entry: with the helper attached, npzs_next and npzs_finish on the parser go through it
     * (the workers inflate the three large members), the same result as the parser alone */
    par_one_entry = 1;
    for (size_t f = 0; f < sizeof feeds / sizeof *feeds; f++) {
        npzs_reset(p);
        npzs_par *q = par_mk(p, 2, UINT64_C(1) << 30);
        CHECK(q != NULL, "par: one entry: no helper");
        if (!q) continue;
        par_run r = par_parse(p, q, z.p, z.n, feeds[f]);
        CHECK(par_same(&alone, &r) && npzs_par_used(q) == 3, "par: one entry, pushes of %zu: differs (used %llu)",
              feeds[f], (unsigned long long)npzs_par_used(q));
        npzs_par_free(q);
        npzs_reset(p);
        par_run r2 = par_parse(p, NULL, z.p, z.n, feeds[f]); /* the helper gone: the parser alone again */
        CHECK(par_same(&alone, &r2), "par: one entry, pushes of %zu: after npzs_par_free the parser alone differs",
              feeds[f]);
    }
    par_one_entry = 0;
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
            CHECK(par_same(&alone, &r) && npzs_par_used(qs) == 3,
                  "par: skip_data keeping %llu, pushes of %zu: differs (used %llu)", (unsigned long long)keeps[k],
                  feeds[f], (unsigned long long)npzs_par_used(qs));
            /* stable input: the members' compressed bytes (600 KB and more each) are never held,
             * only the jobs' kept output (3 x 40 KB at most here) */
            CHECK(par_stable != 1 || par_peak < 256 * 1024,
                  "par: stable input, keeping %llu, pushes of %zu: held %llu bytes", (unsigned long long)keeps[k],
                  feeds[f], (unsigned long long)par_peak);
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
                          "par: take: offset %llu, memory %llu -> %llu", (unsigned long long)off,
                          (unsigned long long)held, (unsigned long long)npzs_par_memory(qt));
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
            CHECK(memcmp((const uint8_t *)blocks[i] + (npy.n - dn), d, dn) == 0, "par: take: block %d lost its bytes",
                  i);
            free(blocks[i]);
        }
        /* outside an array's data, and twice */
        npzs_reset(p);
        qt = par_mk(p, 1, UINT64_C(1) << 30);
        void *b;
        uint64_t off;
        rc = npzs_par_take_data(qt, 1, &b, &off);
        CHECK(rc == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.par-take"), "par: take before any HEADER: %d",
              rc);
        npzs_par_free(qt);
        npzs_reset(p);
        qt = par_mk(p, 1, UINT64_C(1) << 30);
        in = (npzs_in){z.p, z.n, 0};
        npzs_par_finish(qt);
        while (npzs_par_next(qt, &in, &ev) == NPZS_EVENT && ev.type != NPZS_EV_HEADER) {}
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
        CHECK(par_same(&alone, &again) && npzs_par_used(qt) == 3,
              "par: after npzs_reset(p) the helper differs (used %llu)", (unsigned long long)npzs_par_used(qt));
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
        check_alloc st = {0, k, 0, 0};
        npzs_allocator al = {check_malloc, check_free, &st};
        npzs_parser *pf = npzs_new(NULL, &al);
        if (!pf) continue;
        st.n = 0;
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
        CHECK(npzs_par_stable_input(q, 0) == NPZS_E_BAD_CALL,
              "par: stable input turned off with bytes held by reference");
        npzs_par_reset(q);
    }
    npzs_par_free(q);
    CHECK(!npzs_par_new(NULL, 1, 1u << 20) && !npzs_par_new(p, 65, 1u << 20),
          "par: NULL parser or 65 workers accepted");
    q = npzs_par_new(p, 1, 1u << 20);
    CHECK(q != NULL, "par: a helper after the first was freed");
    npzs_event ev;
    npzs_in in = {z.p, 10, 0};
    CHECK(npzs_par_next_(q, &in, &ev, sizeof ev - 8) == NPZS_E_BAD_CALL &&
              !strcmp(npzs_error_rule(p), "CALL.event-size"),
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

void test_par_input(int stable) {
    par_stable = stable;
    test_par();
    par_stable = 0;
}
