/*
 * json.c -- a strict JSON reader (RFC 8259) for policies: the text into a tree of values, all in
 * one arena taken through the policy's allocator.  The text is the user's own, but it is read as
 * carefully as the input: bounded length and depth, every string valid UTF-8, no lone surrogate,
 * no NUL, no duplicate key, nothing after the value; the first fault is reported with its byte
 * offset (compile.c turns it into a line and column).
 *
 * Why not a JSON library: the ones Debian ships set their allocator process-wide (jansson's
 * json_set_alloc_funcs, cJSON_InitHooks) or take none (json-c), and this library takes every byte
 * through the caller's hooks and keeps no global state; a policy is a few KiB of JSON, and the
 * reader below is small, total and fuzzed (fuzz/fuzz_policy.c).
 */
#include <string.h>

#include "policy.h"
#include "../base/base.h"

#ifdef NPZS_INTERNAL_H
#error "the policy compiler is pure: it sees no parser (internal.h)"
#endif

typedef struct jr {
    const uint8_t *s;
    size_t n, i;
    npzs__parena *a;
    uint32_t depth;
    const char *err; /* the first fault, at err_at */
    uint64_t err_at;
} jr;

static int fault(jr *r, uint64_t at, const char *why) {
    if (!r->err) {
        r->err = why;
        r->err_at = at;
    }
    return -1;
}

void *npzs__parena_alloc(npzs__parena *a, size_t n) {
    n = (n + 7) & ~(size_t)7;
    npzs__pblock *b = a->head;
    if (!b || b->size - b->used < n) {
        size_t sz = n > 8192 ? n : 8192;
        if (a->used + sz + sizeof *b > a->cap) return NULL;
        b = a->al.alloc(a->al.opaque, sizeof *b + sz);
        if (!b) return NULL;
        a->used += sizeof *b + sz;
        b->next = a->head;
        b->used = 0;
        b->size = sz;
        a->head = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void npzs__parena_free(npzs__parena *a) {
    while (a->head) {
        npzs__pblock *b = a->head;
        a->head = b->next;
        a->al.free(a->al.opaque, b);
    }
    a->used = 0;
}

static void ws(jr *r) {
    while (r->i < r->n && (r->s[r->i] == ' ' || r->s[r->i] == '\t' || r->s[r->i] == '\n' || r->s[r->i] == '\r')) r->i++;
}

static int hex4(jr *r, size_t at, uint32_t *v) {
    if (r->n - at < 4) return fault(r, r->n, "truncated \\u escape");
    uint32_t x = 0;
    for (size_t k = 0; k < 4; k++) {
        uint8_t c = r->s[at + k];
        uint32_t d = c >= '0' && c <= '9'   ? (uint32_t)(c - '0')
                     : c >= 'a' && c <= 'f' ? (uint32_t)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (uint32_t)(c - 'A' + 10)
                                            : 16u;
        if (d == 16) return fault(r, at + k, "a \\u escape needs four hex digits");
        x = x << 4 | d;
    }
    *v = x;
    return 0;
}

static size_t put_utf8(uint8_t *o, uint32_t c) {
    if (c < 0x80) {
        o[0] = (uint8_t)c;
        return 1;
    }
    if (c < 0x800) {
        o[0] = (uint8_t)(0xC0 | c >> 6);
        o[1] = (uint8_t)(0x80 | (c & 0x3F));
        return 2;
    }
    if (c < 0x10000) {
        o[0] = (uint8_t)(0xE0 | c >> 12);
        o[1] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (c & 0x3F));
        return 3;
    }
    o[0] = (uint8_t)(0xF0 | c >> 18);
    o[1] = (uint8_t)(0x80 | ((c >> 12) & 0x3F));
    o[2] = (uint8_t)(0x80 | ((c >> 6) & 0x3F));
    o[3] = (uint8_t)(0x80 | (c & 0x3F));
    return 4;
}

/* A string at r->i (its opening quote): decoded into the arena, NUL-terminated. */
static int string(jr *r, const char **out, uint32_t *out_len) {
    size_t start = ++r->i, end = start;
    /* the closing quote first: the decoded text is never longer than the written one */
    while (end < r->n && r->s[end] != '"') end += r->s[end] == '\\' ? 2 : 1;
    if (end >= r->n) return fault(r, r->n, "unterminated string");
    if (end - start > UINT32_MAX - 1) return fault(r, start, "string too long");
    uint8_t *o = npzs__parena_alloc(r->a, end - start + 1);
    if (!o) return fault(r, start, "out of memory");
    size_t k = 0;
    while (r->i < end) {
        uint8_t c = r->s[r->i];
        if (c < 0x20) return fault(r, r->i, "control character in a string (write it as an escape)");
        if (c == '\\') {
            uint8_t e = r->s[r->i + 1];
            const char *simple = strchr("\"\\/bfnrt", e);
            if (e && simple) {
                static const char to[] = "\"\\/\b\f\n\r\t";
                o[k++] = (uint8_t)to[simple - "\"\\/bfnrt"];
                r->i += 2;
                continue;
            }
            if (e != 'u') return fault(r, r->i, "unknown escape in a string");
            uint32_t u;
            if (hex4(r, r->i + 2, &u) < 0) return -1;
            size_t at = r->i;
            r->i += 6;
            if (u >= 0xDC00 && u <= 0xDFFF) return fault(r, at, "a lone low surrogate escape");
            if (u >= 0xD800 && u <= 0xDBFF) {
                uint32_t lo;
                if (r->i + 1 >= end || r->s[r->i] != '\\' || r->s[r->i + 1] != 'u')
                    return fault(r, at, "a high surrogate escape without its low half");
                if (hex4(r, r->i + 2, &lo) < 0) return -1;
                if (lo < 0xDC00 || lo > 0xDFFF) return fault(r, r->i, "a high surrogate escape without its low half");
                u = 0x10000 + ((u - 0xD800) << 10) + (lo - 0xDC00);
                r->i += 6;
            }
            if (u == 0) return fault(r, at, "\\u0000 is not allowed in a policy");
            k += put_utf8(o + k, u);
            continue;
        }
        if (c < 0x80) {
            o[k++] = c;
            r->i++;
            continue;
        }
        size_t len = 0; /* a run of non-ASCII bytes: whole characters when it is valid */
        while (r->i + len < end && r->s[r->i + len] >= 0x80) len++;
        if (!npzs__utf8_valid(r->s + r->i, len)) return fault(r, r->i, "a string is not valid UTF-8");
        memcpy(o + k, r->s + r->i, len);
        k += len;
        r->i += len;
    }
    o[k] = 0;
    r->i = end + 1;
    *out = (const char *)o;
    *out_len = (uint32_t)k;
    return 0;
}

static int number(jr *r, npzs__jv *v) {
    size_t i = r->i;
    if (i < r->n && r->s[i] == '-') i++;
    if (i >= r->n || r->s[i] < '0' || r->s[i] > '9') return fault(r, r->i, "not a JSON value");
    if (r->s[i] == '0') i++;
    else
        while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9') i++;
    if (i < r->n && r->s[i] == '.') {
        i++;
        if (i >= r->n || r->s[i] < '0' || r->s[i] > '9') return fault(r, i, "a digit must follow the decimal point");
        while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9') i++;
        v->frac = 1;
    }
    if (i < r->n && (r->s[i] == 'e' || r->s[i] == 'E')) {
        i++;
        if (i < r->n && (r->s[i] == '+' || r->s[i] == '-')) i++;
        if (i >= r->n || r->s[i] < '0' || r->s[i] > '9') return fault(r, i, "a digit must follow the exponent");
        while (i < r->n && r->s[i] >= '0' && r->s[i] <= '9') i++;
        v->frac = 1;
    }
    if (i - r->i > 64) return fault(r, r->i, "number too long");
    v->t = NPZS_J_NUM;
    v->s = (const char *)r->s + r->i;
    v->len = (uint32_t)(i - r->i);
    r->i = i;
    return 0;
}

static int value(jr *r, npzs__jv *v);

static npzs__jv *node(jr *r) {
    npzs__jv *v = npzs__parena_alloc(r->a, sizeof *v);
    if (!v) {
        fault(r, r->i, "out of memory");
        return NULL;
    }
    memset(v, 0, sizeof *v);
    return v;
}

/* ---- names sorted --------------------------------------------------------------------------------
 * A merge sort of (head, item) entries: a comparison reads the names only when their first 8 bytes
 * are the same, so the sort runs over one contiguous array and not over names scattered in the
 * arena.  No hash: nothing an input can steer. */

int npzs__bytes_cmp(const char *x, size_t xn, const char *y, size_t yn) {
    int r = memcmp(x, y, xn < yn ? xn : yn);
    return r ? r : (xn > yn) - (xn < yn);
}

npzs__sortent *npzs__sort_room(npzs__parena *a, size_t n) {
    if (!a->sort || a->sort_cap < 2 * n) {
        size_t cap = 2 * n > 2 * a->sort_cap ? 2 * n : 2 * a->sort_cap; /* doubled: at most twice the largest */
        if (cap < 64) cap = 64;
        if (cap > SIZE_MAX / sizeof *a->sort) return NULL;
        npzs__sortent *e = npzs__parena_alloc(a, cap * sizeof *e);
        if (!e) return NULL;
        a->sort = e;
        a->sort_cap = cap;
    }
    return a->sort;
}

/* Where the name (key, kn) is in ix[0 .. n) sorted by name (1), or would go (0): *at. */
int npzs__find_name(const uint32_t *ix, size_t n, npzs__set_name name, const void *ctx, const char *key, size_t kn,
                    size_t *at, uint64_t *work) {
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        uint32_t len;
        const char *x = name(ctx, ix[mid], &len);
        int r = npzs__bytes_cmp(x, len, key, kn);
        (*work)++;
        if (!r) {
            *at = mid;
            return 1;
        }
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    *at = lo;
    return 0;
}

static int entry_cmp(const npzs__sortent *x, const npzs__sortent *y, npzs__item_name name) {
    if (x->head != y->head) return x->head < y->head ? -1 : 1;
    uint32_t xn, yn;
    const char *xs = name(x->item, &xn), *ys = name(y->item, &yn);
    return npzs__bytes_cmp(xs, xn, ys, yn);
}

void npzs__sort_names(npzs__parena *a, npzs__sortent *e, size_t n, npzs__item_name name) {
    for (size_t i = 0; i < n; i++) {
        uint32_t len;
        const uint8_t *s = (const uint8_t *)name(e[i].item, &len);
        uint64_t h = 0;
        for (uint32_t k = 0; k < 8; k++) h = h << 8 | (k < len ? s[k] : 0u);
        e[i].head = h;
    }
    npzs__sortent *src = e, *dst = e + n;
    for (size_t run = 1; run < n; run *= 2) {
        for (size_t lo = 0; lo < n; lo += 2 * run) {
            size_t mid = n - lo > run ? lo + run : n, hi = n - mid > run ? mid + run : n, i = lo, j = mid, k = lo;
            for (; i < mid && j < hi; a->work++) dst[k++] = entry_cmp(&src[j], &src[i], name) < 0 ? src[j++] : src[i++];
            while (i < mid) dst[k++] = src[i++];
            while (j < hi) dst[k++] = src[j++];
        }
        npzs__sortent *t = src;
        src = dst;
        dst = t;
    }
    if (src != e) memcpy(e, src, n * sizeof *e);
}

/* ---- duplicate keys ------------------------------------------------------------------------------
 * An object's keys are checked once the object is read (or has failed): sorted, equal neighbours
 * compared, O(n log n). */

static const char *key_name(const void *item, uint32_t *len) {
    const npzs__jv *k = item;
    *len = k->key_len;
    return k->key;
}

/* The first member of object v (in the text) whose key an earlier member has: 0 and *dup (NULL
 * when none); -1 out of memory. */
static int first_duplicate(jr *r, const npzs__jv *v, const npzs__jv **dup) {
    *dup = NULL;
    if (v->len < 2) return 0;
    npzs__sortent *e = npzs__sort_room(r->a, v->len);
    if (!e) return -1;
    size_t n = 0;
    for (const npzs__jv *k = v->kid; k; k = k->next) e[n++].item = k;
    npzs__sort_names(r->a, e, n, key_name);
    for (size_t i = 1; i < n; i++) {
        const npzs__jv *x = e[i - 1].item, *y = e[i].item; /* equal keys keep their order: y is later */
        int same = x->key_len == y->key_len && memcmp(x->key, y->key, x->key_len) == 0;
        if (same && (!*dup || y->key_at < (*dup)->key_at)) *dup = y;
    }
    return 0;
}

/* The members of v, up to its closing bracket; a member is in v's list once its key is read. */
static int items(jr *r, npzs__jv *v, int obj) {
    r->i++;
    ws(r);
    npzs__jv **tail = &v->kid;
    uint8_t close = obj ? '}' : ']';
    if (r->i < r->n && r->s[r->i] == close) {
        r->i++;
        return 0;
    }
    for (;;) {
        npzs__jv *k = node(r);
        if (!k) return -1;
        if (obj) {
            ws(r);
            if (r->i >= r->n || r->s[r->i] != '"') return fault(r, r->i, "expected a key (a string)");
            k->key_at = r->i;
            if (string(r, &k->key, &k->key_len) < 0) return -1;
        }
        *tail = k;
        tail = &k->next;
        v->len++;
        if (obj) {
            ws(r);
            if (r->i >= r->n || r->s[r->i] != ':') return fault(r, r->i, "expected ':' after a key");
            r->i++;
        }
        if (value(r, k) < 0) return -1;
        ws(r);
        if (r->i < r->n && r->s[r->i] == ',') {
            r->i++;
            ws(r);
            if (r->i < r->n && r->s[r->i] == close) return fault(r, r->i, "a trailing comma (JSON has none)");
            continue;
        }
        if (r->i < r->n && r->s[r->i] == close) {
            r->i++;
            return 0;
        }
        return fault(r, r->i, obj ? "expected ',' or '}'" : "expected ',' or ']'");
    }
}

/* An array or object at r->i.  A duplicate key is the fault when it comes first in the text: when
 * the object is read whole, or before the fault that stopped it (inside a later member's value),
 * as a reader that compared each key when it came would have reported.  (Out of memory for the
 * sort, a failed object keeps its own fault.) */
static int composite(jr *r, npzs__jv *v, int obj) {
    if (++r->depth > NPZS_JSON_MAX_DEPTH) return fault(r, r->i, "nested too deeply");
    v->t = obj ? NPZS_J_OBJ : NPZS_J_ARR;
    int rc = items(r, v, obj);
    const npzs__jv *dup = NULL;
    if (obj && first_duplicate(r, v, &dup) < 0 && rc == 0) rc = fault(r, v->at, "out of memory");
    if (dup && (rc == 0 || dup->key_at < r->err_at)) {
        r->err = "duplicate key";
        r->err_at = dup->key_at;
        rc = -1;
    }
    r->depth--;
    return rc;
}

static int literal(jr *r, const char *w, uint8_t t, npzs__jv *v) {
    size_t l = strlen(w);
    if (r->n - r->i < l || memcmp(r->s + r->i, w, l) != 0) return fault(r, r->i, "not a JSON value");
    r->i += l;
    v->t = t;
    return 0;
}

static int value(jr *r, npzs__jv *v) {
    ws(r);
    if (r->i >= r->n) return fault(r, r->n, "expected a value");
    v->at = r->i;
    switch (r->s[r->i]) {
    case '{': return composite(r, v, 1);
    case '[': return composite(r, v, 0);
    case '"': v->t = NPZS_J_STR; return string(r, &v->s, &v->len);
    case 't': return literal(r, "true", NPZS_J_TRUE, v);
    case 'f': return literal(r, "false", NPZS_J_FALSE, v);
    case 'n': return literal(r, "null", NPZS_J_NULL, v);
    default: return number(r, v);
    }
}

npzs__jv *npzs__json_read(npzs__parena *a, const uint8_t *s, size_t n, const char **why, uint64_t *at) {
    jr r = {s, n, 0, a, 0, NULL, 0};
    if (n >= 3 && s[0] == 0xEF && s[1] == 0xBB && s[2] == 0xBF) r.i = 3; /* a byte-order mark, as editors write */
    npzs__jv *v = node(&r);
    if (v && value(&r, v) == 0) {
        ws(&r);
        if (r.i == n) return v;
        fault(&r, r.i, "text after the JSON value");
    }
    *why = r.err;
    *at = r.err_at;
    return NULL;
}
