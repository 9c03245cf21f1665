/* fuzz_zip_lfh: a local file header and its extra fields.
 * Input: [ctl][26 fixed bytes after PK\3\4][name][extra...]
 *   ctl bits 0-1 (when flag bit 3 is set): descriptor form: PK78+64-bit, PK78+32-bit, 64-bit, 32-bit
 *   ctl bit 2: the member content is a blob instead of a small .npy
 *   ctl bit 3: a second, valid stored member follows
 * Built: "PK\3\4" + input[1..] + content (deflated when the header's method is 8)
 *        + descriptor (bit 3) + a central directory that repeats the header's name,
 *        flags and method with the real CRC and sizes + end record.
 * So a mutated header that is still consistent reaches the end of the archive. */
#include <stdlib.h>
#include <string.h>

#include "common.h"

static uint16_t le16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    const uint8_t *h = data + 1;
    size_t hn = size - 1;
    size_t cn;
    const uint8_t *content = fz_npy_small(&cn);
    static const uint8_t blob[] = "Name: Test\nVersion: 1\n";
    if (ctl & 4) {
        content = blob;
        cn = sizeof blob - 1;
    }
    unsigned version = hn >= 2 ? le16(h) : 20, flags = hn >= 4 ? le16(h + 2) : 0, method = hn >= 6 ? le16(h + 4) : 0;
    size_t nl = hn >= 24 ? le16(h + 22) : 0;
    const char *name = hn > 26 ? (const char *)h + 26 : "";
    if (nl > (hn > 26 ? hn - 26 : 0)) nl = hn > 26 ? hn - 26 : 0;

    fz_buf b = {0};
    fz_put32(&b, 0x04034B50);
    fz_put(&b, h, hn);
    const uint8_t *payload = content;
    size_t pn = cn;
    uint8_t *def = NULL;
    if (method == 8) {
        def = fz_deflate(content, cn, &pn);
        payload = def;
    }
    uint32_t crc = fz_crc32(content, cn);
    fz_put(&b, payload, pn);
    if (flags & 8) {
        unsigned form = ctl & 3;
        if (form < 2) fz_put32(&b, 0x08074B50);
        fz_put32(&b, crc);
        if (form == 0 || form == 2) {
            fz_put64(&b, pn);
            fz_put64(&b, cn);
        } else {
            fz_put32(&b, (uint32_t)pn);
            fz_put32(&b, (uint32_t)cn);
        }
    }
    fz_member m2 = {"zz.npy", NULL, 0, 0, 0, 0, 0, 0};
    if (ctl & 8) {
        m2.content = fz_npy_small(&m2.content_n);
        fz_zip_member(&b, &m2);
    }
    size_t cd = b.n;
    fz_zip_cdh_raw(&b, name, nl, version, flags, method, crc, (uint32_t)pn, (uint32_t)cn, 0);
    if (ctl & 8) fz_zip_cdh(&b, &m2);
    fz_zip_eocd(&b, (ctl & 8) ? 2 : 1, (uint32_t)(b.n - cd), (uint32_t)cd);
    fz_check(b.p, b.n, NULL);
    free(def);
    fz_free_buf(&b);
    return 0;
}
