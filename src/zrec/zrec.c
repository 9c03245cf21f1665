/*
 * zrec.c -- the ZIP record decoders: pure functions over a byte span.
 *
 * Each decoder reads one fixed record (or an extra-field block, or a name) that the machine in
 * zip.c has staged, fills a plain struct, and checks what the record says about itself.  They
 * touch no parser state, allocate nothing and read exactly the bytes they are given, so they can
 * be tested (and reasoned about) on their own.  What a record must agree with elsewhere in the
 * stream (counts, offsets, the members seen) is checked by zip.c.
 *
 * Each returns 0, or -1 with *e set to the error code and the rule (src/base/rules.h) it broke.
 */
#include <string.h>

#include "zrec.h"
#include "../base/base.h"
#include "../base/contract.h"
#include "../base/rules.h"
#include "../bytes/bytes.h"

#ifdef NPZS_INTERNAL_H
#error "zrec/ is pure: it sees no parser (internal.h)"
#endif

#define FLAG_ENCRYPTED 0x0001u
#define FLAG_DD 0x0008u
#define FLAG_PATCHED 0x0020u
#define FLAG_STRONG 0x0040u
#define FLAG_UTF8 0x0800u
#define FLAG_MASKED 0x2000u

static int err(npzs__zerr *e, int code, int rule) {
    e->code = code;
    e->rule = rule;
    return -1;
}

/* The shared run of a local header (from its byte 6) and a central header (from its byte 8):
 * flags, method, time and date (not read), CRC-32, sizes, name and extra lengths. */
static NPZS__INLINE void fixed(const uint8_t *b, npzs__zfixed *f) {
    f->flags = npzs__le16(b);
    f->method = npzs__le16(b + 2);
    f->crc = npzs__le32(b + 8);
    f->csize32 = npzs__le32(b + 12);
    f->usize32 = npzs__le32(b + 16);
    f->name_len = npzs__le16(b + 20);
    f->extra_len = npzs__le16(b + 22);
}

/* b: the 30 bytes of a local header, signature included */
/*@ requires \valid_read(b + (0 .. 29)) && \valid_read(lim) && \valid(o) && \valid(e); */
int npzs__zr_lfh(const uint8_t *b, const npzs_limits *lim, npzs__zlfh *o, npzs__zerr *e) {
    NPZS_REQUIRE(b && lim && o && e);
    uint16_t ver = npzs__le16(b + 4);
    memset(o, 0, sizeof *o);
    fixed(b + 6, &o->f);
    if ((ver & 0xFF) > 63) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_LFH_VERSION);
    if (o->f.flags & (FLAG_ENCRYPTED | FLAG_STRONG | FLAG_MASKED))
        return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_ENCRYPTED);
    if (o->f.flags & FLAG_PATCHED) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_PATCHED);
    if (o->f.method != NPZS_METHOD_STORED && o->f.method != NPZS_METHOD_DEFLATED)
        return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_METHOD);
    unsigned allowed = FLAG_DD | FLAG_UTF8 | (o->f.method == NPZS_METHOD_DEFLATED ? 0x0006u : 0u);
    if (o->f.flags & ~allowed) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_FLAGS);
    if (o->f.name_len == 0) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_EMPTY);
    if (o->f.name_len > lim->max_name_len) return err(e, NPZS_E_LIMIT, NPZS_R_LIMIT_NAME);
    if (o->f.extra_len > lim->max_extra_len) return err(e, NPZS_E_LIMIT, NPZS_R_LIMIT_EXTRA);
    o->dd = (o->f.flags & FLAG_DD) != 0;
    return 0;
}

/* Whether a name has a byte the per-byte checks of npzs__zr_name look at (NUL, a control, DEL,
 * a backslash, a byte above 0x7F) or two dots in a row: 8 bytes at a time (the bit tricks
 * "hasless", "hasmore" and an exact zero-byte mask), the last word ending at the name's end
 * (overlapping the one before: its pairs of bytes are pairs of the name too); shorter names
 * byte by byte. */
#define ONES UINT64_C(0x0101010101010101)
#define HIGH UINT64_C(0x8080808080808080)
static inline uint64_t word_special(uint64_t w, uint64_t *dots) {
    uint64_t bs = w ^ (ONES * '\\'), d = w ^ (ONES * '.');
    uint64_t dm = ~(((d & ~HIGH) + ~HIGH) | d | ~HIGH); /* 0x80 in each byte that is a '.' */
    *dots = dm;
    return (((w - ONES * 0x20) & ~w) | (w + ONES) | w | ((bs - ONES) & ~bs) | (dm & (dm >> 8))) & HIGH;
}

static int name_special(const uint8_t *s, size_t n) {
    if (n < 8) {
        unsigned bad = 0, prev = 0;
        for (size_t i = 0; i < n; i++) {
            unsigned c = s[i], d = c == '.';
            bad |= (c - 0x20u > 0x5Eu) | (c == '\\') | (d & prev);
            prev = d;
        }
        return (int)bad;
    }
    uint64_t any = 0, dm, last = 0; /* last: 0x80 when the byte before the word was a '.' */
    size_t i = 0;
    for (; i + 8 <= n; i += 8) { /* n <= 65535: no wrap */
        any |= word_special(npzs__le64(s + i), &dm) | (last & dm);
        last = (dm >> 56) & 0x80;
    }
    if (i < n) any |= word_special(npzs__le64(s + n - 8), &dm);
    return any != 0;
}

/*@ requires 1 <= n <= 65535 && \valid_read(s + (0 .. n - 1)) && \valid(e); */
int npzs__zr_name(const uint8_t *s, size_t n, unsigned flags, npzs__zerr *e) {
    NPZS_REQUIRE(s && e && n >= 1 && n <= 65535);
    /* a name without any of those (the common case) passes the loop below without a finding:
     * it is skipped */
    int any = name_special(s, n);
    int ascii = 1;
    for (size_t i = 0; any && i < n; i++) {
        if (s[i] == 0) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_NUL);
        if (s[i] < 0x20 || s[i] == 0x7F) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_CONTROL);
        if (s[i] == '\\') return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_BACKSLASH);
        if (s[i] >= 0x80) ascii = 0;
        /* a ".." path component */
        if (s[i] == '.' && i + 1 < n && s[i + 1] == '.' && (i == 0 || s[i - 1] == '/') &&
            (i + 2 >= n || s[i + 2] == '/'))
            return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_DOTDOT);
    }
    if (s[0] == '/') return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_ABSOLUTE);
    if (n == 4 && memcmp(s, ".npy", 4) == 0) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_EMPTY_KEY);
    if (s[n - 1] == '/') return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_DIRECTORY);
    if (!ascii && !(flags & FLAG_UTF8)) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_CP437);
    if (!ascii && !npzs__utf8_valid(s, n)) return err(e, NPZS_E_BAD_NAME, NPZS_R_NAME_UTF8);
    return 0;
}

/* 1-3 bytes after the last field are accepted when they are zero (writers that align member data
 * pad with zero bytes: 4 of them read as an empty field with id 0; zipfile's _decodeExtra stops at
 * fewer than 4 bytes whatever they hold). */
/*@ requires n <= 65535 && (n == 0 || \valid_read(x + (0 .. n - 1)));
    requires \valid(z64) && \valid(z64_len) && \valid(e); */
int npzs__zr_extra(const uint8_t *x, size_t n, int local, const uint8_t **z64, size_t *z64_len, npzs__zerr *e) {
    NPZS_REQUIRE((x || n == 0) && n <= 65535 && z64 && z64_len && e);
    size_t i = 0;
    *z64 = NULL;
    *z64_len = 0;
    while (i < n) {
        if (i + 4 > n) { /* n <= 65535: no wrap */
            for (; i < n; i++)
                if (x[i]) return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_LEFTOVER);
            break;
        }
        uint16_t id = npzs__le16(x + i), len = npzs__le16(x + i + 2);
        if (i + 4 + len > n) /* zipfile reads central extra fields only */
            return err(e, NPZS_E_ZIP_BAD_HEADER, local ? NPZS_R_EXTRA_OVERRUN_LOCAL : NPZS_R_EXTRA_OVERRUN);
        if (id == 0x0001) {
            if (*z64) return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_TWO_ZIP64);
            *z64 = x + i + 4;
            *z64_len = len;
        } else if (id == 0x7075 || id == 0x6375) {
            return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_EXTRA_UNICODE);
        }
        i += 4u + len;
    }
    return 0;
}

/*@ requires \valid(o) && \valid(e) && (z == \null || zl == 0 || \valid_read(z + (0 .. zl - 1))); */
int npzs__zr_lfh_sizes(npzs__zlfh *o, const uint8_t *z, size_t zl, npzs__zerr *e) {
    NPZS_REQUIRE(o && e);
    o->z64 = z != NULL;
    o->z64_usize = o->z64_csize = 0;
    if (z) {
        if (zl != 16) return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_ZIP64_LOCAL);
        o->z64_usize = npzs__le64(z);
        o->z64_csize = npzs__le64(z + 8);
    }
    o->known = !o->dd;
    if (!o->known) return 0;
    o->csize = (o->f.csize32 == 0xFFFFFFFFu && z) ? o->z64_csize : o->f.csize32;
    o->usize = (o->f.usize32 == 0xFFFFFFFFu && z) ? o->z64_usize : o->f.usize32;
    if (z && ((o->z64_csize && o->z64_csize != o->csize) || (o->z64_usize && o->z64_usize != o->usize)))
        return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_LFH_ZIP64_SIZES);
    if (o->f.method == NPZS_METHOD_STORED && o->csize != o->usize)
        return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_LFH_STORED_SIZES);
    return 0;
}

/*@ requires \valid_read(o) && \valid(e); */
int npzs__zr_lfh_deferred(const npzs__zlfh *o, uint32_t crc, uint64_t cs, uint64_t us, npzs__zerr *e) {
    NPZS_REQUIRE(o && e);
    if ((!o->dd || o->f.crc) && o->f.crc != crc) return err(e, NPZS_E_CRC_MISMATCH, NPZS_R_CRC_LOCAL);
    if (o->dd) {
        /* deferred sizes: 0, or 0xFFFFFFFF with a ZIP64 field, or the real value */
        if (o->f.csize32 && !(o->f.csize32 == 0xFFFFFFFFu && o->z64) && o->f.csize32 != cs)
            return err(e, NPZS_E_SIZE_MISMATCH, NPZS_R_SIZE_LOCAL_C);
        if (o->f.usize32 && !(o->f.usize32 == 0xFFFFFFFFu && o->z64) && o->f.usize32 != us)
            return err(e, NPZS_E_SIZE_MISMATCH, NPZS_R_SIZE_LOCAL_U);
        if (o->z64 && ((o->z64_csize && o->z64_csize != cs) || (o->z64_usize && o->z64_usize != us)))
            return err(e, NPZS_E_SIZE_MISMATCH, NPZS_R_SIZE_LOCAL_Z64);
    }
    return 0;
}

/*@ requires \valid_read(d + (0 .. (wide ? 19 : 11))) && \valid(o); */
void npzs__zr_dd(const uint8_t *d, int wide, npzs__zdd *o) {
    NPZS_REQUIRE(d && o); /* d: the descriptor after its optional signature */
    o->crc = npzs__le32(d);
    o->csize = wide ? npzs__le64(d + 4) : npzs__le32(d + 4);
    o->usize = wide ? npzs__le64(d + 12) : npzs__le32(d + 8);
}

/*@ requires \valid_read(b + (0 .. 45)) && \valid(o) && \valid(e); */
int npzs__zr_cdh(const uint8_t *b, npzs__zcdh *o, npzs__zerr *e) {
    NPZS_REQUIRE(b && o && e);
    memset(o, 0, sizeof *o);
    fixed(b + 8, &o->f);
    o->comment_len = npzs__le16(b + 32);
    o->disk = npzs__le16(b + 34);
    o->off32 = npzs__le32(b + 42);
    if ((npzs__le16(b + 6) & 0xFF) > 63) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_ZIP_CD_VERSION);
    return 0;
}

/*@ requires \valid_read(c) && \valid(o) && \valid(e) && (z == \null || zl == 0 || \valid_read(z + (0 .. zl - 1))); */
int npzs__zr_cdh_zip64(const npzs__zcdh *c, const uint8_t *z, size_t zl, npzs__zcdh_sizes *o, npzs__zerr *e) {
    NPZS_REQUIRE(c && o && e);
    int su = c->f.usize32 == 0xFFFFFFFFu, sc = c->f.csize32 == 0xFFFFFFFFu;
    int so = c->off32 == 0xFFFFFFFFu, sd = c->disk == 0xFFFFu;
    size_t implied = 8u * (size_t)(su + sc + so) + 4u * (size_t)sd;
    o->usize = c->f.usize32;
    o->csize = c->f.csize32;
    o->off = c->off32;
    uint64_t disk = c->disk;
    if (z) {
        if (zl != implied) return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_EXTRA_ZIP64_CENTRAL);
        size_t k = 0;
        if (su) {
            o->usize = npzs__le64(z + k);
            k += 8;
        }
        if (sc) {
            o->csize = npzs__le64(z + k);
            k += 8;
        }
        if (so) {
            o->off = npzs__le64(z + k);
            k += 8;
        }
        if (sd) { disk = npzs__le32(z + k); }
    }
    if (disk != 0) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_CD);
    return 0;
}

/*@ requires \valid_read(b + (0 .. 55)) && \valid(o); */
void npzs__zr_z64_fields(const uint8_t *b, npzs__zend *o) {
    NPZS_REQUIRE(b && o);
    o->disk = npzs__le32(b + 16);
    o->disk_cd = npzs__le32(b + 20);
    o->count_disk = npzs__le64(b + 24);
    o->count = npzs__le64(b + 32);
    o->cd_size = npzs__le64(b + 40);
    o->cd_off = npzs__le64(b + 48);
    o->comment_len = 0;
}

/*@ requires \valid_read(b + (0 .. 55)) && \valid(o) && \valid(e); */
int npzs__zr_z64_eocd(const uint8_t *b, npzs__zend *o, npzs__zerr *e) {
    NPZS_REQUIRE(b && o && e);
    uint64_t size = npzs__le64(b + 4);
    if (size < 44) return err(e, NPZS_E_ZIP_BAD_HEADER, NPZS_R_Z64_SHORT);
    if (size != 44) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_Z64_EXTENSIBLE);
    npzs__zr_z64_fields(b, o);
    if (o->disk != 0 || o->disk_cd != 0) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_Z64);
    return 0;
}

/*@ requires \valid_read(b + (0 .. 19)) && \valid(z64_off) && \valid(e); */
int npzs__zr_z64_loc(const uint8_t *b, uint64_t *z64_off, npzs__zerr *e) {
    NPZS_REQUIRE(b && z64_off && e);
    if (npzs__le32(b + 4) != 0 || npzs__le32(b + 16) != 1) return err(e, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_LOC);
    *z64_off = npzs__le64(b + 8);
    return 0;
}

/*@ requires \valid_read(b + (0 .. 21)) && \valid(o); */
void npzs__zr_eocd(const uint8_t *b, npzs__zend *o) {
    NPZS_REQUIRE(b && o);
    o->disk = npzs__le16(b + 4);
    o->disk_cd = npzs__le16(b + 6);
    o->count_disk = npzs__le16(b + 8);
    o->count = npzs__le16(b + 10);
    o->cd_size = npzs__le32(b + 12);
    o->cd_off = npzs__le32(b + 16);
    o->comment_len = npzs__le16(b + 20);
}
