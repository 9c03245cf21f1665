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
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define READ_SIZE (256u << 10)


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

/* A non-blocking input (event-loop runtimes hand their children such pipes and sockets) is
 * waited for, not failed. */
static ssize_t read_some(int fd, void *buf, size_t n) {
    for (;;) {
        ssize_t r = read(fd, buf, n);
        if (r >= 0) return r;
        if (errno == EINTR) continue;
        if (errno != EAGAIN && errno != EWOULDBLOCK) return -1;
        struct pollfd pf = {fd, POLLIN, 0};
        if (poll(&pf, 1, -1) < 0 && errno != EINTR) return -1;
    }
}

int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                  cli_eof_fn at_eof, void *ctx) {
    return cli_read_loop_err(fd, prog, label, feed, push, at_eof, ctx, NULL, 0);
}

int cli_read_loop_err(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                      cli_eof_fn at_eof, void *ctx, char *err, size_t errlen) {
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_SIZE); /* a larger pipe where it is one; ignored otherwise */
#endif
    unsigned char *buf = malloc(READ_SIZE);
    int status = -1, eof = 0;
    if (!buf) { fprintf(stderr, "%s: out of memory\n", prog); status = 2; }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof) {
            r = read_some(fd, buf, READ_SIZE);
            if (r < 0) {
                if (err) snprintf(err, errlen, "read: %s", strerror(errno));
                else fprintf(stderr, "%s: %s: read: %s\n", prog, label, strerror(errno));
                status = 2;
                break;
            }
            if (r == 0) { eof = 1; at_eof(ctx); }
        }
        size_t off = 0, len = (size_t)r;
        do {
            size_t n = len - off;
            if (feed && n > feed) n = (size_t)feed;
            npzs_in in = {buf + off, n, 0};
            status = push(ctx, &in);
            off += in.pos;
            if (status < 0 && in.pos < in.size) { /* cannot happen: NEED_INPUT means all was used */
                fprintf(stderr, "%s: internal error: input left over\n", prog);
                status = 2;
            }
        } while (off < len && status < 0);
        if (eof && status < 0) { fprintf(stderr, "%s: internal error: no verdict\n", prog); status = 2; }
    }
    free(buf);
    return status;
}

typedef struct drive_ctx {
    npzs_parser *p;
    npzs_par *q; /* -j N: the parallel-inflate helper over p */
    event_fn fn;
    void *ctx;
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

int drive(npzs_parser *p, int fd, const char *label, const opts *op, int data, event_fn fn, void *ctx, char *err,
          size_t errlen) {
    drive_ctx d = {p, NULL, fn, ctx};
    if (op->jobs > 1) {
        uint64_t held = op->jobs_memory ? op->jobs_memory : (uint64_t)op->jobs << 27;
        d.q = npzs_par_new(p, op->jobs, held);
        /* the workers keep only the headers unless the bytes are read: by the command, or by the
         * parser itself for a policy's value checks and hashes */
        if (d.q && !data && !op->policy && !op->sha256 && npzs_par_skip_data(d.q) != 0) {
            npzs_par_free(d.q);
            d.q = NULL;
        }
        if (!d.q) {
            fprintf(stderr, "npzstream: -j %u: cannot start the workers (out of memory)\n", op->jobs);
            return 2;
        }
    }
    int status = cli_read_loop_err(fd, "npzstream", label, op->feed, drive_push, drive_eof, &d, err, errlen);
    npzs_par_free(d.q);
    return status;
}

npzs_parser *start(const char *path, const opts *op, const char **label, int *fd) {
    char err[256];
    *fd = cli_open(path, label, err, sizeof err);
    if (*fd < 0) {
        fprintf(stderr, "npzstream: %s: %s\n", *label, err);
        return NULL;
    }
    npzs_parser *p = new_parser(op);
    if (!p && *fd) close(*fd);
    return p;
}

/* ---- many files --------------------------------------------------------------------------- */

static int worse(int a, int b) { return a > b ? a : b; }

int batch_run(const batch *b, file_fn fn, void *ctx) {
    int status = 0;
    for (size_t i = 0; i < b->npaths; i++) status = worse(status, fn(b->paths[i], b, ctx));
    if (b->files_from) {
        FILE *list = strcmp(b->files_from, "-") ? fopen(b->files_from, "r") : stdin;
        if (!list) {
            fprintf(stderr, "npzstream: --files-from %s: %s\n", b->files_from, strerror(errno));
            return 2;
        }
        char *line = NULL;
        size_t cap = 0;
        ssize_t n;
        int sep = b->null_sep ? 0 : '\n';
        while ((n = getdelim(&line, &cap, sep, list)) > 0) {
            if (line[n - 1] == sep) line[--n] = 0;
            if (!b->null_sep && n && line[n - 1] == '\r') line[--n] = 0; /* a list written on Windows */
            if (n == 0) continue;                                         /* empty lines */
            status = worse(status, fn(line, b, ctx));
        }
        if (ferror(list)) {
            fprintf(stderr, "npzstream: --files-from %s: read error\n", b->files_from);
            status = 2;
        }
        free(line);
        if (list != stdin) fclose(list);
    } else if (b->npaths == 0) {
        status = fn(NULL, b, ctx);
    }
    return status;
}
