/* fuzz_descr: the descr value of an otherwise valid header (structured dtypes).
 * Input: [ctl][descr text...]
 *   ctl bits 0-1: shape (), (0,), (3,), (2, 1)
 *   bit 2: version 3.0 (UTF-8 header) instead of 1.0
 *   bit 3: fortran_order True
 *   bits 4-7: 16*(ctl>>4) bytes of data
 * Built: {'descr': <fuzz>, 'fortran_order': ..., 'shape': ..., } padded to 64. */
#include <string.h>

#include "common.h"

static const char *const shapes[] = {"()", "(0,)", "(3,)", "(2, 1)"};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    fz_buf h = {0};
    fz_put(&h, "{'descr': ", 10);
    fz_put(&h, data + 1, size - 1);
    const char *fo = (ctl & 8) ? ", 'fortran_order': True, 'shape': " : ", 'fortran_order': False, 'shape': ";
    fz_put(&h, fo, strlen(fo));
    fz_put(&h, shapes[ctl & 3], strlen(shapes[ctl & 3]));
    fz_put(&h, ", }", 3);
    size_t pl = (ctl & 4) ? 12 : 10;
    size_t pad = (64 - (pl + h.n + 1) % 64) % 64;
    for (size_t i = 0; i < pad; i++) fz_put8(&h, ' ');
    fz_put8(&h, '\n');
    fz_buf f = {0};
    fz_put(&f, "\x93NUMPY", 6);
    if (ctl & 4) {
        fz_put8(&f, 3);
        fz_put8(&f, 0);
        fz_put32(&f, (uint32_t)h.n);
    } else {
        fz_put8(&f, 1);
        fz_put8(&f, 0);
        fz_put16(&f, (unsigned)(h.n & 0xFFFF));
    }
    fz_put(&f, h.p, h.n);
    for (unsigned i = 0; i < 16u * (ctl >> 4); i++) fz_put8(&f, (uint8_t)i);
    fz_check(f.p, f.n, NULL);
    fz_free_buf(&h);
    fz_free_buf(&f);
    return 0;
}
