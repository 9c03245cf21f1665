/* tests/api/input.c -- archives that stress how input arrives: more members than one record chunk
 * holds (with allocation failures and duplicates across chunks), input that changes while the
 * parser reads it, and a deflated member larger than what small pushes are gathered in. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* An archive of n stored members "m0000.npy"...; member dup (if < n) reuses the name of
 * member 3, or its key when key_only ("m0003" without .npy). */
static uint8_t *many_members(size_t n, size_t dup, int key_only, size_t *len) {
    size_t cn;
    const uint8_t *content = fz_npy_small(&cn);
    fz_member *m = calloc(n, sizeof *m);
    char(*names)[16] = calloc(n, sizeof *names);
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
void test_many_members(void) {
    size_t len;
    uint8_t *buf = many_members(3000, SIZE_MAX, 0, &len);
    run whole = parse(buf, len, NULL, 0, NULL, NULL);
    CHECK(whole.verdict == 1, "3000 members: verdict %d", whole.verdict);
    size_t sched = 97;
    run r = parse(buf, len, &sched, 1, NULL, NULL);
    CHECK(same(&whole, &r), "3000 members: 97-byte pushes differ");
    check_alloc probe = {0, -1, 0, 0};
    run pr = parse(buf, len, NULL, 0, NULL, &probe);
    CHECK(same(&whole, &pr) && probe.live == 0, "3000 members: counting allocator");
    CHECK(probe.n >= 8, "3000 members: only %ld allocations (the record chunks are one each)", probe.n);
    int ok = 1;
    for (long i = 0; i < probe.n; i++) {
        check_alloc c = {0, i, 0, 0};
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
              "duplicate %s in member 2600: verdict %d member %ld", key_only ? "key" : "name", d.verdict, d.err_member);
        free(buf);
    }
}

/* ---- input that changes while the parser reads it ----
 * A caller's memory may change under the parser (a file mapped while someone rewrites it: Python's
 * npzstream.open, the command line's -j N).  The verdict is then about whatever was read, but the
 * parser must stay within its buffers: a record read in place must take each length from one read
 * (zip.c, fixed_once).  A thread rewrites one 16-bit length field of a record whole in the push,
 * back and forth, while parsers read it; under ASan a length checked against the push in one read
 * and used from another (a name copied past its buffer, an extra field read past the push) is a
 * reported overflow.  Both values are seen (some runs accepted, some rejected), or the test did
 * not test. */
typedef struct flip_job {
    volatile uint8_t *at; /* the field's two bytes */
    uint16_t a, b;
    volatile int stop;
} flip_job;

static void *flip_field(void *arg) {
    flip_job *f = arg;
    while (!f->stop) {
        f->at[0] = (uint8_t)f->a;
        f->at[1] = (uint8_t)(f->a >> 8);
        f->at[0] = (uint8_t)f->b;
        f->at[1] = (uint8_t)(f->b >> 8);
    }
    return NULL;
}

/* One parse of buf whole: its verdict (1 END, or the error code) and the error's offset. */
static int flip_parse(const uint8_t *buf, size_t len, uint64_t *off) {
    npzs_parser *p = npzs_new(NULL, NULL); /* new: its name and extra buffers start small */
    npzs_in in = {buf, len, 0};
    npzs_event ev;
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {}
    if (rc == NPZS_NEED_INPUT) {
        npzs_finish(p);
        while ((rc = npzs_next(p, NULL, &ev)) == NPZS_EVENT && ev.type != NPZS_EV_END) {}
    }
    *off = rc == NPZS_EVENT ? 0 : npzs_error_offset(p);
    npzs_free(p);
    return rc == NPZS_EVENT ? 1 : rc;
}

static void flip_run(const char *what, uint8_t *buf, size_t len, size_t field, uint16_t other, long runs) {
    uint64_t off0, off;
    int v0 = flip_parse(buf, len, &off0);
    flip_job f = {buf + field, (uint16_t)(buf[field] | buf[field + 1] << 8), other, 0};
    pthread_t th;
    if (pthread_create(&th, NULL, flip_field, &f) != 0) {
        CHECK(0, "%s: pthread_create", what);
        return;
    }
    long same_runs = 0, other_runs = 0;
    for (long i = 0; i < runs; i++) {
        int v = flip_parse(buf, len, &off);
        if (v == v0 && off == off0) same_runs++;
        else other_runs++;
    }
    f.stop = 1;
    pthread_join(th, NULL);
    CHECK(same_runs > 0 && other_runs > 0,
          "%s: %ld runs as without the change, %ld otherwise: the field was not seen changing", what, same_runs,
          other_runs);
}

void test_changing_input(void) {
    size_t n;
    uint8_t *z = many_members(2, SIZE_MAX, 0, &n);
    /* the first local header's name length: 9 or 4000 (the push then runs 8000 bytes past the
     * archive, so that both values fit in it) */
    uint8_t *lfh = calloc(1, n + 8000);
    memcpy(lfh, z, n);
    flip_run("a local header's name length changing", lfh, n + 8000, 26, 4000, 30000);
    free(lfh);
    /* the second central directory header's extra field length: 0 or 4000 (past the end) */
    uint8_t *cdh = malloc(n), *second = NULL;
    memcpy(cdh, z, n);
    for (size_t i = 0, seen = 0; i + 4 <= n; i++)
        if (!memcmp(cdh + i, "PK\1\2", 4) && ++seen == 2) second = cdh + i;
    CHECK(second != NULL, "test setup: no second central directory header");
    if (second)
        flip_run("a central directory header's extra length changing", cdh, n, (size_t)(second - cdh) + 30, 4000,
                 30000);
    free(cdh);
    free(z);
}

/* A deflated member of ~440 KiB compressed (more than the 64 KiB the parser gathers small
 * pushes in), parsed whole and in pushes of many sizes with small inflate windows: the
 * window fills before the gathered input is used up, so the gathered bytes are topped up,
 * compacted and inflated in every order; the result must be the whole parse's. */
void test_gathered_inflate(void) {
    size_t dn = 600000;
    uint8_t *d = malloc(dn);
    uint64_t x = 88172645463325252ULL;
    for (size_t i = 0; i < dn; i++) { /* half random bytes, half runs: deflates to ~75% */
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        d[i] = (i / 64) % 2 ? (uint8_t)x : (uint8_t)(i / 4096);
    }
    fz_buf npy = {0}, z = {0};
    fz_npy(&npy, "{'descr': '|u1', 'fortran_order': False, 'shape': (600000,), }", d, dn);
    fz_member m = {"g.npy", npy.p, npy.n, 8, 0, 0, 0, 0};
    fz_zip_member(&z, &m);
    size_t cd = z.n;
    fz_zip_cdh(&z, &m);
    fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
    CHECK(m.csize > (1u << 17), "gathered inflate: the member deflates to only %llu bytes",
          (unsigned long long)m.csize);
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
    CHECK(tw.verdict == NPZS_E_TRUNCATED && same(&tw, &t7), "gathered inflate: truncated member %d/%d", tw.verdict,
          t7.verdict);
    free(d);
    fz_free_buf(&npy);
    fz_free_buf(&z);
}

/* A rejection's numbers (npzs_error_limit): the limit's name, its value in force and what the input
 * needed, for each rule a limit decides (the cases of tests/limit_cases.py, built here in C); the
 * same when the input comes a byte at a time; none before an error, after npzs_reset, or for
 * another error.  needed UINT64_MAX: more than the value (max_memory's need is the parser's own
 * memory, which depends on the platform). */
static void limit_case(const char *what, const uint8_t *buf, size_t len, const npzs_limits *lim, int code,
                       const char *rule, const char *name, uint64_t value, uint64_t needed) {
    for (size_t one = 0; one < 2; one++) {
        npzs_parser *p = npzs_new(lim, NULL);
        CHECK(p != NULL, "%s: npzs_new", what);
        if (!p) return;
        const char *n0 = "x";
        uint64_t v0 = 1, d0 = 1;
        CHECK(npzs_error_limit(p, &n0, &v0, &d0) == 0 && n0 == NULL && v0 == 0 && d0 == 0,
              "%s: numbers before an error", what);
        if (seq_mode) CHECK(npzs_npy_sequence(p) == 0, "%s: npzs_npy_sequence", what);
        size_t sched = 1;
        run r = drive(p, buf, len, one ? &sched : NULL, one);
        const char *got = NULL, *rid = npzs_error_rule(p);
        uint64_t v = 0, d = 0;
        int have = npzs_error_limit(p, &got, &v, &d);
        CHECK(r.verdict == code && rid && strcmp(rid, rule) == 0, "%s%s: verdict %d rule %s (want %d %s)", what,
              one ? " (1-byte pushes)" : "", r.verdict, rid ? rid : "NULL", code, rule);
        CHECK(have == 1 && got && strcmp(got, name) == 0 && v == value && (needed == UINT64_MAX ? d > v : d == needed),
              "%s%s: numbers %d %s %llu %llu (want %s %llu %llu)", what, one ? " (1-byte pushes)" : "", have,
              got ? got : "NULL", (unsigned long long)v, (unsigned long long)d, name, (unsigned long long)value,
              (unsigned long long)needed);
        CHECK(npzs_error_limit(p, NULL, NULL, NULL) == 1, "%s: NULL pointers", what);
        npzs_reset(p); /* a new input forgets them */
        CHECK(npzs_error_limit(p, &got, &v, &d) == 0 && got == NULL, "%s: numbers after npzs_reset", what);
        npzs_free(p);
    }
}

/* One member named name with content, stored (or deflated with bit 3 and a descriptor: its size is
 * known only as it inflates), an extra field of xlen bytes in its local header or (central) in its
 * central record only. */
static uint8_t *one_member(const char *name, const uint8_t *content, size_t cn, int deflated, size_t xlen, int central,
                           size_t *len) {
    fz_buf z = {0};
    uint8_t extra[256] = {0xFE, 0xCA, (uint8_t)(xlen - 4), 0};
    fz_member m = {name, content, cn, deflated ? 8 : 0, deflated ? 1 : 0, 0, 0, 0};
    if (!xlen || central) {
        fz_zip_member(&z, &m);
    } else {
        m.crc = fz_crc32(content, cn);
        m.csize = cn;
        fz_zip_lfh(&z, name, strlen(name), 20, 0, 0, m.crc, (uint32_t)cn, (uint32_t)cn, extra, xlen);
        fz_put(&z, content, cn);
    }
    size_t cd = z.n;
    fz_zip_cdh(&z, &m);
    if (xlen && central) { /* the record ends with the name: its extra length, then the extra */
        z.p[cd + 30] = (uint8_t)xlen;
        fz_put(&z, extra, xlen);
    }
    fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
    *len = z.n;
    return z.p;
}

void test_limit_numbers(void) {
    npzs_limits lim;
    size_t len;
    uint8_t *buf = many_members(5, SIZE_MAX, 0, &len);
    npzs_limits_default(&lim);
    lim.max_members = 3;
    limit_case("max_members", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_members", "max_members", 3, 4);
    npzs_limits_default(&lim);
    lim.max_name_len = 2; /* the members are named m0000.npy and so on */
    limit_case("max_name_len", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_name_len", "max_name_len", 2,
               (uint64_t)buf[26] | (uint64_t)buf[27] << 8);
    free(buf);
    npzs_limits_default(&lim);
    uint8_t *npy = npy_of("{'descr': '<f8', 'fortran_order': False, 'shape': (1000,), }", 8000, &len);
    lim.max_total_bytes = 4096;
    limit_case("max_total_bytes", npy, len, &lim, NPZS_E_LIMIT, "LIMIT.max_total_bytes.array", "max_total_bytes", 4096,
               len); /* the header's bytes and the data's */
    free(npy);
    npzs_limits_default(&lim);
    npy = npy_of("{'descr': [('a', '<f4'), ('b', '<f4'), ('c', '<f4')], 'fortran_order': False, 'shape': (2,), }", 24,
                 &len);
    lim.max_fields = 2;
    limit_case("max_fields", npy, len, &lim, NPZS_E_LIMIT, "LIMIT.max_fields", "max_fields", 2, 3);
    free(npy);
    npzs_limits_default(&lim);
    npy = npy_of("{'descr': [('a', [('b', [('c', '<f4')])])], 'fortran_order': False, 'shape': (2,), }", 8, &len);
    lim.max_depth = 1;
    limit_case("max_depth", npy, len, &lim, NPZS_E_LIMIT, "LIMIT.max_depth", "max_depth", 1, 2);
    free(npy);
    /* a member's declared size, and one whose size shows only as it inflates */
    static uint8_t zeros[100000];
    npzs_limits_default(&lim);
    lim.max_total_bytes = 4096;
    buf = one_member("data.bin", zeros, 10000, 0, 0, 0, &len);
    limit_case("max_total_bytes.member", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_total_bytes.member",
               "max_total_bytes", 4096, 10000);
    free(buf);
    buf = one_member("data.bin", zeros, sizeof zeros, 1, 0, 0, &len);
    limit_case("max_total_bytes.inflated", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_total_bytes.inflated",
               "max_total_bytes", 4096, 4097);
    free(buf);
    size_t cn;
    const uint8_t *small = fz_npy_small(&cn);
    npzs_limits_default(&lim);
    lim.max_extra_len = 50;
    buf = one_member("a.npy", small, cn, 0, 100, 0, &len);
    limit_case("max_extra_len", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_extra_len", "max_extra_len", 50, 100);
    free(buf);
    buf = one_member("a.npy", small, cn, 0, 100, 1, &len);
    limit_case("max_extra_len.central", buf, len, &lim, NPZS_E_LIMIT, "LIMIT.max_extra_len.central", "max_extra_len",
               50, 100);
    free(buf);
    /* .npy arrays back to back: a sequence's arrays are members too */
    npzs_limits_default(&lim);
    lim.max_members = 2;
    buf = malloc(3 * cn);
    for (int k = 0; k < 3; k++) memcpy(buf + (size_t)k * cn, small, cn);
    seq_mode = 1;
    limit_case("max_members (a sequence)", buf, 3 * cn, &lim, NPZS_E_LIMIT, "LIMIT.max_members", "max_members", 2, 3);
    seq_mode = 0;
    free(buf);
    /* a header of 9000 characters: its buffer does not fit beside the parser in 8 KiB */
    static char text[9200];
    snprintf(text, sizeof text, "{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }%8900s", "");
    npy = npy_of(text, 8, &len);
    npzs_limits_default(&lim);
    lim.max_memory = 8192;
    limit_case("max_memory", npy, len, &lim, NPZS_E_LIMIT, "LIMIT.max_memory", "max_memory", 8192, UINT64_MAX);
    free(npy);
    /* max_header_size: a header's characters (bytes in v1 and v2; in v3 at least a quarter of them) */
    npzs_limits_default(&lim);
    lim.max_header_size = 20;
    npy = npy_of("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 8, &len);
    limit_case("max_header_size", npy, len, &lim, NPZS_E_HEADER_TOO_LARGE, "HDR-SIZE.bytes", "max_header_size", 20,
               len - 8 - 10);
    free(npy);
    npy = npy_v("{'descr': '<f8', 'fortran_order': False, 'shape': (1,), }", 3, 8, &len);
    limit_case("max_header_size (v3 bytes)", npy, len, &lim, NPZS_E_HEADER_TOO_LARGE, "HDR-SIZE.bytes",
               "max_header_size", 20, (len - 8 - 12 + 3) / 4);
    free(npy);
    snprintf(text, sizeof text, "{'descr': [('%s', '<f4')], 'fortran_order': False, 'shape': (1,), }",
             "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9"); /* 10 x U+00E9 */
    npy = npy_v(text, 3, 4, &len);
    lim.max_header_size = 70;
    limit_case("max_header_size (v3 characters)", npy, len, &lim, NPZS_E_HEADER_TOO_LARGE, "HDR-SIZE.characters",
               "max_header_size", 70, len - 4 - 12 - 10); /* the header's bytes, less one for each two-byte character */
    free(npy);
    /* max_ndim: the dimensions of an array, and of a field's shape */
    npzs_limits_default(&lim);
    lim.max_ndim = 2;
    npy = npy_of("{'descr': '<f8', 'fortran_order': False, 'shape': (1, 1, 1, 1), }", 8, &len);
    limit_case("max_ndim", npy, len, &lim, NPZS_E_BAD_SHAPE, "S-NDIM.array", "max_ndim", 2, 3);
    free(npy);
    npy = npy_of("{'descr': [('a', '<f4', (1, 1, 1))], 'fortran_order': False, 'shape': (1,), }", 4, &len);
    limit_case("max_ndim (a field)", npy, len, &lim, NPZS_E_BAD_SHAPE, "S-NDIM.field", "max_ndim", 2, 3);
    free(npy);
    /* another error: no numbers */
    static const uint8_t bad[] = "\x93NUMPY\x09\x00";
    npzs_parser *p = npzs_new(NULL, NULL);
    (void)drive(p, bad, sizeof bad - 1, NULL, 0);
    CHECK(npzs_error(p) != 0 && npzs_error(p) != NPZS_E_LIMIT && npzs_error_limit(p, NULL, NULL, NULL) == 0,
          "bad version: no limit numbers");
    npzs_free(p);
}
