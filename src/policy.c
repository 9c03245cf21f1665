/*
 * policy.c -- policies: the JSON a caller writes, compiled into a read-only object (the first part),
 * and its enforcement while an input streams (the second part), at the earliest byte that decides:
 *
 *   the first byte        format; a .npy when the policy requires members
 *   a local header        the member's key (listed, or allow_other_members), max_members
 *   the content's start   a blob where none is allowed; a blob's kind once its first bytes are in
 *   an array's header     dtype, byte order, order, shape and named dimensions, element count,
 *                         bytes (before any data byte is read or a destination named)
 *   each data chunk       NaN, infinity, range (values.c), a blob's bytes
 *   the data's end        a pinned SHA-256
 *   the directory         the required members
 *
 * A violation is recorded like any error (NPZS_E_POLICY, a POLICY.* rule, the offset) with its
 * words in the parser's detail buffer.  The parser never consults the policy for anything else:
 * with no policy attached, every function here returns at once.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "text.h"

/* ---- words: what a policy fault or violation says --------------------------------------------
 * A name or key in words is its text (text.h, npzs_text_name: a hidden character, a byte that is
 * not UTF-8 and a backslash are escapes), at most NPZS_TEXT_NAME bytes of it, then "..." when
 * there is more; a formatted text too long for its buffer is cut at a character's end and ends
 * in "...".  So the words are always whole UTF-8 and safe to print, whatever bytes the names hold. */

/* A field's (or title's) name in words: npzs_text_name between quotes, in a buffer of the caller's. */
static const char *quoted(char b[NPZS_TEXT_NAME_CAP], const char *name, size_t n) {
    npzs_text_name(b, NPZS_TEXT_NAME_CAP, name, n, 1);
    return b;
}

/* vsnprintf into b (cap > 4 bytes) that never cuts inside a UTF-8 sequence: a text too long
 * ends in "..." after the last whole character that fits. */
static void vformat(char *b, size_t cap, const char *fmt, va_list ap) {
    int w = vsnprintf(b, cap, fmt, ap);
    if (w < 0) {
        b[0] = 0;
    } else if ((size_t)w >= cap) {
        size_t k = npzs_text_cut((const uint8_t *)b, cap - 1, cap - 4);
        memcpy(b + k, "...", 4);
    }
}

/* ================================================================================================
 * Compiling
 * ================================================================================================ */

typedef struct pc {
    npzs_policy *pol;
    const uint8_t *text;
    size_t len;
    npzs_policy_error *err;
    char path[160];
    size_t path_len;
    uint32_t dim_order[256];    /* the dimensions, sorted by name */
} pc;

/* A compile fault at byte `at` of the text: its line and column (characters), the field's path,
 * the message. */
static void fault(pc *c, uint64_t at, const char *fmt, va_list ap) {
    if (!c->err) return;
    npzs_policy_error *e = c->err;
    e->offset = at;
    e->line = 1;
    e->column = 1;
    for (uint64_t i = 0; i < at && i < c->len; i++) {
        if (c->text[i] == '\n') {
            e->line++;
            e->column = 1;
        } else if ((c->text[i] & 0xC0) != 0x80) {
            e->column++; /* characters, not bytes */
        }
    }
    snprintf(e->path, sizeof e->path, "%s", c->path); /* the same size: whole */
    vformat(e->message, sizeof e->message, fmt, ap);
}

/* A fault at a value (-1). */
static int bad(pc *c, const npzs_jv *v, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fault(c, v ? v->at : 0, fmt, ap);
    va_end(ap);
    return -1;
}

/* The same at a byte offset (a key: an unknown field is reported where its name is). */
static int bad_at(pc *c, uint64_t at, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fault(c, at, fmt, ap);
    va_end(ap);
    return -1;
}

/* The path: pushed and popped around each field (k: a key; or an index when k is NULL). */
static size_t path_push(pc *c, const char *k, size_t idx) {
    size_t old = c->path_len, w = 0;
    char t[sizeof c->path];
    if (k) {
        if (old) t[w++] = '.';
        w += npzs_text_name(t + w, sizeof t - w, k, strlen(k), 0);
    } else {
        int n = snprintf(t, sizeof t, "[%zu]", idx);
        w = n > 0 ? (size_t)n : 0;
    }
    w = npzs_text_cut((const uint8_t *)t, w, sizeof c->path - 1 - old); /* what fits, whole characters */
    memcpy(c->path + old, t, w);
    c->path_len = old + w;
    c->path[c->path_len] = 0;
    return old;
}
static void path_pop(pc *c, size_t old) {
    c->path_len = old;
    c->path[old] = 0;
}

static void *pal(pc *c, size_t n) {
    void *p = npzs__parena_alloc(&c->pol->a, n ? n : 1);
    if (p) memset(p, 0, n ? n : 1);
    return p;
}

/* ---- names found -----------------------------------------------------------------------------------
 * Sets of names (exact keys, dimension names) are kept as indices sorted by name (npzs__sort_names,
 * json.c), found by binary search: O(log n) comparisons a name. */

/* Name i of the set at ctx. */
typedef const char *(*name_fn)(const void *ctx, uint32_t i, uint32_t *len);

/* Where the name (key, kn) is in ix[0 .. n) sorted by name (1), or would go (0): *at. */
static int find_name(const uint32_t *ix, size_t n, name_fn name, const void *ctx, const char *key, size_t kn,
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

static const char *spec_name(const void *ctx, uint32_t i, uint32_t *len) {
    const npzs_pspec *s = &((const npzs_policy *)ctx)->specs[i];
    *len = s->key_len;
    return s->key;
}

static const char *dim_name_of(const void *ctx, uint32_t i, uint32_t *len) {
    const npzs_pdimdef *d = &((const npzs_policy *)ctx)->dims[i];
    *len = d->name_len;
    return d->name;
}

static const char *spec_key(const void *item, uint32_t *len) {
    const npzs_pspec *s = item;
    *len = s->key_len;
    return s->key;
}

static const char *str_value(const void *item, uint32_t *len) {
    const npzs_jv *v = item;
    *len = v->len;
    return v->s;
}

static const char *type_name(const npzs_jv *v) {
    switch (v->t) {
    case NPZS_J_NULL: return "null";
    case NPZS_J_FALSE: case NPZS_J_TRUE: return "a boolean";
    case NPZS_J_NUM: return "a number";
    case NPZS_J_STR: return "a string";
    case NPZS_J_ARR: return "a list";
    default: return "an object";
    }
}

static int want(pc *c, const npzs_jv *v, int t, const char *what) {
    if (v->t == t || (t == NPZS_J_TRUE && v->t == NPZS_J_FALSE)) return 0;
    return bad(c, v, "expected %s, not %s", what, type_name(v));
}

/* A non-negative integer written as one (no fraction, no exponent, no sign). */
static int uint_of(pc *c, const npzs_jv *v, uint64_t *out) {
    if (v->t != NPZS_J_NUM || v->frac || v->s[0] == '-') return bad(c, v, "expected a non-negative integer");
    uint64_t x = 0;
    for (uint32_t i = 0; i < v->len; i++) {
        unsigned d = (unsigned)(v->s[i] - '0');
        if (x > (UINT64_MAX - d) / 10) return bad(c, v, "integer too large (at most 2**64 - 1)");
        x = x * 10 + d;
    }
    *out = x;
    return 0;
}

/* A size: an integer, or a string of digits with a suffix K M G T P E (powers of 1000) or Ki Mi
 * Gi Ti Pi Ei (powers of 1024), as the command line takes. */
static int size_of(pc *c, const npzs_jv *v, uint64_t *out) {
    if (v->t == NPZS_J_NUM) return uint_of(c, v, out);
    if (v->t != NPZS_J_STR) return bad(c, v, "expected a size: an integer or a string such as \"512Mi\"");
    const char *s = v->s;
    uint64_t x = 0;
    if (*s < '0' || *s > '9') return bad(c, v, "expected a size such as \"512Mi\" (digits, then K M G T or Ki Mi Gi Ti)");
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) return bad(c, v, "size too large");
        x = x * 10 + d;
    }
    if (*s) {
        static const char units[] = "KMGTPE";
        const char *u = strchr(units, *s);
        int iec = s[1] == 'i';
        if (!u || !*u || s[1 + iec]) return bad(c, v, "unknown size suffix (K M G T P E, or Ki Mi Gi Ti Pi Ei)");
        uint64_t base = iec ? 1024 : 1000;
        for (long k = 0; k <= u - units; k++) {
            if (x > UINT64_MAX / base) return bad(c, v, "size too large");
            x *= base;
        }
    }
    *out = x;
    return 0;
}

static int bool_of(pc *c, const npzs_jv *v, uint8_t *out) {
    if (want(c, v, NPZS_J_TRUE, "true or false") < 0) return -1;
    *out = v->t == NPZS_J_TRUE;
    return 0;
}

/* [min, max] of non-negative integers (either may be null: no bound), or one integer (both). */
static int span_of(pc *c, const npzs_jv *v, uint64_t *lo, uint64_t *hi) {
    *lo = 0;
    *hi = UINT64_MAX;
    if (v->t == NPZS_J_NUM) {
        if (uint_of(c, v, lo) < 0) return -1;
        *hi = *lo;
        return 0;
    }
    if (v->t != NPZS_J_ARR || v->len != 2) return bad(c, v, "expected [min, max] (null for no bound) or an integer");
    if (v->kid->t != NPZS_J_NULL && uint_of(c, v->kid, lo) < 0) return -1;
    if (v->kid->next->t != NPZS_J_NULL && uint_of(c, v->kid->next, hi) < 0) return -1;
    if (*lo > *hi) return bad(c, v, "min is larger than max");
    return 0;
}

/* ---- dtypes --------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    char code;
    uint64_t size;
} dt_names[] = {
    {"bool", 'b', 1},        {"int8", 'i', 1},       {"int16", 'i', 2},        {"int32", 'i', 4},
    {"int64", 'i', 8},       {"uint8", 'u', 1},      {"uint16", 'u', 2},       {"uint32", 'u', 4},
    {"uint64", 'u', 8},      {"float16", 'f', 2},    {"float32", 'f', 4},      {"float64", 'f', 8},
    {"float128", 'f', 16},   {"longdouble", 'f', 16}, {"complex64", 'c', 8},   {"complex128", 'c', 16},
    {"complex256", 'c', 32}, {"clongdouble", 'c', 32}, {"str", 'U', 0},        {"bytes", 'S', 0},
    {"void", 'V', 0},        {"bfloat16", 'V', 2},   {"datetime64", 'M', 8},   {"timedelta64", 'm', 8},
};

static const char *const dt_units[] = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us", "ns", "ps", "fs", "as", "generic"};

/* A dtype.str as NumPy spells it: order, code, size and (M8, m8) a unit. */
static int dtype_str_ok(const char *s, const char **why) {
    char o = s[0], k = s[1];
    if (!o || !strchr("<>|", o)) return *why = "a dtype.str starts with '<', '>' or '|' (or use a name: \"float32\")", 0;
    if (!k || !strchr("biufcUSVMm", k)) return *why = "unknown type code (b i u f c U S V M m)", 0;
    const char *d = s + 2;
    if (*d < '0' || *d > '9') return *why = "a dtype.str needs its size (\"<f4\", \"|S10\")", 0;
    uint64_t size = 0;
    for (; *d >= '0' && *d <= '9'; d++) {
        if (size > 1000000000) return *why = "size too large", 0;
        size = size * 10 + (uint64_t)(*d - '0');
    }
    if (s[2] == '0' && s[3] >= '0' && s[3] <= '9') return *why = "leading zero in the size", 0;
    int one = k == 'b' || k == 'S' || k == 'V' || ((k == 'i' || k == 'u') && size == 1);
    if (one && o != '|') return *why = "NumPy writes this type with '|' (no byte order)", 0;
    if (!one && o == '|') return *why = "this type needs a byte order, '<' or '>'", 0;
    if (k == 'M' || k == 'm') {
        if (size != 8) return *why = "datetime64 and timedelta64 have size 8", 0;
        if (*d) {
            const char *u = d + 1;
            if (*d != '[' || !*u) return *why = "a datetime unit is written [unit]", 0;
            const char *e = strchr(u, ']');
            if (!e || e[1]) return *why = "a datetime unit is written [unit]", 0;
            while (*u >= '0' && *u <= '9') u++; /* a multiplier: "[10ms]" */
            int found = 0;
            for (size_t i = 0; i < sizeof dt_units / sizeof dt_units[0]; i++)
                if ((size_t)(e - u) == strlen(dt_units[i]) && memcmp(u, dt_units[i], (size_t)(e - u)) == 0) found = 1;
            if (!found) return *why = "unknown datetime unit", 0;
        }
        return 1;
    }
    if (*d) return *why = "unexpected text after the size", 0;
    return 1;
}

#define DT_MAX_DEPTH 16 /* field lists and subarrays inside one dtype */

static int dtype_of(pc *c, const npzs_jv *v, npzs_pdtype *d, int depth, int field);

/* A subarray's shape: a non-empty list of integers. */
static int sub_shape_of(pc *c, const npzs_jv *v, npzs_pdtype *d) {
    if (v->t != NPZS_J_ARR || v->len == 0 || v->len > NPZS_MAX_NDIM)
        return bad(c, v, "a subarray's shape is a non-empty list of integers (at most 64)");
    d->kind = NPZS_PDT_SUB;
    d->ndim = v->len;
    d->shape = pal(c, v->len * sizeof *d->shape);
    d->base = pal(c, sizeof *d->base);
    if (!d->shape || !d->base) return bad(c, NULL, "out of memory");
    size_t k = 0;
    for (const npzs_jv *x = v->kid; x; x = x->next)
        if (uint_of(c, x, &d->shape[k++]) < 0) return -1;
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* The fewest bytes an element of type d has (a name of any size counts 0), saturated. */
static uint64_t dt_min_size(const npzs_pdtype *d) {
    switch (d->kind) {
    case NPZS_PDT_STR: {
        uint64_t n = strtoull(d->str + 2, NULL, 10); /* at most 10**9 (dtype_str_ok) */
        return d->str[1] == 'U' ? 4 * n : n;
    }
    case NPZS_PDT_CLASS: return d->size;
    case NPZS_PDT_SUB: {
        uint64_t n = dt_min_size(d->base);
        for (uint32_t k = 0; k < d->ndim && n; k++) n = d->shape[k] && n > UINT64_MAX / d->shape[k] ? UINT64_MAX : n * d->shape[k];
        return n;
    }
    default: {
        if (d->has_itemsize) return d->size;
        uint64_t end = 0, run = 0;
        for (uint32_t i = 0; i < d->nfields; i++) {
            run = sat_add(d->has_offsets ? d->fields[i].offset : run, dt_min_size(&d->fields[i].type));
            if (run > end) end = run;
        }
        return end;
    }
    }
}

/* One dtype: exactly one (a dtype.str, and field lists and subarrays of them only), as a pin needs. */
static int dt_exact(const npzs_pdtype *d) {
    switch (d->kind) {
    case NPZS_PDT_STR: return 1;
    case NPZS_PDT_SUB: return dt_exact(d->base);
    case NPZS_PDT_FIELDS:
        for (uint32_t i = 0; i < d->nfields; i++)
            if (!dt_exact(&d->fields[i].type)) return 0;
        return 1;
    default: return 0;
    }
}

static int same_text(const char *a, size_t an, const char *b, size_t bn) { return an == bn && memcmp(a, b, an) == 0; }

/* A field of a list, [name, type] or [name, type, shape]: its name (NULL: it is not one). */
static const npzs_jv *field_name(const npzs_jv *f) {
    return f->t == NPZS_J_ARR && f->len >= 2 && f->len <= 3 && f->kid->t == NPZS_J_STR ? f->kid : NULL;
}

/* The first field of list v whose name an earlier field has (v->len: none), among those before
 * the first that is not a field (the list's fault is there); -1: out of memory.  Sorted, not
 * each field against the ones before: a list may have 100,000 fields. */
static long repeated_field(pc *c, const npzs_jv *v) {
    size_t n = 0;
    for (const npzs_jv *f = v->kid; f && field_name(f); f = f->next) n++;
    if (n < 2) return (long)v->len;
    npzs_sortent *e = npzs__sort_room(&c->pol->a, n);
    if (!e) return -1;
    n = 0;
    for (const npzs_jv *f = v->kid; f && field_name(f); f = f->next) e[n++].item = field_name(f);
    npzs__sort_names(&c->pol->a, e, n, str_value);
    const npzs_jv *first = NULL; /* equal names keep their order: the later is after the earlier */
    for (size_t k = 1; k < n; k++) {
        const npzs_jv *x = e[k - 1].item, *y = e[k].item;
        if (x->len == y->len && memcmp(x->s, y->s, x->len) == 0 && (!first || y->at < first->at)) first = y;
    }
    if (!first) return (long)v->len;
    long i = 0;
    for (const npzs_jv *f = v->kid; f->kid != first; f = f->next) i++;
    return i;
}

/* A structured layout's fields: [[name, type], [name, type, shape], ...] (the plain list: packed,
 * no titles). */
static int fields_of(pc *c, const npzs_jv *v, npzs_pdtype *d, int depth) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "fields is a list: [[name, type], [name, type, shape], ...]");
    if (v->len == 0) return bad(c, v, "an empty field list");
    d->kind = NPZS_PDT_FIELDS;
    d->nfields = v->len;
    d->fields = pal(c, v->len * sizeof *d->fields);
    long repeat = d->fields ? repeated_field(c, v) : -1;
    if (repeat < 0) return bad(c, NULL, "out of memory");
    size_t i = 0;
    for (const npzs_jv *f = v->kid; f; f = f->next, i++) {
        size_t o = path_push(c, NULL, i);
        npzs_pfield *pf = &d->fields[i];
        if (!field_name(f)) return bad(c, f, "a field is [name, type] or [name, type, shape]");
        if (f->kid->len == 0)
            return bad(c, f->kid, "a field's name is not empty (padding is the room the offsets and itemsize leave)");
        pf->name = f->kid->s;
        pf->name_len = f->kid->len;
        if ((long)i == repeat) return bad(c, f->kid, "two fields of one name");
        npzs_pdtype t;
        memset(&t, 0, sizeof t);
        if (dtype_of(c, f->kid->next, &t, depth + 1, 1) < 0) return -1;
        const npzs_jv *sh = f->kid->next->next;
        if (sh) { /* [name, type, shape]: a subarray of type */
            if (sub_shape_of(c, sh, &pf->type) < 0) return -1;
            *pf->type.base = t;
        } else {
            pf->type = t;
        }
        path_pop(c, o);
    }
    return 0;
}

/* The object form's offsets, itemsize and titles of the fields in d (each NULL: the plain list's). */
static int layout_of(pc *c, const npzs_jv *offsets, const npzs_jv *itemsize, const npzs_jv *titles, npzs_pdtype *d) {
    size_t i;
    uint32_t n = d->nfields;
    if (offsets) {
        size_t o = path_push(c, "offsets", 0);
        if (offsets->t != NPZS_J_ARR || offsets->len != n)
            return bad(c, offsets, "offsets is a list of integers, one per field");
        i = 0;
        for (const npzs_jv *x = offsets->kid; x; x = x->next, i++)
            if (uint_of(c, x, &d->fields[i].offset) < 0) return -1;
        d->has_offsets = 1;
        path_pop(c, o);
    }
    if (titles) {
        size_t o = path_push(c, "titles", 0);
        if (titles->t != NPZS_J_ARR || titles->len != n)
            return bad(c, titles, "titles is a list of strings or null, one per field");
        i = 0;
        for (const npzs_jv *x = titles->kid; x; x = x->next, i++) {
            if (x->t == NPZS_J_NULL) continue;
            if (x->t != NPZS_J_STR) return bad(c, x, "a title is a string or null");
            for (size_t j = 0; j < n; j++)
                if (same_text(d->fields[j].name, d->fields[j].name_len, x->s, x->len) ||
                    (j < i && d->fields[j].title && same_text(d->fields[j].title, d->fields[j].title_len, x->s, x->len)))
                    return bad(c, x, "a title is another name than every field's name and title (NumPy's rule)");
            d->fields[i].title = x->s;
            d->fields[i].title_len = x->len;
        }
        path_pop(c, o);
    }
    if (itemsize) {
        size_t o = path_push(c, "itemsize", 0);
        if (uint_of(c, itemsize, &d->size) < 0) return -1;
        d->has_itemsize = 1;
        uint64_t run = 0;
        for (i = 0; i < d->nfields; i++) {
            const npzs_pfield *pf = &d->fields[i];
            run = sat_add(d->has_offsets ? pf->offset : run, dt_min_size(&pf->type));
            if (run > d->size)
            {
                char q[NPZS_TEXT_NAME_CAP];
                return bad(c, itemsize, "field %s ends at byte %llu at least, past the itemsize",
                           quoted(q, pf->name, pf->name_len), (unsigned long long)run);
            }
        }
        path_pop(c, o);
    }
    return 0;
}

/* The object form of a dtype: a structured layout in NumPy's words ({"fields": [...], "offsets":
 * [...], "itemsize": n, "titles": [...]}) or, as a field's type, a subarray ({"base": type,
 * "shape": [...]}). */
static int dtype_object_of(pc *c, const npzs_jv *v, npzs_pdtype *d, int depth, int field) {
    const npzs_jv *fields = NULL, *offsets = NULL, *itemsize = NULL, *titles = NULL, *base = NULL, *shape = NULL;
    for (const npzs_jv *f = v->kid; f; f = f->next) {
        const char *k = f->key;
        if (!strcmp(k, "fields")) fields = f;
        else if (!strcmp(k, "offsets")) offsets = f;
        else if (!strcmp(k, "itemsize")) itemsize = f;
        else if (!strcmp(k, "titles")) titles = f;
        else if (!strcmp(k, "base")) base = f;
        else if (!strcmp(k, "shape")) shape = f;
        else return bad_at(c, f->key_at, "unknown field '%s' (fields, offsets, itemsize, titles; or base and shape)", k);
    }
    if (base || shape) {
        if (fields || offsets || itemsize || titles)
            return bad(c, v, "a dtype object is a layout (fields, ...) or a subarray (base and shape), not both");
        if (!field) return bad(c, v, "a subarray (base and shape) is a field's type: an array's shape holds its dimensions");
        if (!base || !shape) return bad(c, v, "a subarray has base and shape");
        size_t o = path_push(c, "shape", 0);
        if (sub_shape_of(c, shape, d) < 0) return -1;
        path_pop(c, o);
        o = path_push(c, "base", 0);
        if (dtype_of(c, base, d->base, depth + 1, 1) < 0) return -1;
        path_pop(c, o);
        return 0;
    }
    if (!fields) return bad(c, v, "a dtype object has fields (a structured layout) or base and shape (a subarray)");
    size_t o = path_push(c, "fields", 0);
    if (fields_of(c, fields, d, depth) < 0) return -1;
    path_pop(c, o);
    return layout_of(c, offsets, itemsize, titles, d);
}

/* A dtype: a string (a dtype.str or a name), a field list (the plain layout), or an object.
 * field: it is a field's type (where a subarray may stand). */
static int dtype_of(pc *c, const npzs_jv *v, npzs_pdtype *d, int depth, int field) {
    if ((v->t == NPZS_J_ARR || v->t == NPZS_J_OBJ) && depth >= DT_MAX_DEPTH)
        return bad(c, v, "field lists and subarrays nested too deeply (at most 16 levels)");
    if (v->t == NPZS_J_ARR) return fields_of(c, v, d, depth);
    if (v->t == NPZS_J_OBJ) return dtype_object_of(c, v, d, depth, field);
    if (v->t != NPZS_J_STR) return bad(c, v, "a dtype is a string (\"<f4\", \"float32\"), a field list or a layout object");
    const char *s = v->s;
    for (size_t i = 0; i < sizeof dt_names / sizeof dt_names[0]; i++)
        if (!strcmp(s, dt_names[i].name)) {
            d->kind = NPZS_PDT_CLASS;
            d->code = dt_names[i].code;
            d->size = dt_names[i].size;
            return 0;
        }
    if (!strncmp(s, "datetime64[", 11) || !strncmp(s, "timedelta64[", 12)) { /* a name with a unit */
        char t[48];
        int m = s[0] == 'd';
        if (snprintf(t, sizeof t, "<%s8%s", m ? "M" : "m", s + (m ? 10 : 11)) >= (int)sizeof t)
            return bad(c, v, "unknown dtype");
        const char *why;
        if (!dtype_str_ok(t, &why)) return bad(c, v, "%s", why);
        d->kind = NPZS_PDT_CLASS;
        d->code = m ? 'M' : 'm';
        d->size = 8;
        d->unit = s + (m ? 10 : 11);
        return 0;
    }
    const char *why = "unknown dtype name (a dtype.str such as \"<f4\", or a name such as \"float32\")";
    if (!strchr("<>|", s[0]) || !dtype_str_ok(s, &why)) {
        char q[NPZS_TEXT_NAME_CAP];
        npzs_text_name(q, sizeof q, s, v->len, 1);
        return bad(c, v, "%s: %s", q, why);
    }
    d->kind = NPZS_PDT_STR;
    d->str = s;
    return 0;
}

/* ---- shapes ---------------------------------------------------------------------------------- */

static int ident(const char *s) {
    if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || *s == '_')) return 0;
    for (s++; *s; s++)
        if (!((*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_')) return 0;
    return 1;
}

/* The dimension called name: its index, entered (without a range) when it is new. */
static long dim_index(pc *c, const char *name, uint32_t len, int enter) {
    npzs_policy *p = c->pol;
    size_t at;
    if (find_name(c->dim_order, p->ndims, dim_name_of, p, name, len, &at, &p->a.work)) return c->dim_order[at];
    if (!enter) return -1;
    if (p->ndims >= 256) return -2;
    if ((p->ndims & 15) == 0) { /* grown by 16 */
        npzs_pdimdef *n = pal(c, (p->ndims + 16) * sizeof *n);
        if (!n) return -3;
        if (p->ndims) memcpy(n, p->dims, p->ndims * sizeof *n);
        p->dims = n;
    }
    memmove(c->dim_order + at + 1, c->dim_order + at, (p->ndims - at) * sizeof *c->dim_order);
    c->dim_order[at] = p->ndims;
    npzs_pdimdef *d = &p->dims[p->ndims];
    d->name = name;
    d->name_len = len;
    d->min = 0;
    d->max = UINT64_MAX;
    return p->ndims++;
}

static int shape_of(pc *c, const npzs_jv *v, npzs_pspec *s) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "a shape is a list: integers, dimension names, \"*\" and \"...\"");
    if (v->len > NPZS_MAX_NDIM + 1) return bad(c, v, "more dimensions than an array may have (64)");
    s->has_shape = 1;
    s->nshape = v->len;
    s->shape = pal(c, v->len * sizeof *s->shape);
    if (!s->shape) return bad(c, NULL, "out of memory");
    int rest = 0;
    size_t i = 0;
    for (const npzs_jv *x = v->kid; x; x = x->next, i++) {
        size_t o = path_push(c, NULL, i);
        npzs_pdim *d = &s->shape[i];
        if (x->t == NPZS_J_NUM) {
            d->kind = NPZS_PSH_FIXED;
            if (uint_of(c, x, &d->v) < 0) return -1;
        } else if (x->t == NPZS_J_STR && !strcmp(x->s, "*")) {
            d->kind = NPZS_PSH_ANY;
        } else if (x->t == NPZS_J_STR && !strcmp(x->s, "...")) {
            if (rest++) return bad(c, x, "at most one \"...\" in a shape");
            d->kind = NPZS_PSH_REST;
        } else if (x->t == NPZS_J_STR && ident(x->s)) {
            long k = dim_index(c, x->s, x->len, 1);
            if (k < 0) return bad(c, x, k == -2 ? "more than 256 dimension names" : "out of memory");
            d->kind = NPZS_PSH_VAR;
            d->v = (uint64_t)k;
        } else {
            return bad(c, x, "a dimension is an integer, a name (letters, digits, '_'), \"*\" or \"...\"");
        }
        path_pop(c, o);
    }
    return 0;
}

/* ---- ranges ---------------------------------------------------------------------------------- */

/* One end of a range from its JSON number: each kind of element's bound, an integer bound rounded
 * inwards (lo up, hi down) and saturated; a bound no integer of the kind can meet is marked. */
static int bound_of(pc *c, const npzs_jv *v, int is_lo, npzs_pbound *b) {
    if (v->t == NPZS_J_NULL) return 0;
    if (v->t != NPZS_J_NUM) return bad(c, v, "a range bound is a number or null");
    char t[72];
    memcpy(t, v->s, v->len);
    t[v->len] = 0;
    char *end;
    double d = strtod(t, &end); /* the C locale's: the library never calls setlocale */
    if (*end || isnan(d)) return bad(c, v, "not a number this library can read");
    b->on = 1;
    b->d = d;
    b->f = (float)d;
    if (!v->frac) { /* an integer literal: exact */
        int neg = t[0] == '-';
        uint64_t m = 0;
        int big = 0;
        for (const char *q = t + neg; *q; q++) {
            unsigned dg = (unsigned)(*q - '0');
            if (m > (UINT64_MAX - dg) / 10) big = 1;
            else m = m * 10 + dg;
        }
        if (neg && (big || m)) { /* "-0" is 0: a bound of 0, as JSON and Python read it */
            b->u = 0;
            b->none_u = !is_lo; /* hi < 0: no unsigned value */
            if (big || m > (uint64_t)INT64_MAX + 1) { b->i = INT64_MIN; b->none_i = !is_lo; }
            else b->i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
        } else {
            b->u = big ? UINT64_MAX : m;
            b->none_u = big && is_lo;
            b->i = big || m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
            b->none_i = (big || m > (uint64_t)INT64_MAX) && is_lo;
        }
        return 0;
    }
    double r = is_lo ? ceil(d) : floor(d);
    if (r >= 9223372036854775808.0) { b->i = INT64_MAX; b->none_i = is_lo; }
    else if (r < -9223372036854775808.0) { b->i = INT64_MIN; b->none_i = !is_lo; }
    else b->i = (int64_t)r;
    if (r >= 18446744073709551616.0) { b->u = UINT64_MAX; b->none_u = is_lo; }
    else if (r < 0) { b->u = 0; b->none_u = !is_lo; }
    else b->u = (uint64_t)r;
    return 0;
}

static int range_of(pc *c, const npzs_jv *v, npzs_pspec *s) {
    if (v->t != NPZS_J_ARR || v->len != 2) return bad(c, v, "a range is [min, max] (null for no bound)");
    if (bound_of(c, v->kid, 1, &s->lo) < 0 || bound_of(c, v->kid->next, 0, &s->hi) < 0) return -1;
    if (s->lo.on && s->hi.on && s->lo.d > s->hi.d) return bad(c, v, "min is larger than max");
    return 0;
}

static int sniffs_of(pc *c, const npzs_jv *v, unsigned *out) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "expected a list of kinds (\"text\", \"binary\", \"pickle\", ...)");
    unsigned m = 0;
    for (const npzs_jv *x = v->kid; x; x = x->next) {
        int k = 0;
        if (x->t == NPZS_J_STR)
            for (int s = NPZS_SNIFF_EMPTY; s <= NPZS_SNIFF_BINARY; s++)
                if (!strcmp(x->s, npzs_sniff_name(s))) k = s;
        if (!k) return bad(c, x, "a blob kind is one of empty, pickle, zip, gzip, text, binary");
        m |= 1u << k;
    }
    *out = m ? m : 1u << 31; /* an empty list: no kind (bit 31 stands for "listed, none") */
    return 0;
}

/* ---- a member's spec -------------------------------------------------------------------------- */

static int hexval(char h) {
    return h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10 : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
}

/* A pinned sha256 binds what np.load returns: a blob's bytes ("kind": "blob"), or an array's,
 * which np.load reads by its dtype, shape and order: a pin of an array fixes all three, or the
 * same bytes would pass as another array (a byte-swapped dtype, a transposed order, ...). */
static int pin_of(pc *c, const npzs_pspec *s, const npzs_jv *kind, const npzs_jv *dtype, const npzs_jv *shape,
                  const npzs_jv *sha) {
    static const char give[] = "give dtype as one dtype.str (\"<f4\"), shape as integers and fortran_order";
    if (s->kind == NPZS_PK_BLOB) return 0;
    if (s->kind == NPZS_PK_ANY) return bad(c, kind, "a pinned sha256 is an array's or a blob's: kind \"array\" or \"blob\"");
    size_t o = path_push(c, "sha256", 0);
    if (!dtype) return bad(c, sha, "a pinned sha256 binds one exact array, and dtype is missing: %s", give);
    if (!shape) return bad(c, sha, "a pinned sha256 binds one exact array, and shape is missing: %s", give);
    if (s->fortran < 0) return bad(c, sha, "a pinned sha256 binds one exact array, and fortran_order is missing: %s", give);
    path_pop(c, o);
    o = path_push(c, "dtype", 0);
    if (s->ndt != 1) return bad(c, dtype, "a pinned sha256 binds one exact array: one dtype, not %u", (unsigned)s->ndt);
    path_push(c, NULL, 0);
    if (!dt_exact(&s->dt[0]))
        return bad(c, dtype->kid, "a pinned sha256 binds one exact array: a dtype.str (\"<f4\", \">f4\"), or a field "
                                  "list of them; a name matches more than one");
    path_pop(c, o);
    o = path_push(c, "shape", 0);
    for (uint32_t i = 0; i < s->nshape; i++)
        if (s->shape[i].kind != NPZS_PSH_FIXED) {
            path_push(c, NULL, i);
            const npzs_jv *x = shape->kid;
            for (uint32_t k = 0; k < i; k++) x = x->next;
            return bad(c, x, "a pinned sha256 binds one exact array: its shape is integers only");
        }
    path_pop(c, o);
    return 0;
}

static int spec_of(pc *c, const npzs_jv *v, npzs_pspec *s, int is_array) {
    if (want(c, v, NPZS_J_OBJ, "an object (dtype, shape, finite, ...)") < 0) return -1;
    s->fortran = -1;
    s->elem_max = s->max_bytes = UINT64_MAX;
    int array_only = 0;
    const npzs_jv *kind = NULL, *dtype = NULL, *shape = NULL, *sha = NULL;
    for (const npzs_jv *f = v->kid; f; f = f->next) {
        size_t o = path_push(c, f->key, 0);
        const char *k = f->key;
        int rc = 0;
        if (!strcmp(k, "dtype")) {
            dtype = f;
            if (f->t != NPZS_J_ARR) {
                rc = bad(c, f, "dtype is a list of dtypes (\"<f4\", \"float32\", a field list)");
            } else {
                s->ndt = f->len;
                s->dt = pal(c, (f->len ? f->len : 1) * sizeof *s->dt);
                if (!s->dt) rc = bad(c, NULL, "out of memory");
                size_t i = 0;
                for (const npzs_jv *x = f->kid; x && rc == 0; x = x->next, i++) {
                    size_t o2 = path_push(c, NULL, i);
                    rc = dtype_of(c, x, &s->dt[i], 0, 0);
                    if (rc == 0) path_pop(c, o2);
                }
                if (rc == 0 && f->len == 0) rc = bad(c, f, "an empty dtype list allows nothing");
            }
            array_only = 1;
        } else if (!strcmp(k, "shape")) {
            shape = f;
            rc = shape_of(c, f, s);
            array_only = 1;
        } else if (!strcmp(k, "finite")) {
            rc = bool_of(c, f, &s->finite);
            array_only |= s->finite;
        } else if (!strcmp(k, "range")) {
            rc = range_of(c, f, s);
            array_only = 1;
        } else if (!strcmp(k, "optional")) {
            if (is_array) rc = bad(c, f, "optional is for members");
            else rc = bool_of(c, f, &s->optional);
        } else if (!strcmp(k, "fortran_order")) {
            uint8_t b = 0;
            rc = bool_of(c, f, &b);
            if (rc == 0) s->fortran = (int8_t)b;
            array_only = 1;
        } else if (!strcmp(k, "byte_order")) {
            if (f->t != NPZS_J_STR || (strcmp(f->s, "little") && strcmp(f->s, "big") && strcmp(f->s, "any")))
                rc = bad(c, f, "byte_order is \"little\", \"big\" or \"any\"");
            else s->order = !strcmp(f->s, "little") ? 1 : !strcmp(f->s, "big") ? 2 : 0;
            array_only |= s->order != 0;
        } else if (!strcmp(k, "elements")) {
            rc = span_of(c, f, &s->elem_min, &s->elem_max);
            array_only = 1;
        } else if (!strcmp(k, "max_bytes")) {
            rc = size_of(c, f, &s->max_bytes);
        } else if (!strcmp(k, "sha256")) {
            sha = f;
            if (f->t != NPZS_J_STR || f->len != 64) {
                rc = bad(c, f, "sha256 is 64 hex digits");
            } else {
                for (int i = 0; i < 32 && rc == 0; i++) {
                    int h = hexval(f->s[2 * i]), l = hexval(f->s[2 * i + 1]);
                    if (h < 0 || l < 0) rc = bad(c, f, "sha256 is 64 hex digits");
                    else s->sha[i] = (uint8_t)(h << 4 | l);
                }
                s->has_sha = 1;
                if (rc == 0 && !npzs__sha256_built())
                    rc = bad(c, f, "this build of npzstream has no SHA-256 (it needs OpenSSL's libcrypto)");
            }
        } else if (!strcmp(k, "kind")) {
            kind = f;
            if (f->t != NPZS_J_STR || (strcmp(f->s, "array") && strcmp(f->s, "blob") && strcmp(f->s, "any")))
                rc = bad(c, f, "kind is \"array\", \"blob\" or \"any\"");
            else s->kind = !strcmp(f->s, "array") ? NPZS_PK_ARRAY : !strcmp(f->s, "blob") ? NPZS_PK_BLOB : NPZS_PK_ANY;
        } else if (!strcmp(k, "blob_kinds")) {
            rc = sniffs_of(c, f, &s->sniffs);
        } else {
            char q[NPZS_TEXT_NAME_CAP];
            npzs_text_name(q, sizeof q, k, f->key_len, 1);
            rc = bad_at(c, f->key_at, "unknown field %s (dtype, shape, finite, range, optional, fortran_order, "
                                      "byte_order, elements, max_bytes, sha256, kind, blob_kinds)", q);
        }
        if (rc < 0) return -1;
        path_pop(c, o);
    }
    if (kind && s->kind == NPZS_PK_BLOB && array_only) return bad(c, kind, "a blob has no dtype, shape or values to check");
    if (!kind && (array_only || sha)) s->kind = NPZS_PK_ARRAY; /* dtype, shape, values or a pin: an array */
    if (is_array && s->kind == NPZS_PK_BLOB) return bad(c, kind, "a .npy file is an array");
    return sha ? pin_of(c, s, kind, dtype, shape, sha) : 0;
}

/* ---- the document ------------------------------------------------------------------------------ */

static int index_patterns(pc *c);

static int members_of(pc *c, const npzs_jv *v) {
    npzs_policy *p = c->pol;
    if (want(c, v, NPZS_J_OBJ, "an object: key or glob pattern -> what the member must be") < 0) return -1;
    if (v->len > 100000) return bad(c, v, "more than 100000 members");
    p->nspecs = v->len;
    p->specs = pal(c, (v->len ? v->len : 1) * sizeof *p->specs);
    p->exact = pal(c, (v->len ? v->len : 1) * sizeof *p->exact);
    if (!p->specs || !p->exact) return bad(c, NULL, "out of memory");
    size_t i = 0;
    for (const npzs_jv *f = v->kid; f; f = f->next, i++) {
        size_t o = path_push(c, f->key, 0);
        npzs_pspec *s = &p->specs[i];
        s->key = f->key;
        s->key_len = f->key_len;
        if (f->key_len == 0) return bad(c, f, "an empty key: no member of an .npz has it");
        s->glob = strpbrk(f->key, "*?[") != NULL;
        if (spec_of(c, f, s, 0) < 0) return -1;
        if (s->glob && s->optional) return bad(c, f, "a pattern is never required: optional does not apply");
        if (!s->glob) {
            p->exact[p->nexact++] = (uint32_t)i;
            if (!s->optional) p->nrequired++;
        }
        path_pop(c, o);
    }
    npzs_sortent *e = npzs__sort_room(&p->a, p->nexact);
    if (!e) return bad(c, NULL, "out of memory");
    for (uint32_t k = 0; k < p->nexact; k++) e[k].item = &p->specs[p->exact[k]];
    npzs__sort_names(&p->a, e, p->nexact, spec_key);
    for (uint32_t k = 0; k < p->nexact; k++) p->exact[k] = (uint32_t)((const npzs_pspec *)e[k].item - p->specs);
    return index_patterns(c);
}

static int dims_of(pc *c, const npzs_jv *v) {
    if (want(c, v, NPZS_J_OBJ, "an object: dimension name -> [min, max]") < 0) return -1;
    for (const npzs_jv *f = v->kid; f; f = f->next) {
        size_t o = path_push(c, f->key, 0);
        if (!ident(f->key)) return bad(c, f, "a dimension name is letters, digits and '_' (not first)");
        long k = dim_index(c, f->key, f->key_len, 1);
        if (k < 0) return bad(c, f, k == -2 ? "more than 256 dimension names" : "out of memory");
        npzs_pdimdef *d = &c->pol->dims[k];
        if (span_of(c, f, &d->min, &d->max) < 0) return -1;
        path_pop(c, o);
    }
    return 0;
}

static int doc_of(pc *c, const npzs_jv *v) {
    npzs_policy *p = c->pol;
    if (want(c, v, NPZS_J_OBJ, "a JSON object") < 0) return -1;
    p->allow_other = 1;
    p->blob_sniffs = ~0u;
    p->max_total_bytes = UINT64_MAX;
    const npzs_jv *dims = NULL;
    /* the members and the array first: dims may name the dimensions their shapes use */
    for (const npzs_jv *f = v->kid; f; f = f->next) {
        size_t o = path_push(c, f->key, 0);
        const char *k = f->key;
        int rc = 0;
        if (!strcmp(k, "members")) {
            rc = members_of(c, f);
        } else if (!strcmp(k, "array")) {
            p->array = pal(c, sizeof *p->array);
            rc = p->array ? spec_of(c, f, p->array, 1) : bad(c, NULL, "out of memory");
        } else if (!strcmp(k, "dims")) {
            dims = f;
        } else if (!strcmp(k, "allow_other_members")) {
            rc = bool_of(c, f, &p->allow_other);
        } else if (!strcmp(k, "allow_blobs")) {
            if (f->t == NPZS_J_ARR) {
                rc = sniffs_of(c, f, &p->blob_sniffs);
            } else {
                uint8_t b = 0;
                rc = bool_of(c, f, &b);
                if (rc == 0 && f->t != NPZS_J_TRUE && f->t != NPZS_J_FALSE)
                    rc = bad(c, f, "allow_blobs is true, false or a list of kinds");
                p->blob_sniffs = b ? ~0u : 0;
            }
        } else if (!strcmp(k, "max_members")) {
            uint64_t n = 0;
            rc = uint_of(c, f, &n);
            if (rc == 0 && (n == 0 || n > 0x7FFFFFFF)) rc = bad(c, f, "max_members is from 1 to 2**31 - 1");
            p->max_members = (uint32_t)n;
        } else if (!strcmp(k, "max_total_bytes")) {
            rc = size_of(c, f, &p->max_total_bytes);
        } else if (!strcmp(k, "format")) {
            if (f->t != NPZS_J_STR || (strcmp(f->s, "npy") && strcmp(f->s, "npz") && strcmp(f->s, "any")))
                rc = bad(c, f, "format is \"npy\", \"npz\" or \"any\"");
            else p->format = !strcmp(f->s, "npy") ? NPZS_FORMAT_NPY : !strcmp(f->s, "npz") ? NPZS_FORMAT_NPZ : 0;
        } else if (!strcmp(k, "hash")) {
            if (f->t == NPZS_J_NULL) {
                p->hash_all = 0;
            } else if (f->t != NPZS_J_STR || strcmp(f->s, "sha256")) {
                rc = bad(c, f, "hash is \"sha256\" (or null)");
            } else if (!npzs__sha256_built()) {
                rc = bad(c, f, "this build of npzstream has no SHA-256 (it needs OpenSSL's libcrypto)");
            } else {
                p->hash_all = 1;
            }
        } else {
            char q[NPZS_TEXT_NAME_CAP];
            npzs_text_name(q, sizeof q, k, f->key_len, 1);
            rc = bad_at(c, f->key_at, "unknown field %s (members, array, dims, allow_other_members, allow_blobs, "
                                      "max_members, max_total_bytes, format, hash)", q);
        }
        if (rc < 0) return -1;
        path_pop(c, o);
    }
    if (dims) {
        size_t o = path_push(c, "dims", 0);
        if (dims_of(c, dims) < 0) return -1;
        path_pop(c, o);
    }
    return 0;
}

NPZS__API npzs_policy *npzs_policy_new(const char *text, size_t len, const npzs_allocator *alloc, npzs_policy_error *err) {
    npzs_allocator al = npzs__malloc;
    if (err) memset(err, 0, sizeof *err);
    if (alloc) {
        if (!alloc->alloc || !alloc->free) return NULL;
        al = *alloc;
    }
    pc c;
    memset(&c, 0, sizeof c);
    c.text = (const uint8_t *)text;
    c.len = len;
    c.err = err;
    if (!text && len) {
        if (err) snprintf(err->message, sizeof err->message, "no text");
        return NULL;
    }
    if (len > NPZS_POLICY_MAX_TEXT) {
        if (err) snprintf(err->message, sizeof err->message, "a policy is at most 1 MiB of JSON");
        return NULL;
    }
    npzs_policy *p = al.alloc(al.opaque, sizeof *p);
    if (!p) {
        if (err) snprintf(err->message, sizeof err->message, "out of memory");
        return NULL;
    }
    memset(p, 0, sizeof *p);
    p->a.al = al;
    p->a.cap = NPZS_POLICY_MAX_MEM;
    c.pol = p;
    const char *why = NULL;
    uint64_t at = 0;
    const npzs_jv *doc = npzs__json_read(&p->a, c.text, len, &why, &at);
    int rc = -1;
    if (!doc) (void)bad_at(&c, at, "%s", why ? why : "out of memory");
    else rc = doc_of(&c, doc);
    if (rc < 0) {
        if (err && !err->line && !err->message[0]) snprintf(err->message, sizeof err->message, "out of memory");
        npzs_policy_free(p);
        return NULL;
    }
    return p;
}

NPZS__API void npzs_policy_free(npzs_policy *pol) {
    if (!pol) return;
    npzs_allocator al = pol->a.al;
    npzs__parena_free(&pol->a);
    al.free(al.opaque, pol);
}

/* ================================================================================================
 * Enforcing
 * ================================================================================================ */

static int pfail(npzs_parser *p, int rule, uint64_t off, int content, const char *fmt, ...) {
    if (p->err) return p->err;
    int rc = content ? npzs__fail_content(p, NPZS_E_POLICY, off, rule) : npzs__fail(p, NPZS_E_POLICY, off, rule);
    va_list ap;
    va_start(ap, fmt);
    vformat(p->err_detail, sizeof p->err_detail, fmt, ap);
    va_end(ap);
    return rc;
}

/* A member, for the words: 'images' (its key, npzs_text_name's), or `none` (b: NPZS_TEXT_NAME_CAP bytes). */
static void key_text(const npzs_record *r, char *b, size_t n, const char *none) {
    if (!r) {
        snprintf(b, n, "%s", none);
        return;
    }
    size_t l = r->name_len;
    if (l >= 4 && memcmp(r->name + l - 4, ".npy", 4) == 0) l -= 4;
    npzs_text_name(b, n, r->name, l, 1);
}

/* The current member: its key, or "the array" of a .npy. */
static void who(const npzs_parser *p, char *b, size_t n) {
    key_text(p->format == NPZS_FORMAT_NPZ ? p->rec : NULL, b, n, "the array");
}

NPZS__API int npzs_policy_use(npzs_parser *p, const npzs_policy *pol) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (p->state != NPZS_S_START || p->consumed) return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_POLICY);
    npzs_pstate *s = &p->pol;
    npzs__free(p, s->mem);
    memset(s, 0, sizeof *s);
    if (!pol) return 0;
    size_t nd = pol->ndims, ns = pol->nspecs;
    size_t size = nd * (sizeof(uint64_t) + sizeof(uint32_t)) + nd + ns + pol->ngroup + 8;
    s->mem = npzs__alloc(p, size);
    if (!s->mem) return npzs__fail(p, NPZS_E_NOMEM, 0, NPZS_R_NOMEM_POLICY);
    s->mem_size = size;
    s->pol = pol;
    npzs__policy_reset(p);
    return 0;
}

void npzs__policy_reset(npzs_parser *p) {
    npzs_pstate *s = &p->pol;
    if (!s->pol) return;
    size_t nd = s->pol->ndims;
    memset(s->mem, 0, s->mem_size);
    s->dimval = s->mem;
    s->dimfrom = (uint32_t *)(s->dimval + nd);
    s->dimset = (uint8_t *)(s->dimfrom + nd);
    s->seen = s->dimset + nd;
    s->spec = NULL;
    memset(&s->match, 0, sizeof s->match);
    s->match.seen = s->seen + s->pol->nspecs;
}

void npzs__policy_release(npzs_parser *p) {
    npzs__free(p, p->pol.mem);
    memset(&p->pol, 0, sizeof p->pol);
}

int npzs__policy_hashes(const npzs_parser *p) { return p->pol.pol && p->pol.pol->hash_all; }

/* ---- the first byte --------------------------------------------------------------------------- */

int npzs__pol_start(npzs_parser *p) {
    const npzs_policy *pol = p->pol.pol;
    if (!pol) return 0;
    if (pol->format && pol->format != p->format)
        return pfail(p, NPZS_R_POLICY_FORMAT, 0, 0, "the input is a .%s file; the policy wants .%s",
                     p->format == NPZS_FORMAT_NPY ? "npy" : "npz", pol->format == NPZS_FORMAT_NPY ? "npy" : "npz");
    if (p->format == NPZS_FORMAT_NPY) {
        if (pol->nrequired) {
            const npzs_pspec *r = NULL;
            for (uint32_t i = 0; i < pol->nspecs && !r; i++)
                if (!pol->specs[i].glob && !pol->specs[i].optional) r = &pol->specs[i];
            char q[NPZS_TEXT_NAME_CAP];
            npzs_text_name(q, sizeof q, r->key, r->key_len, 1);
            return pfail(p, NPZS_R_POLICY_REQUIRED, 0, 0, "a .npy file has no members; the policy requires %s", q);
        }
        p->pol.spec = pol->array;
    }
    return 0;
}

/* ---- a local header --------------------------------------------------------------------------- */

/* ---- patterns ------------------------------------------------------------------------------------
 * fnmatch (Python's fnmatchcase) over UTF-8 code points: '*', '?', '[...]' with ranges and '!'; a
 * '[' that no ']' closes is a literal.
 *
 * A member's key takes the first pattern, in the policy's order, that matches it.  Trying every
 * pattern on every key costs patterns x members; instead each pattern is filed under one literal
 * it needs (a run of plain characters: the longest of its prefix, its suffix and its other runs),
 * and a key is tried only on the patterns whose literal it holds where the pattern needs it: a
 * prefix at its start, a suffix at its end, another run anywhere.  The literals are the words of
 * one Aho-Corasick automaton (each node's children sorted by byte, suffix links), which a key
 * walks once, byte by byte:
 *   - while the whole key so far is a node, that node's prefix patterns are candidates;
 *   - at each byte, the nodes on the suffix chain with "anywhere" patterns (each once a key: a
 *     node met again, and the rest of its chain, were tried at its first meeting);
 *   - at the end, the nodes on the suffix chain with suffix patterns.
 * Candidates are tried in the policy's order (each list is), those after a pattern already found
 * skipped: the first match is the one trying every pattern in turn finds.  A key costs its bytes
 * times log2(256) in the automaton, plus its candidates, each at most (key) x (pattern) steps of
 * glob_match.  Patterns without a literal character ("*", "?", "[a-z]*[0-9]") are candidates for
 * every key: the worst case left (SECURITY.md).  Keys and literals are valid UTF-8 (a name: zrec.c;
 * the policy: json.c), so a run of code points in a pattern is the same bytes in a key it matches. */

static uint32_t cp(const uint8_t *s, size_t n, size_t *i) {
    uint8_t c = s[*i];
    size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (*i + k > n) k = n - *i;
    uint32_t v = k == 1 ? c : k == 2 ? (c & 0x1Fu) : k == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t j = 1; j < k; j++) v = v << 6 | (s[*i + j] & 0x3Fu);
    *i += k;
    return v;
}

/* One past the pattern's last ']' (0: none): a '[' is closed when a ']' follows its first member. */
static size_t bracket_end(const uint8_t *pat, size_t pn) {
    while (pn && pat[pn - 1] != ']') pn--;
    return pn;
}

/* The class at pat[*pi] ('[' included); -1 when it is not closed (a literal '['), else whether it
 * holds c, *pi past it; the bytes read are counted in *steps.  last: bracket_end's (an unclosed
 * '[' is known without reading the rest: a pattern of many would otherwise be read to its end
 * once for each).
 * Python's translate (3.10 on) deletes the empty ranges ("z-a") from the class's text before it
 * looks for a '!' first: a '!' that only empty ranges come before negates the class too, and is
 * not in it ("[b-a!]" is any character); when it begins a range, the '-' and its end are then
 * plain members ("[a-0!-z]" is "[^-z]"). */
static int in_class(const uint8_t *pat, size_t pn, size_t *pi, uint32_t c, size_t last, uint64_t *steps) {
    size_t i = *pi + 1;
    int neg = 0, hit = 0, lead = 1, empty = 0; /* lead: only empty ranges so far (empty of them) */
    if (i < pn && pat[i] == '!') { neg = 1; lead = 0; i++; }
    *steps += 1;
    if (last <= i + 1) return -1; /* no ']' after the first member */
    size_t first = i;
    while (i < pn && (pat[i] != ']' || i == first)) {
        uint32_t a = cp(pat, pn, &i), b = a;
        int range = 0;
        if (i + 1 < pn && pat[i] == '-' && pat[i + 1] != ']') {
            i++;
            b = cp(pat, pn, &i);
            range = 1;
        }
        if (lead && range && a > b) {
            empty = 1;
            continue;
        }
        int bang = lead && empty && a == '!'; /* translate's '!' first */
        lead = 0;
        if (bang) {
            neg = 1;
            if (range && (c == '-' || c == b)) hit = 1; /* "!-b": '-' and b */
            continue;
        }
        if (a <= c && c <= b) hit = 1;
    }
    *steps += i - *pi;
    if (i >= pn) return -1;
    *pi = i + 1;
    return hit != neg;
}

/* Greedy with one star remembered: at most (key) x (pattern) steps, counted in *steps.  last:
 * bracket_end's. */
static int glob_match(const uint8_t *pat, size_t pn, size_t last, const uint8_t *s, size_t sn, uint64_t *steps) {
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        (*steps)++;
        if (pi < pn && pat[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            size_t si2 = si, pi2 = pi;
            uint32_t c = cp(s, sn, &si2);
            int ok;
            if (pat[pi] == '?') { pi2++; ok = 1; }
            else if (pat[pi] == '[' && (ok = in_class(pat, pn, &pi2, c, last, steps)) >= 0) { }
            else { ok = cp(pat, pn, &pi2) == c; }
            if (ok) { pi = pi2; si = si2; continue; }
        }
        if (star_p == SIZE_MAX) return 0;
        pi = star_p; /* the star takes one more character */
        cp(s, sn, &star_s);
        si = star_s;
    }
    while (pi < pn && pat[pi] == '*') pi++;
    return pi == pn;
}

int npzs__glob_match(const uint8_t *pat, size_t pn, const uint8_t *s, size_t sn, uint64_t *steps) {
    return glob_match(pat, pn, bracket_end(pat, pn), s, sn, steps);
}

/* ---- the index, made once (members_of) ---- */

enum { LIT_NONE, LIT_START, LIT_END, LIT_ANY }; /* where a pattern's literal is in a key it matches */
typedef struct plit {
    const char *s;
    uint32_t len, glob;
    uint8_t kind;
} plit;

static const char *lit_name(const void *item, uint32_t *len) {
    const plit *l = item;
    *len = l->len;
    return l->s;
}

/* A pattern's shape: the code points of a key it matches (g), and the literal it is filed under
 * (l->kind LIT_NONE: it has none).  The same reading of the pattern as glob_match's. */
static void pattern_shape(const uint8_t *pat, size_t pn, npzs_pglob *g, plit *l, uint64_t *steps) {
    size_t last = bracket_end(pat, pn), i = 0, run = 0; /* run: where the current run of literals began */
    uint32_t chars = 0;
    int star = 0;
    l->kind = LIT_NONE;
    l->len = 0;
    for (;;) {
        size_t j = i;
        if (i < pn && pat[i] != '*' && pat[i] != '?' && (pat[i] != '[' || in_class(pat, pn, &j, 0, last, steps) < 0)) {
            cp(pat, pn, &i); /* a literal character */
            chars++;
            continue;
        }
        if (i > run) { /* a run ends: the longest one, at equal lengths a prefix, then a suffix */
            uint8_t kind = run == 0 ? LIT_START : i == pn ? LIT_END : LIT_ANY;
            if (i - run > l->len || (i - run == l->len && kind < l->kind)) {
                l->s = (const char *)pat + run;
                l->len = (uint32_t)(i - run);
                l->kind = kind;
            }
        }
        if (i == pn) break;
        if (pat[i] == '*') {
            star = 1;
            i++;
        } else {
            chars++;
            i = pat[i] == '?' ? i + 1 : j;
        }
        run = i;
    }
    g->min = chars;
    g->max = star ? UINT32_MAX : chars;
    g->last = (uint32_t)last;
}

/* The child of node q by byte b (0: none). */
static uint32_t child(const npzs_policy *p, uint32_t q, uint8_t b) {
    uint32_t lo = p->nodes[q].kid, hi = lo + p->nodes[q].nkid;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint8_t m = p->nodes[mid].byte;
        if (m == b) return mid;
        if (m < b) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The automaton of the literals of e[0 .. n) (sorted by bytes; equal ones in the policy's order). */
static int automaton(pc *c, const npzs_sortent *e, uint32_t n) {
    npzs_policy *p = c->pol;
    size_t nodes = 1, distinct = 1; /* the root, then each literal's bytes the one before it does not share */
    for (uint32_t k = 0; k < n; k++) {
        const plit *x = e[k].item, *y = k ? e[k - 1].item : NULL;
        uint32_t same = 0;
        while (y && same < x->len && same < y->len && x->s[same] == y->s[same]) same++;
        nodes += x->len - same;
        distinct += !y || same < x->len || same < y->len;
        p->a.work += same + 1;
    }
    p->nodes = pal(c, nodes * sizeof *p->nodes);
    p->groups = pal(c, distinct * sizeof *p->groups); /* group 0: none */
    p->gids = pal(c, n * sizeof *p->gids);
    if (!p->nodes || !p->groups || !p->gids) return bad(c, NULL, "out of memory");
    npzs_pnode *N = p->nodes;
#define LIT(k) ((const plit *)e[k].item)
    /* breadth first: node q stands for the literals of e[lo .. hi), which share their first d bytes
     * (while it waits for its turn: lo in its fail, hi in its any, d in its end) */
    N[0].any = n;
    uint32_t made = 1, groups = 1, gids = 0;
    for (uint32_t q = 0; q < made; q++) {
        uint32_t lo = N[q].fail, hi = N[q].any, d = N[q].end, i = lo;
        p->a.work += hi - lo;
        while (i < hi && LIT(i)->len == d) i++; /* the literals q is: they sort first */
        if (i > lo) {
            npzs_pgroup *g = &p->groups[groups];
            N[q].group = groups++;
            g->at = gids;
            for (uint8_t kind = LIT_START; kind <= LIT_ANY; kind++)
                for (uint32_t k = lo; k < i; k++)
                    if (LIT(k)->kind == kind) p->gids[gids++] = LIT(k)->glob;
            for (uint32_t k = lo; k < i; k++) {
                g->nstart += LIT(k)->kind == LIT_START;
                g->nend += LIT(k)->kind == LIT_END;
                g->nany += LIT(k)->kind == LIT_ANY;
            }
        }
        N[q].kid = made;
        while (i < hi) {
            uint8_t b = (uint8_t)LIT(i)->s[d];
            uint32_t f = i;
            while (f < hi && (uint8_t)LIT(f)->s[d] == b) f++;
            npzs_pnode *k = &N[made++];
            k->byte = b;
            k->fail = i;
            k->any = f;
            k->end = d + 1;
            N[q].nkid++;
            i = f;
        }
    }
#undef LIT
    /* the suffix links, breadth first: a node's comes from its parent's */
    N[0].fail = N[0].any = N[0].end = 0;
    for (uint32_t q = 0; q < made; q++)
        for (uint32_t k = N[q].kid; k < N[q].kid + N[q].nkid; k++) {
            uint32_t f = 0;
            for (uint32_t s = N[q].fail; q; s = N[s].fail) {
                p->a.work++;
                if ((f = child(p, s, N[k].byte)) || !s) break;
            }
            const npzs_pgroup *g = &p->groups[N[k].group];
            N[k].fail = f;
            N[k].any = g->nany ? k : N[f].any;
            N[k].end = g->nend ? k : N[f].end;
        }
    p->nnode = made;
    p->ngroup = groups;
    return 0;
}

static int index_patterns(pc *c) {
    npzs_policy *p = c->pol;
    p->nglob = 0;
    for (uint32_t i = 0; i < p->nspecs; i++) p->nglob += p->specs[i].glob;
    if (!p->nglob) return 0;
    p->globs = pal(c, p->nglob * sizeof *p->globs);
    plit *l = pal(c, p->nglob * sizeof *l);
    if (!p->globs || !l) return bad(c, NULL, "out of memory");
    uint32_t n = 0;
    for (uint32_t i = 0, k = 0; i < p->nspecs; i++) {
        const npzs_pspec *s = &p->specs[i];
        if (!s->glob) continue;
        npzs_pglob *g = &p->globs[k];
        g->spec = i;
        pattern_shape((const uint8_t *)s->key, s->key_len, g, &l[n], &p->a.work);
        p->a.work += s->key_len;
        l[n].glob = k++;
        n += l[n].kind != LIT_NONE; /* the others are bare */
    }
    p->nbare = p->nglob - n;
    p->bare = pal(c, p->nbare * sizeof *p->bare);
    if (!p->bare) return bad(c, NULL, "out of memory");
    for (uint32_t k = 0, j = 0; k < p->nglob; k++) { /* the globs l[0 .. n) does not hold */
        if (j < n && l[j].glob == k) j++;
        else p->bare[k - j] = k;
    }
    if (!n) return 0;
    npzs_sortent *e = npzs__sort_room(&p->a, n);
    if (!e) return bad(c, NULL, "out of memory");
    for (uint32_t k = 0; k < n; k++) e[k].item = &l[k];
    npzs__sort_names(&p->a, e, n, lit_name);
    return automaton(c, e, n);
}

/* ---- a key's lookup ---- */

/* The patterns ids[0 .. n) (in the policy's order) tried on the key until one matches, *best its
 * index; those at *best and after are skipped.  kcp: the key's code points. */
static void try_patterns(const npzs_policy *p, const uint32_t *ids, uint32_t n, const uint8_t *key, size_t kn,
                         uint32_t kcp, uint32_t *best, npzs_pmatch *m) {
    for (uint32_t i = 0; i < n && ids[i] < *best; i++) {
        const npzs_pglob *g = &p->globs[ids[i]];
        const npzs_pspec *s = &p->specs[g->spec];
        m->tried++;
        if (kcp >= g->min && kcp <= g->max &&
            glob_match((const uint8_t *)s->key, s->key_len, g->last, key, kn, &m->glob)) {
            *best = ids[i];
            return;
        }
    }
}

/* The first pattern that matches the key (UINT32_MAX: none). */
static uint32_t first_pattern(const npzs_policy *p, const uint8_t *key, size_t n, npzs_pmatch *m) {
    uint32_t best = UINT32_MAX, kcp = 0;
    for (size_t i = 0; i < n; i++) kcp += (key[i] & 0xC0) != 0x80;
    if (p->nnode) {
        if (++m->gen == 0) { /* every 255 keys */
            memset(m->seen, 0, p->ngroup);
            m->gen = 1;
        }
        const npzs_pnode *N = p->nodes;
        const npzs_pgroup *G = p->groups;
        uint32_t q = 0;
        int whole = 1; /* q is the whole key so far */
        for (size_t i = 0; i < n; i++) {
            uint32_t t;
            while (!(t = child(p, q, key[i])) && q) {
                q = N[q].fail;
                whole = 0;
                m->steps++;
            }
            whole &= t != 0;
            q = t;
            m->steps++;
            const npzs_pgroup *h = &G[N[q].group];
            if (whole && h->nstart) try_patterns(p, p->gids + h->at, h->nstart, key, n, kcp, &best, m);
            for (uint32_t u = N[q].any; u && m->seen[N[u].group] != m->gen; u = N[N[u].fail].any) {
                const npzs_pgroup *g = &G[N[u].group];
                m->seen[N[u].group] = m->gen;
                m->steps++;
                try_patterns(p, p->gids + g->at + g->nstart + g->nend, g->nany, key, n, kcp, &best, m);
            }
        }
        for (uint32_t u = N[q].end; u; u = N[N[u].fail].end) {
            const npzs_pgroup *g = &G[N[u].group];
            m->steps++;
            try_patterns(p, p->gids + g->at + g->nstart, g->nend, key, n, kcp, &best, m);
        }
    }
    try_patterns(p, p->bare, p->nbare, key, n, kcp, &best, m);
    return best;
}

/* The spec for key: an exact key first (binary search), else the first pattern that matches. */
static const npzs_pspec *spec_for(const npzs_policy *pol, const uint8_t *key, size_t n, uint32_t *index,
                                  npzs_pmatch *m) {
    size_t at;
    if (find_name(pol->exact, pol->nexact, spec_name, pol, (const char *)key, n, &at, &m->steps)) {
        *index = pol->exact[at];
        return &pol->specs[*index];
    }
    uint32_t g = first_pattern(pol, key, n, m);
    if (g == UINT32_MAX) return NULL;
    *index = pol->globs[g].spec;
    return &pol->specs[*index];
}

const npzs_pspec *npzs__pol_spec_for(const npzs_policy *pol, const uint8_t *key, size_t n, uint32_t *index,
                                     npzs_pmatch *m) {
    return spec_for(pol, key, n, index, m);
}

int npzs__pol_member(npzs_parser *p) {
    npzs_pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    const npzs_record *r = p->rec;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (pol->max_members && p->members > pol->max_members)
        return pfail(p, NPZS_R_POLICY_MAX_MEMBERS, r->lfh_off, 0, "%s is member %u; the policy allows %u", w,
                     (unsigned)p->members, (unsigned)pol->max_members);
    /* the name is ASCII or flagged UTF-8 (zrec.c): the key is its bytes without ".npy" */
    size_t n = r->name_len;
    if (n >= 4 && memcmp(r->name + n - 4, ".npy", 4) == 0) n -= 4;
    uint32_t idx = 0;
    s->spec = spec_for(pol, r->name, n, &idx, &s->match);
    if (!s->spec) {
        if (!pol->allow_other)
            return pfail(p, NPZS_R_POLICY_MEMBERS, r->lfh_off, 0, "%s is not a member the policy lists", w);
        return 0;
    }
    if (!s->spec->glob) s->seen[idx] = 1;
    return 0;
}

/* ---- the directory: every required member was seen -------------------------------------------- */

int npzs__pol_directory(npzs_parser *p) {
    const npzs_pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol || !pol->nrequired) return 0;
    for (uint32_t i = 0; i < pol->nspecs; i++)
        if (!pol->specs[i].glob && !pol->specs[i].optional && !s->seen[i]) {
            char q[NPZS_TEXT_NAME_CAP];
            npzs_text_name(q, sizeof q, pol->specs[i].key, pol->specs[i].key_len, 1);
            return pfail(p, NPZS_R_POLICY_REQUIRED, p->rec_off, 0, "%s is required by the policy and missing", q);
        }
    return 0;
}

/* ---- a blob ------------------------------------------------------------------------------------ */

/* The content is not a .npy (decided at its byte coff). */
int npzs__pol_blob(npzs_parser *p, uint64_t coff) {
    const npzs_pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (!pol->blob_sniffs)
        return pfail(p, NPZS_R_POLICY_BLOB, coff, 1, "%s is not a .npy array (allow_blobs is false)", w);
    const npzs_pspec *sp = s->spec;
    if (sp && sp->kind == NPZS_PK_ARRAY)
        return pfail(p, NPZS_R_POLICY_BLOB, coff, 1, "%s is not a .npy array; the policy wants an array", w);
    const npzs_zlfh *h = &p->lfh.h;
    if (sp && sp->max_bytes != UINT64_MAX && h->known && h->usize > sp->max_bytes)
        return pfail(p, NPZS_R_POLICY_MEMBER_BYTES, coff, 1, "%s declares %llu bytes; the policy allows %llu", w,
                     (unsigned long long)h->usize, (unsigned long long)sp->max_bytes);
    return 0;
}

/* The blob's first bytes are in (its kind is known). */
int npzs__pol_sniffed(npzs_parser *p, int sniff) {
    const npzs_pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    unsigned ok = pol->blob_sniffs;
    if (s->spec && s->spec->sniffs) ok &= s->spec->sniffs;
    if (ok & (1u << sniff)) return 0;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    return pfail(p, NPZS_R_POLICY_BLOB_KIND, 0, 1, "%s looks like %s, a kind of blob the policy does not allow", w,
                 npzs_sniff_name(sniff));
}

/* How many of a blob's n next bytes fit its max_bytes (fewer: it is over there). */
size_t npzs__pol_blob_room(const npzs_parser *p, uint64_t have, size_t n) {
    const npzs_pspec *sp = p->pol.spec;
    if (!sp || sp->max_bytes == UINT64_MAX) return n;
    uint64_t room = have >= sp->max_bytes ? 0 : sp->max_bytes - have;
    return n > room ? (size_t)room : n;
}

int npzs__pol_blob_over(npzs_parser *p, uint64_t coff) {
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    return pfail(p, NPZS_R_POLICY_MEMBER_BYTES, coff, 1, "%s is larger than the policy's max_bytes (%llu)", w,
                 (unsigned long long)p->pol.spec->max_bytes);
}

/* ---- an array's header ------------------------------------------------------------------------ */

/* A header's type string ("<f4", "|S3", "<M8[us]") against a name's class or a dtype.str. */
static int dt_scalar_ok(const npzs_pdtype *d, const char *t) {
    if (d->kind == NPZS_PDT_STR) return strcmp(d->str, t) == 0;
    if (d->kind != NPZS_PDT_CLASS || !t[0] || t[1] != d->code) return 0;
    char *end;
    unsigned long long sz = strtoull(t + 2, &end, 10);
    if (d->size && sz != d->size) return 0;
    if (d->code == 'V' && d->size == 0) return 1;
    if (d->unit) return strcmp(end, d->unit) == 0;
    return 1;
}

static int dt_node_ok(const npzs_array_info *a, uint32_t node, const npzs_pdtype *d);

/* Whether struct node st has layout d: the same fields in the same order (names, titles, types),
 * at the same offsets, and the same itemsize; where it has not, the first difference in words
 * in why (when why is not NULL): names cut to 20 bytes come first, so a detail cut short is cut in
 * its ASCII tail, never inside a character. */
static int fields_same(const npzs_array_info *a, const npzs_dtnode *st, const npzs_pdtype *d, char *why, size_t n) {
    if (d->kind != NPZS_PDT_FIELDS) return 0;
    if (st->count != d->nfields) {
        if (why) snprintf(why, n, "%u fields, not %u", (unsigned)st->count, (unsigned)d->nfields);
        return 0;
    }
    uint64_t run = 0, end = 0;
    for (uint32_t i = 0; i < d->nfields; i++) {
        const npzs_dtfield *f = &a->dt_fields[st->first + i];
        const npzs_pfield *pf = &d->fields[i];
        char fq[NPZS_TEXT_NAME_CAP], q2[NPZS_TEXT_NAME_CAP];
        const char *fn = why ? quoted(fq, f->name, f->name_len) : "";
        if (!same_text(f->name, f->name_len, pf->name, pf->name_len)) {
            if (why) snprintf(why, n, "field %u is %s, not %s", (unsigned)i, fn, quoted(q2, pf->name, pf->name_len));
            return 0;
        }
        if (!f->title != !pf->title || (f->title && !same_text(f->title, f->title_len, pf->title, pf->title_len))) {
            if (why && f->title)
                snprintf(why, n, "field %s is titled %s", fn, quoted(q2, f->title, f->title_len));
            else if (why)
                snprintf(why, n, "field %s has no title", fn);
            return 0;
        }
        uint64_t at = d->has_offsets ? pf->offset : run; /* the plain list: packed */
        if (f->offset != at) {
            if (why) snprintf(why, n, "field %s is at offset %llu, not %llu", fn,
                              (unsigned long long)f->offset, (unsigned long long)at);
            return 0;
        }
        if (!dt_node_ok(a, f->type, &pf->type)) {
            const npzs_dtnode *t = &a->dt_nodes[f->type];
            if (why) snprintf(why, n, "field %s has %s%s%s, not the layout's", fn,
                              t->kind == NPZS_DT_SCALAR ? "type '" : t->kind == NPZS_DT_STRUCT ? "a structured type" : "a subarray type",
                              t->kind == NPZS_DT_SCALAR ? t->dtype : "", t->kind == NPZS_DT_SCALAR ? "'" : "");
            return 0;
        }
        run = f->offset + a->dt_nodes[f->type].itemsize; /* the parser's tree: within the itemsize */
        if (run > end) end = run;
    }
    uint64_t size = d->has_itemsize ? d->size : d->has_offsets ? end : run;
    if (st->itemsize != size) {
        if (why) snprintf(why, n, "the itemsize is %llu, not %llu", (unsigned long long)st->itemsize, (unsigned long long)size);
        return 0;
    }
    return 1;
}

/* Whether node `node` of the array's dtype tree is of type d (a scalar of a dtype.str or a
 * name's class, a layout, a subarray of that shape). */
static int dt_node_ok(const npzs_array_info *a, uint32_t node, const npzs_pdtype *d) {
    const npzs_dtnode *n = &a->dt_nodes[node];
    switch (n->kind) {
    case NPZS_DT_SCALAR: return (d->kind == NPZS_PDT_STR || d->kind == NPZS_PDT_CLASS) && dt_scalar_ok(d, n->dtype);
    case NPZS_DT_STRUCT: return fields_same(a, n, d, NULL, 0);
    case NPZS_DT_SUBARRAY:
        if (d->kind != NPZS_PDT_SUB || n->ndim != d->ndim) return 0;
        for (uint32_t k = 0; k < n->ndim; k++)
            if (n->shape[k] != d->shape[k]) return 0;
        return dt_node_ok(a, n->base, d->base); /* as deep as the policy's type: at most DT_MAX_DEPTH */
    default: return 0;
    }
}

static int dtype_ok(const npzs_pspec *sp, const npzs_array_info *a) {
    if (!sp->ndt) return 1;
    for (uint32_t i = 0; i < sp->ndt; i++) {
        const npzs_pdtype *d = &sp->dt[i];
        if (a->structured ? a->dt_nnodes && dt_node_ok(a, 0, d)
                          : (d->kind == NPZS_PDT_STR || d->kind == NPZS_PDT_CLASS) && dt_scalar_ok(d, a->dtype))
            return 1;
    }
    return 0;
}

/* The spec names "bfloat16" (the one name of class V and size 2, which admits every |V2). */
static int names_bf16(const npzs_pspec *sp) {
    for (uint32_t i = 0; i < sp->ndt; i++)
        if (sp->dt[i].kind == NPZS_PDT_CLASS && sp->dt[i].code == 'V' && sp->dt[i].size == 2) return 1;
    return 0;
}

/* The first scalar of a structured dtype, in the descr's order (through nested fields and
 * subarrays), whose byte order is not `want` ('<' or '>'; '|' is neither): its type string, the
 * path of its field ("a.b") in b; NULL when there is none.  The nesting is walked with a stack of
 * its own, off the C stack's recursion (a header may nest max_depth <= 1000 levels). */
#define ORDER_DEPTH 1001
static const char *order_bad(const npzs_array_info *a, char want, char *b, size_t n) {
    struct frame {
        uint32_t node, next;
    } stk[ORDER_DEPTH];
    uint32_t sp = 1;
    stk[0].node = 0;
    stk[0].next = 0;
    const char *bad_type = NULL;
    while (sp && !bad_type) {
        struct frame *t = &stk[sp - 1];
        const npzs_dtnode *st = &a->dt_nodes[t->node];
        if (t->next == st->count) {
            sp--;
            continue;
        }
        uint32_t k = a->dt_fields[st->first + t->next++].type;
        for (uint32_t hops = 0; a->dt_nodes[k].kind == NPZS_DT_SUBARRAY && hops < a->dt_nnodes; hops++) k = a->dt_nodes[k].base;
        const npzs_dtnode *x = &a->dt_nodes[k];
        if (x->kind == NPZS_DT_STRUCT && sp < ORDER_DEPTH) {
            stk[sp].node = k;
            stk[sp].next = 0;
            sp++;
        } else if (x->kind != NPZS_DT_SCALAR) {
            bad_type = "?"; /* deeper than any header may nest: refused, never passed */
        } else if (x->dtype[0] != '|' && x->dtype[0] != want) {
            bad_type = x->dtype;
        }
    }
    if (!bad_type) return NULL;
    size_t k = 0;
    b[0] = 0;
    for (uint32_t i = 0; i < sp && k + 1 < n; i++) {
        const npzs_dtfield *f = &a->dt_fields[a->dt_nodes[stk[i].node].first + stk[i].next - 1];
        if (i && k + 2 < n) b[k++] = '.';
        if (n - k < 6) break;
        k += npzs_text_name(b + k, n - k, f->name, f->name_len, 0);
    }
    return bad_type;
}

static void dt_list(const npzs_pspec *sp, char *b, size_t n) {
    size_t k = 0;
    b[0] = 0;
    for (uint32_t i = 0; i < sp->ndt && k + 1 < n; i++) {
        const npzs_pdtype *d = &sp->dt[i];
        const char *t = d->kind == NPZS_PDT_STR ? d->str : d->kind == NPZS_PDT_FIELDS ? "a field list" : NULL;
        char nm[40];
        if (!t) {
            for (size_t j = 0; j < sizeof dt_names / sizeof dt_names[0] && !t; j++)
                if (dt_names[j].code == d->code && dt_names[j].size == d->size) t = dt_names[j].name;
            if (d->unit) {
                snprintf(nm, sizeof nm, "%s%s", d->code == 'M' ? "datetime64" : "timedelta64", d->unit);
                t = nm;
            }
            if (!t) t = "?";
        }
        int w = snprintf(b + k, n - k, "%s%s", i ? ", " : "", t);
        if (w < 0) break;
        k += (size_t)w < n - k ? (size_t)w : n - k - 1;
    }
}

static const char *dim_name(const npzs_policy *pol, uint64_t i) { return pol->dims[i].name; }

/* The name of the member that bound dimension i. */
static void bound_by(const npzs_parser *p, uint32_t member, char *b, size_t n) {
    int known = p->format == NPZS_FORMAT_NPZ && member < p->members;
    key_text(known ? npzs__rec(p, member) : NULL, b, n, "an earlier dimension");
}

static int dim_check(npzs_parser *p, const npzs_pdim *d, uint64_t len, uint32_t k, uint64_t coff, const char *w) {
    npzs_pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (d->kind == NPZS_PSH_FIXED && len != d->v)
        return pfail(p, NPZS_R_POLICY_SHAPE, coff, 1, "%s has %llu in dimension %u; the policy's shape has %llu", w,
                     (unsigned long long)len, (unsigned)k, (unsigned long long)d->v);
    if (d->kind != NPZS_PSH_VAR) return 0;
    const npzs_pdimdef *dd = &pol->dims[d->v];
    if (s->dimset[d->v]) {
        if (s->dimval[d->v] == len) return 0;
        char by[NPZS_TEXT_NAME_CAP];
        bound_by(p, s->dimfrom[d->v], by, sizeof by);
        return pfail(p, NPZS_R_POLICY_SHAPE_VAR, coff, 1, "%s has %s = %llu (dimension %u); %s has %s = %llu", w,
                     dim_name(pol, d->v), (unsigned long long)len, (unsigned)k, by, dim_name(pol, d->v),
                     (unsigned long long)s->dimval[d->v]);
    }
    if (len < dd->min || len > dd->max)
        return pfail(p, NPZS_R_POLICY_DIM_RANGE, coff, 1, "%s has %s = %llu (dimension %u); the policy's dims allow %llu to %llu",
                     w, dd->name, (unsigned long long)len, (unsigned)k, (unsigned long long)dd->min,
                     (unsigned long long)dd->max);
    s->dimset[d->v] = 1;
    s->dimval[d->v] = len;
    s->dimfrom[d->v] = p->cur;
    return 0;
}

static int shape_check(npzs_parser *p, const npzs_pspec *sp, const npzs_array_info *a, uint64_t coff, const char *w) {
    uint32_t rest = UINT32_MAX;
    for (uint32_t i = 0; i < sp->nshape; i++)
        if (sp->shape[i].kind == NPZS_PSH_REST) rest = i;
    uint32_t fixed = sp->nshape - (rest != UINT32_MAX);
    if (rest == UINT32_MAX ? a->ndim != sp->nshape : a->ndim < fixed)
        return pfail(p, NPZS_R_POLICY_NDIM, coff, 1, "%s has %u dimension%s; the policy's shape has %s%u", w,
                     (unsigned)a->ndim, a->ndim == 1 ? "" : "s", rest == UINT32_MAX ? "" : "at least ", (unsigned)fixed);
    for (uint32_t i = 0; i < sp->nshape; i++) {
        if (i == rest) continue;
        uint32_t k = rest == UINT32_MAX || i < rest ? i : a->ndim - (sp->nshape - i);
        if (dim_check(p, &sp->shape[i], a->shape[k], k, coff, w) < 0) return p->err;
    }
    return 0;
}

/* Element checks for the array (finite and range): set up v; NULL, or why they cannot be
 * checked on its dtype (POLICY.check-type: a check that does not apply is refused, never skipped). */
static const char *values_setup(const npzs_pspec *sp, const npzs_array_info *a, npzs_vcheck *v) {
    memset(v, 0, sizeof *v);
    int range = sp->lo.on || sp->hi.on;
    if (!sp->finite && !range) return NULL;
    if (a->structured) return "a structured dtype's fields are not checked one by one";
    char code = a->dtype[1];
    unsigned long long size = strtoull(a->dtype + 2, NULL, 10);
    v->big = a->dtype[0] == '>';
    v->lo = sp->lo;
    v->hi = sp->hi;
    v->finite = sp->finite;
    v->w = (uint8_t)size;
    switch (code) {
    case 'f':
        if (size != 2 && size != 4 && size != 8) return "long double's layout depends on the machine that wrote it";
        v->cls = NPZS_VK_FLOAT;
        break;
    case 'c':
        if (range) return "complex numbers have no order for a range";
        if (size != 8 && size != 16) return "long double's layout depends on the machine that wrote it";
        v->cls = NPZS_VK_FLOAT;
        v->w = (uint8_t)(size / 2);
        v->finite = 1;
        break;
    case 'V':
        if (size != 2 || !names_bf16(sp))
            return "void bytes have no values (a |V2 is bfloat16 only where the dtype list names \"bfloat16\")";
        v->cls = NPZS_VK_FLOAT; /* bfloat16, in its little-endian bytes */
        v->bf16 = 1;
        break;
    case 'M': case 'm':
        if (range) return "a range does not apply to datetimes";
        v->cls = NPZS_VK_NAT;
        break;
    case 'b': case 'i': case 'u':
        if (!range) return NULL; /* an integer is always finite */
        v->cls = code == 'b' ? NPZS_VK_BOOL : code == 'i' ? NPZS_VK_SINT : NPZS_VK_UINT;
        break;
    default:
        return "text has no numeric values";
    }
    v->on = 1;
    return NULL;
}

/* C and Fortran order lay the array's bytes out alike (and np.load returns the same array, both
 * C- and F-contiguous) unless two of its dimensions are longer than 1. */
static int order_matters(const npzs_array_info *a) {
    uint32_t long_dims = 0;
    for (uint32_t k = 0; k < a->ndim; k++) {
        if (a->shape[k] == 0) return 0;
        long_dims += a->shape[k] > 1;
    }
    return long_dims >= 2;
}

int npzs__pol_header(npzs_parser *p) {
    npzs_pstate *s = &p->pol;
    npzs_content *c = &p->c;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    const npzs_pspec *sp = s->spec;
    const npzs_array_info *a = &c->info;
    uint64_t coff = c->pre_len; /* the header text: where the header says what it says */
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (sp) {
        if (sp->kind == NPZS_PK_BLOB)
            return pfail(p, NPZS_R_POLICY_KIND, 0, 1, "%s is a .npy array; the policy wants a blob", w);
        if (!dtype_ok(sp, a)) {
            char l[120], why[2 * NPZS_TEXT_NAME_CAP + 64] = "";
            dt_list(sp, l, sizeof l);
            for (uint32_t i = 0; a->structured && a->dt_nnodes && i < sp->ndt && !why[0]; i++) /* the first layout's difference */
                if (sp->dt[i].kind == NPZS_PDT_FIELDS) fields_same(a, &a->dt_nodes[0], &sp->dt[i], why, sizeof why);
            if (why[0])
                return pfail(p, NPZS_R_POLICY_DTYPE, coff, 1, "%s has a structured dtype unlike the policy's layout: %s", w, why);
            return pfail(p, NPZS_R_POLICY_DTYPE, coff, 1, "%s has dtype '%s'%s; the policy allows %s", w, a->dtype,
                         a->structured ? " (structured)" : "", l);
        }
        if (sp->order) {
            char want = sp->order == 1 ? '<' : '>', path[72] = "";
            const char *t = a->structured ? (a->dt_nnodes ? order_bad(a, want, path, 40) : "?") /* the path before any tail */
                                          : a->dtype[0] != '|' && a->dtype[0] != want ? a->dtype : NULL;
            const char *got = want == '<' ? "big" : "little", *wants = want == '<' ? "little" : "big";
            if (t && a->structured)
                return pfail(p, NPZS_R_POLICY_BYTE_ORDER, coff, 1, "%s has field '%s' %s-endian ('%s'); the policy wants %s-endian",
                             w, path, got, t, wants);
            if (t)
                return pfail(p, NPZS_R_POLICY_BYTE_ORDER, coff, 1, "%s is %s-endian ('%s'); the policy wants %s-endian", w, got, t,
                             wants);
        }
        if (sp->fortran >= 0 && a->fortran_order != sp->fortran && order_matters(a))
            return pfail(p, NPZS_R_POLICY_FORTRAN, coff, 1, "%s is in %s order; the policy wants %s order", w,
                         a->fortran_order ? "Fortran" : "C", sp->fortran ? "Fortran" : "C");
        if (sp->has_shape && shape_check(p, sp, a, coff, w) < 0) return p->err;
        if (a->count < sp->elem_min || a->count > sp->elem_max)
            return pfail(p, NPZS_R_POLICY_ELEMENTS, coff, 1, "%s has %llu elements; the policy allows %llu to %llu", w,
                         (unsigned long long)a->count, (unsigned long long)sp->elem_min, (unsigned long long)sp->elem_max);
        if (a->nbytes > sp->max_bytes)
            return pfail(p, NPZS_R_POLICY_MEMBER_BYTES, coff, 1, "%s has %llu data bytes; the policy allows %llu", w,
                         (unsigned long long)a->nbytes, (unsigned long long)sp->max_bytes);
        const char *why = values_setup(sp, a, &c->vc);
        if (why)
            return pfail(p, NPZS_R_POLICY_CHECK_TYPE, coff, 1, "%s has dtype '%s'%s, which %s cannot check: %s", w, a->dtype,
                         a->structured ? " (structured)" : "", sp->finite && (sp->lo.on || sp->hi.on) ? "finite and range"
                                                               : sp->finite ? "finite" : "range", why);
    }
    return 0;
}

/* The array's data (or the blob) ended, its digest in c->digest: the pinned value. */
int npzs__pol_digest(npzs_parser *p, uint64_t coff, int emitted) {
    const npzs_pspec *sp = p->pol.spec;
    if (!p->pol.pol || !sp || !sp->has_sha || memcmp(sp->sha, p->c.digest, 32) == 0) return 0;
    char w[NPZS_TEXT_NAME_CAP], got[17];
    who(p, w, sizeof w);
    for (int i = 0; i < 8; i++) snprintf(got + 2 * i, 3, "%02x", p->c.digest[i]);
    if (emitted) return npzs__pol_defer(p, coff, NPZS_R_POLICY_SHA256);
    return pfail(p, NPZS_R_POLICY_SHA256, coff, 1, "%s has SHA-256 %s...; the policy pins another value", w, got);
}

/* A violation found in a chunk that goes out as an event: the error comes at the next call. */
int npzs__pol_defer(npzs_parser *p, uint64_t coff, int rule) {
    p->c.pend_rule = rule;
    p->c.pend_coff = coff;
    return 0;
}

int npzs__pol_pending(npzs_parser *p) {
    npzs_content *c = &p->c;
    int rule = c->pend_rule;
    c->pend_rule = 0;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (rule == NPZS_R_POLICY_SHA256) {
        char got[17];
        for (int i = 0; i < 8; i++) snprintf(got + 2 * i, 3, "%02x", c->digest[i]);
        return pfail(p, rule, c->pend_coff, 1, "%s has SHA-256 %s...; the policy pins another value", w, got);
    }
    return npzs__pol_value_fail(p, rule, c->pend_coff);
}

int npzs__pol_value_fail(npzs_parser *p, int rule, uint64_t coff) {
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    const npzs_content *c = &p->c;
    uint64_t elem = coff >= c->head_len && c->vc.w ? (coff - c->head_len) / c->vc.w : 0;
    if (rule == NPZS_R_POLICY_MEMBER_BYTES)
        return pfail(p, rule, coff, 1, "%s is larger than the policy's max_bytes (%llu)", w,
                     (unsigned long long)(p->pol.spec ? p->pol.spec->max_bytes : 0));
    return pfail(p, rule, coff, 1, "%s has %s at element %llu%s", w,
                 rule == NPZS_R_POLICY_INF ? "an infinity" : rule == NPZS_R_POLICY_RANGE ? "a value out of range"
                 : c->vc.cls == NPZS_VK_NAT ? "a NaT" : "a NaN",
                 (unsigned long long)elem, c->info.dtype[1] == 'c' ? " (counting real and imaginary parts)" : "");
}
