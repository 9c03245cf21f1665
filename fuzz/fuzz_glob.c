/* fuzz_glob: a policy's patterns (src/policy/keys.c): the index a member's key is looked up in, against
 * trying every pattern in turn; the matcher against CPython's fnmatch.
 * Input: lines.  Those before the first empty line are the policy's members (keys and patterns, in
 * that order), the others member keys.  A line that is not valid UTF-8 or holds a NUL is left out,
 * and so is a member repeating an earlier one (the JSON would be refused).  Oracles:
 *   - the policy, {"members": {line: {}, ...}}, compiles;
 *   - each key takes the spec trying every pattern gives (fz_spec_brute), within the work bounds
 *     of fz_lookup_differs (the automaton a few steps a byte, each pattern tried at most once);
 *     the keys: the given ones, each member's own text, and each member's text with every '*'
 *     and '?' replaced by a piece of the key lines (a key it may match);
 *   - npzs__glob_match agrees with fz_fnmatch (CPython's fnmatch.fnmatchcase, written from its
 *     translate) on every member and key of at most 64 bytes. */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "internal.h"

#define MAX_LINES 96

typedef struct line {
    const uint8_t *s;
    size_t n;
} line;

static int usable(const uint8_t *s, size_t n) { return !memchr(s, 0, n) && npzs__utf8_valid(s, n); }

/* s as a JSON string */
static void put_json(fz_buf *b, const uint8_t *s, size_t n) {
    fz_put8(b, '"');
    for (size_t i = 0; i < n; i++) {
        if (s[i] == '"' || s[i] == '\\') fz_put8(b, '\\');
        if (s[i] < 0x20) {
            char u[8];
            snprintf(u, sizeof u, "\\u%04x", s[i]);
            fz_put(b, u, 6);
        } else {
            fz_put8(b, s[i]);
        }
    }
    fz_put8(b, '"');
}

static void lookup(const npzs_policy *pol, const uint8_t *key, size_t n, npzs__pmatch *m) {
    const char *why = fz_lookup_differs(pol, key, n, m);
    if (why) fz_die("key '%.*s': %s", (int)(n < 200 ? n : 200), (const char *)key, why);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    line mem[MAX_LINES], keys[MAX_LINES];
    size_t nm = 0, nk = 0;
    int in_keys = 0;
    for (size_t i = 0; i <= size;) {
        const uint8_t *e = i < size ? memchr(data + i, '\n', size - i) : NULL;
        size_t n = (e ? (size_t)(e - data) : size) - i;
        const uint8_t *s = data + i;
        i += n + 1;
        if (!in_keys && n == 0) {
            in_keys = 1;
            continue;
        }
        if (!usable(s, n)) continue;
        if (in_keys) {
            if (nk < MAX_LINES) keys[nk++] = (line){s, n};
            continue;
        }
        int dup = 0;
        for (size_t k = 0; k < nm && !dup; k++) dup = mem[k].n == n && memcmp(mem[k].s, s, n) == 0;
        if (!dup && nm < MAX_LINES) mem[nm++] = (line){s, n};
    }
    fz_buf b = {0};
    fz_put(&b, "{\"members\":{", 12);
    for (size_t k = 0; k < nm; k++) {
        if (k) fz_put8(&b, ',');
        put_json(&b, mem[k].s, mem[k].n);
        fz_put(&b, ":{}", 3);
    }
    fz_put(&b, "}}", 2);
    npzs_policy_error err;
    npzs_policy *pol = npzs_policy_new((const char *)b.p, b.n, NULL, &err);
    if (!pol)
        fz_die("the policy of %zu members does not compile: %u:%u %s: %s", nm, err.line, err.column, err.path,
               err.message);
    npzs__pmatch m = {0};
    m.seen = calloc(pol->ngroup + 1, 1);
    if (!m.seen) fz_die("out of memory");
    for (size_t k = 0; k < nk; k++) lookup(pol, keys[k].s, keys[k].n, &m);
    fz_buf key = {0};
    for (size_t k = 0; k < nm; k++) {
        lookup(pol, mem[k].s, mem[k].n, &m);
        /* the member's text, each '*' a key line, each '?' a key line's first character */
        key.n = 0;
        for (size_t i = 0, piece = k; i < mem[k].n; i++) {
            uint8_t c = mem[k].s[i];
            const line *src = nk ? &keys[piece % nk] : NULL;
            if (c != '*' && c != '?') {
                fz_put8(&key, c);
            } else if (!src) {
                if (c == '?') fz_put8(&key, 'a');
            } else {
                size_t l = c == '*' ? src->n : src->n ? 1 : 0;
                while (c == '?' && l < src->n && (src->s[l] & 0xC0) == 0x80) l++;
                fz_put(&key, src->s, l);
                piece++;
            }
        }
        lookup(pol, key.p ? key.p : (const uint8_t *)"", key.n, &m);
    }
    fz_free_buf(&key);
    for (size_t k = 0; k < nm; k++)
        for (size_t j = 0; j < nk + nm; j++) {
            const line *x = j < nk ? &keys[j] : &mem[j - nk];
            if (mem[k].n > 64 || x->n > 64) continue;
            uint64_t steps = 0;
            int want = fz_fnmatch(mem[k].s, mem[k].n, x->s, x->n);
            int got = npzs__glob_match(mem[k].s, mem[k].n, x->s, x->n, &steps);
            if (want != got)
                fz_die("pattern '%.*s', key '%.*s': fnmatch %d, glob_match %d", (int)mem[k].n, (const char *)mem[k].s,
                       (int)x->n, (const char *)x->s, want, got);
        }
    free(m.seen);
    npzs_policy_free(pol);
    fz_free_buf(&b);
    return 0;
}
