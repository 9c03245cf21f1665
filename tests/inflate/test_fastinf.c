/*
 * tests/inflate/test_fastinf.c -- the default decoder (src/zip/fastinf.c) on hand-made deflate
 * streams, one or more for each way zlib 1.2.13 refuses a stream (each of its messages), for
 * the incomplete code sets it accepts, for streams cut short or followed by bytes.
 *
 * For every stream:
 *   - zlib's verdict is the one the case names (its message for a refused stream), so the case
 *     is what it says;
 *   - the decoder agrees with zlib on the verdict, every byte made and the stream's end
 *     (fz_fastinf_diff, fuzz/fastinf_diff.c) under all 256 of its push, window and lending
 *     choices, and at every cut of the input into two pushes;
 *   - a header zlib refuses or takes though incomplete is lent to zlib (never judged by the
 *     decoder); a refusal inside a block the decoder can read is its own;
 *   - in an archive (a member of known sizes), the parser gives the same error code, offset and
 *     rule with the default decoder and with zlib alone (NPZS_INFLATE_ZLIB), whole and in 1-byte
 *     pushes, and it is the one expected: S-ZIP-LOCAL.inflate at the member's data for a refused
 *     stream, S-ZIP-LOCAL.deflate-unterminated at its end for one cut short,
 *     S-ZIP-DEFLATE-END.early where a stream ends before the member does.
 * A group a case (--only NAME-PART, --list: tests/c/check.h); last line "inflate: N passed, M failed".
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"
#include "deflate_model.h"
#include "zip/fastinf.h"
#include "fastinf_diff.h"
#include "npzstream.h"
#define NPZS_CHECK_MAIN
#include "../c/check.h"


/* ---- building streams ---------------------------------------------------------------------- */

static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

/* canonical code of length len for symbol `sym` of lens[0, n) */
static uint32_t code_of(const uint8_t *lens, unsigned n, unsigned sym) {
    unsigned count[16] = {0}, next[16], c = 0;
    for (unsigned i = 0; i < n; i++) count[lens[i]]++;
    count[0] = 0;
    for (unsigned l = 1; l < 16; l++) next[l] = c = (c + count[l - 1]) << 1;
    for (unsigned i = 0; i < sym; i++)
        if (lens[i]) next[lens[i]]++;
    return next[lens[sym]];
}

static void put_code(dm_bits *w, uint32_t code, unsigned len) {
    for (unsigned i = len; i-- > 0;) dm_put(w, (code >> i) & 1u, 1);
}

/* A dynamic header written by hand: HLIT, HDIST, HCLEN as given, code-length code lengths cl
 * (in cl_order, ncl of them), then the code-length symbols sy[0, nsy) (each with its extra bits
 * value, ignored for 0..15). */
typedef struct clsym {
    unsigned sym, extra;
} clsym;
static void dyn_header(dm_bits *w, int final, unsigned nlen, unsigned ndist, const uint8_t *cl, unsigned ncl,
                       const clsym *sy, size_t nsy) {
    dm_put(w, (uint32_t) final, 1);
    dm_put(w, 2, 2);
    dm_put(w, nlen - 257, 5);
    dm_put(w, ndist - 1, 5);
    dm_put(w, ncl - 4, 4);
    uint8_t cll[19] = {0};
    for (unsigned i = 0; i < ncl; i++) {
        dm_put(w, cl[i], 3);
        cll[cl_order[i]] = cl[i];
    }
    for (size_t i = 0; i < nsy; i++) {
        if (cll[sy[i].sym]) put_code(w, code_of(cll, 19, sy[i].sym), cll[sy[i].sym]);
        if (sy[i].sym == 16) dm_put(w, sy[i].extra, 2);
        if (sy[i].sym == 17) dm_put(w, sy[i].extra, 3);
        if (sy[i].sym == 18) dm_put(w, sy[i].extra, 7);
    }
}

/* A block with code lengths ll (nlen) and dl (ndist), symbols syms, written by deflate_model. */
static void dyn_block(dm_bits *w, int final, const uint8_t *ll, unsigned nlen, const uint8_t *dl, unsigned ndist,
                      const dm_sym *syms, size_t n, const dm_hdr *h) {
    dm_block b;
    memset(&b, 0, sizeof b);
    b.type = 2;
    b.final = final;
    b.nlen = nlen;
    b.ndist = ndist;
    memcpy(b.lens, ll, nlen);
    memcpy(b.lens + nlen, dl, ndist);
    dm_write_block(w, &b, syms, n, h, NULL, 0, 0);
}

static void fixed_block(dm_bits *w, int final, const dm_sym *syms, size_t n) {
    dm_block b;
    memset(&b, 0, sizeof b);
    b.type = 1;
    b.final = final;
    dm_write_block(w, &b, syms, n, NULL, NULL, 0, 0);
}

static void stored_block(dm_bits *w, int final, const uint8_t *d, uint32_t len, uint32_t nlen_xor) {
    dm_block b;
    memset(&b, 0, sizeof b);
    b.type = 0;
    b.final = final;
    b.stored_len = len;
    dm_write_block(w, &b, NULL, 0, NULL, d, len, nlen_xor);
}

#define LIT(c) ((dm_sym){DM_LIT, (uint8_t)(c), 0, 0, 0})
#define MATCH(l, d) ((dm_sym){DM_MATCH, 0, (uint16_t)(l), 0, (uint32_t)(d)})
#define RAW_LL(s) ((dm_sym){DM_RAW_LL, 0, 0, (uint16_t)(s), 0})
#define RAW_DIST(s) ((dm_sym){DM_RAW_DIST, 0, 0, (uint16_t)(s), 0})

/* a complete literal/length code of 286 symbols (the fixed code's lengths, made complete by
 * two 7-bit codes where the fixed code has 286 and 287) and a complete distance code of 30 */
static uint8_t LL[286], DL[30];
static void base_lengths(void) {
    memset(LL, 8, 144);
    memset(LL + 144, 9, 112);
    memset(LL + 256, 7, 24);
    memset(LL + 280, 8, 4);
    memset(LL + 284, 7, 2);
    memset(DL, 5, 28);
    memset(DL + 28, 4, 2);
}

static const dm_sym HELLO[] = {{DM_LIT, 'h', 0, 0, 0}, {DM_LIT, 'e', 0, 0, 0}, {DM_LIT, 'l', 0, 0, 0},
                               {DM_LIT, 'l', 0, 0, 0}, {DM_LIT, 'o', 0, 0, 0}, {DM_MATCH, 0, 5, 0, 5}};

/* ---- the cases ------------------------------------------------------------------------------- */

enum { LEND_NO, LEND_YES, LEND_ANY };
typedef struct tcase {
    const char *name;
    void (*build)(dm_bits *w);
    int kind;        /* zlib's: FZ_FI_* */
    const char *msg; /* zlib's message when it refuses */
    int lend;        /* LEND_YES: the decoder hands a header to zlib; LEND_NO: it must not */
    size_t cut;      /* > 0: the stream is cut to its first `cut` bytes (from the end: cut - 1000) */
    size_t trail;    /* bytes added after it */
} tcase;

static void c_valid_dynamic(dm_bits *w) { dyn_block(w, 1, LL, 286, DL, 30, HELLO, 6, NULL); }
static void c_valid_fixed(dm_bits *w) { fixed_block(w, 1, HELLO, 6); }
static void c_valid_stored(dm_bits *w) {
    stored_block(w, 0, (const uint8_t *)"abc", 3, 0);
    stored_block(w, 0, NULL, 0, 0);
    fixed_block(w, 1, (dm_sym[]){MATCH(3, 3), LIT('d')}, 2);
}
static void c_block_type(dm_bits *w) {
    fixed_block(w, 0, HELLO, 5);
    dm_put(w, 1, 1);
    dm_put(w, 3, 2);
    dm_put(w, 0, 16);
}
static void c_stored_lengths(dm_bits *w) {
    fixed_block(w, 0, HELLO, 5);
    stored_block(w, 1, (const uint8_t *)"abcd", 4, 0x100);
}
static void c_too_many_lit(dm_bits *w) {
    dm_hdr h = {DM_RLE_GREEDY, 0, 287, -1, 0};
    dyn_block(w, 1, LL, 286, DL, 30, HELLO, 6, &h);
}
static void c_too_many_dist(dm_bits *w) {
    dm_hdr h = {DM_RLE_GREEDY, 0, -1, 31, 0};
    dyn_block(w, 1, LL, 286, DL, 30, HELLO, 6, &h);
}
static void c_cl_incomplete(dm_bits *w) {
    static const uint8_t cl[19] = {0, 0, 0, 3, 3, 3, 3, 3, 3, 3}; /* 7 codes of 3 bits: one missing */
    dyn_header(w, 1, 257, 1, cl, 19, (clsym[]){{0, 0}}, 1);
}
static void c_cl_oversubscribed(dm_bits *w) {
    static const uint8_t cl[19] = {1, 1, 1};
    dyn_header(w, 1, 257, 1, cl, 19, NULL, 0);
}
static void c_cl_empty(dm_bits *w) { /* no code-length codes: zlib reads 1-bit zeros, then finds no EOB */
    static const uint8_t cl[4] = {0};
    dyn_header(w, 1, 257, 1, cl, 4, NULL, 0);
    dm_put(w, 0, 258);
}
static void c_repeat_first(dm_bits *w) {
    dm_hdr h = {DM_RLE_FIRST16, 0, -1, -1, 0};
    dyn_block(w, 1, LL, 286, DL, 30, HELLO, 6, &h);
}
static void c_repeat_past(dm_bits *w) {
    uint8_t dl[30] = {0};
    dl[0] = 1;
    dl[1] = 1;
    dm_hdr h = {DM_RLE_OVERRUN, 3, -1, -1, 0}; /* the distances' last zeros run 3 past the end */
    dyn_block(w, 1, LL, 286, dl, 30, HELLO, 5, &h);
}
static void c_repeat_across(dm_bits *w) { /* valid: a repeat from the literal/length lengths into the distances' */
    uint8_t ll[258], dl[4] = {2, 2, 2, 2};
    memset(ll, 9, 256); /* 256 literals of 9 bits, the end of block and length 3 of 2: complete */
    ll[256] = ll[257] = 2;
    dyn_block(w, 1, ll, 258, dl, 4, (dm_sym[]){LIT('a'), LIT('a'), MATCH(3, 2)}, 3, NULL); /* 2 x 6: a 16 across */
}
static void c_no_eob(dm_bits *w) {
    uint8_t ll[286];
    memcpy(ll, LL, sizeof ll);
    ll[256] = 0;
    dyn_block(w, 1, ll, 286, DL, 30, HELLO, 6, NULL);
}
static void c_lit_incomplete(dm_bits *w) {
    uint8_t ll[286];
    memcpy(ll, LL, sizeof ll);
    ll['z'] = 0;
    dyn_block(w, 1, ll, 286, DL, 30, HELLO, 6, NULL);
}
static void c_lit_oversubscribed(dm_bits *w) {
    uint8_t ll[286];
    memcpy(ll, LL, sizeof ll);
    ll[0] = 7;
    dyn_block(w, 1, ll, 286, DL, 30, HELLO, 6, NULL);
}
static void c_lit_eob_only(dm_bits *w) { /* valid: a single code of one bit, the end of block */
    uint8_t ll[257] = {0};
    ll[256] = 1;
    fixed_block(w, 0, HELLO, 5);
    dyn_block(w, 0, ll, 257, (uint8_t[]){0}, 1, NULL, 0, NULL);
    fixed_block(w, 1, (dm_sym[]){MATCH(4, 5)}, 1);
}
static void c_lit_eob_only_other(dm_bits *w) { /* its other bit: "invalid literal/length code" */
    uint8_t ll[257] = {0};
    ll[256] = 1;
    dm_hdr h = {DM_RLE_GREEDY, 0, -1, -1, 1};
    dyn_block(w, 1, ll, 257, (uint8_t[]){0}, 1, NULL, 0, &h);
    dm_put(w, 0xFF, 8);
}
static void c_dist_incomplete(dm_bits *w) {
    uint8_t dl[30] = {2, 2, 2};
    dyn_block(w, 1, LL, 286, dl, 30, HELLO, 6, NULL);
}
static void c_dist_oversubscribed(dm_bits *w) {
    uint8_t dl[30];
    memcpy(dl, DL, sizeof dl);
    dl[0] = 4;
    dyn_block(w, 1, LL, 286, dl, 30, HELLO, 6, NULL);
}
static void c_dist_single2(dm_bits *w) { /* one distance code, of 2 bits: incomplete, refused */
    uint8_t dl[30] = {0, 0, 0, 0, 2};
    dyn_block(w, 1, LL, 286, dl, 30, HELLO, 6, NULL);
}
static void c_dist_single1(dm_bits *w) { /* valid: one distance code of one bit (symbol 4: 5..6) */
    uint8_t dl[30] = {0, 0, 0, 0, 1};
    dyn_block(w, 1, LL, 286, dl, 30, HELLO, 6, NULL);
}
static void c_dist_single1_other(dm_bits *w) { /* its other bit: "invalid distance code" */
    uint8_t dl[30] = {0, 0, 0, 0, 1};
    dm_hdr h = {DM_RLE_GREEDY, 0, -1, -1, 1};
    dm_sym sy[6];
    memcpy(sy, HELLO, 5 * sizeof *sy);
    sy[5] = RAW_DIST(1); /* length 3, then no code for distance 1: the bit below */
    dyn_block(w, 1, LL, 286, dl, 30, sy, 6, &h);
    dm_put(w, 0xFF, 8);
}
static void c_dist_empty_unused(dm_bits *w) { /* valid: no distance codes, none needed */
    uint8_t dl[1] = {0};
    dyn_block(w, 1, LL, 286, dl, 1, HELLO, 5, NULL);
}
static void c_dist_empty_used(dm_bits *w) { /* a length with no distance code: "invalid distance code" */
    uint8_t dl[1] = {0};
    dyn_block(w, 1, LL, 286, dl, 1, HELLO, 6, NULL);
    dm_put(w, 0, 16);
}
static void c_fixed_286(dm_bits *w) { fixed_block(w, 1, (dm_sym[]){LIT('a'), RAW_LL(286), LIT('b')}, 3); }
static void c_fixed_287(dm_bits *w) { fixed_block(w, 1, (dm_sym[]){LIT('a'), RAW_LL(287)}, 2); }
static void c_fixed_dist30(dm_bits *w) { fixed_block(w, 1, (dm_sym[]){LIT('a'), LIT('b'), LIT('c'), RAW_DIST(30)}, 4); }
static void c_fixed_dist31(dm_bits *w) { fixed_block(w, 1, (dm_sym[]){LIT('a'), LIT('b'), LIT('c'), RAW_DIST(31)}, 4); }
static void c_far_dynamic(dm_bits *w) {
    dyn_block(w, 1, LL, 286, DL, 30, (dm_sym[]){LIT('a'), LIT('b'), MATCH(3, 3), LIT('c')}, 4, NULL);
}
static void c_far_fixed_first(dm_bits *w) { fixed_block(w, 1, (dm_sym[]){MATCH(3, 1)}, 1); }
static void c_far_after_stored(dm_bits *w) { /* 3 bytes stored, then a distance of 4 */
    stored_block(w, 0, (const uint8_t *)"xyz", 3, 0);
    fixed_block(w, 1, (dm_sym[]){MATCH(3, 4)}, 1);
}
/* a long block (the fast loop's) of literals with one symbol at 150 (and another at 250) */
static void long_block(dm_bits *w, int fixed, dm_sym at150, dm_sym at250) {
    dm_sym sy[400];
    for (int i = 0; i < 400; i++) sy[i] = LIT('a' + i % 26);
    sy[150] = at150;
    sy[250] = at250;
    if (fixed) fixed_block(w, 1, sy, 400);
    else dyn_block(w, 1, LL, 286, DL, 30, sy, 400, NULL);
}
static void c_far_long_block(dm_bits *w) { long_block(w, 0, MATCH(3, 151), LIT('x')); }
static void c_fixed_bad_long_block(dm_bits *w) { long_block(w, 1, RAW_LL(287), RAW_DIST(30)); }
static void c_at_first_byte(dm_bits *w) { /* valid: a distance to the very first byte */
    stored_block(w, 0, (const uint8_t *)"xyz", 3, 0);
    fixed_block(w, 1, (dm_sym[]){MATCH(10, 3)}, 1);
}
static void c_far_32k(dm_bits *w) { /* 32768 back at output 32767: too far; at 32768: valid (next case) */
    static uint8_t d[32767];
    for (size_t i = 0; i < sizeof d; i++) d[i] = (uint8_t)(i * 7);
    stored_block(w, 0, d, sizeof d, 0);
    fixed_block(w, 1, (dm_sym[]){MATCH(3, 32768)}, 1);
}
static void c_ok_32k(dm_bits *w) {
    static uint8_t d[32768];
    for (size_t i = 0; i < sizeof d; i++) d[i] = (uint8_t)(i * 7);
    stored_block(w, 0, d, 32767, 0);
    stored_block(w, 0, d, 1, 0);
    fixed_block(w, 1, (dm_sym[]){MATCH(258, 32768)}, 1);
}
static void c_many_blocks(dm_bits *w) { /* every kind, each after the others, codes 1 to 15 bits long */
    /* a chain: the end of block 1 bit, length 3 two, 'A'..'L' 3 to 14, 'M' and 'N' 15: complete */
    uint8_t ll[258] = {0}, dl[2] = {1, 1};
    ll[256] = 1;
    ll[257] = 2;
    for (unsigned c = 'A'; c <= 'L'; c++) ll[c] = (uint8_t)(3 + c - 'A');
    ll['M'] = ll['N'] = 15;
    static const dm_sym deep[] = {{DM_LIT, 'A', 0, 0, 0}, {DM_LIT, 'B', 0, 0, 0}, {DM_LIT, 'M', 0, 0, 0},
                                  {DM_LIT, 'N', 0, 0, 0}, {DM_LIT, 'N', 0, 0, 0}, {DM_MATCH, 0, 3, 0, 1},
                                  {DM_LIT, 'L', 0, 0, 0}, {DM_MATCH, 0, 3, 0, 2}, {DM_LIT, 'M', 0, 0, 0}};
    for (int k = 0; k < 6; k++) {
        dyn_block(w, 0, LL, 286, DL, 30, HELLO, 6, NULL);
        dyn_block(w, 0, ll, 258, dl, 2, deep, sizeof deep / sizeof deep[0], NULL);
        fixed_block(w, 0, (dm_sym[]){LIT('a'), MATCH(100, 7)}, 2);
        stored_block(w, 0, (const uint8_t *)"stored", 6, 0);
    }
    fixed_block(w, 1, (dm_sym[]){MATCH(258, 700)}, 1);
}

/* The rows: a stream zlib inflates whole (VALID), one it refuses with its message (REFUSED), with
 * what the decoder must lend to zlib; the streams cut short or followed by bytes, in full. */
#define VALID(name, build, lend) \
    { name, build, FZ_FI_END, NULL, lend, 0, 0 }
#define REFUSED(name, build, msg, lend) \
    { name, build, FZ_FI_BAD, msg, lend, 0, 0 }
static const tcase cases[] = {
    VALID("valid dynamic", c_valid_dynamic, LEND_NO),
    VALID("valid fixed", c_valid_fixed, LEND_NO),
    VALID("valid stored, empty stored", c_valid_stored, LEND_NO),
    VALID("every kind of block, 15-bit codes", c_many_blocks, LEND_NO),
    REFUSED("block type 3", c_block_type, "invalid block type", LEND_YES),
    REFUSED("stored LEN and NLEN disagree", c_stored_lengths, "invalid stored block lengths", LEND_YES),
    REFUSED("HLIT 287", c_too_many_lit, "too many length or distance symbols", LEND_YES),
    REFUSED("HDIST 31", c_too_many_dist, "too many length or distance symbols", LEND_YES),
    REFUSED("code-length code incomplete", c_cl_incomplete, "invalid code lengths set", LEND_YES),
    REFUSED("code-length code over-subscribed", c_cl_oversubscribed, "invalid code lengths set", LEND_YES),
    REFUSED("no code-length code (zlib's 1-bit zeros)", c_cl_empty, "invalid code -- missing end-of-block", LEND_YES),
    REFUSED("repeat with no previous length", c_repeat_first, "invalid bit length repeat", LEND_YES),
    REFUSED("repeat past the lengths", c_repeat_past, "invalid bit length repeat", LEND_YES),
    VALID("repeat across the two sets (valid)", c_repeat_across, LEND_NO),
    REFUSED("no end-of-block code", c_no_eob, "invalid code -- missing end-of-block", LEND_YES),
    REFUSED("literal/length set incomplete", c_lit_incomplete, "invalid literal/lengths set", LEND_YES),
    REFUSED("literal/length set over-subscribed", c_lit_oversubscribed, "invalid literal/lengths set", LEND_YES),
    VALID("end of block alone, one bit (valid)", c_lit_eob_only, LEND_YES),
    REFUSED("end of block alone, the other bit", c_lit_eob_only_other, "invalid literal/length code", LEND_YES),
    REFUSED("distance set incomplete", c_dist_incomplete, "invalid distances set", LEND_YES),
    REFUSED("distance set over-subscribed", c_dist_oversubscribed, "invalid distances set", LEND_YES),
    REFUSED("one distance code of 2 bits", c_dist_single2, "invalid distances set", LEND_YES),
    VALID("one distance code of 1 bit (valid)", c_dist_single1, LEND_YES),
    REFUSED("one distance code of 1 bit, the other bit", c_dist_single1_other, "invalid distance code", LEND_YES),
    VALID("no distance code, none used (valid)", c_dist_empty_unused, LEND_YES),
    REFUSED("no distance code, one used", c_dist_empty_used, "invalid distance code", LEND_YES),
    REFUSED("fixed literal/length 286", c_fixed_286, "invalid literal/length code", LEND_NO),
    REFUSED("fixed literal/length 287", c_fixed_287, "invalid literal/length code", LEND_NO),
    REFUSED("fixed distance 30", c_fixed_dist30, "invalid distance code", LEND_NO),
    REFUSED("fixed distance 31", c_fixed_dist31, "invalid distance code", LEND_NO),
    REFUSED("too far back, dynamic", c_far_dynamic, "invalid distance too far back", LEND_NO),
    REFUSED("too far back, the first symbol", c_far_fixed_first, "invalid distance too far back", LEND_NO),
    REFUSED("too far back after a stored block", c_far_after_stored, "invalid distance too far back", LEND_NO),
    REFUSED("too far back in a long block", c_far_long_block, "invalid distance too far back", LEND_NO),
    REFUSED("fixed 287 in a long block", c_fixed_bad_long_block, "invalid literal/length code", LEND_NO),
    VALID("back to the first byte (valid)", c_at_first_byte, LEND_NO),
    REFUSED("32768 back after 32767 bytes", c_far_32k, "invalid distance too far back", LEND_NO),
    VALID("32768 back after 32768 bytes (valid)", c_ok_32k, LEND_NO),
    {"cut inside a dynamic header", c_valid_dynamic, FZ_FI_CUT, NULL, LEND_YES, 20, 0},
    {"cut inside a symbol", c_many_blocks, FZ_FI_CUT, NULL, LEND_NO, 1000 + 2, 0},
    {"cut inside a stored block", c_valid_stored, FZ_FI_CUT, NULL, LEND_NO, 6, 0},
    {"cut inside a stored header", c_valid_stored, FZ_FI_CUT, NULL, LEND_YES, 8, 0},
    {"cut where 286's code is whole", c_fixed_286, FZ_FI_BAD, "invalid literal/length code", LEND_NO, 3, 0},
    {"cut inside an invalid header", c_too_many_lit, FZ_FI_CUT, NULL, LEND_YES, 2, 0},
    {"cut just after HLIT 287 and HDIST are there", c_too_many_lit, FZ_FI_BAD, "too many length or distance symbols",
     LEND_YES, 3, 0},
    {"bytes after the stream", c_valid_dynamic, FZ_FI_END, NULL, LEND_NO, 0, 5},
};

/* ---- the checks ---------------------------------------------------------------------------------- */

/* zlib's verdict and message on the whole stream */
static fz_fi_verdict zlib_whole(const uint8_t *s, size_t n) {
    fz_fi_verdict z, f;
    fz_fastinf_diff(4 << 3, s, n, &z, &f); /* whole, 32 KiB windows */
    return z;
}

/* the decoder alone, the input in two pushes cut at `cut`, 64 KiB window: 0 when it matches z */
static int two_pushes(const uint8_t *s, size_t n, size_t cut, const fz_fi_verdict *z, const uint8_t *zout) {
    static npzs__fastinf *fi;
    static z_stream zs;
    static uint8_t out[1u << 20];
    if (!fi) {
        fi = malloc(npzs__fi_size());
        static const Bytef none[1] = {0};
        if (!fi || inflateInit2(&zs, -15) != Z_OK || inflateSetDictionary(&zs, none, 0) != Z_OK) abort();
        npzs__fi_init(fi);
    }
    npzs__fi_reset(fi);
    size_t made_all = 0, off = 0;
    int kind = FZ_FI_CUT;
    size_t end = 0;
    for (int part = 0; part < 2 && kind == FZ_FI_CUT; part++) {
        size_t k = part ? n - cut : cut, pos = 0;
        int last = part == 1;
        for (;;) {
            size_t took, made, back;
            int rc = npzs__fi_run(fi, &zs, s + off + pos, k - pos, last, out + made_all, sizeof out - made_all, &took,
                                  &made, &back);
            made_all += made;
            pos += took;
            if (rc == NPZS__FI_END) {
                kind = FZ_FI_END;
                end = off + pos - back;
                break;
            }
            if (rc != NPZS__FI_OK) {
                kind = FZ_FI_BAD;
                break;
            }
            if (!took && !made) break;
        }
        off += k;
    }
    return kind != z->kind || made_all != z->out_len || memcmp(out, zout, made_all) ||
           (kind == FZ_FI_END && end != z->end);
}

/* Parse an archive of one deflated member holding the stream (sizes and CRC of zlib's output),
 * whole or in 1-byte pushes, with the default decoder or zlib alone. */
typedef struct pres {
    int code;
    uint64_t off;
    const char *rule;
} pres;
static pres parse(const uint8_t *z, size_t zn, int zlib_alone, int bytewise) {
    npzs_limits lim;
    npzs_limits_default(&lim);
    if (zlib_alone) lim.lenient |= NPZS_INFLATE_ZLIB;
    npzs_parser *p = npzs_new(&lim, NULL);
    pres r = {0, 0, NULL};
    if (!p) abort();
    size_t off = 0;
    int finished = 0;
    for (;;) {
        size_t k = bytewise ? (off < zn ? 1 : 0) : zn - off;
        npzs_in in = {z + off, k, 0};
        if (off == zn && !finished) {
            npzs_finish(p);
            finished = 1;
        }
        npzs_event ev;
        int rc = npzs_next(p, finished ? NULL : &in, &ev);
        off += in.pos;
        if (rc == NPZS_EVENT) continue;
        if (rc == NPZS_NEED_INPUT) continue;
        if (rc == NPZS_DONE) break;
        r.code = rc;
        r.off = npzs_error_offset(p);
        r.rule = npzs_error_rule(p);
        break;
    }
    npzs_free(p);
    return r;
}

static void check_archive(const tcase *c, const uint8_t *s, size_t n, const fz_fi_verdict *z, const uint8_t *zout) {
    fz_buf b = {0};
    uint32_t crc = fz_crc32(zout, z->out_len);
    fz_zip_lfh(&b, "a.bin", 5, 20, 0, 8, crc, (uint32_t)n, (uint32_t)z->out_len, NULL, 0);
    uint64_t data = b.n;
    fz_put(&b, s, n);
    size_t cd = b.n;
    fz_zip_cdh_raw(&b, "a.bin", 5, 20, 0, 8, crc, (uint32_t)n, (uint32_t)z->out_len, 0);
    fz_zip_eocd(&b, 1, (uint32_t)(b.n - cd), (uint32_t)cd);
    pres ref = parse(b.p, b.n, 1, 0);
    const char *want = z->kind == FZ_FI_BAD   ? "S-ZIP-LOCAL.inflate"
                       : z->kind == FZ_FI_CUT ? "S-ZIP-LOCAL.deflate-unterminated"
                       : z->end < n           ? "S-ZIP-DEFLATE-END.early"
                                              : NULL;
    uint64_t want_off = z->kind == FZ_FI_BAD ? data : z->kind == FZ_FI_CUT ? data + n : data + z->end;
    CHECK(want ? ref.rule && !strcmp(ref.rule, want) && ref.off == want_off : ref.code == 0,
          "%s: zlib alone in an archive: rule %s at %llu, expected %s at %llu", c->name, ref.rule ? ref.rule : "none",
          (unsigned long long)ref.off, want ? want : "none", (unsigned long long)want_off);
    for (int v = 0; v < 3; v++) {
        pres r = parse(b.p, b.n, v == 2, v >= 1);
        CHECK(r.code == ref.code && r.off == ref.off &&
                  (r.rule == ref.rule || (r.rule && ref.rule && !strcmp(r.rule, ref.rule))),
              "%s: in an archive (%s): code %d at %llu rule %s; zlib alone: code %d at %llu rule %s", c->name,
              v == 0   ? "whole"
              : v == 1 ? "1-byte pushes"
                       : "zlib alone, 1-byte pushes",
              r.code, (unsigned long long)r.off, r.rule ? r.rule : "none", ref.code, (unsigned long long)ref.off,
              ref.rule ? ref.rule : "none");
    }
    fz_free_buf(&b);
}

/* Long streams as np.savez_compressed makes them (zlib, level 6, raw deflate) of three kinds of
 * array bytes: float32 of random mantissas and a few exponents (nearly all literals), 16 levels
 * of weights, and small integers (many matches).  Each is decoded with the symbol loop the CPU
 * allows and with the portable one, whole, in uneven pushes and in 3-byte pushes, through
 * windows of 1 byte to 256 KiB, lending zlib no block, every second one or all, and compared
 * with zlib byte for byte. */
static void savez_like(void) {
    static const char *kinds[3] = {"floats", "quantised", "integers"};
    static const unsigned ctls[] = {0, 7, 2 | 3 << 3, 4 << 3, 7 | 6 << 3, 5 << 3 | 2 << 6, 6 << 3 | 3 << 6};
    enum { N = 1u << 18 };
    static uint8_t raw[N];
    for (unsigned k = 0; k < 3; k++) {
        if (!check_group(kinds[k])) continue;
        uint32_t x = 12345u + k;
        for (size_t i = 0; i < N; i += 4) {
            x = x * 1664525u + 1013904223u;
            float f;
            if (k == 0) f = ((float)(x >> 8) / 16777216.0f - 0.5f) * ((float)(x & 0xFFu) / 64.0f + 0.25f);
            else f = (float)((x >> 20) & 15u) * 0.125f;
            if (k == 2) {
                uint32_t v = (x >> 12) % 1000u;
                memcpy(raw + i, &v, 4);
            } else {
                memcpy(raw + i, &f, 4);
            }
        }
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        uLong cap = compressBound(N) + 64;
        uint8_t *c = malloc(cap);
        if (!c || deflateInit2(&zs, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) abort();
        zs.next_in = raw;
        zs.avail_in = N;
        zs.next_out = c;
        zs.avail_out = (uInt)cap;
        if (deflate(&zs, Z_FINISH) != Z_STREAM_END) abort();
        size_t n = cap - zs.avail_out;
        deflateEnd(&zs);
        int diffs = 0, ends = 0;
        for (size_t i = 0; i < sizeof ctls / sizeof ctls[0]; i++)
            for (unsigned portable = 0; portable < 2; portable++) {
                fz_fi_verdict z, f;
                diffs += fz_fastinf_diff(ctls[i] | portable << 8, c, n, &z, &f);
                ends += z.kind == FZ_FI_END && z.out_len == N && f.zblocks == 0;
            }
        CHECK(diffs == 0, "%s: the decoder differs from zlib under %d of %zu pushes, windows and loops", kinds[k],
              diffs, 2 * sizeof ctls / sizeof ctls[0]);
        CHECK(ends == 2 * (int)(sizeof ctls / sizeof ctls[0]) - 2 * 2,
              "%s: %d of the runs ended whole with no block lent (want all but the 4 that lend)", kinds[k], ends);
        free(c);
    }
}

int main(int argc, char **argv) {
    if (check_args(&argc, argv)) return 2;
    base_lengths();
    savez_like();
    static uint8_t zout[1u << 20];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const tcase *c = &cases[i];
        if (!check_group(c->name)) continue;
        dm_bits w = {0};
        c->build(&w);
        size_t n = w.n;
        if (c->cut >= 1000) n = n > c->cut - 1000 ? n - (c->cut - 1000) : 0;
        else if (c->cut) n = c->cut < n ? c->cut : n;
        uint8_t *s = malloc(n + c->trail + 1);
        if (!s) abort();
        if (n) memcpy(s, w.p, n);
        for (size_t t = 0; t < c->trail; t++) s[n + t] = (uint8_t)(0xA5 + t);
        n += c->trail;
        free(w.p);
        fz_fi_verdict z = zlib_whole(s, n);
        CHECK(z.kind == c->kind && (c->msg ? z.msg && !strcmp(z.msg, c->msg) : 1),
              "%s: zlib's verdict is %d (%s), the case wants %d (%s)", c->name, z.kind, z.msg ? z.msg : "-", c->kind,
              c->msg ? c->msg : "-");
        /* zlib's output, for the comparisons below */
        {
            z_stream zs;
            memset(&zs, 0, sizeof zs);
            inflateInit2(&zs, -15);
            zs.next_in = s;
            zs.avail_in = (uInt)n;
            zs.next_out = zout;
            zs.avail_out = sizeof zout;
            inflate(&zs, Z_NO_FLUSH);
            inflateEnd(&zs);
        }
        int diffs = 0;
        for (unsigned ctl = 0; ctl < 512; ctl++) diffs += fz_fastinf_diff(ctl, s, n, NULL, NULL);
        CHECK(diffs == 0, "%s: the decoder differs from zlib under %d of 512 pushes, windows, lendings and loops",
              c->name, diffs);
        int cuts = 0;
        for (size_t cut = 0; cut <= n; cut++) cuts += two_pushes(s, n, cut, &z, zout);
        CHECK(cuts == 0, "%s: the decoder differs from zlib at %d of %zu cuts", c->name, cuts, n + 1);
        fz_fi_verdict f;
        fz_fastinf_diff(6 << 3, s, n, NULL, &f); /* whole, 256 KiB window, nothing lent but what must be */
        CHECK(c->lend == LEND_ANY || (c->lend == LEND_YES) == (f.zblocks > 0),
              "%s: the decoder lent %llu blocks to zlib, expected %s", c->name, (unsigned long long)f.zblocks,
              c->lend == LEND_YES ? "some" : "none");
        check_archive(c, s, n, &z, zout);
        free(s);
    }
    return check_done("inflate");
}
