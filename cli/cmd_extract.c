/* cmd_extract.c -- `npzstream extract`: one member out, removed again if the archive is rejected. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "cli.h"

void usage_extract(FILE *f) {
    fprintf(f,
            "usage: npzstream extract KEY [-o OUT] [OPTIONS] [FILE|-]\n"
            "Streams member KEY of an .npz (the np.load key 'x' or the name 'x.npy') to OUT or\n"
            "stdout: an array as a standalone .npy (its header and data), any other member as its\n"
            "raw bytes.  The archive is read to its end: if it is rejected after the member was\n"
            "written, OUT is removed (stdout: a message says the output must be discarded).\n"
            "  -o, --output OUT      write to OUT instead of stdout ('-' is stdout)\n"
            "%s"
            "Exit status: 0 extracted and the archive accepted, 1 rejected (invalid or unsafe\n"
            "input), 2 usage or I/O error, or KEY is not in a valid archive.\n", LIMITS_HELP);
}


typedef struct ex_ctx {
    const char *key, *out_path; /* out_path NULL: stdout */
    int fd;                     /* output, -1 until the member begins */
    int state;                  /* 0 looking, 1 writing the member, 2 member written */
    int created;                /* we opened out_path (remove it on rejection) */
    uint64_t written;
} ex_ctx;

static int write_all(ex_ctx *c, const void *buf, size_t n) {
    const unsigned char *b = buf;
    while (n) {
        ssize_t w = write(c->fd, b, n);
        if (w < 0) {
            if (errno == EINTR) continue;
            fprintf(stderr, "npzstream: %s: write: %s\n", c->out_path ? c->out_path : "stdout", strerror(errno));
            return -1;
        }
        b += w;
        n -= (size_t)w;
        c->written += (uint64_t)w;
    }
    return 0;
}

/* Does the member name match KEY (np.load's key: the name without ".npy", or the name)? */
static int key_matches(const char *key, const char *name, size_t len) {
    size_t kl = strlen(key);
    if (kl == len && memcmp(key, name, len) == 0) return 1;
    return len > 4 && kl == len - 4 && memcmp(name + kl, ".npy", 4) == 0 && memcmp(key, name, kl) == 0;
}

static int ex_cb(void *ctx, const npzs_event *ev) {
    ex_ctx *c = ctx;
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        if (c->state == 0 && ev->name && key_matches(c->key, ev->name, ev->name_len)) {
            if (c->out_path) {
                c->fd = open(c->out_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0666);
                if (c->fd < 0) {
                    fprintf(stderr, "npzstream: %s: %s\n", c->out_path, strerror(errno));
                    return -1;
                }
                c->created = 1;
            } else {
                c->fd = 1;
            }
            c->state = 1;
        }
        break;
    case NPZS_EV_HEADER:
        if (c->state == 1) /* the member's own preamble and header, byte for byte */
            return write_all(c, ev->array->header, ev->array->header_size);
        break;
    case NPZS_EV_DATA:
    case NPZS_EV_BLOB:
        if (c->state == 1) return write_all(c, ev->data, ev->len);
        break;
    case NPZS_EV_MEMBER_END:
        if (c->state == 1) c->state = 2;
        break;
    default:
        break;
    }
    return 0;
}

int cmd_extract(int argc, char **argv) {
    const char *path = NULL;
    ex_ctx c;
    memset(&c, 0, sizeof c);
    c.fd = -1;
    opts op;
    opts_init(&op);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "-o") || !strcmp(a, "--output")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npzstream: %s needs a file name\n", a);
                return 2;
            }
            c.out_path = argv[++i];
        } else if (!strncmp(a, "--output=", 9)) {
            c.out_path = a + 9;
        } else if ((r = parse_limit(&op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_extract(stdout);
            return 0;
        } else if (!strcmp(a, "--")) {
            for (i++; i < argc; i++) {
                if (!c.key) c.key = argv[i];
                else if (!path) path = argv[i];
                else { fprintf(stderr, "npzstream: only one FILE\n"); return 2; }
            }
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            usage_extract(stderr);
            return 2;
        } else if (!c.key) {
            c.key = a;
        } else if (path) {
            fprintf(stderr, "npzstream: only one FILE\n");
            return 2;
        } else {
            path = a;
        }
    }
    if (!c.key) {
        fprintf(stderr, "npzstream: extract needs a KEY\n");
        usage_extract(stderr);
        return 2;
    }
    if (c.out_path && (!*c.out_path || !strcmp(c.out_path, "-"))) c.out_path = NULL;
    if (!c.out_path && isatty(1)) {
        fprintf(stderr, "npzstream: refusing to write binary data to a terminal: use -o OUT or redirect\n");
        return 2;
    }
    const char *label;
    int fd;
    npzs_parser *p = start(path, &op, &label, &fd);
    if (!p) return 2;
    int status = drive(p, fd, label, op.feed, ex_cb, &c);
    if (c.created && close(c.fd) < 0 && status == 0) {
        fprintf(stderr, "npzstream: %s: %s\n", c.out_path, strerror(errno));
        status = 2;
    }
    if (status == 0 && c.state != 2) {
        if (npzs_format_of(p) == NPZS_FORMAT_NPY)
            fprintf(stderr, "npzstream: %s: a plain .npy has no members: nothing to extract\n", label);
        else
            fprintf(stderr, "npzstream: %s: %s: no such member\n", label, c.key);
        status = 2;
    }
    if (status == 1) error_line(label, p);
    if (status != 0 && c.state != 0) {
        const char *why = status == 1 ? "the archive was rejected" : "extraction failed";
        if (c.created) {
            if (unlink(c.out_path) == 0)
                fprintf(stderr, "npzstream: %s: removed: %s after the member was written\n", c.out_path, why);
            else
                fprintf(stderr, "npzstream: %s: %s, but it cannot be removed (%s): discard it\n", c.out_path, why,
                        strerror(errno));
        } else {
            fprintf(stderr,
                    "npzstream: %s: the %" PRIu64 " bytes written to stdout must be discarded\n", why, c.written);
        }
    }
    npzs_free(p);
    if (fd) close(fd);
    return status;
}
