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
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"

#define READ_SIZE (1u << 20)


/* Called for every event; returns 0 to go on, -1 to stop with status 2 (it printed why). */
typedef int (*event_fn)(void *ctx, const npzs_event *ev);

/* Opens FILE, or stdin for NULL or "-".  Returns the fd (0 for stdin) or -1 (message printed). */
static int open_input(const char *path, const char **label) {
    *label = "-";
    if (!path || !strcmp(path, "-")) return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "npzstream: %s: %s\n", path, strerror(errno));
        return -1;
    }
    *label = path;
    return fd;
}

int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                  cli_eof_fn at_eof, void *ctx) {
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_SIZE); /* a larger pipe where it is one; ignored otherwise */
#endif
    unsigned char *buf = malloc(READ_SIZE);
    int status = -1, eof = 0;
    if (!buf) { fprintf(stderr, "%s: out of memory\n", prog); status = 2; }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof) {
            r = read(fd, buf, READ_SIZE);
            if (r < 0) {
                if (errno == EINTR) continue;
                fprintf(stderr, "%s: %s: read: %s\n", prog, label, strerror(errno));
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
    event_fn fn;
    void *ctx;
} drive_ctx;

static int drive_push(void *vc, npzs_in *in) {
    drive_ctx *d = vc;
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(d->p, in, &ev);
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return rc == NPZS_E_NOMEM ? 2 : 1;
        if (d->fn(d->ctx, &ev) < 0) return 2;
        if (ev.type == NPZS_EV_END) return 0;
    }
}

static void drive_eof(void *vc) { npzs_finish(((drive_ctx *)vc)->p); }

/* Reads fd to the verdict, pushing at most feed bytes per call (0: no limit).
 * Returns 0 accepted, 1 rejected, 2 I/O error, out of memory or fn() stopped. */
int drive(npzs_parser *p, int fd, const char *label, uint64_t feed, event_fn fn, void *ctx) {
    drive_ctx d = {p, fn, ctx};
    return cli_read_loop(fd, "npzstream", label, feed, drive_push, drive_eof, &d);
}

/* Open FILE (or stdin) and make a parser with the options' limits; NULL (all released, the reason
 * said on stderr) when either fails. */
npzs_parser *start(const char *path, const opts *op, const char **label, int *fd) {
    *fd = open_input(path, label);
    if (*fd < 0) return NULL;
    npzs_parser *p = new_parser(op);
    if (!p && *fd) close(*fd);
    return p;
}
