/* fuzz_crc: the CRC-32 implementations (src/bytes/crc.c, src/bytes/crcfold.c) against zlib's crc32.
 * Input: [crc: 4 bytes LE][len: 2 bytes LE][cut: 2 bytes LE][pattern bytes...]
 *   the buffer is len * 8 bytes (up to 512 KiB, so that the fold, from 16 KiB on, is reached
 *   with every residual position and tail length), byte i = pattern[i % n] ^ (i >> 8 when the
 *   pattern's first byte is odd) -- runs of one repeated block, or of a block that drifts --
 *   starting at an offset of 0..15 from an aligned heap copy (the fold's loads are unaligned);
 *   cut * 8 (at most the length) splits it in two.
 * Oracles: every implementation built here (npzs__crc32_with), the dispatching npzs__crc32 over
 * the whole buffer and over the two parts in turn, and npzs__crc32_combine of the parts' CRCs,
 * all equal zlib's CRC-32 of the whole buffer; abort() otherwise. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"
#include "bytes/bytes.h"

static uint32_t ref(uint32_t crc, const uint8_t *b, size_t n) { return (uint32_t)crc32(crc, b, (uInt)n); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 9) return 0;
    uint32_t crc = (uint32_t)data[0] | (uint32_t)data[1] << 8 | (uint32_t)data[2] << 16 | (uint32_t)data[3] << 24;
    size_t len = ((size_t)data[4] | (size_t)data[5] << 8) * 8u;
    size_t cut = ((size_t)data[6] | (size_t)data[7] << 8) * 8u;
    const uint8_t *pat = data + 8;
    size_t np = size - 8;
    size_t shift = pat[0] % 16u;
    uint8_t *mem = malloc(len + 16);
    if (!mem) abort();
    uint8_t *buf = mem + shift;
    for (size_t i = 0; i < len; i++) buf[i] = (uint8_t)(pat[i % np] ^ (pat[0] & 1 ? i >> 8 : 0));
    if (cut > len) cut = len;
    uint32_t want = ref(crc, buf, len);
    int impls = npzs__crc32_impls();
    for (int impl = 0; impl < NPZS_CRC_IMPLS; impl++)
        if ((impls & 1 << impl) && npzs__crc32_with(impl, crc, buf, len) != want) abort();
    if (npzs__crc32(crc, buf, len) != want) abort();
    uint32_t a = npzs__crc32(crc, buf, cut);
    if (npzs__crc32(a, buf + cut, len - cut) != want) abort();
    if (npzs__crc32_combine(a, npzs__crc32(0, buf + cut, len - cut), len - cut) != want) abort();
    free(mem);
    return 0;
}
