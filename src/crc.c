/* crc.c -- CRC-32 (the ZIP/zlib polynomial), one place for the whole library. */
#include "internal.h"

uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len) {
    while (len) {
        uInt n = len > 0x40000000u ? 0x40000000u : (uInt)len;
        crc = (uint32_t)crc32(crc, buf, n);
        buf += n;
        len -= n;
    }
    return crc;
}

/* CRC of A||B from crc(A), crc(B) and |B|.  combine(a, b, n) is shift_n(a) ^ b,
 * so a length that does not fit z_off_t is applied in steps with b = 0. */
uint32_t npzs__crc32_combine(uint32_t a, uint32_t b, uint64_t blen) {
    const uint64_t step = 0x40000000u;
    while (blen > step) {
        a = (uint32_t)crc32_combine(a, 0, (z_off_t)step);
        blen -= step;
    }
    return (uint32_t)crc32_combine(a, b, (z_off_t)blen);
}
