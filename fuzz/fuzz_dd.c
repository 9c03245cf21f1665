/* fuzz_dd: the data descriptor of a pipe-style member.
 * Input: [ctl][descriptor bytes...]
 *   ctl bit 0: deflated (else stored)
 *   ctl bit 1: no ZIP64 extra in the local header (else the 0/0 ZIP64 extra NumPy pipes write)
 *   ctl bit 2: content is a blob (stored + bit 3 blob is rejected by design)
 *   ctl bit 3: a second pipe-style member (with a valid 24-byte descriptor) follows
 * Built: local header (bit 3, zero CRC/sizes) + data + input[1..] + [member 2] + CD + end record. */
#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    fz_member m = {"a.npy", NULL, 0, (ctl & 1) ? 8 : 0, (ctl & 2) ? 3 : 2, 0, 0, 0};
    static const uint8_t blob[] = "Name: Test\nVersion: 1\n";
    if (ctl & 4) {
        m.name = "meta";
        m.content = blob;
        m.content_n = sizeof blob - 1;
    } else {
        m.content = fz_npy_small(&m.content_n);
    }
    fz_buf b = {0};
    fz_zip_member(&b, &m);
    fz_put(&b, data + 1, size - 1);
    fz_member m2 = {"b.npy", NULL, 0, 8, 1, 0, 0, 0};
    if (ctl & 8) {
        m2.content = fz_npy_small(&m2.content_n);
        fz_zip_member(&b, &m2);
    }
    size_t cd = b.n;
    fz_zip_cdh(&b, &m);
    if (ctl & 8) fz_zip_cdh(&b, &m2);
    fz_zip_eocd(&b, (ctl & 8) ? 2 : 1, (uint32_t)(b.n - cd), (uint32_t)cd);
    fz_check(b.p, b.n, NULL);
    fz_free_buf(&b);
    return 0;
}
