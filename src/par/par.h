/*
 * par.h -- the parallel helper's parts, shared by its files (not installed):
 *   pool.c    the worker pool (pool.h), shared by helpers or a helper's own;
 *   parbuf.c  the helper's memory: what it holds for the parser, and a cache of large buffers;
 *   scout.c   the scout, which reads the local headers in the bytes taken ahead of the parser;
 *   par.c     the orchestration: jobs, the bytes held in order, the barrier, npzs_par_next_.
 * None of them includes internal.h: the parser is reached through seam.h and the public API.
 */
#ifndef NPZS_PAR_H
#define NPZS_PAR_H

#include <stddef.h>
#include <stdint.h>

#include "../base/base.h"
#include "npzstream_par.h"
#include "pool.h"
#include "../base/seam.h"
#include "../base/states.h"
#include "../bytes/bytes.h"
#include "../zrec/zrec.h"

/* ---- parbuf.c: memory --------------------------------------------------------------------- */
#define PAR_CACHE 24 /* large buffers kept for the next jobs (20 MB of compressed bytes: 10 pieces) */

typedef struct par_bufs {
    npzs_allocator al;
    uint64_t held; /* bytes of the counted buffers: out (the helper's), cached */
    struct {
        uint8_t *b;
        size_t n;
    } cache[PAR_CACHE];
    unsigned ncache;
} par_bufs;

void *npzs__pb_alloc(par_bufs *pb, size_t n); /* not counted (small structs), n >= 1 */
void npzs__pb_free(par_bufs *pb, void *ptr);
/* A counted buffer of at least n bytes (*size: its size), from the cache (the smallest one not
 * more than twice as large: a member's pieces come back as the last member's) or new; NULL when
 * out of memory. */
uint8_t *npzs__pb_get(par_bufs *pb, size_t n, size_t *size);
/* A counted buffer back: kept for later (the smallest goes when the cache is full) or freed. */
void npzs__pb_put(par_bufs *pb, uint8_t *b, size_t n);
/* Free cached buffers until held + more <= bound (or none is left). */
void npzs__pb_evict(par_bufs *pb, uint64_t bound, uint64_t more);
void npzs__pb_clear(par_bufs *pb); /* every cached buffer freed */

/* ---- scout.c: the local headers ahead of the parser --------------------------------------- */
typedef struct par_scout {
    int st;          /* enum npzs_scstate (states.h) */
    uint64_t lfh;    /* offset of the local header being read or decided */
    size_t hdr_len;  /* its length: 30 + name + extra */
    uint8_t fix[30]; /* staged: its fixed part */
    size_t have;
    uint8_t *var; /* staged: its name and extra field */
    size_t var_cap, var_len, var_need;
    npzs__zlfh h;     /* decoded, sizes resolved once classified */
    uint64_t left;    /* SC_SKIP, SC_JOB: bytes to the next local header */
    uint32_t visited; /* states reached (the state gate) */
} par_scout;

/* What a member is to the helper (npzs__scout_classify). */
enum { SCOUT_SKIP, SCOUT_JOB, SCOUT_OFF };

typedef struct par_scout_cfg {
    const npzs_limits *lim;
    uint64_t min_size;  /* members of fewer uncompressed bytes are not worth a job */
    uint64_t parser_at; /* npzs_consumed(p): a header the parser has passed is its own */
    int workers;        /* a job can run at all */
} par_scout_cfg;

void npzs__scout_reset(par_scout *s); /* SC_HDR: a local header comes next */
void npzs__scout_to(par_scout *s, int st);
/* A whole local header at b (n bytes there) at offset off: 1 (s->h decoded, s->hdr_len), 0 when
 * it is not all there, -1 when it is not a local header the scout can read. */
int npzs__scout_peek(par_scout *s, const uint8_t *b, size_t n, uint64_t off, const npzs_limits *lim);
/* Stage header bytes b[0, n) at offset off (held by the caller): returns how many it took, the
 * state SC_VAR with var_len == var_need once whole, SC_OFF at anything else (or no memory). */
size_t npzs__scout_stage(par_scout *s, par_bufs *pb, const uint8_t *b, size_t n, uint64_t off, const npzs_limits *lim);
/* The whole header in s->h, its extra field at x: SCOUT_SKIP (s->left: bytes to the next header,
 * from its end), SCOUT_JOB (the same, and worth a job) or SCOUT_OFF (sizes not known). */
int npzs__scout_classify(par_scout *s, const uint8_t *x, const par_scout_cfg *cfg);
void npzs__scout_release(par_scout *s, par_bufs *pb);

#ifdef NPZS_TESTING
/* Test hooks: members of n uncompressed bytes and more get a job (default 1 MiB); skip_data:
 * the bytes a job keeps. */
void npzs__par_min_csize(npzs_par *q, uint64_t n);
void npzs__par_keep(npzs_par *q, uint64_t n);
uint32_t npzs__par_visited(const npzs_par *q); /* the scout's states reached */
#endif

#endif
