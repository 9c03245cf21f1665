/* base.h -- what every npzstream source may use: the export marker, little-endian reads, CRC-32. */
#ifndef NPZS_BASE_H
#define NPZS_BASE_H

#include <stddef.h>
#include <stdint.h>

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

/* crc.c: CRC-32 (zlib's polynomial), and the CRC of a || b from theirs. */
uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len);
uint32_t npzs__crc32_combine(uint32_t a, uint32_t b, uint64_t blen);
/* the implementations (crc.c's comment), for the tests and the benchmark: npzs__crc32_with(impl)
 * runs one, npzs__crc32_impls() has bit impl set for each one built here */
enum { NPZS_CRC_ZLIB = 0, NPZS_CRC_ISAL_IMPL = 1, NPZS_CRC_FOLD = 2, NPZS_CRC_IMPLS = 3 };
uint32_t npzs__crc32_with(int impl, uint32_t crc, const uint8_t *buf, size_t len);
int npzs__crc32_impls(void);
/* crcfold.c: the table-free CRC-32 of buffers of NPZS_CRC_FOLD_MIN 16-byte words or more
 * (zlib's crc32 for shorter ones) */
#define NPZS_CRC_FOLD_MIN 1024u
uint32_t npzs__crc32_fold(uint32_t crc, const uint8_t *buf, size_t len);

#endif
