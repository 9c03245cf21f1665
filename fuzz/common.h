/*
 * fuzz/common.h -- shared driver for the npzstream fuzz harnesses.
 *
 * fz_run() parses a buffer under a push schedule and folds everything the
 * parser reports into a normalized digest that is independent of how the
 * input was split:
 *   - every event's type and member index;
 *   - MEMBER_BEGIN: offset, name bytes, method, flags;
 *   - HEADER: offset, version, fortran, structured, dtype, descr, ndim, shape,
 *     itemsize, count, nbytes, header_len;
 *   - DATA / BLOB: the bytes of one member, hashed as ONE stream (chunk
 *     boundaries merged), folded in when the next non-data event, an error or
 *     the end of the run arrives;
 *   - MEMBER_END: offset, kind, size, csize, crc32, data_crc32, data_size;
 *   - END: offset, format, member count;
 * plus the verdict (END reached), error code, rule, error offset, error member and
 * error content offset.
 *
 * While it runs it checks, and abort()s on violation of:
 *   - progress: each npzs_next() call consumed input, emitted an event,
 *     returned NPZS_NEED_INPUT with in.pos == in.size, returned NPZS_DONE or
 *     failed; NEED_INPUT after npzs_finish() is a hang and also aborts;
 *   - DATA/BLOB pos fields are contiguous within a member, chunks are never
 *     empty, every byte is read (so ASan checks pointer and length);
 *   - errors are sticky and match npzs_error(); END is followed by NPZS_DONE;
 *   - the allocator hooks see balanced alloc/free (no leak, no foreign free).
 * Every push hands the parser a fresh heap copy of the chunk that is freed as
 * soon as the chunk is used up, so ASan also catches a pointer the parser
 * kept into caller memory across calls.
 */
#ifndef FZ_COMMON_H
#define FZ_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npzstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A push schedule.  sched == NULL: the whole input in one push.
 * Otherwise byte k of sched (cyclic) gives the size of push k:
 *   0x00        a 0-byte push
 *   0x01..0xDF  that many bytes
 *   0xE0..0xFF  2^(b - 0xE0 + 8) bytes (256 B .. 8 MiB)
 * An empty schedule (sched != NULL, sched_n == 0) means 1-byte pushes. */
typedef struct fz_opts {
    const npzs_limits *lim; /* NULL: defaults */
    long fail_at;           /* fail the fail_at-th allocation (0-based); -1: never */
    const uint8_t *sched;
    size_t sched_n;
    int finish_null; /* after finish pass in == NULL (else an empty npzs_in) */
    FILE *log;       /* non-NULL: print the normalized events */
    int no_memo;     /* parse every .npy header (npzs__header_memo off): the digest is unchanged */
    int into;        /* name a destination (npzs_data_into) for every array of at most
                                16 MiB; its DATA chunks must be there; the digest is unchanged */
    int par;         /* run through the parallel-inflate helper (npzs_par_*), every
                                deflated member of known size inflated ahead */
    unsigned par_threads;
    uint64_t par_held;
    uint64_t par_used;         /* out: members whose output came from a worker */
    int no_data;               /* leave DATA and BLOB events out of the digest (their checks too) */
    int par_take;              /* with par: npzs_par_take_data after every HEADER (alignment 1 << (par_take - 1));
                                a taken array's DATA chunks must be in its block; the digest is unchanged */
    uint64_t par_taken;        /* out: arrays whose data was taken */
    unsigned mask;             /* nonzero: only these events (NPZS_EV_BIT bits; END always) go into the
                                digest, and the zipfile oracle is not run */
    int mask_parser;           /* with mask: the parser is asked for them (npzs_events), and an event
                                outside them is a failure */
    uint64_t par_skip;         /* with par: npzs_par_skip_data, a job keeping this many bytes
                                (UINT64_MAX: the default; 0: not skipping); needs no_data */
    int par_stable;            /* with par: npzs_par_stable_input, the pushes slices of one copy
                                (1: from the first byte; 2: from the second push on) */
    const npzs_policy *policy; /* npzs_policy_use (NULL: none) */
    int hash;                  /* npzs_hash(NPZS_HASH_SHA256): the digests go into the events' digest */
} fz_opts;

typedef struct fz_result {
    int created; /* npzs_new succeeded */
    uint64_t digest;
    uint64_t events;
    int accepted; /* END delivered */
    int err;
    uint64_t err_off;
    long err_member;
    uint64_t err_coff;
    const char *err_rule; /* npzs_error_rule (static text), NULL without an error */
    uint64_t visited;     /* npzs__visited() at the end */
    uint32_t cvisited;
    /* allocator statistics */
    unsigned long allocs;
    int alloc_failed; /* the injected failure happened */
    size_t peak_bytes;
} fz_result;

void fz_opts_init(fz_opts *o);
/* Returns r->created. */
int fz_run(const uint8_t *data, size_t n, const fz_opts *o, fz_result *r);
/* 1 when the split-invariant parts of two results are identical. */
int fz_same(const fz_result *a, const fz_result *b);
void fz_print_result(FILE *f, const char *tag, const fz_result *r);
/* 1 when the library's words (a detail, a policy fault's path or message) are whole UTF-8 with no
 * character text output escapes. */
int fz_words_ok(const char *w);
/* abort() with a message. */
void fz_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((noreturn, format(printf, 1, 2)))
#endif
    ;

/* The layout of the split harnesses (fuzz_split, fuzz_par): [ctl][ctl & 15 schedule bytes][file].
 * Returns 0 for an empty input. */
typedef struct fz_split_in {
    unsigned ctl;
    const uint8_t *sched, *file;
    size_t sched_n, file_n;
} fz_split_in;
int fz_split_input(const uint8_t *data, size_t size, fz_split_in *s);

/* Parse whole and under a fixed split schedule with 0- and 1-byte pushes;
 * abort (with both event logs) unless fz_same().  Returns the whole-run result. */
fz_result fz_check(const uint8_t *data, size_t n, const npzs_limits *lim);
void fz_report_mismatch(const uint8_t *data, size_t n, const npzs_limits *lim, const uint8_t *sched, size_t sched_n,
                        const fz_result *a, const fz_result *b)
#if defined(__GNUC__)
    __attribute__((noreturn))
#endif
    ;

/* ---- the zipfile oracle (fuzz/zfview.c) ---------------------------------- */
/* One central directory entry as CPython's zipfile reads it, after ZipFile.open's checks. */
typedef struct fz_zf_entry {
    const uint8_t *name;
    size_t name_len;
    uint64_t lfh, data, csize, usize;
    uint32_t crc;
    unsigned method, flags;
} fz_zf_entry;
#define FZ_ZF_FIXED64 1u      /* the CVE-2025-8291 fix: the locator's offset is followed */
#define FZ_ZF_WIN65557 2u     /* the 65535 + 22 byte search window (3.12.10+, 3.14) */
#define FZ_ZF_UNICODE_PATH 4u /* 3.12+: the Info-ZIP Unicode path extra renames a member */
#define FZ_ZF_VARIANTS 8u
/* The entries zipfile (variant bits) lists, in directory order; -1 when it refuses the archive
 * (BadZipFile, NotImplementedError, an error reading a member's local header). */
long fz_zipfile_read(const uint8_t *f, size_t n, unsigned variant, fz_zf_entry *out, size_t cap);
/* abort() unless every variant lists the members fz_run recorded (called by fz_run). */
void fz_zipfile_check(const uint8_t *data, size_t n, const void *seen, size_t nseen, size_t members);

/* Compare the .npy header parser's two paths on one header text (abort on any
 * difference); returns 1 when the exact-NumPy-text fast path recognised it. */
int fz_header_paths(const uint8_t *s, size_t n, int v3);

/* States reached by every fz_run() of this process (for the state gate). */
extern uint64_t fz_visited_all;
extern uint32_t fz_cvisited_all;
extern uint32_t fz_vlen_visited_all;  /* vlen parser states reached (fuzz_vlen) */
extern uint32_t fz_scout_visited_all; /* the helper's scout states reached (states.h) */
extern uint32_t fz_errors_seen;       /* bit -code set for every error code seen */

/* ---- byte builders for the wrapping harnesses ---------------------------- */
typedef struct fz_buf {
    uint8_t *p;
    size_t n, cap;
} fz_buf;
void fz_put(fz_buf *b, const void *s, size_t n);
void fz_put8(fz_buf *b, unsigned v);
void fz_put16(fz_buf *b, unsigned v);
void fz_put32(fz_buf *b, uint32_t v);
void fz_put64(fz_buf *b, uint64_t v);
void fz_free_buf(fz_buf *b);
uint32_t fz_crc32(const uint8_t *s, size_t n);
/* raw deflate (-15 window bits) of s; returns malloc'd bytes. */
uint8_t *fz_deflate(const uint8_t *s, size_t n, size_t *out_n);
/* A canonical .npy: magic v1.0, header text padded to 64, data. */
void fz_npy(fz_buf *b, const char *dict, const uint8_t *data, size_t dn);

/* One member of a synthetic archive. */
typedef struct fz_member {
    const char *name;
    const uint8_t *content; /* uncompressed content */
    size_t content_n;
    int method;       /* 0 or 8 */
    int dd;           /* 0: sizes in the local header, no extra;
                                1: pipe style (bit 3, ZIP64 extra 0/0, 24-byte descriptor);
                                2: as 1 without the descriptor (the caller appends one);
                                3: bit 3, no extra, no descriptor (the caller appends one) */
    uint64_t lfh_off; /* filled by fz_zip_member */
    uint32_t crc;
    uint64_t csize;
} fz_member;
void fz_zip_lfh(fz_buf *b, const char *name, size_t nl, unsigned version, unsigned flags, unsigned method, uint32_t crc,
                uint32_t csize, uint32_t usize, const uint8_t *extra, size_t en);
void fz_zip_cdh_raw(fz_buf *b, const char *name, size_t nl, unsigned version, unsigned flags, unsigned method,
                    uint32_t crc, uint32_t csize, uint32_t usize, uint32_t lfh_off);
/* The canonical small array used by the wrappers: <i4 (2,) = [0x04030201?]: bytes 1, 8, 15, ... */
const uint8_t *fz_npy_small(size_t *n);
/* Append the local header, data and (pipe style) descriptor of m. */
void fz_zip_member(fz_buf *b, fz_member *m);
/* Append the central directory record of m. */
void fz_zip_cdh(fz_buf *b, const fz_member *m);
/* Append a classic end record. */
void fz_zip_eocd(fz_buf *b, unsigned count, uint32_t cd_size, uint32_t cd_off);

/* ---- policies' patterns ---------------------------------------------------------------------- */
/* fnmatch.fnmatchcase(s, pat) of CPython 3.11 over the code points of two valid UTF-8 strings: an
 * oracle written from fnmatch.translate, apart from the library's matcher. */
int fz_fnmatch(const uint8_t *pat, size_t pn, const uint8_t *s, size_t sn);
/* The spec a member's key takes, trying the exact keys, then every pattern in the policy's order
 * (npzs__glob_match): its index, -1 for none. */
long fz_spec_brute(const npzs_policy *pol, const uint8_t *key, size_t n);
/* npzs__pol_spec_for (the index) on key (valid UTF-8) with scratch m against fz_spec_brute, and
 * its work against its bounds: NULL when they hold, else what differs. */
struct npzs__pmatch;
const char *fz_lookup_differs(const npzs_policy *pol, const uint8_t *key, size_t n, struct npzs__pmatch *m);

/* Simple reader over fuzz bytes. */
typedef struct fz_reader {
    const uint8_t *p;
    size_t n;
} fz_reader;
unsigned fz_take8(fz_reader *r);
uint32_t fz_take32(fz_reader *r);

#ifdef __cplusplus
}
#endif
#endif
