/* zrec.h -- the ZIP record decoders of zrec.c, pure functions over a staged record, used by the
 * parser (zip.c) and by the parallel helper's scout (scout.c); and zipfile's end-record search
 * (zlocate.c).  They see no parser: a source of zrec/ that includes internal.h does not compile,
 * and `make purity` (run by make check) says so too. */
#ifndef NPZS_ZREC_H
#define NPZS_ZREC_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

typedef struct npzs_zerr {
    int code;               /* NPZS_E_* */
    int rule;               /* enum npzs_rule */
} npzs_zerr;

/* A local header, and what its extra field and flags say about the member's delimiting. */
/* The fields a local header and a central directory header share, in the same order (APPNOTE
 * 4.3.7 and 4.3.12, from the general purpose flags to the extra field's length). */
typedef struct npzs_zfixed {
    uint16_t flags, method, name_len, extra_len;
    uint32_t crc, csize32, usize32;
} npzs_zfixed;

typedef struct npzs_zlfh {
    npzs_zfixed f;
    int dd;                 /* flag bit 3: sizes and CRC in a data descriptor after the data */
    int z64;                /* a ZIP64 extra field */
    uint64_t z64_usize, z64_csize;
    int known;              /* sizes known from the header (no bit 3) */
    uint64_t csize, usize;  /* when known */
} npzs_zlfh;

typedef struct npzs_zcdh {
    npzs_zfixed f;
    uint16_t comment_len, disk;
    uint32_t off32;
} npzs_zcdh;

typedef struct npzs_zcdh_sizes {
    uint64_t usize, csize, off; /* after the ZIP64 extra field */
} npzs_zcdh_sizes;

/* An end record or a ZIP64 end record, as written. */
typedef struct npzs_zend {
    uint64_t disk, disk_cd, count_disk, count, cd_size, cd_off;
    uint16_t comment_len;
} npzs_zend;

typedef struct npzs_zdd {
    uint32_t crc;
    uint64_t csize, usize;
} npzs_zdd;

/* Each returns 0, or -1 with *e set. */
int npzs__zr_lfh(const uint8_t *b, const npzs_limits *lim, npzs_zlfh *o, npzs_zerr *e); /* 30 bytes */
int npzs__zr_name(const uint8_t *s, size_t n, unsigned flags, npzs_zerr *e);
int npzs__zr_extra(const uint8_t *x, size_t n, int local, const uint8_t **z64, size_t *z64_len, npzs_zerr *e);
int npzs__zr_lfh_sizes(npzs_zlfh *o, const uint8_t *z64, size_t z64_len, npzs_zerr *e);
/* What a local header states, against the member as measured (CRC, compressed, uncompressed). */
int npzs__zr_lfh_deferred(const npzs_zlfh *o, uint32_t crc, uint64_t cs, uint64_t us, npzs_zerr *e);
void npzs__zr_dd(const uint8_t *d, int wide, npzs_zdd *o);                              /* after the signature */
int npzs__zr_cdh(const uint8_t *b, npzs_zcdh *o, npzs_zerr *e);                          /* 46 bytes */
int npzs__zr_cdh_zip64(const npzs_zcdh *c, const uint8_t *z64, size_t z64_len, npzs_zcdh_sizes *o, npzs_zerr *e);
void npzs__zr_z64_fields(const uint8_t *b, npzs_zend *o); /* a ZIP64 end record's fields, unchecked */
int npzs__zr_z64_eocd(const uint8_t *b, npzs_zend *o, npzs_zerr *e);                     /* 56 bytes */
int npzs__zr_z64_loc(const uint8_t *b, uint64_t *z64_off, npzs_zerr *e);                 /* 20 bytes */
void npzs__zr_eocd(const uint8_t *b, npzs_zend *o);                                      /* 22 bytes */

/* zipfile's search reads at most the last 64 KiB + 22 bytes, and 76 bytes before the end record
 * it finds there (locator and ZIP64 end record) */
#define NPZS_TAIL_MAX (65536u + 22u + 20u + 56u)

/* zlocate.c: CPython zipfile's end-record search over a view of the input's last bytes. */
typedef struct npzs_tailview {
    const uint8_t *a, *b;   /* the view in (up to) two spans: a[0, alen) then b[0, blen) */
    size_t alen, blen;
    uint64_t base;          /* absolute offset of a[0] */
    uint64_t size;          /* input size: base + alen + blen */
} npzs_tailview;
/* variant bits: which CPython releases' reading (zlocate.c lists them) */
#define NPZS_ZF_FIXED64 1u  /* the CVE-2025-8291 fix (gh-139700): the locator's offset is followed */
#define NPZS_ZF_WIN65557 2u /* gh-113977: the search window is 65535 + 22 bytes (else 65536 + 22) */
#define NPZS_ZF_VARIANTS 4u
enum { NPZS_ZF_NOTZIP = 1,  /* BadZipFile("File is not a zip file") */
       NPZS_ZF_MULTIDISK,   /* BadZipFile("zipfiles that span multiple disks are not supported") */
       NPZS_ZF_BAD,         /* another BadZipFile */
       NPZS_ZF_UNKNOWN };   /* the search needs a byte outside the view */
typedef struct npzs_zf_end {
    int status;             /* 0: found; else NPZS_ZF_*, at `at`, with msg */
    uint64_t at;
    const char *msg;
    uint64_t eocd_off;      /* the end record zipfile takes */
    int loc, z64;           /* a locator was found before it; a ZIP64 end record was used */
    uint64_t loc_off, z64_off;
    npzs_zend rec;          /* the end record's fields as zipfile reads them (ZIP64's when used) */
    uint64_t cd_start;      /* where zipfile reads the directory: cd_off + concat */
} npzs_zf_end;
int npzs__zf_locate(const npzs_tailview *v, unsigned variant, npzs_zf_end *e);

#endif
