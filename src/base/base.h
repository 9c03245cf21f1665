/* base.h -- what every npzstream source may use: the export marker, little-endian reads, the
 * .npy magic, the cap on dimensions. */
#ifndef NPZS_BASE_H
#define NPZS_BASE_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

#if defined(__GNUC__)
#define NPZS__API __attribute__((visibility("default")))
#else
#define NPZS__API
#endif

/* For the few small helpers a member passes through several times (a probe of the name table, a
 * data chunk, a record's fixed fields, the header's results, room in the directory's tail): inlined
 * even where gcc's -O2 heuristics keep them out of line in the link-time-optimised tool, whose
 * calls to them cost about 100 of a member's 2,000 instructions (bench/README.md, issue 44). */
#if defined(__GNUC__)
#define NPZS__INLINE inline __attribute__((always_inline))
#else
#define NPZS__INLINE inline
#endif

static inline uint16_t npzs__le16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }
static inline uint32_t npzs__le32(const uint8_t *b) {
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}
static inline uint64_t npzs__le64(const uint8_t *b) {
    return (uint64_t)npzs__le32(b) | ((uint64_t)npzs__le32(b + 4) << 32);
}

/* alloc.c: malloc and free, the hooks when the caller gives none */
extern const npzs_allocator npzs__malloc;

/* A limit rejection's numbers (npzs_error_limit, npzs_vlen_error_limit): the limit's name (NULL:
 * none recorded), its value in force, and what the input needed or declared. */
typedef struct {
    const char *name;
    uint64_t value, needed;
} npzs__limit_hit;

/* h's numbers to the API's out-pointers (each may be NULL; h NULL: no error): 1 if a limit is
 * recorded, else 0 with NULL and zeros. */
static inline int npzs__limit_out(const npzs__limit_hit *h, const char **name, uint64_t *value, uint64_t *needed) {
    int have = h && h->name;
    if (name) *name = have ? h->name : NULL;
    if (value) *value = have ? h->value : 0;
    if (needed) *needed = have ? h->needed : 0;
    return have;
}

#define NPZS_NPY_MAGIC "\x93NUMPY" /* a .npy's first 6 bytes (the parser's, and the inventory's sniff) */
#define NPZS_MAX_NDIM 64           /* hard cap on limits.max_ndim (NumPy 2.x NPY_MAXDIMS) */

#endif
