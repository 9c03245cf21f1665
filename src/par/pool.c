/*
 * pool.c -- a worker pool: up to `size` threads, started one by one as tasks come and find no
 * idle thread, running tasks in the order they were queued.  Helpers share one (npzs_par_new_pool)
 * or each has its own (npzs_par_new).  The pool knows nothing of what a task does: a task's owner
 * waits for it and frees it (par.c).  Threads are created on the thread that queues a task; the
 * pool allocates only in npzs_pool_new.
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "../base/base.h"
#include "pool.h"

#ifdef NPZS_INTERNAL_H
#error "the helper sees the parser through the seam (base/seam.h, par/seam.c): not its layout (internal.h)"
#endif

#define POOL_MAX 64

struct npzs_pool {
    npzs_allocator al;
    pthread_mutex_t mu;
    pthread_cond_t cv;       /* a task was queued, or quit */
    npzs__task *head, *tail; /* the queue */
    unsigned size, started, idle, queued;
    int quit;
    pthread_t th[POOL_MAX];
};

NPZS__API npzs_pool *npzs_pool_new(unsigned threads, const npzs_allocator *alloc) {
    npzs_allocator al = npzs__malloc;
    if (alloc) {
        if (!alloc->alloc || !alloc->free) return NULL;
        al = *alloc;
    }
    if (threads == 0 || threads > POOL_MAX) return NULL;
    npzs_pool *pl = al.alloc(al.opaque, sizeof *pl);
    if (!pl) return NULL;
    memset(pl, 0, sizeof *pl);
    pl->al = al;
    pl->size = threads;
    if (pthread_mutex_init(&pl->mu, NULL)) goto fail_mu;
    if (pthread_cond_init(&pl->cv, NULL)) goto fail_cv;
    return pl;
fail_cv:
    pthread_mutex_destroy(&pl->mu);
fail_mu:
    al.free(al.opaque, pl);
    return NULL;
}

static void *worker(void *arg) {
    npzs_pool *pl = arg;
    pthread_mutex_lock(&pl->mu);
    for (;;) {
        while (!pl->quit && !pl->head) {
            pl->idle++;
            pthread_cond_wait(&pl->cv, &pl->mu);
            pl->idle--;
        }
        if (pl->quit) break;
        npzs__task *t = pl->head;
        pl->head = t->next;
        if (!pl->head) pl->tail = NULL;
        pl->queued--;
        pthread_mutex_unlock(&pl->mu);
        t->run(t); /* t may be gone once this returns */
        pthread_mutex_lock(&pl->mu);
    }
    pthread_mutex_unlock(&pl->mu);
    return NULL;
}

int npzs__pool_submit(npzs_pool *pl, npzs__task *t) {
    pthread_mutex_lock(&pl->mu);
    t->next = NULL;
    if (pl->tail) pl->tail->next = t;
    else pl->head = t;
    pl->tail = t;
    pl->queued++;
    /* a thread for it when every running one is busy (idle counts the waiting ones; a task queued
     * earlier that no thread took yet is one of theirs) */
    if (pl->idle < pl->queued && pl->started < pl->size && !pthread_create(&pl->th[pl->started], NULL, worker, pl))
        pl->started++;
    int ok = pl->started > 0;
    if (!ok) { /* no thread at all: not queued */
        pl->head = pl->tail = NULL;
        pl->queued = 0;
    } else {
        pthread_cond_signal(&pl->cv);
    }
    pthread_mutex_unlock(&pl->mu);
    return ok ? 0 : -1;
}

int npzs__pool_cancel(npzs_pool *pl, npzs__task *t) {
    int found = 0;
    pthread_mutex_lock(&pl->mu);
    npzs__task **pp = &pl->head, *prev = NULL;
    while (*pp && *pp != t) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = t->next;
        if (pl->tail == t) pl->tail = prev;
        pl->queued--;
        found = 1;
    }
    pthread_mutex_unlock(&pl->mu);
    return found;
}

unsigned npzs__pool_size(const npzs_pool *pl) { return pl ? pl->size : 0; }

NPZS__API unsigned npzs_pool_threads(const npzs_pool *pl) {
    if (!pl) return 0;
    pthread_mutex_lock((pthread_mutex_t *)&pl->mu);
    unsigned n = pl->started;
    pthread_mutex_unlock((pthread_mutex_t *)&pl->mu);
    return n;
}

NPZS__API void npzs_pool_free(npzs_pool *pl) {
    if (!pl) return;
    pthread_mutex_lock(&pl->mu);
    pl->quit = 1;
    pthread_cond_broadcast(&pl->cv);
    pthread_mutex_unlock(&pl->mu);
    for (unsigned i = 0; i < pl->started; i++) pthread_join(pl->th[i], NULL);
    pthread_cond_destroy(&pl->cv);
    pthread_mutex_destroy(&pl->mu);
    npzs_allocator al = pl->al;
    al.free(al.opaque, pl);
}
