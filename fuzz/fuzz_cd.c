/* fuzz_cd: central directory, ZIP64 end record + locator, end record, archive comment.
 * Input: the bytes that follow two valid members:
 *   "a.npy" stored, sizes in the local header, no extra (offset 0);
 *   "b.npy" deflated, pipe style (bit 3, ZIP64 extra 0/0, 24-byte descriptor).
 * The seeds (fuzz/make_corpus.py) are correct central directories for exactly this prefix. */
#include "common.h"

static fz_buf prefix;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (!prefix.n) {
        fz_member a = {"a.npy", NULL, 0, 0, 0, 0, 0, 0};
        fz_member b = {"b.npy", NULL, 0, 8, 1, 0, 0, 0};
        a.content = fz_npy_small(&a.content_n);
        b.content = a.content;
        b.content_n = a.content_n;
        fz_zip_member(&prefix, &a);
        fz_zip_member(&prefix, &b);
    }
    fz_buf f = {0};
    fz_put(&f, prefix.p, prefix.n);
    fz_put(&f, data, size);
    fz_check(f.p, f.n, NULL);
    fz_free_buf(&f);
    return 0;
}
