/* members.h -- what the parser keeps of each member of an .npz, and the table of their names.
 * zip.c records a member at its local header and compares the central directory with the record;
 * the duplicate-name table (zip/names.c) hashes the recorded names.  names.c sees the parser only
 * through this and handle.h: the records, the table and the parser's key are given to it. */
#ifndef NPZS_MEMBERS_H
#define NPZS_MEMBERS_H

#include <stddef.h>
#include <stdint.h>

#include "handle.h"

/* What the central directory must repeat about one member. */
typedef struct npzs__record {
    uint64_t lfh_off;    /* offset of the local header */
    const uint8_t *name; /* name bytes, in the parser's name blocks */
    uint64_t csize, usize;
    uint32_t crc;
    uint32_t hash[2]; /* name-table hashes of the name and of the key (name without ".npy") */
    uint16_t name_len, flags, method;
} npzs__record;

/* Member records live in fixed chunks: the table grows without copying them, and memory
 * follows the member count (no doubled copy while it grows).  recs: the table of chunks. */
#define NPZS_REC_SHIFT 9
#define NPZS_REC_CHUNK (1u << NPZS_REC_SHIFT)
static inline npzs__record *npzs__rec_at(npzs__record *const *recs, uint32_t i) {
    return &recs[i >> NPZS_REC_SHIFT][i & (NPZS_REC_CHUNK - 1)];
}

/* The duplicate-name table: open addressing, (member index << 1 | derived) + 1, 0 empty.  Its
 * SipHash key is the parser's (drawn once, npzs__names_seed; npzs_reset keeps it), its slots are
 * one input's (npzs__names_release frees them). */
typedef struct npzs__names {
    uint64_t key[2];
    uint32_t *slot;
    size_t cap; /* 0, or a power of two of slots at most half full */
} npzs__names;

/* names.c */
uint64_t npzs__siphash13(const uint64_t key[2], const uint8_t *m, size_t n);
/* A fresh key from the system's random source (t->key). */
void npzs__names_seed(npzs__names *t);
/* Enter member's name, recs[member] (and, when it ends in ".npy", its np.load key: the name
 * without it); the table holds the entries of the members before it.  0, or < 0 with the error
 * recorded on p (duplicate_name at off, nomem). */
int npzs__names_add(npzs_parser *p, npzs__names *t, npzs__record *const *recs, uint32_t member, uint64_t off);
void npzs__names_release(npzs_parser *p, npzs__names *t);

#endif
