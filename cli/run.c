/* run.c -- one input through a parser: the thread's parser and its -j N helper, kept from file to
 * file of a batch; the input driven to the verdict, its events handed to a command; a FILE of a
 * batch opened and given back. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "output.h"
#include "npzstream_par.h"
#include "../report/report.h"

/* ---- the thread's parser and helper ---------------------------------------------------------- */

npzs_parser *new_parser(const opts *o) {
    if (!limits_in_range(&o->lim, ERR)) return NULL;
    npzs_parser *p = npzs_new(&o->lim, NULL);
    if (!p) {
        fprintf(ERR, "npzstream: out of memory (or --max-memory below the parser's own size)\n");
        return NULL;
    }
    if ((o->policy && npzs_policy_use(p, o->policy) < 0) || (o->sha256 && npzs_hash(p, NPZS_HASH_SHA256) < 0)) {
        fprintf(ERR, "npzstream: out of memory for the policy (or --max-memory below it)\n");
        parser_free(p);
        return NULL;
    }
    return p;
}

/* The parser of a batch: one a thread, made for the first file and reset (npzs_reset: the limits,
 * policy, hashing and buffers kept) for the next ones; parser_done() gives it back, batch_end()
 * releases it.  A parser kept with its helper is kept with the file mapped for that helper too
 * (io.c): the mapping goes when the helper's jobs do, at the parser's reset or free. */
static _Thread_local npzs_parser *kept;
static _Thread_local const opts *kept_for;
static _Thread_local npzs_par *kept_q; /* the helper of -j N (batch_helper) */
static _Thread_local npzs_parser *kept_q_p;
static _Thread_local npzs_inv *kept_inv; /* --keep-going's walker */

npzs_inv *batch_inv(const opts *o) {
    if (!kept_inv) kept_inv = npzs_inv_new(&o->lim, NULL);
    else npzs_inv_reset(kept_inv);
    if (!kept_inv) fprintf(ERR, "npzstream: out of memory (--keep-going)\n");
    return kept_inv;
}

static npzs_parser *batch_parser(const opts *o) {
    npzs_parser *p = kept;
    if (p && kept_for == o) {
        kept = NULL;
        npzs_reset(p);
        if (p == kept_q_p) cli_unmap(); /* its helper's jobs are gone */
        return p;
    }
    return new_parser(o);
}

static void parser_done(npzs_parser *p, const opts *o) {
    if (!p) return;
    if (kept) {
        parser_free(p);
        return;
    }
    kept = p;
    kept_for = o;
}

/* Is a member's data read by more than the CRC-32: by the command (data: it reads the DATA and
 * BLOB events, as extract writes them), or by the parser for --sha256 or a policy's value checks
 * and hashes?  When it is not, the -j N helper keeps only each member's header
 * (npzs_par_skip_data) and the rest of a regular file may be mapped (drive). */
static int data_read(const opts *o, int data) { return data || o->policy || o->sha256; }

/* The helper of -j N (--inflate-threads) over p (data: the command reads the arrays' bytes): one
 * a thread too, over the thread's parser, kept with it from file to file (npzs_reset of the
 * parser resets the helper), so its workers start once for the batch, and only when a member is
 * large enough to gain from one.  NULL when its workers cannot be made. */
static npzs_par *batch_helper(npzs_parser *p, const opts *o, int data) {
    if (kept_q && kept_q_p == p) return kept_q;
    uint64_t held = o->jobs_memory ? o->jobs_memory : (uint64_t)o->jobs << 27;
    npzs_par *q = npzs_par_new(p, o->jobs, held);
    /* the workers keep only the headers unless the bytes are read */
    if (q && !data_read(o, data) && npzs_par_skip_data(q) != 0) {
        npzs_par_free(q);
        q = NULL;
    }
    if (q) {
        npzs_par_free(kept_q);
        if (kept_q) cli_unmap();
        kept_q = q;
        kept_q_p = p;
    }
    return q;
}

void parser_free(npzs_parser *p) {
    if (p && p == kept_q_p) {
        npzs_par_free(kept_q);
        cli_unmap();
        kept_q = NULL;
        kept_q_p = NULL;
    }
    npzs_free(p);
}

void batch_end(void) {
    npzs_inv_free(kept_inv);
    kept_inv = NULL;
    parser_free(kept);
    kept = NULL;
    kept_for = NULL;
    cli_read_buffer_free();
}

/* ---- the drive ----------------------------------------------------------------------------- */

typedef struct drive_ctx {
    npzs_parser *p;
    npzs_par *q; /* -j N: the parallel-inflate helper over p */
    event_fn fn;
    void *ctx;
    /* for map_rest and map_whole */
    int fd, tried;
    const char *label;
    uint64_t feed;
    char *err;
    size_t errlen;
    /* --keep-going */
    npzs_inv *inv;
    int final, eof; /* the parser's status (-1: none yet); the input ended */
} drive_ctx;

static int drive_push(void *vc, npzs_in *in) {
    drive_ctx *d = vc;
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(d->p, in, &ev); /* through the -j helper when one is attached */
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return rc == NPZS_E_NOMEM ? 2 : 1;
        if (d->fn(d->ctx, &ev) < 0) return 2;
        if (ev.type == NPZS_EV_END) return 0;
    }
}

static void drive_eof(void *vc) {
    drive_ctx *d = vc;
    npzs_finish(d->p);
}

/* --keep-going: the parser first (until its status), then the walker takes the whole slice; the
 * status is given back only once the input has ended. */
static int drive_push_inv(void *vc, npzs_in *in) {
    drive_ctx *d = vc;
    size_t from = in->pos;
    if (d->final < 0) {
        d->final = drive_push(d, in);
        if (d->final >= 0 && npzs_error(d->p)) npzs_inv_check_after(d->inv, npzs_error_offset(d->p));
    }
    if (npzs_inv_push(d->inv, (const uint8_t *)in->src + from, in->size - from) != 0) {
        fprintf(ERR, "npzstream: out of memory (--keep-going)\n");
        return 2;
    }
    in->pos = in->size;
    if (!d->eof) return -1;
    if (d->final < 0) {
        fprintf(ERR, "npzstream: internal error: no verdict\n");
        return 2;
    }
    return d->final;
}

static void drive_eof_inv(void *vc) {
    drive_ctx *d = vc;
    d->eof = 1;
    if (d->final < 0) drive_eof(d);
    npzs_inv_finish(d->inv);
}

/* The rest of a mapped file (io.c, "a regular file mapped") from `from` on, pushed in slices of
 * CLI_MAP_SLICE (or --feed) bytes: after each, the pages the parser has passed are dropped from
 * the process, so what stays resident is what the workers read ahead.  (The helper takes each
 * slice at once: its workers do not wait for the slices.)  A status as the read loop's, 2 with err
 * (or the message printed) when the file shrank or grew meanwhile. */
static int map_loop(drive_ctx *d, cli_map *m, uint64_t from) {
    size_t off = (size_t)from, slice = d->feed ? (size_t)d->feed : CLI_MAP_SLICE;
    int status = -1;
    while (status < 0 && off < m->len) {
        npzs_in in = {m->b + off, m->len - off < slice ? m->len - off : slice, 0};
        status = drive_push(d, &in);
        off += in.pos;
        cli_map_passed(m, npzs_consumed(d->p));
    }
    if (status < 0) {
        drive_eof(d);
        npzs_in none = {m->b + m->len, 0, 0};
        status = drive_push(d, &none);
        if (status < 0) {
            fprintf(ERR, "npzstream: internal error: no verdict\n");
            status = 2;
        }
    }
    if (cli_map_changed(m, d->fd)) {
        const char *why = "read: the file changed size while it was read";
        if (d->err) snprintf(d->err, d->errlen, "%s", why);
        else cli_say("npzstream", d->label, NULL, NULL, ": %s", why);
        status = 2;
    }
    return status;
}

/* The read loop's divert with one thread: once one read has filled the buffer (a file larger
 * than that), the rest of a regular file is mapped and pushed from there, then unmapped (no
 * worker reads it later).  The CRC-32 then reads the file's pages where they are, and the kernel
 * copies nothing: a 512 MiB .npy took 0.94x the time of reading it into a page-aligned buffer and
 * discarding it (bench/README.md, "A plain .npy mapped").  Once tried, a file that cannot be mapped is read on. */
static int map_whole(void *vc, uint64_t off) {
    drive_ctx *d = vc;
    if (d->tried || off < CLI_READ_SIZE) return -1;
    d->tried = 1;
    cli_map m;
    if (cli_map_file(d->fd, off, &m) < 0) return -1;
    int status = map_loop(d, &m, off);
    cli_unmap();
    return status;
}

/* The read loop's divert under -j N: once a worker has started, the rest of a regular file is
 * mapped (once tried, a file that cannot be is read on). */
static int map_rest(void *vc, uint64_t off) {
    drive_ctx *d = vc;
    if (d->tried || !npzs_par_threads(d->q)) return -1;
    d->tried = 1;
    cli_map m;
    if (cli_map_file(d->fd, off, &m) < 0) return -1;
    if (npzs_par_stable_input(d->q, 1) != 0) return -1; /* cannot happen: turning it on */
    return map_loop(d, &m, off);
}

/* input_helper's, the helper in *q (NULL without -j) */
static int attach_helper(npzs_parser *p, const opts *op, int data, npzs_par **q) {
    *q = NULL;
    if (op->jobs <= 1) return 0;
    if (!(*q = batch_helper(p, op, data))) {
        fprintf(ERR, "npzstream: --inflate-threads %u: cannot start the workers (out of memory)\n", op->jobs);
        return 2;
    }
    return npzs_par_stable_input(*q, 0) != 0 ? 2 : 0; /* cannot fail: a new input */
}

int input_helper(npzs_parser *p, const opts *op, int data) {
    npzs_par *q;
    return attach_helper(p, op, data, &q);
}

int drive(npzs_parser *p, int fd, const char *label, const opts *op, int data, event_fn fn, void *ctx, char *err,
          size_t errlen) {
    return drive_inv(p, NULL, fd, label, op, data, fn, ctx, err, errlen);
}

int drive_inv(npzs_parser *p, npzs_inv *inv, int fd, const char *label, const opts *op, int data, event_fn fn,
              void *ctx, char *err, size_t errlen) {
    drive_ctx d = {p, NULL, fn, ctx, fd, 0, label, op->feed, err, errlen, inv, -1, 0};
    int st = attach_helper(p, op, data, &d.q);
    if (st) return st;
    if (inv) /* every byte to the walker too: read to the end, never mapped */
        return cli_read_loop_err(fd, "npzstream", label, op->feed, drive_push_inv, drive_eof_inv, &d, err, errlen,
                                 NULL);
    /* mapped only where nothing but the CRC-32 reads the members' bytes (io.c, "a regular file mapped") */
    cli_divert_fn divert = data_read(op, data) ? NULL : d.q ? map_rest : map_whole;
    return cli_read_loop_err(fd, "npzstream", label, op->feed, drive_push, drive_eof, &d, err, errlen, divert);
}

/* ---- a FILE ---------------------------------------------------------------------------------- */

npzs_parser *open_parser(const char *path, const opts *op, const char **label, int *fd) {
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

int io_failure(const batch *b, const char *label, const char *why) {
    if (b->quiet) return 2;
    if (b->json || b->jsonl) print_io_json(OUT, b->jsonl ? label : NULL, why);
    cli_say("npzstream", label, NULL, NULL, ": %s",
            why); /* an I/O problem is said on stderr too (rejections never are) */
    return 2;
}

int file_begin(const char *path, const batch *b, file_run *r) {
    r->err[0] = 0;
    r->verdict = 0;
    r->inv = NULL;
    r->fd = cli_open(path, &r->label, r->err, sizeof r->err);
    if (r->fd < 0) return io_failure(b, r->label, r->err);
    r->p = batch_parser(&b->op);
    if (!r->p) {
        if (r->fd) close(r->fd);
        return 2;
    }
    if (b->sequence) npzs_npy_sequence(r->p);
    if (b->keep_going && !(r->inv = batch_inv(&b->op))) {
        file_end(r, b, NULL);
        return 2;
    }
    return -1;
}

int file_drive(file_run *r, const batch *b, event_fn fn, void *ctx) {
    int status = drive_inv(r->p, r->inv, r->fd, r->label, &b->op, 0, fn, ctx, r->err, sizeof r->err);
    if (status == 2 && r->err[0]) /* the input could not be read whole: no verdict, whatever the parser said */
        io_failure(b, r->label, r->err);
    else r->verdict = status == 0 || npzs_error(r->p);
    return status;
}

void file_end(file_run *r, const batch *b, out *o) {
    fflush(OUT);
    if (o) out_free(o);
    parser_done(r->p, &b->op);
    if (r->fd) close(r->fd);
}
