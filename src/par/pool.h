/* pool.h -- the worker pool (pool.c): threads that run tasks, started as the tasks come. */
#ifndef NPZS_POOL_H
#define NPZS_POOL_H

#include "npzstream_par.h"

/* A task: the pool calls run(t) on one of its threads and never touches t after run returned
 * (the owner learns of the end from run itself). */
typedef struct npzs__task {
    struct npzs__task *next;
    void (*run)(struct npzs__task *t);
} npzs__task;

/* Queue t.  A thread is started when none is idle and fewer than the pool's size run.  0, or -1
 * when no thread runs and none could start (t is not queued). */
int npzs__pool_submit(npzs_pool *pool, npzs__task *t);
/* Take t out of the queue before a thread took it: 1, or 0 when it runs or ran already. */
int npzs__pool_cancel(npzs_pool *pool, npzs__task *t);
unsigned npzs__pool_size(const npzs_pool *pool); /* 0 for NULL (no pool: no worker) */

#endif
