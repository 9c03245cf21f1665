/*
 * compile.c -- a policy's JSON (json.c reads it) compiled into a read-only npzs_policy, once: the
 * members it names (exact keys, and patterns indexed by keys.c), their dtypes, shapes, named
 * dimensions, ranges, blob kinds and pinned hashes, and the budgets of the whole file.  A fault
 * names the line, column and path of the field.  The compiled policy is never written again: any
 * number of parsers, in any threads, enforce it (enforce.c), as zstd references one DDict.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy.h"
#include "../base/base.h"
#include "../bytes/text.h"

#ifdef NPZS_INTERNAL_H
#error "the policy compiler is pure: it sees no parser (internal.h)"
#endif

typedef struct pc {
    npzs_policy *pol;
    const uint8_t *text;
    size_t len;
    npzs_policy_error *err;
    char path[160];
    size_t path_len;
    uint32_t dim_order[256]; /* the dimensions, sorted by name */
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
    npzs_text_vformat(e->message, sizeof e->message, fmt, ap);
}

/* A fault at a value (-1). */
static int bad(pc *c, const npzs__jv *v, const char *fmt, ...) {
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

/* An unknown field: its key in words (npzs_text_name: a hidden character or a byte that is not
 * UTF-8 is an escape), reported where its name is, with the fields known there. */
static int unknown_field(pc *c, const npzs__jv *f, const char *known) {
    char q[NPZS_TEXT_NAME_CAP];
    npzs_text_name(q, sizeof q, f->key, f->key_len, 1);
    return bad_at(c, f->key_at, "unknown field %s (%s)", q, known);
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

static const char *dim_name_of(const void *ctx, uint32_t i, uint32_t *len) {
    const npzs__pdimdef *d = &((const npzs_policy *)ctx)->dims[i];
    *len = d->name_len;
    return d->name;
}

static const char *spec_key(const void *item, uint32_t *len) {
    const npzs__pspec *s = item;
    *len = s->key_len;
    return s->key;
}

static const char *str_value(const void *item, uint32_t *len) {
    const npzs__jv *v = item;
    *len = v->len;
    return v->s;
}

static const char *type_name(const npzs__jv *v) {
    switch (v->t) {
    case NPZS_J_NULL: return "null";
    case NPZS_J_FALSE:
    case NPZS_J_TRUE: return "a boolean";
    case NPZS_J_NUM: return "a number";
    case NPZS_J_STR: return "a string";
    case NPZS_J_ARR: return "a list";
    default: return "an object";
    }
}

static int want(pc *c, const npzs__jv *v, int t, const char *what) {
    if (v->t == t || (t == NPZS_J_TRUE && v->t == NPZS_J_FALSE)) return 0;
    return bad(c, v, "expected %s, not %s", what, type_name(v));
}

/* A non-negative integer written as one (no fraction, no exponent, no sign). */
static int uint_of(pc *c, const npzs__jv *v, uint64_t *out) {
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
static int size_of(pc *c, const npzs__jv *v, uint64_t *out) {
    if (v->t == NPZS_J_NUM) return uint_of(c, v, out);
    if (v->t != NPZS_J_STR) return bad(c, v, "expected a size: an integer or a string such as \"512Mi\"");
    const char *s = v->s;
    uint64_t x = 0;
    if (*s < '0' || *s > '9')
        return bad(c, v, "expected a size such as \"512Mi\" (digits, then K M G T or Ki Mi Gi Ti)");
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

static int bool_of(pc *c, const npzs__jv *v, uint8_t *out) {
    if (want(c, v, NPZS_J_TRUE, "true or false") < 0) return -1;
    *out = v->t == NPZS_J_TRUE;
    return 0;
}

/* [min, max] of non-negative integers (either may be null: no bound), or one integer (both). */
static int span_of(pc *c, const npzs__jv *v, uint64_t *lo, uint64_t *hi) {
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
    {"bool", 'b', 1},        {"int8", 'i', 1},         {"int16", 'i', 2},      {"int32", 'i', 4},
    {"int64", 'i', 8},       {"uint8", 'u', 1},        {"uint16", 'u', 2},     {"uint32", 'u', 4},
    {"uint64", 'u', 8},      {"float16", 'f', 2},      {"float32", 'f', 4},    {"float64", 'f', 8},
    {"float128", 'f', 16},   {"longdouble", 'f', 16},  {"complex64", 'c', 8},  {"complex128", 'c', 16},
    {"complex256", 'c', 32}, {"clongdouble", 'c', 32}, {"str", 'U', 0},        {"bytes", 'S', 0},
    {"void", 'V', 0},        {"bfloat16", 'V', 2},     {"datetime64", 'M', 8}, {"timedelta64", 'm', 8},
};

const char *npzs__pdtype_name(char code, uint64_t size) {
    for (size_t j = 0; j < sizeof dt_names / sizeof dt_names[0]; j++)
        if (dt_names[j].code == code && dt_names[j].size == size) return dt_names[j].name;
    return NULL;
}

static const char *const dt_units[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",
                                       "ms", "us", "ns", "ps", "fs", "as", "generic"};

/* A dtype.str as NumPy spells it: order, code, size and (M8, m8) a unit. */
static int dtype_str_ok(const char *s, const char **why) {
    char o = s[0], k = s[1];
    if (!o || !strchr("<>|", o))
        return *why = "a dtype.str starts with '<', '>' or '|' (or use a name: \"float32\")", 0;
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

static int dtype_of(pc *c, const npzs__jv *v, npzs__pdtype *d, int depth, int field);

/* A subarray's shape: a non-empty list of integers. */
static int sub_shape_of(pc *c, const npzs__jv *v, npzs__pdtype *d) {
    if (v->t != NPZS_J_ARR || v->len == 0 || v->len > NPZS_MAX_NDIM)
        return bad(c, v, "a subarray's shape is a non-empty list of integers (at most 64)");
    d->kind = NPZS_PDT_SUB;
    d->ndim = v->len;
    d->shape = pal(c, v->len * sizeof *d->shape);
    d->base = pal(c, sizeof *d->base);
    if (!d->shape || !d->base) return bad(c, NULL, "out of memory");
    size_t k = 0;
    for (const npzs__jv *x = v->kid; x; x = x->next)
        if (uint_of(c, x, &d->shape[k++]) < 0) return -1;
    return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b) { return a > UINT64_MAX - b ? UINT64_MAX : a + b; }

/* The fewest bytes an element of type d has (a name of any size counts 0), saturated. */
static uint64_t dt_min_size(const npzs__pdtype *d) {
    switch (d->kind) {
    case NPZS_PDT_STR: {
        uint64_t n = strtoull(d->str + 2, NULL, 10); /* at most 10**9 (dtype_str_ok) */
        return d->str[1] == 'U' ? 4 * n : n;
    }
    case NPZS_PDT_CLASS: return d->size;
    case NPZS_PDT_SUB: {
        uint64_t n = dt_min_size(d->base);
        for (uint32_t k = 0; k < d->ndim && n; k++)
            n = d->shape[k] && n > UINT64_MAX / d->shape[k] ? UINT64_MAX : n * d->shape[k];
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
static int dt_exact(const npzs__pdtype *d) {
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
static const npzs__jv *field_name(const npzs__jv *f) {
    return f->t == NPZS_J_ARR && f->len >= 2 && f->len <= 3 && f->kid->t == NPZS_J_STR ? f->kid : NULL;
}

/* The first field of list v whose name an earlier field has (v->len: none), among those before
 * the first that is not a field (the list's fault is there); -1: out of memory.  Sorted, not
 * each field against the ones before: a list may have 100,000 fields. */
static long repeated_field(pc *c, const npzs__jv *v) {
    size_t n = 0;
    for (const npzs__jv *f = v->kid; f && field_name(f); f = f->next) n++;
    if (n < 2) return (long)v->len;
    npzs__sortent *e = npzs__sort_room(&c->pol->a, n);
    if (!e) return -1;
    n = 0;
    for (const npzs__jv *f = v->kid; f && field_name(f); f = f->next) e[n++].item = field_name(f);
    npzs__sort_names(&c->pol->a, e, n, str_value);
    const npzs__jv *first = NULL; /* equal names keep their order: the later is after the earlier */
    for (size_t k = 1; k < n; k++) {
        const npzs__jv *x = e[k - 1].item, *y = e[k].item;
        if (x->len == y->len && memcmp(x->s, y->s, x->len) == 0 && (!first || y->at < first->at)) first = y;
    }
    if (!first) return (long)v->len;
    long i = 0;
    for (const npzs__jv *f = v->kid; f->kid != first; f = f->next) i++;
    return i;
}

/* A structured layout's fields: [[name, type], [name, type, shape], ...] (the plain list: packed,
 * no titles). */
static int fields_of(pc *c, const npzs__jv *v, npzs__pdtype *d, int depth) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "fields is a list: [[name, type], [name, type, shape], ...]");
    if (v->len == 0) return bad(c, v, "an empty field list");
    d->kind = NPZS_PDT_FIELDS;
    d->nfields = v->len;
    d->fields = pal(c, v->len * sizeof *d->fields);
    long repeat = d->fields ? repeated_field(c, v) : -1;
    if (repeat < 0) return bad(c, NULL, "out of memory");
    size_t i = 0;
    for (const npzs__jv *f = v->kid; f; f = f->next, i++) {
        size_t o = path_push(c, NULL, i);
        npzs__pfield *pf = &d->fields[i];
        if (!field_name(f)) return bad(c, f, "a field is [name, type] or [name, type, shape]");
        if (f->kid->len == 0)
            return bad(c, f->kid, "a field's name is not empty (padding is the room the offsets and itemsize leave)");
        pf->name = f->kid->s;
        pf->name_len = f->kid->len;
        if ((long)i == repeat) return bad(c, f->kid, "two fields of one name");
        npzs__pdtype t;
        memset(&t, 0, sizeof t);
        if (dtype_of(c, f->kid->next, &t, depth + 1, 1) < 0) return -1;
        const npzs__jv *sh = f->kid->next->next;
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
static int layout_of(pc *c, const npzs__jv *offsets, const npzs__jv *itemsize, const npzs__jv *titles,
                     npzs__pdtype *d) {
    size_t i;
    uint32_t n = d->nfields;
    if (offsets) {
        size_t o = path_push(c, "offsets", 0);
        if (offsets->t != NPZS_J_ARR || offsets->len != n)
            return bad(c, offsets, "offsets is a list of integers, one per field");
        i = 0;
        for (const npzs__jv *x = offsets->kid; x; x = x->next, i++)
            if (uint_of(c, x, &d->fields[i].offset) < 0) return -1;
        d->has_offsets = 1;
        path_pop(c, o);
    }
    if (titles) {
        size_t o = path_push(c, "titles", 0);
        if (titles->t != NPZS_J_ARR || titles->len != n)
            return bad(c, titles, "titles is a list of strings or null, one per field");
        i = 0;
        for (const npzs__jv *x = titles->kid; x; x = x->next, i++) {
            if (x->t == NPZS_J_NULL) continue;
            if (x->t != NPZS_J_STR) return bad(c, x, "a title is a string or null");
            for (size_t j = 0; j < n; j++)
                if (same_text(d->fields[j].name, d->fields[j].name_len, x->s, x->len) ||
                    (j < i && d->fields[j].title &&
                     same_text(d->fields[j].title, d->fields[j].title_len, x->s, x->len)))
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
            const npzs__pfield *pf = &d->fields[i];
            run = sat_add(d->has_offsets ? pf->offset : run, dt_min_size(&pf->type));
            if (run > d->size) {
                char q[NPZS_TEXT_NAME_CAP];
                return bad(c, itemsize, "field %s ends at byte %llu at least, past the itemsize",
                           npzs_text_quoted(q, pf->name, pf->name_len), (unsigned long long)run);
            }
        }
        path_pop(c, o);
    }
    return 0;
}

/* The object form of a dtype: a structured layout in NumPy's words ({"fields": [...], "offsets":
 * [...], "itemsize": n, "titles": [...]}) or, as a field's type, a subarray ({"base": type,
 * "shape": [...]}). */
static int dtype_object_of(pc *c, const npzs__jv *v, npzs__pdtype *d, int depth, int field) {
    const npzs__jv *fields = NULL, *offsets = NULL, *itemsize = NULL, *titles = NULL, *base = NULL, *shape = NULL;
    for (const npzs__jv *f = v->kid; f; f = f->next) {
        const char *k = f->key;
        if (!strcmp(k, "fields")) fields = f;
        else if (!strcmp(k, "offsets")) offsets = f;
        else if (!strcmp(k, "itemsize")) itemsize = f;
        else if (!strcmp(k, "titles")) titles = f;
        else if (!strcmp(k, "base")) base = f;
        else if (!strcmp(k, "shape")) shape = f;
        else return unknown_field(c, f, "fields, offsets, itemsize, titles; or base and shape");
    }
    if (base || shape) {
        if (fields || offsets || itemsize || titles)
            return bad(c, v, "a dtype object is a layout (fields, ...) or a subarray (base and shape), not both");
        if (!field)
            return bad(c, v, "a subarray (base and shape) is a field's type: an array's shape holds its dimensions");
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
static int dtype_of(pc *c, const npzs__jv *v, npzs__pdtype *d, int depth, int field) {
    if ((v->t == NPZS_J_ARR || v->t == NPZS_J_OBJ) && depth >= DT_MAX_DEPTH)
        return bad(c, v, "field lists and subarrays nested too deeply (at most 16 levels)");
    if (v->t == NPZS_J_ARR) return fields_of(c, v, d, depth);
    if (v->t == NPZS_J_OBJ) return dtype_object_of(c, v, d, depth, field);
    if (v->t != NPZS_J_STR)
        return bad(c, v, "a dtype is a string (\"<f4\", \"float32\"), a field list or a layout object");
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
    if (npzs__find_name(c->dim_order, p->ndims, dim_name_of, p, name, len, &at, &p->a.work)) return c->dim_order[at];
    if (!enter) return -1;
    if (p->ndims >= 256) return -2;
    if ((p->ndims & 15) == 0) { /* grown by 16 */
        npzs__pdimdef *n = pal(c, (p->ndims + 16) * sizeof *n);
        if (!n) return -3;
        if (p->ndims) memcpy(n, p->dims, p->ndims * sizeof *n);
        p->dims = n;
    }
    memmove(c->dim_order + at + 1, c->dim_order + at, (p->ndims - at) * sizeof *c->dim_order);
    c->dim_order[at] = p->ndims;
    npzs__pdimdef *d = &p->dims[p->ndims];
    d->name = name;
    d->name_len = len;
    d->min = 0;
    d->max = UINT64_MAX;
    return p->ndims++;
}

static int shape_of(pc *c, const npzs__jv *v, npzs__pspec *s) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "a shape is a list: integers, dimension names, \"*\" and \"...\"");
    if (v->len > NPZS_MAX_NDIM + 1) return bad(c, v, "more dimensions than an array may have (64)");
    s->has_shape = 1;
    s->nshape = v->len;
    s->shape = pal(c, v->len * sizeof *s->shape);
    if (!s->shape) return bad(c, NULL, "out of memory");
    int rest = 0;
    size_t i = 0;
    for (const npzs__jv *x = v->kid; x; x = x->next, i++) {
        size_t o = path_push(c, NULL, i);
        npzs__pdim *d = &s->shape[i];
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
static int bound_of(pc *c, const npzs__jv *v, int is_lo, npzs__pbound *b) {
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
            if (big || m > (uint64_t)INT64_MAX + 1) {
                b->i = INT64_MIN;
                b->none_i = !is_lo;
            } else b->i = m == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)m;
        } else {
            b->u = big ? UINT64_MAX : m;
            b->none_u = big && is_lo;
            b->i = big || m > (uint64_t)INT64_MAX ? INT64_MAX : (int64_t)m;
            b->none_i = (big || m > (uint64_t)INT64_MAX) && is_lo;
        }
        return 0;
    }
    double r = is_lo ? ceil(d) : floor(d);
    if (r >= 9223372036854775808.0) {
        b->i = INT64_MAX;
        b->none_i = is_lo;
    } else if (r < -9223372036854775808.0) {
        b->i = INT64_MIN;
        b->none_i = !is_lo;
    } else b->i = (int64_t)r;
    if (r >= 18446744073709551616.0) {
        b->u = UINT64_MAX;
        b->none_u = is_lo;
    } else if (r < 0) {
        b->u = 0;
        b->none_u = !is_lo;
    } else b->u = (uint64_t)r;
    return 0;
}

static int range_of(pc *c, const npzs__jv *v, npzs__pspec *s) {
    if (v->t != NPZS_J_ARR || v->len != 2) return bad(c, v, "a range is [min, max] (null for no bound)");
    if (bound_of(c, v->kid, 1, &s->lo) < 0 || bound_of(c, v->kid->next, 0, &s->hi) < 0) return -1;
    if (s->lo.on && s->hi.on && s->lo.d > s->hi.d) return bad(c, v, "min is larger than max");
    return 0;
}

static int sniffs_of(pc *c, const npzs__jv *v, unsigned *out) {
    if (v->t != NPZS_J_ARR) return bad(c, v, "expected a list of kinds (\"text\", \"binary\", \"pickle\", ...)");
    unsigned m = 0;
    for (const npzs__jv *x = v->kid; x; x = x->next) {
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
    return h >= '0' && h <= '9'   ? h - '0'
           : h >= 'a' && h <= 'f' ? h - 'a' + 10
           : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                  : -1;
}

/* A pinned sha256 binds what np.load returns: a blob's bytes ("kind": "blob"), or an array's,
 * which np.load reads by its dtype, shape and order: a pin of an array fixes all three, or the
 * same bytes would pass as another array (a byte-swapped dtype, a transposed order, ...). */
static int pin_of(pc *c, const npzs__pspec *s, const npzs__jv *kind, const npzs__jv *dtype, const npzs__jv *shape,
                  const npzs__jv *sha) {
    static const char give[] = "give dtype as one dtype.str (\"<f4\"), shape as integers and fortran_order";
    if (s->kind == NPZS_PK_BLOB) return 0;
    if (s->kind == NPZS_PK_ANY)
        return bad(c, kind, "a pinned sha256 is an array's or a blob's: kind \"array\" or \"blob\"");
    size_t o = path_push(c, "sha256", 0);
    if (!dtype) return bad(c, sha, "a pinned sha256 binds one exact array, and dtype is missing: %s", give);
    if (!shape) return bad(c, sha, "a pinned sha256 binds one exact array, and shape is missing: %s", give);
    if (s->fortran < 0)
        return bad(c, sha, "a pinned sha256 binds one exact array, and fortran_order is missing: %s", give);
    path_pop(c, o);
    o = path_push(c, "dtype", 0);
    if (s->ndt != 1) return bad(c, dtype, "a pinned sha256 binds one exact array: one dtype, not %u", (unsigned)s->ndt);
    path_push(c, NULL, 0);
    if (!dt_exact(&s->dt[0]))
        return bad(c, dtype->kid,
                   "a pinned sha256 binds one exact array: a dtype.str (\"<f4\", \">f4\"), or a field "
                   "list of them; a name matches more than one");
    path_pop(c, o);
    o = path_push(c, "shape", 0);
    for (uint32_t i = 0; i < s->nshape; i++)
        if (s->shape[i].kind != NPZS_PSH_FIXED) {
            path_push(c, NULL, i);
            const npzs__jv *x = shape->kid;
            for (uint32_t k = 0; k < i; k++) x = x->next;
            return bad(c, x, "a pinned sha256 binds one exact array: its shape is integers only");
        }
    path_pop(c, o);
    return 0;
}

static int spec_of(pc *c, const npzs__jv *v, npzs__pspec *s, int is_array) {
    if (want(c, v, NPZS_J_OBJ, "an object (dtype, shape, finite, ...)") < 0) return -1;
    s->fortran = -1;
    s->elem_max = s->max_bytes = UINT64_MAX;
    int array_only = 0;
    const npzs__jv *kind = NULL, *dtype = NULL, *shape = NULL, *sha = NULL;
    for (const npzs__jv *f = v->kid; f; f = f->next) {
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
                for (const npzs__jv *x = f->kid; x && rc == 0; x = x->next, i++) {
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
            rc = unknown_field(c, f,
                               "dtype, shape, finite, range, optional, fortran_order, byte_order, elements, "
                               "max_bytes, sha256, kind, blob_kinds");
        }
        if (rc < 0) return -1;
        path_pop(c, o);
    }
    if (kind && s->kind == NPZS_PK_BLOB && array_only)
        return bad(c, kind, "a blob has no dtype, shape or values to check");
    if (!kind && (array_only || sha)) s->kind = NPZS_PK_ARRAY; /* dtype, shape, values or a pin: an array */
    if (is_array && s->kind == NPZS_PK_BLOB) return bad(c, kind, "a .npy file is an array");
    return sha ? pin_of(c, s, kind, dtype, shape, sha) : 0;
}

/* ---- the document ------------------------------------------------------------------------------ */


static int members_of(pc *c, const npzs__jv *v) {
    npzs_policy *p = c->pol;
    if (want(c, v, NPZS_J_OBJ, "an object: key or glob pattern -> what the member must be") < 0) return -1;
    if (v->len > 100000) return bad(c, v, "more than 100000 members");
    p->nspecs = v->len;
    p->specs = pal(c, (v->len ? v->len : 1) * sizeof *p->specs);
    p->exact = pal(c, (v->len ? v->len : 1) * sizeof *p->exact);
    if (!p->specs || !p->exact) return bad(c, NULL, "out of memory");
    size_t i = 0;
    for (const npzs__jv *f = v->kid; f; f = f->next, i++) {
        size_t o = path_push(c, f->key, 0);
        npzs__pspec *s = &p->specs[i];
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
    npzs__sortent *e = npzs__sort_room(&p->a, p->nexact);
    if (!e) return bad(c, NULL, "out of memory");
    for (uint32_t k = 0; k < p->nexact; k++) e[k].item = &p->specs[p->exact[k]];
    npzs__sort_names(&p->a, e, p->nexact, spec_key);
    for (uint32_t k = 0; k < p->nexact; k++) p->exact[k] = (uint32_t)((const npzs__pspec *)e[k].item - p->specs);
    return npzs__keys_index(c->pol) < 0 ? bad(c, NULL, "out of memory") : 0;
}

static int dims_of(pc *c, const npzs__jv *v) {
    if (want(c, v, NPZS_J_OBJ, "an object: dimension name -> [min, max]") < 0) return -1;
    for (const npzs__jv *f = v->kid; f; f = f->next) {
        size_t o = path_push(c, f->key, 0);
        if (!ident(f->key)) return bad(c, f, "a dimension name is letters, digits and '_' (not first)");
        long k = dim_index(c, f->key, f->key_len, 1);
        if (k < 0) return bad(c, f, k == -2 ? "more than 256 dimension names" : "out of memory");
        npzs__pdimdef *d = &c->pol->dims[k];
        if (span_of(c, f, &d->min, &d->max) < 0) return -1;
        path_pop(c, o);
    }
    return 0;
}

static int doc_of(pc *c, const npzs__jv *v) {
    npzs_policy *p = c->pol;
    if (want(c, v, NPZS_J_OBJ, "a JSON object") < 0) return -1;
    p->allow_other = 1;
    p->blob_sniffs = ~0u;
    p->max_total_bytes = UINT64_MAX;
    const npzs__jv *dims = NULL;
    /* the members and the array first: dims may name the dimensions their shapes use */
    for (const npzs__jv *f = v->kid; f; f = f->next) {
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
            rc = unknown_field(c, f,
                               "members, array, dims, allow_other_members, allow_blobs, max_members, "
                               "max_total_bytes, format, hash");
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

NPZS__API npzs_policy *npzs_policy_new(const char *text, size_t len, const npzs_allocator *alloc,
                                       npzs_policy_error *err) {
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
    const npzs__jv *doc = npzs__json_read(&p->a, c.text, len, &why, &at);
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
