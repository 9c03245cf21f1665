/*
 * npzstream_par.h -- the parallel helper: deflated members inflated on worker threads while the
 * stream goes on (added in 0.3.0; its own header, a worker pool and a parser reset that keeps it
 * in 0.6.0; stable input in 0.7.0).
 *
 * A helper sits over one parser, for archives written by np.savez_compressed (one deflate stream
 * per array).  The parser stays single-threaded and decides everything: the helper takes input
 * ahead of it, copies the compressed bytes of each deflated member whose local header gives its
 * size (and that is large enough to gain from a worker: 1 MiB uncompressed or more) into a job
 * (or, with npzs_par_stable_input, holds them where they are), and a worker inflates the job
 * with zlib.  When the parser reaches the member it takes the job's
 * output instead of inflating, only when zlib ended the stream exactly at the member's last
 * compressed byte within the size the header declares; anything else (invalid data, early or late
 * ends, a member too large for max_held, members written to a pipe with their sizes in a data
 * descriptor) the parser inflates itself.  The events, the verdict, every error code, rule and
 * offset are those of npzs_next() on the same parser, at any split of the input
 * (tests/api/par.c and files.c, tests/vectors/run_vectors.c --par and fuzz_par compare the two).
 *
 * Threads pay for themselves: none starts before the first member large enough, and a helper
 * serves any number of inputs (npzs_reset of its parser between them).  Memory follows what
 * arrives: a job's input grows piece by piece with its bytes (no allocation is larger than the
 * bytes received plus 64 KiB), its output is allocated once its input is whole (at most what
 * deflate can make of it: 1032 bytes a compressed byte) or, when it is no larger than the bytes
 * received plus 64 KiB (npzs_par_skip_data), at the member's first bytes, and the worker then
 * inflates the bytes as they arrive; everything held for the parser is bounded by max_held.  Memory is taken through the parser's hooks, only on the thread that calls
 * these functions (workers never allocate); it is not counted in npzs_memory() or max_memory.
 */
#ifndef NPZSTREAM_PAR_H
#define NPZSTREAM_PAR_H

#include "npzstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- worker pools (added in 0.6.0) ----
 * Threads that helpers share (zstd's ZSTD_createThreadPool is the model): a server that runs
 * many parsers makes one pool and gives it to each helper, so the threads are made once.  Its
 * threads start as the first jobs come (never more than `threads`, at most 64) and stop at
 * npzs_pool_free(), which is called after every helper using the pool was freed.  alloc may be
 * NULL (malloc).  NULL when threads is 0 or more than 64, or memory runs out. */
typedef struct npzs_pool npzs_pool;
npzs_pool *npzs_pool_new(unsigned threads, const npzs_allocator *alloc);
void npzs_pool_free(npzs_pool *pool);
unsigned npzs_pool_threads(const npzs_pool *pool); /* threads started so far */

/* ---- helpers ----
 * threads: worker threads of the helper's own pool (at most 64; 0 runs no worker: the helper
 * only passes bytes on).  The threads start with the first job (npzs_par_threads() counts them).
 * max_held: bytes the helper may hold for the parser at once (its raw bytes behind a member being
 * inflated, the jobs' compressed bytes and outputs): a member needs its compressed size +
 * uncompressed size + 1; a local header being read is held whatever the bound (and, with
 * npzs_par_skip_data, a 256 KiB scratch a worker).  Returns NULL when p is NULL or has a helper,
 * threads > 64, or memory runs out.  Without NPZS_LENIENT_FAST_INFLATE only: with it, ISA-L
 * inflates in the parser and the helper only passes bytes on.  Free the helper before its
 * parser. */
typedef struct npzs_par npzs_par;
npzs_par *npzs_par_new(npzs_parser *p, unsigned threads, uint64_t max_held);
/* The same over a shared pool (added in 0.6.0): the helper runs its jobs on the pool's threads,
 * at most as many at once as the pool has threads. */
npzs_par *npzs_par_new_pool(npzs_parser *p, npzs_pool *pool, uint64_t max_held);
/* npzs_next() through the helper: same arguments, results and events.  It may take bytes from
 * in ahead of the parser (copied: in's buffer is not kept, but with npzs_par_stable_input) and
 * return NPZS_NEED_INPUT once in is used up, also when events are still to come from bytes it
 * holds: push more, or call npzs_par_finish() at the end of the input; DATA events of stored
 * members may point into the helper's copy (valid until the next call, like a push's). */
int npzs_par_next_(npzs_par *q, npzs_in *in, npzs_event *ev, size_t ev_size);
#define npzs_par_next(q, in, ev) npzs_par_next_((q), (in), (ev), sizeof(npzs_event))
/* For validation, where the array bytes are not read (check, ls): clears DATA and BLOB from the
 * parser's events mask (npzs_events), and a worker keeps only a member's first bytes (preamble
 * and header) and the CRC-32 of the rest, so a member costs the helper its compressed size and a
 * few KiB, not its size.  Every other event, the verdict and every error stay those of the parser
 * alone (a member whose rest the parser cannot take as a whole, or whose DATA events are asked for
 * again, is inflated again by the parser).  Call before the first byte; it lasts until the
 * helper is freed.  Returns 0, NPZS_E_BAD_CALL after the first byte, or NPZS_E_NOMEM. */
int npzs_par_skip_data(npzs_par *q);
/* Stable input (added in 0.7.0; zstd's stableInBuffer is the model): the caller promises that
 * every byte it pushes through npzs_par_next() from now on stays where it is, unchanged and
 * readable, until the helper's parser is reset (npzs_par_reset, npzs_reset) or the helper freed --
 * also after the verdict, since workers may still be reading them.  The helper then holds the
 * bytes it takes ahead of the parser where they are: no copy, no memory for them (a job's
 * compressed bytes and the raw bytes before the barrier are pointers into the caller's), so a
 * caller that has the input in memory (a mapped file, a received buffer) pushes it at once and
 * the workers start on every member at once.  on: 1 to promise, at any point of an input (the
 * bytes pushed before were copied: a program may read a file and map the rest once a worker
 * started, as the command line does); 0 (the default) to copy, unless the helper holds bytes by
 * reference already.  It lasts until changed.  Returns 0, or NPZS_E_BAD_CALL for 0 once bytes
 * were held by reference (until a reset; the setting then unchanged). */
int npzs_par_stable_input(npzs_par *q, int on);
/* An array's data without a copy (added in 0.4.0): right after an array's HEADER event from
 * npzs_par_next(), before its first DATA event, when a worker inflated the member and kept its
 * whole output, that output becomes the caller's: *block is the start of an allocation made with
 * the parser's allocator hooks (release it with their free, or free() when they are NULL, once
 * done, and not before the member's MEMBER_END, an error, or the helper's reset or free), the
 * array's nbytes of data at (uint8_t *)*block + *offset.  The parser reads the data there as it
 * would have (its DATA events point into it; checks, CRC-32 and verdict unchanged), so a loader
 * that makes the array over the block has it with no copy.  Returns 0; 1 when the member has no
 * such output (the parser inflates it, a member of no data, skip_data, or the data's address not a
 * multiple of align, a power of two): use npzs_data_into() or the DATA events as usual; or
 * NPZS_E_BAD_CALL (sticky, rule CALL.par-take) anywhere else or a second time. */
int npzs_par_take_data(npzs_par *q, size_t align, void **block, uint64_t *offset);
/* The end of the input (instead of npzs_finish() on the parser). */
void npzs_par_finish(npzs_par *q);
/* A new input: npzs_reset() of the parser, which drops every job; the threads stay.  Since 0.6.0
 * npzs_reset(p) does the same (the helper stays attached). */
void npzs_par_reset(npzs_par *q);
/* Stop the helper's jobs and release it (and its own pool); the input it took beyond
 * npzs_consumed(p) goes with it.  The parser is left as it is, without a helper, except when it
 * was inside a member a worker inflated: it then fails (NPZS_E_BAD_CALL, rule CALL.par-free),
 * since that member's bytes went with the helper. */
void npzs_par_free(npzs_par *q);
uint64_t npzs_par_memory(const npzs_par *q);  /* bytes the helper holds now */
uint64_t npzs_par_used(const npzs_par *q);    /* members whose output came from a worker */
unsigned npzs_par_threads(const npzs_par *q); /* worker threads running for it now */

#ifdef __cplusplus
}
#endif
#endif /* NPZSTREAM_PAR_H */
