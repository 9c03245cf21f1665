/* fuzz_deflate: the inflate path.
 * Input: [ctl][raw deflate stream...]
 *   ctl bit 0: bit 3 variant: zero CRC/sizes + ZIP64 0/0 extra in the local header,
 *              24-byte descriptor after the stream (else sizes in the local header)
 *   ctl bit 1: a second, stored member follows
 *   ctl bit 2: sizes also in a ZIP64 extra field of the local header (non-bit-3 variant)
 *   ctl bits 3-4: declared uncompressed size: exact, -1, +1, half (everywhere it is written)
 *   ctl bit 5: declared CRC off by one bit
 * The compressed size is the stream's length; the uncompressed size and CRC come from
 * inflating it here with zlib (output capped at 4 MiB), so a valid stream makes a valid
 * archive and the parser's inflate path is fuzzed past the framing.  The archive is parsed with
 * the default decoder (whole and split: fz_check) and with zlib alone (NPZS_INFLATE_ZLIB):
 * abort unless events, verdict, error code and offsets are the same. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"

static void inflate_info(const uint8_t *s, size_t n, uint32_t *crc, uint64_t *usize) {
    z_stream z;
    memset(&z, 0, sizeof z);
    *crc = 0;
    *usize = 0;
    if (inflateInit2(&z, -15) != Z_OK) fz_die("inflateInit2");
    static uint8_t out[65536];
    z.next_in = (Bytef *)(uintptr_t)s;
    z.avail_in = (uInt)n;
    uLong c = crc32(0L, Z_NULL, 0);
    for (;;) {
        z.next_out = out;
        z.avail_out = sizeof out;
        int rc = inflate(&z, Z_NO_FLUSH);
        size_t got = sizeof out - z.avail_out;
        c = crc32(c, out, (uInt)got);
        *usize += got;
        if (rc != Z_OK || *usize >= ((uint64_t)4 << 20) || (got == 0 && z.avail_in == 0)) break;
    }
    *crc = (uint32_t)c;
    inflateEnd(&z);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    const uint8_t *s = data + 1;
    size_t sn = size - 1;
    uint32_t crc;
    uint64_t usize;
    inflate_info(s, sn, &crc, &usize);
    switch ((ctl >> 3) & 3) {
    case 1: usize = usize ? usize - 1 : 0; break;
    case 2: usize += 1; break;
    case 3: usize /= 2; break;
    default: break;
    }
    if (ctl & 0x20) crc ^= 1;
    fz_buf b = {0};
    if (ctl & 1) {
        static const uint8_t z64[20] = {1, 0, 16, 0};
        fz_zip_lfh(&b, "a.npy", 5, 20, 8, 8, 0, 0, 0, z64, sizeof z64);
        fz_put(&b, s, sn);
        fz_put32(&b, 0x08074B50);
        fz_put32(&b, crc);
        fz_put64(&b, sn);
        fz_put64(&b, usize);
    } else if (ctl & 4) {
        fz_buf x = {0};
        fz_put16(&x, 1);
        fz_put16(&x, 16);
        fz_put64(&x, usize);
        fz_put64(&x, sn);
        fz_zip_lfh(&b, "a.npy", 5, 45, 0, 8, crc, 0xFFFFFFFFu, 0xFFFFFFFFu, x.p, x.n);
        fz_free_buf(&x);
        fz_put(&b, s, sn);
    } else {
        fz_zip_lfh(&b, "a.npy", 5, 20, 0, 8, crc, (uint32_t)sn, (uint32_t)usize, NULL, 0);
        fz_put(&b, s, sn);
    }
    fz_member m2 = {"b.npy", NULL, 0, 0, 0, 0, 0, 0};
    if (ctl & 2) {
        m2.content = fz_npy_small(&m2.content_n);
        fz_zip_member(&b, &m2);
    }
    size_t cd = b.n;
    fz_zip_cdh_raw(&b, "a.npy", 5, (ctl & 5) == 4 ? 45 : 20, (ctl & 1) ? 8 : 0, 8, crc, (uint32_t)sn, (uint32_t)usize,
                   0);
    if (ctl & 2) fz_zip_cdh(&b, &m2);
    fz_zip_eocd(&b, (ctl & 2) ? 2 : 1, (uint32_t)(b.n - cd), (uint32_t)cd);
    fz_result dflt = fz_check(b.p, b.n, NULL);
    npzs_limits zl;
    npzs_limits_default(&zl);
    zl.lenient = NPZS_INFLATE_ZLIB;
    fz_opts o;
    fz_opts_init(&o);
    o.lim = &zl;
    fz_result alone;
    fz_run(b.p, b.n, &o, &alone);
    if (!fz_same(&dflt, &alone)) {
        fz_print_result(stderr, "default decoder", &dflt);
        fz_print_result(stderr, "zlib alone", &alone);
        fz_die("the default decoder and zlib alone differ");
    }
    fz_free_buf(&b);
    return 0;
}
