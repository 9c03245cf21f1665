/* prove/crc.c -- EVA driver for src/bytes/crc.c (the glue around zlib's and ISA-L's CRC-32, both by
 * their specifications in prove/include) and src/bytes/crcfold.c (the table-free fold): every entry
 * point and implementation, any bytes, any length (the lengths past zlib's 32-bit uInt
 * included), any CRC values; the lengths where the fold takes over (16 KiB and the 15 after it)
 * each in a block of exactly that size. */
#include "drv.h"
#include "bytes/bytes.h"

#define EXACT 16
static uint8_t huge[UINT64_C(5) << 30]; /* 5 GiB: lengths over zlib's uInt and its 1 GiB steps */

int main(void) {
    uint32_t crc = (uint32_t)u64_any();
    (void)npzs__crc32_impls();
    /*@ loop unroll EXACT + 1; */
    for (size_t n = 0; n <= EXACT; n++) {
        uint8_t *b = any_bytes(n);
        (void)npzs__crc32(crc, b, n);
        (void)npzs__crc32_with(Frama_C_interval(0, NPZS_CRC_IMPLS - 1), crc, b, n);
    }
    /*@ loop unroll 18; */
    for (size_t n = 16 * NPZS_CRC_FOLD_MIN - 1; n <= 16 * NPZS_CRC_FOLD_MIN + 16; n++) {
        uint8_t *b = any_bytes(n);
        (void)npzs__crc32_with(NPZS_CRC_FOLD, crc, b, n);
    }
    Frama_C_make_unknown((char *)huge, sizeof huge);
    size_t n = size_in(0, sizeof huge);
    (void)npzs__crc32(crc, huge, n);
    (void)npzs__crc32_with(Frama_C_interval(0, NPZS_CRC_IMPLS - 1), crc, huge, n);
    (void)npzs__crc32_combine(crc, (uint32_t)u64_any(), u64_any());
    return 0;
}
