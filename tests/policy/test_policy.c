/*
 * test_policy.c -- policies, hashes and sniffing, in C (make check; make test, plain and under
 * ASan+UBSan):
 *   - the compiler: every fault of a policy's JSON names its line, column and field; every policy
 *     shipped (tests/bad/policies, examples/policies) compiles; allocation failures at every
 *     allocation end in NULL with nothing leaked;
 *   - every vector of tests/vectors/MANIFEST.tsv that names a policy, through fuzz/common.c's
 *     driver: the manifest's verdict, and the same events (data before an error included) whole,
 *     under split schedules with 0- and 1-byte pushes, at every push size for the small ones, with
 *     only MEMBER_END asked for, into destinations, through the parallel helper, with hashing;
 *     without its policy, the same verdict unless the policy's rejection came first;
 *   - the value checks of values.c against a plain reference, for every float and integer type and
 *     byte order, with the failing element at every position around the vector blocks, split at
 *     every offset;
 *   - SHA-256 against known digests, the same stored, deflated and written to a pipe;
 *   - names in the words (details, the compiler's paths and messages): cut at 64 bytes of text on a
 *     character's end, whole UTF-8, the characters text output escapes escaped;
 *   - the sniff of every kind of blob; the API's misuse (CALL.policy, CALL.hash); a policy shared
 *     by parsers on two threads; a parser reset keeps its policy; the event layout of 0.4.0.
 * usage: test_policy [--vectors DIR] [--only SUBSTR] [--list] (tests/c/check.h); last line
 * "policy: N passed, M failed".
 */
#define _DEFAULT_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define NPZS_CHECK_MAIN
#include "../c/check.h"
#include "common.h"
#include "npzstream.h"

#define H64 "3d172884c0f67c5c57842735bbb4f97a6d240220e9646d2b469145af1ad93f17"

static npzs_policy *compile(const char *json, npzs_policy_error *e) {
    return npzs_policy_new(json, strlen(json), NULL, e);
}

/* ---- the compiler ------------------------------------------------------------------------------ */

static void test_compile_faults(void) {
    static const struct {
        const char *json;
        unsigned line, column;
        const char *path, *msg;
    } t[] = {
        {"", 1, 1, "", "expected a value"},
        {"[]", 1, 1, "", "expected a JSON object"},
        {"{\"members\": {}} x", 1, 17, "", "text after the JSON value"},
        {"{\"members\": {\"a\": {}},\n \"members\": {}}", 2, 2, "", "duplicate key"},
        {"{\"membrs\": {}}", 1, 2, "membrs", "unknown field 'membrs'"},
        {"{\"members\": {\"w\": {\"dtype\": [\"flaot32\"]}}}", 1, 30, "members.w.dtype[0]", "unknown dtype name"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<i1\"]}}}", 1, 30, "members.w.dtype[0]", "'|'"},
        {"{\"members\": {\"w\": {\"dtype\": [\"|f4\"]}}}", 1, 30, "members.w.dtype[0]", "byte order"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<M8[fortnight]\"]}}}", 1, 30, "members.w.dtype[0]", "unit"},
        {"{\"members\": {\"w\": {\"dtype\": []}}}", 1, 29, "members.w.dtype", "allows nothing"},
        {"{\"members\": {\"w\": {\"shape\": [\"N\", -1]}}}", 1, 35, "members.w.shape[1]", "non-negative integer"},
        {"{\"members\": {\"w\": {\"shape\": [\"...\", \"...\"]}}}", 1, 37, "members.w.shape[1]", "at most one"},
        {"{\"members\": {\"w\": {\"shape\": [\"2x\"]}}}", 1, 30, "members.w.shape[0]", "a dimension is"},
        {"{\"members\": {\"w\": {\"range\": [9, 0]}}}", 1, 29, "members.w.range", "min is larger"},
        {"{\"members\": {\"w\": {\"sha256\": \"abc\"}}}", 1, 30, "members.w.sha256", "64 hex"},
        {"{\"members\": {\"w\": {\"kind\": \"blob\", \"dtype\": [\"<f4\"]}}}", 1, 28, "members.w", "a blob has no dtype"},
        {"{\"members\": {\"w*\": {\"optional\": true}}}", 1, 20, "members.w*", "never required"},
        {"{\"members\": {\"\": {}}}", 1, 18, "members.", "empty key"},
        {"{\"dims\": {\"N\": [5, 1]}}", 1, 16, "dims.N", "min is larger"},
        {"{\"dims\": {\"2N\": 3}}", 1, 17, "dims.2N", "letters"},
        {"{\"max_total_bytes\": \"12Qi\"}", 1, 21, "max_total_bytes", "suffix"},
        {"{\"max_members\": 0}", 1, 17, "max_members", "from 1"},
        {"{\"allow_blobs\": [\"pdf\"]}", 1, 18, "allow_blobs", "a blob kind"},
        {"{\"allow_blobs\": 1}", 1, 17, "allow_blobs", "true or false"},
        {"{\"format\": \"zip\"}", 1, 12, "format", "\"npy\", \"npz\""},
        {"{\"array\": {\"optional\": true}}", 1, 24, "array.optional", "for members"},
        {"{\"array\": {\"kind\": \"blob\"}}", 1, 20, "array", "a .npy file is an array"},
        {"{\"members\": {\"w\": {\"finite\": 1}}}", 1, 30, "members.w.finite", "true or false"},
        {"{\"members\": {\"w\": {}},}", 1, 23, "", "trailing comma"},
        {"{\"a\": \"\\ud800\"}", 1, 8, "", "surrogate"},
        {"{\"a\": \"\\u0000\"}", 1, 8, "", "\\u0000"},
        {"{\"a\": \"x\ty\"}", 1, 9, "", "control character"},
        {"{\"a\": 01}", 1, 8, "", "expected ',' or '}'"},
        {"{\"a\": 1.}", 1, 9, "", "decimal point"},
        {"{\"a\": tru}", 1, 7, "", "not a JSON value"},
        {"{\"a\": \"\xc3(\"}", 1, 8, "", "UTF-8"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\"]]]}}}", 1, 31, "members.w.dtype[0][0]", "[name, type]"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"x\", \"<i4\"]]]}}}", 1, 46, "members.w.dtype[0][1]",
         "two fields"},
        /* a pin binds one exact array: kind, one dtype.str, integer shape, fortran_order */
        {"{\"members\": {\"w\": {\"sha256\": \"" H64 "\"}}}", 1, 30, "members.w.sha256", "dtype is missing"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<f4\"], \"sha256\": \"" H64 "\"}}}", 1, 48, "members.w.sha256",
         "shape is missing"},
        {"{\"array\": {\"dtype\": [\"<f4\"], \"shape\": [2], \"sha256\": \"" H64 "\"}}", 1, 54, "array.sha256",
         "fortran_order is missing"},
        {"{\"array\": {\"dtype\": [\"float32\"], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}", 1, 22,
         "array.dtype[0]", "a name matches more than one"},
        {"{\"array\": {\"dtype\": [\"<f4\", \">f4\"], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}", 1,
         21, "array.dtype", "one dtype, not 2"},
        {"{\"array\": {\"dtype\": [[[\"a\", \"bfloat16\"]]], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64
         "\"}}", 1, 22, "array.dtype[0]", "a name matches more than one"},
        {"{\"array\": {\"dtype\": [\"<f4\"], \"shape\": [2, \"N\"], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}", 1,
         43, "array.shape[1]", "integers only"},
        {"{\"array\": {\"dtype\": [\"<f4\"], \"shape\": [\"...\"], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}", 1,
         40, "array.shape[0]", "integers only"},
        {"{\"members\": {\"w\": {\"kind\": \"any\", \"sha256\": \"" H64 "\"}}}", 1, 28, "members.w", "kind \"array\" or \"blob\""},
        /* a layout object, a subarray */
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offset\": [0]}]}}", 1, 49, "array.dtype[0]",
         "unknown field 'offset'"},
        {"{\"array\": {\"dtype\": [{\"offsets\": [0]}]}}", 1, 22, "array.dtype[0]", "has fields"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offsets\": [0, 4]}]}}", 1, 60, "array.dtype[0].offsets",
         "one per field"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offsets\": [-4]}]}}", 1, 61, "array.dtype[0].offsets",
         "non-negative integer"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"], [\"b\", \"<i8\"]], \"offsets\": [0, 4], \"itemsize\": 8}]}}", 1,
         94, "array.dtype[0].itemsize", "field 'b' ends at byte 12"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"itemsize\": 3}]}}", 1, 61, "array.dtype[0].itemsize",
         "past the itemsize"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"titles\": [1]}]}}", 1, 60, "array.dtype[0].titles",
         "a title is a string or null"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"], [\"b\", \"<f4\"]], \"titles\": [\"b\", null]}]}}", 1, 74,
         "array.dtype[0].titles", "another name"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"titles\": []}]}}", 1, 59, "array.dtype[0].titles",
         "one per field"},
        {"{\"array\": {\"dtype\": [[[\"\", \"<f4\"]]]}}", 1, 24, "array.dtype[0][0]", "not empty"},
        {"{\"array\": {\"dtype\": [{\"base\": \"<f4\", \"shape\": [2]}]}}", 1, 22, "array.dtype[0]", "a field's type"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\"}]]]}}", 1, 29, "array.dtype[0][0]", "has base and shape"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\", \"shape\": []}]]]}}", 1, 54, "array.dtype[0][0].shape",
         "non-empty list of integers"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\", \"shape\": [2], \"fields\": []}]]]}}", 1, 29, "array.dtype[0][0]",
         "not both"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_policy_error e;
        npzs_policy *p = compile(t[i].json, &e);
        CHECK(!p, "fault %zu compiled", i);
        npzs_policy_free(p);
        CHECK(e.line == t[i].line && e.column == t[i].column && !strcmp(e.path, t[i].path) && strstr(e.message, t[i].msg),
              "fault %zu (%s): got %u:%u '%s': %s", i, t[i].json, e.line, e.column, e.path, e.message);
    }
    /* deep nesting is bounded, a long text refused, NULL with a length refused */
    char deep[300];
    size_t k = 0;
    deep[k++] = '{';
    deep[k++] = '"';
    deep[k++] = 'a';
    deep[k++] = '"';
    deep[k++] = ':';
    for (int d = 0; d < 100; d++) deep[k++] = '[';
    deep[k] = 0;
    npzs_policy_error e;
    CHECK(!compile(deep, &e) && strstr(e.message, "nested too deeply"), "deep nesting: %s", e.message);
    CHECK(!npzs_policy_new(NULL, 3, NULL, &e), "NULL text with a length");
    CHECK(!npzs_policy_new("{}", (1u << 20) + 1, NULL, &e) && strstr(e.message, "1 MiB"), "a text over 1 MiB");
    npzs_policy *p = npzs_policy_new("{}", 2, NULL, NULL);
    CHECK(p != NULL, "the empty policy");
    npzs_policy_free(p);
    npzs_policy_free(NULL);
}

/* every policy the project ships compiles */
static void test_shipped(const char *dir) {
    static const char *const names[] = {
        "tests/bad/policies/mnist.json", "examples/policies/mnist.json", "examples/policies/keras-weights.json",
        "examples/policies/float32-arrays.json", "examples/policies/pinned-model.json"};
    (void)dir;
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        size_t n;
        uint8_t *t = check_slurp(names[i], &n);
        CHECK(t != NULL, "cannot read %s", names[i]);
        if (!t) continue;
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new((const char *)t, n, NULL, &e);
        CHECK(p != NULL, "%s:%u:%u: %s: %s", names[i], e.line, e.column, e.path, e.message);
        npzs_policy_free(p);
        free(t);
    }
}

/* every allocation of npzs_policy_new fails once, in turn */
static void test_alloc_failures(void) {
    size_t n;
    uint8_t *t = check_slurp("tests/bad/policies/mnist.json", &n);
    CHECK(t != NULL, "mnist.json");
    if (!t) return;
    long allocs = -1;
    for (long at = 0; at < 1000; at++) {
        check_alloc a = {0, at, 0, 0};
        npzs_allocator al = {check_malloc, check_free, &a};
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new((const char *)t, n, &al, &e);
        if (p) {
            allocs = a.n;
            npzs_policy_free(p);
            CHECK(a.live == 0, "leak after a full compile");
            break;
        }
        CHECK(a.live == 0 && strstr(e.message, "out of memory"), "allocation %ld failed: %ld live, '%s'", at, a.live,
              e.message);
    }
    CHECK(allocs > 0, "no compile succeeded");
    /* the parser's state for a policy: NOMEM.policy when its allocation fails */
    npzs_policy *pol = npzs_policy_new((const char *)t, n, NULL, NULL);
    npzs_limits lim;
    npzs_limits_default(&lim);
    for (long at = 0; at < 8; at++) {
        check_alloc a = {0, at, 0, 0};
        npzs_allocator al = {check_malloc, check_free, &a};
        npzs_parser *p = npzs_new(&lim, &al);
        if (!p) continue;
        int rc = npzs_policy_use(p, pol);
        if (rc) CHECK(rc == NPZS_E_NOMEM && !strcmp(npzs_error_rule(p), "NOMEM.policy"), "policy_use: %d %s", rc,
                      npzs_error_rule(p));
        npzs_free(p);
        CHECK(a.live == 0, "leak after npzs_policy_use");
    }
    npzs_policy_free(pol);
    free(t);
}

/* ---- the vectors that name a policy ------------------------------------------------------------- */

typedef struct mrow {
    char name[256], verdict[64], rule[128], args[256];
    uint64_t off;
} mrow;

static void vector_runs(const char *dir, const mrow *m, const npzs_policy *pol, int sha) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, m->name);
    size_t n;
    uint8_t *b = check_slurp(path, &n);
    CHECK(b != NULL, "cannot read %s", path);
    if (!b) return;
    fz_opts o;
    fz_opts_init(&o);
    o.policy = pol;
    o.hash = sha;
    fz_result whole;
    fz_run(b, n, &o, &whole);
    int ok = !strcmp(m->verdict, "ok") ? whole.accepted
                                        : !whole.accepted && !strcmp(npzs_error_name(whole.err), m->verdict) &&
                                              whole.err_off == m->off;
    CHECK(ok, "%s: %s@%" PRIu64 ", the manifest says %s@%" PRIu64, m->name,
          whole.accepted ? "ok" : npzs_error_name(whole.err), whole.err_off, m->verdict, m->off);
    /* schedules: a fixed one with 0- and 1-byte pushes, 1-byte pushes, every push size to 64 */
    static const uint8_t sched[] = {1, 0, 7, 2, 0xE0, 3, 1, 1, 64, 5};
    fz_result r;
    o.sched = sched;
    o.sched_n = sizeof sched;
    o.finish_null = 1;
    fz_run(b, n, &o, &r);
    CHECK(fz_same(&whole, &r), "%s: the split schedule gives other events", m->name);
    for (unsigned step = 1; step <= 64 && step <= n; step++) {
        uint8_t s1 = (uint8_t)step;
        o.sched = &s1;
        o.sched_n = 1;
        fz_run(b, n, &o, &r);
        if (!fz_same(&whole, &r)) {
            CHECK(0, "%s: pushes of %u bytes give other events", m->name, step);
            break;
        }
    }
    o.sched = NULL;
    o.sched_n = 0;
    /* the caller's destinations; MEMBER_END alone; the helper with two workers */
    o.into = 1;
    fz_run(b, n, &o, &r);
    CHECK(fz_same(&whole, &r), "%s: into destinations: other events", m->name);
    o.into = 0;
    o.mask = 0;
    o.mask_parser = 0;
    fz_opts om = o;
    om.mask = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    om.mask_parser = 1;
    fz_result wm, rm;
    fz_opts omw = om;
    omw.mask_parser = 0;
    fz_run(b, n, &omw, &wm);
    fz_run(b, n, &om, &rm);
    CHECK(fz_same(&wm, &rm), "%s: with MEMBER_END alone asked for, other events", m->name);
    fz_opts op = o;
    op.par = 1;
    op.par_threads = 2;
    op.par_held = UINT64_C(1) << 30;
    fz_run(b, n, &op, &r);
    CHECK(fz_same(&whole, &r), "%s: through the helper: other events", m->name);
    /* hashing never changes a verdict */
    if (!sha && npzs_sha256_built()) {
        fz_opts oh = o;
        oh.hash = 1;
        fz_run(b, n, &oh, &r);
        CHECK(r.accepted == whole.accepted && r.err == whole.err && r.err_off == whole.err_off,
              "%s: hashing changes the verdict", m->name);
    }
    /* without the policy: the same verdict, unless the policy's rejection came first */
    fz_opts ob = o;
    ob.policy = NULL;
    fz_run(b, n, &ob, &r);
    CHECK(whole.err == NPZS_E_POLICY || (r.accepted == whole.accepted && r.err == whole.err && r.err_off == whole.err_off),
          "%s: without its policy %s, with it %s", m->name, r.accepted ? "ok" : npzs_error_name(r.err),
          whole.accepted ? "ok" : npzs_error_name(whole.err));
    free(b);
}

static void test_vectors(const char *dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *f = fopen(path, "r");
    CHECK(f != NULL, "cannot open %s", path);
    if (!f) return;
    char line[1024];
    int rows = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '#' || !strstr(line, "--policy ")) continue;
        line[strcspn(line, "\n")] = 0;
        char *col[6];
        int nc = 0;
        for (char *s = line; nc < 6 && s; nc++) {
            col[nc] = s;
            s = strchr(s, '\t');
            if (s) *s++ = 0;
        }
        if (nc < 6) { CHECK(0, "a malformed manifest line"); continue; }
        mrow m;
        memset(&m, 0, sizeof m);
        if ((size_t)snprintf(m.name, sizeof m.name, "%s", col[0]) >= sizeof m.name ||
            (size_t)snprintf(m.verdict, sizeof m.verdict, "%s", col[1]) >= sizeof m.verdict) {
            CHECK(0, "a manifest name or verdict too long");
            continue;
        }
        m.off = strcmp(col[2], "-") ? strtoull(col[2], NULL, 10) : 0;
        const char *pp = strstr(col[5], "--policy ") + 9;
        char ppath[512];
        snprintf(ppath, sizeof ppath, "%.*s", (int)strcspn(pp, " "), pp);
        size_t n;
        uint8_t *t = check_slurp(ppath, &n);
        npzs_policy_error e;
        npzs_policy *pol = t ? npzs_policy_new((const char *)t, n, NULL, &e) : NULL;
        free(t);
        CHECK(pol != NULL, "%s: policy %s", m.name, ppath);
        if (pol) vector_runs(dir, &m, pol, strstr(col[5], "--sha256") != NULL);
        npzs_policy_free(pol);
        rows++;
    }
    fclose(f);
    CHECK(rows >= 50, "only %d vectors name a policy", rows);
    printf("policy: %d vectors with a policy, each whole, split, masked, into destinations, through the helper\n", rows);
}

/* ---- the value checks against a reference --------------------------------------------------------- */

typedef struct vtype {
    const char *descr;
    unsigned w;
    char cls; /* 'f' float, 'i', 'u' */
    int big;
} vtype;

static double half_to_double(uint16_t h) {
    int e = (h >> 10) & 0x1F, m = h & 0x3FF;
    double v = e == 0 ? ldexp(m, -24) : e == 31 ? (m ? NAN : INFINITY) : ldexp(m + 1024, e - 25);
    return (h & 0x8000) ? -v : v;
}

/* the element at s as a double (floats) or its integer value */
static double ref_value(const vtype *t, const uint8_t *s, int64_t *iv, uint64_t *uv) {
    uint8_t b[8];
    for (unsigned i = 0; i < t->w; i++) b[i] = t->big ? s[t->w - 1 - i] : s[i];
    uint64_t x = 0;
    for (unsigned i = 0; i < t->w; i++) x |= (uint64_t)b[i] << (8 * i);
    *uv = x;
    unsigned sh = 64u - 8u * t->w;
    *iv = t->w == 8 ? (int64_t)x : (int64_t)(x << sh) >> sh;
    if (t->cls != 'f') return 0;
    if (t->w == 2) return half_to_double((uint16_t)x);
    if (t->w == 4) { float f; uint32_t u = (uint32_t)x; memcpy(&f, &u, 4); return f; }
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static void put_elem(const vtype *t, uint8_t *s, double v, int64_t iv) {
    uint8_t b[8];
    if (t->cls == 'f') {
        if (t->w == 2) { /* exact halfs only: 0.5, 1, 2, inf, nan */
            uint16_t h = isnan(v) ? 0x7E00 : isinf(v) ? (v > 0 ? 0x7C00 : 0xFC00) : v == 0.5 ? 0x3800 : v == 1 ? 0x3C00 : 0x4000;
            b[0] = (uint8_t)h; b[1] = (uint8_t)(h >> 8);
        } else if (t->w == 4) { float f = (float)v; memcpy(b, &f, 4); }
        else memcpy(b, &v, 8);
    } else {
        for (unsigned i = 0; i < t->w; i++) b[i] = (uint8_t)((uint64_t)iv >> (8 * i));
    }
    for (unsigned i = 0; i < t->w; i++) s[t->big ? t->w - 1 - i : i] = b[i];
}

/* The .npy in fb under pol, whole and in pushes of a few sizes: rejected by rule at offset want. */
static size_t value_runs(const npzs_policy *pol, const fz_buf *fb, size_t want, const char *rule, const char *what, size_t at) {
    static const size_t steps[] = {0, 1, 3, 7, 1000, 4093};
    size_t runs = 0;
    for (size_t si = 0; si < sizeof steps / sizeof steps[0]; si++) {
        npzs_parser *p = npzs_new(NULL, NULL);
        npzs_policy_use(p, pol);
        size_t off = 0, step = steps[si] ? steps[si] : fb->n;
        int rc = 0;
        while (rc >= 0 && rc != NPZS_DONE) {
            size_t k = fb->n - off < step ? fb->n - off : step;
            npzs_in in = {fb->p + off, k, 0};
            if (off + k == fb->n) npzs_finish(p);
            npzs_event ev;
            while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            }
            off += in.pos;
            if (rc == NPZS_NEED_INPUT && off == fb->n) break;
        }
        runs++;
        CHECK(rc == NPZS_E_POLICY && npzs_error_offset(p) == want && !strcmp(npzs_error_rule(p), rule),
              "%s %s at %zu, pushes of %zu: %d at %" PRIu64 " %s, want %s at %zu", what, rule, at, step, rc,
              npzs_error_offset(p), npzs_error_rule(p) ? npzs_error_rule(p) : "-", rule, want);
        npzs_free(p);
    }
    return runs;
}

static void test_values(void) {
    static const vtype types[] = {{"<f2", 2, 'f', 0}, {">f2", 2, 'f', 1}, {"<f4", 4, 'f', 0}, {">f4", 4, 'f', 1},
                                  {"<f8", 8, 'f', 0}, {">f8", 8, 'f', 1}, {"|i1", 1, 'i', 0}, {"<i2", 2, 'i', 0},
                                  {">i4", 4, 'i', 1}, {"<i8", 8, 'i', 0}, {"|u1", 1, 'u', 0}, {">u2", 2, 'u', 1},
                                  {"<u4", 4, 'u', 0}, {">u8", 8, 'u', 1}};
    static const size_t positions[] = {0, 1, 15, 1023, 1024, 1025, 2047, 2048, 2999};
    const size_t count = 3000;
    size_t runs = 0;
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
        const vtype *t = &types[ti];
        for (int kind = 0; kind < 3; kind++) { /* 0: NaN (finite), 1: inf (finite), 2: out of range */
            if (t->cls != 'f' && kind < 2) continue;
            char json[256];
            snprintf(json, sizeof json, "{\"array\": {\"dtype\": [\"%s\"], %s}}", t->descr,
                     kind < 2 ? "\"finite\": true" : "\"range\": [0, 1]");
            npzs_policy *pol = compile(json, NULL);
            CHECK(pol != NULL, "%s", json);
            for (size_t pi = 0; pol && pi < sizeof positions / sizeof positions[0]; pi++) {
                size_t at = positions[pi];
                char dict[160];
                snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", t->descr, count);
                uint8_t *data = calloc(count, t->w);
                for (size_t k = 0; k < count; k++) put_elem(t, data + k * t->w, 0.5, 1);
                put_elem(t, data + at * t->w, kind == 0 ? NAN : kind == 1 ? -INFINITY : 2.0, kind == 2 ? 2 : 0);
                /* the reference: the first element that fails */
                size_t want = count;
                for (size_t k = 0; k < count && want == count; k++) {
                    int64_t iv;
                    uint64_t uv;
                    double v = ref_value(t, data + k * t->w, &iv, &uv);
                    int bad = t->cls == 'f' ? (kind < 2 ? !isfinite(v) : !(v >= 0 && v <= 1))
                                            : t->cls == 'i' ? (iv < 0 || iv > 1) : uv > 1;
                    if (bad) want = k;
                }
                fz_buf fb = {0};
                fz_npy(&fb, dict, data, count * t->w);
                size_t hl = fb.n - count * t->w;
                const char *rule = kind == 0 ? "POLICY.nan" : kind == 1 ? "POLICY.inf" : "POLICY.range";
                runs += value_runs(pol, &fb, hl + want * t->w, rule, t->descr, at);
                fz_free_buf(&fb);
                free(data);
            }
            npzs_policy_free(pol);
        }
    }
    printf("policy: %zu value-check runs against the reference\n", runs);
}

/* bfloat16 (a |V2 the name admits, little-endian), NaT (INT64_MIN, either byte order) and bool (any
 * byte but 0 is True): one failing element at every position around the vector blocks, among
 * elements that pass (some of them next to the failing pattern: NaT + 1, the largest bfloat16). */
/* The parser's verdict on fb under pol, pushed whole (the caller frees the parser). */
static npzs_parser *run_whole(const npzs_policy *pol, const fz_buf *fb, int *rc) {
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_policy_use(p, pol);
    npzs_in in = {fb->p, fb->n, 0};
    npzs_finish(p);
    npzs_event ev;
    while ((*rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
    }
    return p;
}

static void kinds_npy(fz_buf *fb, const char *descr, unsigned w, const uint8_t *good, const uint8_t *good2,
                      const uint8_t *bad, size_t count, size_t bad_at) {
    uint8_t *data = malloc(count * w);
    for (size_t k = 0; k < count; k++) memcpy(data + k * w, k == bad_at ? bad : k % 3 ? good : good2, w);
    char dict[160];
    snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", descr, count);
    fz_npy(fb, dict, data, count * w);
    free(data);
}

static void test_values_kinds(void) {
    static const struct {
        const char *descr, *json, *rule;
        unsigned w;
        uint8_t good[8], good2[8], bad[8];
    } t[] = {
        {"|V2", "\"dtype\": [\"bfloat16\"], \"finite\": true", "POLICY.nan", 2, {0x80, 0x3F}, {0x7F, 0x7F}, {0xC1, 0x7F}},
        {"|V2", "\"dtype\": [\"bfloat16\"], \"finite\": true", "POLICY.inf", 2, {0x80, 0x3F}, {0x7F, 0xFF}, {0x80, 0xFF}},
        {"|V2", "\"dtype\": [\"bfloat16\", \"|V2\"], \"range\": [0, 1]", "POLICY.range", 2, {0x00, 0x3F}, {0x80, 0x3F},
         {0x81, 0x3F}},
        {"|V2", "\"dtype\": [\"bfloat16\"], \"range\": [0, 1]", "POLICY.range", 2, {0x00, 0x3F}, {0x00, 0x00}, {0xC0, 0x7F}},
        {"<M8[s]", "\"finite\": true", "POLICY.nan", 8, {5}, {1, 0, 0, 0, 0, 0, 0, 0x80}, {0, 0, 0, 0, 0, 0, 0, 0x80}},
        {">m8[ns]", "\"finite\": true", "POLICY.nan", 8, {0, 0, 0, 0, 0, 0, 0, 5}, {0x80, 0, 0, 0, 0, 0, 0, 1},
         {0x80, 0, 0, 0, 0, 0, 0, 0}},
        {"|b1", "\"range\": [1, 1]", "POLICY.range", 1, {1}, {2}, {0}},
        {"|b1", "\"range\": [null, 0]", "POLICY.range", 1, {0}, {0}, {0xFF}},
    };
    static const size_t positions[] = {0, 1, 15, 1023, 1024, 1025, 2047, 2048, 2999};
    const size_t count = 3000;
    size_t runs = 0;
    for (size_t ti = 0; ti < sizeof t / sizeof t[0]; ti++) {
        char json[256];
        snprintf(json, sizeof json, "{\"array\": {%s}}", t[ti].json);
        npzs_policy *pol = compile(json, NULL);
        CHECK(pol != NULL, "%s", json);
        unsigned w = t[ti].w;
        fz_buf fb = {0};
        for (size_t pi = 0; pol && pi < sizeof positions / sizeof positions[0]; pi++) {
            kinds_npy(&fb, t[ti].descr, w, t[ti].good, t[ti].good2, t[ti].bad, count, positions[pi]);
            runs += value_runs(pol, &fb, fb.n - count * w + positions[pi] * w, t[ti].rule, json, positions[pi]);
            fz_free_buf(&fb);
        }
        /* without the failing element: accepted */
        kinds_npy(&fb, t[ti].descr, w, t[ti].good, t[ti].good2, t[ti].bad, count, count);
        int rc;
        npzs_parser *p = run_whole(pol, &fb, &rc);
        CHECK(rc == NPZS_DONE, "%s on %s: every element passes, got %d %s", json, t[ti].descr, rc,
              npzs_error_detail(p) ? npzs_error_detail(p) : "");
        npzs_free(p);
        fz_free_buf(&fb);
        npzs_policy_free(pol);
    }
    printf("policy: %zu value-check runs of bfloat16, NaT and bool\n", runs);
}

/* ---- the details name fields in whole characters --------------------------------------------------- */

static int utf8_valid(const char *s) {
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        int k = *u < 0x80 ? 0 : (*u & 0xE0) == 0xC0 ? 1 : (*u & 0xF0) == 0xE0 ? 2 : (*u & 0xF8) == 0xF0 ? 3 : -1;
        if (k < 0) return 0;
        u++;
        for (int i = 0; i < k; i++, u++)
            if ((*u & 0xC0) != 0x80) return 0;
    }
    return 1;
}

/* Field names of 2-byte characters longer than a detail has room for: every detail that names
 * them (a layout's difference, a big-endian field, a title) is valid UTF-8 and names them. */
static void test_detail_names(void) {
    char name[200] = "", other[200] = "", name1[100] = "", other1[100] = ""; /* UTF-8; latin-1 (a v1.0 header's) */
    for (int i = 0; i < 45; i++) {
        strcat(name, "\xc3\xa9"); /* U+00E9 */
        strcat(other, "\xc3\xa8");
        strcat(name1, "\xe9");
        strcat(other1, "\xe8");
    }
    static const struct {
        const char *descr_fmt, *policy_fmt, *rule;
    } t[] = {
        {"[('%s', '>f4')]", "{\"array\": {\"byte_order\": \"little\"}}", "POLICY.byte-order"},
        {"[('a', [('%s', '>f4')])]", "{\"array\": {\"byte_order\": \"little\"}}", "POLICY.byte-order"},
        {"[('%s', '<f4')]", "{\"array\": {\"dtype\": [[[\"%s\", \"<f4\"]]]}}", "POLICY.dtype"},
        {"[(('%s', '%s'), '<f4')]", "{\"array\": {\"dtype\": [[[\"%s\", \"<f4\"]]]}}", "POLICY.dtype"},
        {"[('%s', '<f4'), ('', '|V4')]", "{\"array\": {\"dtype\": [[[\"%s\", \"<f4\"]]]}}", "POLICY.dtype"}, /* no name */
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        char descr[600], dict[800], json[600];
        if (i == 3) snprintf(descr, sizeof descr, t[i].descr_fmt, other1, name1);
        else snprintf(descr, sizeof descr, t[i].descr_fmt, name1);
        snprintf(json, sizeof json, t[i].policy_fmt, i == 2 ? other : name);
        snprintf(dict, sizeof dict, "{'descr': %s, 'fortran_order': False, 'shape': (1,), }", descr);
        static const uint8_t zero[8];
        fz_buf fb = {0};
        fz_npy(&fb, dict, zero, i == 4 ? 8 : 4);
        npzs_policy_error e;
        npzs_policy *pol = compile(json, &e);
        CHECK(pol != NULL, "%s: %s", json, e.message);
        int rc;
        npzs_parser *p = run_whole(pol, &fb, &rc);
        const char *d = npzs_error_detail(p);
        CHECK(rc == NPZS_E_POLICY && !strcmp(npzs_error_rule(p), t[i].rule) && npzs_error_offset(p) == 10 && d &&
                  utf8_valid(d) && strlen(d) < 200 && (i == 4 ? strstr(d, "itemsize is 8") : strstr(d, "\xc3\xa9\xc3\xa9\xc3\xa9")),
              "detail %zu: %d %s at %" PRIu64 ": %s", i, rc, npzs_error_rule(p) ? npzs_error_rule(p) : "-", npzs_error_offset(p),
              d ? d : "-");
        npzs_free(p);
        npzs_policy_free(pol);
        fz_free_buf(&fb);
    }
    /* the compiler's words for a field past the itemsize */
    char json[600];
    snprintf(json, sizeof json, "{\"array\": {\"dtype\": [{\"fields\": [[\"%s\", \"<f8\"]], \"itemsize\": 4}]}}", name);
    npzs_policy_error e;
    CHECK(!compile(json, &e) && utf8_valid(e.message) && strstr(e.message, "past the itemsize"), "%s", e.message);
}

/* ---- SHA-256 ---------------------------------------------------------------------------------------- */

static void hex(const uint8_t *d, char *out) {
    for (int i = 0; i < 32; i++) snprintf(out + 2 * i, 3, "%02x", d[i]);
}

/* the members' digests of an input, in order, "hex,hex,..." */
static int digests(const uint8_t *b, size_t n, size_t step, char *out, size_t cap) {
    npzs_parser *p = npzs_new(NULL, NULL);
    if (npzs_hash(p, NPZS_HASH_SHA256) != 0) { npzs_free(p); return -1; }
    size_t off = 0, k = 0;
    out[0] = 0;
    int rc = 0;
    for (;;) {
        size_t c = n - off < step ? n - off : step;
        npzs_in in = {b + off, c, 0};
        if (off + c == n) npzs_finish(p);
        npzs_event ev;
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            if (ev.type == NPZS_EV_MEMBER_END && ev.sha256 && k + 66 < cap) {
                hex(ev.sha256, out + k);
                k += 64;
                out[k++] = ',';
                out[k] = 0;
            }
        }
        off += in.pos;
        if (rc != NPZS_NEED_INPUT || off == n) break;
    }
    npzs_free(p);
    return rc == NPZS_DONE ? 0 : -1;
}

static void test_sha256(void) {
    if (!npzs_sha256_built()) {
        npzs_parser *p = npzs_new(NULL, NULL);
        CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.hash"),
              "npzs_hash without SHA-256");
        npzs_free(p);
        printf("policy: built without SHA-256: npzs_hash refused (checked)\n");
        return;
    }
    /* FIPS 180-2's "abc" and the empty string, as blobs of an archive */
    fz_member m[2] = {{"abc", (const uint8_t *)"abc", 3, 0, 0, 0, 0, 0}, {"empty", (const uint8_t *)"", 0, 8, 1, 0, 0, 0}};
    fz_buf z = {0};
    for (int i = 0; i < 2; i++) fz_zip_member(&z, &m[i]);
    size_t cd = z.n;
    for (int i = 0; i < 2; i++) fz_zip_cdh(&z, &m[i]);
    fz_zip_eocd(&z, 2, (uint32_t)(z.n - cd), (uint32_t)cd);
    char got[300];
    CHECK(digests(z.p, z.n, z.n, got, sizeof got) == 0 &&
              !strcmp(got, "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad,"
                           "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855,"),
          "known digests: %s", got);
    fz_free_buf(&z);
    /* an array of 300 KiB: the same digest stored, deflated, written to a pipe, at any push size */
    size_t dn = 300 * 1024;
    uint8_t *data = malloc(dn);
    for (size_t i = 0; i < dn; i++) data[i] = (uint8_t)(i * 2654435761u >> 13);
    fz_buf a = {0};
    fz_npy(&a, "{'descr': '|u1', 'fortran_order': False, 'shape': (307200,), }", data, dn);
    char ref[300] = "";
    CHECK(digests(a.p, a.n, a.n, ref, sizeof ref) == 0, "the .npy");
    for (int method = 0; method <= 8; method += 8)
        for (int dd = 0; dd <= 1; dd++) {
            fz_member w = {"w.npy", a.p, a.n, method, dd, 0, 0, 0};
            fz_buf zz = {0};
            fz_zip_member(&zz, &w);
            size_t c0 = zz.n;
            fz_zip_cdh(&zz, &w);
            fz_zip_eocd(&zz, 1, (uint32_t)(zz.n - c0), (uint32_t)c0);
            static const size_t steps[] = {1 << 20, 1, 4093, 65536};
            for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
                if (steps[s] == 1 && method) continue; /* slow and covered by the vectors */
                char d2[300];
                CHECK(digests(zz.p, zz.n, steps[s], d2, sizeof d2) == 0 && !strcmp(d2, ref),
                      "method %d, descriptor %d, pushes of %zu: %s, the .npy %s", method, dd, steps[s], d2, ref);
            }
            fz_free_buf(&zz);
        }
    fz_free_buf(&a);
    free(data);
    /* after the first byte, an unknown bit: CALL.hash; 0 turns it off */
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_hash(p, 0) == 0 && npzs_hash(p, 2) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.hash"),
          "an unknown hash bit");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    npzs_in in = {"\x93", 1, 0};
    npzs_event ev;
    npzs_next(p, &in, &ev);
    CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && npzs_error(p) == NPZS_E_BAD_CALL, "npzs_hash after the first byte");
    npzs_free(p);
}

/* ---- sniffing ------------------------------------------------------------------------------------- */

static void test_sniff(void) {
    static const struct { const char *bytes; size_t n; const char *kind; } t[] = {
        {"", 0, "empty"},
        {"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", 14, "pickle"},
        {"\x80\x02]q\x00.", 6, "pickle"},
        {"(lp0\nI1\naI2\na.", 14, "pickle"},
        {"(dp0\nS'a'\np1\nI1\ns.", 19, "pickle"},
        {"cos\nsystem\n(S'id'\ntR.", 21, "pickle"},
        {"]q\x00(K\x01K\x02" "e.", 11, "pickle"},
        {"}.", 2, "pickle"},
        {"PK\x03\x04\x14\x00", 6, "zip"},
        {"\x1f\x8b" "\x08\x00", 4, "gzip"},
        {"hello, world\n", 13, "text"},
        {"caf\xc3\xa9 au lait, more than sixteen bytes", 37, "text"},
        {"0123456789abcd\xc3\xa9", 16, "text"},       /* a character ends the window */
        {"0123456789abcde\xc3\xa9xyz", 19, "text"},   /* a character cut by the window's end */
        {"0123456789abcd\xc3", 15, "binary"},         /* ... but not by the blob's end */
        {"(Introduction)", 14, "text"},
        {"\x00\x01\x02", 3, "binary"},
        {"\x93NUMPZ", 6, "binary"},
        {"\x93NU", 3, "binary"},
        {"text\x07" "bell", 9, "binary"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        fz_member m = {"blob", (const uint8_t *)t[i].bytes, t[i].n, 0, 0, 0, 0, 0};
        fz_buf z = {0};
        fz_zip_member(&z, &m);
        size_t cd = z.n;
        fz_zip_cdh(&z, &m);
        fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
        for (size_t step = 1; step <= z.n; step += step < 40 ? 1 : z.n) {
            npzs_parser *p = npzs_new(NULL, NULL);
            const char *got = NULL;
            size_t off = 0;
            int rc;
            for (;;) {
                size_t c = z.n - off < step ? z.n - off : step;
                npzs_in in = {z.p + off, c, 0};
                if (off + c == z.n) npzs_finish(p);
                npzs_event ev;
                while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT)
                    if (ev.type == NPZS_EV_MEMBER_END) got = npzs_sniff_name(ev.sniff);
                off += in.pos;
                if (rc != NPZS_NEED_INPUT || off == z.n) break;
            }
            CHECK(rc == NPZS_DONE && got && !strcmp(got, t[i].kind), "sniff %zu at pushes of %zu: %s, want %s", i, step,
                  got ? got : "-", t[i].kind);
            npzs_free(p);
        }
        fz_free_buf(&z);
    }
    CHECK(!strcmp(npzs_sniff_name(NPZS_SNIFF_NPY), "npy") && !strcmp(npzs_sniff_name(99), "unknown"), "sniff names");
}

/* ---- the API ---------------------------------------------------------------------------------------- */

typedef struct shared {
    const npzs_policy *pol;
    const uint8_t *b;
    size_t n;
    int bad;
} shared;

static void *share_thread(void *arg) {
    shared *s = arg;
    for (int i = 0; i < 200; i++) {
        npzs_parser *p = npzs_new(NULL, NULL);
        npzs_policy_use(p, s->pol);
        npzs_in in = {s->b, s->n, 0};
        npzs_event ev;
        npzs_finish(p);
        int rc;
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
        }
        if (rc != NPZS_E_POLICY) s->bad++;
        npzs_free(p);
    }
    return NULL;
}

static void test_api(void) {
    npzs_policy *pol = compile("{\"array\": {\"shape\": [3]}}", NULL);
    fz_buf a = {0};
    fz_npy(&a, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", (const uint8_t *)"\1\0\0\0\2\0\0\0", 8);
    /* npzs_policy_use after the first byte: CALL.policy; NULL detaches */
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {a.p, 1, 0};
    npzs_event ev;
    CHECK(npzs_next(p, &in, &ev) == NPZS_EVENT, "first byte");
    CHECK(npzs_policy_use(p, pol) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.policy"), "late policy");
    npzs_free(p);
    CHECK(npzs_policy_use(NULL, pol) == NPZS_E_BAD_CALL, "NULL parser");
    p = npzs_new(NULL, NULL);
    CHECK(npzs_policy_use(p, pol) == 0 && npzs_policy_use(p, NULL) == 0, "detach");
    in = (npzs_in){a.p, a.n, 0};
    npzs_finish(p);
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
    }
    CHECK(rc == NPZS_DONE, "no policy after detaching: %d", rc);
    /* a reset keeps the policy (and its state is new) */
    npzs_reset(p);
    CHECK(npzs_policy_use(p, pol) == 0, "policy after reset");
    for (int round = 0; round < 2; round++) {
        in = (npzs_in){a.p, a.n, 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
        }
        CHECK(rc == NPZS_E_POLICY && !strcmp(npzs_error_rule(p), "POLICY.shape") && npzs_error_detail(p) &&
                  strstr(npzs_error_detail(p), "has 2 in dimension 0"),
              "round %d: %d %s", round, rc, npzs_error_detail(p) ? npzs_error_detail(p) : "-");
        CHECK(npzs_error_hint(p) && strstr(npzs_error_hint(p), "policy"), "the hint");
        npzs_reset(p);
        CHECK(npzs_error_detail(p) == NULL, "a reset forgets the detail");
    }
    npzs_free(p);
    /* one policy, two threads */
    shared s[2] = {{pol, a.p, a.n, 0}, {pol, a.p, a.n, 0}};
    pthread_t th[2];
    for (int i = 0; i < 2; i++) pthread_create(&th[i], NULL, share_thread, &s[i]);
    for (int i = 0; i < 2; i++) pthread_join(th[i], NULL);
    CHECK(s[0].bad == 0 && s[1].bad == 0, "a shared policy on two threads");
    /* the event layout of 0.4.0 (up to sniff) is still filled */
    p = npzs_new(NULL, NULL);
    in = (npzs_in){a.p, a.n, 0};
    npzs_finish(p);
    unsigned char old[sizeof(npzs_event)];
    memset(old, 0xAB, sizeof old);
    size_t old_size = offsetof(npzs_event, sniff);
    int events = 0;
    while ((rc = npzs_next_(p, &in, (npzs_event *)(void *)old, old_size)) == NPZS_EVENT) events++;
    CHECK(rc == NPZS_DONE && events == 5 && old[old_size] == 0xAB, "the 0.4.0 layout: %d, %d events", rc, events);
    CHECK(npzs_next_(p, &in, (npzs_event *)(void *)old, old_size + 1) == NPZS_E_BAD_CALL, "another size");
    npzs_free(p);
    /* the rules and hints */
    size_t nr = npzs_rule_count(), with_hint = 0;
    for (size_t i = 0; i < nr; i++) with_hint += npzs_rule_hint(npzs_rule_id(i)) != NULL;
    CHECK(nr > 200 && npzs_rule_id(nr) == NULL && with_hint == nr, "%zu rules, %zu with a hint", nr, with_hint);
    CHECK(npzs_rule_hint("LIMIT.max_total_bytes.array") && strstr(npzs_rule_hint("LIMIT.max_total_bytes.array"), "--max-total-bytes"),
          "the limit's hint names the flag");
    CHECK(npzs_rule_hint("NOPE") == NULL, "an unknown rule has no hint");
    fz_free_buf(&a);
    npzs_policy_free(pol);
}

/* ---- names in words: whole characters, nothing a terminal would act on ---------------------------- */

/* Strict UTF-8 with none of the characters text output escapes (src/text.h: C0, DEL, C1, the bidi
 * controls, the line separators; a surrogate is not UTF-8): written out here, not taken from there. */
static int words_ok(const char *w) {
    const uint8_t *s = (const uint8_t *)w;
    for (size_t i = 0; s[i];) {
        uint8_t c = s[i];
        if (c < 0x20 || c == 0x7F) return 0;
        if (c < 0x80) { i++; continue; }
        size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k) return 0;
        uint32_t v = c & (0x7Fu >> k);
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0; /* a NUL ends it here too */
            v = v << 6 | (s[i + j] & 0x3Fu);
        }
        if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF)) return 0;
        if (v <= 0x9F || v == 0x61C || v == 0x200E || v == 0x200F || (v >= 0x2028 && v <= 0x202E) || (v >= 0x2066 && v <= 0x2069))
            return 0;
        i += k;
    }
    return 1;
}

/* The error of an archive of stored members (names flagged UTF-8, contents c) under the policy:
 * its rule and its detail ("-" for none) in out. */
static int detail_of(const char *policy, int count, const char *const *names, const fz_buf *c, char *out, size_t cap) {
    fz_buf z = {0};
    size_t off[4];
    uint32_t crc[4];
    for (int m = 0; m < count; m++) {
        off[m] = z.n;
        crc[m] = fz_crc32(c[m].p, c[m].n);
        fz_zip_lfh(&z, names[m], strlen(names[m]), 20, 0x800, 0, crc[m], (uint32_t)c[m].n, (uint32_t)c[m].n, NULL, 0);
        fz_put(&z, c[m].p, c[m].n);
    }
    size_t cd = z.n;
    for (int m = 0; m < count; m++)
        fz_zip_cdh_raw(&z, names[m], strlen(names[m]), 20, 0x800, 0, crc[m], (uint32_t)c[m].n, (uint32_t)c[m].n,
                       (uint32_t)off[m]);
    fz_zip_eocd(&z, (unsigned)count, (uint32_t)(z.n - cd), (uint32_t)cd);
    npzs_policy *pol = compile(policy, NULL);
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_policy_use(p, pol);
    npzs_in in = {z.p, z.n, 0};
    npzs_event ev;
    npzs_finish(p);
    int rc;
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {
    }
    snprintf(out, cap, "%s", npzs_error_detail(p) ? npzs_error_detail(p) : "-");
    npzs_free(p);
    npzs_policy_free(pol);
    fz_free_buf(&z);
    return rc;
}

static void test_words(void) {
    static const struct {
        const char *policy, *name, *detail;
    } t[] = {
        /* 64 bytes of text at most, cut before a character that does not fit whole */
        {"{\"allow_other_members\": false}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9.npy",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not a member the policy lists"},
        {"{\"allow_other_members\": false}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xf0\x9f\x98\x80",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not a member the policy lists"},
        {"{\"allow_other_members\": false}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe4\xb8\xad.npy",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe4\xb8\xad' is not a member the policy lists"},
        /* the bidi controls, a C1 control and a quote as escapes */
        {"{\"allow_other_members\": false}", "x\xe2\x80\xaey\xe2\x81\xa6z\xc2\x9b'q.npy",
         "'x\\u202ey\\u2066z\\u009b\\'q' is not a member the policy lists"},
        {"{\"members\": {\"x\\u202ey\\n\\\\\": {}}}", "a.npy", "'x\\u202ey\\x0a\\\\' is required by the policy and missing"},
        {"{\"members\": {\"*\": {\"shape\": [1]}}}", "\xe2\x81\xa7" "b.npy",
         "'\\u2067b' has 2 in dimension 0; the policy's shape has 1"},
    };
    fz_buf c[2] = {{0}, {0}};
    size_t n;
    const uint8_t *npy = fz_npy_small(&n); /* <i4, shape (2,) */
    fz_put(&c[0], npy, n);
    fz_npy(&c[1], "{'descr': '<i4', 'fortran_order': False, 'shape': (1,), }", npy + n - 8, 4);
    char d[512];
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        int rc = detail_of(t[i].policy, 1, &t[i].name, c, d, sizeof d);
        CHECK(rc == NPZS_E_POLICY && words_ok(d) && !strcmp(d, t[i].detail), "words %zu: %d %s", i, rc, d);
    }
    /* a detail longer than its buffer ends in "..." after a whole character: two names of 63 bytes
     * and a dimension name of 150 characters */
    char pol[600], nm[80];
    snprintf(pol, sizeof pol, "{\"members\": {\"*\": {\"shape\": [\"N%0149d\"]}}}", 0);
    size_t k = 0;
    for (int j = 0; j < 31; j++) { nm[k++] = '\xc3'; nm[k++] = '\xa9'; }
    nm[k++] = 'x';
    nm[k] = 0;
    const char *names[2] = {nm, "\xc3\xa9\xc3\xa9"};
    int rc = detail_of(pol, 2, names, c, d, sizeof d);
    size_t dl = strlen(d);
    CHECK(rc == NPZS_E_POLICY && words_ok(d) && dl >= 190 && dl < 200 && !strcmp(d + dl - 3, "..."),
          "a long detail: %d %zu %s", rc, dl, d);
    fz_free_buf(&c[0]);
    fz_free_buf(&c[1]);
    /* the compiler's path and message: keys as text, cut at 64 bytes of it on a character's end */
    char key[300], json[1200];
    k = 0;
    for (int j = 0; j < 100; j++) { key[k++] = '\xc3'; key[k++] = '\xa9'; }
    key[k] = 0;
    snprintf(json, sizeof json, "{\"members\": {\"%s\": {\"dtype\": 5}}}", key);
    npzs_policy_error e;
    CHECK(!compile(json, &e), "a fault");
    char want[200];
    k = 0;
    k += (size_t)snprintf(want, sizeof want, "members.");
    for (int j = 0; j < 32; j++) k += (size_t)snprintf(want + k, sizeof want - k, "\xc3\xa9");
    snprintf(want + k, sizeof want - k, "....dtype");
    CHECK(words_ok(e.path) && !strcmp(e.path, want), "a long key's path: %s", e.path);
    CHECK(!compile("{\"members\": {\"w\": {\"a\\u202eb\\n'c\": 1}}}", &e) && words_ok(e.message) &&
              !strncmp(e.message, "unknown field 'a\\u202eb\\x0a\\'c' (", 32) && !strcmp(e.path, "members.w.a\\u202eb\\x0a'c"),
          "an unknown field's name: %s / %s", e.path, e.message);
    CHECK(!compile("{\"array\": {\"dtype\": [\"\\u2066<f4\"]}}", &e) && words_ok(e.message) &&
              !strncmp(e.message, "'\\u2066<f4': unknown dtype name", 31),
          "a dtype's text: %s", e.message);
    /* the path goes on after a key that was cut */
    snprintf(json, sizeof json, "{\"members\": {\"%s\": {\"dtype\": [[[\"%s\", [[\"%s\", 3]]]]]}}}", key, key, key);
    snprintf(want + k, sizeof want - k, "....dtype[0][0][0]");
    CHECK(!compile(json, &e) && words_ok(e.path) && !strcmp(e.path, want), "a nested path: %s", e.path);
}

int main(int argc, char **argv) {
    const char *dir = "tests/vectors";
    if (check_args(&argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--vectors") && i + 1 < argc) dir = argv[++i];
        else { fprintf(stderr, "usage: test_policy [--vectors DIR] [--only SUBSTR] [--list]\n"); return 2; }
    }
    if (check_group("compile-faults")) test_compile_faults();
    if (check_group("words")) test_words();
    if (check_group("shipped")) test_shipped(dir);
    if (check_group("alloc-failures")) test_alloc_failures();
    if (check_group("api")) test_api();
    if (check_group("sniff")) test_sniff();
    if (check_group("sha256")) test_sha256();
    if (check_group("values")) test_values();
    if (check_group("values-kinds")) test_values_kinds();
    if (check_group("detail-names")) test_detail_names();
    if (check_group("vectors")) test_vectors(dir);
    return check_done("policy");
}
