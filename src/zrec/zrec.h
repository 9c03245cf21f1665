/* zrec.h -- the ZIP record decoders of zrec.c, pure functions over a staged record, used by the
 * parser (zip.c) and by the parallel helper's scout (scout.c); and zipfile's end-record search
 * (zlocate.c).  They see no parser: a source of zrec/ that includes internal.h does not compile,
 * and `make purity` (run by make check) says so too. */
#ifndef NPZS_ZREC_H
#define NPZS_ZREC_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

typedef struct npzs__zerr {
    int code; /* NPZS_E_* */
    int rule; /* enum npzs_rule */
} npzs__zerr;

/* A local header, and what its extra field and flags say about the member's delimiting. */
/* The fields a local header and a central directory header share, in the same order (APPNOTE
 * 4.3.7 and 4.3.12, from the general purpose flags to the extra field's length). */
typedef struct npzs__zfixed {
    uint16_t flags, method, name_len, extra_len;
    uint32_t crc, csize32, usize32;
} npzs__zfixed;

typedef struct npzs__zlfh {
    npzs__zfixed f;
    int dd;  /* flag bit 3: sizes and CRC in a data descriptor after the data */
    int z64; /* a ZIP64 extra field */
    uint64_t z64_usize, z64_csize;
    int known;             /* sizes known from the header (no bit 3) */
    uint64_t csize, usize; /* when known */
} npzs__zlfh;

typedef struct npzs__zcdh {
    npzs__zfixed f;
    uint16_t comment_len, disk;
    uint32_t off32;
} npzs__zcdh;

typedef struct npzs__zcdh_sizes {
    uint64_t usize, csize, off; /* after the ZIP64 extra field */
} npzs__zcdh_sizes;

/* An end record or a ZIP64 end record, as written. */
typedef struct npzs__zend {
    uint64_t disk, disk_cd, count_disk, count, cd_size, cd_off;
    uint16_t comment_len;
} npzs__zend;

typedef struct npzs__zdd {
    uint32_t crc;
    uint64_t csize, usize;
} npzs__zdd;

/* Each returns 0, or -1 with *e set. */
int npzs__zr_lfh(const uint8_t *b, const npzs_limits *lim, npzs__zlfh *o, npzs__zerr *e); /* 30 bytes */
int npzs__zr_name(const uint8_t *s, size_t n, unsigned flags, npzs__zerr *e);
int npzs__zr_extra(const uint8_t *x, size_t n, int local, const uint8_t **z64, size_t *z64_len, npzs__zerr *e);
int npzs__zr_lfh_sizes(npzs__zlfh *o, const uint8_t *z64, size_t z64_len, npzs__zerr *e);
/* What a local header states, against the member as measured (CRC, compressed, uncompressed). */
int npzs__zr_lfh_deferred(const npzs__zlfh *o, uint32_t crc, uint64_t cs, uint64_t us, npzs__zerr *e);
void npzs__zr_dd(const uint8_t *d, int wide, npzs__zdd *o);       /* after the signature */
int npzs__zr_cdh(const uint8_t *b, npzs__zcdh *o, npzs__zerr *e); /* 46 bytes */
int npzs__zr_cdh_zip64(const npzs__zcdh *c, const uint8_t *z64, size_t z64_len, npzs__zcdh_sizes *o, npzs__zerr *e);
void npzs__zr_z64_fields(const uint8_t *b, npzs__zend *o);                /* a ZIP64 end record's fields, unchecked */
int npzs__zr_z64_eocd(const uint8_t *b, npzs__zend *o, npzs__zerr *e);    /* 56 bytes */
int npzs__zr_z64_loc(const uint8_t *b, uint64_t *z64_off, npzs__zerr *e); /* 20 bytes */
void npzs__zr_eocd(const uint8_t *b, npzs__zend *o);                      /* 22 bytes */

/* zipfile's search reads at most the last 64 KiB + 22 bytes, and 76 bytes before the end record
 * it finds there (locator and ZIP64 end record) */
#define NPZS_TAIL_MAX (65536u + 22u + 20u + 56u)

/* zlocate.c: CPython zipfile's end-record search over a view of the input's last bytes. */
typedef struct npzs__tailview {
    const uint8_t *a, *b; /* the view in (up to) two spans: a[0, alen) then b[0, blen) */
    size_t alen, blen;
    uint64_t base; /* absolute offset of a[0] */
    uint64_t size; /* input size: base + alen + blen */
} npzs__tailview;
/* variant bits: which CPython releases' reading (zlocate.c lists them) */
#define NPZS_ZF_FIXED64 1u  /* the CVE-2025-8291 fix (gh-139700): the locator's offset is followed */
#define NPZS_ZF_WIN65557 2u /* gh-113977: the search window is 65535 + 22 bytes (else 65536 + 22) */
#define NPZS_ZF_VARIANTS 4u
enum {
    NPZS_ZF_NOTZIP = 1, /* BadZipFile("File is not a zip file") */
    NPZS_ZF_MULTIDISK,  /* BadZipFile("zipfiles that span multiple disks are not supported") */
    NPZS_ZF_BAD,        /* another BadZipFile */
    NPZS_ZF_UNKNOWN
}; /* the search needs a byte outside the view */
typedef struct npzs__zf_end {
    int status; /* 0: found; else NPZS_ZF_*, at `at`, with msg */
    uint64_t at;
    const char *msg;
    uint64_t eocd_off; /* the end record zipfile takes */
    int loc, z64;      /* a locator was found before it; a ZIP64 end record was used */
    uint64_t loc_off, z64_off;
    npzs__zend rec;    /* the end record's fields as zipfile reads them (ZIP64's when used) */
    uint64_t cd_start; /* where zipfile reads the directory: cd_off + concat */
} npzs__zf_end;
int npzs__zf_locate(const npzs__tailview *v, unsigned variant, npzs__zf_end *e);

#endif
