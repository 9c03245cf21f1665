/* batch.c -- the files of a batch (check, ls: the FILEs and --files-from's names; scan: its walk),
 * one at a time or (-P N) on N threads, their output written out in the input's order. */
#define _GNU_SOURCE
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <pthread.h>

#include "cli.h"
#include "output.h"
#include "sandbox.h"

static int worse(int a, int b) { return a > b ? a : b; }

/* The names of a batch in order: the FILEs, then --files-from's (byte for byte: a name ends at a
 * newline, or a NUL with -0, and nothing else is taken off), or stdin alone when there is
 * neither.  Returns the next name (valid until the next call), NULL at the end; *status is
 * raised to 2 when the list cannot be read. */
typedef struct names {
    const batch *b;
    size_t i;
    FILE *list;
    int opened, done;
    char *line;
    size_t cap;
} names;

static const char *next_name(names *n, int *status) {
    const batch *b = n->b;
    if (n->i < b->npaths) return b->paths[n->i++];
    if (n->done) return NULL;
    if (!b->files_from) {
        n->done = 1;
        if (b->npaths == 0) return "-";
        return NULL;
    }
    if (!n->opened) {
        n->opened = 1;
        n->list = b->list ? b->list : strcmp(b->files_from, "-") ? fopen(b->files_from, "r") : stdin;
        if (!n->list) {
            fprintf(stderr, "npzstream: --files-from %s: %s\n", b->files_from, strerror(errno));
            *status = 2;
            n->done = 1;
            return NULL;
        }
    }
    int sep = b->null_sep ? 0 : '\n';
    ssize_t len;
    while ((len = getdelim(&n->line, &n->cap, sep, n->list)) > 0) {
        if (n->line[len - 1] == sep) n->line[--len] = 0;
        if (len) return n->line; /* empty lines are skipped */
    }
    if (ferror(n->list)) {
        fprintf(stderr, "npzstream: --files-from %s: read error\n", b->files_from);
        *status = 2;
    }
    if (n->list != stdin && n->list != b->list) fclose(n->list);
    n->done = 1;
    return NULL;
}

/* -P N: N worker threads take the files in turn; each writes its output into buffers of its own
 * (cli_stdout, cli_stderr), which the main thread writes out in the input's order: the same
 * bytes as one at a time.  A window of PAR_WINDOW files a thread is in flight; a worker takes a
 * run of files at once, and the main thread is woken when half the window can be written out
 * (or the last files are done), so a file costs its own work and no hand-off (2,000 small
 * archives: bench/README.md). */
#define PAR_WINDOW 64u
#define PAR_RUN 8u

typedef struct slot {
    char *path;
    void *data; /* what the work left for done() */
    char *out, *err;
    size_t out_len, err_len;
    int status, state; /* 0 free, 1 waiting, 2 running, 3 done */
} slot;

typedef struct pool {
    const batch_work *w;
    slot *s;
    size_t n, next_run; /* next_run: the oldest waiting slot (the slots are taken in order) */
    size_t queued;      /* slots given out so far */
    size_t head;        /* the oldest slot not yet written out (the main thread's) */
    size_t ndone;       /* slots done so far */
    unsigned threads;
    int closing, main_waits;
    pthread_mutex_t mu;
    pthread_cond_t work, done;
} pool;

static void run_one(pool *pl, slot *sl) {
    FILE *o = open_memstream(&sl->out, &sl->out_len), *e = open_memstream(&sl->err, &sl->err_len);
    if (!o || !e) {
        if (o) fclose(o);
        if (e) fclose(e);
        sl->status = 2;
        return;
    }
    cli_stdout = o;
    cli_stderr = e;
    sl->status = pl->w->fn(sl->path, pl->w->ctx, &sl->data);
    cli_stdout = cli_stderr = NULL;
    fclose(o);
    fclose(e);
}

/* The main thread has enough to write out: the oldest file is done, and half the window or every
 * file given out.  Under the lock. */
static int writable(const pool *pl) {
    return pl->s[pl->head % pl->n].state == 3 && (pl->ndone - pl->head >= pl->n / 2 || pl->ndone == pl->queued);
}

static void *worker(void *arg) {
    pool *pl = arg;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        while (!pl->closing && pl->next_run == pl->queued) pthread_cond_wait(&pl->work, &pl->mu);
        if (pl->next_run == pl->queued) break; /* closing and nothing left */
        /* a run of files: a share of what waits, so that the threads stay even at the end */
        size_t first = pl->next_run, k = (pl->queued - first) / (2u * pl->threads);
        if (k < 1) k = 1;
        if (k > PAR_RUN) k = PAR_RUN;
        pl->next_run += k;
        for (size_t i = 0; i < k; i++) pl->s[(first + i) % pl->n].state = 2;
        pthread_mutex_unlock(&pl->mu);
        for (size_t i = 0; i < k; i++) run_one(pl, &pl->s[(first + i) % pl->n]);
        pthread_mutex_lock(&pl->mu);
        for (size_t i = 0; i < k; i++) pl->s[(first + i) % pl->n].state = 3;
        pl->ndone += k;
        if (pl->main_waits && writable(pl)) pthread_cond_signal(&pl->done);
    }
    pthread_mutex_unlock(&pl->mu);
    pl->w->thread_end(); /* what the thread kept: its parser, its buffer */
    return NULL;
}

static int batch_parallel(const batch_work *w) {
    unsigned threads = w->parallel;
    pool pl;
    memset(&pl, 0, sizeof pl);
    pl.w = w;
    pl.threads = threads;
    pl.n = PAR_WINDOW * threads;
    pl.s = calloc(pl.n, sizeof *pl.s);
    pthread_t *th = calloc(threads, sizeof *th);
    int status = 0;
    if (!pl.s || !th) {
        free(pl.s);
        free(th);
        fprintf(stderr, "npzstream: out of memory\n");
        return 2;
    }
    pthread_mutex_init(&pl.mu, NULL);
    pthread_cond_init(&pl.work, NULL);
    pthread_cond_init(&pl.done, NULL);
    unsigned started = 0;
    for (; started < threads; started++)
        if (pthread_create(&th[started], NULL, worker, &pl) != 0) break;
    if (!started) status = 2;
    int more = started > 0;
    for (;;) {
        /* fill the window: the free slots (written out) are the main thread's alone */
        size_t queued = pl.queued, added = 0;
        while (more && queued + added - pl.head < pl.n) {
            const char *name = w->next(w->src, &status);
            char *copy = name ? strdup(name) : NULL;
            if (!name || !copy) {
                if (name) status = 2;
                more = 0;
                break;
            }
            slot *sl = &pl.s[(queued + added) % pl.n];
            memset(sl, 0, sizeof *sl);
            sl->path = copy;
            sl->state = 1;
            added++;
        }
        pthread_mutex_lock(&pl.mu);
        if (added) {
            pl.queued += added;
            pthread_cond_broadcast(&pl.work);
        }
        if (pl.head == pl.queued) {
            pthread_mutex_unlock(&pl.mu);
            break;
        }
        while (!writable(&pl)) {
            pl.main_waits = 1;
            pthread_cond_wait(&pl.done, &pl.mu);
        }
        pl.main_waits = 0;
        size_t end = pl.head; /* every file done in order from the oldest */
        while (end < pl.queued && pl.s[end % pl.n].state == 3) end++;
        pthread_mutex_unlock(&pl.mu);
        for (size_t i = pl.head; i < end; i++) {
            slot *sl = &pl.s[i % pl.n];
            if (sl->out_len) fwrite(sl->out, 1, sl->out_len, stdout);
            if (sl->err_len) {
                fflush(stdout);
                fwrite(sl->err, 1, sl->err_len, stderr);
            }
            status = worse(status, sl->status);
            if (w->done) w->done(w->ctx, sl->data);
            free(sl->out);
            free(sl->err);
            free(sl->path);
        }
        fflush(stdout);
        pthread_mutex_lock(&pl.mu);
        pl.head = end;
        pthread_mutex_unlock(&pl.mu);
    }
    pthread_mutex_lock(&pl.mu);
    pl.closing = 1;
    pthread_cond_broadcast(&pl.work);
    pthread_mutex_unlock(&pl.mu);
    for (unsigned k = 0; k < started; k++) pthread_join(th[k], NULL);
    pthread_mutex_destroy(&pl.mu);
    pthread_cond_destroy(&pl.work);
    pthread_cond_destroy(&pl.done);
    free(pl.s);
    free(th);
    return status;
}

int batch_work_run(const batch_work *w) {
    int status = 0;
    if (w->parallel > 1) {
        status = batch_parallel(w);
    } else {
        const char *name;
        while ((name = w->next(w->src, &status))) {
            void *data = NULL;
            status = worse(status, w->fn(name, w->ctx, &data));
            if (w->done) w->done(w->ctx, data);
        }
    }
    w->thread_end();
    return status;
}

/* check's and ls's: the names of the batch to a file_fn */
typedef struct batch_call {
    const batch *b;
    file_fn fn;
    void *ctx;
    names nm;
} batch_call;

static const char *batch_next(void *src, int *status) { return next_name(&((batch_call *)src)->nm, status); }

static int batch_one(const char *name, void *ctx, void **data) {
    const batch_call *c = ctx;
    (void)data;
    return c->fn(strcmp(name, "-") ? name : NULL, c->b, c->ctx);
}

int batch_run(const batch *b, file_fn fn, void *ctx) {
    batch_call c;
    memset(&c, 0, sizeof c);
    c.b = b;
    c.fn = fn;
    c.ctx = ctx;
    c.nm.b = b;
    batch_work w = {batch_next,
                    &c,
                    batch_one,
                    NULL,
                    batch_end,
                    &c,
                    b->op.parallel > 1 && (b->files_from || b->npaths > 1) ? b->op.parallel : 0};
    int status = batch_work_run(&w);
    free(c.nm.line);
    return status;
}

/* --files-from's bytes, whole (the list named, or stdin): 0, or -1 when it cannot be read (then the
 * batch reads it itself, and says why). */
static int list_slurp(const char *from, char **buf, size_t *len) {
    FILE *f = strcmp(from, "-") ? fopen(from, "r") : stdin;
    if (!f) return -1;
    size_t cap = 0, n = 0;
    char *b = NULL;
    int rc = 0;
    for (;;) {
        if (n == cap) {
            char *nb = cap > SIZE_MAX / 2 - 4096 ? NULL : realloc(b, cap = 2 * cap + 4096);
            if (!nb) {
                rc = -1;
                break;
            }
            b = nb;
        }
        size_t k = fread(b + n, 1, cap - n, f);
        n += k;
        if (k == 0) {
            rc = ferror(f) ? -1 : 0;
            break;
        }
    }
    if (f != stdin) fclose(f);
    if (rc < 0) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = n;
    return 0;
}

int batch_confine(batch *b) {
    cli_confine_spec s;
    memset(&s, 0, sizeof s);
    s.prog = "npzstream";
    s.off = b->op.no_sandbox;
    s.hashing = b->op.sha256;
    size_t len = 0;
    if (!s.off && b->files_from && list_slurp(b->files_from, &b->list_buf, &len) == 0 && len > 0 &&
        !(b->list = fmemopen(b->list_buf, len, "r"))) {
        fprintf(stderr, "npzstream: out of memory\n");
        return 2;
    }
    /* each name the batch will take (next_name(), the one reader of the list: from memory when
     * the list was read in, which the batch then reads again from its start) a rule; the list
     * itself too when it was not read in (the batch opens it confined) */
    size_t n = 0, cap = b->npaths + (b->list ? len / 2 + 1 : 0) + 1;
    char **all = calloc(cap, sizeof *all);
    int status = -1, oom = !all;
    names nm;
    memset(&nm, 0, sizeof nm);
    nm.b = b;
    for (const char *name; !oom && status < 0 && (b->list || nm.i < b->npaths) && (name = next_name(&nm, &status));)
        oom = !(all[n++] = strdup(name));
    free(nm.line);
    if (b->list) rewind(b->list);
    else if (!oom && b->files_from) oom = !(all[n++] = strdup(b->files_from));
    if (oom) {
        fprintf(stderr, "npzstream: out of memory\n");
        status = 2;
    }
    if (status < 0) {
        s.read_files = (const char **)all;
        s.n_read_files = n;
        if (cli_confine(&s) < 0) status = 2;
    }
    for (size_t i = 0; all && i < n; i++) free(all[i]);
    free(all);
    return status;
}
