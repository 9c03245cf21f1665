/*
 * crc.c -- CRC-32 (the ZIP/zlib polynomial, reflected, 0xEDB88320), one place for the whole library.
 *
 * Three implementations (NPZS_CRC_*, also the bits of npzs__crc32_impls()):
 *   ISAL  ISA-L's crc32_gzip_refl (where the build has ISA-L: Debian's libisal-dev), which folds
 *         with carry-less multiplies and picks its AVX-512 / PCLMUL / portable code from the CPU;
 *   FOLD  src/bytes/crcfold.c: table-free, by a sparse multiple of the polynomial, for long buffers
 *         (zlib's below 16 KiB): the CRC without ISA-L (the WebAssembly build's), about 3x zlib's;
 *   ZLIB  zlib's crc32() (table driven, "braided").
 * npzs__crc32 uses ISA-L's where it is built, else the fold; make NPZS_CRC_PORTABLE=1
 * (-DNPZS_CRC_PORTABLE) uses zlib's alone.  The hand-written PCLMUL folding this file held
 * before ran at the speed of ISA-L's here (bench/README.md: 1.00x), so it was dropped for the
 * maintained library.  tests/crc checks every implementation against zlib for all short lengths
 * and alignments, long buffers, split feeds and combine.
 */
#include <zlib.h>

#include "bytes.h"
#include "../base/base.h"
#include "../base/contract.h"

#ifdef NPZS_INTERNAL_H
#error "bytes/ is pure: it sees no parser (internal.h)"
#endif

#if defined(NPZS_HAVE_ISAL) && !defined(NPZS_CRC_PORTABLE)
#define NPZS_CRC_ISAL 1
#include <isa-l/crc.h>
#endif

/* zlib's crc32 takes uInt lengths: 1 GiB at a time, then the rest */
#define CRC_STEP 0x40000000u
static uint32_t crc_portable(uint32_t crc, const uint8_t *buf, size_t len) {
    while (len > CRC_STEP) {
        crc = (uint32_t)crc32(crc, buf, CRC_STEP);
        buf += CRC_STEP;
        len -= CRC_STEP;
    }
    return len ? (uint32_t)crc32(crc, buf, (uInt)len) : crc;
}

#ifdef NPZS_CRC_ISAL
/* ISA-L's takes uint64_t lengths and keeps the register as zlib does (inverted in and out) */
static uint32_t crc_isal(uint32_t crc, const uint8_t *buf, size_t len) {
    return len ? crc32_gzip_refl(crc, buf, (uint64_t)len) : crc;
}
#endif

/* Bitmask of the implementations usable here (bit i: implementation i). */
int npzs__crc32_impls(void) {
#ifdef NPZS_CRC_ISAL
    return 1 << NPZS_CRC_ZLIB | 1 << NPZS_CRC_FOLD | 1 << NPZS_CRC_ISAL_IMPL;
#else
    return 1 << NPZS_CRC_ZLIB | 1 << NPZS_CRC_FOLD;
#endif
}

/* One implementation, for the tests and the benchmark (zlib's for one not built here). */
/*@ requires len == 0 || \valid_read(buf + (0 .. len - 1)); */
uint32_t npzs__crc32_with(int impl, uint32_t crc, const uint8_t *buf, size_t len) {
    NPZS_REQUIRE(buf || len == 0);
#ifdef NPZS_CRC_ISAL
    if (impl == NPZS_CRC_ISAL_IMPL) return crc_isal(crc, buf, len);
#endif
    if (impl == NPZS_CRC_FOLD) return npzs__crc32_fold(crc, buf, len);
    return crc_portable(crc, buf, len);
}

/*@ requires len == 0 || \valid_read(buf + (0 .. len - 1)); */
uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len) {
    NPZS_REQUIRE(buf || len == 0);
#if defined(NPZS_CRC_ISAL)
    return crc_isal(crc, buf, len);
#elif defined(NPZS_CRC_PORTABLE)
    return crc_portable(crc, buf, len);
#else
    return npzs__crc32_fold(crc, buf, len);
#endif
}

/* CRC of A||B from crc(A), crc(B) and |B|.  combine(a, b, n) is shift_n(a) ^ b, where
 * shift_n(a), a times x^(8n) mod P, is also the CRC register a run over n zero bytes:
 * for the short members of a many-member archive that costs ~100 instructions against ~800
 * for zlib's square-and-multiply.  Longer lengths use zlib; a length that does not fit
 * z_off_t is applied in steps with b = 0. */
#define ZEROS 1024
static const uint8_t zeros[ZEROS];

uint32_t npzs__crc32_combine(uint32_t a, uint32_t b, uint64_t blen) {
    if (blen <= ZEROS) return ~npzs__crc32(~a, zeros, (size_t)blen) ^ b;
    const uint64_t step = 0x40000000u;
    while (blen > step) {
        a = (uint32_t)crc32_combine(a, 0, (z_off_t)step);
        blen -= step;
    }
    return (uint32_t)crc32_combine(a, b, (z_off_t)blen);
}
