/*
 * fuzz/fastinf_diff.h -- the default decoder (src/zip/fastinf.c) against zlib, the reference np.load
 * shares, on one raw deflate stream: the oracle of fuzz_fastinf and of the campaign
 * (fuzz/fastinf_campaign.c).
 */
#ifndef FZ_FASTINF_DIFF_H
#define FZ_FASTINF_DIFF_H

#include <stddef.h>
#include <stdint.h>

/* What zlib says of a stream. */
enum { FZ_FI_END = 1, FZ_FI_BAD, FZ_FI_CUT, FZ_FI_CAPPED };

typedef struct fz_fi_verdict {
    int kind;         /* FZ_FI_* */
    size_t out_len;   /* bytes made (up to the cap) */
    size_t end;       /* FZ_FI_END: the stream's length */
    uint64_t zblocks; /* the decoder: blocks it lent to zlib */
    const char *msg;  /* zlib, FZ_FI_BAD: its message (static text), e.g. "invalid distances set" */
} fz_fi_verdict;

/* Inflate in[0, n) with zlib (whole) and with the decoder, ctl choosing how:
 *   bits 0-2  the decoder's pushes: whole, 1, 3, 7, 64, 511, 4096 bytes, or uneven (1..97)
 *   bits 3-5  both's output window: 1, 7, 64, 1000, 32 KiB, 64 KiB + 1, 256 KiB, 1 MiB
 *   bits 6-7  the decoder lends zlib no block it can read (0, 1), every 2nd one (2), every one (3)
 *   bit  8    the decoder's portable symbol loop even where the CPU has BMI1 (npzs__fi_portable)
 * Both are capped at FZ_FI_CAP bytes of output.  Returns 0 when they agree on the verdict, on
 * every byte made (before a refusal too) and, for a stream that ends, on its last byte; else 1,
 * with the difference printed to stderr.  *z and *f (may be NULL) get both verdicts. */
#define FZ_FI_CAP (4u << 20)
int fz_fastinf_diff(unsigned ctl, const uint8_t *in, size_t n, fz_fi_verdict *z, fz_fi_verdict *f);

#endif
