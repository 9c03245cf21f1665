/* prove/zrec.c -- EVA driver for src/zrec/zrec.c: every decoder on any bytes, any lengths, any
 * limits, each entry point with what its contract allows. */
#include "drv.h"
#include "zrec/zrec.h"

#define EXACT 40 /* names and extra fields up to this length: one length at a time */

static uint8_t big[65535]; /* every length up to the format's 65535 */

static void fill_big(void) { Frama_C_make_unknown((char *)big, sizeof big); }

static void fixed_all(void) {
    npzs_limits lim;
    any_limits(&lim);
    npzs__zerr e;
    npzs__zlfh lfh;
    npzs__zcdh c;
    npzs__zend end;
    npzs__zdd dd;
    uint64_t off;
    (void)npzs__zr_lfh(any_bytes(30), &lim, &lfh, &e);
    npzs__zr_dd(any_bytes(12), 0, &dd);
    npzs__zr_dd(any_bytes(20), 1, &dd);
    (void)npzs__zr_cdh(any_bytes(46), &c, &e);
    npzs__zr_z64_fields(any_bytes(56), &end);
    (void)npzs__zr_z64_eocd(any_bytes(56), &end, &e);
    (void)npzs__zr_z64_loc(any_bytes(20), &off, &e);
    npzs__zr_eocd(any_bytes(22), &end);
}

/* what a local header's sizes and a central header's ZIP64 field make of any header and any
 * ZIP64 field npzs__zr_extra hands on (z, zl) */
static void sizes(const uint8_t *z, size_t zl) {
    npzs__zerr e;
    npzs__zlfh lfh;
    Frama_C_make_unknown((char *)&lfh, sizeof lfh);
    if (npzs__zr_lfh_sizes(&lfh, z, zl, &e) == 0)
        (void)npzs__zr_lfh_deferred(&lfh, (uint32_t)u64_any(), u64_any(), u64_any(), &e);
    npzs__zcdh c;
    npzs__zcdh_sizes cs;
    Frama_C_make_unknown((char *)&c, sizeof c);
    /* each of the four sentinels, present or not, as its own state */
    if (Frama_C_interval(0, 1)) c.f.usize32 = 0xFFFFFFFFu;
    else if (c.f.usize32 == 0xFFFFFFFFu) c.f.usize32 = 0;
    if (Frama_C_interval(0, 1)) c.f.csize32 = 0xFFFFFFFFu;
    else if (c.f.csize32 == 0xFFFFFFFFu) c.f.csize32 = 0;
    if (Frama_C_interval(0, 1)) c.off32 = 0xFFFFFFFFu;
    else if (c.off32 == 0xFFFFFFFFu) c.off32 = 0;
    if (Frama_C_interval(0, 1)) c.disk = 0xFFFFu;
    else if (c.disk == 0xFFFFu) c.disk = 0;
    (void)npzs__zr_cdh_zip64(&c, z, zl, &cs, &e);
}

static void sizes_all(void) {
    sizes(NULL, 0);
    /*@ loop unroll 25; */
    for (size_t zl = 0; zl <= 24; zl++) sizes(any_bytes(zl), zl);
    fill_big();
    sizes(big, size_in(0, sizeof big));
}

static void extra_all(void) {
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    int local = Frama_C_interval(0, 1);
    /*@ loop unroll EXACT + 1; */
    for (size_t n = 0; n <= EXACT; n++) (void)npzs__zr_extra(any_bytes(n), n, local, &z, &zl, &e);
    fill_big();
    (void)npzs__zr_extra(big, size_in(0, sizeof big), local, &z, &zl, &e);
}

static void name_all(void) {
    npzs__zerr e;
    unsigned flags = u32_in(0, 0xFFFF);
    /*@ loop unroll EXACT; */
    for (size_t n = 1; n <= EXACT; n++) (void)npzs__zr_name(any_bytes(n), n, flags, &e);
    fill_big();
    (void)npzs__zr_name(big, size_in(1, sizeof big), flags, &e);
}

int main(void) {
    fixed_all();
    sizes_all();
    extra_all();
    name_all();
    return 0;
}
