/*
 * seam.h -- the one seam between the parser and a helper that inflates members ahead of it
 * (the parallel helper, par.c).  The parser asks one question ("do you have this member's
 * output?") and tells two things (the parser is past a member; the input is forgotten); the
 * helper may ask the parser the few things below.  Apart from this and the public API (and the
 * pure record decoders of zrec.c), no file of the helper touches the parser, and no file of the
 * parser knows the helper.
 *
 *   caller --npzs_next--> helper (par.c) --bytes, in order--> npzs__seam_parse (the parser)
 *                        |                                          |
 *                        +--- take(start, csize) <------------------+  at a deflated member's start
 *                        +--- passed(end) <-------------------------+  at each MEMBER_END, or an error
 *                        +--- reset() <-----------------------------+  npzs_reset
 *
 * One entry for the caller: with a helper attached, npzs_next and npzs_finish on the parser go
 * to the helper (next, finish), which feeds the parser through npzs__seam_parse and
 * npzs__seam_finish; npzs_par_next and npzs_par_finish, the 0.x calls, do the same.
 */
#ifndef NPZS_SEAM_H
#define NPZS_SEAM_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

/* A member's output inflated ahead of the parser: the bytes zlib gives for the member's
 * compressed bytes, its stream ending exactly at the last of them.  The helper fills it; the
 * parser reads it (inflate.c) until it passed the member. */
typedef struct npzs__pre {
    const uint8_t *out;  /* the first `keep` bytes of the output (all of it unless skipping) */
    uint64_t len, given; /* output bytes in all; given to the content machine so far */
    uint64_t keep;       /* == len, or fewer: the rest was not kept, only its CRC-32 */
    uint32_t crc_rest;   /* CRC-32 of the output bytes after `keep` */
    /* the member's compressed bytes, for re-inflating it when the rest cannot be skipped: in
     * pieces (the helper's input grows with the bytes that arrive) */
    const uint8_t *const *in;
    const size_t *in_len;
    size_t in_n;
    uint64_t csize, zpos, zout;
    size_t zpiece, zpiece_pos;
    int z; /* re-inflating with the parser's zlib (inflate.c, pre_zlib) */
} npzs__pre;

typedef struct npzs__seam {
    void *ctx;
    /* The output of the deflated member whose compressed data starts at input offset `start`,
     * csize bytes as its local header declares; NULL: the parser inflates it.  Called on the
     * caller's thread inside npzs_next_; it may wait for a worker. */
    npzs__pre *(*take)(void *ctx, uint64_t start, uint64_t csize);
    /* The parser is past every member whose data ended at or before `end` (at a MEMBER_END: its
     * offset; after an error: UINT64_MAX): their outputs are not read any more. */
    void (*passed)(void *ctx, uint64_t end);
    /* npzs_reset(): the input is forgotten; the helper drops what it holds of it and stays. */
    void (*reset)(void *ctx);
    /* The caller's npzs_next_ and npzs_finish on the parser: the helper takes the push and feeds
     * the parser itself (npzs__seam_parse), the end of input when it has fed all it holds. */
    int (*next)(void *ctx, npzs_in *in, npzs_event *ev, size_t ev_size);
    void (*finish)(void *ctx);
} npzs__seam;

/* ---- the parser's side (par/seam.c; npzs__seam_parse is the parser's loop, npzs.c; the notice
 * of a member passed, zip/zip.c) ---- */

/* Attach a helper: 0, or -1 when the parser has one already. */
int npzs__seam_attach(npzs_parser *p, const npzs__seam *s);
/* Detach it.  When the parser is inside a member whose output it took from the helper, that
 * member's bytes go with the helper: the parser fails (NPZS_E_BAD_CALL, rule CALL.par-free). */
void npzs__seam_detach(npzs_parser *p);
/* The parser tells the helper it passed the member just ended (zip.c, at MEMBER_END). */
void npzs__seam_member_end(npzs_parser *p);
/* The parser's own step and end of input, past the helper: what npzs_next_ and npzs_finish do
 * with no helper attached (the helper's feed). */
int npzs__seam_parse(npzs_parser *p, npzs_in *in, npzs_event *ev, size_t ev_size);
void npzs__seam_finish(npzs_parser *p);

/* ---- what the helper may ask ---- */

/* The parser's limits, allocator hooks and events mask (read only). */
const npzs_limits *npzs__seam_limits(const npzs_parser *p);
const npzs_allocator *npzs__seam_allocator(const npzs_parser *p);
unsigned npzs__seam_events(const npzs_parser *p);
/* Right after an array's HEADER, before its first data byte: 1 when its output is the helper's
 * `*pre`, kept whole, and the array has data (the data then starts *head_len bytes into it); 0
 * when the parser inflates it, or it is stored, or has no data; -1 anywhere else (or when the
 * caller gave the data a destination: npzs_data_into). */
int npzs__seam_data_block(const npzs_parser *p, npzs__pre **pre, uint64_t *head_len);
/* A bad call on the helper, recorded on its parser as the parser's own (at the next byte's
 * offset, with this CALL.* rule).  Returns the code. */
int npzs__seam_bad_call(npzs_parser *p, int rule);

#endif
