/*
 * par.c -- the parallel helper's orchestration (npzs_par_*; npzstream_par.h).
 *
 * The parser stays what it is: single-threaded, and the only judge of the input.  The helper
 * takes input ahead of it.  The scout (scout.c) reads the local headers in the bytes as they
 * arrive; the compressed bytes of a deflated member worth a worker are copied into a job, piece
 * by piece as they arrive, and the job goes to the pool (pool.c) as soon as its output may be
 * allocated (below): its worker inflates the bytes as they are published to it (with the
 * parser's decoder: the fast one of fastinf.c, whose output is zlib's, or zlib alone),
 * waiting when it catches up, while the parser is still behind.  The parser is held before such a
 * member's local header until its job is done, so the workers run ahead.  When the parser
 * reaches the member it asks for the job through the seam (seam.h, take): it takes the job's
 * output instead of inflating, but only when zlib ended the stream exactly at the member's last
 * compressed byte within the size the local header declares; then the bytes are those its own
 * zlib gives for the same input, in the same order.  For anything else (invalid data, a stream
 * that ends early or runs past its size, a member the scout did not see, a job the memory bound
 * did not allow) the parser inflates the member itself, as without the helper.  So the events,
 * the verdict and every error are the parser's own: npzs_par_next_ returns what npzs_next_ does.
 *
 * One push, in words: the caller's bytes go to take_input, where the scout reads a local header
 * in place (a member not worth a job: its bytes go on to the parser straight from the caller's
 * buffer, no copy) or holds it and the member's data for a job (held segments: copies, or with
 * stable input pointers into the caller's bytes, grown while they follow on); the loop then
 * feeds the parser, in stream order, every held byte before the barrier (the local header of the
 * first job not done) and the caller's bytes when nothing is held; the parser returns an event,
 * an error or NEED_INPUT, which goes back to the caller as it is.
 *
 * Memory: what the helper holds for the parser (raw bytes behind a held member, jobs' pieces
 * and outputs, and the cache) plus what its jobs may still allocate is bounded by max_held; a
 * member that does not fit is inflated by the parser.  A local header being read is held
 * whatever the bound (at most 30 + 2 * 65535 bytes).  No allocation is larger than the bytes
 * received plus a constant (PAR_PIECE0), but an output larger than that, which is made once its
 * input is whole (at most 1032 bytes a compressed byte): a job whose output is small (skip_data:
 * the .npy header) starts at its first bytes, any other once its input is whole.  Everything
 * is allocated through the parser's hooks, on the caller's thread only; workers never allocate.
 * With stable input (npzs_par_stable_input) the bytes taken are not copied: a job needs only its
 * output, and a held segment is its few words.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "../zip/fastinf.h"
#include "par.h"
#include "../base/rules.h"

#ifdef NPZS_INTERNAL_H
#error "the helper sees the parser through the seam (base/seam.h, par/seam.c): not its layout (internal.h)"
#endif

#define PAR_MIN_SIZE (1u << 20)    /* smaller members: the hand-off costs more than it saves */
#define PAR_SEG (256u * 1024u)     /* raw bytes are held in segments of this size */
#define PAR_PIECE0 (64u * 1024u)   /* a job's first piece; each next one at most its bytes so far */
#define PAR_PIECE_MAX (8u << 20)   /* and at most this */
#define PAR_SLICE (1u << 20)       /* a worker looks for a cancel between slices of output */
#define PAR_SCRATCH (256u * 1024u) /* skip_data: a worker's output after the kept bytes */
#define PAR_AHEAD \
    2u /* jobs not done, a worker: the scout waits beyond; 1 with
                                     * skip_data, where a job starts at its first bytes: the next
                                     * one starts as a worker ends, in the pieces the last gave back */

enum { J_FILLING, J_READY, J_QUEUED, J_RUNNING, J_DONE };

/* A worker's tools while it runs a job: made on the caller's thread, lent to one job at a time. */
typedef struct par_slot {
    struct par_slot *next; /* the free list */
    z_stream zs;           /* its window allocated: inflating never allocates */
    npzs__fastinf *fi;     /* the fast decoder (lends blocks to zs), NULL: zlib alone */
    uint8_t *scratch;      /* skip_data: where the output after the kept bytes goes */
} par_slot;

typedef struct par_job {
    npzs__task task; /* first: the pool runs it (job_run) */
    struct npzs_par *q;
    struct par_job *next;           /* stream order */
    uint64_t lfh_off, start, csize; /* start: offset of the first compressed byte */
    uint64_t out_cap;               /* usize + 1: zlib may make one byte more, then it is not clean */
    /* the compressed bytes, in pieces as they arrived */
    uint8_t **pc;
    size_t *pc_len, *pc_size;
    size_t npc, pc_slots;
    uint64_t filled;
    uint8_t *out; /* the first out_size bytes of the output (all of it but with skip_data) */
    size_t out_size;
    uint64_t promise; /* bytes of max_held still promised to it */
    npzs__pre pre;    /* what the parser takes */
    par_slot *slot;   /* while queued or running */
    int state;        /* J_*, under the lock */
    int clean;        /* zlib ended exactly at the last compressed byte */
    int cancel;       /* atomic: the parser passed it, stop */
    int released;     /* the parser is past its MEMBER_END (or failed) */
    int dead;         /* never to be inflated ahead (cut short, no memory) */
    int closed;       /* no more input comes: whole, or dead (under the lock) */
    int waiting;      /* its worker waits for input (under the lock) */
    int go;           /* job_ready was called (the caller's thread only) */
    unsigned nseg;    /* segments still pointing into its pieces */
    int given;        /* out is the caller's now (npzs_par_take_data) */
} par_job;

/* The bytes taken from the caller and not yet fed to the parser, in stream order. */
typedef struct par_seg {
    struct par_seg *next;
    uint64_t start; /* offset of its first byte */
    size_t len, cap, fed;
    par_job *job;  /* a piece of a job's compressed bytes, or NULL: raw bytes */
    int ref;       /* data points into the caller's bytes (stable input) */
    uint8_t *data; /* raw[], a job's piece, or the caller's bytes */
    uint8_t raw[];
} par_seg;

struct npzs_par {
    npzs_parser *p;
    npzs_pool *pool;
    int own_pool;
    par_bufs pb;
    uint64_t max_held, promised, segs_held;
    pthread_mutex_t mu; /* jobs' states, the slots' free list */
    pthread_cond_t cv_done;
    pthread_cond_t cv_more; /* a running job's input grew or closed, or it was cancelled */
    par_slot *free_slots;
    unsigned nslots;
    par_job *jobs, *jobs_tail; /* live jobs in stream order */
    unsigned inflight;         /* jobs ready, queued or running */
    par_seg *segs, *segs_tail;
    uint64_t taken;  /* input bytes taken from the caller (the next one's offset) */
    uint64_t passed; /* the parser passed the members ending at or before it */
    int ended, p_finished, forced;
    uint64_t used; /* jobs whose output the parser took */
    par_scout sc;
    par_job *sc_job;   /* SC_JOB: the job being filled */
    uint64_t min_size; /* PAR_MIN_SIZE; tests lower it to reach every member */
    int skip_data;     /* npzs_par_skip_data */
    int stable;        /* npzs_par_stable_input: the caller's bytes held where they are */
    int refs;          /* some were (until a reset): the promise cannot be taken back */
    uint64_t keep;     /* skip_data: output bytes a job keeps (header and preamble) */
};

/* ---- workers ----------------------------------------------------------------------------- */

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return npzs__pb_alloc(opaque, (size_t)items * size);
}
static void z_free(voidpf opaque, voidpf ptr) { npzs__pb_free(opaque, ptr); }

/* A slot for a job: a free one, or a new one while the helper has fewer than the pool's threads
 * (its zlib window allocated now, as its first output would, so that inflating never allocates).
 * NULL: every slot is lent out, or no memory.  Caller's thread, under the lock. */
static par_slot *slot_get(npzs_par *q) {
    par_slot *s = q->free_slots;
    if (s) {
        q->free_slots = s->next;
        return s;
    }
    if (q->nslots >= npzs__pool_size(q->pool)) return NULL;
    s = npzs__pb_alloc(&q->pb, sizeof *s);
    if (!s) return NULL;
    memset(s, 0, sizeof *s);
    s->zs.zalloc = z_alloc;
    s->zs.zfree = z_free;
    s->zs.opaque = &q->pb;
    static const Bytef none[1] = {0};
    if (inflateInit2(&s->zs, -15) != Z_OK) goto fail;
    if (inflateSetDictionary(&s->zs, none, 0) != Z_OK) goto fail_z;
    if (q->skip_data && !(s->scratch = npzs__pb_alloc(&q->pb, PAR_SCRATCH))) goto fail_z;
    if (!(npzs__seam_limits(q->p)->lenient & NPZS_INFLATE_ZLIB)) {
        if (!(s->fi = npzs__pb_alloc(&q->pb, npzs__fi_size()))) goto fail_z;
        npzs__fi_init(s->fi);
    }
    q->nslots++;
    return s;
fail_z:
    npzs__pb_free(&q->pb, s->scratch);
    inflateEnd(&s->zs);
fail:
    npzs__pb_free(&q->pb, s);
    return NULL;
}

static void slot_free(npzs_par *q, par_slot *s) {
    inflateEnd(&s->zs);
    npzs__pb_free(&q->pb, s->fi);
    npzs__pb_free(&q->pb, s->scratch);
    npzs__pb_free(&q->pb, s);
}

/* The next compressed bytes of a running job for its worker: *src and *len (the bytes of the
 * piece at *piece from *at that the caller's thread published); waits while none is there and
 * more may come.  1: bytes; 0: every byte was given (the input is closed); -1: cancelled.  A
 * worker's thread; the piece table is read only under the lock (the caller's thread grows it). */
static int job_input(par_job *j, size_t *piece, size_t *at, uint8_t **src, size_t *len) {
    npzs_par *q = j->q;
    int r;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        if (__atomic_load_n(&j->cancel, __ATOMIC_RELAXED)) {
            r = -1;
            break;
        }
        /* a piece followed by another is full: go on to the next */
        while (*piece + 1 < j->npc && *at == j->pc_len[*piece]) {
            ++*piece;
            *at = 0;
        }
        if (*piece < j->npc && *at < j->pc_len[*piece]) {
            *src = j->pc[*piece] + *at;
            *len = j->pc_len[*piece] - *at;
            r = 1;
            break;
        }
        if (j->closed) {
            r = 0;
            break;
        }
        j->waiting = 1;
        pthread_cond_wait(&q->cv_more, &q->mu);
        j->waiting = 0;
    }
    pthread_mutex_unlock(&q->mu);
    return r;
}

/* Inflate a job from its pieces as they arrive: its first out_size output bytes into out, the
 * rest (skip_data) into the scratch, only its CRC-32 kept.  A worker's thread, without the lock
 * but to take more input (job_input). */
static void job_inflate(par_job *j) {
    z_stream *zs = &j->slot->zs;
    npzs__fastinf *fi = j->slot->fi;
    uint8_t *scratch = j->slot->scratch;
    j->clean = 0;
    if (fi) npzs__fi_reset(fi);
    else if (inflateReset(zs) != Z_OK) return;
    uint64_t out_done = 0, in_done = 0, keep = j->out_size < j->out_cap ? j->out_size : j->out_cap;
    uint32_t crc = 0;
    size_t piece = 0, at = 0, left = 0;
    uint8_t *src = NULL;
    int more = 1, zr = Z_OK;
    while (zr == Z_OK) {
        if (__atomic_load_n(&j->cancel, __ATOMIC_RELAXED)) return;
        uint64_t room = j->out_cap - out_done;
        if (!room) return; /* more than the local header declares: the parser decides */
        if (!left && more) {
            int r = job_input(j, &piece, &at, &src, &left);
            if (r < 0) return;
            more = r > 0;
        }
        uint8_t *dst = out_done < keep ? j->out + out_done : scratch;
        uint64_t ao = out_done < keep ? keep - out_done : PAR_SCRATCH;
        if (!dst) return;
        if (ao > room) ao = room;
        if (ao > PAR_SLICE) ao = PAR_SLICE;
        uInt ai = (uInt)(left > 0x40000000u ? 0x40000000u : left);
        size_t used, made;
        if (fi) { /* zr in zlib's terms: Z_STREAM_END, Z_DATA_ERROR or Z_OK */
            size_t back;
            int fr = npzs__fi_run(fi, zs, src, ai, in_done + ai == j->csize, dst, (size_t)ao, &used, &made, &back);
            zr = fr == NPZS__FI_END ? Z_STREAM_END : fr == NPZS__FI_OK ? Z_OK : Z_DATA_ERROR;
            if (fr == NPZS__FI_END) in_done -= back; /* bytes taken past the stream's end */
        } else {
            zs->next_in = ai ? src : dst;
            zs->avail_in = ai;
            zs->next_out = dst;
            zs->avail_out = (uInt)ao;
            zr = inflate(zs, Z_NO_FLUSH);
            used = ai - zs->avail_in;
            made = (size_t)ao - zs->avail_out;
        }
        src += used;
        at += used;
        left -= used;
        in_done += used;
        if (dst == scratch) crc = npzs__crc32(crc, dst, made);
        out_done += made;
        if (zr == Z_BUF_ERROR || (zr == Z_OK && !made && !used)) {
            if (left || !more) return; /* the input ran out (or zlib cannot go on with it) */
            zr = Z_OK;                 /* all it was given is used: wait for more */
        }
    }
    j->pre.len = out_done;
    j->pre.keep = out_done < keep ? out_done : keep;
    j->pre.crc_rest = crc;
    j->clean = zr == Z_STREAM_END && in_done == j->csize;
}

static void job_submit(npzs_par *q, par_job *j, par_slot *s);

/* A slot is free again: the first job waiting for one (stream order) gets it.  Under the lock. */
static void slot_put(npzs_par *q, par_slot *s) {
    for (par_job *j = q->jobs; j; j = j->next)
        if (j->state == J_READY && !j->released) {
            job_submit(q, j, s);
            return;
        }
    s->next = q->free_slots;
    q->free_slots = s;
}

/* A job ends (run, cancelled, or never to run).  Under the lock. */
static void job_done(npzs_par *q, par_job *j) {
    if (j->state == J_READY || j->state == J_QUEUED || j->state == J_RUNNING) q->inflight--;
    j->state = J_DONE;
    pthread_cond_broadcast(&q->cv_done);
}

/* A job never to be inflated ahead (cut short, no memory, or the parser reached it first): its
 * input is closed and it ends, now or, when a worker has it, as soon as the worker sees it.
 * Under the lock. */
static void job_kill(npzs_par *q, par_job *j) {
    j->dead = 1;
    j->closed = 1;
    if (j->state == J_FILLING || j->state == J_READY) {
        job_done(q, j);
    } else if (j->state != J_DONE) {
        __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
        if (j->waiting) pthread_cond_broadcast(&q->cv_more);
    }
}

/* The pool's call, on a worker. */
static void job_run(npzs__task *t) {
    par_job *j = (par_job *)(void *)t;
    npzs_par *q = j->q;
    pthread_mutex_lock(&q->mu);
    j->state = J_RUNNING;
    pthread_mutex_unlock(&q->mu);
    job_inflate(j);
    pthread_mutex_lock(&q->mu);
    par_slot *s = j->slot;
    j->slot = NULL;
    job_done(q, j);
    slot_put(q, s);
    pthread_mutex_unlock(&q->mu);
}

/* Under the lock. */
static void job_submit(npzs_par *q, par_job *j, par_slot *s) {
    j->slot = s;
    j->state = J_QUEUED;
    j->task.run = job_run;
    if (npzs__pool_submit(q->pool, &j->task) < 0) { /* no thread could start: the parser inflates it */
        j->slot = NULL;
        j->dead = 1;
        job_done(q, j);
        s->next = q->free_slots;
        q->free_slots = s;
    }
}

/* ---- jobs -------------------------------------------------------------------------------- */

/* Bytes of max_held a job's allocation of n bytes uses up from its promise. */
static void charge(npzs_par *q, par_job *j, uint64_t n) {
    uint64_t c = n < j->promise ? n : j->promise;
    j->promise -= c;
    q->promised -= c;
}

static void job_free(npzs_par *q, par_job *j) {
    for (size_t i = 0; i < j->npc; i++)
        if (j->pc_size[i]) npzs__pb_put(&q->pb, j->pc[i], j->pc_size[i]); /* 0: the caller's bytes */
    if (!j->given) npzs__pb_put(&q->pb, j->out, j->out_size);
    q->promised -= j->promise;
    npzs__pb_free(&q->pb, j->pc);
    npzs__pb_free(&q->pb, j->pc_len);
    npzs__pb_free(&q->pb, j->pc_size);
    npzs__pb_free(&q->pb, j);
}

/* The seam's take: the parser asks for the job of the member whose compressed data starts at
 * `start` (inflate.c). */
static npzs__pre *par_take(void *ctx, uint64_t start, uint64_t csize) {
    npzs_par *q = ctx;
    par_job *j = q->jobs;
    while (j && !(j->start == start && j->csize == csize && !j->released)) j = j->next;
    if (!j) return NULL;
    pthread_mutex_lock(&q->mu);
    /* not started, or its input is still to come (the parser's thread would bring it): the
     * parser's now (a job filling is filled all the same: its pieces are the parser's input) */
    if (j->state == J_FILLING || j->state == J_READY || !j->closed) job_kill(q, j);
    while (j->state != J_DONE) pthread_cond_wait(&q->cv_done, &q->mu);
    pthread_mutex_unlock(&q->mu);
    if (!j->clean || j->dead) return NULL;
    j->pre.out = j->out;
    j->pre.given = 0;
    j->pre.in = (const uint8_t *const *)j->pc;
    j->pre.in_len = j->pc_len;
    j->pre.in_n = j->npc;
    j->pre.csize = j->csize;
    j->pre.zpos = j->pre.zout = 0;
    j->pre.zpiece = j->pre.zpiece_pos = 0;
    j->pre.z = 0;
    q->used++;
    return &j->pre;
}

/* Output bytes a job keeps: all, or with skip_data only the first (the .npy header). */
static uint64_t job_outn(const npzs_par *q, const par_job *j) {
    return q->skip_data && j->out_cap > q->keep ? q->keep : j->out_cap;
}

/* A job filling may start once its output is no larger than the bytes received plus
 * PAR_PIECE0 (with skip_data, at its first bytes), else once its input is whole. */
static int job_startable(const npzs_par *q, const par_job *j) {
    return j->filled == j->csize || job_outn(q, j) <= j->filled + PAR_PIECE0;
}

/* A job may start: its output is allocated, and it goes to a worker (or waits for a slot),
 * which inflates its bytes as they arrive.  No memory for the output: the parser inflates it. */
static void job_ready(npzs_par *q, par_job *j) {
    j->go = 1;
    pthread_mutex_lock(&q->mu);
    int dead = j->dead; /* the parser reached it first */
    pthread_mutex_unlock(&q->mu);
    if (dead) return;
    j->out = npzs__pb_get(&q->pb, (size_t)job_outn(q, j), &j->out_size);
    if (j->out) charge(q, j, j->out_size);
    pthread_mutex_lock(&q->mu);
    if (!j->out) {
        job_kill(q, j);
    } else {
        q->inflight++;
        j->state = J_READY;
        par_slot *s = slot_get(q);
        if (s) job_submit(q, j, s);
    }
    pthread_mutex_unlock(&q->mu);
}

/* Free the jobs the parser is done with; a running one is asked to stop and freed later. */
static void reap(npzs_par *q) {
    par_job **pp = &q->jobs, *last = NULL;
    pthread_mutex_lock(&q->mu);
    while (*pp) {
        par_job *j = *pp;
        if (j->released && j->state == J_READY) job_done(q, j);
        if (j->released && j->state == J_QUEUED && npzs__pool_cancel(q->pool, &j->task)) {
            par_slot *s = j->slot;
            j->slot = NULL;
            job_done(q, j);
            slot_put(q, s);
        }
        if (j->released && (j->state == J_QUEUED || j->state == J_RUNNING)) {
            __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
            if (j->waiting) pthread_cond_broadcast(&q->cv_more);
        }
        if (j->released && (j->state == J_DONE || j->state == J_FILLING) && !j->nseg && j != q->sc_job) {
            *pp = j->next;
            pthread_mutex_unlock(&q->mu);
            job_free(q, j);
            pthread_mutex_lock(&q->mu);
            continue;
        }
        last = j;
        pp = &j->next;
    }
    q->jobs_tail = last;
    pthread_mutex_unlock(&q->mu);
}

/* Wait until a job that runs or is queued ends; 0 when none does. */
static int wait_job(npzs_par *q) {
    pthread_mutex_lock(&q->mu);
    int busy = 0;
    for (par_job *j = q->jobs; j; j = j->next) busy |= j->state == J_QUEUED || j->state == J_RUNNING;
    if (busy) pthread_cond_wait(&q->cv_done, &q->mu);
    pthread_mutex_unlock(&q->mu);
    return busy;
}

/* ---- segments ---------------------------------------------------------------------------- */

static void seg_push(npzs_par *q, par_seg *s) {
    s->next = NULL;
    if (q->segs_tail) q->segs_tail->next = s;
    else q->segs = s;
    q->segs_tail = s;
}

/* What a raw segment counts in segs_held: its bytes, or its struct when they are the caller's. */
static size_t seg_held(const par_seg *s) { return s->ref ? sizeof *s : s->cap; }

static void seg_free(npzs_par *q, par_seg *s) {
    if (s->job) s->job->nseg--;
    else q->segs_held -= seg_held(s);
    npzs__pb_free(&q->pb, s);
}

/* Drop the segments the parser has been fed whole (none of their bytes is referenced any more:
 * events pointing into them were delivered before this call). */
static void drop_fed(npzs_par *q) {
    while (q->segs && q->segs->fed == q->segs->len && (q->segs->len == q->segs->cap || q->segs->next)) {
        par_seg *s = q->segs;
        q->segs = s->next;
        if (!q->segs) q->segs_tail = NULL;
        seg_free(q, s);
    }
}

static int all_fed(const npzs_par *q) {
    for (const par_seg *s = q->segs; s; s = s->next)
        if (s->fed < s->len) return 0;
    return 1;
}

/* What the helper holds and has promised. */
static uint64_t in_use(const npzs_par *q) { return q->pb.held + q->segs_held + q->promised; }

/* A new segment at the end of the list: sizeof + cap bytes, or the struct alone pointing at `at`
 * (a job's piece, or with ref the caller's bytes).  NULL: no memory. */
static par_seg *seg_new(npzs_par *q, size_t cap, par_job *job, const uint8_t *at, int ref) {
    par_seg *t = npzs__pb_alloc(&q->pb, sizeof *t + cap);
    if (!t) return NULL;
    memset(t, 0, sizeof *t);
    t->start = q->taken;
    t->cap = cap;
    t->job = job;
    t->data = at ? (uint8_t *)(uintptr_t)at : t->raw;
    t->ref = ref;
    q->refs |= ref;
    if (!job) q->segs_held += seg_held(t);
    seg_push(q, t);
    return t;
}

/* Stable input: n more of the caller's bytes in a segment that points at them. */
static void seg_grow(par_seg *t, size_t n) { t->len = t->cap = t->len + n; }

/* Stable input: the tail segment when it points into the caller's bytes, is job's (NULL: raw)
 * and the bytes at b follow its own in the stream and in memory, so it grows over them; else
 * NULL (a new segment). */
static par_seg *seg_follows(npzs_par *q, const par_job *job, const uint8_t *b) {
    par_seg *t = q->segs_tail;
    return t && t->ref && t->job == job && t->data + t->len == b && t->start + t->len == q->taken ? t : NULL;
}

/* Hold n raw bytes; exempt: a local header being read, hdr bytes of it still to come (not bounded,
 * a segment of that size).  Returns how many were held.  Stable input: held where they are (a
 * segment grows while the caller's bytes follow on). */
static size_t hold_raw(npzs_par *q, const uint8_t *b, size_t n, size_t hdr) {
    int exempt = hdr > 0;
    size_t done = 0;
    if (q->stable && n) {
        par_seg *t = seg_follows(q, NULL, b);
        if (!t && !exempt && (in_use(q) >= q->max_held || q->max_held - in_use(q) < sizeof *t)) return 0;
        if (!t && !(t = seg_new(q, 0, NULL, b, 1))) return 0;
        seg_grow(t, n);
        q->taken += n;
        return n;
    }
    while (done < n) {
        par_seg *t = q->segs_tail;
        /* a new segment also when bytes went to the parser straight since the last one was filled:
         * a segment's bytes are contiguous in the input */
        if (!t || t->job || t->len == t->cap || t->start + t->len != q->taken) {
            size_t cap = exempt ? (hdr < 64 ? 64 : hdr) : PAR_SEG;
            if (!exempt && (in_use(q) >= q->max_held || q->max_held - in_use(q) < cap)) break;
            if (!(t = seg_new(q, cap, NULL, NULL, 0))) break;
        }
        size_t k = t->cap - t->len;
        if (k > n - done) k = n - done;
        memcpy(t->raw + t->len, b + done, k);
        t->len += k;
        done += k;
        q->taken += k;
    }
    return done;
}

/* Room for one more piece in a job's table (a few words a piece): 0, or -1 (no memory). */
static int piece_room(npzs_par *q, par_job *j) {
    if (j->npc < j->pc_slots) return 0;
    size_t ns = j->pc_slots ? 2 * j->pc_slots : 8;
    uint8_t **pc = npzs__pb_alloc(&q->pb, ns * sizeof *pc);
    size_t *pl = npzs__pb_alloc(&q->pb, ns * sizeof *pl), *ps = npzs__pb_alloc(&q->pb, ns * sizeof *ps);
    if (!pc || !pl || !ps) {
        npzs__pb_free(&q->pb, pc);
        npzs__pb_free(&q->pb, pl);
        npzs__pb_free(&q->pb, ps);
        return -1;
    }
    if (j->npc) {
        memcpy(pc, j->pc, j->npc * sizeof *pc);
        memcpy(pl, j->pc_len, j->npc * sizeof *pl);
        memcpy(ps, j->pc_size, j->npc * sizeof *ps);
    }
    uint8_t **opc = j->pc;
    size_t *opl = j->pc_len, *ops = j->pc_size;
    pthread_mutex_lock(&q->mu); /* its worker reads the table under the lock */
    j->pc = pc;
    j->pc_len = pl;
    j->pc_size = ps;
    j->pc_slots = ns;
    pthread_mutex_unlock(&q->mu);
    npzs__pb_free(&q->pb, opc);
    npzs__pb_free(&q->pb, opl);
    npzs__pb_free(&q->pb, ops);
    return 0;
}

/* A new piece of a job at `piece` (size: its allocation, 0 for the caller's bytes), with its
 * segment (the piece, cap bytes; 0: grown as the caller's bytes follow).  NULL: no memory. */
static par_seg *piece_new(npzs_par *q, par_job *j, uint8_t *piece, size_t size, size_t cap) {
    par_seg *t = piece_room(q, j) < 0 ? NULL : seg_new(q, 0, j, piece, size == 0);
    if (!t) return NULL;
    t->cap = cap;
    j->nseg++;
    pthread_mutex_lock(&q->mu);
    j->pc[j->npc] = piece;
    j->pc_len[j->npc] = 0;
    j->pc_size[j->npc] = size;
    j->npc++;
    pthread_mutex_unlock(&q->mu);
    return t;
}

/* k more bytes of the job's last piece published to its worker. */
static void publish(npzs_par *q, par_job *j, size_t k) {
    q->taken += k;
    pthread_mutex_lock(&q->mu);
    j->pc_len[j->npc - 1] += k;
    j->filled += k;
    if (j->filled == j->csize) j->closed = 1;
    if (j->waiting) pthread_cond_broadcast(&q->cv_more);
    pthread_mutex_unlock(&q->mu);
}

/* Up to n bytes into the job being filled (n at most the bytes it still lacks).  Copied, a piece
 * at a time: a new piece holds at most as many bytes as the job has already (at least
 * PAR_PIECE0), so no allocation is larger than the bytes received plus PAR_PIECE0.  Stable
 * input: a piece is the caller's bytes, grown while they follow on.  Returns how many were taken
 * (0: no memory). */
static size_t job_fill(npzs_par *q, par_job *j, const uint8_t *b, size_t n) {
    if (q->stable) {
        par_seg *t = seg_follows(q, j, b);
        if (!n || (!t && !(t = piece_new(q, j, (uint8_t *)(uintptr_t)b, 0, 0)))) return 0;
        seg_grow(t, n);
        publish(q, j, n);
        return n;
    }
    size_t done = 0;
    while (done < n && j->filled < j->csize) {
        par_seg *t = q->segs_tail;
        if (!t || t->job != j || t->len == t->cap) {
            uint64_t want = j->filled < PAR_PIECE0 ? PAR_PIECE0 : j->filled;
            if (want > PAR_PIECE_MAX) want = PAR_PIECE_MAX;
            if (want > j->csize - j->filled) want = j->csize - j->filled;
            size_t size = 0;
            uint8_t *piece = npzs__pb_get(&q->pb, (size_t)want, &size);
            if (!piece) break;
            if (!(t = piece_new(q, j, piece, size, (size_t)want))) {
                npzs__pb_put(&q->pb, piece, size);
                break;
            }
            charge(q, j, size);
        }
        size_t k = t->cap - t->len;
        if (k > n - done) k = n - done;
        memcpy(t->data + t->len, b + done, k);
        t->len += k;
        done += k;
        publish(q, j, k);
    }
    return done;
}

/* ---- the scout's decisions ------------------------------------------------------------------ */

static void scout_next(npzs_par *q) { npzs__scout_reset(&q->sc); }

static void scout_skip(npzs_par *q, uint64_t left) {
    q->sc.left = left;
    npzs__scout_to(&q->sc, NPZS_SC_SKIP);
}

/* A job for the member whose header the scout classified SCOUT_JOB (held: its data follows),
 * when the memory bound and the jobs ahead allow it now (else SC_WAIT). */
static void job_start(npzs_par *q) {
    const npzs__zlfh *h = &q->sc.h;
    uint64_t outn = h->usize + 1;
    if (q->skip_data && outn > q->keep) outn = q->keep;
    uint64_t need = (q->stable ? 0 : h->csize) + outn; /* stable input: its bytes stay the caller's */
    if (need > q->max_held || need > SIZE_MAX / 2) {
        scout_skip(q, h->csize);
        return;
    }
    npzs__pb_evict(&q->pb, q->max_held, q->segs_held + q->promised + need);
    pthread_mutex_lock(&q->mu);
    unsigned ahead = q->inflight;
    pthread_mutex_unlock(&q->mu);
    if (in_use(q) > q->max_held - need || ahead >= (q->skip_data ? 1 : PAR_AHEAD) * npzs__pool_size(q->pool)) {
        npzs__scout_to(&q->sc, NPZS_SC_WAIT); /* until the parser or the workers free what they hold */
        return;
    }
    par_job *j = npzs__pb_alloc(&q->pb, sizeof *j);
    if (!j) { /* no memory: the parser inflates it */
        scout_skip(q, h->csize);
        return;
    }
    memset(j, 0, sizeof *j);
    j->q = q;
    j->lfh_off = q->sc.lfh;
    j->start = q->taken;
    j->csize = h->csize;
    j->out_cap = h->usize + 1;
    j->promise = need;
    q->promised += need;
    j->state = J_FILLING;
    pthread_mutex_lock(&q->mu);
    if (q->jobs_tail) q->jobs_tail->next = j;
    else q->jobs = j;
    q->jobs_tail = j;
    pthread_mutex_unlock(&q->mu);
    q->sc_job = j;
    q->sc.left = h->csize;
    npzs__scout_to(&q->sc, NPZS_SC_JOB);
}

/* A waiting decision: again now that memory may be free; with nothing left to free, the parser
 * inflates the member itself. */
static void scout_retry(npzs_par *q) {
    job_start(q);
    if (q->sc.st != NPZS_SC_WAIT) return;
    int busy = 0;
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next) busy |= !j->released || j->nseg || j->state == J_RUNNING;
    pthread_mutex_unlock(&q->mu);
    if (!busy) scout_skip(q, q->sc.h.csize);
}

static par_scout_cfg scout_cfg(const npzs_par *q) {
    par_scout_cfg c = {npzs__seam_limits(q->p), q->min_size, npzs_consumed(q->p), npzs__pool_size(q->pool) > 0};
    return c;
}

/* The header in the scout is whole, its extra field at x: what follows. */
static void scout_decided(npzs_par *q, const uint8_t *x) {
    par_scout_cfg cfg = scout_cfg(q);
    switch (npzs__scout_classify(&q->sc, x, &cfg)) {
    case SCOUT_JOB: job_start(q); break;
    case SCOUT_SKIP: scout_skip(q, q->sc.h.csize); break;
    default: npzs__scout_to(&q->sc, NPZS_SC_OFF); break;
    }
}

/* ---- taking input ------------------------------------------------------------------------ */

/* A local header whole in the caller's push, read where it lies: 0 when it is not whole (it
 * is staged), 1 when the scout went on, -1 when the rest of the push goes to the parser. */
static int scout_in_place(npzs_par *q, npzs_in *in, const uint8_t *b, size_t avail) {
    size_t k;
    int r = npzs__scout_peek(&q->sc, b, avail, q->taken, npzs__seam_limits(q->p));
    if (r < 0) {
        npzs__scout_to(&q->sc, NPZS_SC_OFF);
        return -1;
    }
    if (r == 0) return 0;
    par_scout_cfg cfg = scout_cfg(q);
    int kind = npzs__scout_classify(&q->sc, b + 30 + q->sc.h.f.name_len, &cfg);
    if (kind == SCOUT_OFF) {
        npzs__scout_to(&q->sc, NPZS_SC_OFF);
        return -1;
    }
    if (kind == SCOUT_SKIP) { /* header and data go to the parser straight */
        scout_skip(q, q->sc.hdr_len + q->sc.h.csize);
        return -1;
    }
    k = hold_raw(q, b, q->sc.hdr_len, q->sc.hdr_len);
    in->pos += k;
    if (k < q->sc.hdr_len) { /* no memory for a header: the parser reads it alone */
        scout_skip(q, q->sc.hdr_len - k + q->sc.h.csize);
        return 1;
    }
    job_start(q);
    return 1;
}

/* The next bytes of a local header (its fixed part, then exactly its name and extra field),
 * copied into the scout. */
static void scout_stage(npzs_par *q, npzs_in *in, const uint8_t *b, size_t avail) {
    size_t k = q->sc.st == NPZS_SC_HDR ? 30 - q->sc.have : q->sc.var_need - q->sc.var_len;
    k = hold_raw(q, b, avail < k ? avail : k, k);
    in->pos += k;
    if (!k) { /* no memory for a header: the parser reads it alone */
        npzs__scout_to(&q->sc, NPZS_SC_OFF);
        return;
    }
    npzs__scout_stage(&q->sc, &q->pb, b, k, q->taken - k, npzs__seam_limits(q->p));
    if (q->sc.st == NPZS_SC_VAR && q->sc.var_len == q->sc.var_need) scout_decided(q, q->sc.var + q->sc.h.f.name_len);
}

/* Take what the scout and the bound allow from in.  The bytes of a member the scout skips are
 * not taken while nothing waits for the parser: they go to it straight from the caller. */
static void take_input(npzs_par *q, npzs_in *in) {
    if (q->sc.st == NPZS_SC_WAIT) scout_retry(q);
    while (in && in->pos < in->size && q->sc.st != NPZS_SC_WAIT) {
        const uint8_t *b = (const uint8_t *)in->src + in->pos;
        size_t avail = in->size - in->pos, k;
        switch (q->sc.st) {
        case NPZS_SC_JOB: {
            par_job *j = q->sc_job;
            k = avail < j->csize - j->filled ? avail : (size_t)(j->csize - j->filled);
            k = job_fill(q, j, b, k);
            in->pos += k;
            if (!k) { /* no memory for a piece: the rest goes to the parser, which inflates it */
                q->sc_job = NULL;
                pthread_mutex_lock(&q->mu);
                job_kill(q, j);
                pthread_mutex_unlock(&q->mu);
                scout_skip(q, j->csize - j->filled);
                break;
            }
            if (!j->go && job_startable(q, j)) job_ready(q, j);
            if (j->filled == j->csize) {
                q->sc_job = NULL;
                scout_next(q);
            }
            break;
        }
        case NPZS_SC_HDR:
            if (q->sc.have == 0 && all_fed(q)) { /* the header whole in the push: read in place */
                int r = scout_in_place(q, in, b, avail);
                if (r < 0) return;
                if (r > 0) break;
            }
            scout_stage(q, in, b, avail); /* not whole in the push: staged, piece by piece */
            break;
        case NPZS_SC_VAR: /* exactly the header's bytes: what follows is the member's */
            scout_stage(q, in, b, avail);
            break;
        case NPZS_SC_SKIP:
        case NPZS_SC_OFF:
            if (all_fed(q)) return; /* straight to the parser */
            k = avail;
            if (q->sc.st == NPZS_SC_SKIP && k > q->sc.left) k = (size_t)q->sc.left;
            k = hold_raw(q, b, k, 0);
            in->pos += k;
            if (q->sc.st == NPZS_SC_SKIP && (q->sc.left -= k) == 0) scout_next(q);
            if (!k) return;
            break;
        default: return;
        }
    }
}

/* The first offset the parser must not be fed yet: the local header the scout reads, or that of
 * the first job not done (unless forced: the bound is reached or the input ended). */
static uint64_t barrier(npzs_par *q) {
    uint64_t b = UINT64_MAX;
    if (q->forced || q->ended) return b;
    if ((q->sc.st == NPZS_SC_HDR && q->sc.have) || q->sc.st == NPZS_SC_VAR || q->sc.st == NPZS_SC_WAIT) b = q->sc.lfh;
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next)
        if (!j->released && j->state != J_DONE) {
            if (j->lfh_off < b) b = j->lfh_off;
            break;
        }
    pthread_mutex_unlock(&q->mu);
    return b;
}

/* The input ended and every byte of it was taken: a job still filling is cut short (a truncated
 * member), never to be inflated ahead. */
static void cut_short(npzs_par *q) {
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next)
        if (!j->closed) job_kill(q, j);
    pthread_mutex_unlock(&q->mu);
    q->sc_job = NULL;
}

/* ---- the seam's notices ------------------------------------------------------------------ */

/* The parser is past every member ending at or before `end` (an error: all of them). */
static void par_passed(void *ctx, uint64_t end) {
    npzs_par *q = ctx;
    q->passed = end;
    for (par_job *j = q->jobs; j; j = j->next)
        if (end == UINT64_MAX || j->start + j->csize <= end) j->released = 1;
}

/* After the parser returned: the scout, if it lost its way (a data descriptor, a record it does
 * not read), starts again at the next local header when nothing after the member the parser
 * passed was taken yet. */
static void after_feed(npzs_par *q) {
    if (q->sc.st == NPZS_SC_OFF && q->passed == q->taken && q->passed != UINT64_MAX && !q->ended) scout_next(q);
}

/* Forget the input: every job stopped and freed, every held byte dropped. */
static void par_clear(npzs_par *q) {
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next) j->released = 1;
    pthread_mutex_unlock(&q->mu);
    q->sc_job = NULL;
    while (q->segs) {
        par_seg *s = q->segs;
        q->segs = s->next;
        seg_free(q, s);
    }
    q->segs_tail = NULL;
    for (;;) {
        reap(q);
        if (!q->jobs) break;
        (void)wait_job(q); /* a running job stops at its next slice */
    }
    q->taken = q->passed = 0;
    q->ended = q->p_finished = q->forced = q->refs = 0;
    scout_next(q);
}

static void par_reset_hook(void *ctx) {
    npzs_par *q = ctx;
    par_clear(q);
    q->used = 0;
}

/* ---- the API ----------------------------------------------------------------------------- */

/* The caller's npzs_next and npzs_finish on the parser (seam.h): the helper's own. */
static int par_next_hook(void *ctx, npzs_in *in, npzs_event *ev, size_t ev_size) {
    return npzs_par_next_(ctx, in, ev, ev_size);
}
static void par_finish_hook(void *ctx) { npzs_par_finish(ctx); }

static npzs_par *par_new(npzs_parser *p, npzs_pool *pool, int own, uint64_t max_held, const npzs_allocator *al) {
    npzs_par *q = al->alloc(al->opaque, sizeof *q);
    if (!q) return NULL;
    memset(q, 0, sizeof *q);
    q->p = p;
    q->pb.al = *al;
    q->pool = pool;
    q->own_pool = own;
    q->max_held = max_held;
    q->min_size = PAR_MIN_SIZE;
    if (pthread_mutex_init(&q->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&q->cv_done, NULL)) goto fail_cv;
    if (pthread_cond_init(&q->cv_more, NULL)) goto fail_more;
    npzs__seam seam = {q, par_take, par_passed, par_reset_hook, par_next_hook, par_finish_hook};
    if (npzs__seam_attach(p, &seam) < 0) goto fail_seam;
    scout_next(q);
    return q;
fail_seam:
    pthread_cond_destroy(&q->cv_more);
fail_more:
    pthread_cond_destroy(&q->cv_done);
fail_cv:
    pthread_mutex_destroy(&q->mu);
fail_mu:
    al->free(al->opaque, q);
    return NULL;
}

NPZS__API npzs_par *npzs_par_new(npzs_parser *p, unsigned threads, uint64_t max_held) {
    if (!p || threads > 64) return NULL;
    const npzs_allocator *al = npzs__seam_allocator(p);
    npzs_pool *pool = threads ? npzs_pool_new(threads, al) : NULL;
    if (threads && !pool) return NULL;
    npzs_par *q = par_new(p, pool, 1, max_held, al);
    if (!q) npzs_pool_free(pool);
    return q;
}

NPZS__API npzs_par *npzs_par_new_pool(npzs_parser *p, npzs_pool *pool, uint64_t max_held) {
    if (!p || !pool) return NULL;
    return par_new(p, pool, 0, max_held, npzs__seam_allocator(p));
}

NPZS__API void npzs_par_reset(npzs_par *q) {
    if (q) npzs_reset(q->p); /* which calls par_reset_hook */
}

NPZS__API void npzs_par_free(npzs_par *q) {
    if (!q) return;
    par_clear(q);
    npzs__seam_detach(q->p);
    while (q->free_slots) {
        par_slot *s = q->free_slots;
        q->free_slots = s->next;
        slot_free(q, s);
    }
    if (q->own_pool) npzs_pool_free(q->pool);
    npzs__pb_clear(&q->pb);
    npzs__scout_release(&q->sc, &q->pb);
    pthread_cond_destroy(&q->cv_more);
    pthread_cond_destroy(&q->cv_done);
    pthread_mutex_destroy(&q->mu);
    npzs_allocator al = q->pb.al;
    al.free(al.opaque, q);
}

NPZS__API void npzs_par_finish(npzs_par *q) {
    if (q) q->ended = 1;
}

/* The output of the member the parser reads, when a worker made it and kept it whole, becomes
 * the caller's: the array's data is read from it where it is (the DATA events point into it). */
NPZS__API int npzs_par_take_data(npzs_par *q, size_t align, void **block, uint64_t *offset) {
    if (!q) return NPZS_E_BAD_CALL;
    npzs_parser *p = q->p;
    if (!block || !offset || !align || (align & (align - 1))) return npzs__seam_bad_call(p, NPZS_R_CALL_ARG);
    if (npzs_error(p)) return npzs_error(p);
    npzs__pre *pre;
    uint64_t head;
    int at = npzs__seam_data_block(p, &pre, &head);
    if (at < 0) return npzs__seam_bad_call(p, NPZS_R_CALL_PAR_TAKE);
    if (at == 0) return 1; /* stored, the parser inflates it, or no data */
    par_job *j = (par_job *)(void *)((uint8_t *)pre - offsetof(par_job, pre));
    if (j->given) return npzs__seam_bad_call(p, NPZS_R_CALL_PAR_TAKE);
    if ((uintptr_t)(j->out + head) & (align - 1)) return 1;
    j->given = 1;
    q->pb.held -= j->out_size; /* not the helper's any more */
    *block = j->out;
    *offset = head;
    return 0;
}

NPZS__API int npzs_par_skip_data(npzs_par *q) {
    if (!q) return NPZS_E_BAD_CALL;
    if (q->skip_data) return 0; /* it lasts */
    if (q->taken) return NPZS_E_BAD_CALL;
    for (par_slot *s = q->free_slots; s; s = s->next) /* slots of an earlier input */
        if (!s->scratch && !(s->scratch = npzs__pb_alloc(&q->pb, PAR_SCRATCH))) return NPZS_E_NOMEM;
    uint64_t k = 12 + 4 * npzs__seam_limits(q->p)->max_header_size + 16; /* the largest preamble and header */
    q->keep = k < (16u << 20) ? k : (16u << 20);
    q->skip_data = 1;
    unsigned mask = npzs__seam_events(q->p) & ~(NPZS_EV_BIT(NPZS_EV_DATA) | NPZS_EV_BIT(NPZS_EV_BLOB));
    return npzs_events(q->p, mask);
}

NPZS__API int npzs_par_stable_input(npzs_par *q, int on) {
    if (!q) return NPZS_E_BAD_CALL;
    if (q->refs && !on) return NPZS_E_BAD_CALL; /* bytes are held by reference already */
    q->stable = on != 0;
    return 0;
}

#ifdef NPZS_TESTING
void npzs__par_keep(npzs_par *q, uint64_t n) { q->keep = n ? n : 1; }
void npzs__par_min_csize(npzs_par *q, uint64_t n) { q->min_size = n ? n : 1; }
uint32_t npzs__par_visited(const npzs_par *q) { return q->sc.visited; }
#endif

NPZS__API uint64_t npzs_par_memory(const npzs_par *q) { return q ? q->pb.held + q->segs_held : 0; }
NPZS__API uint64_t npzs_par_used(const npzs_par *q) { return q ? q->used : 0; }
NPZS__API unsigned npzs_par_threads(const npzs_par *q) { return q && q->pool ? npzs_pool_threads(q->pool) : 0; }

/* Feed the parser one span (from a segment or straight from the caller).  Returns its result. */
static int feed(npzs_par *q, const uint8_t *b, size_t n, size_t *used, npzs_event *ev, size_t ev_size) {
    npzs_in sub = {b, n, 0};
    int rc = npzs__seam_parse(q->p, &sub, ev, ev_size);
    *used = sub.pos;
    return rc;
}

/* The npzs_par_next macro's function, for bindings that cannot expand a macro (as npzs_next). */
#undef npzs_par_next
NPZS__API int npzs_par_next(npzs_par *q, npzs_in *in, npzs_event *ev) {
    return npzs_par_next_(q, in, ev, sizeof(npzs_event));
}

NPZS__API int npzs_par_next_(npzs_par *q, npzs_in *in, npzs_event *ev, size_t ev_size) {
    if (!q) return NPZS_E_BAD_CALL;
    npzs_parser *p = q->p;
    /* past the helper's part (a bad call, an error, all input fed): the parser alone */
    if ((in && (in->pos > in->size || (!in->src && in->size))) || npzs_error(p) || ev_size != sizeof(npzs_event) || !ev)
        return npzs__seam_parse(p, in, ev, ev_size);
    if (q->p_finished) return npzs__seam_parse(p, in, ev, ev_size);
    for (;;) {
        drop_fed(q);
        reap(q);
        take_input(q, in);
        if (q->ended && (!in || in->pos == in->size)) cut_short(q);
        uint64_t lim = barrier(q);
        par_seg *s = q->segs;
        while (s && s->fed == s->len) s = s->next;
        if (s && s->start + s->fed < lim) {
            size_t n = s->len - s->fed, used;
            if (lim - (s->start + s->fed) < n) n = (size_t)(lim - (s->start + s->fed));
            int rc = feed(q, s->data + s->fed, n, &used, ev, ev_size);
            s->fed += used;
            after_feed(q);
            if (rc != NPZS_NEED_INPUT) return rc;
            continue;
        }
        int st = q->sc.st, straight = !s && (st == NPZS_SC_SKIP || st == NPZS_SC_OFF);
        if (straight && in && in->pos < in->size) {
            size_t n = in->size - in->pos, used;
            if (st == NPZS_SC_SKIP && n > q->sc.left) n = (size_t)q->sc.left;
            int rc = feed(q, (const uint8_t *)in->src + in->pos, n, &used, ev, ev_size);
            in->pos += used;
            q->taken += used;
            if (st == NPZS_SC_SKIP && (q->sc.left -= used) == 0) scout_next(q);
            after_feed(q);
            if (rc != NPZS_NEED_INPUT) return rc;
            continue;
        }
        if (s) { /* bytes wait behind the barrier */
            if (!q->ended && in && in->pos < in->size && st != NPZS_SC_WAIT) {
                q->forced = 1; /* the bound is reached: feed through (the parser waits for its jobs) */
                continue;
            }
            if (st == NPZS_SC_WAIT) {
                scout_retry(q);
                if (q->sc.st == NPZS_SC_WAIT && !wait_job(q)) q->forced = 1;
                continue;
            }
            return NPZS_NEED_INPUT; /* the caller's bytes are all taken: more lets the workers run */
        }
        q->forced = 0;
        if (in && in->pos < in->size) continue; /* the scout has more to take */
        if (!q->ended) return NPZS_NEED_INPUT;
        npzs__seam_finish(p);
        q->p_finished = 1;
        return npzs__seam_parse(p, NULL, ev, ev_size);
    }
}
