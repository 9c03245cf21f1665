/* fuzz_npy_header: the .npy preamble and header dict.
 * Input: [ctl][header text...]
 *   ctl bits 0-1: version 1.0 / 2.0 / 3.0 / 1.0 with the length field off by (ctl>>4)-8
 *   ctl bits 2-3: container: 0,1 plain .npy; 2 stored .npz member; 3 deflated .npz member (bit 3, descriptor)
 *   ctl bits 4-7: 8*(ctl>>4) bytes of array data after the header
 * Built: "\x93NUMPY" + version + header length (= the text's length) + text + data.
 * Runs whole and split (fz_check), and the header text alone through both header parser
 * paths (fz_header_paths). */
#include <string.h>

#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    const uint8_t *t = data + 1;
    size_t tn = size - 1;
    fz_buf npy = {0};
    unsigned v = ctl & 3u;
    fz_put(&npy, "\x93NUMPY", 6);
    size_t len = tn;
    if (v == 3) len = (size_t)((long)tn + (long)(ctl >> 4) - 8);
    if (v == 0 || v == 3) {
        fz_put8(&npy, 1);
        fz_put8(&npy, 0);
        fz_put16(&npy, (unsigned)(len & 0xFFFF));
    } else {
        fz_put8(&npy, v == 1 ? 2 : 3);
        fz_put8(&npy, 0);
        fz_put32(&npy, (uint32_t)len);
    }
    fz_put(&npy, t, tn);
    for (unsigned i = 0; i < 8u * (ctl >> 4); i++) fz_put8(&npy, (uint8_t)(i * 37 + 1));
    if (len == tn) fz_header_paths(t, tn, v == 2); /* the fast path against the general parser */
    unsigned cont = (ctl >> 2) & 3u;
    if (cont < 2) {
        fz_check(npy.p, npy.n, NULL);
    } else {
        fz_buf z = {0};
        fz_member m = {"arr_0.npy", npy.p, npy.n, cont == 3 ? 8 : 0, cont == 3, 0, 0, 0};
        fz_zip_member(&z, &m);
        size_t cd = z.n;
        fz_zip_cdh(&z, &m);
        fz_zip_eocd(&z, 1, (uint32_t)(z.n - cd), (uint32_t)cd);
        fz_check(z.p, z.n, NULL);
        fz_free_buf(&z);
    }
    fz_free_buf(&npy);
    return 0;
}
