/*
 * zip.c -- the .npz (ZIP) records: local headers, member data (stored and
 * deflated), data descriptors, the central directory and the end records.
 *
 * Every byte of an accepted archive belongs to exactly one record or member,
 * in order: local header, data, [descriptor], ..., central directory,
 * [ZIP64 end record, locator], end record, comment, end of input.  Nothing is
 * ever found by scanning for a signature.  Each local header is remembered in
 * a small record; the central directory must repeat it exactly.
 */
#include <string.h>

#include "internal.h"

#define SIG_LFH 0x04034b50u
#define SIG_CDH 0x02014b50u
#define SIG_DD 0x08074b50u
#define SIG_Z64_EOCD 0x06064b50u
#define SIG_Z64_LOC 0x07064b50u
#define SIG_EOCD 0x06054b50u

#define LFH_SIZE 30
#define CDH_SIZE 46
#define Z64_EOCD_SIZE 56
#define Z64_LOC_SIZE 20
#define EOCD_SIZE 22

#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DD 0x0008u
#define FLAG_PATCHED 0x0020u
#define FLAG_STRONG 0x0040u
#define FLAG_UTF8 0x0800u
#define FLAG_MASKED 0x2000u

enum { PH_LOCALS, PH_CENTRAL, PH_Z64, PH_LOC, PH_END };

/* ---- input helpers --------------------------------------------------------- */

typedef struct cur {
    const uint8_t *src;
    size_t pos, size;
} cur_t;

/* ---- the directory region's tail ------------------------------------------------------------
 * From the first central directory (or end) record on, every byte taken is also kept in
 * p->tail, the last NPZS_TAIL_MAX of them once the region is longer: at the end of the input
 * zipfile's own end-record search runs over them (bind_end).  Bytes before the region (member
 * data) are not kept: the search can only land on them when it does not land on the end record
 * the stream parsed, and that is already a rejection.  The buffer grows with the region, room
 * being reserved (tail_reserve) before a record is taken, so keeping bytes never fails. */
static int tail_reserve(npzs_parser *p, size_t more) {
    if (p->tail_cap >= NPZS_TAIL_MAX || p->tail_len + more <= p->tail_cap) return 0;
    uint64_t need = p->tail_len + more;
    size_t cap = p->tail_cap ? p->tail_cap : 256;
    while (cap < need && cap < NPZS_TAIL_MAX) cap *= 2;
    if (cap > NPZS_TAIL_MAX) cap = NPZS_TAIL_MAX;
    uint8_t *t = npzs__alloc(p, cap);
    if (!t) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_TAIL);
    if (p->tail_len) memcpy(t, p->tail, (size_t)p->tail_len); /* not a ring yet: tail_len <= tail_cap */
    npzs__free(p, p->tail);
    p->tail = t;
    p->tail_cap = cap;
    return 0;
}

static void tail_put(npzs_parser *p, const uint8_t *s, size_t n) {
    if (p->tail_cap < NPZS_TAIL_MAX) { /* reserved: fits */
        memcpy(p->tail + p->tail_len, s, n);
        p->tail_len += n;
        return;
    }
    if (n > NPZS_TAIL_MAX) {
        p->tail_len += n - NPZS_TAIL_MAX;
        s += n - NPZS_TAIL_MAX;
        n = NPZS_TAIL_MAX;
    }
    size_t at = (size_t)(p->tail_len % NPZS_TAIL_MAX), k = NPZS_TAIL_MAX - at;
    if (k > n) k = n;
    memcpy(p->tail + at, s, k);
    memcpy(p->tail, s + k, n - k);
    p->tail_len += n;
}

/* Take k bytes of the push (into buf unless NULL). */
static inline void eat(npzs_parser *p, npzs_in *in, uint8_t *buf, size_t k) {
    const uint8_t *s = (const uint8_t *)in->src + in->pos;
    if (buf) memcpy(buf, s, k);
    if (p->tail_on) tail_put(p, s, k);
    in->pos += k;
    p->consumed += k;
}

/* Stage bytes until p->stage holds n.  1 when complete, 0 when input ran out. */
static inline int take(npzs_parser *p, npzs_in *in, size_t n) {
    while (p->stage_len < n) {
        if (!in || in->pos == in->size) return 0;
        size_t k = n - p->stage_len, a = in->size - in->pos;
        if (k > a) k = a;
        eat(p, in, p->stage + p->stage_len, k);
        p->stage_len += k;
    }
    return 1;
}

/* Copy into buf until p->var_len == n (buf may be NULL to skip). */
static inline int take_var(npzs_parser *p, npzs_in *in, uint8_t *buf, size_t n) {
    while (p->var_len < n) {
        if (!in || in->pos == in->size) return 0;
        size_t k = n - p->var_len, a = in->size - in->pos;
        if (k > a) k = a;
        eat(p, in, buf ? buf + p->var_len : NULL, k);
        p->var_len += k;
    }
    return 1;
}

static int need_more(npzs_parser *p) {
    if (p->finished) return npzs__fail(p, NPZS_E_TRUNCATED, p->consumed, NPZS_R_TRUNC_ARCHIVE);
    return NPZS_NEED_INPUT;
}

static int bad(npzs_parser *p, int code, int rule) { return npzs__fail(p, code, p->rec_off, rule); }

/* ---- member records, names ---------------------------------------------------- */

static int ensure(npzs_parser *p, void **buf, size_t *cap, size_t need, size_t elem) {
    if (*cap >= need) return 0;
    size_t n = *cap ? *cap : 16;
    while (n < need) n *= 2;
    if (n > SIZE_MAX / elem) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_RECORDS_SIZE);
    void *nb = npzs__alloc(p, n * elem);
    if (!nb) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_RECORDS);
    if (*cap) memcpy(nb, *buf, *cap * elem);
    npzs__free(p, *buf);
    *buf = nb;
    *cap = n;
    return 0;
}

/* ---- extra fields ---------------------------------------------------------------- */

/* Strict TLV walk of a local (local != 0) or central extra field block.  Sets z64 and z64_len to
 * the ZIP64 field when there is one.  1-3 bytes after the last field are accepted when they are
 * zero (writers that align member data pad with zero bytes: 4 of them read as an empty field with
 * id 0; zipfile's _decodeExtra stops at fewer than 4 bytes whatever they hold). */
static int walk_extra(npzs_parser *p, const uint8_t *x, size_t n, int local, const uint8_t **z64, size_t *z64_len) {
    size_t i = 0;
    *z64 = NULL;
    *z64_len = 0;
    while (i < n) {
        if (n - i < 4) {
            for (; i < n; i++)
                if (x[i]) return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_LEFTOVER);
            break;
        }
        uint16_t id = npzs__le16(x + i), len = npzs__le16(x + i + 2);
        if (len > n - i - 4) /* zipfile reads central extra fields only */
            return bad(p, NPZS_E_ZIP_BAD_HEADER, local ? NPZS_R_EXTRA_OVERRUN_LOCAL : NPZS_R_EXTRA_OVERRUN);
        if (id == 0x0001) {
            if (*z64) return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_TWO_ZIP64);
            *z64 = x + i + 4;
            *z64_len = len;
        } else if (id == 0x7075 || id == 0x6375) {
            return bad(p, NPZS_E_ZIP_UNSUPPORTED,
                       NPZS_R_EXTRA_UNICODE);
        }
        i += 4u + len;
    }
    return 0;
}

static int check_name(npzs_parser *p, const uint8_t *s, size_t n, unsigned flags) {
    int ascii = 1;
    for (size_t i = 0; i < n; i++) {
        if (s[i] == 0) return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_NUL);
        if (s[i] < 0x20 || s[i] == 0x7F) return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_CONTROL);
        if (s[i] == '\\') return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_BACKSLASH);
        if (s[i] >= 0x80) ascii = 0;
        /* a ".." path component */
        if (s[i] == '.' && i + 1 < n && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') && (i + 2 == n || s[i + 2] == '/'))
            return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_DOTDOT);
    }
    if (s[0] == '/') return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_ABSOLUTE);
    if (n == 4 && memcmp(s, ".npy", 4) == 0)
        return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_EMPTY_KEY);
    if (s[n - 1] == '/') return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_DIRECTORY);
    if (!ascii && !(flags & FLAG_UTF8))
        return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_CP437);
    if (!ascii && !npzs__utf8_valid(s, n)) return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_UTF8);
    return 0;
}

/* ---- local header --------------------------------------------------------------- */

static int lfh_fixed(npzs_parser *p) {
    const uint8_t *b = p->stage;
    uint16_t ver = npzs__le16(b + 4);
    p->l_flags = npzs__le16(b + 6);
    p->l_method = npzs__le16(b + 8);
    p->l_crc = npzs__le32(b + 14);
    p->l_csize32 = npzs__le32(b + 18);
    p->l_usize32 = npzs__le32(b + 22);
    p->l_name_len = npzs__le16(b + 26);
    p->l_extra_len = npzs__le16(b + 28);
    if (p->members >= p->lim.max_members) return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_MEMBERS);
    if ((ver & 0xFF) > 63) return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_LFH_VERSION);
    if (p->l_flags & (FLAG_ENCRYPTED | FLAG_STRONG | FLAG_MASKED))
        return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_ENCRYPTED);
    if (p->l_flags & FLAG_PATCHED) return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_PATCHED);
    if (p->l_method != NPZS_METHOD_STORED && p->l_method != NPZS_METHOD_DEFLATED)
        return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_METHOD);
    unsigned allowed = FLAG_DD | FLAG_UTF8 | (p->l_method == NPZS_METHOD_DEFLATED ? 0x0006u : 0u);
    if (p->l_flags & ~allowed) return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_FLAGS);
    if (p->l_name_len == 0) return bad(p, NPZS_E_BAD_NAME, NPZS_R_NAME_EMPTY);
    if (p->l_name_len > p->lim.max_name_len) return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_NAME);
    if (p->l_extra_len > p->lim.max_extra_len) return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_EXTRA);
    if (!p->name) {
        p->name = npzs__alloc(p, p->lim.max_name_len);
        if (!p->name) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_NAME);
    }
    if (!p->extra && p->lim.max_extra_len) {
        p->extra = npzs__alloc(p, p->lim.max_extra_len);
        if (!p->extra) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_EXTRA);
    }
    return 0;
}

/* Name and extra staged: validate, decide how the data is delimited, remember the member. */
static int lfh_complete(npzs_parser *p) {
    if (check_name(p, p->name, p->l_name_len, p->l_flags) < 0) return p->err;
    const uint8_t *z;
    size_t zl;
    if (walk_extra(p, p->extra, p->l_extra_len, 1, &z, &zl) < 0) return p->err;
    p->l_z64 = z != NULL;
    p->l_z64_usize = p->l_z64_csize = 0;
    if (z) {
        if (zl != 16)
            return bad(p, NPZS_E_ZIP_BAD_HEADER,
                       NPZS_R_EXTRA_ZIP64_LOCAL);
        p->l_z64_usize = npzs__le64(z);
        p->l_z64_csize = npzs__le64(z + 8);
    }
    p->l_dd = (p->l_flags & FLAG_DD) != 0;
    p->l_known = !p->l_dd;
    if (p->l_known) {
        p->l_csize = (p->l_csize32 == 0xFFFFFFFFu && z) ? p->l_z64_csize : p->l_csize32;
        p->l_usize = (p->l_usize32 == 0xFFFFFFFFu && z) ? p->l_z64_usize : p->l_usize32;
        if (z && ((p->l_z64_csize && p->l_z64_csize != p->l_csize) ||
                  (p->l_z64_usize && p->l_z64_usize != p->l_usize)))
            return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_LFH_ZIP64_SIZES);
        if (p->l_method == NPZS_METHOD_STORED && p->l_csize != p->l_usize)
            return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_LFH_STORED_SIZES);
        if (p->l_usize > p->lim.max_total_bytes || p->total_out > p->lim.max_total_bytes - p->l_usize)
            return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_TOTAL_MEMBER);
    }
    /* remember it */
    uint32_t m = p->members;
    if ((m & (NPZS_REC_CHUNK - 1)) == 0) { /* a new chunk */
        size_t c = m >> NPZS_REC_SHIFT;
        if (ensure(p, (void **)&p->recs, &p->recs_cap, c + 1, sizeof *p->recs) < 0) return p->err;
        p->recs[c] = npzs__alloc(p, NPZS_REC_CHUNK * sizeof **p->recs);
        if (!p->recs[c]) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_RECORDS);
        p->recs_chunks = c + 1;
    }
    npzs_block *b = p->names;
    if (!b || b->size - b->used < p->l_name_len) {
        size_t sz = p->l_name_len > 16384 ? p->l_name_len : 16384;
        b = npzs__alloc(p, sizeof *b + sz);
        if (!b) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_NAMES);
        b->next = p->names;
        b->used = 0;
        b->size = sz;
        p->names = b;
    }
    npzs_record *r = npzs__rec(p, m);
    memset(r, 0, sizeof *r);
    r->lfh_off = p->rec_off;
    r->name = b->data + b->used;
    r->name_len = p->l_name_len;
    r->flags = p->l_flags;
    r->method = p->l_method;
    memcpy(b->data + b->used, p->name, p->l_name_len);
    b->used += p->l_name_len;
    p->members = m + 1;
    int with_key = p->l_name_len > 4 && memcmp(p->name + p->l_name_len - 4, ".npy", 4) == 0;
    if (npzs__names_add(p, m, with_key) < 0) return p->err;
    return 0;
}

/* ---- inflate ---------------------------------------------------------------------- */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    npzs_parser *p = opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return npzs__alloc(p, (size_t)items * size);
}
static void z_free(voidpf opaque, voidpf ptr) { npzs__free((npzs_parser *)opaque, ptr); }

static int inflate_begin(npzs_parser *p) {
    if (!p->win) {
        p->win = npzs__alloc(p, p->lim.inflate_window);
        if (!p->win) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_WINDOW);
    }
    if (!p->zs_init) {
        memset(&p->zs, 0, sizeof p->zs);
        p->zs.zalloc = z_alloc;
        p->zs.zfree = z_free;
        p->zs.opaque = p;
        int rc = inflateInit2(&p->zs, -15);
        if (rc != Z_OK)
            return npzs__fail(p, rc == Z_MEM_ERROR ? NPZS_E_NOMEM : NPZS_E_BAD_CALL, p->rec_off,
                              rc == Z_MEM_ERROR ? NPZS_R_NOMEM_INFLATE : NPZS_R_CALL_ZLIB);
        p->zs_init = 1;
    } else if (inflateReset(&p->zs) != Z_OK) {
        return npzs__fail(p, NPZS_E_BAD_CALL, p->rec_off, NPZS_R_CALL_ZLIB);
    }
    p->win_len = p->win_pos = 0;
    p->zin_pos = p->zin_len = 0;
    p->z_end = p->z_err = 0;
    return 0;
}

/* Small pushes of a deflated member.  zlib's cost per inflate() call (it copies each call's
 * output into its own window and leaves its fast loop near the end of the input) makes
 * 4 KiB calls ~15% slower than large ones, so when a push ends inside a member of known
 * compressed size with less than NPZS_ZIN_MIN bytes to inflate, the bytes are gathered in
 * zin and inflated together with the next pushes.  Gathered bytes count as consumed; since
 * they never extend past the member's compressed size and are inflated before anything
 * that follows, every event and every verdict is the one the large push gives (the one
 * exception, a stream that ends early, is fixed up where it is found). */
#define NPZS_ZIN_SIZE (64u * 1024u)
#define NPZS_ZIN_MIN (32u * 1024u)

/* Gather up to k bytes of the push.  Returns 0 or < 0 (out of memory).  The gathered bytes are
 * topped up only while fewer than NPZS_ZIN_MIN wait, so a compaction (which moves fewer than
 * NPZS_ZIN_MIN bytes) happens only after NPZS_ZIN_SIZE - NPZS_ZIN_MIN bytes were inflated from
 * the buffer since the last one: the copying stays proportional to the input. */
static int zin_take(npzs_parser *p, npzs_in *in, size_t k) {
    if (!p->zin) {
        p->zin = npzs__alloc(p, NPZS_ZIN_SIZE);
        if (!p->zin) return npzs__fail(p, NPZS_E_NOMEM, p->data_start, NPZS_R_NOMEM_ZIN);
    }
    if (p->zin_pos && k > NPZS_ZIN_SIZE - p->zin_len) { /* compact to make room */
        memmove(p->zin, p->zin + p->zin_pos, p->zin_len - p->zin_pos);
        p->zin_len -= p->zin_pos;
        p->zin_pos = 0;
    }
    if (k > NPZS_ZIN_SIZE - p->zin_len) k = NPZS_ZIN_SIZE - p->zin_len;
    memcpy(p->zin + p->zin_len, (const uint8_t *)in->src + in->pos, k);
    p->zin_len += k;
    in->pos += k;
    p->consumed += k;
    return 0;
}

void npzs__zip_release(npzs_parser *p) {
    if (p->zs_init) inflateEnd(&p->zs);
    p->zs_init = 0;
    npzs__free(p, p->win);
    npzs__free(p, p->zin);
    p->zin = NULL;
    npzs__free(p, p->name);
    npzs__free(p, p->extra);
    for (size_t c = 0; c < p->recs_chunks; c++) npzs__free(p, p->recs[c]);
    npzs__free(p, p->recs);
    while (p->names) {
        npzs_block *b = p->names;
        p->names = b->next;
        npzs__free(p, b);
    }
    npzs__names_release(p);
    npzs__free(p, p->tail);
    p->tail = NULL;
    p->tail_cap = 0;
    p->win = p->name = p->extra = NULL;
    p->recs = NULL;
    p->recs_chunks = p->recs_cap = 0;
}

/* ---- member end checks ------------------------------------------------------------ */

static uint32_t member_crc(const npzs_parser *p) {
    if (p->c.kind == NPZS_KIND_ARRAY) return npzs__crc32_combine(p->c.crc_head, p->c.crc_data, p->c.data_len);
    return p->c.crc_data;
}

/* Everything the local header states must equal what was measured. */
static int check_local(npzs_parser *p, uint64_t off) {
    uint32_t crc = member_crc(p);
    uint64_t us = p->c.pos, cs = p->data_in;
    if ((!p->l_dd || p->l_crc) && p->l_crc != crc)
        return npzs__fail(p, NPZS_E_CRC_MISMATCH, off, NPZS_R_CRC_LOCAL);
    if (p->l_dd) {
        /* deferred sizes: 0, or 0xFFFFFFFF with a ZIP64 field, or the real value */
        if (p->l_csize32 && !(p->l_csize32 == 0xFFFFFFFFu && p->l_z64) && p->l_csize32 != cs)
            return npzs__fail(p, NPZS_E_SIZE_MISMATCH, off, NPZS_R_SIZE_LOCAL_C);
        if (p->l_usize32 && !(p->l_usize32 == 0xFFFFFFFFu && p->l_z64) && p->l_usize32 != us)
            return npzs__fail(p, NPZS_E_SIZE_MISMATCH, off, NPZS_R_SIZE_LOCAL_U);
        if (p->l_z64 && ((p->l_z64_csize && p->l_z64_csize != cs) || (p->l_z64_usize && p->l_z64_usize != us)))
            return npzs__fail(p, NPZS_E_SIZE_MISMATCH, off, NPZS_R_SIZE_LOCAL_Z64);
    }
    return 0;
}

/* ---- binding the verdict to zipfile's reading -------------------------------------------------
 * The input is complete.  zipfile finds its records from the end of the file (zlocate.c): both
 * its readings (before and after the gh-139700 fix) must arrive at the end record, locator and
 * ZIP64 end record this stream parsed, and read the directory where the stream read it. */
static int bind_end(npzs_parser *p) {
    npzs_tailview v;
    uint64_t keep = p->tail_len < NPZS_TAIL_MAX ? p->tail_len : NPZS_TAIL_MAX;
    size_t start = p->tail_len <= p->tail_cap ? 0 : (size_t)(p->tail_len % NPZS_TAIL_MAX);
    v.a = p->tail + start;
    v.alen = (size_t)keep - start;
    v.b = p->tail;
    v.blen = start;
    v.base = p->consumed - keep;
    v.size = p->consumed;
    for (unsigned variant = 0; variant < NPZS_ZF_VARIANTS; variant++) {
        npzs_zf_end e;
        int st = npzs__zf_locate(&v, variant, &e);
        if (st == NPZS_ZF_MULTIDISK)
            return npzs__fail(p, NPZS_E_ZIP_UNSUPPORTED, e.at,
                              NPZS_R_EOCD_FIND_MULTIDISK);
        if (st)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.at, (variant & NPZS_ZF_FIXED64)
                                  ? NPZS_R_EOCD_FIND_FAILS_FIXED
                                  : NPZS_R_EOCD_FIND_FAILS);
        if (e.eocd_off != p->eocd_off)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.eocd_off,
                              NPZS_R_EOCD_FIND_OTHER);
        if (e.loc && !p->have_loc)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.loc_off,
                              NPZS_R_EOCD_FIND_LOCATOR);
        if (e.z64 != p->have_z64_eocd || (e.z64 && (e.z64_off != p->z64_off || e.loc_off != p->loc_off)))
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.z64 ? e.z64_off : p->z64_off,
                              NPZS_R_EOCD_FIND_Z64);
        if (e.cd_start != p->cd_start || e.cd_off != p->cd_start || e.cd_size != p->cd_end - p->cd_start)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, p->eocd_off,
                              NPZS_R_EOCD_FIND_CD);
    }
    return 0;
}

/* ---- the step function ------------------------------------------------------------- */

static int sig_first_byte_ok(const npzs_parser *p) {
    /* the first record must be a local header or an (empty archive) end record */
    static const uint8_t a[4] = {'P', 'K', 3, 4}, b[4] = {'P', 'K', 5, 6};
    return memcmp(p->stage, a, p->stage_len) == 0 || memcmp(p->stage, b, p->stage_len) == 0;
}

/* The first record after the members: from here on every byte is kept for bind_end. */
static int region_start(npzs_parser *p) {
    if (p->tail_on) return 0;
    if (tail_reserve(p, 64) < 0) return p->err;
    tail_put(p, p->stage, p->stage_len);
    p->tail_on = 1;
    return 0;
}

static int end_of_cd(npzs_parser *p) {
    if (p->phase == PH_LOCALS) p->cd_start = p->rec_off;
    p->cd_end = p->rec_off;
    if (p->cd_count != p->members)
        return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_FEWER);
    return 0;
}

int npzs__zip_step(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    for (;;) {
        NPZS_VISIT(p, p->state);
        size_t avail = in ? in->size - in->pos : 0;
        switch (p->state) {
        case NPZS_S_ZIP_SIG: {
            if (p->stage_len == 0) {
                p->rec_off = p->consumed;
                /* room for the signature and the fixed part of any directory record */
                if (p->tail_on && tail_reserve(p, 64) < 0) return p->err;
            }
            if (p->rec_off == 0) {
                /* byte by byte, so that "not a zip" is reported at once */
                while (p->stage_len < 4) {
                    if (!take(p, in, p->stage_len + 1)) return need_more(p);
                    if (!sig_first_byte_ok(p)) return npzs__fail(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_FIRST);
                }
            } else if (!take(p, in, 4)) {
                return need_more(p);
            }
            p->sig = npzs__le32(p->stage);
            uint32_t s = p->sig;
            if (p->phase == PH_LOCALS && s == SIG_LFH) {
                p->cur = p->members;
                p->name_ready = 0;
                p->state = NPZS_S_ZIP_LFH;
            } else if ((p->phase == PH_LOCALS || p->phase == PH_CENTRAL) && s == SIG_CDH) {
                if (p->phase == PH_LOCALS) p->cd_start = p->rec_off;
                if (region_start(p) < 0) return p->err;
                p->phase = PH_CENTRAL;
                p->state = NPZS_S_ZIP_CDH;
            } else if ((p->phase == PH_LOCALS || p->phase == PH_CENTRAL) && s == SIG_Z64_EOCD) {
                if (end_of_cd(p) < 0 || region_start(p) < 0) return p->err;
                p->state = NPZS_S_ZIP_Z64_EOCD;
            } else if ((p->phase == PH_LOCALS || p->phase == PH_CENTRAL) && s == SIG_EOCD) {
                if (end_of_cd(p) < 0 || region_start(p) < 0) return p->err;
                p->state = NPZS_S_ZIP_EOCD;
            } else if (p->phase == PH_Z64 && s == SIG_Z64_LOC) {
                p->state = NPZS_S_ZIP_Z64_LOC;
            } else if (p->phase == PH_LOC && s == SIG_EOCD) {
                p->state = NPZS_S_ZIP_EOCD;
            } else {
                return bad(p, NPZS_E_ZIP_BAD_HEADER,
                           s == SIG_LFH ? NPZS_R_LFH_AFTER_CD
                                        : NPZS_R_SIG_UNEXPECTED);
            }
            continue;
        }

        case NPZS_S_ZIP_LFH:
            if (!take(p, in, LFH_SIZE)) return need_more(p);
            if (lfh_fixed(p) < 0) return p->err;
            p->var_len = 0;
            p->state = NPZS_S_ZIP_LFH_NAME;
            continue;

        case NPZS_S_ZIP_LFH_NAME:
            if (!take_var(p, in, p->name, p->l_name_len)) return need_more(p);
            p->name_ready = 1;
            p->var_len = 0;
            p->state = NPZS_S_ZIP_LFH_EXTRA;
            continue;

        case NPZS_S_ZIP_LFH_EXTRA:
            if (!take_var(p, in, p->extra, p->l_extra_len)) return need_more(p);
            if (lfh_complete(p) < 0) return p->err;
            p->state = NPZS_S_ZIP_MEMBER_BEGIN;
            continue;

        case NPZS_S_ZIP_MEMBER_BEGIN: {
            const npzs_record *r = npzs__rec(p, p->cur);
            int stored = p->l_method == NPZS_METHOD_STORED;
            p->data_start = p->consumed;
            p->data_in = 0;
            npzs__content_start(p, 0, stored, stored && p->l_dd, p->data_start);
            if (!stored && inflate_begin(p) < 0) return p->err;
            p->state = stored ? NPZS_S_ZIP_STORED : NPZS_S_ZIP_DEFLATED;
            ev->type = NPZS_EV_MEMBER_BEGIN;
            ev->member = p->cur;
            ev->offset = r->lfh_off;
            ev->name = (const char *)r->name;
            ev->name_len = r->name_len;
            ev->method = p->l_method;
            ev->flags = p->l_flags;
            return NPZS_EVENT;
        }

        case NPZS_S_ZIP_STORED: {
            uint64_t left = UINT64_MAX;
            if (p->l_known) left = p->l_csize - p->data_in;
            else left = npzs__content_want(p); /* stored + descriptor: the npy header decides */
            if (left == 0) { p->state = NPZS_S_ZIP_CONTENT_END; continue; }
            if (!avail) return need_more(p);
            size_t n = avail < left ? avail : (size_t)left, used = 0;
            int rc = npzs__content_feed(p, (const uint8_t *)in->src + in->pos, n, 1, &used, ev);
            in->pos += used;
            p->consumed += used;
            p->data_in += used;
            if (rc == NPZS_EVENT) { ev->member = p->cur; return rc; }
            if (rc < 0) return rc;
            continue;
        }

        case NPZS_S_ZIP_DEFLATED: {
            if (p->win_pos < p->win_len) {
                size_t n = p->win_len - p->win_pos, used = 0;
                uint64_t room = p->lim.max_total_bytes - p->total_out; /* total_out <= limit always */
                if (p->c.pos >= room)
                    return npzs__fail(p, NPZS_E_LIMIT, p->data_start, NPZS_R_LIMIT_TOTAL_INFLATE);
                if (n > room - p->c.pos) n = (size_t)(room - p->c.pos);
                /* content of a known size gets exactly that many bytes, whatever the window holds */
                if (p->l_known) {
                    if (p->c.pos >= p->l_usize)
                        return npzs__fail(p, NPZS_E_SIZE_MISMATCH, p->data_start,
                                          NPZS_R_INFLATE_LONGER);
                    if (n > p->l_usize - p->c.pos) n = (size_t)(p->l_usize - p->c.pos);
                }
                int rc = npzs__content_feed(p, p->win + p->win_pos, n, 0, &used, ev);
                p->win_pos += used;
                if (rc == NPZS_EVENT) { ev->member = p->cur; return rc; }
                if (rc < 0) return rc;
                continue;
            }
            if (p->z_err)
                return npzs__fail(p, NPZS_E_INFLATE, p->data_start, p->z_rule);
            if (p->z_end) { p->state = NPZS_S_ZIP_CONTENT_END; continue; }
            /* output cap: what the content can take (+1 to see an overrun), the declared
             * size (+1 likewise), the total limit */
            uint64_t want = npzs__content_want(p);
            uint64_t cap = want == UINT64_MAX ? p->lim.inflate_window : want + 1;
            /* cap - 1 < x written so that x + 1 cannot wrap (a limit of 2^64 - 1 is "no limit") */
            if (p->l_known) {
                uint64_t left = p->l_usize >= p->c.pos ? p->l_usize - p->c.pos : 0;
                if (cap - 1 > left) cap = left + 1;
            }
            uint64_t room = p->lim.max_total_bytes - p->total_out;
            if (p->c.pos <= room && cap - 1 > room - p->c.pos) cap = room - p->c.pos + 1;
            if (cap > p->lim.inflate_window) cap = p->lim.inflate_window;
            size_t zin = p->zin_len - p->zin_pos;
            uint64_t in_cap = avail;
            if (p->l_known) {
                uint64_t rest = p->l_csize - p->data_in - zin; /* member bytes not taken yet */
                if (in_cap > rest) in_cap = rest;
                if (!p->finished && zin + avail < NPZS_ZIN_MIN && rest > avail) { /* gather, wait */
                    if (avail && zin_take(p, in, avail) < 0) return p->err;
                    return NPZS_NEED_INPUT;
                }
                if (zin && zin < NPZS_ZIN_MIN && in_cap) { /* top the gathered bytes up to the minimum */
                    size_t k = NPZS_ZIN_MIN - zin;
                    if (k > in_cap) k = (size_t)in_cap;
                    if (zin_take(p, in, k) < 0) return p->err;
                    zin = p->zin_len - p->zin_pos;
                }
            }
            if (zin) {
                p->zs.next_in = p->zin + p->zin_pos;
                p->zs.avail_in = (uInt)zin;
            } else {
                p->zs.next_in = in_cap ? (Bytef *)((const uint8_t *)in->src + in->pos) : (Bytef *)p->win;
                p->zs.avail_in = (uInt)(in_cap > 0x40000000u ? 0x40000000u : in_cap);
            }
            uInt ain = p->zs.avail_in;
            p->zs.next_out = p->win;
            p->zs.avail_out = (uInt)cap;
            int zr = inflate(&p->zs, Z_NO_FLUSH);
            size_t took = ain - p->zs.avail_in;
            size_t made = (size_t)cap - p->zs.avail_out;
            if (took) {
                if (zin) {
                    p->zin_pos += took; /* counted as consumed when gathered */
                    if (p->zin_pos == p->zin_len) p->zin_pos = p->zin_len = 0;
                } else {
                    in->pos += took;
                    p->consumed += took;
                }
                p->data_in += took;
            }
            p->win_pos = 0;
            p->win_len = made;
            if (zr == Z_STREAM_END) {
                p->z_end = 1;
                /* gathered bytes after the stream's end: the member is about to be rejected
                 * (its compressed size is not reached); report it where a large push does */
                p->consumed -= p->zin_len - p->zin_pos;
                p->zin_pos = p->zin_len = 0;
            } else if (zr == Z_MEM_ERROR) {
                return npzs__fail(p, NPZS_E_NOMEM, p->data_start, NPZS_R_NOMEM_INFLATE);
            } else if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) {
                p->z_err = 1;
                p->z_rule = NPZS_R_INFLATE_DATA; /* Z_NEED_DICT too: a raw deflate stream has no dictionary */
            } else if (!took && !made) {
                /* no progress: inflate needs input */
                if (p->l_known && p->data_in == p->l_csize)
                    return npzs__fail(p, NPZS_E_SIZE_MISMATCH, p->consumed,
                                      NPZS_R_DEFLATE_SHORT);
                return need_more(p);
            }
            continue;
        }

        case NPZS_S_ZIP_CONTENT_END: {
            int rc = npzs__content_end(p, ev);
            if (rc == NPZS_EVENT) { ev->member = p->cur; return rc; }
            if (rc < 0) return rc;
            if (p->l_method == NPZS_METHOD_DEFLATED && p->l_known && p->data_in != p->l_csize)
                return npzs__fail(p, NPZS_E_SIZE_MISMATCH, p->consumed,
                                  NPZS_R_DEFLATE_END_EARLY);
            if (p->l_known && p->c.pos != p->l_usize)
                return npzs__fail(p, NPZS_E_SIZE_MISMATCH, p->consumed,
                                  NPZS_R_INFLATE_SIZE);
            if (p->l_dd) {
                p->stage_len = 0;
                p->rec_off = p->consumed;
                p->state = NPZS_S_ZIP_DD;
                continue;
            }
            if (check_local(p, p->consumed) < 0) return p->err;
            p->state = NPZS_S_ZIP_MEMBER_END;
            continue;
        }

        case NPZS_S_ZIP_DD: {
            if (!take(p, in, 4)) return need_more(p);
            uint32_t crc = member_crc(p);
            /* the signature is optional; when the CRC itself equals it, the signature is required */
            int has_sig = npzs__le32(p->stage) == SIG_DD;
            size_t w = p->l_z64 ? 8 : 4;
            size_t total = (has_sig ? 4u : 0u) + 4u + 2 * w;
            if (!take(p, in, total)) return need_more(p);
            const uint8_t *d = p->stage + (has_sig ? 4 : 0);
            uint32_t dcrc = npzs__le32(d);
            uint64_t dcs = w == 8 ? npzs__le64(d + 4) : npzs__le32(d + 4);
            uint64_t dus = w == 8 ? npzs__le64(d + 12) : npzs__le32(d + 8);
            if (dcrc != crc) return bad(p, NPZS_E_CRC_MISMATCH, NPZS_R_CRC_DD);
            if (dcs != p->data_in || dus != p->c.pos)
                return bad(p, NPZS_E_SIZE_MISMATCH, NPZS_R_SIZE_DD);
            if (check_local(p, p->rec_off) < 0) return p->err;
            p->state = NPZS_S_ZIP_MEMBER_END;
            continue;
        }

        case NPZS_S_ZIP_MEMBER_END: {
            npzs_record *r = npzs__rec(p, p->cur);
            r->crc = member_crc(p);
            r->csize = p->data_in;
            r->usize = p->c.pos;
            p->total_out += p->c.pos;
            p->stage_len = 0;
            p->state = NPZS_S_ZIP_SIG;
            ev->type = NPZS_EV_MEMBER_END;
            ev->member = p->cur;
            ev->offset = p->consumed;
            ev->kind = p->c.kind;
            ev->size = p->c.pos;
            ev->csize = p->data_in;
            ev->crc32 = r->crc;
            ev->data_crc32 = p->c.crc_data;
            ev->data_size = p->c.data_len;
            ev->method = r->method;
            ev->name = (const char *)r->name;
            ev->name_len = r->name_len;
            return NPZS_EVENT;
        }

        case NPZS_S_ZIP_CDH: {
            if (!take(p, in, CDH_SIZE)) return need_more(p);
            const uint8_t *b = p->stage;
            if (p->cd_count >= p->members)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_EXTRA_ENTRY);
            const npzs_record *r = npzs__rec(p, p->cd_count);
            p->c_flags = npzs__le16(b + 8);
            p->c_method = npzs__le16(b + 10);
            p->c_crc = npzs__le32(b + 16);
            p->c_csize32 = npzs__le32(b + 20);
            p->c_usize32 = npzs__le32(b + 24);
            p->c_name_len = npzs__le16(b + 28);
            p->c_extra_len = npzs__le16(b + 30);
            p->c_comment_len = npzs__le16(b + 32);
            p->c_disk = npzs__le16(b + 34);
            p->c_off32 = npzs__le32(b + 42);
            if ((npzs__le16(b + 6) & 0xFF) > 63)
                return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_CD_VERSION);
            if (p->c_flags != r->flags) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_FLAGS);
            if (p->c_method != r->method) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_METHOD);
            if (p->c_crc != r->crc) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_CRC);
            if (p->c_name_len != r->name_len) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_NAME_LEN);
            if (p->c_extra_len > p->lim.max_extra_len) return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_EXTRA_CD);
            if (tail_reserve(p, (size_t)p->c_name_len + p->c_extra_len + p->c_comment_len) < 0) return p->err;
            p->var_len = 0;
            p->state = NPZS_S_ZIP_CDH_NAME;
            continue;
        }

        case NPZS_S_ZIP_CDH_NAME: {
            if (!take_var(p, in, p->name, p->c_name_len)) return need_more(p);
            const npzs_record *r = npzs__rec(p, p->cd_count);
            if (memcmp(p->name, r->name, r->name_len) != 0)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_NAME);
            p->var_len = 0;
            p->state = NPZS_S_ZIP_CDH_EXTRA;
            continue;
        }

        case NPZS_S_ZIP_CDH_EXTRA: {
            if (!take_var(p, in, p->extra, p->c_extra_len)) return need_more(p);
            const npzs_record *r = npzs__rec(p, p->cd_count);
            const uint8_t *z;
            size_t zl;
            if (walk_extra(p, p->extra, p->c_extra_len, 0, &z, &zl) < 0) return p->err;
            int su = p->c_usize32 == 0xFFFFFFFFu, sc = p->c_csize32 == 0xFFFFFFFFu;
            int so = p->c_off32 == 0xFFFFFFFFu, sd = p->c_disk == 0xFFFFu;
            size_t implied = 8u * (size_t)(su + sc + so) + 4u * (size_t)sd;
            uint64_t us = p->c_usize32, cs = p->c_csize32, off = p->c_off32, disk = p->c_disk;
            if (z) {
                if (zl != implied)
                    return bad(p, NPZS_E_ZIP_BAD_HEADER,
                               NPZS_R_EXTRA_ZIP64_CENTRAL);
                size_t k = 0;
                if (su) { us = npzs__le64(z + k); k += 8; }
                if (sc) { cs = npzs__le64(z + k); k += 8; }
                if (so) { off = npzs__le64(z + k); k += 8; }
                if (sd) { disk = npzs__le32(z + k); }
            }
            if (disk != 0) return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_CD);
            if (off != r->lfh_off)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_OFFSET);
            if (cs != r->csize || us != r->usize)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_SIZES);
            p->var_len = 0;
            p->state = NPZS_S_ZIP_CDH_COMMENT;
            continue;
        }

        case NPZS_S_ZIP_CDH_COMMENT:
            if (!take_var(p, in, NULL, p->c_comment_len)) return need_more(p);
            p->cd_count++;
            p->stage_len = 0;
            p->state = NPZS_S_ZIP_SIG;
            continue;

        case NPZS_S_ZIP_Z64_EOCD: {
            if (!take(p, in, Z64_EOCD_SIZE)) return need_more(p);
            const uint8_t *b = p->stage;
            if (npzs__le64(b + 4) < 44) return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_Z64_SHORT);
            if (npzs__le64(b + 4) != 44)
                return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_Z64_EXTENSIBLE);
            if (npzs__le32(b + 16) != 0 || npzs__le32(b + 20) != 0)
                return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_Z64);
            p->z64_count = npzs__le64(b + 32);
            p->z64_cd_size = npzs__le64(b + 40);
            p->z64_cd_off = npzs__le64(b + 48);
            if (npzs__le64(b + 24) != p->members || p->z64_count != p->members)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_Z64_COUNT);
            if (p->z64_cd_size != p->cd_end - p->cd_start || p->z64_cd_off != p->cd_start)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_Z64_CD);
            p->have_z64_eocd = 1;
            p->z64_off = p->rec_off;
            p->phase = PH_Z64;
            p->stage_len = 0;
            p->state = NPZS_S_ZIP_SIG;
            continue;
        }

        case NPZS_S_ZIP_Z64_LOC: {
            if (!take(p, in, Z64_LOC_SIZE)) return need_more(p);
            const uint8_t *b = p->stage;
            if (npzs__le32(b + 4) != 0 || npzs__le32(b + 16) != 1)
                return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_LOC);
            if (npzs__le64(b + 8) != p->z64_off)
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_LOC_OFFSET);
            p->have_loc = 1;
            p->loc_off = p->rec_off;
            p->phase = PH_LOC;
            p->stage_len = 0;
            p->state = NPZS_S_ZIP_SIG;
            continue;
        }

        case NPZS_S_ZIP_EOCD: {
            if (!take(p, in, EOCD_SIZE)) return need_more(p);
            const uint8_t *b = p->stage;
            int z = p->have_z64_eocd;
            uint16_t disk = npzs__le16(b + 4), cdisk = npzs__le16(b + 6);
            uint16_t nd = npzs__le16(b + 8), nt = npzs__le16(b + 10);
            uint32_t cs = npzs__le32(b + 12), co = npzs__le32(b + 16);
            if (!((disk == 0 || (z && disk == 0xFFFF)) && (cdisk == 0 || (z && cdisk == 0xFFFF))))
                return bad(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_EOCD);
            if (!((nd == p->members || (z && nd == 0xFFFF)) && (nt == p->members || (z && nt == 0xFFFF))))
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_COUNT);
            if (!(cs == p->cd_end - p->cd_start || (z && cs == 0xFFFFFFFFu)))
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_CD_SIZE);
            if (!(co == p->cd_start || (z && co == 0xFFFFFFFFu)))
                return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_CD_OFFSET);
            p->c_comment_len = npzs__le16(b + 20);
            p->eocd_off = p->rec_off;
            if (tail_reserve(p, p->c_comment_len) < 0) return p->err;
            p->var_len = 0;
            p->comment_sig = 0;
            p->phase = PH_END;
            p->state = NPZS_S_ZIP_EOCD_COMMENT;
            continue;
        }

        case NPZS_S_ZIP_EOCD_COMMENT:
            while (p->var_len < p->c_comment_len) {
                if (!avail && p->finished)
                    return npzs__fail(p, NPZS_E_TRUNCATED, p->consumed,
                                      NPZS_R_COMMENT_PAST_END);
                if (!avail) return NPZS_NEED_INPUT;
                uint8_t c = ((const uint8_t *)in->src)[in->pos];
                eat(p, in, NULL, 1);
                avail--;
                p->var_len++;
                uint32_t w = p->comment_sig = (p->comment_sig << 8) | c;
                if (w == 0x504B0102u || w == 0x504B0304u || w == 0x504B0506u || w == 0x504B0606u ||
                    w == 0x504B0607u || w == 0x504B0708u)
                    return bad(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_COMMENT_SIG);
            }
            p->state = NPZS_S_ZIP_TAIL;
            continue;

        case NPZS_S_ZIP_TAIL:
            if (avail) return npzs__fail(p, NPZS_E_TRAILING_DATA, p->consumed, NPZS_R_ZIP_TRAIL);
            if (!p->finished) return NPZS_NEED_INPUT;
            if (bind_end(p) < 0) return p->err;
            p->state = NPZS_S_END_EMIT;
            return NPZS__CONTINUE;

        default:
            return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_STATE);
        }
    }
}
