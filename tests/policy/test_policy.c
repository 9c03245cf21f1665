/*
 * test_policy.c -- policies, hashes and sniffing, in C (make check; make test, plain and under
 * ASan+UBSan):
 *   - the compiler: every fault of a policy's JSON names its line, column and field (a duplicate
 *     key where its second occurrence is, whatever follows); every policy shipped
 *     (tests/bad/policies, examples/policies) compiles; allocation failures at every allocation
 *     end in NULL with nothing leaked (a policy large enough that each array takes its own);
 *   - scale, by counting work and not by a clock: 20,000 exact keys in any order, a 1 MiB object
 *     of 131,069 keys, 20,000 fields, 12,800 dimension references in O(n log n) comparisons;
 *     20,000 patterns of each shape against 20,000 keys at about one pattern tried a key; the
 *     matcher and the index on patterns and keys chosen against them;
 *   - the patterns' index against trying every pattern in turn, and glob_match against a
 *     reference of CPython's fnmatch (fuzz/common.c), on random patterns and keys (classes,
 *     ranges, '!', unclosed '[', multi-byte characters); exact keys before patterns, then the
 *     policy's order;
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
 * usage: test_policy [--vectors DIR] [--sha256-absent: only the refusals of a library without
 * SHA-256, build/nocrypto's] [--only SUBSTR] [--list] (tests/c/check.h); last line
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
#include "internal.h" /* the compiled policy: its index and counters */
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
        {"{\"members\": {\"w\": {\"kind\": \"blob\", \"dtype\": [\"<f4\"]}}}", 1, 28, "members.w",
         "a blob has no dtype"},
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
        {"{\"array\": {\"dtype\": [\"float32\"], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}",
         1, 22, "array.dtype[0]", "a name matches more than one"},
        {"{\"array\": {\"dtype\": [\"<f4\", \">f4\"], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64
         "\"}}",
         1, 21, "array.dtype", "one dtype, not 2"},
        {"{\"array\": {\"dtype\": [[[\"a\", \"bfloat16\"]]], \"shape\": [2], \"fortran_order\": false, \"sha256\": \"" H64
         "\"}}",
         1, 22, "array.dtype[0]", "a name matches more than one"},
        {"{\"array\": {\"dtype\": [\"<f4\"], \"shape\": [2, \"N\"], \"fortran_order\": false, \"sha256\": \"" H64
         "\"}}",
         1, 43, "array.shape[1]", "integers only"},
        {"{\"array\": {\"dtype\": [\"<f4\"], \"shape\": [\"...\"], \"fortran_order\": false, \"sha256\": \"" H64 "\"}}",
         1, 40, "array.shape[0]", "integers only"},
        {"{\"members\": {\"w\": {\"kind\": \"any\", \"sha256\": \"" H64 "\"}}}", 1, 28, "members.w",
         "kind \"array\" or \"blob\""},
        /* a layout object, a subarray */
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offset\": [0]}]}}", 1, 49, "array.dtype[0]",
         "unknown field 'offset'"},
        {"{\"array\": {\"dtype\": [{\"offsets\": [0]}]}}", 1, 22, "array.dtype[0]", "has fields"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offsets\": [0, 4]}]}}", 1, 60,
         "array.dtype[0].offsets", "one per field"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"offsets\": [-4]}]}}", 1, 61,
         "array.dtype[0].offsets", "non-negative integer"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"], [\"b\", \"<i8\"]], \"offsets\": [0, 4], \"itemsize\": 8}]}}",
         1, 94, "array.dtype[0].itemsize", "field 'b' ends at byte 12"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"itemsize\": 3}]}}", 1, 61,
         "array.dtype[0].itemsize", "past the itemsize"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"titles\": [1]}]}}", 1, 60,
         "array.dtype[0].titles", "a title is a string or null"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"], [\"b\", \"<f4\"]], \"titles\": [\"b\", null]}]}}", 1,
         74, "array.dtype[0].titles", "another name"},
        {"{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"titles\": []}]}}", 1, 59, "array.dtype[0].titles",
         "one per field"},
        {"{\"array\": {\"dtype\": [[[\"\", \"<f4\"]]]}}", 1, 24, "array.dtype[0][0]", "not empty"},
        {"{\"array\": {\"dtype\": [{\"base\": \"<f4\", \"shape\": [2]}]}}", 1, 22, "array.dtype[0]", "a field's type"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\"}]]]}}", 1, 29, "array.dtype[0][0]",
         "has base and shape"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\", \"shape\": []}]]]}}", 1, 54, "array.dtype[0][0].shape",
         "non-empty list of integers"},
        {"{\"array\": {\"dtype\": [[[\"a\", {\"base\": \"<f4\", \"shape\": [2], \"fields\": []}]]]}}", 1, 29,
         "array.dtype[0][0]", "not both"},
        /* a duplicate key where its second occurrence is, as the reader that compared each key with
         * the ones before it said (these answers are that reader's), whatever follows */
        {"{\"a\":1,\"b\":2,\"a\":3}", 1, 14, "", "duplicate key"},
        {"{\"a\":1,\"a\":2,\"a\":3}", 1, 8, "", "duplicate key"},
        {"{\"b\":1,\"a\":2,\"a\":3,\"b\":4}", 1, 14, "", "duplicate key"},
        {"{\"a\":1,\"a\":2,\"b\":[1,]}", 1, 8, "", "duplicate key"},
        {"{\"a\":[1,],\"a\":2}", 1, 9, "", "a trailing comma"},
        {"{\"a\":{\"x\":1,\"x\":2},\"a\":3}", 1, 13, "", "duplicate key"},
        {"{\"a\":1,\"a\":{\"x\":1,\"x\":2}}", 1, 8, "", "duplicate key"},
        {"{\"a\":1,\"a\":tru}", 1, 8, "", "duplicate key"},
        {"{\"a\":1,\"a\" 2}", 1, 8, "", "duplicate key"},
        {"{\"a\":1,\"a", 1, 10, "", "unterminated string"},
        {"{\"a\":1,\"a\":2", 1, 8, "", "duplicate key"},
        {"{\"members\": {\"w\": {}, \"v\": {}, \"w\": {}}}", 1, 32, "", "duplicate key"},
        {"{\"members\": {\"w\": {\"dtype\": [\"<f4\"], \"dtype\": [\"<f8\"]}}}", 1, 38, "", "duplicate key"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"x\", \"<i4\"], [\"y\", \"<f4\"], [\"y\", \"<f4\"]]]}}}",
         1, 46, "members.w.dtype[0][1]", "two fields of one name"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"y\", \"<i4\"], [\"y\", \"<f4\"], [\"x\", \"<f4\"]]]}}}",
         1, 60, "members.w.dtype[0][2]", "two fields of one name"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"y\", \"bad\"], [\"x\", \"<f4\"]]]}}}", 1, 51,
         "members.w.dtype[0][1]", "unknown dtype name"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"x\", \"bad\"]]]}}}", 1, 46, "members.w.dtype[0][1]",
         "two fields of one name"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], 3, [\"x\", \"<f4\"]]]}}}", 1, 45,
         "members.w.dtype[0][1]", "a field is [name, type] or [name, type, shape]"},
        {"{\"members\": {\"w\": {\"dtype\": [[[\"x\", \"<f4\"], [\"x\", \"<f4\"], 3]]}}}", 1, 46,
         "members.w.dtype[0][1]", "two fields of one name"},
        {"{\"\xc3\xa9\":1,\n \"\xc3\xa9\":2}", 2, 2, "", "duplicate key"},
        {"{\"a\":1,\n\n  \"b\":{\"c\":[{\"d\":1,\"e\":2,\"d\":3}]}}", 3, 26, "", "duplicate key"},
        {"[{\"a\":1},{\"a\":2,\"a\":3}]", 1, 17, "", "duplicate key"},
        {"{\"a\":{},\"b\":{},\"a\":{}, \"c\":}", 1, 16, "", "duplicate key"},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_policy_error e;
        npzs_policy *p = compile(t[i].json, &e);
        CHECK(!p, "fault %zu compiled", i);
        npzs_policy_free(p);
        CHECK(e.line == t[i].line && e.column == t[i].column && !strcmp(e.path, t[i].path) &&
                  strstr(e.message, t[i].msg),
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
    static const char *const names[] = {"tests/bad/policies/mnist.json", "examples/policies/mnist.json",
                                        "examples/policies/keras-weights.json", "examples/policies/float32-arrays.json",
                                        "examples/policies/pinned-model.json"};
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

/* Each allocation of compiling text failing in turn: NULL, "out of memory", nothing left. */
static void alloc_fail_each(const char *what, const uint8_t *t, size_t n, long at_least) {
    long allocs = -1;
    for (long at = 0; at < 5000; at++) {
        check_alloc a = {0, at, 0, 0};
        npzs_allocator al = {check_malloc, check_free, &a};
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new((const char *)t, n, &al, &e);
        if (p) {
            allocs = a.n;
            npzs_policy_free(p);
            CHECK(a.live == 0, "%s: leak after a full compile", what);
            break;
        }
        CHECK(a.live == 0 && strstr(e.message, "out of memory"), "%s: allocation %ld failed: %ld live, '%s'", what, at,
              a.live, e.message);
    }
    CHECK(allocs >= at_least, "%s: %ld allocations (at least %ld)", what, allocs, at_least);
}

/* A policy whose every part takes its own allocation (each array past the arena's 8 KiB blocks):
 * 700 exact keys, 700 patterns of each shape, a field list of 700 fields, dimension names. */
static char *big_policy(size_t *len) {
    size_t cap = 1u << 20, l = 0;
    char *s = malloc(cap);
    l += (size_t)snprintf(s + l, cap - l, "{\"members\":{\"w\":{\"shape\":[\"N\",\"M\"],\"dtype\":[[");
    for (int i = 0; i < 700; i++) l += (size_t)snprintf(s + l, cap - l, "%s[\"f%d\",\"<f4\"]", i ? "," : "", i);
    l += (size_t)snprintf(s + l, cap - l, "]]}");
    static const char *const shapes[] = {"p%d.*", "*.s%d", "*.i%d.*", "[ab]%d*", "e%d"};
    for (int i = 0; i < 3500; i++) {
        l += (size_t)snprintf(s + l, cap - l, ",\"x");
        l += (size_t)snprintf(s + l, cap - l, shapes[i % 5], i);
        l += (size_t)snprintf(s + l, cap - l, "\":{\"optional\":%s}", i % 5 == 4 ? "true" : "false");
    }
    l += (size_t)snprintf(s + l, cap - l, ",\"*\":{},\"?\":{}},\"dims\":{\"N\":[1,9],\"M\":[1,9]}}");
    *len = l;
    return s;
}

static void test_alloc_failures(void) {
    size_t n;
    uint8_t *t = check_slurp("tests/bad/policies/mnist.json", &n);
    CHECK(t != NULL, "mnist.json");
    if (!t) return;
    alloc_fail_each("mnist.json", t, n, 1);
    size_t bn;
    char *big = big_policy(&bn);
    alloc_fail_each("a policy of 3,500 members", (const uint8_t *)big, bn, 20);
    npzs_policy_error e;
    npzs_policy *bp = npzs_policy_new(big, bn, NULL, &e);
    CHECK(bp && bp->nglob == 2802 && bp->nexact == 701 && bp->nbare == 2, "the big policy: %s", e.message);
    npzs_policy_free(bp);
    free(big);
    /* a field list longer than every object: its sort takes room of its own */
    char fields[16384];
    size_t fl = (size_t)snprintf(fields, sizeof fields, "{\"members\":{\"w\":{\"dtype\":[[");
    for (int i = 0; i < 700; i++)
        fl += (size_t)snprintf(fields + fl, sizeof fields - fl, "%s[\"f%d\",\"<f4\"]", i ? "," : "", i);
    fl += (size_t)snprintf(fields + fl, sizeof fields - fl, "]]}}}");
    alloc_fail_each("a list of 700 fields", (const uint8_t *)fields, fl, 3);
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
        if (rc)
            CHECK(rc == NPZS_E_NOMEM && !strcmp(npzs_error_rule(p), "NOMEM.policy"), "policy_use: %d %s", rc,
                  npzs_error_rule(p));
        npzs_free(p);
        CHECK(a.live == 0, "leak after npzs_policy_use");
    }
    npzs_policy_free(pol);
    free(t);
}

/* ---- scale: duplicates, sorts and the patterns' index ---------------------------------------------
 * Complexity is checked by counting work, not by a clock: the compiler's comparisons (the arena's
 * work), a lookup's patterns tried and automaton steps, glob_match's steps (npzs__pmatch). */

/* n distinct keys of at most 3 characters: "0", "1", ... then "00" ... (key i) */
static size_t key3(size_t i, char *k) {
    static const char a[] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz_";
    size_t n = 0;
    do {
        k[n++] = a[i % 63];
        i /= 63;
    } while (i);
    k[n] = 0;
    return n;
}

/* A 1 MiB object of 131,069 keys (a duplicate of the first at the end when dup), read alone. */
static void test_big_object(int dup) {
    size_t n = 131069, cap = 1u << 21;
    char *s = malloc(cap), k[8];
    size_t len = 0, last = 0;
    s[len++] = '{';
    for (size_t i = 0; i < n; i++) {
        if (i) s[len++] = ',';
        if (i + 1 == n) last = len;
        key3(dup && i + 1 == n ? 0 : i, k);
        len += (size_t)snprintf(s + len, cap - len, "\"%s\":0", k);
    }
    s[len++] = '}';
    npzs__parena a = {npzs__malloc, NULL, 0, NPZS_POLICY_MAX_MEM, NULL, 0, 0};
    const char *why = NULL;
    uint64_t at = 0;
    npzs__jv *v = npzs__json_read(&a, (const uint8_t *)s, len, &why, &at);
    double nlogn = (double)n * ceil(log2((double)n));
    CHECK(dup ? !v && why && !strcmp(why, "duplicate key") && at == last : v && v->len == n,
          "a 1 MiB object (dup %d): %s at %" PRIu64 " (want %zu)", dup, why ? why : "read", at, last);
    CHECK((double)a.work <= nlogn + (double)n, "a 1 MiB object (dup %d): %" PRIu64 " comparisons for %zu keys", dup,
          a.work, n);
    npzs__parena_free(&a);
    free(s);
}

/* A policy of n members named by name(i), each with the spec text spec; order: 0 as given, 1
 * reversed, 2 shuffled. */
static char *members_policy(size_t n, size_t (*name)(size_t, char *), const char *spec, int order, size_t *len) {
    size_t cap = n * (32 + strlen(spec)) + 64, l = 0;
    char *s = malloc(cap), k[64];
    size_t *ix = malloc(n * sizeof *ix);
    for (size_t i = 0; i < n; i++) ix[i] = order == 1 ? n - 1 - i : i;
    uint32_t r = 12345;
    for (size_t i = n; order == 2 && i > 1; i--) {
        r = r * 1103515245u + 12345u;
        size_t j = (r >> 8) % i, t = ix[i - 1];
        ix[i - 1] = ix[j];
        ix[j] = t;
    }
    l += (size_t)snprintf(s + l, cap - l, "{\"members\":{");
    for (size_t i = 0; i < n; i++) {
        name(ix[i], k);
        l += (size_t)snprintf(s + l, cap - l, "%s\"%s\":%s", i ? "," : "", k, spec);
    }
    l += (size_t)snprintf(s + l, cap - l, "}}");
    free(ix);
    *len = l;
    return s;
}

static double nlog(size_t n) { return (double)n * ceil(log2((double)n + 1)); }

/* The compiler: exact keys in any order, a field list, dimension names, in O(n log n). */
static void test_compile_scale(void) {
    static const char *const orders[] = {"sorted", "reversed", "shuffled"};
    size_t n = 20000, len;
    for (int order = 0; order < 3; order++) {
        char *s = members_policy(n, key3, "{}", order, &len);
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new(s, len, NULL, &e);
        CHECK(p && p->nexact == n, "%zu exact keys, %s: %s", n, orders[order], e.message);
        if (p) {
            /* the reader's duplicate check and the exact keys' sort: n log n each */
            CHECK((double)p->a.work <= 2 * nlog(n), "%zu exact keys, %s: %" PRIu64 " comparisons", n, orders[order],
                  p->a.work);
            int sorted = 1;
            for (uint32_t i = 1; i < p->nexact; i++) {
                const npzs__pspec *x = &p->specs[p->exact[i - 1]], *y = &p->specs[p->exact[i]];
                sorted &= npzs__bytes_cmp(x->key, x->key_len, y->key, y->key_len) < 0;
            }
            CHECK(sorted, "the exact keys are sorted");
            uint32_t idx = 0;
            npzs__pmatch m = {0};
            char k[8];
            size_t kn = key3(n / 3, k);
            const npzs__pspec *sp = npzs__pol_spec_for(p, (const uint8_t *)k, kn, &idx, &m);
            CHECK(sp && sp->key_len == kn && !memcmp(sp->key, k, kn) && m.steps <= 16,
                  "an exact key found in %" PRIu64 " steps", m.steps);
        }
        npzs_policy_free(p);
        free(s);
    }
    /* a field list of n fields, the last one repeating the first */
    for (int dup = 0; dup < 2; dup++) {
        size_t cap = n * 32 + 64, l = 0;
        char *s = malloc(cap), k[8];
        l += (size_t)snprintf(s + l, cap - l, "{\"members\":{\"w\":{\"dtype\":[[");
        for (size_t i = 0; i < n; i++) {
            key3(dup && i + 1 == n ? 0 : i, k);
            l += (size_t)snprintf(s + l, cap - l, "%s[\"%s\",\"<f4\"]", i ? "," : "", k);
        }
        l += (size_t)snprintf(s + l, cap - l, "]]}}}");
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new(s, l, NULL, &e);
        char path[64];
        snprintf(path, sizeof path, "members.w.dtype[0][%zu]", n - 1);
        if (dup)
            CHECK(!p && !strcmp(e.path, path) && strstr(e.message, "two fields of one name"),
                  "%zu fields, the last a repeat: %s: %s", n, e.path, e.message);
        else
            CHECK(p && (double)p->a.work <= nlog(n) + 64, "%zu fields: %" PRIu64 " comparisons (%s)", n,
                  p ? p->a.work : 0, e.message);
        npzs_policy_free(p);
        free(s);
    }
    /* 256 dimension names, 12,800 references to them */
    {
        size_t cap = 1u << 20, l = 0, refs = 0;
        char *s = malloc(cap);
        l += (size_t)snprintf(s + l, cap - l, "{\"members\":{");
        for (size_t i = 0; i < 200; i++) {
            l += (size_t)snprintf(s + l, cap - l, "%s\"m%zu\":{\"shape\":[", i ? "," : "", i);
            for (size_t j = 0; j < 64; j++, refs++)
                l += (size_t)snprintf(s + l, cap - l, "%s\"d%zu\"", j ? "," : "", (i * 64 + j) % 256);
            l += (size_t)snprintf(s + l, cap - l, "]}");
        }
        l += (size_t)snprintf(s + l, cap - l, "}}");
        npzs_policy_error e;
        npzs_policy *p = npzs_policy_new(s, l, NULL, &e);
        CHECK(p && p->ndims == 256, "256 dimensions: %s", e.message);
        /* a reference: a binary search (9 comparisons); the members' sorts */
        if (p)
            CHECK((double)p->a.work <= (double)refs * 9 + 2 * nlog(200) + 64,
                  "%zu references to 256 dimensions: %" PRIu64 " comparisons", refs, p->a.work);
        npzs_policy_free(p);
        free(s);
    }
}

/* ---- the patterns' index ---- */

static uint32_t rnd_state = 2463534242u;
static uint32_t rnd(uint32_t n) {
    rnd_state ^= rnd_state << 13;
    rnd_state ^= rnd_state >> 17;
    rnd_state ^= rnd_state << 5;
    return rnd_state % n;
}

/* s into b as a JSON string */
static void json_str(fz_buf *b, const char *s, size_t n) {
    fz_put8(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') fz_put8(b, '\\');
        fz_put8(b, (uint8_t)s[i]);
    }
    fz_put8(b, '"');
}

/* A policy of the n patterns (and exact keys) p[i], each {} */
static npzs_policy *patterns_policy(char **p, size_t n) {
    fz_buf b = {0};
    fz_put(&b, "{\"members\":{", 12);
    for (size_t i = 0; i < n; i++) {
        if (i) fz_put8(&b, ',');
        json_str(&b, p[i], strlen(p[i]));
        fz_put(&b, ":{}", 3);
    }
    fz_put(&b, "}}", 2);
    npzs_policy_error e;
    npzs_policy *pol = npzs_policy_new((const char *)b.p, b.n, NULL, &e);
    CHECK(pol != NULL, "a policy of %zu patterns: %u:%u %s", n, e.line, e.column, e.message);
    fz_free_buf(&b);
    return pol;
}

/* The index against trying every pattern, and glob_match against CPython's fnmatch, on random
 * patterns and keys: classes, ranges, '!', unclosed '[', multi-byte characters, '*', '?'. */
static void test_pattern_equivalence(void) {
    /* the characters patterns and keys are made of; patterns lean to the pattern syntax, keys
     * have one character no pattern holds */
#define PATTERN_ALPHABET \
    "a", "b", "c", "-", "!", "]", "[", "*", "?", "^", "\\", "\"", "\xc3\xa9", "\xd0\xb6", "\xe2\x82\xac", \
        "\xf0\x9f\x98\x80", "z", "0"
    static const char *const pc[] = {PATTERN_ALPHABET, "a", "b", "*", "[", "]"};
    static const char *const kc[] = {PATTERN_ALPHABET, "y"};
#undef PATTERN_ALPHABET
    size_t np = sizeof pc / sizeof pc[0], nk = sizeof kc / sizeof kc[0];
    long pairs = 0, lookups = 0, differ = 0, fn_differ = 0, matched = 0;
    for (int round = 0; round < 400; round++) {
        size_t n = 1 + rnd(40), have = 0;
        char *pat[40];
        for (size_t i = 0; i < n; i++) {
            char buf[64] = "";
            size_t len = rnd(9), l = 0;
            for (size_t k = 0; k < len; k++)
                l += (size_t)snprintf(buf + l, sizeof buf - l, "%s", pc[rnd((uint32_t)np)]);
            if (!l) continue;
            int dup = 0;
            for (size_t j = 0; j < have; j++) dup |= !strcmp(pat[j], buf);
            if (!dup) pat[have++] = strdup(buf);
        }
        if (!have) continue;
        npzs_policy *pol = patterns_policy(pat, have);
        if (!pol) break;
        npzs__pmatch m = {0};
        m.seen = calloc(pol->ngroup + 1, 1);
        for (int kk = 0; kk < 300; kk++) {
            char key[96] = "";
            size_t l = 0;
            if (kk % 2) { /* a pattern's text, its '*' and '?' replaced: a key it may match */
                const char *p = pat[rnd((uint32_t)have)];
                for (; *p && l < 60; p++) {
                    uint32_t r = *p == '*' ? rnd(4) : *p == '?';
                    if (*p != '*' && *p != '?') key[l++] = *p;
                    for (; r; r--) l += (size_t)snprintf(key + l, sizeof key - l, "%s", kc[rnd((uint32_t)nk)]);
                }
                key[l] = 0;
            } else {
                for (uint32_t len = rnd(8); len; len--)
                    l += (size_t)snprintf(key + l, sizeof key - l, "%s", kc[rnd((uint32_t)nk)]);
            }
            const char *why = fz_lookup_differs(pol, (const uint8_t *)key, l, &m);
            lookups++;
            matched += fz_spec_brute(pol, (const uint8_t *)key, l) >= 0;
            if (why && differ++ < 5) CHECK(0, "key '%s': %s", key, why);
            for (size_t i = 0; i < have && kk < 40; i++, pairs++) {
                uint64_t st = 0;
                int a = fz_fnmatch((const uint8_t *)pat[i], strlen(pat[i]), (const uint8_t *)key, l);
                int b = npzs__glob_match((const uint8_t *)pat[i], strlen(pat[i]), (const uint8_t *)key, l, &st);
                if (a != b && fn_differ++ < 5)
                    CHECK(0, "pattern '%s', key '%s': fnmatch %d, glob_match %d", pat[i], key, a, b);
            }
        }
        free(m.seen);
        npzs_policy_free(pol);
        for (size_t i = 0; i < have; i++) free(pat[i]);
    }
    CHECK(differ == 0 && fn_differ == 0 && lookups > 100000 && pairs > 100000 && matched > lookups / 4,
          "the index on %ld keys (%ld with a match), fnmatch on %ld pairs: %ld and %ld differ", lookups, matched, pairs,
          differ, fn_differ);
    printf("policy: the patterns' index on %ld keys (%ld matched), glob_match against fnmatch on %ld pairs\n", lookups,
           matched, pairs);
}

/* Classes as Python's fnmatch reads them (the answers are CPython 3.10-3.13's fnmatchcase):
 * ranges, '!', ']' first, an unclosed '[', and translate's deletion of empty ranges before it
 * looks for a '!' first. */
static void test_glob_classes(void) {
    static const struct {
        const char *pat, *key;
        int want;
    } t[] = {
        {"[a-c]", "b", 1},
        {"[!a-c]", "b", 0},
        {"[!a-c]", "d", 1},
        {"[]a]", "]", 1},
        {"[!]a]", "]", 0},
        {"[!]", "[!]", 1},
        {"[!]", "a", 0},
        {"[a-]", "-", 1},
        {"[--0]", "/", 1},
        {"[z-a]", "a", 0},
        {"[!z-a]", "q", 1},
        {"[c-a-z]", "-", 1},
        {"[c-a-z]", "b", 0},
        {"[x-z-a]", "a", 1},
        {"[a-[!a-c]", "b", 0},
        {"[a-[!a-c]", "!", 1},
        {"[a-[!a-c]*", "\xc3\xa9t\xc3\xa9", 1},
        {"[b-a!]", "q", 1},
        {"[b-a!]", "!", 1},
        {"[a-0!-z]", "-", 0},
        {"[a-0!-z]", "z", 0},
        {"[a-0!-z]", "y", 1},
        {"[a-0!-z]", "!", 1},
        {"[]-!-x]", "-", 1},
        {"[]-!-x]", "]", 0},
        {"[b-a-]", "-", 1},
        {"a[b", "a[b", 1},
        {"[\xc3\xa0-\xd0\xb6]", "\xc3\xa9", 1},
        {"[!\xc3\xa0-\xd0\xb6]", "\xc3\xa9", 0},
        {"?", "\xf0\x9f\x98\x80", 1},
        {"??", "\xf0\x9f\x98\x80", 0},
    };
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint64_t st = 0;
        const uint8_t *p = (const uint8_t *)t[i].pat, *k = (const uint8_t *)t[i].key;
        int got = npzs__glob_match(p, strlen(t[i].pat), k, strlen(t[i].key), &st);
        int ref = fz_fnmatch(p, strlen(t[i].pat), k, strlen(t[i].key));
        CHECK(got == t[i].want && ref == t[i].want, "'%s' on '%s': glob_match %d, the reference %d, Python %d",
              t[i].pat, t[i].key, got, ref, t[i].want);
    }
}

/* An exact key wins over every pattern; else the first pattern in the policy's order wins,
 * whichever literal each is filed under. */
static void test_pattern_precedence(void) {
    char *p[] = {"*b", "a*", "ab", "?b*", "*a*", "a?", "[a]b"};
    npzs_policy *pol = patterns_policy(p, 7);
    if (!pol) return;
    static const struct {
        const char *key;
        long want;
    } t[] = {{"ab", 2}, {"cb", 0}, {"ac", 1}, {"xbz", 3}, {"xaz", 4}, {"zz", -1}, {"abb", 0}, {"b", 0}};
    npzs__pmatch m = {0};
    m.seen = calloc(pol->ngroup + 1, 1);
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        uint32_t idx = 0;
        const npzs__pspec *s = npzs__pol_spec_for(pol, (const uint8_t *)t[i].key, strlen(t[i].key), &idx, &m);
        CHECK((s ? (long)idx : -1) == t[i].want, "key '%s': spec %ld, want %ld", t[i].key, s ? (long)idx : -1,
              t[i].want);
    }
    free(m.seen);
    npzs_policy_free(pol);
}

/* Each shape of pattern, 20,000 of them against 20,000 keys: a key's lookup tries about one
 * pattern and steps through the automaton once (not 20,000 tries). */
static size_t shape_prefix(size_t i, char *k) { return (size_t)sprintf(k, "layer.%zu.*", i); }
static size_t key_prefix(size_t i, char *k) { return (size_t)sprintf(k, "layer.%zu.weight", i); }
static size_t shape_suffix(size_t i, char *k) { return (size_t)sprintf(k, "*.bias_%zu", i); }
static size_t key_suffix(size_t i, char *k) { return (size_t)sprintf(k, "blk.bias_%zu", i); }
static size_t shape_infix(size_t i, char *k) { return (size_t)sprintf(k, "*.blk%zu.*", i); }
static size_t key_infix(size_t i, char *k) { return (size_t)sprintf(k, "model.blk%zu.w", i); }
static size_t shape_question(size_t i, char *k) { return (size_t)sprintf(k, "?odel.blk%zu.*", i); }
static size_t shape_class(size_t i, char *k) { return (size_t)sprintf(k, "[mn]odel.blk%zu.[wb]", i); }

static void test_pattern_scale(void) {
    static const struct {
        const char *name;
        size_t (*pat)(size_t, char *), (*key)(size_t, char *);
    } t[] = {{"prefix", shape_prefix, key_prefix},
             {"suffix", shape_suffix, key_suffix},
             {"infix", shape_infix, key_infix},
             {"question", shape_question, key_infix},
             {"class", shape_class, key_infix}};
    size_t n = 20000;
    for (size_t s = 0; s < sizeof t / sizeof t[0]; s++) {
        size_t len;
        char *text = members_policy(n, t[s].pat, "{}", 2, &len);
        npzs_policy_error e;
        npzs_policy *pol = npzs_policy_new(text, len, NULL, &e);
        free(text);
        CHECK(pol && pol->nglob == n && pol->nbare == 0, "%s: %zu patterns: %s", t[s].name, n, e.message);
        if (!pol) continue;
        /* the compile: the reader's and the literals' sorts, the patterns read, the automaton a
         * few steps a byte */
        size_t pbytes = 0;
        for (uint32_t i = 0; i < pol->nspecs; i++) pbytes += pol->specs[i].key_len;
        CHECK((double)pol->a.work <= 2 * nlog(n) + 6.0 * (double)pbytes,
              "%s: %" PRIu64 " steps to compile %zu bytes of patterns", t[s].name, pol->a.work, pbytes);
        npzs__pmatch m = {0};
        m.seen = calloc(pol->ngroup, 1);
        size_t bytes = 0, found = 0;
        for (size_t i = 0; i < n; i++) {
            char k[64];
            size_t kn = t[s].key(i, k);
            uint32_t idx = 0;
            const npzs__pspec *sp = npzs__pol_spec_for(pol, (const uint8_t *)k, kn, &idx, &m);
            char want[64];
            t[s].pat(i, want);
            found += sp && !strcmp(sp->key, want);
            bytes += kn;
        }
        CHECK(found == n, "%s: %zu of %zu keys found their pattern", t[s].name, found, n);
        CHECK(m.tried <= 2 * n && m.steps <= 4 * bytes + 32 * n && m.glob <= 4 * bytes + 64 * n,
              "%s: %zu keys tried %" PRIu64 " patterns, %" PRIu64 " automaton steps, %" PRIu64 " matcher steps",
              t[s].name, n, m.tried, m.steps, m.glob);
        free(m.seen);
        npzs_policy_free(pol);
    }
}

/* Patterns and keys chosen against the matcher and the index. */
static void test_pattern_adversarial(void) {
    /* many '[' that nothing closes, tried again at each place of the key: each is known a literal
     * without reading to the pattern's end (that was (key) x (pattern)^2 / 8) */
    size_t n = 3000, m = 0;
    uint8_t *pat = malloc(n + 2), *key = malloc(n);
    pat[m++] = '*';
    memset(pat + m, '[', n / 2);
    m += n / 2;
    pat[m++] = 'x';
    memset(key, '[', n);
    uint64_t steps = 0;
    CHECK(!npzs__glob_match(pat, m, key, n, &steps) && steps <= 2 * (uint64_t)(n + 1) * (m + 1),
          "'*[[[...x' on %zu bytes: %" PRIu64 " steps", n, steps);
    /* closed classes: steps count their bytes */
    m = 0;
    pat[m++] = '*';
    for (size_t i = 0; i < 500; i++) m += (size_t)sprintf((char *)pat + m, "[ab]");
    pat[m++] = 'c';
    memset(key, 'a', n);
    steps = 0;
    CHECK(!npzs__glob_match(pat, m, key, n, &steps) && steps <= 2 * (uint64_t)(n + 1) * (m + 1),
          "'*[ab]...c' on %zu bytes: %" PRIu64 " steps", n, steps);
    /* stars: the greedy matcher, (key) x (pattern) */
    m = 0;
    for (size_t i = 0; i < 100; i++) {
        pat[m++] = '*';
        pat[m++] = 'a';
    }
    pat[m++] = 'b';
    steps = 0;
    CHECK(!npzs__glob_match(pat, m, key, n, &steps) && steps <= (uint64_t)(n + 1) * (m + 1),
          "'*a*a...b' on %zu bytes: %" PRIu64 " steps", n, steps);
    free(pat);
    free(key);
    /* nested literals ("*a*x", "*aa*x", ...) on "aaa...": each node of the suffix chain once a key */
    char *p[200];
    for (size_t k = 0; k < 200; k++) {
        p[k] = malloc(k + 8);
        p[k][0] = '*';
        memset(p[k] + 1, 'a', k + 1);
        memcpy(p[k] + k + 2, "*x", 3);
    }
    npzs_policy *pol = patterns_policy(p, 200);
    if (pol) {
        npzs__pmatch mm = {0};
        mm.seen = calloc(pol->ngroup, 1);
        char *k = malloc(1001);
        memset(k, 'a', 1000);
        uint32_t idx;
        for (int rep = 0; rep < 300; rep++) /* the marks wrap every 255 keys */
            CHECK(!npzs__pol_spec_for(pol, (const uint8_t *)k, 1000 - (size_t)rep, &idx, &mm), "no pattern matches");
        CHECK(mm.tried <= 300 * 200 && mm.steps <= 300 * (4 * 1000 + 200 + 64),
              "nested literals: %" PRIu64 " tried, %" PRIu64 " steps", mm.tried, mm.steps);
        k[999] = 'x';
        CHECK(npzs__pol_spec_for(pol, (const uint8_t *)k, 1000, &idx, &mm) && idx == 0,
              "the first nested literal's pattern");
        free(k);
        free(mm.seen);
        npzs_policy_free(pol);
    }
    for (size_t k = 0; k < 200; k++) free(p[k]);
    /* patterns without a literal: tried on every key (the worst case SECURITY.md states) */
    char *b[300];
    for (size_t k = 0; k < 300; k++) {
        b[k] = malloc(32);
        snprintf(b[k], 32, "[%c]*[%zu]%.*s", 'a' + (int)(k % 26), k % 10, (int)(k / 130), "??");
    }
    pol = patterns_policy(b, 300);
    if (pol) {
        CHECK(pol->nbare == 300 && pol->nnode == 0, "300 patterns without a literal: %u bare", pol->nbare);
        npzs__pmatch mm = {0};
        uint32_t idx;
        CHECK(!npzs__pol_spec_for(pol, (const uint8_t *)"zzz", 3, &idx, &mm) && mm.tried == 300,
              "a key tries each: %" PRIu64, mm.tried);
        npzs_policy_free(pol);
    }
    for (size_t k = 0; k < 300; k++) free(b[k]);
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
    int ok = !strcmp(m->verdict, "ok")
                 ? whole.accepted
                 : !whole.accepted && !strcmp(npzs_error_name(whole.err), m->verdict) && whole.err_off == m->off;
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
    CHECK(whole.err == NPZS_E_POLICY ||
              (r.accepted == whole.accepted && r.err == whole.err && r.err_off == whole.err_off),
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
        if (nc < 6) {
            CHECK(0, "a malformed manifest line");
            continue;
        }
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
    printf("policy: %d vectors with a policy, each whole, split, masked, into destinations, through the helper\n",
           rows);
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
    if (t->w == 4) {
        float f;
        uint32_t u = (uint32_t)x;
        memcpy(&f, &u, 4);
        return f;
    }
    double d;
    memcpy(&d, &x, 8);
    return d;
}

static void put_elem(const vtype *t, uint8_t *s, double v, int64_t iv) {
    uint8_t b[8];
    if (t->cls == 'f') {
        if (t->w == 2) { /* exact halfs only: 0.5, 1, 2, inf, nan */
            uint16_t h = isnan(v)   ? 0x7E00
                         : isinf(v) ? (v > 0 ? 0x7C00 : 0xFC00)
                         : v == 0.5 ? 0x3800
                         : v == 1   ? 0x3C00
                                    : 0x4000;
            b[0] = (uint8_t)h;
            b[1] = (uint8_t)(h >> 8);
        } else if (t->w == 4) {
            float f = (float)v;
            memcpy(b, &f, 4);
        } else memcpy(b, &v, 8);
    } else {
        for (unsigned i = 0; i < t->w; i++) b[i] = (uint8_t)((uint64_t)iv >> (8 * i));
    }
    for (unsigned i = 0; i < t->w; i++) s[t->big ? t->w - 1 - i : i] = b[i];
}

/* The .npy in fb under pol, whole and in pushes of a few sizes: rejected by rule at offset want. */
static size_t value_runs(const npzs_policy *pol, const fz_buf *fb, size_t want, const char *rule, const char *what,
                         size_t at) {
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
            while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
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
                snprintf(dict, sizeof dict, "{'descr': '%s', 'fortran_order': False, 'shape': (%zu,), }", t->descr,
                         count);
                uint8_t *data = calloc(count, t->w);
                for (size_t k = 0; k < count; k++) put_elem(t, data + k * t->w, 0.5, 1);
                put_elem(t, data + at * t->w, kind == 0 ? NAN : kind == 1 ? -INFINITY : 2.0, kind == 2 ? 2 : 0);
                /* the reference: the first element that fails */
                size_t want = count;
                for (size_t k = 0; k < count && want == count; k++) {
                    int64_t iv;
                    uint64_t uv;
                    double v = ref_value(t, data + k * t->w, &iv, &uv);
                    int bad = t->cls == 'f'   ? (kind < 2 ? !isfinite(v) : !(v >= 0 && v <= 1))
                              : t->cls == 'i' ? (iv < 0 || iv > 1)
                                              : uv > 1;
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
    while ((*rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
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
        {"|V2",
         "\"dtype\": [\"bfloat16\"], \"finite\": true",
         "POLICY.nan",
         2,
         {0x80, 0x3F},
         {0x7F, 0x7F},
         {0xC1, 0x7F}},
        {"|V2",
         "\"dtype\": [\"bfloat16\"], \"finite\": true",
         "POLICY.inf",
         2,
         {0x80, 0x3F},
         {0x7F, 0xFF},
         {0x80, 0xFF}},
        {"|V2",
         "\"dtype\": [\"bfloat16\", \"|V2\"], \"range\": [0, 1]",
         "POLICY.range",
         2,
         {0x00, 0x3F},
         {0x80, 0x3F},
         {0x81, 0x3F}},
        {"|V2",
         "\"dtype\": [\"bfloat16\"], \"range\": [0, 1]",
         "POLICY.range",
         2,
         {0x00, 0x3F},
         {0x00, 0x00},
         {0xC0, 0x7F}},
        {"<M8[s]", "\"finite\": true", "POLICY.nan", 8, {5}, {1, 0, 0, 0, 0, 0, 0, 0x80}, {0, 0, 0, 0, 0, 0, 0, 0x80}},
        {">m8[ns]",
         "\"finite\": true",
         "POLICY.nan",
         8,
         {0, 0, 0, 0, 0, 0, 0, 5},
         {0x80, 0, 0, 0, 0, 0, 0, 1},
         {0x80, 0, 0, 0, 0, 0, 0, 0}},
        {"|b1", "\"range\": [1, 1]", "POLICY.range", 1, {1}, {2}, {0}},
        {"|b1", "\"range\": [null, 0]", "POLICY.range", 1, {0}, {0}, {0xFF}},
        /* "-0" is the integer 0, as JSON and Python read it: not a negative bound */
        {"|u1", "\"range\": [null, -0]", "POLICY.range", 1, {0}, {0}, {1}},
        {"<i2", "\"range\": [-0, null]", "POLICY.range", 2, {0, 0}, {1, 0}, {0xFF, 0xFF}},
        {"<i8", "\"range\": [-0, -0]", "POLICY.range", 8, {0}, {0}, {1}},
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
        {"[('%s', '<f4'), ('', '|V4')]", "{\"array\": {\"dtype\": [[[\"%s\", \"<f4\"]]]}}",
         "POLICY.dtype"}, /* no name */
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
                  utf8_valid(d) && strlen(d) < 200 &&
                  (i == 4 ? strstr(d, "itemsize is 8") : strstr(d, "\xc3\xa9\xc3\xa9\xc3\xa9")),
              "detail %zu: %d %s at %" PRIu64 ": %s", i, rc, npzs_error_rule(p) ? npzs_error_rule(p) : "-",
              npzs_error_offset(p), d ? d : "-");
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
    if (npzs_hash(p, NPZS_HASH_SHA256) != 0) {
        npzs_free(p);
        return -1;
    }
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

/* Where SHA-256 cannot be had (a build without OpenSSL's headers, or libcrypto not loadable at
 * run time: src/bytes/sha256.c), hashing is refused, never skipped: npzs_hash fails with CALL.hash at
 * once, a policy that hashes or pins a value does not compile (the field named), and the parse
 * without a hash goes on as before. */
static void test_sha256_absent(void) {
    npzs_parser *p = npzs_new(NULL, NULL);
    CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && !strcmp(npzs_error_rule(p), "CALL.hash") &&
              npzs_error_offset(p) == 0,
          "npzs_hash without SHA-256: %s at %" PRIu64, npzs_error_rule(p), npzs_error_offset(p));
    npzs_free(p);
    static const struct {
        const char *json;
        unsigned column;
        const char *path;
    } t[] =
        {{"{\"hash\": \"sha256\"}", 10, "hash"},
         {"{\"members\": {\"w\": {\"sha256\": \"ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad\"}}}",
          30, "members.w.sha256"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        npzs_policy_error e;
        npzs_policy *pol = compile(t[i].json, &e);
        CHECK(!pol && e.line == 1 && e.column == t[i].column && !strcmp(e.path, t[i].path) &&
                  strstr(e.message, "has no SHA-256"),
              "a policy that hashes, without SHA-256 (%s): %u:%u '%s': %s", t[i].json, e.line, e.column, e.path,
              e.message);
        npzs_policy_free(pol);
    }
    npzs_policy *pol = compile("{\"hash\": null}", NULL);
    CHECK(pol != NULL, "a policy that does not hash compiles without SHA-256");
    p = npzs_new(NULL, NULL);
    CHECK(p && npzs_policy_use(p, pol) == 0, "and is used");
    npzs_free(p);
    npzs_policy_free(pol);
    printf("policy: no SHA-256 here: npzs_hash and hashing policies refused (checked)\n");
}

static void test_sha256(void) {
    if (!npzs_sha256_built()) {
        test_sha256_absent();
        return;
    }
    /* FIPS 180-2's "abc" and the empty string, as blobs of an archive */
    fz_member m[2] = {{"abc", (const uint8_t *)"abc", 3, 0, 0, 0, 0, 0},
                      {"empty", (const uint8_t *)"", 0, 8, 1, 0, 0, 0}};
    fz_buf z = {0};
    for (int i = 0; i < 2; i++) fz_zip_member(&z, &m[i]);
    size_t cd = z.n;
    for (int i = 0; i < 2; i++) fz_zip_cdh(&z, &m[i]);
    fz_zip_eocd(&z, 2, (uint32_t)(z.n - cd), (uint32_t)cd);
    char got[300];
    CHECK(digests(z.p, z.n, z.n, got, sizeof got) == 0 &&
              !strcmp(got,
                      "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad,"
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
    CHECK(npzs_hash(p, NPZS_HASH_SHA256) == NPZS_E_BAD_CALL && npzs_error(p) == NPZS_E_BAD_CALL,
          "npzs_hash after the first byte");
    npzs_free(p);
}

/* ---- sniffing ------------------------------------------------------------------------------------- */

static void test_sniff(void) {
    static const struct {
        const char *bytes;
        size_t n;
        const char *kind;
    } t[] = {
        {"", 0, "empty"},
        {"\x80\x04\x95\x05\x00\x00\x00\x00\x00\x00\x00K\x01.", 14, "pickle"},
        {"\x80\x02]q\x00.", 6, "pickle"},
        {"(lp0\nI1\naI2\na.", 14, "pickle"},
        {"(dp0\nS'a'\np1\nI1\ns.", 19, "pickle"},
        {"cos\nsystem\n(S'id'\ntR.", 21, "pickle"},
        {"]q\x00(K\x01K\x02"
         "e.",
         11, "pickle"},
        {"}.", 2, "pickle"},
        {"PK\x03\x04\x14\x00", 6, "zip"},
        {"\x1f\x8b"
         "\x08\x00",
         4, "gzip"},
        {"hello, world\n", 13, "text"},
        {"caf\xc3\xa9 au lait, more than sixteen bytes", 37, "text"},
        {"0123456789abcd\xc3\xa9", 16, "text"},     /* a character ends the window */
        {"0123456789abcde\xc3\xa9xyz", 19, "text"}, /* a character cut by the window's end */
        {"0123456789abcd\xc3", 15, "binary"},       /* ... but not by the blob's end */
        {"(Introduction)", 14, "text"},
        {"\x00\x01\x02", 3, "binary"},
        {"\x93NUMPZ", 6, "binary"},
        {"\x93NU", 3, "binary"},
        {"text\x07"
         "bell",
         9, "binary"},
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
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
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
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
    CHECK(rc == NPZS_DONE, "no policy after detaching: %d", rc);
    /* a reset keeps the policy (and its state is new) */
    npzs_reset(p);
    CHECK(npzs_policy_use(p, pol) == 0, "policy after reset");
    for (int round = 0; round < 2; round++) {
        in = (npzs_in){a.p, a.n, 0};
        npzs_finish(p);
        while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
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
    CHECK(npzs_rule_hint("LIMIT.max_total_bytes.array") &&
              strstr(npzs_rule_hint("LIMIT.max_total_bytes.array"), "--max-total-bytes"),
          "the limit's hint names the flag");
    CHECK(npzs_rule_hint("NOPE") == NULL, "an unknown rule has no hint");
    fz_free_buf(&a);
    npzs_policy_free(pol);
}

/* ---- names in words: whole characters, nothing a terminal would act on ---------------------------- */

/* Strict UTF-8 with none of the characters text output escapes (src/bytes/text.h: C0, DEL, C1, the bidi
 * controls, the line separators; a surrogate is not UTF-8): written out here, not taken from there. */
static int words_ok(const char *w) {
    const uint8_t *s = (const uint8_t *)w;
    for (size_t i = 0; s[i];) {
        uint8_t c = s[i];
        if (c < 0x20 || c == 0x7F) return 0;
        if (c < 0x80) {
            i++;
            continue;
        }
        size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
        if (!k) return 0;
        uint32_t v = c & (0x7Fu >> k);
        for (size_t j = 1; j < k; j++) {
            if ((s[i + j] & 0xC0) != 0x80) return 0; /* a NUL ends it here too */
            v = v << 6 | (s[i + j] & 0x3Fu);
        }
        if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10FFFF)) || (v >= 0xD800 && v <= 0xDFFF))
            return 0;
        if (v <= 0x9F || v == 0x61C || v == 0x200E || v == 0x200F || (v >= 0x2028 && v <= 0x202E) ||
            (v >= 0x2066 && v <= 0x2069))
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
    while ((rc = npzs_next(p, &in, &ev)) == NPZS_EVENT) {}
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
        {"{\"allow_other_members\": false}",
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xc3\xa9.npy",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not a member the policy lists"},
        {"{\"allow_other_members\": false}",
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xf0\x9f\x98\x80",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa...' is not a member the policy lists"},
        {"{\"allow_other_members\": false}",
         "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe4\xb8\xad.npy",
         "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\xe4\xb8\xad' is not a member the policy lists"},
        /* the bidi controls, a C1 control and a quote as escapes */
        {"{\"allow_other_members\": false}", "x\xe2\x80\xaey\xe2\x81\xa6z\xc2\x9b'q.npy",
         "'x\\u202ey\\u2066z\\u009b\\'q' is not a member the policy lists"},
        {"{\"members\": {\"x\\u202ey\\n\\\\\": {}}}", "a.npy",
         "'x\\u202ey\\x0a\\\\' is required by the policy and missing"},
        {"{\"members\": {\"*\": {\"shape\": [1]}}}",
         "\xe2\x81\xa7"
         "b.npy",
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
    for (int j = 0; j < 31; j++) {
        nm[k++] = '\xc3';
        nm[k++] = '\xa9';
    }
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
    for (int j = 0; j < 100; j++) {
        key[k++] = '\xc3';
        key[k++] = '\xa9';
    }
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
              !strncmp(e.message, "unknown field 'a\\u202eb\\x0a\\'c' (", 32) &&
              !strcmp(e.path, "members.w.a\\u202eb\\x0a'c"),
          "an unknown field's name: %s / %s", e.path, e.message);
    /* the same in a layout object (it was printed as it came: the hidden characters raw) */
    CHECK(!compile("{\"array\": {\"dtype\": [{\"fields\": [[\"a\", \"<f4\"]], \"x\\u202e\\n'\": 0}]}}", &e) &&
              words_ok(e.message) &&
              !strncmp(e.message, "unknown field 'x\\u202e\\x0a\\'' (fields, offsets",
                       strlen("unknown field 'x\\u202e\\x0a\\'' (fields, offsets")),
          "a layout object's unknown field's name: %s", e.message);
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
        if (!strcmp(argv[i], "--vectors") && i + 1 < argc) {
            dir = argv[++i];
        } else if (!strcmp(argv[i], "--sha256-absent")) { /* a library that cannot load libcrypto */
            CHECK(!npzs_sha256_built(), "npzs_sha256_built() says 1 where libcrypto cannot be loaded");
            test_sha256_absent();
            return check_done("policy");
        } else {
            fprintf(stderr, "usage: test_policy [--vectors DIR] [--sha256-absent] [--only SUBSTR] [--list]\n");
            return 2;
        }
    }
    if (check_group("compile-faults")) test_compile_faults();
    if (check_group("words")) test_words();
    if (check_group("shipped")) test_shipped(dir);
    if (check_group("alloc-failures")) test_alloc_failures();
    if (check_group("big-object")) {
        test_big_object(0);
        test_big_object(1);
    }
    if (check_group("compile-scale")) test_compile_scale();
    if (check_group("patterns")) {
        test_glob_classes();
        test_pattern_precedence();
        test_pattern_equivalence();
        test_pattern_scale();
        test_pattern_adversarial();
    }
    if (check_group("api")) test_api();
    if (check_group("sniff")) test_sniff();
    if (check_group("sha256")) test_sha256();
    if (check_group("values")) test_values();
    if (check_group("values-kinds")) test_values_kinds();
    if (check_group("detail-names")) test_detail_names();
    if (check_group("vectors")) test_vectors(dir);
    return check_done("policy");
}
