/* inv/inv.c -- the fail-closed inventory: the ZIP framing followed alone, after the strict parser
 * has stopped (npzstream_inv.h).  Its states, each taking the bytes of one record part:
 *
 *   START --PK\3\4--> LFH --> LFH_NAME --> LFH_EXTRA --> DATA --(descriptor)--> DD --+
 *     |                ^                                   |                         |
 *     |                +------------------ SIG <-----------+-------------------------+
 *     +--PK\5\6--> EOCD                     |--PK\1\2--> CDH --> CDH_VAR --> SIG
 *                                           |--PK\6\6--> Z64_EOCD (its size, skipped) --> SIG
 *                                           |--PK\6\7--> Z64_LOC --> SIG
 *                                           +--PK\5\6--> EOCD --> (comment skipped) --> END
 *   anything else where a signature must be: DEAD (INV.framing); not a ZIP at START: NOT_ZIP.
 *
 * DATA is delimited by the local header's compressed size, or, with a data descriptor (sizes
 * after the data), by the end of the deflate stream (inflated, the output dropped unless the
 * member is checked) or, for a stored member, by the descriptor itself: a signature whose
 * compressed size equals the bytes since the data began (a 24-byte window slides over the data).
 * Memory: the walker, a 128 KiB staging buffer (a name and an extra block), zlib's state and
 * a 64 KiB output chunk while a member is inflated, a parser for a checked .npy member, and per
 * member its record and name. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "npzstream.h"
#include "npzstream_inv.h"
#include "../base/base.h"
#include "../base/rules.h"
#include "../bytes/bytes.h"

/* A layer over the public API: it sees no parser (internal.h), only the rule table and the byte
 * functions below it, and drives a parser of its own for a checked member as any caller would. */
#ifdef NPZS_INTERNAL_H
#error "inv/ drives the parser through its API: it sees no parser (internal.h)"
#endif

enum {
    W_START = 1,
    W_NOT_ZIP,
    W_SIG,
    W_LFH,
    W_LFH_NAME,
    W_LFH_EXTRA,
    W_DATA,
    W_DD,
    W_CDH,
    W_CDH_VAR,
    W_Z64_EOCD,
    W_Z64_LOC,
    W_EOCD,
    W_SKIP_TO_END,
    W_END,
    W_DEAD
};

#define BIG_SIZE (2u * 65536u) /* a central entry's name and extra block, each at most 65535 bytes */
#define ZOUT_SIZE 65536u
#define WIN 24u /* a ZIP64 data descriptor with its signature */

struct npzs_inv {
    npzs_limits lim;
    npzs_allocator al;
    int state, zip, complete;
    int err; /* the framing's error (sticky) */
    const char *err_rule;
    uint64_t err_off;
    npzs__limit_hit err_lim; /* a limit that stopped the listing: its numbers */
    uint64_t off;            /* absolute offset of the next byte */
    uint64_t check_after;    /* members whose header starts after it are checked */
    uint8_t fix[64];         /* a record's fixed part */
    size_t fix_n, fix_need;
    uint8_t *big; /* names and extra blocks */
    size_t big_n, big_need;
    uint64_t skip;    /* bytes to pass (a comment, a ZIP64 end record's rest) */
    uint64_t rec_off; /* where the record being read began */
    /* the member being read */
    size_t cur;
    uint16_t nlen, xlen, clen;
    int zip64, dd, dd_sig;
    uint64_t data_off, data_in, left;       /* its data's offset, compressed bytes taken, and left (known size) */
    int inflating, z_ready, z_end, z_nomem; /* z_nomem: zlib ran out of memory (not invalid data) */
    z_stream z;
    uint8_t *zout;
    uint8_t win[WIN];
    size_t win_n;
    /* its content, when checked */
    uint64_t out; /* content bytes */
    uint32_t crc;
    uint8_t pre[16];
    size_t pre_n;
    int decided, is_npy, over;
    npzs_parser *child;
    npzs_inv_content_fn fn;
    void *fn_ctx;
    uint64_t total_out; /* content bytes of the checked members, against max_total_bytes */
    /* the members */
    npzs_inv_member *m;
    size_t n, cap, cd_cursor;
};

static void *al_alloc(npzs_inv *v, size_t n) { return v->al.alloc ? v->al.alloc(v->al.opaque, n) : malloc(n); }
static void al_free(npzs_inv *v, void *ptr) {
    if (!ptr) return;
    if (v->al.free) v->al.free(v->al.opaque, ptr);
    else free(ptr);
}
static voidpf z_alloc(voidpf o, uInt items, uInt size) {
    npzs_inv *v = o;
    return (size_t)items > SIZE_MAX / size ? NULL : al_alloc(v, (size_t)items * size);
}
static void z_free(voidpf o, voidpf ptr) { al_free(o, ptr); }

static const char *rule_msg(int rule) {
    const char *msg = npzs__rule_msg(rule);
    return msg ? msg : "";
}

/* The framing stops here (the first such error stays). */
static void die(npzs_inv *v, int code, int rule, uint64_t off) {
    if (!v->err) {
        v->err = code;
        v->err_rule = npzs__rule_id(rule);
        v->err_off = off;
    }
    v->state = W_DEAD;
}

/* The framing stops at a limit (INV.limit): its name, its value in force, what the input needed. */
static void die_limit(npzs_inv *v, uint64_t off, const char *name, uint64_t value, uint64_t needed) {
    if (!v->err) v->err_lim = (npzs__limit_hit){name, value, needed};
    die(v, NPZS_E_LIMIT, NPZS_R_INV_LIMIT, off);
}

static void member_fail(npzs_inv_member *m, int code, const char *rule, const char *msg, uint64_t off, uint64_t coff) {
    if (m->error) return; /* its first error */
    m->error = code;
    m->rule = rule;
    m->message = msg;
    m->error_offset = off;
    m->content_offset = coff;
}

static void member_rule(npzs_inv_member *m, int code, int rule, uint64_t off) {
    member_fail(m, code, npzs__rule_id(rule), rule_msg(rule), off, UINT64_MAX);
}

NPZS__API npzs_inv *npzs_inv_new(const npzs_limits *lim, const npzs_allocator *alloc) {
    npzs_allocator al = {0};
    if (alloc) al = *alloc;
    npzs_inv *v = al.alloc ? al.alloc(al.opaque, sizeof *v) : malloc(sizeof *v);
    if (!v) return NULL;
    memset(v, 0, sizeof *v);
    v->al = al;
    if (lim) v->lim = *lim;
    else npzs_limits_default(&v->lim);
    if (npzs_limits_check(&v->lim)) {
        al_free(v, v);
        return NULL;
    }
    v->big = al_alloc(v, BIG_SIZE);
    if (!v->big) {
        al_free(v, v);
        return NULL;
    }
    npzs_inv_reset(v);
    return v;
}

static void inflate_end(npzs_inv *v) {
    if (v->z_ready) inflateEnd(&v->z);
    v->z_ready = 0;
    v->inflating = 0;
}

NPZS__API void npzs_inv_reset(npzs_inv *v) {
    for (size_t i = 0; i < v->n; i++) al_free(v, (void *)(uintptr_t)v->m[i].name);
    v->n = 0;
    v->cd_cursor = 0;
    inflate_end(v);
    v->state = W_START;
    v->zip = v->complete = 0;
    v->err = 0;
    v->err_rule = NULL;
    v->err_off = 0;
    v->err_lim = (npzs__limit_hit){NULL, 0, 0};
    v->off = 0;
    v->check_after = UINT64_MAX;
    v->fix_n = 0;
    v->fix_need = 4;
    v->total_out = 0;
}

NPZS__API void npzs_inv_free(npzs_inv *v) {
    if (!v) return;
    npzs_inv_reset(v);
    npzs_free(v->child);
    al_free(v, v->zout);
    al_free(v, v->m);
    al_free(v, v->big);
    al_free(v, v);
}

NPZS__API void npzs_inv_check_after(npzs_inv *v, uint64_t offset) {
    if (offset < v->check_after) v->check_after = offset;
}

NPZS__API void npzs_inv_content(npzs_inv *v, npzs_inv_content_fn fn, void *ctx) {
    v->fn = fn;
    v->fn_ctx = ctx;
}

NPZS__API size_t npzs_inv_count(const npzs_inv *v) { return v->n; }
NPZS__API const npzs_inv_member *npzs_inv_get(const npzs_inv *v, size_t i) { return i < v->n ? &v->m[i] : NULL; }
NPZS__API int npzs_inv_is_zip(const npzs_inv *v) { return v->zip; }
NPZS__API int npzs_inv_complete(const npzs_inv *v) { return v->complete; }
NPZS__API int npzs_inv_error(const npzs_inv *v, const char **rule, uint64_t *offset) {
    if (rule) *rule = v->err_rule;
    if (offset) *offset = v->err_off;
    return v->err;
}
NPZS__API int npzs_inv_error_limit(const npzs_inv *v, const char **name, uint64_t *value, uint64_t *needed) {
    return npzs__limit_out(v && v->err == NPZS_E_LIMIT ? &v->err_lim : NULL, name, value, needed);
}

/* A new member record (its name copied): NULL when a limit or the memory stops the listing. */
static npzs_inv_member *add_member(npzs_inv *v, const uint8_t *name, size_t name_len, uint64_t rec_off) {
    if (v->n >= v->lim.max_members) {
        die_limit(v, rec_off, "max_members", v->lim.max_members, (uint64_t)v->n + 1);
        return NULL;
    }
    if (v->n == v->cap) {
        size_t nc = v->cap ? v->cap * 2 : 16;
        npzs_inv_member *nm = al_alloc(v, nc * sizeof *nm);
        if (!nm) {
            die(v, NPZS_E_NOMEM, NPZS_R_NOMEM_RECORDS, rec_off);
            return NULL;
        }
        if (v->n) memcpy(nm, v->m, v->n * sizeof *nm);
        al_free(v, v->m);
        v->m = nm;
        v->cap = nc;
    }
    char *nb = al_alloc(v, name_len ? name_len : 1);
    if (!nb) {
        die(v, NPZS_E_NOMEM, NPZS_R_NOMEM_NAMES, rec_off);
        return NULL;
    }
    memcpy(nb, name, name_len);
    npzs_inv_member *m = &v->m[v->n++];
    memset(m, 0, sizeof *m);
    m->name = nb;
    m->name_len = name_len;
    m->offset = rec_off;
    m->content_offset = UINT64_MAX;
    return m;
}

/* ZIP64 extra (id 1) of a block: the 64-bit values of the 32-bit fields that are 0xFFFFFFFF, in
 * the order size, compressed size, offset.  Returns 1 when the block holds one. */
static int zip64_extra(const uint8_t *x, size_t n, uint64_t *size, uint64_t *csize, uint64_t *off) {
    for (size_t i = 0; i + 4 <= n;) {
        uint16_t id = npzs__le16(x + i), len = npzs__le16(x + i + 2);
        if (i + 4 + len > n) return 0;
        if (id == 1) {
            const uint8_t *f = x + i + 4;
            size_t k = 0;
            if (*size == 0xFFFFFFFFu && k + 8 <= len) {
                *size = npzs__le64(f + k);
                k += 8;
            }
            if (*csize == 0xFFFFFFFFu && k + 8 <= len) {
                *csize = npzs__le64(f + k);
                k += 8;
            }
            if (off && *off == 0xFFFFFFFFu && k + 8 <= len) *off = npzs__le64(f + k);
            return 1;
        }
        i += 4 + (size_t)len;
    }
    return 0;
}

/* ---- a checked member's content ---- */

static int checked(const npzs_inv *v) { return v->cur < v->n && v->m[v->cur].checked; }

/* The child parser's events and error, for the bytes pushed so far (or at the end). */
static void child_run(npzs_inv *v, const uint8_t *b, size_t n) {
    npzs_inv_member *m = &v->m[v->cur];
    if (m->error) return;
    npzs_in in = {b, n, 0};
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(v->child, &in, &ev);
        if (rc == NPZS_EVENT && ev.type == NPZS_EV_HEADER) {
            const npzs_array_info *a = ev.array;
            m->kind = NPZS_KIND_ARRAY;
            size_t dl = strlen(a->dtype);
            if (dl >= sizeof m->dtype) dl = sizeof m->dtype - 1;
            memcpy(m->dtype, a->dtype, dl);
            m->dtype[dl] = 0;
            m->ndim = a->ndim;
            for (uint32_t k = 0; k < a->ndim && k < 8; k++) m->shape[k] = a->shape[k];
            m->fortran_order = a->fortran_order;
            m->nbytes = a->nbytes;
            continue;
        }
        if (rc == NPZS_EVENT) continue;
        if (rc == NPZS_NEED_INPUT || rc == NPZS_DONE) return;
        uint64_t co = npzs_error_offset(v->child);
        if (!m->error && !npzs_error_limit(v->child, &m->limit, &m->limit_value, &m->limit_needed)) m->limit = NULL;
        member_fail(m, npzs_error(v->child), npzs_error_rule(v->child), npzs_error_message(v->child),
                    m->method == NPZS_METHOD_STORED ? v->data_off + co : v->data_off, co);
        return;
    }
}

/* Decide what the content is from its first bytes (all of them when ended). */
static void content_decide(npzs_inv *v, int ended) {
    npzs_inv_member *m = &v->m[v->cur];
    v->decided = 1;
    v->is_npy = v->pre_n >= 6 && memcmp(v->pre, NPZS_NPY_MAGIC, 6) == 0;
    if (!v->is_npy) {
        m->kind = NPZS_KIND_BLOB;
        m->sniff = npzs__sniff(v->pre, v->pre_n, ended);
        return;
    }
    m->sniff = NPZS_SNIFF_NPY;
    if (!v->child) v->child = npzs_new(&v->lim, v->al.alloc ? &v->al : NULL);
    else npzs_reset(v->child);
    if (!v->child || npzs_events(v->child, NPZS_EV_BIT(NPZS_EV_HEADER)) != 0) {
        member_rule(m, NPZS_E_NOMEM, NPZS_R_NOMEM_HEADER, v->data_off);
        return;
    }
    child_run(v, v->pre, v->pre_n);
}

/* Bytes of a checked member's content, followed: its CRC, the caller's look, the sniff, its parser. */
static void content_follow(npzs_inv *v, const uint8_t *b, size_t n) {
    v->total_out += n;
    v->out += n;
    v->crc = npzs__crc32(v->crc, b, n);
    if (v->fn) v->fn(v->fn_ctx, v->cur, b, n);
    size_t k = 0;
    if (!v->decided) {
        k = n < sizeof v->pre - v->pre_n ? n : sizeof v->pre - v->pre_n;
        memcpy(v->pre + v->pre_n, b, k);
        v->pre_n += k;
        if (v->pre_n < sizeof v->pre) return;
        content_decide(v, 0);
    }
    if (v->is_npy && k < n) child_run(v, b + k, n - k);
}

/* Bytes of a checked member's content: followed up to max_total_bytes of all members' content
 * (what fits, whatever the pushes: its parser may decide first), then a bomb, not followed further. */
static void content_bytes(npzs_inv *v, const uint8_t *b, size_t n) {
    npzs_inv_member *m = &v->m[v->cur];
    if (v->over || !n) return;
    uint64_t lim = v->lim.max_total_bytes, room = lim - v->total_out; /* total_out <= lim */
    size_t fit = n > room ? (size_t)room : n;
    if (fit) content_follow(v, b, fit);
    if (fit == n) return;
    v->over = 1;
    if (!m->error) { /* the content before it and its declared size, or one byte more than the limit */
        uint64_t before = v->total_out - v->out;
        m->limit = "max_total_bytes";
        m->limit_value = lim;
        m->limit_needed = m->size > lim - before ? before + m->size : lim + 1;
    }
    member_rule(m, NPZS_E_LIMIT, NPZS_R_INV_LIMIT, v->data_off);
}

/* The member's end: its content's verdict, and its sizes and CRC against those declared. */
static void member_end(npzs_inv *v) {
    if (!checked(v)) return;
    npzs_inv_member *m = &v->m[v->cur];
    if (!v->decided) content_decide(v, 1);
    if (v->is_npy && !m->error) {
        npzs_finish(v->child);
        child_run(v, NULL, 0);
    }
    if (v->fn) v->fn(v->fn_ctx, v->cur, NULL, 0);
    if (v->over) return;
    if (v->out != m->size || (m->method == NPZS_METHOD_STORED && v->data_in != m->csize))
        member_rule(m, NPZS_E_SIZE_MISMATCH, NPZS_R_INV_SIZE, v->data_off);
    else if (v->crc != m->crc32) member_rule(m, NPZS_E_CRC_MISMATCH, NPZS_R_INV_CRC, v->data_off);
}

/* ---- the data ---- */

static int inflate_begin(npzs_inv *v) {
    if (!v->zout && !(v->zout = al_alloc(v, ZOUT_SIZE))) return -1;
    memset(&v->z, 0, sizeof v->z);
    v->z.zalloc = z_alloc;
    v->z.zfree = z_free;
    v->z.opaque = v;
    if (inflateInit2(&v->z, -15) != Z_OK) return -1;
    v->z_ready = 1;
    v->inflating = 1;
    v->z_end = v->z_nomem = 0;
    return 0;
}

/* After the data: the descriptor, or the next signature. */
static void data_done(npzs_inv *v) {
    inflate_end(v);
    if (v->dd) {
        v->state = W_DD;
        v->fix_n = 0;
        v->fix_need = 4;
        v->dd_sig = -1;
        return;
    }
    member_end(v);
    v->state = W_SIG;
    v->fix_n = 0;
    v->fix_need = 4;
}

/* Inflate what is at b (n bytes): returns the bytes taken (all of them unless the stream ended). */
static size_t inflate_some(npzs_inv *v, const uint8_t *b, size_t n) {
    npzs_inv_member *m = &v->m[v->cur];
    v->z.next_in = (Bytef *)(uintptr_t)b;
    v->z.avail_in = (uInt)(n > 0x40000000u ? 0x40000000u : n);
    size_t given = v->z.avail_in;
    while (v->z.avail_in > 0 && !v->z_end) {
        v->z.next_out = v->zout;
        v->z.avail_out = ZOUT_SIZE;
        int rc = inflate(&v->z, Z_NO_FLUSH);
        size_t got = ZOUT_SIZE - v->z.avail_out;
        if (got && checked(v)) content_bytes(v, v->zout, got);
        if (rc == Z_STREAM_END) v->z_end = 1;
        else if (rc == Z_MEM_ERROR) { /* zlib allocates its window at the first output: not the data's fault */
            v->z_nomem = 1;
            member_rule(m, NPZS_E_NOMEM, NPZS_R_NOMEM_INFLATE, v->data_off);
            return (size_t)-1;
        } else if (rc != Z_OK && rc != Z_BUF_ERROR) {
            member_rule(m, NPZS_E_INFLATE, NPZS_R_INV_INFLATE,
                        v->data_off); /* its data start: where zlib stops depends on how the bytes came */
            return (size_t)-1;
        }
        if (rc == Z_BUF_ERROR && got == 0) break;
    }
    return given - v->z.avail_in;
}

/* The bytes of a stored member with a descriptor: is the window's end a descriptor whose
 * compressed size is the bytes before it?  Returns its length, else 0: 24 (8-byte sizes) after a
 * ZIP64 extra, 16 otherwise, as the strict parser reads it (zip.c, ZIP_DD).  One length only: the
 * first 16 bytes of a 24-byte descriptor hold the low half of its compressed size where a 16-byte
 * one holds it, so trying both would end the data 8 bytes early. */
static size_t dd_at_window(const npzs_inv *v) {
    static const uint8_t sig[4] = {'P', 'K', 7, 8};
    size_t dl = v->zip64 ? 24 : 16;
    if (v->win_n < dl || v->data_in < dl) return 0;
    const uint8_t *d = v->win + v->win_n - dl;
    uint64_t cs = dl == 24 ? npzs__le64(d + 8) : npzs__le32(d + 8);
    return !memcmp(d, sig, 4) && cs == v->data_in - dl ? dl : 0;
}

/* A stored member with a descriptor: one byte at a time into the window; the content lags the
 * window by its length, so that the descriptor's bytes never reach the content. */
static void stored_dd_byte(npzs_inv *v, uint8_t c) {
    if (v->win_n == WIN) {
        if (checked(v)) content_bytes(v, v->win, 1);
        memmove(v->win, v->win + 1, WIN - 1);
        v->win_n--;
    }
    v->win[v->win_n++] = c;
    v->data_in++;
    size_t dl = dd_at_window(v);
    if (!dl) return;
    npzs_inv_member *m = &v->m[v->cur];
    const uint8_t *d = v->win + v->win_n - dl;
    if (checked(v) && v->win_n > dl) content_bytes(v, v->win, v->win_n - dl);
    m->crc32 = npzs__le32(d + 4);
    m->csize = v->data_in - dl;
    m->size = dl == 16 ? npzs__le32(d + 12) : npzs__le64(d + 16);
    v->data_in -= dl;
    v->dd = 0; /* the descriptor is read */
    data_done(v);
}

/* Data bytes at b: returns the bytes taken. */
static size_t data_some(npzs_inv *v, const uint8_t *b, size_t n) {
    npzs_inv_member *m = &v->m[v->cur];
    if (v->dd && m->method == NPZS_METHOD_STORED) { /* delimited by its descriptor */
        size_t i = 0;
        while (i < n && v->state == W_DATA) stored_dd_byte(v, b[i++]);
        return i;
    }
    if (v->dd && m->method == NPZS_METHOD_DEFLATED) { /* delimited by the deflate stream's end */
        size_t k = inflate_some(v, b, n);
        if (k == (size_t)-1) { /* cannot be delimited: the rest cannot be framed */
            if (v->z_nomem) die(v, NPZS_E_NOMEM, NPZS_R_NOMEM_INFLATE, v->data_off);
            else die(v, NPZS_E_INFLATE, NPZS_R_INV_INFLATE, v->data_off);
            return n;
        }
        v->data_in += k;
        if (v->z_end) data_done(v);
        return k;
    }
    if (v->dd) { /* another method, sizes after the data: nothing delimits it */
        member_rule(m, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_INV_METHOD, v->data_off);
        die(v, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_INV_FRAMING, v->data_off);
        return n;
    }
    size_t k = n < v->left ? n : (size_t)v->left;
    /* a member with an error is followed on (its parser fed no more): what max_total_bytes counts
     * must not depend on where the pushes cut the bytes its error was found in */
    if (checked(v)) {
        if (m->method == NPZS_METHOD_STORED) {
            content_bytes(v, b, k);
        } else if (v->inflating) {
            size_t t = v->z_end ? 0 : inflate_some(v, b, k);
            if (t == (size_t)-1) inflate_end(v);              /* the member's error is said; its bytes are passed */
            else if (v->z_end && v->data_in + t < m->csize) { /* data after the stream's end */
                member_rule(m, NPZS_E_SIZE_MISMATCH, NPZS_R_INV_SIZE, v->data_off + v->data_in + t);
                inflate_end(v);
            }
        }
    }
    v->data_in += k;
    v->left -= k;
    if (!v->left) {
        if (checked(v) && v->inflating && !v->z_end) member_rule(m, NPZS_E_SIZE_MISMATCH, NPZS_R_INV_SIZE, v->data_off);
        data_done(v);
    }
    return k;
}

/* ---- the records ---- */

static void lfh_fixed(npzs_inv *v) {
    const uint8_t *h = v->fix + 4;
    v->zip = 1;
    v->nlen = npzs__le16(h + 22);
    v->xlen = npzs__le16(h + 24);
    if (v->nlen > v->lim.max_name_len) {
        die_limit(v, v->rec_off, "max_name_len", v->lim.max_name_len, v->nlen);
        return;
    }
    v->state = W_LFH_NAME;
    v->big_n = 0;
    v->big_need = (size_t)v->nlen + v->xlen;
}

static void lfh_done(npzs_inv *v) {
    const uint8_t *h = v->fix + 4;
    npzs_inv_member *m = add_member(v, v->big, v->nlen, v->rec_off);
    if (!m) return;
    v->cur = v->n - 1;
    m->source = NPZS_INV_LOCAL;
    m->flags = npzs__le16(h + 2);
    m->method = npzs__le16(h + 4);
    m->crc32 = npzs__le32(h + 10);
    m->csize = npzs__le32(h + 14);
    m->size = npzs__le32(h + 18);
    v->zip64 = zip64_extra(v->big + v->nlen, v->xlen, &m->size, &m->csize, NULL);
    v->dd = (m->flags & 8) != 0;
    v->data_off = v->off;
    v->data_in = 0;
    v->left = m->csize;
    v->win_n = 0;
    v->out = 0;
    v->crc = 0;
    v->pre_n = 0;
    v->decided = v->is_npy = v->over = 0;
    m->checked = v->check_after != UINT64_MAX && m->offset > v->check_after;
    if (m->flags & 1) {
        member_rule(m, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_INV_METHOD, v->rec_off);
        m->checked = 0;
    } else if (m->method != NPZS_METHOD_STORED && m->method != NPZS_METHOD_DEFLATED) {
        member_rule(m, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_INV_METHOD, v->rec_off);
        m->checked = 0;
    }
    if (m->method == NPZS_METHOD_DEFLATED && !(m->flags & 1) && (m->checked || v->dd) && inflate_begin(v) < 0) {
        die(v, NPZS_E_NOMEM, NPZS_R_NOMEM_INFLATE, v->data_off);
        return;
    }
    v->state = W_DATA;
    if (!v->dd && v->left == 0) data_done(v);
}

static void dd_fixed(npzs_inv *v) {
    npzs_inv_member *m = &v->m[v->cur];
    static const uint8_t sig[4] = {'P', 'K', 7, 8};
    size_t w = v->zip64 ? 8 : 4;
    if (v->dd_sig < 0) { /* its first 4 bytes: the signature, or the CRC */
        v->dd_sig = memcmp(v->fix, sig, 4) == 0;
        v->fix_need = (v->dd_sig ? 8 : 4) + 2 * w;
        return;
    }
    const uint8_t *d = v->fix + (v->dd_sig ? 4 : 0);
    m->crc32 = npzs__le32(d);
    uint64_t cs = w == 8 ? npzs__le64(d + 4) : npzs__le32(d + 4);
    uint64_t us = w == 8 ? npzs__le64(d + 4 + w) : npzs__le32(d + 4 + w);
    if (checked(v) && cs != v->data_in) member_rule(m, NPZS_E_SIZE_MISMATCH, NPZS_R_INV_SIZE, v->rec_off);
    m->csize = cs;
    m->size = us;
    member_end(v);
    v->state = W_SIG;
    v->fix_n = 0;
    v->fix_need = 4;
}

/* A central entry: matched to its local member by offset (the next one in order first). */
static void cdh_done(npzs_inv *v) {
    const uint8_t *h = v->fix + 4;
    uint64_t size = npzs__le32(h + 20), csize = npzs__le32(h + 16), lho = npzs__le32(h + 38);
    const uint8_t *name = v->big;
    zip64_extra(v->big + v->nlen, v->xlen, &size, &csize, &lho);
    npzs_inv_member *m = NULL;
    for (size_t k = 0; k < v->n && !m; k++) {
        size_t i = (v->cd_cursor + k) % v->n;
        npzs_inv_member *c = &v->m[i];
        if ((c->source & NPZS_INV_LOCAL) && !(c->source & NPZS_INV_CENTRAL) && c->offset == lho &&
            c->name_len == v->nlen && !memcmp(c->name, name, v->nlen)) {
            m = c;
            v->cd_cursor = i + 1;
        }
    }
    if (m) {
        m->source |= NPZS_INV_CENTRAL;
    } else if ((m = add_member(v, name, v->nlen, lho)) != NULL) {
        m->source = NPZS_INV_CENTRAL;
        m->flags = npzs__le16(h + 4);
        m->method = npzs__le16(h + 6);
        m->crc32 = npzs__le32(h + 12);
        m->csize = csize;
        m->size = size;
        member_rule(m, NPZS_E_CD_MISMATCH, NPZS_R_INV_CENTRAL_ONLY, v->rec_off);
    }
    if (v->state == W_CDH_VAR) {
        v->state = W_SKIP_TO_END;
        v->skip = v->clen;
    }
}

/* The records a signature starts: the state that reads it, and its fixed part's length with the
 * signature (ZIP64's end record: to its size field). */
static const struct {
    uint32_t sig;
    uint8_t state, need;
} RECORDS[] = {
    {0x04034b50u, W_LFH, 30},     {0x02014b50u, W_CDH, 46},  {0x06064b50u, W_Z64_EOCD, 12},
    {0x07064b50u, W_Z64_LOC, 20}, {0x06054b50u, W_EOCD, 22},
};

/* A signature where a record must start. */
static void sig(npzs_inv *v) {
    uint32_t s = npzs__le32(v->fix);
    v->fix_n = 4;
    for (size_t k = 0; k < sizeof RECORDS / sizeof RECORDS[0]; k++)
        if (RECORDS[k].sig == s) {
            v->state = RECORDS[k].state;
            v->fix_need = RECORDS[k].need;
            return;
        }
    if (v->state == W_START) v->state = W_NOT_ZIP;
    else die(v, NPZS_E_ZIP_BAD_HEADER, NPZS_R_INV_FRAMING, v->rec_off);
}

static void next_record(npzs_inv *v) {
    v->state = W_SIG;
    v->fix_n = 0;
    v->fix_need = 4;
}

/* A record's fixed part is whole in v->fix. */
static void fixed_done(npzs_inv *v) {
    switch (v->state) {
    case W_START:
        sig(v);
        if (v->state == W_EOCD) v->zip = 1;
        return;
    case W_SIG: sig(v); return;
    case W_LFH: lfh_fixed(v); return;
    case W_DD: dd_fixed(v); return;
    case W_CDH:
        v->nlen = npzs__le16(v->fix + 28);
        v->xlen = npzs__le16(v->fix + 30);
        v->clen = npzs__le16(v->fix + 32);
        v->state = W_CDH_VAR;
        v->big_n = 0;
        v->big_need = (size_t)v->nlen + v->xlen;
        return;
    case W_Z64_EOCD: {
        uint64_t sz = npzs__le64(v->fix + 4);
        v->state = W_SKIP_TO_END;
        v->skip = sz; /* the record's rest, as its size field counts it */
        return;
    }
    case W_Z64_LOC: next_record(v); return;
    case W_EOCD:
        v->state = W_SKIP_TO_END;
        v->skip = npzs__le16(v->fix + 20);
        v->complete = 1;
        return;
    default: return;
    }
}

/* Copy into a staging buffer (*have of need bytes): the bytes taken. */
static size_t stage(npzs_inv *v, uint8_t *dst, size_t *have, size_t need, const uint8_t *b, size_t n) {
    size_t k = n < need - *have ? n : need - *have;
    memcpy(dst + *have, b, k);
    *have += k;
    v->off += k;
    return k;
}

/* Nothing left to pass: the end, or the next record. */
static void skipped(npzs_inv *v) {
    if (v->state != W_SKIP_TO_END || v->skip) return;
    if (v->complete) v->state = W_END;
    else next_record(v);
}

NPZS__API int npzs_inv_push(npzs_inv *v, const void *data, size_t len) {
    const uint8_t *b = data;
    size_t i = 0;
    while (i < len) {
        int st = v->state;
        if (st == W_NOT_ZIP || st == W_DEAD || st == W_END) break;
        if (st == W_DATA) {
            size_t k = data_some(v, b + i, len - i);
            i += k;
            v->off += k;
        } else if (st == W_LFH_NAME || st == W_CDH_VAR) {
            i += stage(v, v->big, &v->big_n, v->big_need, b + i, len - i);
            if (v->big_n < v->big_need) continue;
            if (st == W_LFH_NAME) lfh_done(v);
            else cdh_done(v);
            skipped(v);
        } else if (st == W_SKIP_TO_END) {
            uint64_t k = len - i < v->skip ? len - i : v->skip;
            i += (size_t)k;
            v->off += k;
            v->skip -= k;
            skipped(v);
        } else { /* a fixed part */
            if (v->fix_n == 0) v->rec_off = v->off;
            i += stage(v, v->fix, &v->fix_n, v->fix_need, b + i, len - i);
            if (v->fix_n < v->fix_need) continue;
            fixed_done(v);
            skipped(v);
        }
    }
    if (i < len) v->off += len - i;
    return v->err == NPZS_E_NOMEM ? NPZS_E_NOMEM : 0;
}

NPZS__API void npzs_inv_finish(npzs_inv *v) {
    int st = v->state;
    if (st == W_START || st == W_NOT_ZIP || st == W_DEAD || st == W_END) return;
    if (st == W_SIG && v->fix_n == 0 && !v->zip) return;
    int in_member = st == W_DATA || st == W_DD;
    if (in_member && v->cur < v->n) { /* cut: said first, then what its content showed so far */
        member_rule(&v->m[v->cur], NPZS_E_TRUNCATED, NPZS_R_INV_TRUNCATED, v->off);
        if (checked(v)) member_end(v);
    }
    inflate_end(v);
    die(v, NPZS_E_TRUNCATED, NPZS_R_INV_TRUNCATED, v->off);
}
