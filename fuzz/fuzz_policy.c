/* fuzz_policy: the policy compiler (src/policy/json.c, src/policy/compile.c) on any bytes.
 * Input: the JSON text.  Oracles:
 *   - npzs_policy_new returns a policy or NULL with a fault whose offset lies in the text, whose
 *     line and column are those of that offset, and whose message is not empty; its path and
 *     message are whole UTF-8 with no character text output escapes (keys are quoted as text);
 *   - every allocation goes through the hooks and is released (a counting allocator; ASan's too);
 *   - a compiled policy is enforced without a fault on a small archive and a small .npy, whole
 *     and in 1-byte pushes with the same result, and the verdict is the one without the policy
 *     unless it is a policy rejection;
 *   - failing the i-th allocation (i from the text's length) ends in NULL with nothing leaked;
 *   - each member's own key, and the key less its last character, take the spec trying every
 *     pattern in turn gives (the patterns' index: fz_lookup_differs; fuzz_glob goes further). */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "internal.h"

typedef struct fa {
    long at, count, live;
} fa;
static void *fa_alloc(void *o, size_t n) {
    fa *a = o;
    if (a->count++ == a->at) return NULL;
    a->live++;
    return malloc(n);
}
static void fa_free(void *o, void *p) {
    fa *a = o;
    if (p) a->live--;
    free(p);
}

static void enforce(const npzs_policy *pol, const uint8_t *f, size_t n) {
    fz_opts o;
    fz_opts_init(&o);
    fz_result bare, whole, split;
    fz_run(f, n, &o, &bare);
    o.policy = pol;
    fz_run(f, n, &o, &whole);
    static const uint8_t one[] = {1};
    o.sched = one;
    o.sched_n = 1;
    fz_run(f, n, &o, &split);
    if (!fz_same(&whole, &split)) fz_die("a policy's run differs between whole and 1-byte pushes");
    if (whole.err != NPZS_E_POLICY &&
        (whole.accepted != bare.accepted || whole.err != bare.err || whole.err_off != bare.err_off))
        fz_die("a policy changed a verdict to %d from %d without a policy rejection", whole.err, bare.err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fa a = {-1, 0, 0};
    npzs_allocator al = {fa_alloc, fa_free, &a};
    npzs_policy_error e;
    npzs_policy *pol = npzs_policy_new((const char *)data, size, &al, &e);
    if (!pol) {
        if (!e.message[0]) fz_die("a fault without a message");
        if (!fz_words_ok(e.message) || !fz_words_ok(e.path)) fz_die("a fault's words: %s: %s", e.path, e.message);
        if (e.line) {
            if (e.offset > size)
                fz_die("a fault at %llu past the text's %zu bytes", (unsigned long long)e.offset, size);
            uint32_t line = 1;
            for (uint64_t i = 0; i < e.offset; i++) line += data[i] == '\n';
            if (line != e.line)
                fz_die("a fault on line %u at offset %llu, which is on line %u", e.line, (unsigned long long)e.offset,
                       line);
        }
    } else {
        size_t n;
        const uint8_t *npy = fz_npy_small(&n);
        fz_member m[2] = {{"a.npy", npy, n, 0, 0, 0, 0, 0}, {"b", (const uint8_t *)"text", 4, 8, 1, 0, 0, 0}};
        fz_buf z = {0};
        for (int i = 0; i < 2; i++) fz_zip_member(&z, &m[i]);
        size_t cd = z.n;
        for (int i = 0; i < 2; i++) fz_zip_cdh(&z, &m[i]);
        fz_zip_eocd(&z, 2, (uint32_t)(z.n - cd), (uint32_t)cd);
        enforce(pol, z.p, z.n);
        enforce(pol, npy, n);
        npzs__pmatch pm = {0};
        pm.seen = calloc(pol->ngroup + 1, 1);
        if (!pm.seen) fz_die("out of memory");
        for (uint32_t i = 0; i < pol->nspecs && i < 256; i++) {
            const npzs__pspec *sp = &pol->specs[i];
            size_t cut = sp->key_len; /* the key less its last character */
            while (cut && (sp->key[--cut] & 0xC0) == 0x80) {}
            for (int k = 0; k < 2; k++) {
                const char *why = fz_lookup_differs(pol, (const uint8_t *)sp->key, k ? cut : sp->key_len, &pm);
                if (why) fz_die("member %u's key%s: %s", i, k ? " less its last character" : "", why);
            }
        }
        free(pm.seen);
        fz_free_buf(&z);
        npzs_policy_free(pol);
    }
    if (a.live) fz_die("%ld allocations leaked", a.live);
    /* one allocation failing */
    fa b = {(long)(size % 7), 0, 0};
    npzs_allocator bl = {fa_alloc, fa_free, &b};
    npzs_policy *q = npzs_policy_new((const char *)data, size, &bl, NULL);
    npzs_policy_free(q);
    if (b.live) fz_die("%ld allocations leaked after a failed allocation", b.live);
    return 0;
}
