/*
 * npzstream_inv.h -- the fail-closed inventory of an archive (added in 0.7.0): every member a
 * stream can still frame after the strict parser (npzstream.h) has stopped at its first error.
 *
 * The strict parser is the verdict; it stops at the first rejection, and a caller that lists the
 * members it saw never sees the members after the first bad one (an object array, then a pickle,
 * then an array: 0 members listed).  The inventory walker is fed the same bytes from the first
 * and follows the ZIP framing alone: each local header with its name, method and sizes, the data
 * skipped by its stated size (or delimited by inflating it, or by its data descriptor when the
 * sizes follow the data), then the central directory, whose entries are matched to the local
 * headers by offset (an entry no local header had is listed too, with the error
 * INV.central-only).  It never decides the input's verdict, and it never allocates what the input
 * merely declares: a member costs its name and a few words, up to the limits' max_members and
 * max_name_len.
 *
 * A member whose local header starts after the offset given to npzs_inv_check_after() (the strict
 * parser's error offset) is checked on its own as it streams: inflated when deflated, its CRC-32 and
 * sizes compared with those declared, an .npy member's header parsed by a strict parser of its own
 * (an object array is its PICKLE error), a blob's first bytes sniffed (NPZS_SNIFF_*).  Its error is
 * then its own: code, rule, message and offset, as the parser's (npzstream.h).  Members before
 * are listed with their framing only (error 0): the strict parser checked them.
 *
 *     npzs_inv *v = npzs_inv_new(&lim, NULL);
 *     for each slice: npzs_next(p, ...) until NEED_INPUT or an error;
 *                     if (first error) npzs_inv_check_after(v, npzs_error_offset(p));
 *                     npzs_inv_push(v, slice, n);
 *     npzs_inv_finish(v);
 *     for (i = 0; i < npzs_inv_count(v); i++) use(npzs_inv_get(v, i));
 *     npzs_inv_free(v);
 *
 * An input that does not start with a ZIP local header (an .npy, anything else) lists nothing.
 */
#ifndef NPZSTREAM_INV_H
#define NPZSTREAM_INV_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Where a member was met: in the stream (its local header), in the central directory, or both. */
#define NPZS_INV_LOCAL 1u
#define NPZS_INV_CENTRAL 2u

/* One member.  The pointers are valid until npzs_inv_free (or npzs_inv_reset). */
typedef struct npzs_inv_member {
    const char *name; /* raw name bytes (not NUL-terminated) */
    size_t name_len;
    unsigned source;      /* NPZS_INV_LOCAL | NPZS_INV_CENTRAL */
    unsigned flags;       /* ZIP general purpose flags */
    int method;           /* the ZIP method number (NPZS_METHOD_STORED, _DEFLATED, or another) */
    uint64_t offset;      /* its local header (the central directory's offset for one met there only) */
    uint64_t csize, size; /* as declared (the data descriptor's when it has one) */
    uint32_t crc32;       /* as declared */
    int checked;          /* 1: its content was checked on its own (npzs_inv_check_after) */
    /* checked members: what the content is */
    npzs_kind kind; /* 0 when not known */
    int sniff;      /* NPZS_SNIFF_* (NPZS_SNIFF_NPY for an array) */
    char dtype[64]; /* an array's dtype.str ("" when not parsed) */
    uint32_t ndim;
    uint64_t shape[8]; /* its first 8 dimensions */
    int fortran_order;
    uint64_t nbytes;
    /* its error: 0 when none */
    int error;               /* NPZS_E_* */
    const char *rule;        /* its rule id (static text) */
    const char *message;     /* static text */
    uint64_t error_offset;   /* absolute input offset */
    uint64_t content_offset; /* in the member's content, or UINT64_MAX */
    /* a limit's numbers when a limit decided its error (added in 0.8.0; as npzs_error_limit gives
     * them: code limit, or its own parser's header_too_large or bad_shape past max_ndim): the
     * limit's name (an npzs_limits field; NULL when none), its value in force, and what the member
     * needed or declared */
    const char *limit;
    uint64_t limit_value, limit_needed;
} npzs_inv_member;

typedef struct npzs_inv npzs_inv;

/* What a checked member's content looks like as it streams (npzs_inv_content): its bytes in order,
 * inflated when deflated; then a call with data NULL at its end.  For a caller that looks inside
 * (a nested zip or gzip).  Returns 0. */
typedef int (*npzs_inv_content_fn)(void *ctx, size_t member, const uint8_t *data, size_t len);

/* A walker with the limits (NULL: the defaults; copied) and allocator hooks (NULL: malloc).  NULL
 * when out of memory or a limit is invalid. */
npzs_inv *npzs_inv_new(const npzs_limits *lim, const npzs_allocator *alloc);
void npzs_inv_free(npzs_inv *v);
/* A new input, the allocations kept. */
void npzs_inv_reset(npzs_inv *v);
/*  Returns   npzs_inv_new: the walker, or NULL (out of memory, an invalid limit).
 *  Errors    none recorded (there is no walker).
 *  Lifetime  lim and alloc are copied; npzs_inv_reset forgets the input, its members and their
 *            names; npzs_inv_free (NULL is a no-op) ends every pointer the walker gave.
 *  Threads   one thread at a time per walker (walkers are independent: any number in any threads).
 *  Added in  0.7.0. */
/* Members whose local header starts after byte `offset` are checked on their own (call before
 * pushing the bytes of such a member; the strict parser's error offset). */
void npzs_inv_check_after(npzs_inv *v, uint64_t offset);
/* The content of checked members to fn (NULL: none). */
void npzs_inv_content(npzs_inv *v, npzs_inv_content_fn fn, void *ctx);
/*  Returns   nothing.
 *  Errors    none.
 *  Lifetime  the smallest offset given stays until npzs_inv_reset; fn and ctx until replaced,
 *            ctx is the caller's to keep alive.
 *  Threads   one thread at a time per walker; fn is called on the thread that pushes.
 *  Added in  0.7.0. */
/* The next bytes of the input: all are taken.  0, or NPZS_E_NOMEM (sticky: the listing stops). */
int npzs_inv_push(npzs_inv *v, const void *data, size_t len);
/* The end of the input: a member or record cut short is listed with INV.truncated. */
void npzs_inv_finish(npzs_inv *v);
/*  Returns   npzs_inv_push: 0, or NPZS_E_NOMEM; npzs_inv_finish nothing.
 *  Errors    a framing error is not returned: it stops the listing (npzs_inv_error), and a member's
 *            own error is in its record; out of memory is sticky.
 *  Lifetime  data is read during the call only (nothing of it is kept but names).
 *  Threads   one thread at a time per walker.
 *  Added in  0.7.0. */
/* The members listed so far, in the order met (the central directory's extra entries last). */
size_t npzs_inv_count(const npzs_inv *v);
const npzs_inv_member *npzs_inv_get(const npzs_inv *v, size_t i);
/* 1 when the input started as a ZIP archive (a local header or an empty archive's end record). */
int npzs_inv_is_zip(const npzs_inv *v);
/* 1 when the walk reached the end record (the central directory was read whole). */
int npzs_inv_complete(const npzs_inv *v);
/* When the framing broke (INV.framing, INV.truncated, INV.limit, out of memory): its error code,
 * rule and offset (0, NULL, 0 when it did not). */
int npzs_inv_error(const npzs_inv *v, const char **rule, uint64_t *offset);
/*  Returns   the accessors above: the count, a member (NULL past the count), 1 or 0, the framing's
 *            error code (0 for none) with *rule and *offset (rule and offset may be NULL).
 *  Errors    none.
 *  Lifetime  the record npzs_inv_get returns until the next push, finish, reset or free (the
 *            list grows); its name until npzs_inv_reset or npzs_inv_free; rules and messages
 *            are static text.
 *  Threads   any thread that does not call the walker at the same time.
 *  Added in  0.7.0. */
/* When a limit stopped the listing (INV.limit): the limit's name (an npzs_limits field), its value
 * in force and what the input needed or declared, as npzs_error_limit gives them for a parser. */
int npzs_inv_error_limit(const npzs_inv *v, const char **name, uint64_t *value, uint64_t *needed);
/*  Returns   1 with the numbers when the listing stopped at a limit; else 0, *name NULL and the
 *            numbers 0 (each pointer may be NULL).
 *  Errors    none.
 *  Lifetime  the name is static text.
 *  Threads   any thread that does not call the walker at the same time.
 *  Added in  0.8.0. */

#ifdef __cplusplus
}
#endif
#endif
