/* prove/zlocate.c -- EVA driver for src/zrec/zlocate.c: zipfile's end-record search over any view
 * (two spans of any bytes, at any absolute offset) in every variant. */
#include "drv.h"
#include "zrec/zrec.h"

#define EXACT 4 /* spans up to this length, each pair of lengths on its own */
static uint8_t ba[NPZS_TAIL_MAX], bb[NPZS_TAIL_MAX];

static void one(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
    npzs__tailview v;
    npzs__zf_end e;
    v.a = a;
    v.b = b;
    v.alen = alen;
    v.blen = blen;
    v.base = u64_in(0, UINT64_MAX - alen - blen);
    v.size = v.base + alen + blen;
    (void)npzs__zf_locate(&v, u32_in(0, NPZS_ZF_VARIANTS - 1), &e);
}

int main(void) {
    /*@ loop unroll EXACT + 1; */
    for (size_t alen = 0; alen <= EXACT; alen++) {
        /*@ loop unroll EXACT + 1; */
        for (size_t blen = 0; blen <= EXACT; blen++) one(any_bytes(alen), alen, any_bytes(blen), blen);
    }
    /* one span of the whole view, as the fuzz harnesses give it (any length of the tail) */
    Frama_C_make_unknown((char *)ba, sizeof ba);
    one(ba, size_in(0, sizeof ba), NULL, 0);
    /* a ring of the tail: two spans of any lengths up to the tail's */
    Frama_C_make_unknown((char *)bb, sizeof bb);
    size_t alen = size_in(0, sizeof ba);
    one(ba, alen, bb, size_in(0, sizeof bb - alen));
    return 0;
}
