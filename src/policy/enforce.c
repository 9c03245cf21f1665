/*
 * enforce.c -- a compiled policy (compile.c) held against one input as it streams, at the
 * earliest byte that decides:
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
 * with no policy attached, every hook here returns at once.  What a parser learns of the input
 * (the dimensions bound, the members seen) is its own (npzs__pstate): the policy stays read-only.
 */
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../bytes/text.h"

static int pfail(npzs_parser *p, int rule, uint64_t off, int content, const char *fmt, ...) {
    if (p->err) return p->err;
    int rc = content ? npzs__fail_content(p, NPZS_E_POLICY, off, rule) : npzs__fail(p, NPZS_E_POLICY, off, rule);
    va_list ap;
    va_start(ap, fmt);
    npzs_text_vformat(p->err_detail, sizeof p->err_detail, fmt, ap);
    va_end(ap);
    return rc;
}

/* A member, for the words: 'images' (its key, npzs_text_name's), or `none` (b: NPZS_TEXT_NAME_CAP bytes). */
static void key_text(const npzs__record *r, char *b, size_t n, const char *none) {
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

/* Whether a and b are at most two edits apart (an insertion, a deletion, a change, or two
 * neighbours swapped: "weigth" for "weight"), and not equal.  Bounded: a band of five cells a row
 * of a (the policy's key), a name whose length is off by more than two never looked at, so a
 * file's names cost at most five steps a byte of the key each. */
static int near(const uint8_t *a, size_t la, const uint8_t *b, size_t lb) {
    enum { K = 2, W = 2 * K + 1, OVER = K + 1 }; /* (zlib's zconf.h defines FAR) */
    if ((la > lb ? la - lb : lb - la) > K || (la == lb && memcmp(a, b, la) == 0)) return 0;
    /* d[i % 3][c]: the distance of a[0, i) and b[0, j), j = i - K + c, for the rows i - 2 to i */
    unsigned d[3][W];
    for (size_t i = 0; i <= la; i++) {
        unsigned *row = d[i % 3], best = OVER;
        for (int c = 0; c < W; c++) {
            long j = (long)i - K + c;
            unsigned v;
            if (j < 0 || j > (long)lb) v = OVER;
            else if (i == 0) v = (unsigned)j;
            else if (j == 0) v = (unsigned)i;
            else {
                const unsigned *up = d[(i - 1) % 3];
                v = up[c] + (unsigned)(a[i - 1] != b[j - 1]);          /* a change, (i - 1, j - 1) */
                if (c + 1 < W && up[c + 1] + 1 < v) v = up[c + 1] + 1; /* a deletion, (i - 1, j) */
                if (c > 0 && row[c - 1] + 1 < v) v = row[c - 1] + 1;   /* an insertion, (i, j - 1) */
                if (i >= 2 && j >= 2 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && d[(i - 2) % 3][c] + 1 < v)
                    v = d[(i - 2) % 3][c] + 1; /* two neighbours swapped, (i - 2, j - 2) */
            }
            row[c] = v < OVER ? v : OVER;
            if (row[c] < best) best = row[c];
        }
        if (best > K) return 0; /* every path passes this row above the bound */
    }
    return d[la % 3][(long)lb - (long)la + K] <= K;
}

/* A key the policy names (not a pattern) that is near key[0, n) (a misspelling on either side), or NULL. */
static const npzs__pspec *near_spec(const npzs_policy *pol, const uint8_t *key, size_t n) {
    for (uint32_t i = 0; i < pol->nspecs; i++)
        if (!pol->specs[i].glob && near((const uint8_t *)pol->specs[i].key, pol->specs[i].key_len, key, n))
            return &pol->specs[i];
    return NULL;
}

NPZS__API int npzs_policy_use(npzs_parser *p, const npzs_policy *pol) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (p->state != NPZS_S_START || p->consumed) return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_POLICY);
    npzs__pstate *s = &p->pol;
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
    npzs__pstate *s = &p->pol;
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
            const npzs__pspec *r = NULL;
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

int npzs__pol_member(npzs_parser *p) {
    npzs__pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    const npzs__record *r = p->rec;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (pol->max_members && p->members > pol->max_members)
        return pfail(p, NPZS_R_POLICY_MAX_MEMBERS, r->lfh_off, 0, "%s is member %u; the policy allows %u", w,
                     (unsigned)p->members, (unsigned)pol->max_members);
    /* the name is ASCII or flagged UTF-8 (zrec.c): the key is its bytes without ".npy" */
    size_t n = r->name_len;
    if (n >= 4 && memcmp(r->name + n - 4, ".npy", 4) == 0) n -= 4;
    uint32_t idx = 0;
    s->spec = npzs__pol_spec_for(pol, r->name, n, &idx, &s->match);
    if (!s->spec) {
        if (pol->allow_other) return 0;
        const npzs__pspec *like = near_spec(pol, r->name, n);
        if (!like) return pfail(p, NPZS_R_POLICY_MEMBERS, r->lfh_off, 0, "%s is not a member the policy lists", w);
        char k[NPZS_TEXT_NAME_CAP];
        npzs_text_name(k, sizeof k, like->key, like->key_len, 1);
        return pfail(p, NPZS_R_POLICY_MEMBERS, r->lfh_off, 0,
                     "%s is not a member the policy lists (the policy lists %s: a misspelling?)", w, k);
    }
    if (!s->spec->glob) s->seen[idx] = 1;
    return 0;
}

/* ---- the directory: every required member was seen -------------------------------------------- */

/* A member of the file whose key is near the policy's key (a misspelling on either side), or NULL. */
static const npzs__record *near_key(const npzs_parser *p, const npzs__pspec *spec) {
    for (uint32_t i = 0; i < p->members; i++) {
        const npzs__record *r = npzs__rec(p, i);
        size_t l = r->name_len;
        if (l >= 4 && memcmp(r->name + l - 4, ".npy", 4) == 0) l -= 4;
        if (near((const uint8_t *)spec->key, spec->key_len, r->name, l)) return r;
    }
    return NULL;
}

int npzs__pol_directory(npzs_parser *p) {
    const npzs__pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol || !pol->nrequired) return 0;
    for (uint32_t i = 0; i < pol->nspecs; i++)
        if (!pol->specs[i].glob && !pol->specs[i].optional && !s->seen[i]) {
            char q[NPZS_TEXT_NAME_CAP], k[NPZS_TEXT_NAME_CAP];
            npzs_text_name(q, sizeof q, pol->specs[i].key, pol->specs[i].key_len, 1);
            const npzs__record *r = near_key(p, &pol->specs[i]);
            if (!r)
                return pfail(p, NPZS_R_POLICY_REQUIRED, p->rec_off, 0, "%s is required by the policy and missing", q);
            key_text(r, k, sizeof k, "");
            return pfail(p, NPZS_R_POLICY_REQUIRED, p->rec_off, 0,
                         "%s is required by the policy and missing (the file has %s: a misspelling?)", q, k);
        }
    return 0;
}

/* ---- a blob ------------------------------------------------------------------------------------ */

/* The content is not a .npy (decided at its byte coff). */
int npzs__pol_blob(npzs_parser *p, uint64_t coff) {
    const npzs__pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (!pol->blob_sniffs)
        return pfail(p, NPZS_R_POLICY_BLOB, coff, 1, "%s is not a .npy array (allow_blobs is false)", w);
    const npzs__pspec *sp = s->spec;
    if (sp && sp->kind == NPZS_PK_ARRAY)
        return pfail(p, NPZS_R_POLICY_BLOB, coff, 1, "%s is not a .npy array; the policy wants an array", w);
    const npzs__zlfh *h = &p->lfh.h;
    if (sp && sp->max_bytes != UINT64_MAX && h->known && h->usize > sp->max_bytes)
        return pfail(p, NPZS_R_POLICY_MEMBER_BYTES, coff, 1, "%s declares %llu bytes; the policy allows %llu", w,
                     (unsigned long long)h->usize, (unsigned long long)sp->max_bytes);
    return 0;
}

/* The blob's first bytes are in (its kind is known). */
int npzs__pol_sniffed(npzs_parser *p, int sniff) {
    const npzs__pstate *s = &p->pol;
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
    const npzs__pspec *sp = p->pol.spec;
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
static int dt_scalar_ok(const npzs__pdtype *d, const char *t) {
    if (d->kind == NPZS_PDT_STR) return strcmp(d->str, t) == 0;
    if (d->kind != NPZS_PDT_CLASS || !t[0] || t[1] != d->code) return 0;
    char *end;
    unsigned long long sz = strtoull(t + 2, &end, 10);
    if (d->size && sz != d->size) return 0;
    if (d->code == 'V' && d->size == 0) return 1;
    if (d->unit) return strcmp(end, d->unit) == 0;
    return 1;
}

static int dt_node_ok(const npzs_array_info *a, uint32_t node, const npzs__pdtype *d);

/* Whether struct node st has layout d: the same fields in the same order (names, titles, types),
 * at the same offsets, and the same itemsize; where it has not, the first difference in words
 * in why (when why is not NULL): names cut to 20 bytes come first, so a detail cut short is cut in
 * its ASCII tail, never inside a character. */
static int fields_same(const npzs_array_info *a, const npzs_dtnode *st, const npzs__pdtype *d, char *why, size_t n) {
    if (d->kind != NPZS_PDT_FIELDS) return 0;
    if (st->count != d->nfields) {
        if (why) snprintf(why, n, "%u fields, not %u", (unsigned)st->count, (unsigned)d->nfields);
        return 0;
    }
    uint64_t run = 0, end = 0;
    for (uint32_t i = 0; i < d->nfields; i++) {
        const npzs_dtfield *f = &a->dt_fields[st->first + i];
        const npzs__pfield *pf = &d->fields[i];
        char fq[NPZS_TEXT_NAME_CAP], q2[NPZS_TEXT_NAME_CAP];
        const char *fn = why ? npzs_text_quoted(fq, f->name, f->name_len) : "";
        if (npzs__bytes_cmp(f->name, f->name_len, pf->name, pf->name_len)) {
            if (why)
                snprintf(why, n, "field %u is %s, not %s", (unsigned)i, fn,
                         npzs_text_quoted(q2, pf->name, pf->name_len));
            return 0;
        }
        if (!f->title != !pf->title ||
            (f->title && npzs__bytes_cmp(f->title, f->title_len, pf->title, pf->title_len))) {
            if (why && f->title)
                snprintf(why, n, "field %s is titled %s", fn, npzs_text_quoted(q2, f->title, f->title_len));
            else if (why) snprintf(why, n, "field %s has no title", fn);
            return 0;
        }
        uint64_t at = d->has_offsets ? pf->offset : run; /* the plain list: packed */
        if (f->offset != at) {
            if (why)
                snprintf(why, n, "field %s is at offset %llu, not %llu", fn, (unsigned long long)f->offset,
                         (unsigned long long)at);
            return 0;
        }
        if (!dt_node_ok(a, f->type, &pf->type)) {
            const npzs_dtnode *t = &a->dt_nodes[f->type];
            if (why)
                snprintf(why, n, "field %s has %s%s%s, not the layout's", fn,
                         t->kind == NPZS_DT_SCALAR   ? "type '"
                         : t->kind == NPZS_DT_STRUCT ? "a structured type"
                                                     : "a subarray type",
                         t->kind == NPZS_DT_SCALAR ? t->dtype : "", t->kind == NPZS_DT_SCALAR ? "'" : "");
            return 0;
        }
        run = f->offset + a->dt_nodes[f->type].itemsize; /* the parser's tree: within the itemsize */
        if (run > end) end = run;
    }
    uint64_t size = d->has_itemsize ? d->size : d->has_offsets ? end : run;
    if (st->itemsize != size) {
        if (why)
            snprintf(why, n, "the itemsize is %llu, not %llu", (unsigned long long)st->itemsize,
                     (unsigned long long)size);
        return 0;
    }
    return 1;
}

/* Whether node `node` of the array's dtype tree is of type d (a scalar of a dtype.str or a
 * name's class, a layout, a subarray of that shape). */
static int dt_node_ok(const npzs_array_info *a, uint32_t node, const npzs__pdtype *d) {
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

static int dtype_ok(const npzs__pspec *sp, const npzs_array_info *a) {
    if (!sp->ndt) return 1;
    for (uint32_t i = 0; i < sp->ndt; i++) {
        const npzs__pdtype *d = &sp->dt[i];
        if (a->structured ? a->dt_nnodes && dt_node_ok(a, 0, d)
                          : (d->kind == NPZS_PDT_STR || d->kind == NPZS_PDT_CLASS) && dt_scalar_ok(d, a->dtype))
            return 1;
    }
    return 0;
}

/* The spec names "bfloat16" (the one name of class V and size 2, which admits every |V2). */
static int names_bf16(const npzs__pspec *sp) {
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
        for (uint32_t hops = 0; a->dt_nodes[k].kind == NPZS_DT_SUBARRAY && hops < a->dt_nnodes; hops++)
            k = a->dt_nodes[k].base;
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

static void dt_list(const npzs__pspec *sp, char *b, size_t n) {
    size_t k = 0;
    b[0] = 0;
    for (uint32_t i = 0; i < sp->ndt && k + 1 < n; i++) {
        const npzs__pdtype *d = &sp->dt[i];
        const char *t = d->kind == NPZS_PDT_STR ? d->str : d->kind == NPZS_PDT_FIELDS ? "a field list" : NULL;
        char nm[40];
        if (!t) {
            t = npzs__pdtype_name(d->code, d->size);
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

static int dim_check(npzs_parser *p, const npzs__pdim *d, uint64_t len, uint32_t k, uint64_t coff, const char *w) {
    npzs__pstate *s = &p->pol;
    const npzs_policy *pol = s->pol;
    if (d->kind == NPZS_PSH_FIXED && len != d->v)
        return pfail(p, NPZS_R_POLICY_SHAPE, coff, 1, "%s has %llu in dimension %u; the policy's shape has %llu", w,
                     (unsigned long long)len, (unsigned)k, (unsigned long long)d->v);
    if (d->kind != NPZS_PSH_VAR) return 0;
    const npzs__pdimdef *dd = &pol->dims[d->v];
    if (s->dimset[d->v]) {
        if (s->dimval[d->v] == len) return 0;
        char by[NPZS_TEXT_NAME_CAP];
        bound_by(p, s->dimfrom[d->v], by, sizeof by);
        return pfail(p, NPZS_R_POLICY_SHAPE_VAR, coff, 1, "%s has %s = %llu (dimension %u); %s has %s = %llu", w,
                     dim_name(pol, d->v), (unsigned long long)len, (unsigned)k, by, dim_name(pol, d->v),
                     (unsigned long long)s->dimval[d->v]);
    }
    if (len < dd->min || len > dd->max)
        return pfail(p, NPZS_R_POLICY_DIM_RANGE, coff, 1,
                     "%s has %s = %llu (dimension %u); the policy's dims allow %llu to %llu", w, dd->name,
                     (unsigned long long)len, (unsigned)k, (unsigned long long)dd->min, (unsigned long long)dd->max);
    s->dimset[d->v] = 1;
    s->dimval[d->v] = len;
    s->dimfrom[d->v] = p->cur;
    return 0;
}

static int shape_check(npzs_parser *p, const npzs__pspec *sp, const npzs_array_info *a, uint64_t coff, const char *w) {
    uint32_t rest = UINT32_MAX;
    for (uint32_t i = 0; i < sp->nshape; i++)
        if (sp->shape[i].kind == NPZS_PSH_REST) rest = i;
    uint32_t fixed = sp->nshape - (rest != UINT32_MAX);
    if (rest == UINT32_MAX ? a->ndim != sp->nshape : a->ndim < fixed)
        return pfail(p, NPZS_R_POLICY_NDIM, coff, 1, "%s has %u dimension%s; the policy's shape has %s%u", w,
                     (unsigned)a->ndim, a->ndim == 1 ? "" : "s", rest == UINT32_MAX ? "" : "at least ",
                     (unsigned)fixed);
    for (uint32_t i = 0; i < sp->nshape; i++) {
        if (i == rest) continue;
        uint32_t k = rest == UINT32_MAX || i < rest ? i : a->ndim - (sp->nshape - i);
        if (dim_check(p, &sp->shape[i], a->shape[k], k, coff, w) < 0) return p->err;
    }
    return 0;
}

/* Element checks for the array (finite and range): set up v; NULL, or why they cannot be
 * checked on its dtype (POLICY.check-type: a check that does not apply is refused, never skipped). */
static const char *values_setup(const npzs__pspec *sp, const npzs_array_info *a, npzs__vcheck *v) {
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
    case 'M':
    case 'm':
        if (range) return "a range does not apply to datetimes";
        v->cls = NPZS_VK_NAT;
        break;
    case 'b':
    case 'i':
    case 'u':
        if (!range) return NULL; /* an integer is always finite */
        v->cls = code == 'b' ? NPZS_VK_BOOL : code == 'i' ? NPZS_VK_SINT : NPZS_VK_UINT;
        break;
    default: return "text has no numeric values";
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
    npzs__pstate *s = &p->pol;
    npzs__content *c = &p->c;
    const npzs_policy *pol = s->pol;
    if (!pol) return 0;
    const npzs__pspec *sp = s->spec;
    const npzs_array_info *a = &c->arr.info;
    uint64_t coff = c->pre_len; /* the header text: where the header says what it says */
    char w[NPZS_TEXT_NAME_CAP];
    who(p, w, sizeof w);
    if (sp) {
        if (sp->kind == NPZS_PK_BLOB)
            return pfail(p, NPZS_R_POLICY_KIND, 0, 1, "%s is a .npy array; the policy wants a blob", w);
        if (!dtype_ok(sp, a)) {
            char l[120], why[2 * NPZS_TEXT_NAME_CAP + 64] = "";
            dt_list(sp, l, sizeof l);
            for (uint32_t i = 0; a->structured && a->dt_nnodes && i < sp->ndt && !why[0];
                 i++) /* the first layout's difference */
                if (sp->dt[i].kind == NPZS_PDT_FIELDS) fields_same(a, &a->dt_nodes[0], &sp->dt[i], why, sizeof why);
            if (why[0])
                return pfail(p, NPZS_R_POLICY_DTYPE, coff, 1,
                             "%s has a structured dtype unlike the policy's layout: %s", w, why);
            return pfail(p, NPZS_R_POLICY_DTYPE, coff, 1, "%s has dtype '%s'%s; the policy allows %s", w, a->dtype,
                         a->structured ? " (structured)" : "", l);
        }
        if (sp->order) {
            char want = sp->order == 1 ? '<' : '>', path[72] = "";
            const char *t = a->structured
                                ? (a->dt_nnodes ? order_bad(a, want, path, 40) : "?") /* the path before any tail */
                            : a->dtype[0] != '|' && a->dtype[0] != want ? a->dtype
                                                                        : NULL;
            const char *got = want == '<' ? "big" : "little", *wants = want == '<' ? "little" : "big";
            if (t && a->structured)
                return pfail(p, NPZS_R_POLICY_BYTE_ORDER, coff, 1,
                             "%s has field '%s' %s-endian ('%s'); the policy wants %s-endian", w, path, got, t, wants);
            if (t)
                return pfail(p, NPZS_R_POLICY_BYTE_ORDER, coff, 1, "%s is %s-endian ('%s'); the policy wants %s-endian",
                             w, got, t, wants);
        }
        if (sp->fortran >= 0 && a->fortran_order != sp->fortran && order_matters(a))
            return pfail(p, NPZS_R_POLICY_FORTRAN, coff, 1, "%s is in %s order; the policy wants %s order", w,
                         a->fortran_order ? "Fortran" : "C", sp->fortran ? "Fortran" : "C");
        if (sp->has_shape && shape_check(p, sp, a, coff, w) < 0) return p->err;
        if (a->count < sp->elem_min || a->count > sp->elem_max)
            return pfail(p, NPZS_R_POLICY_ELEMENTS, coff, 1, "%s has %llu elements; the policy allows %llu to %llu", w,
                         (unsigned long long)a->count, (unsigned long long)sp->elem_min,
                         (unsigned long long)sp->elem_max);
        if (a->nbytes > sp->max_bytes)
            return pfail(p, NPZS_R_POLICY_MEMBER_BYTES, coff, 1, "%s has %llu data bytes; the policy allows %llu", w,
                         (unsigned long long)a->nbytes, (unsigned long long)sp->max_bytes);
        const char *why = values_setup(sp, a, &c->vc);
        if (why)
            return pfail(p, NPZS_R_POLICY_CHECK_TYPE, coff, 1, "%s has dtype '%s'%s, which %s cannot check: %s", w,
                         a->dtype, a->structured ? " (structured)" : "",
                         sp->finite && (sp->lo.on || sp->hi.on) ? "finite and range"
                         : sp->finite                           ? "finite"
                                                                : "range",
                         why);
    }
    return 0;
}

/* The array's data (or the blob) ended, its digest in c->digest: the pinned value. */
int npzs__pol_digest(npzs_parser *p, uint64_t coff, int emitted) {
    const npzs__pspec *sp = p->pol.spec;
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
    npzs__content *c = &p->c;
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
    const npzs__content *c = &p->c;
    uint64_t elem = coff >= c->head_len && c->vc.w ? (coff - c->head_len) / c->vc.w : 0;
    if (rule == NPZS_R_POLICY_MEMBER_BYTES)
        return pfail(p, rule, coff, 1, "%s is larger than the policy's max_bytes (%llu)", w,
                     (unsigned long long)(p->pol.spec ? p->pol.spec->max_bytes : 0));
    return pfail(p, rule, coff, 1, "%s has %s at element %llu%s", w,
                 rule == NPZS_R_POLICY_INF     ? "an infinity"
                 : rule == NPZS_R_POLICY_RANGE ? "a value out of range"
                 : c->vc.cls == NPZS_VK_NAT    ? "a NaT"
                                               : "a NaN",
                 (unsigned long long)elem, c->arr.info.dtype[1] == 'c' ? " (counting real and imaginary parts)" : "");
}
