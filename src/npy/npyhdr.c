/*
 * npyhdr.c -- the .npy header parser: the dict text NumPy's writers emit, plus the historical
 * variants found in real files (SECURITY.md names each rule where NumPy is more lenient), and
 * the descr grammar of structured dtypes (an iterative parser: its nesting is a stack of frames).
 *
 *   header  := [ \t]* '{' ws item (ws ',' ws item)* [ws ','] ws '}' [ \t]* ['\n']
 *   item    := string ws ':' ws value          keys: descr, fortran_order, shape
 *   ws      := [ \t\n]*
 *   string  := '...' | "..."  with the escapes repr() writes
 *   int     := '0' | [1-9][0-9]*   (+ optional [ \t]* 'L' in v1.0/v2.0)
 *
 * It sees the parser only as a handle (view/header.h): a call gives it the limits, its kept
 * buffers and the array to fill, and it allocates and records errors through the handle's
 * services (view/handle.h).  The proof (prove/) analyses it so, those services re-stated.
 */
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "../base/contract.h"
#include "../base/rules.h"
#include "../bytes/bytes.h"
#include "../core/buffer.h"
#include "../view/header.h"

#ifdef NPZS_INTERNAL_H
#error "npyhdr.c sees the parser only as a handle (view/header.h): not its layout (internal.h)"
#endif

/* ------------------------------------------------------------------------ */
/* header parser                                                            */
/* ------------------------------------------------------------------------ */

typedef struct name_ref {
    uint32_t group;    /* which field list */
    uint32_t off, len; /* decoded bytes in scratch */
    uint32_t at;       /* header position of the token, for the error offset */
} name_ref;

typedef struct hp {
    npzs_parser *p; /* the handle: allocation, errors */
    const npzs_limits *lim;
    npzs__hkept *kb; /* the kept buffers */
    npzs__harray *a; /* the array the parse fills */
    uint64_t here;   /* input offset of the next byte (npzs__hdr) */
    const uint8_t *s;
    size_t n, i;
    int v3;
    uint64_t text_off; /* content offset of s[0] */
    uint8_t *sc;       /* scratch for decoded strings */
    size_t sc_len, sc_cap;
    size_t nnames; /* name_refs in the kept names pool */
    uint32_t groups;
    int has_object;
    size_t obj_at;                 /* the first object type string */
    int quiet;                     /* failures are not recorded (dup_keys' look-ahead) */
    uint32_t ntn, ntf;             /* the dtype tree: nodes and fields so far */
    size_t tdims_used, tstrs_used; /* bytes taken in the shape and type string pools */
} hp;

/* A letter of a Python string prefix (u'', b'', r'', f'' in either case). */
static int prefix_char(int b) {
    switch (b) {
    case 'u':
    case 'U':
    case 'r':
    case 'R':
    case 'b':
    case 'B':
    case 'f':
    case 'F': return 1;
    default: return 0;
    }
}

/* A syntax error at a byte that shows why better than the check that met it: whitespace NumPy
 * accepts and the grammar does not, a string prefix (u'', b'', r''...), or a second string where
 * a ',' or ':' was expected (implicit concatenation).  All three are strict rules. */
static int why(const hp *h, size_t at, int rule) {
    if (at >= h->n) return rule;
    uint8_t b = h->s[at];
    if (b == '\r' || b == '\f' || b == '\v') return NPZS_R_HDR_WS_CHAR;
    if (b == '#') return NPZS_R_HDR_COMMENT;
    if (b == '\\' && at + 1 < h->n && (h->s[at + 1] == '\n' || h->s[at + 1] == '\r')) return NPZS_R_HDR_CONTINUATION;
    if (prefix_char(b)) {
        size_t j = at + 1;
        if (j < h->n && prefix_char(h->s[j])) j++;
        if (j < h->n && (h->s[j] == '\'' || h->s[j] == '"')) return NPZS_R_STR_PREFIX;
    }
    if ((b == '\'' || b == '"') &&
        (rule == NPZS_R_HDR_DICT_COMMA || rule == NPZS_R_HDR_DICT_COLON || rule == NPZS_R_DESCR_LIST_COMMA ||
         rule == NPZS_R_DESCR_NAME_COMMA || rule == NPZS_R_DESCR_FIELD_CLOSE || rule == NPZS_R_DESCR_TITLE_COMMA ||
         rule == NPZS_R_DESCR_TITLE_CLOSE || rule == NPZS_R_DESCR_SUB_COMMA))
        return NPZS_R_STR_CONCAT;
    return rule;
}

/* A check that cannot fail did: the parser's state is corrupt (NPZS_E_BAD_CALL, CALL.state). */
static int corrupt(hp *h) { return npzs__fail(h->p, NPZS_E_BAD_CALL, h->here, NPZS_R_CALL_STATE); }

static int hfail(hp *h, int code, size_t at, int rule) {
    if (h->quiet) return -1; /* a look-ahead (dup_keys): the parser reports errors where it meets them */
    return npzs__fail_content(h->p, code, h->text_off + at, why(h, at, rule));
}

static void ws(hp *h) {
    while (h->i < h->n && (h->s[h->i] == ' ' || h->s[h->i] == '\t' || h->s[h->i] == '\n')) h->i++;
}

static int peek(hp *h) { return h->i < h->n ? h->s[h->i] : -1; }

static int expect(hp *h, int ch, int code, int rule) {
    ws(h);
    if (peek(h) != ch) return hfail(h, code, h->i, rule);
    h->i++;
    return 0;
}

static int hexval(int ch) {
    if (ch >= '0' && ch <= '9') return ch - '0';
    if (ch >= 'a' && ch <= 'f') return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F') return ch - 'A' + 10;
    return -1;
}

static void put_utf8(hp *h, uint32_t cp) {
    uint8_t *o = h->sc + h->sc_len;
    if (cp < 0x80) {
        o[0] = (uint8_t)cp;
        h->sc_len += 1;
    } else if (cp < 0x800) {
        o[0] = (uint8_t)(0xC0 | (cp >> 6));
        o[1] = (uint8_t)(0x80 | (cp & 0x3F));
        h->sc_len += 2;
    } else if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12));
        o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F));
        h->sc_len += 3;
    } else {
        o[0] = (uint8_t)(0xF0 | (cp >> 18));
        o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[3] = (uint8_t)(0x80 | (cp & 0x3F));
        h->sc_len += 4;
    }
}

/* Parse a quoted string; its decoded UTF-8 goes to scratch at *off, *len. */
static int str(hp *h, uint32_t *off, uint32_t *len) {
    ws(h);
    int q = peek(h);
    if (q != '\'' && q != '"') return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_STR_EXPECTED);
    size_t start = h->i;
    h->i++;
    if (h->i < h->n && h->i + 1 < h->n && h->s[h->i] == q && h->s[h->i + 1] == q)
        return hfail(h, NPZS_E_BAD_HEADER, start, NPZS_R_STR_TRIPLE);
    if (h->sc_cap < 4 || h->sc_len > h->sc_cap - 4) return corrupt(h);
    *off = (uint32_t)h->sc_len;
    for (;;) {
        if (h->i >= h->n) return hfail(h, NPZS_E_BAD_HEADER, start, NPZS_R_STR_UNTERMINATED);
        /* a byte of text gives at most 2 decoded bytes and scratch holds 4 per byte of text
         * (npzs__parse_header_mode): a step writes at most 4, there is room for it */
        if (h->sc_cap < 4 || h->sc_len > h->sc_cap - 4) return corrupt(h);
        uint8_t b = h->s[h->i];
        if (b == q) {
            h->i++;
            break;
        }
        if (b < 0x20 || b == 0x7F) return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_STR_CONTROL);
        if (b == '\\') {
            size_t at = h->i;
            if (h->i + 1 >= h->n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_UNTERMINATED);
            int e = h->s[h->i + 1];
            int nd = 0;
            uint32_t cp = 0;
            switch (e) {
            case '\\': cp = '\\'; break;
            case '\'': cp = '\''; break;
            case '"': cp = '"'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'x': nd = 2; break;
            case 'u': nd = 4; break;
            case 'U': nd = 8; break;
            default: return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE);
            }
            h->i += 2;
            if (nd) {
                size_t de = h->i + (size_t)nd; /* the digits: s[h->i, de) */
                if (de > h->n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_SHORT);
                for (size_t j = h->i; j < de; j++) {
                    int v = hexval(h->s[j]);
                    if (v < 0) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_HEX);
                    cp = cp * 16 + (uint32_t)v;
                }
                if (cp > 0x10FFFF) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_RANGE);
                h->i = de;
            }
            put_utf8(h, cp);
            continue;
        }
        if (b < 0x80) {
            h->sc[h->sc_len++] = b;
            h->i++;
            continue;
        }
        if (!h->v3) {
            put_utf8(h, b);
            h->i++;
            continue;
        } /* latin-1 */
        /* v3: the UTF-8 was validated already; copy the sequence */
        size_t e = h->i + (b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2); /* the sequence: s[h->i, e) */
        if (e > h->n) return corrupt(h);
        while (h->i < e) {
            if (h->sc_len >= h->sc_cap) return corrupt(h);
            h->sc[h->sc_len++] = h->s[h->i++];
        }
    }
    *len = (uint32_t)(h->sc_len - *off);
    return 0;
}

static int str_is(hp *h, uint32_t off, uint32_t len, const char *lit) {
    size_t l = strlen(lit);
    return len == l && off + l <= h->sc_cap && memcmp(h->sc + off, lit, l) == 0;
}

/* Decimal integer (with the Python-2 L suffix in v1/v2).  *ovf set when > INT64_MAX. */
static int integer(hp *h, int code, uint64_t *v) {
    ws(h);
    size_t at = h->i;
    int ch = peek(h);
    if (ch == '-' || ch == '+') return hfail(h, code, at, ch == '-' ? NPZS_R_INT_NEGATIVE : NPZS_R_INT_PLUS);
    if (ch < '0' || ch > '9') return hfail(h, code, at, NPZS_R_INT_EXPECTED);
    uint64_t x = 0;
    int ovf = 0;
    while (h->i < h->n && h->s[h->i] >= '0' && h->s[h->i] <= '9') {
        unsigned d = (unsigned)(h->s[h->i] - '0');
        if (x > (UINT64_C(0x7FFFFFFFFFFFFFFF) - d) / 10) ovf = 1;
        else x = x * 10 + d;
        h->i++;
    }
    if (ch == '0' && h->i - at > 1) return hfail(h, code, at, NPZS_R_INT_LEADING_ZERO);
    ch = peek(h);
    if (ch == 'x' || ch == 'X' || ch == 'o' || ch == 'O' || ch == 'b' || ch == 'B' || ch == '_' || ch == '.' ||
        ch == 'e' || ch == 'E' || ch == 'j' || ch == 'J' || ch == 'l')
        return hfail(h, code, at, NPZS_R_INT_NOT_DECIMAL);
    if (!h->v3) { /* Python-2 long suffix, as NumPy's _filter_header removes it */
        size_t j = h->i;
        while (j < h->n && (h->s[j] == ' ' || h->s[j] == '\t')) j++;
        if (j < h->n && h->s[j] == 'L') h->i = j + 1;
    }
    ch = peek(h);
    if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')
        return hfail(h, code, at, NPZS_R_INT_SUFFIX);
    if (ovf) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_INT_TOO_LARGE);
    *v = x;
    return 0;
}

/* Tuple of non-negative ints: the array's shape (code bad_shape) or a field's or subarray's shape
 * (code bad_header, where NumPy also takes a bare integer: "(3)" is 3 there, a strict rule). */
static int int_tuple(hp *h, int code, uint64_t *dims, size_t *dims_at, uint32_t maxdims, uint32_t *ndim) {
    int field = code != NPZS_E_BAD_SHAPE;
    ws(h);
    h->i++; /* the callers saw the '(' */
    size_t open_at = h->i - 1;
    uint32_t k = 0;
    int comma = 0;
    for (;;) {
        ws(h);
        if (peek(h) == ')') {
            if (k == 1 && !comma)
                return hfail(h, code, open_at, field ? NPZS_R_FIELD_TUPLE_NO_COMMA : NPZS_R_TUPLE_NO_COMMA);
            h->i++;
            break;
        }
        if (k > 0 && !comma) return hfail(h, code, h->i, field ? NPZS_R_FIELD_TUPLE_COMMA : NPZS_R_TUPLE_COMMA);
        if (k >= maxdims || k >= NPZS_MAX_NDIM) { /* bad_shape in a field too: max_ndim is the limit of both */
            if (!h->quiet) npzs__limit_need(h->p, (uint64_t)k + 1); /* at least one dimension more */
            return hfail(h, NPZS_E_BAD_SHAPE, h->i, field ? NPZS_R_FIELD_NDIM : NPZS_R_NDIM);
        }
        uint64_t v = 0;
        ws(h);
        if (dims_at) dims_at[k] = h->i;
        if (integer(h, code, &v) < 0) return -1;
        dims[k++] = v;
        ws(h);
        comma = 0;
        if (peek(h) == ',') {
            comma = 1;
            h->i++;
        }
    }
    *ndim = k;
    return 0;
}

/* ---- the pools ------------------------------------------------------------------------------
 * Every array that grows while a header is parsed (the field names, the descr parser's frames,
 * the dtype tree's nodes, fields, shapes and type strings) is a pool of the parser's kept
 * buffers (view/header.h, npzs__hpool): chunks of NPZS_POOL_CHUNK bytes, found through directory
 * blocks of fixed sizes.  Every block's size is a constant, so every access is bounded by a
 * constant; a block whose size the program records in a variable would have to be related to
 * that variable, which the proof's analysis does not do (SECURITY.md, "What is proven").
 * An item never spans two chunks: record k of a record pool is at rec_at(k, size), a type
 * string or a shape is placed by place_at, and the published tree points into the chunks.
 * pool_put and pool_get are the only accesses to a pool, copies of a constant size each
 * checked against its chunk (a check that fails cannot happen: CALL.state).  A pool past its
 * 128 MiB is out of memory, with the caller's rule. */

/* Out of memory where the parser is in the header: the byte whose item did not fit. */
static int nomem(hp *h, int rule) { return npzs__fail_content(h->p, NPZS_E_NOMEM, h->text_off + h->i, rule); }

/* A block of a pool, zeroed: no byte of a pool is ever unset. */
static void *pool_block(hp *h, size_t size, int rule) {
    void *b = npzs__alloc0(h->p, size);
    if (!b) nomem(h, rule);
    return b;
}

/* The chunk holding byte `pos` of a pool when it is missing: with `make`, allocated with the
 * directory blocks it needs, else NULL (cannot happen).  NULL: failed, recorded. */
static uint8_t *pool_grow(hp *h, npzs__hpool *pl, size_t pos, int make, int rule) {
    size_t c = pos / NPZS_POOL_CHUNK, t = c / NPZS_POOL_DIR, d = c % NPZS_POOL_DIR;
    if (t >= NPZS_POOL_TOP) {
        if (make) nomem(h, rule);
        else corrupt(h);
        return NULL;
    }
    if (!make) {
        corrupt(h);
        return NULL;
    }
    if (!pl->top && !(pl->top = pool_block(h, NPZS_POOL_TOP * sizeof *pl->top, rule))) return NULL;
    uint8_t **dir = pl->top[t];
    if (!dir && !(dir = pl->top[t] = pool_block(h, NPZS_POOL_DIR * sizeof *dir, rule))) return NULL;
    uint8_t *ch = dir[d];
    if (!ch && !(ch = dir[d] = pool_block(h, NPZS_POOL_CHUNK, rule))) return NULL;
    return ch;
}

/* The chunk holding byte `pos` of a pool (pool_grow when it is missing). */
static inline uint8_t *pool_chunk(hp *h, npzs__hpool *pl, size_t pos, int make, int rule) {
    size_t c = pos / NPZS_POOL_CHUNK, t = c / NPZS_POOL_DIR;
    if (pl->top && t < NPZS_POOL_TOP) {
        uint8_t **dir = pl->top[t];
        if (dir && dir[c % NPZS_POOL_DIR]) return dir[c % NPZS_POOL_DIR];
    }
    return pool_grow(h, pl, pos, make, rule);
}

/* Where record k of `size` bytes is: records fill a chunk and never span two. */
static size_t rec_at(size_t k, size_t size) {
    size_t per = NPZS_POOL_CHUNK / size;
    return k / per * NPZS_POOL_CHUNK + k % per * size;
}

/* Where an item of `size` bytes (at most a chunk) goes when `used` bytes of the pool are taken:
 * there, or at the next chunk if it does not fit in this one. */
static size_t place_at(size_t used, size_t size) {
    size_t in = used % NPZS_POOL_CHUNK;
    return in + size <= NPZS_POOL_CHUNK ? used : used - in + NPZS_POOL_CHUNK;
}

/* Copies of `size` bytes, a constant at every call (a record, a shape's value, 8 bytes of a type
 * string), so that the check bounds the copy. */
static inline int pool_put(hp *h, npzs__hpool *pl, size_t pos, const void *src, size_t size, int rule) {
    uint8_t *ch = pool_chunk(h, pl, pos, 1, rule);
    if (!ch) return -1;
    size_t at = pos % NPZS_POOL_CHUNK;
    if (at + size > NPZS_POOL_CHUNK) return corrupt(h);
    memcpy(ch + at, src, size);
    return 0;
}

static inline int pool_get(hp *h, npzs__hpool *pl, size_t pos, void *dst, size_t size) {
    const uint8_t *ch = pool_chunk(h, pl, pos, 0, 0);
    if (!ch) return -1;
    size_t at = pos % NPZS_POOL_CHUNK;
    if (at + size > NPZS_POOL_CHUNK) return corrupt(h);
    memcpy(dst, ch + at, size);
    return 0;
}

/* Record k of a pool that holds n records of `size` bytes (k >= n: a bug, never the input). */
static inline int rec_get(hp *h, npzs__hpool *pl, size_t k, size_t n, void *dst, size_t size) {
    if (k >= n) return corrupt(h);
    return pool_get(h, pl, rec_at(k, size), dst, size);
}

static inline int rec_put(hp *h, npzs__hpool *pl, size_t k, size_t n, const void *src, size_t size, int rule) {
    if (k >= n) return corrupt(h);
    return pool_put(h, pl, rec_at(k, size), src, size, rule);
}

/* A pointer to byte `pos` of a pool, for the published tree (NULL: not there, cannot happen). */
static const void *pool_ptr(hp *h, npzs__hpool *pl, size_t pos) {
    const uint8_t *ch = pool_chunk(h, pl, pos, 0, 0);
    return ch ? ch + pos % NPZS_POOL_CHUNK : NULL;
}

/* A parse's state over the call's part of the parser (npzs__hdr). */
static void hp_start(hp *h, const npzs__hdr *x, uint64_t text_off) {
    memset(h, 0, sizeof *h);
    h->p = x->p;
    h->lim = x->lim;
    h->kb = x->kept;
    h->a = x->arr;
    h->here = x->here;
    h->text_off = text_off;
}

static void pool_free(npzs_parser *p, npzs__hpool *pl) {
    if (!pl->top) return;
    for (size_t t = 0; t < NPZS_POOL_TOP; t++) {
        uint8_t **dir = pl->top[t];
        if (!dir) continue;
        for (size_t d = 0; d < NPZS_POOL_DIR; d++) npzs__free(p, dir[d]);
        npzs__free(p, dir);
    }
    npzs__free(p, pl->top);
    pl->top = NULL;
}

/* The published tree: one block (the API's arrays), grown to `need` bytes, zeroed.  tree_put is
 * its only access, a copy checked against its size (cannot fail: CALL.state); the block is never
 * read back, so what the proof's analysis cannot bound in it stays at that one copy. */
static int tree_room(hp *h, size_t need) {
    npzs__hkept *kb = h->kb;
    if (kb->dt_cap >= need) return 0;
    size_t n = kb->dt_cap ? kb->dt_cap : 256;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    /* the old block first: its contents are not kept (the last header's tree, which this header
     * replaces), and the peak is the new block alone */
    npzs__free(h->p, kb->dt);
    kb->dt = NULL;
    kb->dt_cap = 0;
    void *nb = pool_block(h, n, NPZS_R_NOMEM_DESCR);
    if (!nb) return -1;
    kb->dt = nb;
    kb->dt_cap = n;
    return 0;
}

static int tree_put(hp *h, size_t at, const void *src, size_t size) {
    npzs__hkept *kb = h->kb;
    if (!kb->dt || at > kb->dt_cap || size > kb->dt_cap - at) return corrupt(h);
    memcpy((uint8_t *)kb->dt + at, src, size);
    return 0;
}

/* The first chunk of every pool, made before the first header is parsed (content.c) and kept for
 * the parser's life: most headers need no other, and the parse itself then allocates only when a
 * pool grows past its first chunk (the proof's analysis handles allocation inside the descr loop
 * worst: SECURITY.md, "What is proven").  Out of memory is reported at text_off, the text's
 * first byte. */
int npzs__header_pools(const npzs__hdr *x, uint64_t text_off) {
    hp h;
    hp_start(&h, x, text_off);
    npzs__hkept *kb = h.kb;
    if (!pool_chunk(&h, &kb->names, 0, 1, NPZS_R_NOMEM_FIELDS)) return -1;
    npzs__hpool *const pl[] = {&kb->frames, &kb->tnodes, &kb->tfields, &kb->tdims, &kb->tstrs};
    for (size_t k = 0; k < sizeof pl / sizeof pl[0]; k++)
        if (!pool_chunk(&h, pl[k], 0, 1, NPZS_R_NOMEM_DESCR)) return -1;
    return 0;
}

void npzs__header_release(const npzs__hdr *x) {
    npzs_parser *p = x->p;
    npzs__hkept *kb = x->kept;
    npzs__free(p, kb->scratch);
    kb->scratch = NULL;
    kb->scratch_cap = 0;
    pool_free(p, &kb->names);
    pool_free(p, &kb->frames);
    pool_free(p, &kb->tnodes);
    pool_free(p, &kb->tfields);
    pool_free(p, &kb->tdims);
    pool_free(p, &kb->tstrs);
    npzs__free(p, kb->dt);
    kb->dt = NULL;
    kb->dt_cap = 0;
}

/* The field names, for the duplicate check: a table of at most max_fields. */
static int add_name(hp *h, uint32_t group, uint32_t off, uint32_t len, size_t at) {
    npzs__hkept *kb = h->kb;
    if (h->nnames >= h->lim->max_fields) {
        if (!h->quiet) npzs__limit_need(h->p, (uint64_t)h->nnames + 1);
        return hfail(h, NPZS_E_LIMIT, at, NPZS_R_LIMIT_FIELDS);
    }
    name_ref r = {.group = group, .off = off, .len = len, .at = (uint32_t)at};
    if (pool_put(h, &kb->names, rec_at(h->nnames, sizeof r), &r, sizeof r, NPZS_R_NOMEM_FIELDS) < 0) return -1;
    h->nnames++;
    return 0;
}

#define ITEMSIZE_MAX UINT64_C(0x7FFFFFFF) /* NumPy keeps itemsize in a C int */
enum {
    T_VOID = 1,
    T_UNSIZED = 2,
    T_UNICODE = 4, /* type_string's *is_void bits */
    T_NAMED = 8
}; /* a completed field that has a name (not padding) */

/* A type string, e.g. '<f8'.  Sets itemsize; writes dtype.str into out (48 bytes) when out != NULL.
 * *is_void gets T_VOID for an unstructured void ('V<n>'), which may serve as padding, plus
 * T_UNSIZED for a zero-size S, U or V (NumPy reads ('S0', n) as n bytes wide) and T_UNICODE for U. */
static int type_string(hp *h, uint32_t off, uint32_t len, size_t at, uint64_t *itemsize, int *is_void, char *out) {
    const uint8_t *t = h->sc; /* the type string is t[off, n), in scratch */
    size_t n = (size_t)off + len, i = off;
    *is_void = 0;
    if (n > h->sc_cap) return corrupt(h);
    if (n == i) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_EMPTY);
    int order = t[i];
    if (order != '<' && order != '>' && order != '|' && order != '=') order = 0;
    else i++;
    if (i >= n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_TYPE);
    int kind = t[i++];
    /* object arrays first: whatever follows, this is the pickle path */
    if (kind == 'O') {
        if (!h->has_object) h->obj_at = at;
        h->has_object = 1;
        if (i == n || (i + 1 == n && (t[i] == '4' || t[i] == '8'))) {
            *itemsize = 8;
            if (out) strcpy(out, "|O");
            return 0;
        }
        return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_OBJECT_FORM);
    }
    /* size digits */
    size_t ds = i;
    uint64_t sz = 0;
    int ovf = 0;
    while (i < n && t[i] >= '0' && t[i] <= '9') {
        if (sz > (UINT64_C(1) << 40)) ovf = 1;
        else sz = sz * 10 + (uint64_t)(t[i] - '0');
        i++;
    }
    size_t de = i, nd = i - ds; /* the digits: t[ds, de) */
    if (nd == 0) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_SIZE);
    if (nd > 1 && t[ds] == '0') return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_SIZE_ZERO);
    if (!order) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_ORDER);
    int one_byte_ok = 0; /* byte order irrelevant: written as '|' */
    uint64_t isz = 0;
    switch (kind) {
    case 'b':
        if (sz != 1) goto badsize;
        isz = 1;
        one_byte_ok = 1;
        break;
    case 'i':
    case 'u':
        if (sz != 1 && sz != 2 && sz != 4 && sz != 8) goto badsize;
        isz = sz;
        one_byte_ok = sz == 1;
        break;
    case 'f':
        if (sz != 2 && sz != 4 && sz != 8 && sz != 16) goto badsize;
        isz = sz;
        break;
    case 'c':
        if (sz != 8 && sz != 16 && sz != 32) goto badsize;
        isz = sz;
        break;
    case 'S':
    case 'V':
        if (ovf || sz > ITEMSIZE_MAX) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_SV_SIZE);
        isz = sz;
        one_byte_ok = 1;
        break;
    case 'U':
        if (ovf || sz > ITEMSIZE_MAX / 4) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_U_SIZE);
        isz = sz * 4;
        break;
    case 'M':
    case 'm':
        if (sz != 8) goto badsize;
        isz = 8;
        break;
    default: return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_CODE);
    }
    /* datetime unit */
    size_t unit_start = i, unit_end = i;
    if (kind == 'M' || kind == 'm') {
        if (i < n) {
            if (t[i] != '[' || t[n - 1] != ']') return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_FORM);
            size_t j = i + 1, e = n - 1;
            size_t ms = j;
            uint64_t mult = 0;
            while (j < e && t[j] >= '0' && t[j] <= '9') {
                if (mult > 100000000) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_MULT_LARGE);
                mult = mult * 10 + (uint64_t)(t[j] - '0');
                j++;
            }
            if (j > ms && (t[ms] == '0')) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_MULT);
            static const char *const units[] = {"Y",  "M",  "W",  "D",  "h",  "m",  "s",
                                                "ms", "us", "ns", "ps", "fs", "as", "generic"};
            int ok = 0;
            for (size_t k = 0; k < sizeof units / sizeof units[0]; k++) { /* t[j, e) is units[k] */
                const char *u = units[k];
                size_t x = j;
                while (x < e && *u && (uint8_t)*u == t[x]) {
                    x++;
                    u++;
                }
                if (x == e && !*u) ok = 1 + (int)k;
            }
            if (!ok) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_UNIT);
            if (ok == 14 && j > ms) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_GENERIC);
            if (ok == 14) {
                unit_start = unit_end = n;
            } /* [generic] prints as plain M8 */
            else if (j > ms && mult == 1) {
                unit_start = j;
                unit_end = e;
            } /* [1s] prints as [s] */
            else {
                unit_start = ms;
                unit_end = e;
            }
            i = n;
        }
    }
    if (i != n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_TEXT);
    /* byte order: '<' or '>' for multi-byte numbers; '|'/'=' mean "native" there, refused */
    if (!one_byte_ok && (order == '|' || order == '=')) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NATIVE);
    *itemsize = isz;
    *is_void = (kind == 'V' ? T_VOID : 0) | (sz == 0 && (kind == 'S' || kind == 'U' || kind == 'V') ? T_UNSIZED : 0) |
               (kind == 'U' ? T_UNICODE : 0);
    if (out) {
        char oc = one_byte_ok ? '|' : (order == '>' ? '>' : '<');
        size_t o = 0;
        out[o++] = oc;
        out[o++] = (char)kind;
        /* ASCII (digits, a unit's letters): the mask keeps each byte as it is */
        for (size_t k = ds; k < de && k < n && o < 40; k++) out[o++] = (char)(t[k] & 0x7F);
        if (unit_end > unit_start) {
            out[o++] = '[';
            for (size_t k = unit_start; k < unit_end && k < n && o < 46; k++) out[o++] = (char)(t[k] & 0x7F);
            out[o++] = ']';
        }
        out[o] = 0;
    }
    return 0;
badsize:
    return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_BAD_SIZE);
}

/* ---- the structured dtype's tree ------------------------------------------------------------
 * Built while the descr is parsed: a node for every type (a struct's list, a subarray, a type
 * string), a record for every named field; nodes hold offsets into the shape and string pools,
 * which may move while they grow, and are published as npzs_dtnode / npzs_dtfield (with
 * pointers) once the header is accepted (tree_publish). */
typedef struct tnode {
    npzs_dtkind kind;
    uint64_t itemsize;
    uint32_t base, ndim;
    size_t str_at, dims_at;      /* in the type string and shape pools */
    uint32_t count, first, fill; /* tree_publish's: its fields, the first, those placed */
} tnode;

typedef struct tfield {
    uint32_t owner, type; /* the struct node it belongs to; its type's node */
    uint32_t noff, nlen, toff, tlen;
    int titled;
    uint64_t offset;
} tfield;

/* A new node, built by the caller: its index, or -1 (out of memory, recorded). */
static long tnode_add(hp *h, const tnode *t) {
    npzs__hkept *kb = h->kb;
    if (pool_put(h, &kb->tnodes, rec_at(h->ntn, sizeof *t), t, sizeof *t, NPZS_R_NOMEM_DESCR) < 0) return -1;
    return (long)h->ntn++;
}

static int tnode_get(hp *h, uint32_t k, tnode *t) { return rec_get(h, &h->kb->tnodes, k, h->ntn, t, sizeof *t); }

static int tnode_put(hp *h, uint32_t k, const tnode *t) {
    return rec_put(h, &h->kb->tnodes, k, h->ntn, t, sizeof *t, NPZS_R_NOMEM_DESCR);
}

/* A new node: a struct (its size comes when its list ends), a type string's (at str_at in the
 * type string pool), a subarray's (of node base, nd dimensions at dims_at in the shape pool). */
static long tnode_new(hp *h, npzs_dtkind kind, uint64_t itemsize, size_t str_at, uint32_t base, uint32_t nd,
                      size_t dims_at) {
    tnode t;
    memset(&t, 0, sizeof t); /* its padding too: a pool's bytes are all set */
    t.kind = kind;
    t.itemsize = itemsize;
    t.str_at = str_at;
    t.base = base;
    t.ndim = nd;
    t.dims_at = dims_at;
    return tnode_add(h, &t);
}

/* A type string's node; dtype: dtype.str, at most 47 bytes and its NUL, in a buffer of 48
 * (stored 8 bytes at a time, its NUL and the zeros after it included). */
static long tnode_scalar(hp *h, const char dtype[48], uint64_t itemsize) {
    npzs__hkept *kb = h->kb;
    size_t l = 0;
    while (l < 47 && dtype[l]) l++;
    if (dtype[l]) return corrupt(h);
    l = (l + 8) / 8 * 8;
    size_t at = place_at(h->tstrs_used, l);
    for (size_t k = 0; k < l && k + 8 <= 48; k += 8)
        if (pool_put(h, &kb->tstrs, at + k, dtype + k, 8, NPZS_R_NOMEM_DESCR) < 0) return -1;
    long k = tnode_new(h, NPZS_DT_SCALAR, itemsize, at, 0, 0, 0);
    if (k >= 0) h->tstrs_used = at + l;
    return k;
}

/* A shape applied to node `base`: the node of the result (base itself for a shape of ()). */
static long tnode_shaped(hp *h, uint32_t base, const uint64_t *dims, uint32_t nd, uint64_t itemsize) {
    npzs__hkept *kb = h->kb;
    if (nd == 0) return base;
    if (nd > NPZS_MAX_NDIM) return corrupt(h);
    size_t size = (size_t)nd * 8, at = place_at(h->tdims_used, size); /* 8-aligned: every size is */
    for (uint32_t k = 0; k < nd; k++)
        if (pool_put(h, &kb->tdims, at + (size_t)k * 8, &dims[k], 8, NPZS_R_NOMEM_DESCR) < 0) return -1;
    long k = tnode_new(h, NPZS_DT_SUBARRAY, itemsize, 0, base, nd, at);
    if (k >= 0) h->tdims_used = at + size;
    return k;
}

/* The decimal digits of v (at most 20) at o: how many. */
static size_t put_dec(char *o, uint64_t v) {
    size_t l = 1;
    for (uint64_t t = v; t >= 10 && l < 20; t /= 10) l++;
    for (size_t k = l; k > 0; k--) {
        o[k - 1] = (char)('0' + v % 10);
        v /= 10;
    }
    return l;
}

/* ('S0', n) and its kind: the scalar n bytes (U: n characters) wide that NumPy makes of it. */
static long tnode_widened(hp *h, uint32_t base, uint64_t itemsize) {
    npzs__hkept *kb = h->kb;
    tnode b = {0};
    char d[2] = {0, 0}; /* the base's byte order and kind, e.g. "|S" */
    if (tnode_get(h, base, &b) < 0 || pool_get(h, &kb->tstrs, b.str_at, d, 2) < 0) return -1;
    char w[48] = {0};
    w[0] = d[0];
    w[1] = d[1];
    (void)put_dec(w + 2, d[1] == 'U' ? itemsize / 4 : itemsize);
    return tnode_scalar(h, w, itemsize);
}

static int tfield_add(hp *h, uint32_t type, uint32_t noff, uint32_t nlen, int titled, uint32_t toff, uint32_t tlen) {
    npzs__hkept *kb = h->kb;
    /* owner and offset are the list's to give (tfield_place) */
    tfield f;
    memset(&f, 0, sizeof f); /* its padding too: a pool's bytes are all set */
    f.type = type;
    f.noff = noff;
    f.nlen = nlen;
    f.titled = titled;
    f.toff = toff;
    f.tlen = tlen;
    if (pool_put(h, &kb->tfields, rec_at(h->ntf, sizeof f), &f, sizeof f, NPZS_R_NOMEM_DESCR) < 0) return -1;
    h->ntf++;
    return 0;
}

static int tfield_get(hp *h, uint32_t k, tfield *f) { return rec_get(h, &h->kb->tfields, k, h->ntf, f, sizeof *f); }

/* The last field added belongs to list node `owner`, at `offset` in it. */
static int tfield_place(hp *h, uint32_t owner, uint64_t offset) {
    tfield f = {0};
    if (h->ntf == 0 || tfield_get(h, h->ntf - 1, &f) < 0) return corrupt(h);
    f.owner = owner;
    f.offset = offset;
    return pool_put(h, &h->kb->tfields, rec_at(h->ntf - 1, sizeof f), &f, sizeof f, NPZS_R_NOMEM_DESCR);
}

/* The accepted header's tree, with pointers: a struct's fields made contiguous (in order).  The
 * published block holds the nodes, then the fields; each node's field count, first field and
 * the fields placed so far are counted in its record first, so the block is only written. */
static int tree_publish(hp *h) {
    npzs__harray *c = h->a;
    npzs__hkept *kb = h->kb;
    size_t fields_at = (size_t)h->ntn * sizeof(npzs_dtnode), bytes = fields_at + (size_t)h->ntf * sizeof(npzs_dtfield);
    if (tree_room(h, bytes) < 0) return -1;
    tnode t = {0};
    tfield f = {0};
    for (uint32_t k = 0; k < h->ntf; k++) { /* each node's field count */
        if (tfield_get(h, k, &f) < 0 || tnode_get(h, f.owner, &t) < 0) return -1;
        t.count++;
        if (tnode_put(h, f.owner, &t) < 0) return -1;
    }
    uint32_t at = 0;
    for (uint32_t k = 0; k < h->ntn; k++) { /* where each node's fields start */
        if (tnode_get(h, k, &t) < 0) return -1;
        if (t.count > h->ntf - at) return corrupt(h);
        t.first = at;
        at += t.count;
        if (tnode_put(h, k, &t) < 0) return -1;
    }
    for (uint32_t k = 0; k < h->ntf; k++) {
        npzs_dtfield of;
        if (tfield_get(h, k, &f) < 0 || tnode_get(h, f.owner, &t) < 0) return -1;
        if (f.noff > h->sc_cap || f.toff > h->sc_cap || t.fill >= t.count) return corrupt(h);
        memset(&of, 0, sizeof of);
        of.name = (const char *)h->sc + f.noff;
        of.name_len = f.nlen;
        of.title = f.titled ? (const char *)h->sc + f.toff : NULL;
        of.title_len = f.titled ? f.tlen : 0;
        of.offset = f.offset;
        of.type = f.type;
        size_t slot = (size_t)t.first + t.fill;
        t.fill++;
        if (slot >= h->ntf) return corrupt(h);
        if (tree_put(h, fields_at + slot * sizeof of, &of, sizeof of) < 0 || tnode_put(h, f.owner, &t) < 0) return -1;
    }
    for (uint32_t k = 0; k < h->ntn; k++) {
        npzs_dtnode o;
        if (tnode_get(h, k, &t) < 0) return -1;
        memset(&o, 0, sizeof o);
        o.kind = t.kind;
        o.itemsize = t.itemsize;
        o.count = t.count;
        o.first = t.first;
        if (o.kind == NPZS_DT_SCALAR) {
            if (t.str_at >= h->tstrs_used || !(o.dtype = pool_ptr(h, &kb->tstrs, t.str_at))) return corrupt(h);
        }
        if (o.kind == NPZS_DT_SUBARRAY) {
            if (t.dims_at > h->tdims_used || t.ndim > (h->tdims_used - t.dims_at) / 8 ||
                t.dims_at % NPZS_POOL_CHUNK + (size_t)t.ndim * 8 > NPZS_POOL_CHUNK || /* place_at's */
                !(o.shape = pool_ptr(h, &kb->tdims, t.dims_at)))
                return corrupt(h);
            o.base = t.base;
            o.ndim = t.ndim;
        }
        if (tree_put(h, (size_t)k * sizeof o, &o, sizeof o) < 0) return -1;
    }
    c->info.dt_nodes = kb->dt;
    c->info.dt_nnodes = h->ntn;
    c->info.dt_fields = (const npzs_dtfield *)((const uint8_t *)kb->dt + fields_at); /* fields_at <= bytes */
    c->info.dt_nfields = h->ntf;
    return 0;
}

/* ---- structured descr: an iterative parser ----------------------------------------------
 * A field list nests field lists and (type, shape) subarrays to any depth up to max_depth; the
 * nesting lives in an explicit stack of frames (a list and its field per level: at most
 * 2 * max_depth + 1, in a kept pool that grows with the nesting met), never on the C stack, so no
 * limit the API accepts can overflow it.
 *
 *   list  := '[' [field (',' field)* [',']] ']'          itemsize: the sum of the fields
 *   field := '(' name-or-(title, name) ',' type [',' shape] [','] ')'
 *   type  := string | list | '(' type ',' shape [','] ')'   (a subarray)
 *   shape := int | '(' int, ... ')'
 *
 * A type at nesting depth d (the top-level list is 1; a list or subarray inside a field of a
 * depth-d list is at d + 1) deeper than max_depth is refused at its first token. */
enum { F_LIST, F_FIELD, F_SUB };

typedef struct dframe {
    uint8_t kind, stage, titled, first;
    uint32_t depth, group;
    uint64_t size;                   /* list: the running sum; field, subarray: the type's itemsize */
    int tflags;                      /* field, subarray: the type's T_* bits */
    uint32_t node;                   /* list: its struct node; field: its type's node */
    uint32_t noff, nlen, toff, tlen; /* field: name and title in scratch */
    size_t at, name_at, title_at;    /* list: the current field's start; subarray: its '(' */
} dframe;

/* A shape applied to a type, as NumPy's _convert_from_tuple does (descriptor.c, the same in 1.24
 * and 2.x): a zero-size S/U/V with an integer n is a type n wide (U: n characters), any other
 * type gets a subarray whose dimensions, element count and byte size must each fit a C int.
 * bare: the shape was an integer, not a tuple.  A bare 1 is refused: NumPy 1.x reads (type, 1)
 * as the type itself (with a FutureWarning), 2.x as a (1,) subarray. */
static int apply_shape(hp *h, uint64_t *isz, int *tflags, const uint64_t *dims, uint32_t nd, int bare, size_t at) {
    if (*tflags & T_UNSIZED) {
        if (!bare) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_WIDTH_TUPLE);
        uint64_t w = dims[0], max = (*tflags & T_UNICODE) ? ITEMSIZE_MAX / 4 : ITEMSIZE_MAX;
        if (w > max) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_WIDTH_SIZE);
        *isz = (*tflags & T_UNICODE) ? 4 * w : w;
        *tflags &= ~T_UNSIZED;
        return 0;
    }
    if (bare && dims[0] == 1) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_SHAPE_ONE);
    uint64_t items = 1;
    for (uint32_t k = 0; k < nd && k < NPZS_MAX_NDIM; k++) {
        uint64_t d = dims[k];
        if (d > ITEMSIZE_MAX) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_DIM);
        if (d && items > UINT64_C(0x7FFFFFFFFFFFFFFF) / d)
            return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_COUNT_OVF);
        items *= d;
    }
    if (items > ITEMSIZE_MAX) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_COUNT);
    if (items && *isz > ITEMSIZE_MAX / items) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_FIELD_SIZE);
    *isz *= items;
    *tflags &= ~T_UNSIZED;
    return 0;
}

/* A shape: an integer or a tuple of integers (at most max_ndim of them). */
static int shape_value(hp *h, uint64_t *dims, uint32_t *nd, int *bare) {
    ws(h);
    *bare = peek(h) != '(';
    if (!*bare) return int_tuple(h, NPZS_E_BAD_HEADER, dims, NULL, h->lim->max_ndim, nd);
    *nd = 1;
    return integer(h, NPZS_E_BAD_HEADER, &dims[0]);
}

/* The frame on top of the stack is descr_list's local `cur`; the frames below it (its parents)
 * are saved in the kept block `frames`, sp of them.  A list is refused at its '[' when too
 * deep; a subarray at its base type (begin_type). */
static int push(hp *h, uint32_t *sp, dframe *cur, int kind, uint32_t depth, uint32_t group) {
    npzs__hkept *kb = h->kb;
    if (kind == F_LIST && depth > h->lim->max_depth) {
        if (!h->quiet) npzs__limit_need(h->p, depth);
        return hfail(h, NPZS_E_LIMIT, h->i, NPZS_R_LIMIT_DEPTH);
    }
    if (*sp + 1 >= 2 * h->lim->max_depth + 1) /* cannot happen: depth grows with every second frame */
        return npzs__fail(h->p, NPZS_E_BAD_CALL, h->here, NPZS_R_CALL_DESCR_STACK);
    /* the stack grows with the nesting met, not the limit */
    if (pool_put(h, &kb->frames, rec_at(*sp, sizeof *cur), cur, sizeof *cur, NPZS_R_NOMEM_DESCR) < 0) return -1;
    ++*sp;
    memset(cur, 0, sizeof *cur);
    cur->kind = (uint8_t)kind;
    cur->depth = depth;
    cur->group = group;
    cur->first = 1;
    return 0;
}

/* The frame below the top becomes the top again. */
static int pop(hp *h, uint32_t *sp, dframe *cur) {
    if (*sp == 0) return npzs__fail(h->p, NPZS_E_BAD_CALL, h->here, NPZS_R_CALL_DESCR_FRAME);
    --*sp;
    return pool_get(h, &h->kb->frames, rec_at(*sp, sizeof *cur), cur, sizeof *cur);
}

/* A type at depth d for the frame on top: a string gives its size now (0), a list or a
 * subarray pushes a frame whose size arrives when it is popped (1). */
static int begin_type(hp *h, uint32_t *sp, dframe *cur, uint32_t d, uint64_t *rsize, int *rflags, uint32_t *rnode) {
    ws(h);
    int ch = peek(h);
    if (d > h->lim->max_depth) {
        if (!h->quiet) npzs__limit_need(h->p, d);
        return hfail(h, NPZS_E_LIMIT, h->i, NPZS_R_LIMIT_DEPTH);
    }
    if (ch == '\'' || ch == '"') {
        size_t at = h->i;
        uint32_t off = 0, len = 0;
        char dtype[48] = {0};
        if (str(h, &off, &len) < 0) return -1;
        if (type_string(h, off, len, at, rsize, rflags, dtype) < 0) return -1;
        long k = tnode_scalar(h, dtype, *rsize);
        if (k < 0) return -1;
        *rnode = (uint32_t)k;
        return 0;
    }
    if (ch == '[') {
        if (push(h, sp, cur, F_LIST, d + 1, 0) < 0) return -1;
        long k = tnode_new(h, NPZS_DT_STRUCT, 0, 0, 0, 0, 0);
        if (k < 0) return -1;
        cur->node = (uint32_t)k;
        return 1;
    }
    if (ch == '(') {
        size_t at = h->i;
        h->i++;
        if (push(h, sp, cur, F_SUB, d + 1, 0) < 0) return -1;
        cur->at = at;
        return 1;
    }
    return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_DESCR_TYPE_FORM);
}

/* The field list at h->i (the descr value); *itemsize the struct's size. */
static int descr_list(hp *h, uint64_t *itemsize) {
    dframe cur; /* the frame on top; its parents are saved (push, pop) */
    uint32_t sp = 0;
    uint64_t rsize = 0; /* the size (and T_* bits, node) of the type that was completed last */
    int rflags = 0;
    uint32_t rnode = 0;
    h->ntn = h->ntf = 0;
    h->tdims_used = h->tstrs_used = 0;
    memset(&cur, 0, sizeof cur); /* the top-level list, at depth 1 (max_depth is at least 1) */
    cur.kind = F_LIST;
    cur.depth = 1;
    cur.first = 1;
    if (tnode_new(h, NPZS_DT_STRUCT, 0, 0, 0, 0, 0) < 0) return -1; /* node 0 */
    for (;;) {
        dframe *f = &cur;
        int r;
        switch (f->kind) {
        case F_LIST:
            if (f->stage == 0) {
                ws(h);
                h->i++; /* the '[' that begin_type or the header's dict saw */
                f->group = h->groups++;
                f->stage = 1;
            } else if (f->stage == 2) { /* a field was completed (its offset: the size so far) */
                if (rsize > ITEMSIZE_MAX - f->size)
                    return hfail(h, NPZS_E_SIZE_OVERFLOW, f->at, NPZS_R_DESCR_STRUCT_SIZE);
                if ((rflags & T_NAMED) && tfield_place(h, f->node, f->size) < 0) return -1;
                f->size += rsize;
                f->stage = 1;
            }
            ws(h);
            if (!f->first && peek(h) != ']') {
                if (peek(h) != ',') return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_DESCR_LIST_COMMA);
                h->i++;
                ws(h);
            }
            if (peek(h) == ']') {
                h->i++;
                rsize = f->size;
                rflags = 0;
                rnode = f->node;
                tnode t = {0};
                if (tnode_get(h, rnode, &t) < 0) return -1;
                t.itemsize = rsize;
                if (tnode_put(h, rnode, &t) < 0) return -1;
                if (sp == 0) {
                    *itemsize = rsize;
                    return 0;
                }
                if (pop(h, &sp, &cur) < 0) return -1;
                continue;
            }
            f->first = 0;
            f->at = h->i;
            f->stage = 2;
            if (push(h, &sp, &cur, F_FIELD, f->depth, f->group) < 0) return -1;
            continue;

        case F_FIELD:
            if (f->stage == 0) {
                if (expect(h, '(', NPZS_E_BAD_HEADER, NPZS_R_DESCR_FIELD_TUPLE) < 0) return -1;
                ws(h);
                f->name_at = h->i;
                if (peek(h) == '(') {
                    h->i++;
                    ws(h);
                    f->title_at = h->i;
                    if (peek(h) != '\'' && peek(h) != '"' && !prefix_char(peek(h)))
                        return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_DESCR_TITLE_TYPE);
                    if (str(h, &f->toff, &f->tlen) < 0) return -1;
                    if (expect(h, ',', NPZS_E_BAD_HEADER, NPZS_R_DESCR_TITLE_COMMA) < 0) return -1;
                    ws(h);
                    f->name_at = h->i;
                    if (str(h, &f->noff, &f->nlen) < 0) return -1;
                    ws(h);
                    if (peek(h) == ',') h->i++;
                    if (expect(h, ')', NPZS_E_BAD_HEADER, NPZS_R_DESCR_TITLE_CLOSE) < 0) return -1;
                    f->titled = 1;
                } else if (str(h, &f->noff, &f->nlen) < 0) {
                    return -1;
                }
                if (expect(h, ',', NPZS_E_BAD_HEADER, NPZS_R_DESCR_NAME_COMMA) < 0) return -1;
                f->stage = 1;
                if ((r = begin_type(h, &sp, &cur, f->depth, &rsize, &rflags, &rnode)) < 0) return -1;
                if (r) continue;
            }
            /* the type is complete: an optional shape, the closing parenthesis */
            f->size = rsize;
            f->tflags = rflags;
            f->node = rnode;
            ws(h);
            if (peek(h) == ',') {
                h->i++;
                ws(h);
                if (peek(h) != ')') {
                    uint64_t dims[NPZS_MAX_NDIM] = {0};
                    uint32_t nd = 0;
                    int bare;
                    size_t at = h->i;
                    if (shape_value(h, dims, &nd, &bare) < 0) return -1;
                    int widen = (f->tflags & T_UNSIZED) != 0;
                    if (apply_shape(h, &f->size, &f->tflags, dims, nd, bare, at) < 0) return -1;
                    long k = widen ? tnode_widened(h, f->node, f->size) : tnode_shaped(h, f->node, dims, nd, f->size);
                    if (k < 0) return -1;
                    f->node = (uint32_t)k;
                    ws(h);
                    if (peek(h) == ',') h->i++;
                }
            }
            if (expect(h, ')', NPZS_E_BAD_HEADER, NPZS_R_DESCR_FIELD_CLOSE) < 0) return -1;
            if (f->nlen == 0) {
                /* padding: its bytes count, it has no name */
                if (!(f->tflags & T_VOID) || f->titled)
                    return hfail(h, NPZS_E_BAD_HEADER, f->name_at, NPZS_R_DESCR_EMPTY_NAME);
            } else {
                if (add_name(h, f->group, f->noff, f->nlen, f->name_at) < 0) return -1;
                if (f->titled && add_name(h, f->group, f->toff, f->tlen, f->title_at) < 0) return -1;
                /* owner and offset are the list's to give (stage 2 above) */
                if (tfield_add(h, f->node, f->noff, f->nlen, f->titled, f->toff, f->tlen) < 0) return -1;
            }
            rsize = f->size;
            rflags = f->tflags | (f->nlen ? T_NAMED : 0);
            if (pop(h, &sp, &cur) < 0) return -1;
            continue;

        case F_SUB:
            if (f->stage == 0) { /* '(' was taken: the base type */
                f->stage = 1;
                if ((r = begin_type(h, &sp, &cur, f->depth, &rsize, &rflags, &rnode)) < 0) return -1;
                if (r) continue;
            }
            {
                uint64_t dims[NPZS_MAX_NDIM] = {0}, isz = rsize;
                uint32_t nd = 0, base = rnode;
                int bare, tflags = rflags;
                if (expect(h, ',', NPZS_E_BAD_HEADER, NPZS_R_DESCR_SUB_COMMA) < 0) return -1;
                if (shape_value(h, dims, &nd, &bare) < 0) return -1;
                ws(h);
                if (peek(h) == ',') h->i++;
                if (expect(h, ')', NPZS_E_BAD_HEADER, NPZS_R_DESCR_SUB_CLOSE) < 0) return -1;
                int widen = (tflags & T_UNSIZED) != 0;
                if (apply_shape(h, &isz, &tflags, dims, nd, bare, f->at) < 0) return -1;
                long k = widen ? tnode_widened(h, base, isz) : tnode_shaped(h, base, dims, nd, isz);
                if (k < 0) return -1;
                rsize = isz;
                rflags = tflags;
                rnode = (uint32_t)k;
            }
            if (pop(h, &sp, &cur) < 0) return -1;
            continue;
        }
        return npzs__fail(h->p, NPZS_E_BAD_CALL, h->here, NPZS_R_CALL_DESCR_FRAME);
    }
}

static int name_get(hp *h, size_t k, name_ref *r) { return rec_get(h, &h->kb->names, k, h->nnames, r, sizeof *r); }

static int name_put(hp *h, size_t k, const name_ref *r) {
    return rec_put(h, &h->kb->names, k, h->nnames, r, sizeof *r, NPZS_R_NOMEM_FIELDS);
}

/* memcmp of l bytes of scratch at x and at y, each byte checked against scratch: SC_OUT for a
 * byte past it (cannot happen: names are decoded into it). */
enum { SC_OUT = 2 };
static int sc_cmp(const hp *h, size_t x, size_t y, size_t l) {
    for (size_t k = 0; k < l; k++) {
        size_t a = x + k, b = y + k; /* bounded by the checks themselves, not by x and y */
        if (a >= h->sc_cap || b >= h->sc_cap) return SC_OUT;
        if (h->sc[a] != h->sc[b]) return h->sc[a] < h->sc[b] ? -1 : 1;
    }
    return 0;
}

/* The order of the duplicate check: by field list, then the decoded bytes, then the length,
 * then the position (a name and its duplicate end up side by side). */
static int cmp_names(const hp *h, const name_ref *x, const name_ref *y) {
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    size_t l = x->len < y->len ? x->len : y->len;
    int c = sc_cmp(h, x->off, y->off, l);
    if (c == SC_OUT) return 0; /* cannot happen (dup_names reports it) */
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

static int name_swap(hp *h, size_t a, size_t b) {
    name_ref x = {0}, y = {0};
    if (name_get(h, a, &x) < 0 || name_get(h, b, &y) < 0 || name_put(h, a, &y) < 0 || name_put(h, b, &x) < 0) return -1;
    return 0;
}

/* Heap sort of names [0, n): O(n log n) whatever the input, no recursion, no allocation. */
static int sift_down(hp *h, size_t r, size_t n) {
    name_ref x = {0}, y = {0};
    for (;;) {
        size_t c = 2 * r + 1;
        if (c >= n) return 0;
        if (name_get(h, c, &x) < 0) return -1;
        if (c + 1 < n) {
            if (name_get(h, c + 1, &y) < 0) return -1;
            if (cmp_names(h, &x, &y) < 0) {
                c++;
                x = y;
            }
        }
        if (name_get(h, r, &y) < 0) return -1;
        if (cmp_names(h, &y, &x) >= 0) return 0;
        if (name_swap(h, r, c) < 0) return -1;
        r = c;
    }
}

static int sort_names(hp *h) {
    size_t n = h->nnames;
    if (n < 2) return 0;
    for (size_t start = n / 2; start-- > 0;)
        if (sift_down(h, start, n) < 0) return -1;
    for (size_t end = n - 1; end > 0; end--)
        if (name_swap(h, 0, end) < 0 || sift_down(h, 0, end) < 0) return -1;
    return 0;
}

/* Two names of one field list that decode to the same text: the later one is refused. */
static int dup_names(hp *h) {
    if (h->nnames < 2) return 0;
    if (sort_names(h) < 0) return -1;
    name_ref a = {0}, b = {0};
    if (name_get(h, 0, &a) < 0) return -1;
    for (size_t k = 1; k < h->nnames; k++, a = b) {
        if (name_get(h, k, &b) < 0) return -1;
        if (a.group != b.group || a.len != b.len) continue;
        int c = sc_cmp(h, a.off, b.off, a.len);
        if (c == SC_OUT) return corrupt(h);
        if (c == 0) return hfail(h, NPZS_E_BAD_HEADER, a.at > b.at ? a.at : b.at, NPZS_R_DESCR_DUP_NAME);
    }
    return 0;
}

/* NumPy's writer (format.py, _write_array_header) emits one exact text for a dtype that is a
 * plain type string:
 *
 *   {'descr': '<f4', 'fortran_order': False, 'shape': (16,), }  + spaces + '\n'
 *
 * (keys sorted, repr() of the values, shape "()", "(n,)" or "(n, m, ...)").  fast_header
 * recognises exactly that text in one pass without decoding it; anything else, or anything
 * it is not sure of (object dtypes, leading zeros, a dimension too many, an integer beyond
 * 2**63-1), returns 0 and the general parser below takes the header from the start.  It
 * never reports an error of its own: a recognised text is one the general parser accepts
 * with the same results (fuzz_npy_header checks this on every input).  Returns 1 when the
 * descr is at s[*d0, *d1) (quotes excluded) and shape, ndim, fortran_order are set. */
static int descr_char(uint8_t b) {
    /* '0'-'9' '<' '=' '>' below 64; 'A'-'Z' but 'O', '[' ']' 'a'-'z' '|' from 64 */
    static const uint64_t lo = UINT64_C(0x73FF000000000000), hi = UINT64_C(0x17FFFFFE2FFF7FFE);
    return b < 64 ? (int)((lo >> b) & 1) : b < 128 ? (int)((hi >> (b - 64)) & 1) : 0;
}

static int fast_header(hp *h, const uint8_t *s, size_t n, size_t *d0, size_t *d1, size_t *dim_at) {
    static const char k_descr[] = "{'descr': '", k_fo[] = "', 'fortran_order': ", k_shape[] = ", 'shape': (";
    npzs__harray *c = h->a;
    size_t i = sizeof k_descr - 1;
    if (n < i || memcmp(s, k_descr, i) != 0) return 0;
    *d0 = i;
    while (i < n && descr_char(s[i])) i++;
    *d1 = i;
    if (i == *d0 || i + (sizeof k_fo - 1) > n || memcmp(s + i, k_fo, sizeof k_fo - 1) != 0) return 0;
    i += sizeof k_fo - 1;
    int fo;
    if (i + 5 <= n && memcmp(s + i, "False", 5) == 0) {
        fo = 0;
        i += 5;
    } else if (i + 4 <= n && memcmp(s + i, "True", 4) == 0) {
        fo = 1;
        i += 4;
    } else return 0;
    if (i + (sizeof k_shape - 1) > n || memcmp(s + i, k_shape, sizeof k_shape - 1) != 0) return 0;
    i += sizeof k_shape - 1;
    uint32_t k = 0;
    if (i < n && s[i] == ')') {
        i++;
    } else {
        for (;;) {
            if (k >= h->lim->max_ndim || k >= NPZS_MAX_NDIM || i >= n || s[i] < '0' || s[i] > '9') return 0;
            if (s[i] == '0' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') return 0;
            size_t at = i;
            uint64_t v = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                unsigned dg = (unsigned)(s[i] - '0');
                /* v * 10 + dg <= 2**63 - 1 = 922337203685477580 * 10 + 7 */
                if (v > UINT64_C(922337203685477580) || (v == UINT64_C(922337203685477580) && dg > 7)) return 0;
                v = v * 10 + dg;
                i++;
            }
            dim_at[k] = at;
            c->shape[k++] = v;
            if (i + 1 < n && s[i] == ',' && s[i + 1] == ')' && k == 1) {
                i += 2;
                break;
            } /* (n,) */
            if (i < n && s[i] == ')' && k > 1) {
                i++;
                break;
            } /* (n, m) */
            if (i + 1 < n && s[i] == ',' && s[i + 1] == ' ') {
                i += 2;
                continue;
            }
            return 0;
        }
    }
    if (i + 4 > n || memcmp(s + i, ", }", 3) != 0) return 0;
    i += 3;
    /* the padding: spaces up to a '\n' that ends the text; 8 bytes at a time, the last word
     * ending where the padding ends (it may overlap the one before) */
    if (s[n - 1] != '\n') return 0;
    if (i + 9 <= n) { /* 8 bytes of padding or more */
        uint64_t w, acc = 0;
        for (size_t j = i; j + 8 <= n - 1; j += 8) {
            memcpy(&w, s + j, 8);
            acc |= w ^ UINT64_C(0x2020202020202020);
        }
        memcpy(&w, s + n - 9, 8);
        if ((acc | (w ^ UINT64_C(0x2020202020202020))) != 0) return 0;
    } else {
        for (size_t j = i; j < n - 1; j++)
            if (s[j] != ' ') return 0;
    }
    c->info.ndim = k;
    c->info.fortran_order = fo;
    c->info.structured = 0;
    return 1;
}

/* What both parsers share once the text is accepted: the array size, dtype.str and the
 * descr text as UTF-8 for the HEADER event. */
static int header_finish(hp *h, uint64_t itemsize, size_t descr_at, size_t descr_end, const size_t *dim_at) {
    npzs_parser *p = h->p;
    npzs__harray *c = h->a;
    const uint8_t *s = h->s;
    /* size: NumPy's rule, itemsize times the product of the non-zero dims must fit in intp */
    uint64_t acc = itemsize ? itemsize : 1;
    int zero = 0;
    if (c->info.ndim > NPZS_MAX_NDIM || descr_at > descr_end || descr_end > h->n || h->sc_len > h->sc_cap)
        return corrupt(h);
    for (uint32_t k = 0; k < c->info.ndim; k++) {
        uint64_t d = c->shape[k];
        if (d == 0) {
            zero = 1;
            continue;
        }
        if ((acc > UINT32_MAX || d > UINT32_MAX) && acc > UINT64_C(0x7FFFFFFFFFFFFFFF) / d)
            return npzs__fail_content(p, NPZS_E_SIZE_OVERFLOW, h->text_off + dim_at[k], NPZS_R_HDR_ARRAY_SIZE);
        acc *= d;
        if (acc > UINT64_C(0x7FFFFFFFFFFFFFFF)) /* both below 2**32: the product is exact */
            return npzs__fail_content(p, NPZS_E_SIZE_OVERFLOW, h->text_off + dim_at[k], NPZS_R_HDR_ARRAY_SIZE);
    }
    uint64_t count = 1;
    for (uint32_t k = 0; k < c->info.ndim; k++) count *= c->shape[k];
    c->info.count = count;
    c->info.itemsize = itemsize;
    c->info.nbytes = (zero || !itemsize) ? 0 : acc;
    c->info.shape = c->shape;
    if (c->info.structured) {
        char *o = c->dtype;
        o[0] = '|';
        o[1] = 'V';
        o[2 + put_dec(o + 2, itemsize)] = 0;
    }
    c->info.dtype = c->dtype;
    /* the descr text as UTF-8, NUL-terminated, after the decoded strings in scratch: at most 2
     * bytes a byte of text, where scratch holds 4 (npzs__parse_header_mode) */
    size_t o = h->sc_len;
    for (size_t k = descr_at; k < descr_end; k++) {
        if (h->sc_cap < 3 || o > h->sc_cap - 3) return corrupt(h);
        if (h->v3 || s[k] < 0x80) h->sc[o++] = s[k];
        else {
            h->sc[o++] = (uint8_t)(0xC0 | (s[k] >> 6));
            h->sc[o++] = (uint8_t)(0x80 | (s[k] & 0x3F));
        }
    }
    if (o >= h->sc_cap) return corrupt(h);
    h->sc[o] = 0;
    c->info.descr = (const char *)h->sc + h->sc_len;
    c->info.descr_len = o - h->sc_len;
    return 0;
}

/* Duplicate keys, found before any value is checked: NumPy keeps the last value of a key, so a
 * bad first value followed by a good one loads there.  A scan of the dict's top level from h->i
 * (after the '{'): strings followed by ':' are keys, brackets nest, strings are skipped with their
 * escapes.  A key is decoded by str() as the parser reads it.  Anything the scan does not
 * understand ends it; the parser then reports the error where it meets it. */
static int dup_keys(hp *h) {
    size_t save = h->i, sc = h->sc_len;
    size_t depth = 0;
    int seen[3] = {0, 0, 0};
    h->quiet = 1;
    static const int rules[3] = {NPZS_R_HDR_DUP_DESCR, NPZS_R_HDR_DUP_FORTRAN, NPZS_R_HDR_DUP_SHAPE};
    int rc = 0;
    while (h->i < h->n) {
        uint8_t b = h->s[h->i];
        if (b == '\'' || b == '"') {
            size_t at = h->i;
            if (depth > 0) { /* skip a string inside a value */
                size_t j = h->i + 1;
                while (j < h->n && h->s[j] != b) j += h->s[j] == '\\' ? 2 : 1;
                if (j >= h->n) break;
                h->i = j + 1;
                continue;
            }
            uint32_t off = 0, len = 0;
            if (str(h, &off, &len) < 0) break;
            ws(h);
            if (peek(h) != ':') continue;
            int k = str_is(h, off, len, "descr")           ? 0
                    : str_is(h, off, len, "fortran_order") ? 1
                    : str_is(h, off, len, "shape")         ? 2
                                                           : -1;
            if (k >= 0) {
                if (seen[k]) {
                    h->quiet = 0;
                    rc = hfail(h, NPZS_E_BAD_HEADER, at, rules[k]);
                    goto done;
                }
                seen[k] = 1;
            }
            h->i++;
            continue;
        }
        if (b == '(' || b == '[' || b == '{') depth++;
        else if (b == ')' || b == ']' || b == '}') {
            if (depth-- == 0) break;
        }
        h->i++;
    }
done:
    h->quiet = 0;
    if (rc == 0) { /* the parser starts again where the scan started */
        h->i = save;
        h->sc_len = sc;
    }
    return rc;
}

/* s: the header text (after the preamble), n bytes (a 4-byte header_len: below 4 GiB); x: the
 * call's part of a parser, whose kept buffers are what an earlier parse left (or none) */
/*@ requires \valid_read(x) && \valid(x->kept) && \valid(x->arr) && \valid_read(x->lim);
    requires n <= 0xFFFFFFFF && (n == 0 || \valid_read(s + (0 .. n - 1))); */
int npzs__parse_header(const npzs__hdr *x, const uint8_t *s, size_t n, int v3, uint64_t text_off) {
    NPZS_REQUIRE(x && x->p && x->kept && x->arr && x->lim && (s || n == 0) && (uint64_t)n <= 0xFFFFFFFFu);
    return npzs__parse_header_mode(x, s, n, v3, text_off, NPZS__HDR_AUTO);
}

static int parse(hp *h, const uint8_t *s, size_t n, int mode);

/*@ requires \valid_read(x) && \valid(x->kept) && \valid(x->arr) && \valid_read(x->lim);
    requires n <= 0xFFFFFFFF && (n == 0 || \valid_read(s + (0 .. n - 1)));
    requires NPZS__HDR_AUTO <= mode <= NPZS__HDR_FAST; */
int npzs__parse_header_mode(const npzs__hdr *x, const uint8_t *s, size_t n, int v3, uint64_t text_off, int mode) {
    NPZS_REQUIRE(x && x->p && x->kept && x->arr && x->lim && (s || n == 0) && (uint64_t)n <= 0xFFFFFFFFu &&
                 mode >= NPZS__HDR_AUTO && mode <= NPZS__HDR_FAST);
    hp h;
    hp_start(&h, x, text_off);
    h.s = s;
    h.n = n;
    h.v3 = v3;
    int rc = parse(&h, s, n, mode);
    return rc < 0 ? -1 : rc; /* the error is the one recorded on x->p */
}

/* The parse: 0, NPZS__HDR_NOT_FAST, or < 0 (recorded). */
static int parse(hp *h, const uint8_t *s, size_t n, int mode) {
    npzs__harray *c = h->a;
    npzs__hkept *kb = h->kb;
    const npzs_limits *lim = h->lim;
    size_t dim_at[NPZS_MAX_NDIM] = {0}; /* read for a dimension's offset in an error */

    if (h->v3) {
        size_t cps = 0, bad = 0;
        if (npzs__utf8_count(s, n, &cps, &bad) < 0) return hfail(h, NPZS_E_BAD_HEADER, bad, NPZS_R_HDR_UTF8);
        if ((uint64_t)cps > lim->max_header_size) {
            npzs__limit_need(h->p, cps);
            return npzs__fail_content(h->p, NPZS_E_HEADER_TOO_LARGE, 8, NPZS_R_HDR_TOO_LARGE_CHARS);
        }
    }
    /* scratch: decoded strings never exceed 2 bytes per header byte; the UTF-8 copy of
     * the descr text (for the HEADER event) needs as much again */
    if (!kb->scratch || !kb->scratch_cap) { /* none kept (npzs__header_release keeps the two together) */
        kb->scratch = NULL;
        kb->scratch_cap = 0;
    }
    size_t cap0 = kb->scratch_cap;
    if (npzs__buffer(h->p, (void **)&kb->scratch, &kb->scratch_cap, 4 * n + 16, h->here, NPZS_R_NOMEM_HEADER) < 0)
        return -1;
    if (kb->scratch_cap != cap0) memset(kb->scratch, 0, kb->scratch_cap); /* a new block: no byte left unset */
    h->sc = kb->scratch;
    h->sc_cap = kb->scratch_cap;

    if (mode != NPZS__HDR_GENERAL) {
        size_t d0 = 0, d1 = 0;
        if (fast_header(h, s, n, &d0, &d1, dim_at)) {
            uint64_t itemsize = 0;
            int is_void;
            if (d0 == 0 || d0 > d1 || d1 >= n || d1 - d0 > h->sc_cap) return corrupt(h);
            size_t dl = d1 - d0;
            /* from the last member's type (type_memo_len 0: none) */
            int differs = dl != c->type_memo_len || dl > sizeof c->type_memo;
            for (size_t k = 0; !differs && k < dl && k < sizeof c->type_memo; k++)
                differs = s[d0 + k] != c->type_memo[k];
            if (!differs) {
                itemsize = c->type_memo_itemsize;
                memcpy(c->dtype, c->type_memo_dtype, sizeof c->dtype);
            } else {
                for (size_t j = d0; j < d1; j++) h->sc[j - d0] = s[j];
                if (type_string(h, 0, (uint32_t)dl, d0 - 1, &itemsize, &is_void, c->dtype) < 0) return -1;
                if (dl <= sizeof c->type_memo) { /* type_string is a function of the text alone */
                    memcpy(c->type_memo, s + d0, dl);
                    c->type_memo_len = dl;
                    c->type_memo_itemsize = itemsize;
                    memcpy(c->type_memo_dtype, c->dtype, sizeof c->dtype);
                }
            }
            return header_finish(h, itemsize, d0 - 1, d1 + 1, dim_at);
        }
        if (mode == NPZS__HDR_FAST) return NPZS__HDR_NOT_FAST;
    }

    while (h->i < n && (s[h->i] == ' ' || s[h->i] == '\t')) h->i++;
    if (h->i >= n || s[h->i] != '{') return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_HDR_NOT_DICT);
    h->i++;
    if (dup_keys(h) < 0) return -1;
    int seen_descr = 0, seen_fo = 0, seen_shape = 0;
    size_t descr_at = 0, descr_end = 0;
    uint64_t itemsize = 0;
    int first = 1;
    for (;;) {
        ws(h);
        if (peek(h) == '}') break;
        if (!first) {
            if (peek(h) != ',') return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_HDR_DICT_COMMA);
            h->i++;
            ws(h);
            if (peek(h) == '}') break;
        }
        first = 0;
        size_t key_at = h->i;
        uint32_t koff = 0, klen = 0;
        if (str(h, &koff, &klen) < 0) return -1;
        if (expect(h, ':', NPZS_E_BAD_HEADER, NPZS_R_HDR_DICT_COLON) < 0) return -1;
        ws(h);
        size_t vat = h->i;
        if (str_is(h, koff, klen, "descr")) {
            if (seen_descr) return hfail(h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_DESCR);
            seen_descr = 1;
            descr_at = vat;
            int ch = peek(h);
            if (ch == '\'' || ch == '"') {
                uint32_t off = 0, len = 0;
                int is_void;
                if (str(h, &off, &len) < 0) return -1;
                if (type_string(h, off, len, vat, &itemsize, &is_void, c->dtype) < 0) return -1;
                c->info.structured = 0;
            } else if (ch == '[') {
                if (descr_list(h, &itemsize) < 0) return -1;
                c->info.structured = 1;
            } else {
                return hfail(h, NPZS_E_BAD_HEADER, vat, NPZS_R_HDR_DESCR_FORM);
            }
            descr_end = h->i;
        } else if (str_is(h, koff, klen, "fortran_order")) {
            if (seen_fo) return hfail(h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_FORTRAN);
            seen_fo = 1;
            if (h->i + 4 <= n && memcmp(s + h->i, "True", 4) == 0) {
                c->info.fortran_order = 1;
                h->i += 4;
            } else if (h->i + 5 <= n && memcmp(s + h->i, "False", 5) == 0) {
                c->info.fortran_order = 0;
                h->i += 5;
            } else return hfail(h, NPZS_E_BAD_HEADER, vat, peek(h) == '(' ? NPZS_R_HDR_PAREN : NPZS_R_HDR_FORTRAN);
            int ch = peek(h);
            if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')
                return hfail(h, NPZS_E_BAD_HEADER, vat, NPZS_R_HDR_FORTRAN);
        } else if (str_is(h, koff, klen, "shape")) {
            if (seen_shape) return hfail(h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_SHAPE);
            seen_shape = 1;
            if (peek(h) != '(') return hfail(h, NPZS_E_BAD_SHAPE, vat, NPZS_R_HDR_SHAPE_TUPLE);
            if (int_tuple(h, NPZS_E_BAD_SHAPE, c->shape, dim_at, lim->max_ndim, &c->info.ndim) < 0) return -1;
        } else {
            return hfail(h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_KEY);
        }
    }
    size_t close_at = h->i;
    h->i++;
    if (!seen_descr || !seen_fo || !seen_shape) return hfail(h, NPZS_E_BAD_HEADER, close_at, NPZS_R_HDR_MISSING_KEY);
    while (h->i < n && (s[h->i] == ' ' || s[h->i] == '\t')) h->i++;
    if (h->i < n && s[h->i] == '\n') {
        h->i++;
        if (lim->lenient & NPZS_LENIENT_HEADER_NEWLINE) /* "}\n" then the padding (npyjs) */
            while (h->i < n && s[h->i] == ' ') h->i++;
    }
    if (h->i != n) return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_HDR_AFTER_DICT);

    /* duplicate field names or titles within one field list */
    if (dup_names(h) < 0) return -1;
    if (h->has_object) return hfail(h, NPZS_E_PICKLE, h->obj_at, NPZS_R_PICKLE);
    if (c->info.structured && tree_publish(h) < 0) return -1;
    return header_finish(h, itemsize, descr_at, descr_end, dim_at);
}
