/* prove/names.c -- EVA driver for src/zip/names.c: SipHash on any key and bytes of any length, the
 * seed, and the duplicate-name table over a run of members with any names, from the empty
 * table through two of its growths (64, 128, 256 slots). */
#include "drv.h"
#include "stubs.h"
#include "view/members.h"

#define EXACT 24 /* SipHash: every length up to this one on its own */
/* NAMES_LEN: 0 for the SipHash and seed driver; a length for a table whose names all have it
 * (each in a block of its size); -1 for names of any lengths up to 65535 (in one block) */
#ifndef NAMES_LEN
#define NAMES_LEN 0
#endif
/* members added one by one: through two growths of the table (at 16 and 32), or one */
#define MEMBERS (NAMES_LEN > 0 ? 34 : 18)

static uint8_t big[65535];
static npzs_parser P;
static npzs__names T;
static npzs__record chunk[NPZS_REC_CHUNK];
static npzs__record *chunks[1];

static void sip_all(void);
static void sip_all(void) {
    uint64_t key[2] = {u64_any(), u64_any()};
    /*@ loop unroll EXACT + 1; */
    for (size_t n = 0; n <= EXACT; n++) (void)npzs__siphash13(key, any_bytes(n), n);
    Frama_C_make_unknown((char *)big, sizeof big);
    (void)npzs__siphash13(key, big, size_in(0, sizeof big));
}

/* A table as npzs_new leaves it, over MEMBERS member records whose names are any bytes: all of
 * length len, each in a block of that size (len > 0), or of any lengths up to 65535, all in one
 * block (len == 0). */
static void table_run(size_t len) {
    (void)sip_all;
    memset(&P, 0, sizeof P);
    memset(&T, 0, sizeof T);
    npzs__names_seed(&T);
    /* any key (the seed mixes the table's address where the system gives no random bytes,
     * which the analysis keeps as an address: the table is analysed under every key instead) */
    T.key[0] = u64_any();
    T.key[1] = u64_any();
    chunks[0] = chunk;
    uint64_t off = u64_any(); /* where a duplicate or nomem is recorded */
    Frama_C_make_unknown((char *)big, sizeof big);
    /*@ loop unroll MEMBERS; */
    for (uint32_t m = 0; m < MEMBERS; m++) {
        npzs__record *r = &chunk[m];
        memset(r, 0, sizeof *r);
        size_t n = len ? len : size_in(1, sizeof big);
        r->name = len ? any_bytes(n) : big;
        r->name_len = (uint16_t)n;
        if (npzs__names_add(&P, &T, chunks, m, off) < 0) break;
    }
    npzs__names_release(&P, &T);
}

int main(void) {
#if NAMES_LEN == 0
    sip_all();
    npzs__names_seed(&T);
#else
    table_run(NAMES_LEN > 0 ? NAMES_LEN : 0);
#endif
    return 0;
}
