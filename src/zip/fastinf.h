/*
 * fastinf.h -- a raw deflate decoder whose verdict and output are zlib 1.2.13's (SECURITY.md,
 * "The inflater").
 *
 * It decodes the blocks it can vouch for itself: a block header is parsed in full before a byte
 * of the block is decoded, and taken only when zlib's inflate would take it too (a stored block's
 * LEN and NLEN agree; HLIT and HDIST within zlib's bounds; the code-length, literal/length and
 * distance code sets all complete; no repeat without a previous length or past the lengths; an
 * end-of-block code).  Every other header -- an invalid one, zlib's accepted incomplete sets (a
 * single code of one bit; no distance code at all), a header the input ends inside -- is handed
 * with the rest of its block to zlib itself, resumed at the block's first bit
 * (inflateSetDictionary with the last 32 KiB of output, inflatePrime for the bits of the byte the
 * block starts in), and taken back at the block's end (inflate's Z_BLOCK).  Inside a block it
 * refuses exactly what zlib refuses there: the fixed code's literal/length symbols 286 and 287
 * and distance symbols 30 and 31, and a distance past the first byte of output ("invalid distance
 * too far back": the window is 32 KiB and Debian's zlib is built without INFLATE_STRICT), each
 * once the bits that decide it are there, as zlib reads them.
 *
 * One decoder per stream at a time, held by the caller (npzs__fi_size bytes, 8-aligned); no
 * allocation, no global state.  Portable C, but for one instruction: on x86-64 where the CPU has
 * BMI1 (asked once, at npzs__fi_init) the symbol loop forms the next table index with BEXTR, one
 * step where the portable loop takes a shift and a mask (SECURITY.md, "The inflater": both loops
 * are checked against zlib).  The WebAssembly build runs the portable loop.
 */
#ifndef NPZS_FASTINF_H
#define NPZS_FASTINF_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

typedef struct npzs__fastinf npzs__fastinf;

/* Bytes to allocate for one decoder. */
size_t npzs__fi_size(void);

/* Make a decoder of npzs__fi_size bytes of any content ready (then npzs__fi_reset). */
void npzs__fi_init(npzs__fastinf *s);
/* Start a new raw deflate stream. */
void npzs__fi_reset(npzs__fastinf *s);

/* What npzs__fi_run returns. */
enum { NPZS__FI_OK, NPZS__FI_END, NPZS__FI_BAD, NPZS__FI_NOMEM };

/* Decode in[0, in_len) into out[0, out_len).  zs: a raw inflate stream (inflateInit2 with -15
 * window bits) whose window is allocated (inflateSetDictionary of nothing does it), lent for the
 * blocks zlib decides; its state between calls is the decoder's.  last: no input follows in (the
 * stream must end inside it, or it is cut short).  Sets *took (input bytes taken: all of them
 * unless the output is full or the stream ended; a few may be kept inside the decoder), *made
 * and *back, and returns
 *   NPZS__FI_OK    more to come: the output is full, or all the input was taken;
 *   NPZS__FI_END   the stream ended; *back of the bytes taken (in this call or earlier ones)
 *                  lie past its last byte;
 *   NPZS__FI_BAD   zlib refuses the stream: *made bytes are those zlib makes before refusing;
 *   NPZS__FI_NOMEM zlib could not allocate (not with its window allocated).
 * After END or BAD, only npzs__fi_reset.  A stream cut short (last input, no end) makes no more
 * progress: OK with nothing taken or made. */
int npzs__fi_run(npzs__fastinf *s, z_stream *zs, const uint8_t *in, size_t in_len, int last, uint8_t *out,
                 size_t out_len, size_t *took, size_t *made, size_t *back);

#ifdef NPZS_TESTING
/* Test hooks (the tests and the differential, built with NPZS_TESTING): blocks of the current
 * stream handed to zlib so far; hand every n-th block (n > 0; 0: none) to zlib even when it is
 * vouched for, so that the hand-over and the taking back are exercised on ordinary streams (kept
 * by npzs__fi_reset). */
uint64_t npzs__fi_zlib_blocks(const npzs__fastinf *s);
void npzs__fi_zlib_every(npzs__fastinf *s, unsigned n);
/* Decode with the portable symbol loop (on != 0) even where the CPU has BMI1, or with the one the
 * CPU allows (0); kept by npzs__fi_reset. */
void npzs__fi_portable(npzs__fastinf *s, int on);
#endif

#endif
