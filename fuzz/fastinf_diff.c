/* fuzz/fastinf_diff.c -- see fastinf_diff.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "zip/fastinf.h"
#include "fastinf_diff.h"

static const size_t push_steps[8] = {0, 1, 3, 7, 64, 511, 4096, 0};
static const size_t out_steps[8] = {1, 7, 64, 1000, 32768, 65537, 262144, 1u << 20};
static const unsigned lend_every[4] = {0, 0, 2, 1};

/* the two outputs, the decoder and the stream it lends blocks to: made once, kept */
static uint8_t *zout, *fout;
static npzs__fastinf *fi;
static z_stream lend;

static void setup(void) {
    if (fi) return;
    zout = malloc(FZ_FI_CAP);
    fout = malloc(FZ_FI_CAP);
    fi = malloc(npzs__fi_size());
    static const Bytef none[1] = {0};
    if (!zout || !fout || !fi || inflateInit2(&lend, -15) != Z_OK || inflateSetDictionary(&lend, none, 0) != Z_OK) {
        fprintf(stderr, "fastinf_diff: no memory\n");
        abort();
    }
    npzs__fi_init(fi);
}

static fz_fi_verdict run_zlib(const uint8_t *in, size_t n, size_t win) {
    fz_fi_verdict v = {FZ_FI_CUT, 0, 0, 0, NULL};
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (inflateInit2(&zs, -15) != Z_OK) abort();
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)n;
    for (;;) {
        size_t room = FZ_FI_CAP - v.out_len < win ? FZ_FI_CAP - v.out_len : win;
        if (!room) {
            v.kind = FZ_FI_CAPPED;
            break;
        }
        zs.next_out = zout + v.out_len;
        zs.avail_out = (uInt)room;
        uInt before = zs.avail_in;
        int rc = inflate(&zs, Z_NO_FLUSH);
        size_t made = room - zs.avail_out;
        v.out_len += made;
        if (rc == Z_STREAM_END) {
            v.kind = FZ_FI_END;
            v.end = n - zs.avail_in;
            break;
        }
        if (rc != Z_OK && rc != Z_BUF_ERROR) {
            v.kind = FZ_FI_BAD;
            v.msg = zs.msg;
            break;
        }
        if (!made && zs.avail_in == before) break; /* all input used: cut short */
    }
    inflateEnd(&zs);
    return v;
}

static fz_fi_verdict run_fast(const uint8_t *in, size_t n, size_t step, int uneven, size_t win, unsigned every,
                              int portable) {
    fz_fi_verdict v = {FZ_FI_CUT, 0, 0, 0, NULL};
    npzs__fi_zlib_every(fi, every);
    npzs__fi_portable(fi, portable);
    npzs__fi_reset(fi);
    size_t off = 0;
    for (;;) {
        size_t k = n - off;
        if (uneven) k = 1 + (off * 2654435761u >> 7) % 97;
        else if (step) k = step;
        if (k > n - off) k = n - off;
        int last = off + k == n;
        size_t pos = 0;
        for (;;) {
            size_t room = FZ_FI_CAP - v.out_len < win ? FZ_FI_CAP - v.out_len : win;
            if (!room) {
                v.kind = FZ_FI_CAPPED;
                goto done;
            }
            size_t took, made, back;
            int rc = npzs__fi_run(fi, &lend, in + off + pos, k - pos, last, fout + v.out_len, room, &took, &made,
                                  &back);
            v.out_len += made;
            pos += took;
            if (rc == NPZS__FI_END) {
                v.kind = FZ_FI_END;
                if (back > off + pos) {
                    fprintf(stderr, "fastinf_diff: %zu bytes given back of %zu taken\n", back, off + pos);
                    abort();
                }
                v.end = off + pos - back;
                goto done;
            }
            if (rc != NPZS__FI_OK) {
                v.kind = FZ_FI_BAD;
                goto done;
            }
            if (!took && !made) {
                if (pos < k) { /* the decoder's promise: all input taken unless the output is full */
                    fprintf(stderr, "fastinf_diff: no progress with %zu bytes and %zu of room\n", k - pos, room);
                    abort();
                }
                break;
            }
        }
        off += k;
        if (off == n) break;
    }
done:
    v.zblocks = npzs__fi_zlib_blocks(fi);
    return v;
}

int fz_fastinf_diff(unsigned ctl, const uint8_t *in, size_t n, fz_fi_verdict *zv, fz_fi_verdict *fv) {
    setup();
    static const uint8_t none[1] = {0};
    if (!n) in = none;
    size_t win = out_steps[(ctl >> 3) & 7];
    fz_fi_verdict z = run_zlib(in, n, win);
    fz_fi_verdict f = run_fast(in, n, push_steps[ctl & 7], (ctl & 7) == 7, win, lend_every[(ctl >> 6) & 3],
                               (int)(ctl >> 8 & 1));
    if (zv) *zv = z;
    if (fv) *fv = f;
    const char *why = NULL;
    if (z.kind != f.kind) why = "verdict";
    else if (z.out_len != f.out_len || memcmp(zout, fout, z.out_len)) why = "output";
    else if (z.kind == FZ_FI_END && z.end != f.end) why = "stream end";
    if (!why) return 0;
    size_t at = 0;
    size_t m = z.out_len < f.out_len ? z.out_len : f.out_len;
    while (at < m && zout[at] == fout[at]) at++;
    fprintf(
        stderr,
        "fastinf_diff: %s differs: zlib kind %d out %zu end %zu; decoder kind %d out %zu end %zu (%llu blocks lent); "
        "first differing byte %zu; %zu input bytes, ctl %#x\n",
        why, z.kind, z.out_len, z.end, f.kind, f.out_len, f.end, (unsigned long long)f.zblocks, at, n, ctl);
    return 1;
}
