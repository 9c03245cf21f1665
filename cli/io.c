/* io.c -- reading the input: FILE or stdin, sequentially, in large pieces (never a seek), pushed
 * to a parser and its events handed to a command. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <pthread.h>
#include <signal.h>

#include "cli.h"

/* One read() of a file or a pipe: at most 128 KiB, where the kernel's copy into the buffer cost about
 * 30% less CPU than at 192 KiB and more (256 KiB, 1 MiB; bench/README.md, issue 44).  A pipe
 * given to stdin holds two reads; a mapped file (-j N) is pushed in slices of twice as much. */
#define READ_SIZE (128u << 10)
#define PIPE_SIZE (2 * READ_SIZE)
#define MAP_SLICE (2 * READ_SIZE)


int cli_open(const char *path, const char **label, char *err, size_t errlen) {
    *label = "-";
    if (!path || !strcmp(path, "-")) return 0;
    *label = path;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) {
        snprintf(err, errlen, "%s", strerror(errno));
        return -1;
    }
    return fd;
}

volatile sig_atomic_t cli_interrupted;

/* A non-blocking input (event-loop runtimes hand their children such pipes and sockets) is
 * waited for, not failed.  A signal extract catches (cli_interrupted) ends the read. */
static ssize_t read_some(int fd, void *buf, size_t n) {
    for (;;) {
        if (cli_interrupted) {
            errno = EINTR;
            return -1;
        }
        ssize_t r = read(fd, buf, n);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, -1) < 0 && errno != EINTR) return -1;
    }
}

/* The read buffer: one a thread, kept for the next input (a batch of small files would map and
 * unmap it for each). */
static _Thread_local unsigned char *rbuf;

static unsigned char *read_buffer(void) {
    if (!rbuf) rbuf = malloc(READ_SIZE);
    return rbuf;
}

void cli_read_buffer_free(void) {
    free(rbuf);
    rbuf = NULL;
}

int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                  cli_eof_fn at_eof, void *ctx) {
    return cli_read_loop_err(fd, prog, label, feed, push, at_eof, ctx, NULL, 0);
}

/* Called before each read with the bytes read so far: -1 to go on reading, or the status of the
 * rest of the input, which it took over (drive(): a mapped file). */
typedef int (*divert_fn)(void *ctx, uint64_t off);

static int read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push, cli_eof_fn at_eof,
                     void *ctx, char *err, size_t errlen, divert_fn divert) {
#ifdef F_SETPIPE_SZ
    if (fd == 0) (void)fcntl(fd, F_SETPIPE_SZ, (int)PIPE_SIZE); /* a larger pipe where stdin is one */
#endif
    unsigned char *buf = read_buffer();
    int status = -1, eof = 0;
    uint64_t total = 0;
    if (!buf) { fprintf(ERR, "%s: out of memory\n", prog); status = 2; }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof && divert && (status = divert(ctx, total)) >= 0) break;
        if (!eof) {
            r = read_some(fd, buf, READ_SIZE);
            if (r < 0) {
                if (err) snprintf(err, errlen, "read: %s", strerror(errno));
                else cli_say(prog, label, NULL, NULL, ": read: %s", strerror(errno));
                status = 2;
                break;
            }
            if (r == 0) { eof = 1; at_eof(ctx); }
            total += (uint64_t)r;
        }
        size_t off = 0, len = (size_t)r;
        do {
            size_t n = len - off;
            if (feed && n > feed) n = (size_t)feed;
            npzs_in in = {buf + off, n, 0};
            status = push(ctx, &in);
            off += in.pos;
            if (status < 0 && in.pos < in.size) { /* cannot happen: NEED_INPUT means all was used */
                fprintf(ERR, "%s: internal error: input left over\n", prog);
                status = 2;
            }
        } while (off < len && status < 0);
        if (eof && status < 0) { fprintf(ERR, "%s: internal error: no verdict\n", prog); status = 2; }
    }
    return status;
}

int cli_read_loop_err(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                      cli_eof_fn at_eof, void *ctx, char *err, size_t errlen) {
    return read_loop(fd, prog, label, feed, push, at_eof, ctx, err, errlen, NULL);
}

/* ---- a regular file mapped (-j N) --------------------------------------------------------
 * With workers, a regular file is read until a worker starts (a member large enough to gain from
 * one), and the rest of it is then mapped and pushed with npzs_par_stable_input: the helper holds
 * those bytes where they are, so the reading thread copies nothing and the scout reaches the next
 * members at once (bench/README.md).  Files with no such member are read as any input: their
 * memory is that of one thread.
 *
 * Only where nothing but the CRC-32 reads a member's bytes (check and ls without --sha256 or a
 * policy: !data_read).  A page of a private mapping nobody wrote follows the file, so a byte the
 * parser reads twice can differ between the reads: a stored member's bytes are read in place by
 * each check (the value checks, the CRC-32, the hash, each a pass of its own) and then by the
 * command (extract writes them from the DATA events); over a file rewritten meanwhile, extract
 * would write bytes the CRC-32 never covered, and check report a hash of bytes other than those
 * it checked.  Read, each byte is copied once into memory of the process's own, and every check
 * and the output see that copy.  The mapping stays until the helper's parser is reset or freed
 * (cli_unmap), since workers may still read it after the verdict.  A file that shrinks while it
 * is mapped raises SIGBUS on the pages past its new end: the handler maps zero pages there and
 * marks the file, which is then reported as an I/O failure (as a read error would be), whatever
 * the parser made of the zeros. */
#define MAPS 256 /* files mapped at once: one a thread (-P N) */
static struct {
    uintptr_t addr; /* 0: free (atomic) */
    size_t len;
    volatile sig_atomic_t bad;
} maps[MAPS];
static _Thread_local int my_map = -1;
static uintptr_t page_size;

static void on_sigbus(int sig, siginfo_t *si, void *uc) {
    (void)uc;
    uintptr_t a = (uintptr_t)si->si_addr, pg = page_size;
    for (int i = 0; i < MAPS; i++) {
        uintptr_t m = __atomic_load_n(&maps[i].addr, __ATOMIC_ACQUIRE);
        if (m && a >= m && a < m + maps[i].len) {
            uintptr_t from = a & ~(pg - 1);
            if (mmap((void *)from, m + maps[i].len - from, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) ==
                MAP_FAILED)
                break;
            maps[i].bad = 1;
            return;
        }
    }
    signal(sig, SIG_DFL); /* not a mapped input's: the fault is re-raised as it was */
}

static void catch_sigbus_once(void) {
    page_size = (uintptr_t)sysconf(_SC_PAGESIZE);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_sigaction = on_sigbus;
    sa.sa_flags = SA_SIGINFO;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGBUS, &sa, NULL);
}

/* The handler, installed once (the first file mapped, by whichever thread). */
static void catch_sigbus(void) {
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    pthread_once(&once, catch_sigbus_once);
}

/* The thread's mapped file, unmapped (its helper's jobs are over: reset or freed). */
void cli_unmap(void) {
    if (my_map < 0) return;
    munmap((void *)maps[my_map].addr, maps[my_map].len);
    __atomic_store_n(&maps[my_map].addr, 0, __ATOMIC_RELEASE);
    my_map = -1;
}

/* fd mapped when it is a regular file of more than `from` bytes (those read already), the thread's
 * last mapping was released and a slot is free: its slot, or -1 (then it is read on). */
static int map_file(int fd, uint64_t from) {
    struct stat st;
    if (my_map >= 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (uint64_t)st.st_size <= from ||
        (uint64_t)st.st_size > SIZE_MAX)
        return -1;
    for (int i = 0; i < MAPS; i++) {
        uintptr_t none = 0;
        if (!__atomic_compare_exchange_n(&maps[i].addr, &none, 1, 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED)) continue;
        void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
        if (m == MAP_FAILED) {
            __atomic_store_n(&maps[i].addr, 0, __ATOMIC_RELEASE);
            return -1;
        }
        (void)madvise(m, (size_t)st.st_size, MADV_SEQUENTIAL);
        maps[i].len = (size_t)st.st_size;
        maps[i].bad = 0;
        catch_sigbus();
        __atomic_store_n(&maps[i].addr, (uintptr_t)m, __ATOMIC_RELEASE);
        return my_map = i;
    }
    return -1;
}

typedef struct drive_ctx {
    npzs_parser *p;
    npzs_par *q; /* -j N: the parallel-inflate helper over p */
    event_fn fn;
    void *ctx;
    /* for map_rest */
    int fd, tried;
    const char *label;
    uint64_t feed;
    char *err;
    size_t errlen;
} drive_ctx;

static int drive_push(void *vc, npzs_in *in) {
    drive_ctx *d = vc;
    for (;;) {
        npzs_event ev;
        int rc = d->q ? npzs_par_next(d->q, in, &ev) : npzs_next(d->p, in, &ev);
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return rc == NPZS_E_NOMEM ? 2 : 1;
        if (d->fn(d->ctx, &ev) < 0) return 2;
        if (ev.type == NPZS_EV_END) return 0;
    }
}

static void drive_eof(void *vc) {
    drive_ctx *d = vc;
    if (d->q) npzs_par_finish(d->q);
    else npzs_finish(d->p);
}

/* The rest of a mapped file from `from` on, pushed in slices of MAP_SLICE (or --feed) bytes:
 * after each, the pages the parser has passed are dropped from the process (MADV_DONTNEED: a
 * private mapping of a file reads them again from the file if touched), so what stays resident is
 * what the workers read ahead.  (The helper takes each slice at once: its workers do not wait for
 * the slices.)  A status as read_loop's, 2 with err (or the message printed) when the file shrank
 * or grew meanwhile. */
static int map_loop(drive_ctx *d, int k, uint64_t from) {
    const uint8_t *b = (const uint8_t *)maps[k].addr;
    size_t len = maps[k].len, off = (size_t)from, dropped = 0, slice = d->feed ? (size_t)d->feed : MAP_SLICE;
    int status = -1;
    while (status < 0 && off < len) {
        npzs_in in = {b + off, len - off < slice ? len - off : slice, 0};
        status = drive_push(d, &in);
        off += in.pos;
        uint64_t passed = npzs_consumed(d->p);
        size_t upto = (size_t)(passed < len ? passed : len) & ~(size_t)(page_size - 1);
        if (upto >= dropped + (64u << 10)) {
            (void)madvise((void *)(uintptr_t)(b + dropped), upto - dropped, MADV_DONTNEED);
            dropped = upto;
        }
    }
    if (status < 0) {
        drive_eof(d);
        npzs_in none = {b + len, 0, 0};
        status = drive_push(d, &none);
        if (status < 0) { fprintf(ERR, "npzstream: internal error: no verdict\n"); status = 2; }
    }
    struct stat st;
    if (maps[k].bad || fstat(d->fd, &st) < 0 || (uint64_t)st.st_size != len) {
        const char *why = "read: the file changed size while it was read";
        if (d->err) snprintf(d->err, d->errlen, "%s", why);
        else cli_say("npzstream", d->label, NULL, NULL, ": %s", why);
        status = 2;
    }
    return status;
}

/* read_loop's divert under -j N: once a worker has started, the rest of a regular file is mapped
 * (once tried, a file that cannot be is read on). */
static int map_rest(void *vc, uint64_t off) {
    drive_ctx *d = vc;
    if (d->tried || !npzs_par_threads(d->q)) return -1;
    d->tried = 1;
    int k = map_file(d->fd, off);
    if (k < 0) return -1;
    if (npzs_par_stable_input(d->q, 1) != 0) return -1; /* cannot happen: turning it on */
    return map_loop(d, k, off);
}

int drive(npzs_parser *p, int fd, const char *label, const opts *op, int data, event_fn fn, void *ctx, char *err,
          size_t errlen) {
    drive_ctx d = {p, NULL, fn, ctx, fd, 0, label, op->feed, err, errlen};
    if (op->jobs > 1 && !(d.q = batch_helper(p, op, data))) {
        fprintf(ERR, "npzstream: --inflate-threads %u: cannot start the workers (out of memory)\n", op->jobs);
        return 2;
    }
    if (d.q && npzs_par_stable_input(d.q, 0) != 0) return 2; /* cannot happen: a new input */
    divert_fn divert = d.q && !data_read(op, data) ? map_rest : NULL;
    return read_loop(fd, "npzstream", label, op->feed, drive_push, drive_eof, &d, err, errlen, divert);
}

npzs_parser *start(const char *path, const opts *op, const char **label, int *fd) {
    char err[256];
    *fd = cli_open(path, label, err, sizeof err);
    if (*fd < 0) {
        cli_say("npzstream", *label, NULL, NULL, ": %s", err);
        return NULL;
    }
    npzs_parser *p = new_parser(op);
    if (!p && *fd) close(*fd);
    return p;
}

/* ---- many files --------------------------------------------------------------------------- */

int io_failure(const batch *b, const char *label, const char *why) {
    if (b->quiet) return 2;
    if (b->json || b->jsonl) print_io_json(b->jsonl ? label : NULL, why);
    cli_say("npzstream", label, NULL, NULL, ": %s", why); /* an I/O problem is said on stderr too (rejections never are) */
    return 2;
}

int file_begin(const char *path, const batch *b, file_run *r, char *err, size_t errlen) {
    r->fd = cli_open(path, &r->label, err, errlen);
    if (r->fd < 0) return io_failure(b, r->label, err);
    r->p = batch_parser(&b->op);
    if (!r->p) {
        if (r->fd) close(r->fd);
        return 2;
    }
    if (b->sequence) npzs_npy_sequence(r->p);
    return -1;
}

void file_end(file_run *r, const batch *b, out *o) {
    fflush(OUT);
    out_free(o);
    parser_done(r->p, &b->op);
    if (r->fd) close(r->fd);
}

static int worse(int a, int b) { return a > b ? a : b; }

/* The names of a batch in order: the FILEs, then --files-from's (byte for byte: a name ends at a
 * newline, or a NUL with -0, and nothing else is taken off), or stdin alone when there is
 * neither.  Returns the next name (valid until the next call), NULL at the end; *status is
 * raised to 2 when the list cannot be read. */
typedef struct names {
    const batch *b;
    size_t i;
    FILE *list;
    int opened, done, stdin_only;
    char *line;
    size_t cap;
} names;

static const char *next_name(names *n, int *status) {
    const batch *b = n->b;
    if (n->i < b->npaths) return b->paths[n->i++];
    if (n->done) return NULL;
    if (!b->files_from) {
        n->done = 1;
        if (b->npaths == 0) { n->stdin_only = 1; return "-"; }
        return NULL;
    }
    if (!n->opened) {
        n->opened = 1;
        n->list = strcmp(b->files_from, "-") ? fopen(b->files_from, "r") : stdin;
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
    if (n->list != stdin) fclose(n->list);
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
    char *out, *err;
    size_t out_len, err_len;
    int status, state; /* 0 free, 1 waiting, 2 running, 3 done */
} slot;

typedef struct pool {
    const batch *b;
    file_fn fn;
    void *ctx;
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
    sl->status = pl->fn(strcmp(sl->path, "-") ? sl->path : NULL, pl->b, pl->ctx);
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
    batch_end(); /* the thread's parser and buffer */
    return NULL;
}

static int batch_parallel(const batch *b, file_fn fn, void *ctx, names *nm) {
    unsigned threads = b->op.parallel;
    pool pl;
    memset(&pl, 0, sizeof pl);
    pl.b = b;
    pl.fn = fn;
    pl.ctx = ctx;
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
            const char *name = next_name(nm, &status);
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

int batch_run(const batch *b, file_fn fn, void *ctx) {
    names nm;
    memset(&nm, 0, sizeof nm);
    nm.b = b;
    int status = 0;
    if (b->op.parallel > 1 && (b->files_from || b->npaths > 1)) {
        status = batch_parallel(b, fn, ctx, &nm);
    } else {
        const char *name;
        while ((name = next_name(&nm, &status)))
            status = worse(status, fn(nm.stdin_only || !strcmp(name, "-") ? NULL : name, b, ctx));
    }
    free(nm.line);
    batch_end();
    return status;
}
