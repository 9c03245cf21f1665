/*
 * npy.c -- the member content machine (.npy preamble, header, data; blobs)
 * and the .npy header parser.
 *
 * The header grammar is the one NumPy's writers emit plus the historical
 * variants found in real files (see SECURITY.md for each rule we enforce
 * where NumPy is more lenient):
 *
 *   header  := [ \t]* '{' ws item (ws ',' ws item)* [ws ','] ws '}' [ \t]* ['\n']
 *   item    := string ws ':' ws value          keys: descr, fortran_order, shape
 *   ws      := [ \t\n]*
 *   string  := '...' | "..."  with the escapes repr() writes
 *   int     := '0' | [1-9][0-9]*   (+ optional [ \t]* 'L' in v1.0/v2.0)
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ------------------------------------------------------------------------ */
/* content machine                                                          */
/* ------------------------------------------------------------------------ */

void npzs__content_start(npzs_parser *p, int top, int direct, int must_be_npy, uint64_t base) {
    npzs_content *c = &p->c;
    c->state = top ? NPZS_C_PRE : NPZS_C_SNIFF;
    c->top = top;
    c->direct = direct;
    c->must_be_npy = must_be_npy;
    c->base = base;
    c->pos = 0;
    c->pre_len = 0;
    c->pre_need = top ? 8 : 6;
    c->hdr_len = c->hlen = 0;
    c->kind = top ? NPZS_KIND_ARRAY : NPZS_KIND_BLOB;
    c->data_left = 0;
    c->crc_head = c->crc_data = 0;
    c->head_len = c->data_len = 0;
    memset(&c->info, 0, sizeof c->info);
}

void npzs__content_release(npzs_parser *p) {
    npzs__free(p, p->c.hdr);
    npzs__free(p, p->c.scratch);
    npzs__free(p, p->c.names);
    npzs__free(p, p->c.frames);
    p->c.hdr = p->c.scratch = NULL;
    p->c.names = p->c.frames = NULL;
    p->c.hdr_cap = p->c.scratch_cap = p->c.names_cap = p->c.frames_cap = 0;
}

uint64_t npzs__content_want(const npzs_parser *p) {
    const npzs_content *c = &p->c;
    switch (c->state) {
    case NPZS_C_DATA: return c->data_left;
    case NPZS_C_DONE: return 0;
    default: return UINT64_MAX;
    }
}

/* Error at content position coff. */
int npzs__fail_content(npzs_parser *p, int code, uint64_t coff, int rule) {
    if (p->err) return p->err; /* the first error stays, with its content offset */
    uint64_t off = p->c.direct ? p->c.base + coff : p->c.base;
    int rc = npzs__fail(p, code, off, rule);
    p->err_coff = coff;
    return rc;
}

static int grow(npzs_parser *p, void **buf, size_t *cap, size_t need) {
    if (*cap >= need) return 0;
    size_t n = *cap ? *cap : 256;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    void *nb = npzs__alloc(p, n);
    if (!nb) return npzs__fail(p, NPZS_E_NOMEM, p->consumed, NPZS_R_NOMEM_HEADER);
    npzs__free(p, *buf);
    *buf = nb;
    *cap = n;
    return 0;
}

/* Preamble complete up to pre_len: check it and decide what comes next. */
static int preamble(npzs_parser *p) {
    npzs_content *c = &p->c;
    if (c->pre_len == 8) { /* the magic was checked byte by byte as it arrived */
        if (!((c->pre[6] == 1 || c->pre[6] == 2 || c->pre[6] == 3) && c->pre[7] == 0))
            return npzs__fail_content(p, NPZS_E_BAD_VERSION, 6, NPZS_R_NPY_VERSION);
        c->pre_need = c->pre[6] == 1 ? 10 : 12;
        return 0;
    }
    uint64_t hlen = c->pre[6] == 1 ? npzs__le16(c->pre + 8) : npzs__le32(c->pre + 8);
    uint64_t maxb = p->lim.max_header_size;
    if (c->pre[6] == 3) maxb = maxb > UINT64_MAX / 4 ? UINT64_MAX : maxb * 4; /* chars counted after decoding */
    if (hlen > maxb)
        return npzs__fail_content(p, NPZS_E_HEADER_TOO_LARGE, 8, NPZS_R_HDR_TOO_LARGE_BYTES);
    c->hlen = (size_t)hlen;
    /* hdr holds the preamble and the text: the member's raw bytes up to its data */
    if (grow(p, (void **)&c->hdr, &c->hdr_cap, c->pre_len + c->hlen + 1) < 0) return p->err;
    memcpy(c->hdr, c->pre, c->pre_len);
    c->hdr_len = 0;
    c->info.version_major = c->pre[6];
    c->info.version_minor = 0;
    c->state = NPZS_C_HDR;
    return 0;
}

static int header_complete(npzs_parser *p) {
    npzs_content *c = &p->c;
    int v3 = c->pre[6] == 3;
    c->crc_head = npzs__crc32(0, c->hdr, c->pre_len + c->hlen);
    if (npzs__parse_header(p, c->hdr + c->pre_len, c->hlen, v3, c->pre_len) < 0) return p->err;
    c->info.header = c->hdr;
    c->info.header_size = c->pre_len + c->hlen;
    c->head_len = c->pre_len + c->hlen;
    c->info.header_len = c->head_len;
    c->data_left = c->info.nbytes;
    /* total output limit, checked as soon as the size is declared */
    uint64_t need = c->head_len + c->info.nbytes;
    if (need > p->lim.max_total_bytes || p->total_out > p->lim.max_total_bytes - need)
        return npzs__fail_content(p, NPZS_E_LIMIT, c->pre_len,
                                  NPZS_R_LIMIT_TOTAL_ARRAY);
    c->state = NPZS_C_HEADER_EVENT;
    return 0;
}

int npzs__content_feed(npzs_parser *p, const uint8_t *buf, size_t len, int zero_copy, size_t *used,
                       npzs_event *ev) {
    npzs_content *c = &p->c;
    size_t i = 0;
    for (;;) {
        NPZS_CVISIT(p, c->state);
        switch (c->state) {
        case NPZS_C_SNIFF:
            if (c->pre_len == 0 && len - i >= 8 && memcmp(buf + i, npy_magic, 6) == 0) {
                /* the whole magic and version at once (the loops below take them byte by byte) */
                memcpy(c->pre, buf + i, 8);
                c->pre_len = 8;
                i += 8;
                c->pos += 8;
                c->kind = NPZS_KIND_ARRAY;
                c->pre_need = 8;
                if (preamble(p) < 0) return p->err;
                c->state = NPZS_C_PRE;
                continue;
            }
            while (i < len && c->pre_len < 6) {
                uint8_t b = buf[i];
                if (b != npy_magic[c->pre_len]) {
                    /* not npy: a blob; the staged bytes are emitted first */
                    if (c->must_be_npy)
                        return npzs__fail(p, NPZS_E_ZIP_UNSUPPORTED, p->rec_off,
                                          NPZS_R_DD_BLOB);
                    c->kind = NPZS_KIND_BLOB;
                    c->state = c->pre_len ? NPZS_C_BLOB_STAGED : NPZS_C_BLOB;
                    break;
                }
                c->pre[c->pre_len++] = b;
                i++;
                c->pos++;
            }
            if (c->state != NPZS_C_SNIFF) continue;
            if (c->pre_len < 6) goto need;
            c->kind = NPZS_KIND_ARRAY;
            c->pre_need = 8;
            c->state = NPZS_C_PRE;
            continue;
        case NPZS_C_PRE:
            while (c->pre_len < c->pre_need) {
                if (i == len) goto need;
                /* reject a wrong magic at its first byte, not after 8 */
                if (c->pre_len < 6 && buf[i] != npy_magic[c->pre_len])
                    return npzs__fail_content(p, NPZS_E_BAD_MAGIC, 0,
                                              NPZS_R_MAGIC_NPY);
                c->pre[c->pre_len++] = buf[i++];
                c->pos++;
                if (c->pre_len == 8 || c->pre_len == c->pre_need) {
                    if (preamble(p) < 0) return p->err;
                    if (c->state == NPZS_C_HDR) break;
                }
            }
            continue;
        case NPZS_C_HDR: {
            size_t n = c->hlen - c->hdr_len;
            if (n > len - i) n = len - i;
            memcpy(c->hdr + c->pre_len + c->hdr_len, buf + i, n);
            c->hdr_len += n;
            i += n;
            c->pos += n;
            if (c->hdr_len < c->hlen) goto need;
            if (header_complete(p) < 0) return p->err;
            continue;
        }
        case NPZS_C_HEADER_EVENT:
            c->state = c->data_left ? NPZS_C_DATA : NPZS_C_DONE;
            ev->type = NPZS_EV_HEADER;
            ev->array = &c->info;
            ev->offset = c->base;
            *used = i;
            return NPZS_EVENT;
        case NPZS_C_DATA: {
            if (i == len) goto need;
            size_t n = len - i;
            if (n > c->data_left) n = (size_t)c->data_left;
            ev->type = NPZS_EV_DATA;
            ev->data = buf + i;
            ev->len = n;
            ev->pos = c->data_len;
            ev->zero_copy = zero_copy;
            ev->offset = c->direct ? c->base + c->pos : c->base;
            c->crc_data = npzs__crc32(c->crc_data, buf + i, n);
            c->data_len += n;
            c->data_left -= n;
            c->pos += n;
            if (!c->data_left) c->state = NPZS_C_DONE;
            *used = i + n;
            return NPZS_EVENT;
        }
        case NPZS_C_DONE:
            if (i == len) goto need;
            if (c->top && (p->lim.lenient & NPZS_LENIENT_NPY_TRAILING)) { /* the driver's tail takes them */
                *used = i;
                return NPZS_NEED_INPUT;
            }
            return npzs__fail_content(p, NPZS_E_TRAILING_DATA, c->pos,
                                      c->top ? NPZS_R_NPY_TRAIL
                                             : NPZS_R_ZIP_MEMBER_TRAIL);
        case NPZS_C_BLOB_STAGED:
            c->state = NPZS_C_BLOB;
            ev->type = NPZS_EV_BLOB;
            ev->data = c->pre;
            ev->len = c->pre_len;
            ev->pos = 0;
            ev->zero_copy = 0;
            ev->offset = c->base;
            c->crc_data = npzs__crc32(0, c->pre, c->pre_len);
            c->data_len = c->pre_len;
            *used = i;
            return NPZS_EVENT;
        case NPZS_C_BLOB: {
            if (i == len) goto need;
            size_t n = len - i;
            ev->type = NPZS_EV_BLOB;
            ev->data = buf + i;
            ev->len = n;
            ev->pos = c->data_len;
            ev->zero_copy = zero_copy;
            ev->offset = c->direct ? c->base + c->pos : c->base;
            c->crc_data = npzs__crc32(c->crc_data, buf + i, n);
            c->data_len += n;
            c->pos += n;
            *used = len;
            return NPZS_EVENT;
        }
        default:
            return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_CONTENT_STATE);
        }
    }
need:
    *used = len;
    return NPZS_NEED_INPUT;
}

int npzs__content_end(npzs_parser *p, npzs_event *ev) {
    npzs_content *c = &p->c;
    switch (c->state) {
    case NPZS_C_SNIFF:
        c->kind = NPZS_KIND_BLOB;
        if (c->pre_len) {
            c->state = NPZS_C_BLOB_STAGED;
            size_t used;
            return npzs__content_feed(p, NULL, 0, 0, &used, ev);
        }
        c->state = NPZS_C_BLOB;
        return NPZS_NEED_INPUT;
    case NPZS_C_PRE:
    case NPZS_C_HDR:
    case NPZS_C_DATA:
        if (c->top) return npzs__fail(p, NPZS_E_TRUNCATED, p->consumed, NPZS_R_TRUNC_ARRAY);
        return npzs__fail(p, NPZS_E_SIZE_MISMATCH, p->consumed,
                          NPZS_R_ZIP_CONTENT_SHORT);
    case NPZS_C_HEADER_EVENT:
    case NPZS_C_BLOB_STAGED: {
        size_t used;
        return npzs__content_feed(p, NULL, 0, 0, &used, ev);
    }
    default:
        return NPZS_NEED_INPUT;
    }
}

/* ------------------------------------------------------------------------ */
/* header parser                                                            */
/* ------------------------------------------------------------------------ */

typedef struct name_ref {
    uint32_t group;  /* which field list */
    uint32_t off, len; /* decoded bytes in scratch */
    uint32_t at;     /* header position of the token, for the error offset */
} name_ref;

typedef struct hp {
    npzs_parser *p;
    const uint8_t *s;
    size_t n, i;
    int v3;
    uint64_t text_off;   /* content offset of s[0] */
    uint8_t *sc;         /* scratch for decoded strings */
    size_t sc_len, sc_cap;
    name_ref *names;
    size_t nnames, names_cap;
    uint32_t groups;
    int has_object;
    size_t obj_at;       /* the first object type string */
    int quiet;           /* failures are not recorded (dup_keys' look-ahead) */
} hp;

/* A syntax error at a byte that shows why better than the check that met it: whitespace NumPy
 * accepts and the grammar does not, a string prefix (u'', b'', r''...), or a second string where
 * a ',' or ':' was expected (implicit concatenation).  All three are strict rules. */
static int why(const hp *h, size_t at, int rule) {
    if (at >= h->n) return rule;
    uint8_t b = h->s[at];
    if (b == '\r' || b == '\f' || b == '\v') return NPZS_R_HDR_WS_CHAR;
    if (b == '#') return NPZS_R_HDR_COMMENT;
    if (b == '\\' && at + 1 < h->n && (h->s[at + 1] == '\n' || h->s[at + 1] == '\r')) return NPZS_R_HDR_CONTINUATION;
    if (strchr("uUrRbBfF", b) && b) {
        size_t j = at + 1;
        if (j < h->n && strchr("uUrRbBfF", h->s[j]) && h->s[j]) j++;
        if (j < h->n && (h->s[j] == '\'' || h->s[j] == '"')) return NPZS_R_STR_PREFIX;
    }
    if ((b == '\'' || b == '"') &&
        (rule == NPZS_R_HDR_DICT_COMMA || rule == NPZS_R_HDR_DICT_COLON || rule == NPZS_R_DESCR_LIST_COMMA ||
         rule == NPZS_R_DESCR_NAME_COMMA || rule == NPZS_R_DESCR_FIELD_CLOSE || rule == NPZS_R_DESCR_TITLE_COMMA ||
         rule == NPZS_R_DESCR_TITLE_CLOSE || rule == NPZS_R_DESCR_SUB_COMMA))
        return NPZS_R_STR_CONCAT;
    return rule;
}

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
    if (cp < 0x80) { o[0] = (uint8_t)cp; h->sc_len += 1; }
    else if (cp < 0x800) { o[0] = (uint8_t)(0xC0 | (cp >> 6)); o[1] = (uint8_t)(0x80 | (cp & 0x3F)); h->sc_len += 2; }
    else if (cp < 0x10000) {
        o[0] = (uint8_t)(0xE0 | (cp >> 12)); o[1] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (uint8_t)(0x80 | (cp & 0x3F)); h->sc_len += 3;
    } else {
        o[0] = (uint8_t)(0xF0 | (cp >> 18)); o[1] = (uint8_t)(0x80 | ((cp >> 12) & 0x3F));
        o[2] = (uint8_t)(0x80 | ((cp >> 6) & 0x3F)); o[3] = (uint8_t)(0x80 | (cp & 0x3F)); h->sc_len += 4;
    }
}

/* Parse a quoted string; its decoded UTF-8 goes to scratch at *off, *len. */
static int str(hp *h, uint32_t *off, uint32_t *len) {
    ws(h);
    int q = peek(h);
    if (q != '\'' && q != '"') return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_STR_EXPECTED);
    size_t start = h->i;
    h->i++;
    if (h->i + 1 < h->n && h->s[h->i] == q && h->s[h->i + 1] == q)
        return hfail(h, NPZS_E_BAD_HEADER, start, NPZS_R_STR_TRIPLE);
    *off = (uint32_t)h->sc_len;
    for (;;) {
        if (h->i >= h->n) return hfail(h, NPZS_E_BAD_HEADER, start, NPZS_R_STR_UNTERMINATED);
        uint8_t b = h->s[h->i];
        if (b == q) { h->i++; break; }
        if (b >= 0x20 && b < 0x7F && b != '\\') { /* a run of plain ASCII: copied at once */
            size_t j = h->i + 1;
            while (j < h->n && h->s[j] >= 0x20 && h->s[j] < 0x7F && h->s[j] != '\\' && h->s[j] != q) j++;
            memcpy(h->sc + h->sc_len, h->s + h->i, j - h->i);
            h->sc_len += j - h->i;
            h->i = j;
            continue;
        }
        if (b < 0x20 || b == 0x7F)
            return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_STR_CONTROL);
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
                if (h->i + (size_t)nd > h->n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_SHORT);
                for (int k = 0; k < nd; k++) {
                    int v = hexval(h->s[h->i + (size_t)k]);
                    if (v < 0) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_HEX);
                    cp = cp * 16 + (uint32_t)v;
                }
                if (cp > 0x10FFFF) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_STR_ESCAPE_RANGE);
                h->i += (size_t)nd;
            }
            put_utf8(h, cp);
            continue;
        }
        if (b < 0x80) { h->sc[h->sc_len++] = b; h->i++; continue; }
        if (!h->v3) { put_utf8(h, b); h->i++; continue; } /* latin-1 */
        /* v3: the UTF-8 was validated already; copy the sequence */
        size_t k = b >= 0xF0 ? 4 : b >= 0xE0 ? 3 : 2;
        memcpy(h->sc + h->sc_len, h->s + h->i, k);
        h->sc_len += k;
        h->i += k;
    }
    *len = (uint32_t)(h->sc_len - *off);
    return 0;
}

static int str_is(hp *h, uint32_t off, uint32_t len, const char *lit) {
    size_t l = strlen(lit);
    return len == l && memcmp(h->sc + off, lit, l) == 0;
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
    if (h->s[at] == '0' && h->i - at > 1) return hfail(h, code, at, NPZS_R_INT_LEADING_ZERO);
    ch = peek(h);
    if (ch == 'x' || ch == 'X' || ch == 'o' || ch == 'O' || ch == 'b' || ch == 'B' || ch == '_' ||
        ch == '.' || ch == 'e' || ch == 'E' || ch == 'j' || ch == 'J' || ch == 'l')
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
        if (k == maxdims) /* bad_shape in a field too: max_ndim is the limit of both */
            return hfail(h, NPZS_E_BAD_SHAPE, h->i, field ? NPZS_R_FIELD_NDIM : NPZS_R_NDIM);
        uint64_t v;
        ws(h);
        if (dims_at) dims_at[k] = h->i;
        if (integer(h, code, &v) < 0) return -1;
        dims[k++] = v;
        ws(h);
        comma = 0;
        if (peek(h) == ',') { comma = 1; h->i++; }
    }
    *ndim = k;
    return 0;
}

static int add_name(hp *h, uint32_t group, uint32_t off, uint32_t len, size_t at) {
    if (h->nnames == h->names_cap) {
        if (h->nnames >= h->p->lim.max_fields)
            return hfail(h, NPZS_E_LIMIT, at, NPZS_R_LIMIT_FIELDS);
        size_t ncap = h->names_cap ? h->names_cap * 2 : 64;
        if (ncap > h->p->lim.max_fields) ncap = h->p->lim.max_fields;
        name_ref *nn = npzs__alloc(h->p, ncap * sizeof *nn);
        if (!nn) return npzs__fail(h->p, NPZS_E_NOMEM, h->p->consumed, NPZS_R_NOMEM_FIELDS);
        if (h->nnames) memcpy(nn, h->names, h->nnames * sizeof *nn);
        npzs__free(h->p, h->names);
        h->names = nn;
        h->names_cap = ncap;
        h->p->c.names = nn;
        h->p->c.names_cap = ncap * sizeof *nn;
    }
    h->names[h->nnames].group = group;
    h->names[h->nnames].off = off;
    h->names[h->nnames].len = len;
    h->names[h->nnames].at = (uint32_t)at;
    h->nnames++;
    return 0;
}

#define ITEMSIZE_MAX UINT64_C(0x7FFFFFFF) /* NumPy keeps itemsize in a C int */
enum { T_VOID = 1, T_UNSIZED = 2, T_UNICODE = 4 }; /* type_string's *is_void bits */

/* A type string, e.g. '<f8'.  Sets itemsize; writes dtype.str into out (48 bytes) when out != NULL.
 * *is_void gets T_VOID for an unstructured void ('V<n>'), which may serve as padding, plus
 * T_UNSIZED for a zero-size S, U or V (NumPy reads ('S0', n) as n bytes wide) and T_UNICODE for U. */
static int type_string(hp *h, uint32_t off, uint32_t len, size_t at, uint64_t *itemsize, int *is_void,
                       char *out) {
    const uint8_t *t = h->sc + off;
    size_t n = len, i = 0;
    *is_void = 0;
    if (n == 0) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_EMPTY);
    int order = t[0];
    if (order != '<' && order != '>' && order != '|' && order != '=') order = 0;
    else i = 1;
    if (i >= n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_TYPE);
    int kind = t[i++];
    /* object arrays first: whatever follows, this is the pickle path */
    if (kind == 'O') {
        if (!h->has_object) h->obj_at = at;
        h->has_object = 1;
        if (i == n || (n - i == 1 && (t[i] == '4' || t[i] == '8'))) {
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
    size_t nd = i - ds;
    if (nd == 0) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_SIZE);
    if (nd > 1 && t[ds] == '0') return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_SIZE_ZERO);
    if (!order) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NO_ORDER);
    int one_byte_ok = 0; /* byte order irrelevant: written as '|' */
    uint64_t isz = 0;
    switch (kind) {
    case 'b': if (sz != 1) goto badsize; isz = 1; one_byte_ok = 1; break;
    case 'i': case 'u':
        if (sz != 1 && sz != 2 && sz != 4 && sz != 8) goto badsize;
        isz = sz; one_byte_ok = sz == 1; break;
    case 'f': if (sz != 2 && sz != 4 && sz != 8 && sz != 16) goto badsize; isz = sz; break;
    case 'c': if (sz != 8 && sz != 16 && sz != 32) goto badsize; isz = sz; break;
    case 'S': case 'V':
        if (ovf || sz > ITEMSIZE_MAX) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_SV_SIZE);
        isz = sz; one_byte_ok = 1; break;
    case 'U':
        if (ovf || sz > ITEMSIZE_MAX / 4) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_U_SIZE);
        isz = sz * 4; break;
    case 'M': case 'm':
        if (sz != 8) goto badsize;
        isz = 8; break;
    default:
        return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_CODE);
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
            size_t ul = e - j;
            const char *u = (const char *)t + j;
            static const char *const units[] = {"Y", "M", "W", "D", "h", "m", "s", "ms", "us",
                                                "ns", "ps", "fs", "as", "generic"};
            int ok = 0;
            for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
                if (strlen(units[k]) == ul && memcmp(units[k], u, ul) == 0) ok = 1 + (int)k;
            if (!ok) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_UNIT);
            if (ok == 14 && j > ms) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_DT_GENERIC);
            if (ok == 14) { unit_start = unit_end = n; } /* [generic] prints as plain M8 */
            else if (j > ms && mult == 1) { unit_start = j; unit_end = e; } /* [1s] prints as [s] */
            else { unit_start = ms; unit_end = e; }
            i = n;
        }
    }
    if (i != n) return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_TEXT);
    /* byte order: '<' or '>' for multi-byte numbers; '|'/'=' mean "native" there, refused */
    if (!one_byte_ok && (order == '|' || order == '='))
        return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_NATIVE);
    *itemsize = isz;
    *is_void = (kind == 'V' ? T_VOID : 0) | (sz == 0 && (kind == 'S' || kind == 'U' || kind == 'V') ? T_UNSIZED : 0) |
               (kind == 'U' ? T_UNICODE : 0);
    if (out) {
        char oc = one_byte_ok ? '|' : (order == '>' ? '>' : '<');
        size_t o = 0;
        out[o++] = oc;
        out[o++] = (char)kind;
        for (size_t k = ds; k < ds + nd && o < 40; k++) out[o++] = (char)t[k];
        if (unit_end > unit_start) {
            out[o++] = '[';
            for (size_t k = unit_start; k < unit_end && o < 46; k++) out[o++] = (char)t[k];
            out[o++] = ']';
        }
        out[o] = 0;
    }
    return 0;
badsize:
    return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_BAD_SIZE);
}

/* ---- structured descr: an iterative parser ----------------------------------------------
 * A field list nests field lists and (type, shape) subarrays to any depth up to max_depth; the
 * nesting lives in an explicit stack of frames (allocated through the hooks, 2 * max_depth + 1
 * of them: a list and its field per level), never on the C stack, so no limit the API accepts can overflow it.
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
    uint64_t size;                 /* list: the running sum; field, subarray: the type's itemsize */
    int tflags;                    /* field, subarray: the type's T_* bits */
    uint32_t noff, nlen, toff, tlen; /* field: name and title in scratch */
    size_t at, name_at, title_at;  /* list: the current field's start; subarray: its '(' */
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
    if (bare && dims[0] == 1)
        return hfail(h, NPZS_E_BAD_HEADER, at, NPZS_R_DESCR_SHAPE_ONE);
    uint64_t items = 1;
    for (uint32_t k = 0; k < nd; k++) {
        if (dims[k] > ITEMSIZE_MAX) return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_DIM);
        if (dims[k] && items > UINT64_C(0x7FFFFFFFFFFFFFFF) / dims[k])
            return hfail(h, NPZS_E_SIZE_OVERFLOW, at, NPZS_R_DESCR_COUNT_OVF);
        items *= dims[k];
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
    if (!*bare) return int_tuple(h, NPZS_E_BAD_HEADER, dims, NULL, h->p->lim.max_ndim, nd);
    *nd = 1;
    return integer(h, NPZS_E_BAD_HEADER, &dims[0]);
}

/* A list is refused at its '[' when too deep; a subarray at its base type (begin_type). */
static int push(hp *h, dframe *fr, uint32_t *sp, int kind, uint32_t depth, uint32_t group) {
    if (kind == F_LIST && depth > h->p->lim.max_depth)
        return hfail(h, NPZS_E_LIMIT, h->i, NPZS_R_LIMIT_DEPTH);
    if (*sp >= 2 * h->p->lim.max_depth + 1) /* cannot happen: depth grows with every second frame */
        return npzs__fail(h->p, NPZS_E_BAD_CALL, h->p->consumed, NPZS_R_CALL_DESCR_STACK);
    dframe *f = &fr[(*sp)++];
    memset(f, 0, sizeof *f);
    f->kind = (uint8_t)kind;
    f->depth = depth;
    f->group = group;
    f->first = 1;
    return 0;
}

/* A type at depth d for the frame on top: a string gives its size now (0), a list or a
 * subarray pushes a frame whose size arrives when it is popped (1). */
static int begin_type(hp *h, dframe *fr, uint32_t *sp, uint32_t d, uint64_t *rsize, int *rflags) {
    ws(h);
    int ch = peek(h);
    if (d > h->p->lim.max_depth) return hfail(h, NPZS_E_LIMIT, h->i, NPZS_R_LIMIT_DEPTH);
    if (ch == '\'' || ch == '"') {
        size_t at = h->i;
        uint32_t off, len;
        if (str(h, &off, &len) < 0) return -1;
        if (type_string(h, off, len, at, rsize, rflags, NULL) < 0) return -1;
        return 0;
    }
    if (ch == '[') return push(h, fr, sp, F_LIST, d + 1, 0) < 0 ? -1 : 1;
    if (ch == '(') {
        size_t at = h->i;
        h->i++;
        if (push(h, fr, sp, F_SUB, d + 1, 0) < 0) return -1;
        fr[*sp - 1].at = at;
        return 1;
    }
    return hfail(h, NPZS_E_BAD_HEADER, h->i, NPZS_R_DESCR_TYPE_FORM);
}

/* The field list at h->i (the descr value); *itemsize the struct's size. */
static int descr_list(hp *h, uint64_t *itemsize) {
    npzs_content *c = &h->p->c;
    /* a list and its field per level: 2 * max_depth frames, and one to spare */
    size_t need = (2 * (size_t)h->p->lim.max_depth + 1) * sizeof(dframe);
    if (c->frames_cap < need) {
        npzs__free(h->p, c->frames);
        c->frames_cap = 0;
        if (!(c->frames = npzs__alloc(h->p, need)))
            return npzs__fail(h->p, NPZS_E_NOMEM, h->p->consumed, NPZS_R_NOMEM_DESCR);
        c->frames_cap = need;
    }
    dframe *fr = c->frames;
    uint32_t sp = 0;
    uint64_t rsize = 0; /* the size (and T_* bits) of the type that was completed last */
    int rflags = 0;
    if (push(h, fr, &sp, F_LIST, 1, 0) < 0) return -1;
    for (;;) {
        dframe *f = &fr[sp - 1];
        int r;
        switch (f->kind) {
        case F_LIST:
            if (f->stage == 0) {
                ws(h);
                h->i++; /* the '[' that begin_type or the header's dict saw */
                f->group = h->groups++;
                f->stage = 1;
            } else if (f->stage == 2) { /* a field was completed */
                if (rsize > ITEMSIZE_MAX - f->size) return hfail(h, NPZS_E_SIZE_OVERFLOW, f->at, NPZS_R_DESCR_STRUCT_SIZE);
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
                if (--sp == 0) { *itemsize = rsize; return 0; }
                continue;
            }
            f->first = 0;
            f->at = h->i;
            f->stage = 2;
            if (push(h, fr, &sp, F_FIELD, f->depth, f->group) < 0) return -1;
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
                    if (peek(h) != '\'' && peek(h) != '"' && !strchr("uUrRbBfF", peek(h) > 0 ? peek(h) : 'x'))
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
                if ((r = begin_type(h, fr, &sp, f->depth, &rsize, &rflags)) < 0) return -1;
                if (r) continue;
            }
            /* the type is complete: an optional shape, the closing parenthesis */
            f->size = rsize;
            f->tflags = rflags;
            ws(h);
            if (peek(h) == ',') {
                h->i++;
                ws(h);
                if (peek(h) != ')') {
                    uint64_t dims[NPZS_MAX_NDIM];
                    uint32_t nd;
                    int bare;
                    size_t at = h->i;
                    if (shape_value(h, dims, &nd, &bare) < 0) return -1;
                    if (apply_shape(h, &f->size, &f->tflags, dims, nd, bare, at) < 0) return -1;
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
            }
            rsize = f->size;
            rflags = f->tflags;
            sp--;
            continue;

        case F_SUB:
            if (f->stage == 0) { /* '(' was taken: the base type */
                f->stage = 1;
                if ((r = begin_type(h, fr, &sp, f->depth, &rsize, &rflags)) < 0) return -1;
                if (r) continue;
            }
            {
                uint64_t dims[NPZS_MAX_NDIM], isz = rsize;
                uint32_t nd;
                int bare, tflags = rflags;
                if (expect(h, ',', NPZS_E_BAD_HEADER, NPZS_R_DESCR_SUB_COMMA) < 0) return -1;
                if (shape_value(h, dims, &nd, &bare) < 0) return -1;
                ws(h);
                if (peek(h) == ',') h->i++;
                if (expect(h, ')', NPZS_E_BAD_HEADER, NPZS_R_DESCR_SUB_CLOSE) < 0) return -1;
                if (apply_shape(h, &isz, &tflags, dims, nd, bare, f->at) < 0) return -1;
                rsize = isz;
                rflags = tflags;
            }
            sp--;
            continue;
        }
        return npzs__fail(h->p, NPZS_E_BAD_CALL, h->p->consumed, NPZS_R_CALL_DESCR_FRAME);
    }
}

static int cmp_names(const void *a, const void *b, const uint8_t *sc) {
    const name_ref *x = a, *y = b;
    if (x->group != y->group) return x->group < y->group ? -1 : 1;
    size_t l = x->len < y->len ? x->len : y->len;
    int c = memcmp(sc + x->off, sc + y->off, l);
    if (c) return c;
    if (x->len != y->len) return x->len < y->len ? -1 : 1;
    return x->at < y->at ? -1 : x->at > y->at;
}

/* Heap sort: O(n log n) whatever the input, no recursion, no allocation. */
static void sort_names(name_ref *v, size_t n, const uint8_t *sc) {
    if (n < 2) return;
    for (size_t start = n / 2; start-- > 0;) {
        size_t r = start;
        for (;;) {
            size_t c = 2 * r + 1;
            if (c >= n) break;
            if (c + 1 < n && cmp_names(&v[c], &v[c + 1], sc) < 0) c++;
            if (cmp_names(&v[r], &v[c], sc) >= 0) break;
            name_ref t = v[r]; v[r] = v[c]; v[c] = t;
            r = c;
        }
    }
    for (size_t end = n - 1; end > 0; end--) {
        name_ref t = v[0]; v[0] = v[end]; v[end] = t;
        size_t r = 0;
        for (;;) {
            size_t c = 2 * r + 1;
            if (c >= end) break;
            if (c + 1 < end && cmp_names(&v[c], &v[c + 1], sc) < 0) c++;
            if (cmp_names(&v[r], &v[c], sc) >= 0) break;
            name_ref t2 = v[r]; v[r] = v[c]; v[c] = t2;
            r = c;
        }
    }
}

/* Strict UTF-8 (no overlongs, no surrogates, <= U+10FFFF).  Returns the code
 * point count, or -1 with *bad at the first byte of the invalid sequence. */
static long utf8_count(const uint8_t *s, size_t n, size_t *bad) {
    long cps = 0;
    size_t i = 0;
    while (i < n) {
        uint8_t b = s[i];
        size_t k;
        uint32_t cp;
        if (b < 0x80) { i++; cps++; continue; }
        if (b >= 0xC2 && b <= 0xDF) { k = 1; cp = b & 0x1Fu; }
        else if (b >= 0xE0 && b <= 0xEF) { k = 2; cp = b & 0x0Fu; }
        else if (b >= 0xF0 && b <= 0xF4) { k = 3; cp = b & 0x07u; }
        else { *bad = i; return -1; }
        for (size_t j = 1; j <= k; j++) {
            if (i + j >= n || (s[i + j] & 0xC0) != 0x80) { *bad = i; return -1; }
            cp = (cp << 6) | (s[i + j] & 0x3Fu);
        }
        if ((k == 2 && cp < 0x800) || (k == 3 && (cp < 0x10000 || cp > 0x10FFFF)) ||
            (cp >= 0xD800 && cp <= 0xDFFF)) { *bad = i; return -1; }
        i += k + 1;
        cps++;
    }
    return cps;
}

int npzs__utf8_valid(const uint8_t *s, size_t n) {
    size_t bad;
    return utf8_count(s, n, &bad) >= 0;
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
    return (b >= '0' && b <= '9') || (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z' && b != 'O') || b == '<' ||
           b == '>' || b == '|' || b == '=' || b == '[' || b == ']';
}

static int fast_header(npzs_parser *p, const uint8_t *s, size_t n, size_t *d0, size_t *d1, size_t *dim_at) {
    static const char k_descr[] = "{'descr': '", k_fo[] = "', 'fortran_order': ", k_shape[] = ", 'shape': (";
    npzs_content *c = &p->c;
    size_t i = sizeof k_descr - 1;
    if (n < i || memcmp(s, k_descr, i) != 0) return 0;
    *d0 = i;
    while (i < n && descr_char(s[i])) i++;
    *d1 = i;
    if (i == *d0 || n - i < sizeof k_fo - 1 || memcmp(s + i, k_fo, sizeof k_fo - 1) != 0) return 0;
    i += sizeof k_fo - 1;
    int fo;
    if (n - i >= 5 && memcmp(s + i, "False", 5) == 0) { fo = 0; i += 5; }
    else if (n - i >= 4 && memcmp(s + i, "True", 4) == 0) { fo = 1; i += 4; }
    else return 0;
    if (n - i < sizeof k_shape - 1 || memcmp(s + i, k_shape, sizeof k_shape - 1) != 0) return 0;
    i += sizeof k_shape - 1;
    uint32_t k = 0;
    if (i < n && s[i] == ')') {
        i++;
    } else {
        for (;;) {
            if (k == p->lim.max_ndim || i >= n || s[i] < '0' || s[i] > '9') return 0;
            if (s[i] == '0' && i + 1 < n && s[i + 1] >= '0' && s[i + 1] <= '9') return 0;
            size_t at = i;
            uint64_t v = 0;
            while (i < n && s[i] >= '0' && s[i] <= '9') {
                unsigned dg = (unsigned)(s[i] - '0');
                if (v > (UINT64_C(0x7FFFFFFFFFFFFFFF) - dg) / 10) return 0;
                v = v * 10 + dg;
                i++;
            }
            dim_at[k] = at;
            c->shape[k++] = v;
            if (i + 1 < n && s[i] == ',' && s[i + 1] == ')' && k == 1) { i += 2; break; } /* (n,) */
            if (i < n && s[i] == ')' && k > 1) { i++; break; }                          /* (n, m) */
            if (i + 1 < n && s[i] == ',' && s[i + 1] == ' ') { i += 2; continue; }
            return 0;
        }
    }
    if (n - i < 4 || memcmp(s + i, ", }", 3) != 0) return 0;
    i += 3;
    for (uint64_t w; n - i >= 8; i += 8) { /* the padding, a word at a time */
        memcpy(&w, s + i, 8);
        if (w != UINT64_C(0x2020202020202020)) break;
    }
    while (i < n && s[i] == ' ') i++;
    if (i + 1 != n || s[i] != '\n') return 0;
    c->info.ndim = k;
    c->info.fortran_order = fo;
    c->info.structured = 0;
    return 1;
}

/* What both parsers share once the text is accepted: the array size, dtype.str and the
 * descr text as UTF-8 for the HEADER event. */
static int header_finish(hp *h, uint64_t itemsize, size_t descr_at, size_t descr_end, const size_t *dim_at) {
    npzs_parser *p = h->p;
    npzs_content *c = &p->c;
    const uint8_t *s = h->s;
    /* size: NumPy's rule, itemsize times the product of the non-zero dims must fit in intp */
    uint64_t acc = itemsize ? itemsize : 1;
    int zero = 0;
    for (uint32_t k = 0; k < c->info.ndim; k++) {
        uint64_t d = c->shape[k];
        if (d == 0) { zero = 1; continue; }
        if (acc > UINT64_C(0x7FFFFFFFFFFFFFFF) / d)
            return npzs__fail_content(p, NPZS_E_SIZE_OVERFLOW, h->text_off + dim_at[k],
                                      NPZS_R_HDR_ARRAY_SIZE);
        acc *= d;
    }
    uint64_t count = 1;
    for (uint32_t k = 0; k < c->info.ndim; k++) count *= c->shape[k];
    c->info.count = count;
    c->info.itemsize = itemsize;
    c->info.nbytes = (zero || !itemsize) ? 0 : acc;
    c->info.shape = c->shape;
    if (c->info.structured) {
        char *o = c->dtype;
        o[0] = '|'; o[1] = 'V';
        uint64_t v = itemsize;
        char tmp[24];
        int l = 0;
        do { tmp[l++] = (char)('0' + v % 10); v /= 10; } while (v);
        for (int k = 0; k < l; k++) o[2 + k] = tmp[l - 1 - k];
        o[2 + l] = 0;
    }
    c->info.dtype = c->dtype;
    /* the descr text as UTF-8, NUL-terminated, after the decoded strings in scratch */
    uint8_t *d = h->sc + h->sc_len, *o = d;
    for (size_t k = descr_at; k < descr_end; k++) {
        if (h->v3 || s[k] < 0x80) *o++ = s[k];
        else { *o++ = (uint8_t)(0xC0 | (s[k] >> 6)); *o++ = (uint8_t)(0x80 | (s[k] & 0x3F)); }
    }
    *o = 0;
    c->info.descr = (const char *)d;
    c->info.descr_len = (size_t)(o - d);
    return 0;
}

/* Duplicate keys, found before any value is checked: NumPy keeps the last value of a key, so a
 * bad first value followed by a good one loads there.  A scan of the dict's top level from h->i
 * (after the '{'): strings followed by ':' are keys, brackets nest, strings are skipped with their
 * escapes.  A key is decoded by str() as the parser reads it.  Anything the scan does not
 * understand ends it; the parser then reports the error where it meets it. */
static int dup_keys(hp *h) {
    size_t save = h->i, sc = h->sc_len;
    int depth = 0, seen[3] = {0, 0, 0};
    h->quiet = 1;
    static const char *const keys[3] = {"descr", "fortran_order", "shape"};
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
            uint32_t off, len;
            if (str(h, &off, &len) < 0) break;
            ws(h);
            if (peek(h) != ':') continue;
            for (int k = 0; k < 3; k++)
                if (str_is(h, off, len, keys[k]) && seen[k]++) {
                    h->quiet = 0;
                    rc = hfail(h, NPZS_E_BAD_HEADER, at, rules[k]);
                    goto done;
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

int npzs__parse_header(npzs_parser *p, const uint8_t *s, size_t n, int v3, uint64_t text_off) {
    return npzs__parse_header_mode(p, s, n, v3, text_off, NPZS__HDR_AUTO);
}

int npzs__parse_header_mode(npzs_parser *p, const uint8_t *s, size_t n, int v3, uint64_t text_off, int mode) {
    npzs_content *c = &p->c;
    hp h;
    memset(&h, 0, sizeof h);
    h.p = p;
    h.s = s;
    h.n = n;
    h.v3 = v3;
    h.text_off = text_off;
    size_t dim_at[NPZS_MAX_NDIM];

    if (v3) {
        size_t bad = 0;
        long cps = utf8_count(s, n, &bad);
        if (cps < 0) return hfail(&h, NPZS_E_BAD_HEADER, bad, NPZS_R_HDR_UTF8);
        if ((uint64_t)cps > p->lim.max_header_size)
            return npzs__fail_content(p, NPZS_E_HEADER_TOO_LARGE, 8,
                                      NPZS_R_HDR_TOO_LARGE_CHARS);
    }
    /* scratch: decoded strings never exceed 2 bytes per header byte; the UTF-8 copy of
     * the descr text (for the HEADER event) needs as much again */
    if (grow(p, (void **)&c->scratch, &c->scratch_cap, 4 * n + 16) < 0) return p->err;
    h.sc = c->scratch;
    h.sc_cap = c->scratch_cap;
    h.names = c->names;
    h.names_cap = c->names_cap / sizeof(name_ref);

    if (mode != NPZS__HDR_GENERAL) {
        size_t d0, d1;
        if (fast_header(p, s, n, &d0, &d1, dim_at)) {
            uint64_t itemsize;
            int is_void;
            memcpy(h.sc, s + d0, d1 - d0);
            h.sc_len = d1 - d0;
            if (type_string(&h, 0, (uint32_t)(d1 - d0), d0 - 1, &itemsize, &is_void, c->dtype) < 0) return p->err;
            return header_finish(&h, itemsize, d0 - 1, d1 + 1, dim_at);
        }
        if (mode == NPZS__HDR_FAST) return NPZS__HDR_NOT_FAST;
    }

    while (h.i < n && (s[h.i] == ' ' || s[h.i] == '\t')) h.i++;
    if (h.i >= n || s[h.i] != '{') return hfail(&h, NPZS_E_BAD_HEADER, h.i, NPZS_R_HDR_NOT_DICT);
    h.i++;
    if (dup_keys(&h) < 0) return p->err;
    int seen_descr = 0, seen_fo = 0, seen_shape = 0;
    size_t descr_at = 0, descr_end = 0;
    uint64_t itemsize = 0;
    int first = 1;
    for (;;) {
        ws(&h);
        if (peek(&h) == '}') break;
        if (!first) {
            if (peek(&h) != ',') return hfail(&h, NPZS_E_BAD_HEADER, h.i, NPZS_R_HDR_DICT_COMMA);
            h.i++;
            ws(&h);
            if (peek(&h) == '}') break;
        }
        first = 0;
        size_t key_at = h.i;
        uint32_t koff, klen;
        if (str(&h, &koff, &klen) < 0) return p->err;
        if (expect(&h, ':', NPZS_E_BAD_HEADER, NPZS_R_HDR_DICT_COLON) < 0) return p->err;
        ws(&h);
        size_t vat = h.i;
        if (str_is(&h, koff, klen, "descr")) {
            if (seen_descr++) return hfail(&h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_DESCR);
            descr_at = vat;
            int ch = peek(&h);
            if (ch == '\'' || ch == '"') {
                uint32_t off, len;
                int is_void;
                if (str(&h, &off, &len) < 0) return p->err;
                if (type_string(&h, off, len, vat, &itemsize, &is_void, c->dtype) < 0) return p->err;
                c->info.structured = 0;
            } else if (ch == '[') {
                if (descr_list(&h, &itemsize) < 0) return p->err;
                c->info.structured = 1;
            } else {
                return hfail(&h, NPZS_E_BAD_HEADER, vat, NPZS_R_HDR_DESCR_FORM);
            }
            descr_end = h.i;
        } else if (str_is(&h, koff, klen, "fortran_order")) {
            if (seen_fo++) return hfail(&h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_FORTRAN);
            if (h.i + 4 <= n && memcmp(s + h.i, "True", 4) == 0) { c->info.fortran_order = 1; h.i += 4; }
            else if (h.i + 5 <= n && memcmp(s + h.i, "False", 5) == 0) { c->info.fortran_order = 0; h.i += 5; }
            else return hfail(&h, NPZS_E_BAD_HEADER, vat, peek(&h) == '(' ? NPZS_R_HDR_PAREN : NPZS_R_HDR_FORTRAN);
            int ch = peek(&h);
            if ((ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '_')
                return hfail(&h, NPZS_E_BAD_HEADER, vat, NPZS_R_HDR_FORTRAN);
        } else if (str_is(&h, koff, klen, "shape")) {
            if (seen_shape++) return hfail(&h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_DUP_SHAPE);
            if (peek(&h) != '(') return hfail(&h, NPZS_E_BAD_SHAPE, vat, NPZS_R_HDR_SHAPE_TUPLE);
            if (int_tuple(&h, NPZS_E_BAD_SHAPE, c->shape, dim_at, p->lim.max_ndim, &c->info.ndim) < 0) return p->err;
        } else {
            return hfail(&h, NPZS_E_BAD_HEADER, key_at, NPZS_R_HDR_KEY);
        }
    }
    size_t close_at = h.i;
    h.i++;
    if (!seen_descr || !seen_fo || !seen_shape)
        return hfail(&h, NPZS_E_BAD_HEADER, close_at, NPZS_R_HDR_MISSING_KEY);
    while (h.i < n && (s[h.i] == ' ' || s[h.i] == '\t')) h.i++;
    if (h.i < n && s[h.i] == '\n') {
        h.i++;
        if (p->lim.lenient & NPZS_LENIENT_HEADER_NEWLINE) /* "}\n" then the padding (npyjs) */
            while (h.i < n && s[h.i] == ' ') h.i++;
    }
    if (h.i != n) return hfail(&h, NPZS_E_BAD_HEADER, h.i, NPZS_R_HDR_AFTER_DICT);

    /* duplicate field names or titles within one field list */
    if (h.nnames > 1) {
        sort_names(h.names, h.nnames, h.sc);
        for (size_t k = 1; k < h.nnames; k++) {
            name_ref *a = &h.names[k - 1], *b = &h.names[k];
            if (a->group == b->group && a->len == b->len && memcmp(h.sc + a->off, h.sc + b->off, a->len) == 0)
                return hfail(&h, NPZS_E_BAD_HEADER, a->at > b->at ? a->at : b->at,
                             NPZS_R_DESCR_DUP_NAME);
        }
    }
    if (h.has_object)
        return hfail(&h, NPZS_E_PICKLE, h.obj_at, NPZS_R_PICKLE);
    return header_finish(&h, itemsize, descr_at, descr_end, dim_at);
}

