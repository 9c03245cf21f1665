/*
 * fuzz/deflate_model.h -- a deflate stream as blocks and symbols, read from a valid stream and
 * written back with changes: the aimed mutations of the inflate campaign
 * (fuzz/fastinf_campaign.c).  Test code: a slow, plain reading of RFC 1951, written apart from
 * src/zip/fastinf.c so that the two do not share a mistake.
 */
#ifndef FZ_DEFLATE_MODEL_H
#define FZ_DEFLATE_MODEL_H

#include <stddef.h>
#include <stdint.h>

enum { DM_LIT, DM_MATCH, DM_RAW_LL, DM_RAW_DIST };

/* One symbol: a literal, a match (len 3..258, dist 1..32768), or (written only) a raw
 * literal/length symbol (`raw`, e.g. 286) or a length of 3 with a raw distance symbol (`raw`,
 * e.g. 30).  The end of block is implied. */
typedef struct dm_sym {
    uint8_t kind, lit;
    uint16_t len, raw;
    uint32_t dist;
} dm_sym;

typedef struct dm_block {
    int type; /* 0 stored, 1 fixed, 2 dynamic */
    int final;
    size_t bit;          /* its first bit in the stream read */
    uint32_t stored_len; /* stored: its length, and its bytes' offset in the stream read */
    size_t stored_at;
    unsigned nlen, ndist, ncode; /* dynamic: HLIT + 257, HDIST + 1, HCLEN + 4 */
    uint8_t cl[19];              /* dynamic: code-length code lengths */
    uint8_t lens[320];           /* lens[0, nlen): literal/length; lens[nlen, nlen + ndist): distance */
    size_t sym0, nsym;           /* its symbols in the stream's list */
    uint64_t out0;               /* output bytes before it */
} dm_block;

typedef struct dm_stream {
    dm_block *b;
    size_t nb;
    dm_sym *s;
    size_t ns;
    size_t end_bit; /* the bit after the last block's end */
    uint64_t out_len;
} dm_stream;

/* Read a valid raw deflate stream (at most 8 MiB of output).  0, or -1 when it is not one. */
int dm_parse(const uint8_t *src, size_t n, dm_stream *m);
void dm_free(dm_stream *m);

/* A bit writer, least significant bit first (deflate's order). */
typedef struct dm_bits {
    uint8_t *p;
    size_t n, cap;
    unsigned nb; /* bits used of the last byte (0: none) */
} dm_bits;
void dm_put(dm_bits *w, uint32_t v, unsigned nbits);
size_t dm_bitlen(const dm_bits *w);
/* Copy bits [from, to) of src. */
void dm_copy_bits(dm_bits *w, const uint8_t *src, size_t from, size_t to);
void dm_align(dm_bits *w);

/* How a dynamic header writes its code lengths. */
enum {
    DM_RLE_GREEDY,  /* repeat codes where they help (across the two sets too: valid) */
    DM_RLE_NONE,    /* every length by itself */
    DM_RLE_FIRST16, /* a repeat of the previous length first, where there is none */
    DM_RLE_OVERRUN  /* the last repeat goes `overrun` lengths past the end */
};
typedef struct dm_hdr {
    int rle;
    unsigned overrun;
    int hlit, hdist; /* >= 0: these counts written instead (and as many lengths, the
                                missing ones 0); may be past 286 / 30 */
    int no_eob;      /* the block's end-of-block code left out (the caller goes on) */
} dm_hdr;

/* Write block b with symbols syms[0, nsym): its header (a dynamic one with a complete
 * code-length code of all 19 symbols; hdr may be NULL), its symbols with the codes its lengths
 * give (a symbol without a code is left out; a match whose distance has no code is written
 * without one), its end-of-block code if it has one.  A stored block writes stored_len and its
 * complement unless nlen_xor (then complement ^ nlen_xor), then `data`. */
void dm_write_block(dm_bits *w, const dm_block *b, const dm_sym *syms, size_t nsym, const dm_hdr *hdr,
                    const uint8_t *data, size_t data_len, uint32_t nlen_xor);

/* Symbol codes: the length symbol and extra bits of a match length, the distance symbol and
 * extra bits of a distance. */
void dm_len_code(unsigned len, unsigned *sym, unsigned *extra_bits, unsigned *extra);
void dm_dist_code(unsigned dist, unsigned *sym, unsigned *extra_bits, unsigned *extra);

#endif
