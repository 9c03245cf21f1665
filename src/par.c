/*
 * par.c -- deflated members inflated ahead of the parser on worker threads (npzs_par_*).
 *
 * The parser stays what it is: single-threaded, and the only judge of the input.  The helper
 * takes input ahead of it.  A scout reads the local headers in the bytes as they arrive (with
 * the parser's own record decoders); the compressed bytes of a deflated member whose size the
 * local header gives are copied into a job, and a worker inflates the job with zlib while the
 * parser is still behind.  The parser is held before such a member's local header until the
 * job is done, so the workers run ahead.  When the parser reaches the member, it asks for the
 * job (inflate.c, pre_take): it takes the job's output instead of inflating, but only when
 * zlib ended the stream exactly at the member's last compressed byte within the size the local
 * header declares; then the bytes are those its own zlib gives for the same input, in the same
 * order.  For anything else (invalid data, a stream that ends early or runs past its size, a
 * member the scout did not see, a job the memory bound did not allow) the parser inflates the
 * member itself, as without the helper.  So the events, the verdict and every error are the
 * parser's own.
 *
 * Memory: the bytes held for the parser (raw bytes behind a held member, jobs' compressed
 * bytes and outputs) are bounded by max_held; a member that does not fit is inflated by the
 * parser.  A local header being read is held whatever the bound (at most 30 + 2 * 65535 bytes).
 * Everything is allocated through the parser's hooks, on the caller's thread only (the workers'
 * zlib states are made before they start); the parser's own memory and max_memory are unchanged.
 */
#define _DEFAULT_SOURCE /* madvise */
#include <pthread.h>
#include <sys/mman.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PAR_MIN_CSIZE (64u * 1024u) /* smaller members: the hand-off costs more than it saves */
#define PAR_SEG (256u * 1024u)      /* raw bytes are held in segments of this size (or larger) */
#define PAR_SLICE (1u << 20)        /* a worker looks for a cancel between slices of output */
#define PAR_CACHE 6                 /* jobs' buffers kept for reuse */
#define PAR_SCRATCH (256u * 1024u)  /* skip_data: a worker's output after the kept bytes */

enum { J_FILLING, J_QUEUED, J_RUNNING, J_DONE };
enum { SC_HDR, SC_VAR, SC_SKIP, SC_JOB, SC_OFF };

typedef struct par_job {
    struct par_job *next, *qnext; /* stream order; the work queue */
    uint64_t lfh_off, start, csize; /* start: offset of the first compressed byte */
    uint8_t *in;                    /* csize bytes, filled as they arrive */
    uint64_t filled;
    uint8_t *out;                   /* usize + 1 bytes: zlib's output */
    uint64_t out_cap;
    size_t in_size, out_size;       /* the buffers' sizes (a reused one may be larger) */
    npzs__pre pre;                  /* what the parser takes: out, len, given */
    int state;                      /* J_*, under the lock */
    int clean;                      /* zlib ended exactly at the last compressed byte */
    int cancel;                     /* atomic: the parser passed it, stop */
    int released;                   /* the parser is past its MEMBER_END (or failed) */
    int dead;                       /* never to be inflated (input ended before it filled) */
    int has_seg;                    /* its bytes are still in the queue of segments */
    int given;                      /* out is the caller's now (npzs_par_take_data) */
} par_job;

/* The bytes taken from the caller and not yet fed to the parser, in stream order. */
typedef struct par_seg {
    struct par_seg *next;
    uint64_t start;                 /* offset of its first byte */
    size_t len, cap, fed;
    par_job *job;                   /* a job's compressed bytes (job->in), or NULL: raw[] */
    uint8_t raw[];
} par_seg;

struct npzs_par {
    npzs_parser *p;
    npzs_allocator al;
    uint64_t max_held, held;
    pthread_mutex_t mu;             /* jobs' state and the work queue */
    pthread_cond_t cv_work, cv_done;
    struct par_worker *w;
    unsigned nth;
    int quit;
    par_job *jobs, *jobs_tail;      /* live jobs in stream order */
    par_job *work, *work_tail;      /* queued for a worker */
    par_seg *segs, *segs_tail;
    uint64_t taken;                 /* input bytes taken from the caller (the next one's offset) */
    int ended, p_finished, forced;
    uint64_t used;                  /* jobs whose output the parser took */
    /* the scout */
    int sc;                         /* SC_* */
    uint64_t sc_lfh;                /* offset of the local header being read (SC_HDR, SC_VAR) */
    uint8_t sc_fix[30];
    size_t sc_have;
    uint8_t *sc_var;                /* name and extra field */
    size_t sc_var_cap, sc_var_len, sc_var_need;
    npzs_zlfh sc_h;
    uint64_t sc_left;               /* SC_SKIP, SC_JOB: bytes of the member's data to come */
    int sc_paused;                  /* a job waits for memory */
    par_job *sc_job;
    uint64_t min_csize;             /* PAR_MIN_CSIZE; tests lower it to reach every member */
    int skip_data;                  /* npzs_par_skip_data */
    uint64_t keep;                  /* skip_data: output bytes a job keeps (header and preamble) */
    /* jobs' buffers kept for the next jobs: fresh pages cost the kernel's zeroing and faults
     * (a third of the time of a 2-worker run without it); counted in held */
    struct { uint8_t *b; size_t n; } cache[PAR_CACHE];
    unsigned ncache;
};

/* ---- memory ------------------------------------------------------------------------------ */

/* Every allocation is made on the caller's thread (the workers' zlib states and windows are
 * made before they start), so the hooks are never called from a worker. */
static void *par_alloc(npzs_par *q, size_t n) { return q->al.alloc(q->al.opaque, n ? n : 1); }
static void par_free_mem(npzs_par *q, void *ptr) {
    if (ptr) q->al.free(q->al.opaque, ptr);
}
static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return par_alloc(opaque, (size_t)items * size);
}
static void z_free(voidpf opaque, voidpf ptr) { par_free_mem(opaque, ptr); }

/* A worker's zlib state, its window allocated now (an empty dictionary makes zlib allocate it,
 * as its first output would), so that inflating never allocates. */
static int zs_make(npzs_par *q, z_stream *zs) {
    memset(zs, 0, sizeof *zs);
    zs->zalloc = z_alloc;
    zs->zfree = z_free;
    zs->opaque = q;
    if (inflateInit2(zs, -15) != Z_OK) return -1;
    static const Bytef none[1] = {0};
    if (inflateSetDictionary(zs, none, 0) != Z_OK) {
        inflateEnd(zs);
        return -1;
    }
    return 0;
}

/* ---- workers ----------------------------------------------------------------------------- */

typedef struct par_worker {
    struct npzs_par *q;
    z_stream zs;
    pthread_t th;
    uint8_t *scratch;               /* npzs_par_skip_data: where the bytes after the kept ones go */
} par_worker;

/* Inflate a job: its first `keep` output bytes into out, the rest (skip_data) into the scratch,
 * only its CRC-32 kept. */
static void run_job(par_worker *w, par_job *j) {
    z_stream *zs = &w->zs;
    j->clean = 0;
    if (inflateReset(zs) != Z_OK) return;
    uint64_t in_left = j->csize, out_done = 0, keep = j->out_size < j->out_cap ? j->out_size : j->out_cap;
    uint32_t crc = 0;
    const uint8_t *src = j->in;
    int zr = Z_OK;
    while (zr == Z_OK) {
        if (__atomic_load_n(&j->cancel, __ATOMIC_RELAXED)) return;
        uint64_t room = j->out_cap - out_done;
        if (!room) return; /* more than the local header declares: the parser decides */
        uint8_t *dst = out_done < keep ? j->out + out_done : w->scratch;
        uint64_t ao = out_done < keep ? keep - out_done : PAR_SCRATCH;
        if (!dst) return;
        if (ao > room) ao = room;
        if (ao > PAR_SLICE) ao = PAR_SLICE;
        uInt ai = (uInt)(in_left > 0x40000000u ? 0x40000000u : in_left);
        zs->next_in = (Bytef *)(uintptr_t)src;
        zs->avail_in = ai;
        zs->next_out = dst;
        zs->avail_out = (uInt)ao;
        zr = inflate(zs, Z_NO_FLUSH);
        src += ai - zs->avail_in;
        in_left -= ai - zs->avail_in;
        size_t made = (size_t)ao - zs->avail_out;
        if (dst == w->scratch) crc = npzs__crc32(crc, dst, made);
        out_done += made;
    }
    j->pre.len = out_done;
    j->pre.keep = out_done < keep ? out_done : keep;
    j->pre.crc_rest = crc;
    j->clean = zr == Z_STREAM_END && in_left == 0;
}

static void *worker(void *arg) {
    par_worker *w = arg;
    npzs_par *q = w->q;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        while (!q->quit && !q->work) pthread_cond_wait(&q->cv_work, &q->mu);
        if (q->quit) break;
        par_job *j = q->work;
        q->work = j->qnext;
        if (!q->work) q->work_tail = NULL;
        j->state = J_RUNNING;
        pthread_mutex_unlock(&q->mu);
        run_job(w, j);
        pthread_mutex_lock(&q->mu);
        j->state = J_DONE;
        pthread_cond_broadcast(&q->cv_done);
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

/* ---- jobs -------------------------------------------------------------------------------- */

/* Large buffers are filled once, sequentially, right after they are allocated: on Linux they ask
 * for transparent huge pages (only the whole 2 MiB pages inside them), which makes the first
 * touch of a 20 MB job one fault in 512: the faults were most of the reading thread's time in
 * the bench (bench/README.md).  Elsewhere, or for memory that is not anonymous, it is nothing. */
static void huge(uint8_t *b, size_t n) {
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    const uintptr_t pg = (uintptr_t)2 << 20;
    uintptr_t a = ((uintptr_t)b + pg - 1) & ~(pg - 1), e = ((uintptr_t)b + n) & ~(pg - 1);
    if (n >= (8u << 20) && e > a) (void)madvise((void *)a, e - a, MADV_HUGEPAGE);
#else
    (void)b;
    (void)n;
#endif
}

/* A buffer of at least n bytes: a kept one not more than twice as large, else a new one (counted
 * in held either way). */
static uint8_t *buf_get(npzs_par *q, size_t n, size_t *size) {
    for (unsigned i = 0; i < q->ncache; i++)
        if (q->cache[i].n >= n && q->cache[i].n / 2 <= n) {
            uint8_t *b = q->cache[i].b;
            *size = q->cache[i].n;
            q->cache[i] = q->cache[--q->ncache];
            return b;
        }
    uint8_t *b = par_alloc(q, n);
    if (b) {
        *size = n;
        q->held += n;
        huge(b, n);
    }
    return b;
}

/* Keep a buffer for later jobs, or free it (the smallest goes when all places are taken). */
static void buf_put(npzs_par *q, uint8_t *b, size_t n) {
    if (!b) return;
    if (q->ncache == PAR_CACHE) {
        unsigned k = 0;
        for (unsigned i = 1; i < q->ncache; i++)
            if (q->cache[i].n < q->cache[k].n) k = i;
        if (q->cache[k].n > n) {
            q->held -= n;
            par_free_mem(q, b);
            return;
        }
        q->held -= q->cache[k].n;
        par_free_mem(q, q->cache[k].b);
        q->cache[k] = q->cache[--q->ncache];
    }
    q->cache[q->ncache].b = b;
    q->cache[q->ncache].n = n;
    q->ncache++;
}

/* Free kept buffers until `need` more bytes fit in the bound (or none is left). */
static void buf_evict(npzs_par *q, uint64_t need) {
    while (q->ncache && q->held > q->max_held - need) {
        q->ncache--;
        q->held -= q->cache[q->ncache].n;
        par_free_mem(q, q->cache[q->ncache].b);
    }
}

static void job_free(npzs_par *q, par_job *j) {
    buf_put(q, j->in, j->in_size);
    if (!j->given) buf_put(q, j->out, j->out_size);
    par_free_mem(q, j);
}

/* The parser asks for the job of the member whose compressed data starts at `start` (inflate.c). */
static npzs__pre *pre_take(void *ctx, uint64_t start, uint64_t csize) {
    npzs_par *q = ctx;
    par_job *j = q->jobs;
    while (j && !(j->start == start && j->csize == csize && !j->released)) j = j->next;
    if (!j) return NULL;
    pthread_mutex_lock(&q->mu);
    if (j->state == J_FILLING) { /* cannot be inflated ahead any more: its bytes are the parser's */
        j->dead = 1;
        j->state = J_DONE;
    }
    while (j->state != J_DONE) pthread_cond_wait(&q->cv_done, &q->mu);
    pthread_mutex_unlock(&q->mu);
    if (!j->clean) return NULL;
    j->pre.out = j->out;
    j->pre.given = 0;
    j->pre.in = j->in;
    j->pre.csize = j->csize;
    j->pre.zpos = j->pre.zout = 0;
    j->pre.z = 0;
    q->used++;
    return &j->pre;
}

static void job_queue(npzs_par *q, par_job *j) {
    pthread_mutex_lock(&q->mu);
    if (j->dead) {
        j->state = J_DONE;
    } else {
        j->state = J_QUEUED;
        j->qnext = NULL;
        if (q->work_tail) q->work_tail->qnext = j;
        else q->work = j;
        q->work_tail = j;
        pthread_cond_signal(&q->cv_work);
    }
    pthread_mutex_unlock(&q->mu);
}

/* Free the jobs the parser is done with; a running one is asked to stop and freed later. */
static void reap(npzs_par *q) {
    par_job **pp = &q->jobs, *last = NULL;
    pthread_mutex_lock(&q->mu);
    while (*pp) {
        par_job *j = *pp;
        if (j->released && j->state == J_QUEUED) { /* out of the work queue */
            par_job **w = &q->work, *prev = NULL;
            while (*w != j) { prev = *w; w = &(*w)->qnext; }
            *w = j->qnext;
            if (q->work_tail == j) q->work_tail = prev;
            j->state = J_DONE;
        }
        if (j->released && j->state == J_RUNNING) __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
        if (j->released && (j->state == J_DONE || j->state == J_FILLING) && !j->has_seg) {
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

/* ---- segments ---------------------------------------------------------------------------- */

static void seg_push(npzs_par *q, par_seg *s) {
    s->next = NULL;
    if (q->segs_tail) q->segs_tail->next = s;
    else q->segs = s;
    q->segs_tail = s;
}

/* Drop the segments the parser has been fed whole (none of their bytes is referenced any more:
 * events pointing into them were delivered before this call). */
static void drop_fed(npzs_par *q) {
    while (q->segs && q->segs->fed == q->segs->len && (q->segs->len == q->segs->cap || q->segs->next)) {
        par_seg *s = q->segs;
        q->segs = s->next;
        if (!q->segs) q->segs_tail = NULL;
        if (s->job) s->job->has_seg = 0;
        else q->held -= s->cap;
        par_free_mem(q, s);
    }
}

static int all_fed(const npzs_par *q) {
    for (const par_seg *s = q->segs; s; s = s->next)
        if (s->fed < s->len) return 0;
    return 1;
}

/* Hold n raw bytes; exempt: a local header being read.  Returns how many were held. */
static size_t hold_raw(npzs_par *q, const uint8_t *b, size_t n, int exempt) {
    size_t done = 0;
    while (done < n) {
        par_seg *t = q->segs_tail;
        /* a new segment also when bytes went to the parser straight since the last one was filled:
         * a segment's bytes are contiguous in the input */
        if (!t || t->job || t->len == t->cap || t->start + t->len != q->taken) {
            size_t cap = exempt ? 4096 : PAR_SEG;
            if (!exempt && (q->held >= q->max_held || q->max_held - q->held < cap)) break;
            t = par_alloc(q, sizeof *t + cap);
            if (!t) break;
            memset(t, 0, sizeof *t);
            t->start = q->taken;
            t->cap = cap;
            q->held += cap;
            seg_push(q, t);
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

/* ---- the scout --------------------------------------------------------------------------- */

/* The header at sc_lfh is read whole: decide what its member's data is. */
static void scout_decide(npzs_par *q) {
    npzs_zlfh *h = &q->sc_h;
    npzs_zerr e;
    const uint8_t *z;
    size_t zl;
    const uint8_t *x = q->sc_var + h->f.name_len;
    q->sc_paused = 0;
    if (npzs__zr_extra(x, h->f.extra_len, 1, &z, &zl, &e) < 0 || npzs__zr_lfh_sizes(h, z, zl, &e) < 0 || !h->known) {
        q->sc = SC_OFF; /* the parser will say what it is; the scout picks up after its MEMBER_END */
        return;
    }
    q->sc_left = h->csize;
    q->sc = SC_SKIP;
    if (h->f.method != NPZS_METHOD_DEFLATED || h->csize < q->min_csize || !q->nth ||
        (q->p->lim.lenient & NPZS_LENIENT_FAST_INFLATE) || npzs_consumed(q->p) > q->sc_lfh || h->usize >= UINT64_MAX - h->csize)
        return;
    uint64_t outn = h->usize + 1; /* skip_data: only the first bytes (the .npy header) are kept */
    if (q->skip_data && outn > q->keep) outn = q->keep;
    uint64_t need = h->csize + outn;
    if (need > q->max_held || need > SIZE_MAX / 2) return;
    buf_evict(q, need);
    if (q->held > q->max_held - need) { /* wait until the parser frees what it holds */
        q->sc_paused = 1;
        q->sc = SC_VAR;
        return;
    }
    par_job *j = par_alloc(q, sizeof *j);
    par_seg *s = j ? par_alloc(q, sizeof *s) : NULL;
    if (j) memset(j, 0, sizeof *j);
    if (j && s) {
        j->in = buf_get(q, (size_t)h->csize, &j->in_size);
        j->out = j->in ? buf_get(q, (size_t)outn, &j->out_size) : NULL;
    }
    if (!j || !s || !j->out) { /* no memory: the parser inflates it */
        if (j) { buf_put(q, j->in, j->in_size); par_free_mem(q, j); }
        par_free_mem(q, s);
        return;
    }
    j->lfh_off = q->sc_lfh;
    j->start = q->taken;
    j->csize = h->csize;
    j->out_cap = h->usize + 1;
    j->state = J_FILLING;
    j->has_seg = 1;
    memset(s, 0, sizeof *s);
    s->start = q->taken;
    s->cap = (size_t)h->csize;
    s->job = j;
    seg_push(q, s);
    pthread_mutex_lock(&q->mu);
    j->next = NULL;
    if (q->jobs_tail) q->jobs_tail->next = j;
    else q->jobs = j;
    q->jobs_tail = j;
    pthread_mutex_unlock(&q->mu);
    q->sc_job = j;
    q->sc = SC_JOB;
}

/* A paused decision: retry now that memory may be free; with nothing left to free, the parser
 * inflates the member itself. */
static void scout_retry(npzs_par *q) {
    scout_decide(q);
    if (!q->sc_paused) return;
    int busy = 0;
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next) busy |= !j->released || j->has_seg || j->state == J_RUNNING;
    pthread_mutex_unlock(&q->mu);
    if (busy) return;
    q->sc_paused = 0;
    q->sc = SC_SKIP;
    q->sc_left = q->sc_h.csize;
}

/* Bytes of a local header as they arrive (held already); the scout stops (SC_OFF) at anything
 * that is not a local header it can read. */
static void scout_header(npzs_par *q, const uint8_t *b, size_t n) {
    size_t i = 0;
    while (i < n && (q->sc == SC_HDR || q->sc == SC_VAR) && !q->sc_paused) {
        if (q->sc == SC_HDR) {
            if (q->sc_have == 0) q->sc_lfh = q->taken - n + i;
            size_t k = 30 - q->sc_have;
            if (k > n - i) k = n - i;
            memcpy(q->sc_fix + q->sc_have, b + i, k);
            q->sc_have += k;
            i += k;
            if (q->sc_have < 4 && memcmp(q->sc_fix, "PK\3\4", q->sc_have)) { q->sc = SC_OFF; return; }
            if (q->sc_have < 30) continue;
            npzs_zerr e;
            if (memcmp(q->sc_fix, "PK\3\4", 4) || npzs__zr_lfh(q->sc_fix, &q->p->lim, &q->sc_h, &e) < 0) {
                q->sc = SC_OFF;
                return;
            }
            q->sc_var_need = (size_t)q->sc_h.f.name_len + q->sc_h.f.extra_len;
            q->sc_var_len = 0;
            if (q->sc_var_need > q->sc_var_cap) {
                par_free_mem(q, q->sc_var);
                q->sc_var = par_alloc(q, q->sc_var_need);
                q->sc_var_cap = q->sc_var ? q->sc_var_need : 0;
                if (!q->sc_var) { q->sc = SC_OFF; return; }
            }
            q->sc = SC_VAR;
        }
        size_t k = q->sc_var_need - q->sc_var_len;
        if (k > n - i) k = n - i;
        memcpy(q->sc_var + q->sc_var_len, b + i, k);
        q->sc_var_len += k;
        i += k;
        if (q->sc_var_len == q->sc_var_need) scout_decide(q);
    }
}

/* The member's data was seen (SC_SKIP, SC_JOB): the next local header follows. */
static void scout_member_done(npzs_par *q) {
    q->sc = SC_HDR;
    q->sc_have = 0;
}

/* ---- taking input ------------------------------------------------------------------------ */

/* Take what the scout and the bound allow from in.  The bytes of a member the scout skips are
 * not taken while nothing waits for the parser: they go to it straight from the caller. */
static void take_input(npzs_par *q, npzs_in *in) {
    if (q->sc_paused) scout_retry(q);
    while (in && in->pos < in->size && !q->sc_paused) {
        const uint8_t *b = (const uint8_t *)in->src + in->pos;
        size_t avail = in->size - in->pos, k;
        switch (q->sc) {
        case SC_JOB: {
            par_job *j = q->sc_job;
            k = avail < j->csize - j->filled ? avail : (size_t)(j->csize - j->filled);
            memcpy(j->in + j->filled, b, k);
            j->filled += k;
            q->segs_tail->len += k; /* the job's segment is the newest */
            q->taken += k;
            in->pos += k;
            if (j->filled == j->csize) {
                job_queue(q, j);
                q->sc_job = NULL;
                scout_member_done(q);
            }
            break;
        }
        case SC_HDR:
        case SC_VAR: /* exactly the header's bytes: what follows is the member's */
            k = q->sc == SC_HDR ? 30 - q->sc_have : q->sc_var_need - q->sc_var_len;
            k = hold_raw(q, b, avail < k ? avail : k, 1);
            in->pos += k;
            scout_header(q, b, k);
            if (!k) q->sc = SC_OFF; /* no memory for a header: the parser reads it alone */
            break;
        case SC_SKIP:
        case SC_OFF:
            if (all_fed(q)) return; /* straight to the parser */
            k = avail;
            if (q->sc == SC_SKIP && k > q->sc_left) k = (size_t)q->sc_left;
            k = hold_raw(q, b, k, 0);
            in->pos += k;
            if (q->sc == SC_SKIP && (q->sc_left -= k) == 0) scout_member_done(q);
            if (!k) return;
            break;
        }
    }
}

/* The first offset the parser must not be fed yet: the local header the scout reads, or that of
 * the first job not done (unless forced: the bound is reached or the input ended). */
static uint64_t barrier(npzs_par *q) {
    uint64_t b = UINT64_MAX;
    if (q->forced || q->ended) return b;
    if ((q->sc == SC_HDR && q->sc_have) || q->sc == SC_VAR) b = q->sc_lfh;
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next)
        if (!j->released && j->state != J_DONE) {
            if (j->lfh_off < b) b = j->lfh_off;
            break;
        }
    pthread_mutex_unlock(&q->mu);
    return b;
}

/* An event of the parser passes: MEMBER_END releases the jobs up to its end; the scout, if it
 * lost its way (a data descriptor, an unknown record), starts again at the next local header
 * when nothing after it was taken yet. */
static void on_event(npzs_par *q, const npzs_event *ev) {
    if (ev->type != NPZS_EV_MEMBER_END) return;
    for (par_job *j = q->jobs; j; j = j->next)
        if (j->start + j->csize <= ev->offset) j->released = 1;
    if (q->sc == SC_OFF && q->taken == ev->offset && !q->ended) scout_member_done(q);
}

/* ---- the API ----------------------------------------------------------------------------- */

NPZS__API npzs_par *npzs_par_new(npzs_parser *p, unsigned threads, uint64_t max_held) {
    if (!p || p->pre_take || threads > 64) return NULL;
    npzs_par *q = p->al.alloc(p->al.opaque, sizeof *q);
    if (!q) return NULL;
    memset(q, 0, sizeof *q);
    q->p = p;
    q->al = p->al;
    q->max_held = max_held;
    q->min_csize = PAR_MIN_CSIZE;
    if (pthread_mutex_init(&q->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&q->cv_work, NULL)) goto fail_work;
    if (pthread_cond_init(&q->cv_done, NULL)) goto fail_done;
    q->w = threads ? par_alloc(q, threads * sizeof *q->w) : NULL;
    for (unsigned i = 0; q->w && i < threads; i++) {
        par_worker *w = &q->w[i];
        w->q = q;
        w->scratch = NULL;
        if (zs_make(q, &w->zs) < 0) break;
        if (pthread_create(&w->th, NULL, worker, w)) {
            inflateEnd(&w->zs);
            break;
        }
        q->nth++;
    }
    p->pre_take = pre_take;
    p->pre_ctx = q;
    p->ev_helper = NPZS_EV_BIT(NPZS_EV_MEMBER_END); /* on_event releases the jobs at each member's end */
    p->ev_emit = p->ev_user | p->ev_helper;
    q->sc = SC_HDR;
    return q;
fail_done:
    pthread_cond_destroy(&q->cv_work);
fail_work:
    pthread_mutex_destroy(&q->mu);
fail_mu:
    p->al.free(p->al.opaque, q);
    return NULL;
}

/* Forget the input: every job stopped and freed, every held byte dropped. */
static void par_clear(npzs_par *q) {
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next) {
        j->released = 1;
        if (j->state == J_RUNNING) __atomic_store_n(&j->cancel, 1, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&q->mu);
    while (q->segs) {
        par_seg *s = q->segs;
        q->segs = s->next;
        if (s->job) s->job->has_seg = 0;
        else q->held -= s->cap;
        par_free_mem(q, s);
    }
    q->segs_tail = NULL;
    for (;;) {
        reap(q);
        if (!q->jobs) break;
        /* a running job stops at its next slice; whether one still runs is asked under the lock
         * the worker signals under, so its end cannot pass unseen */
        pthread_mutex_lock(&q->mu);
        int running = 0;
        for (par_job *j = q->jobs; j; j = j->next) running |= j->state == J_RUNNING;
        if (running) pthread_cond_wait(&q->cv_done, &q->mu);
        pthread_mutex_unlock(&q->mu);
    }
    q->taken = 0;
    q->ended = q->p_finished = q->forced = 0;
    q->sc = SC_HDR;
    q->sc_have = 0;
    q->sc_paused = 0;
    q->sc_job = NULL;
}

NPZS__API void npzs_par_reset(npzs_par *q) {
    if (!q) return;
    par_clear(q);
    npzs_reset(q->p);
    q->p->pre_take = pre_take;
    q->p->pre_ctx = q;
    q->used = 0;
}

NPZS__API void npzs_par_free(npzs_par *q) {
    if (!q) return;
    par_clear(q);
    pthread_mutex_lock(&q->mu);
    q->quit = 1;
    pthread_cond_broadcast(&q->cv_work);
    pthread_mutex_unlock(&q->mu);
    for (unsigned i = 0; i < q->nth; i++) {
        pthread_join(q->w[i].th, NULL);
        inflateEnd(&q->w[i].zs);
        par_free_mem(q, q->w[i].scratch);
    }
    buf_evict(q, q->max_held);
    while (q->ncache) { /* a bound of 0 */
        q->ncache--;
        q->held -= q->cache[q->ncache].n;
        par_free_mem(q, q->cache[q->ncache].b);
    }
    par_free_mem(q, q->w);
    par_free_mem(q, q->sc_var);
    pthread_cond_destroy(&q->cv_done);
    pthread_cond_destroy(&q->cv_work);
    pthread_mutex_destroy(&q->mu);
    npzs_parser *p = q->p;
    p->pre_take = NULL;
    p->pre_ctx = NULL;
    p->ev_helper = 0;
    p->ev_emit = p->ev_user;
    if (p->inf.pre && p->state == NPZS_S_ZIP_DEFLATED) /* its bytes were the job's: gone now */
        npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_PAR_FREE);
    p->inf.pre = NULL;
    npzs_allocator al = q->al;
    al.free(al.opaque, q);
}

NPZS__API void npzs_par_finish(npzs_par *q) {
    if (q) q->ended = 1;
}

/* The input ended and every byte of it was taken: a job still filling is cut short (a truncated
 * member), never to be inflated ahead. */
static void cut_short(npzs_par *q) {
    pthread_mutex_lock(&q->mu);
    for (par_job *j = q->jobs; j; j = j->next)
        if (j->state == J_FILLING) {
            j->dead = 1;
            j->state = J_DONE;
        }
    pthread_mutex_unlock(&q->mu);
}

/* The output of the member the parser reads, when a worker made it and kept it whole, becomes
 * the caller's: the array's data is read from it where it is (the DATA events point into it). */
NPZS__API int npzs_par_take_data(npzs_par *q, size_t align, void **block, uint64_t *offset) {
    if (!q) return NPZS_E_BAD_CALL;
    if (!block || !offset || !align || (align & (align - 1)))
        return npzs__fail(q->p, NPZS_E_BAD_CALL, npzs__here(q->p), NPZS_R_CALL_ARG);
    npzs_parser *p = q->p;
    if (p->err) return p->err;
    const npzs_content *c = &p->c;
    npzs__pre *pre = p->inf.pre;
    /* right after an array's HEADER, as npzs_data_into, and not after it */
    if (!npzs__content_at_data(p) || c->out) return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_PAR_TAKE);
    if (p->state != NPZS_S_ZIP_DEFLATED || !pre || pre->z || pre->keep != pre->len || !c->info.nbytes)
        return 1; /* stored, the parser inflates it, or no data */
    par_job *j = (par_job *)(void *)((uint8_t *)pre - offsetof(par_job, pre));
    if (j->given) return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_PAR_TAKE);
    if ((uintptr_t)(j->out + c->head_len) & (align - 1)) return 1;
    j->given = 1;
    q->held -= j->out_size; /* not the helper's any more */
    *block = j->out;
    *offset = c->head_len;
    return 0;
}

NPZS__API int npzs_par_skip_data(npzs_par *q) {
    if (!q || q->taken || q->skip_data) return q && q->skip_data ? 0 : NPZS_E_BAD_CALL;
    for (unsigned i = 0; i < q->nth; i++)
        if (!(q->w[i].scratch = par_alloc(q, PAR_SCRATCH))) { /* the ones with none give up their jobs */
            while (i--) { par_free_mem(q, q->w[i].scratch); q->w[i].scratch = NULL; }
            return NPZS_E_NOMEM;
        }
    uint64_t k = 12 + 4 * q->p->lim.max_header_size + 16; /* the largest preamble and header */
    q->keep = k < (16u << 20) ? k : (16u << 20);
    q->skip_data = 1;
    return 0;
}

/* For tests: the bytes a job keeps with skip_data (at least 1), to reach the skip and the
 * re-inflate with small members. */
void npzs__par_keep(npzs_par *q, uint64_t n) { q->keep = n ? n : 1; }

/* For tests: jobs for deflated members of any size (1 and up). */
void npzs__par_min_csize(npzs_par *q, uint64_t n) { q->min_csize = n ? n : 1; }

NPZS__API uint64_t npzs_par_memory(const npzs_par *q) { return q ? q->held : 0; }
NPZS__API uint64_t npzs_par_used(const npzs_par *q) { return q ? q->used : 0; }
NPZS__API unsigned npzs_par_threads(const npzs_par *q) { return q ? q->nth : 0; }

/* Feed the parser one span (from a segment or straight from the caller).  Returns its result. */
static int feed(npzs_par *q, const uint8_t *b, size_t n, size_t *used, npzs_event *ev, size_t ev_size) {
    npzs_in sub = {b, n, 0};
    int rc = npzs_next_(q->p, &sub, ev, ev_size);
    *used = sub.pos;
    return rc;
}

/* What the parser returned: an event passes (on_event); after an error every job is let go. */
static int after(npzs_par *q, int rc, const npzs_event *ev) {
    if (rc == NPZS_EVENT) {
        on_event(q, ev);
    } else if (rc < 0) {
        for (par_job *j = q->jobs; j; j = j->next) j->released = 1;
        reap(q);
    }
    return rc;
}

/* An event the caller does not get: DATA and BLOB with skip_data, any other it did not ask for
 * (npzs_events: the helper asks the parser for MEMBER_END whatever the caller wants). */
static int skipped(npzs_par *q, int rc, const npzs_event *ev) {
    if (rc != NPZS_EVENT) return 0;
    if (!(q->skip_data && (ev->type == NPZS_EV_DATA || ev->type == NPZS_EV_BLOB)) && ((q->p->ev_user >> ev->type) & 1u))
        return 0;
    on_event(q, ev); /* it passed all the same */
    return 1;
}

/* The parser alone, past the helper's part (all input fed, an error, a bad call). */
static int tail(npzs_par *q, npzs_in *in, npzs_event *ev, size_t ev_size) {
    int rc;
    do rc = npzs_next_(q->p, in, ev, ev_size);
    while (skipped(q, rc, ev));
    return after(q, rc, ev);
}

/* The npzs_par_next macro's function, for bindings that cannot expand a macro (as npzs_next). */
#undef npzs_par_next
NPZS__API int npzs_par_next(npzs_par *q, npzs_in *in, npzs_event *ev) { return npzs_par_next_(q, in, ev, sizeof(npzs_event)); }

NPZS__API int npzs_par_next_(npzs_par *q, npzs_in *in, npzs_event *ev, size_t ev_size) {
    if (!q) return NPZS_E_BAD_CALL;
    npzs_parser *p = q->p;
    if (in && (in->pos > in->size || (!in->src && in->size))) return npzs_next_(p, in, ev, ev_size);
    if (p->err || q->p_finished || ev_size != sizeof(npzs_event) || !ev) return tail(q, q->p_finished ? in : NULL, ev, ev_size);
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
            const uint8_t *b = s->job ? s->job->in + s->fed : s->raw + s->fed;
            int rc = feed(q, b, n, &used, ev, ev_size);
            s->fed += used;
            if (skipped(q, rc, ev)) continue;
            if (rc != NPZS_NEED_INPUT) return after(q, rc, ev);
            continue;
        }
        int straight = !s && (q->sc == SC_SKIP || q->sc == SC_OFF) && !q->sc_paused;
        if (straight && in && in->pos < in->size) {
            size_t n = in->size - in->pos, used;
            if (q->sc == SC_SKIP && n > q->sc_left) n = (size_t)q->sc_left;
            int rc = feed(q, (const uint8_t *)in->src + in->pos, n, &used, ev, ev_size);
            in->pos += used;
            q->taken += used;
            if (q->sc == SC_SKIP && (q->sc_left -= used) == 0) scout_member_done(q);
            if (skipped(q, rc, ev)) continue;
            if (rc != NPZS_NEED_INPUT) return after(q, rc, ev);
            continue;
        }
        if (s) { /* bytes wait behind the barrier */
            if (!q->ended && in && in->pos < in->size && !q->sc_paused) {
                q->forced = 1; /* the bound is reached: feed through (the parser waits for its jobs) */
                continue;
            }
            if (q->sc_paused) {
                scout_retry(q);
                if (q->sc_paused) {
                    int running = 0;
                    pthread_mutex_lock(&q->mu);
                    for (par_job *j = q->jobs; j; j = j->next) running |= j->state == J_RUNNING;
                    if (running) pthread_cond_wait(&q->cv_done, &q->mu);
                    pthread_mutex_unlock(&q->mu);
                    if (!running) q->forced = 1;
                }
                continue;
            }
            return NPZS_NEED_INPUT; /* the caller's bytes are all taken: more lets the workers run */
        }
        q->forced = 0;
        if (in && in->pos < in->size) continue; /* the scout has more to take */
        if (!q->ended) return NPZS_NEED_INPUT;
        npzs_finish(p);
        q->p_finished = 1;
        return tail(q, NULL, ev, ev_size);
    }
}
