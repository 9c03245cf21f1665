/* fuzz_fastinf: the default decoder (src/zip/fastinf.c) against zlib, the reference np.load shares.
 * Input: [ctl][raw deflate bytes]; ctl chooses the decoder's pushes, both's output window and
 * which blocks the decoder lends zlib (fuzz/fastinf_diff.h); each input runs twice, the second
 * time with the portable symbol loop (where the CPU has BMI1 the first one runs the other).
 * Abort unless they agree on the verdict (the stream ends / zlib refuses it / it is cut short /
 * capped at 4 MiB), on every byte made (before a refusal too: the parser hands those bytes on as
 * DATA events first) and, for a stream that ends, on its last byte.  What the parser reports of a member follows from these:
 * S-ZIP-LOCAL.inflate at the member's data when refused, S-ZIP-LOCAL.deflate-unterminated at
 * its end when cut short, S-ZIP-DEFLATE-END.early where the stream ends before the member does.
 * Seeds: fuzz/gen_fastinf_seeds.py (make fastinf-seeds); the campaign: make fastinf-campaign. */
#include <stdlib.h>

#include "fastinf_diff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (fz_fastinf_diff(data[0], data + 1, size - 1, NULL, NULL)) abort();
    if (fz_fastinf_diff(data[0] | 256u, data + 1, size - 1, NULL, NULL)) abort(); /* the portable loop */
    return 0;
}
