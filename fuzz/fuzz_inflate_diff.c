/* fuzz_inflate_diff: ISA-L's streaming inflate against zlib's, the reference np.load shares.
 * Input: [ctl][raw deflate bytes]
 *   ctl bits 0-2: ISA-L's input pushes: whole, 1, 3, 7, 64, 511, 4096 bytes, or random-ish
 *   ctl bits 3-5: output window of both: 1, 7, 64, 1000, 32 KiB, 64 KiB + 1, 256 KiB, 1 MiB
 *   ctl bits 6-7: zlib's input pushes: whole, 1, 13, 4096 bytes
 * Both inflate the same raw deflate stream (output capped at 4 MiB: a bomb is cut at the same
 * byte for both).  Abort unless they agree on the verdict (the stream ends / is invalid / needs
 * more input), on every output byte, and, for a stream that ends, on where it ends (the
 * bytes after it are the parser's trailing bytes).  Built only where ISA-L is installed
 * (make fuzz-isal).  FZ_COUNT_ONLY=1 prints a divergence and goes on instead of aborting, for
 * measuring how often they differ. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <isa-l/igzip_lib.h>
#include <zlib.h>

#define CAP (4u << 20)

typedef struct verdict {
    int kind;       /* 1 end, 2 invalid, 3 needs more input */
    size_t out_len; /* bytes produced (up to CAP) */
    size_t end;     /* kind 1: input bytes of the stream */
} verdict;

static const size_t in_steps[8] = {0, 1, 3, 7, 64, 511, 4096, 0};
static const size_t out_steps[8] = {1, 7, 64, 1000, 32768, 65537, 262144, 1u << 20};
static const size_t z_steps[4] = {0, 1, 13, 4096};

static uint8_t *zout, *iout;

static verdict run_zlib(const uint8_t *in, size_t n, size_t step, size_t win) {
    verdict v = {3, 0, 0};
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) abort();
    size_t off = 0;
    for (;;) {
        size_t k = step ? (n - off < step ? n - off : step) : n - off;
        zs.next_in = (Bytef *)(uintptr_t)(in + off);
        zs.avail_in = (uInt)k;
        int progress;
        do {
            size_t room = CAP - v.out_len < win ? CAP - v.out_len : win;
            if (room == 0) {
                inflateEnd(&zs);
                v.kind = 4;
                return v;
            } /* capped */
            zs.next_out = zout + v.out_len;
            zs.avail_out = (uInt)room;
            uInt before_in = zs.avail_in;
            int rc = inflate(&zs, Z_NO_FLUSH);
            size_t made = room - zs.avail_out;
            v.out_len += made;
            progress = made || zs.avail_in != before_in;
            if (rc == Z_STREAM_END) {
                v.kind = 1;
                v.end = off + (k - zs.avail_in);
                inflateEnd(&zs);
                return v;
            }
            if (rc == Z_DATA_ERROR || rc == Z_NEED_DICT || rc == Z_MEM_ERROR || rc == Z_STREAM_ERROR) {
                v.kind = 2;
                inflateEnd(&zs);
                return v;
            }
        } while (progress && (zs.avail_in || zs.avail_out == 0));
        off += k - zs.avail_in;
        if (off >= n) break;
    }
    inflateEnd(&zs);
    return v;
}

static struct inflate_state ist;

static verdict run_isal(const uint8_t *in, size_t n, size_t step, size_t win, unsigned salt) {
    verdict v = {3, 0, 0};
    isal_inflate_init(&ist);
    ist.crc_flag = ISAL_DEFLATE;
    size_t off = 0;
    for (;;) {
        size_t s = step;
        if (!s && (salt & 7) == 7) s = 1 + (off * 2654435761u >> 7) % 97; /* uneven pushes */
        size_t k = s ? (n - off < s ? n - off : s) : n - off;
        ist.next_in = (uint8_t *)(uintptr_t)(in + off);
        ist.avail_in = (uint32_t)k;
        int progress;
        do {
            size_t room = CAP - v.out_len < win ? CAP - v.out_len : win;
            if (room == 0) {
                v.kind = 4;
                return v;
            }
            ist.next_out = iout + v.out_len;
            ist.avail_out = (uint32_t)room;
            uint32_t before_in = ist.avail_in;
            int rc = isal_inflate(&ist);
            size_t made = room - ist.avail_out;
            v.out_len += made;
            progress = made || ist.avail_in != before_in;
            if (rc < 0) {
                v.kind = 2;
                return v;
            }
            if (ist.block_state == ISAL_BLOCK_FINISH) {
                v.kind = 1;
                /* bytes the stream took: those consumed, less the whole bytes still buffered */
                v.end = off + (k - ist.avail_in) - (size_t)(ist.read_in_length / 8);
                return v;
            }
        } while (progress && (ist.avail_in || ist.avail_out == 0));
        off += k - ist.avail_in;
        if (off >= n) break;
    }
    return v;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    if (!zout) {
        zout = malloc(CAP);
        iout = malloc(CAP);
        if (!zout || !iout) abort();
    }
    unsigned ctl = data[0];
    const uint8_t *in = data + 1;
    size_t n = size - 1;
    size_t win = out_steps[(ctl >> 3) & 7];
    verdict z = run_zlib(in, n, z_steps[ctl >> 6], win);
    verdict i = run_isal(in, n, in_steps[ctl & 7], win, ctl);
    const char *why = NULL;
    if (z.kind != i.kind) why = "verdict";
    else if (z.kind == 1 && z.end != i.end) why = "stream end";
    else if ((z.kind == 1 || z.kind == 4) && (z.out_len != i.out_len || memcmp(zout, iout, z.out_len))) why = "output";
    else if (z.kind != 1) { /* invalid or incomplete: what both made must agree as far as both went */
        size_t m = z.out_len < i.out_len ? z.out_len : i.out_len;
        if (memcmp(zout, iout, m)) why = "output prefix";
    }
    if (why) {
        fprintf(
            stderr,
            "inflate divergence (%s): zlib kind %d out %zu end %zu; ISA-L kind %d out %zu end %zu; %zu input bytes, ctl %#x\n",
            why, z.kind, z.out_len, z.end, i.kind, i.out_len, i.end, n, ctl);
        if (!getenv("FZ_COUNT_ONLY")) abort();
    }
    return 0;
}
