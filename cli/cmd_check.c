/* cmd_check.c -- `npzstream check`: the verdict, as text or as the fixed JSON contract. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"

void usage(FILE *f) {
    fprintf(f,
            "usage: npzstream check [--json] [--feed N] [--max-header-size N] [--max-members N]\n"
            "                       [--max-total-bytes N] [FILE|-]\n"
            "       npzstream --version\n"
            "Validates a NumPy .npy or .npz file read as a stream (FILE, or stdin for '-').\n"
            "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error.\n");
}

void usage_check(FILE *f) {
    usage(f);
    fprintf(f, "\n  --json                print one JSON object (the fixed contract of README.md)\n%s",
            LIMITS_HELP);
}


typedef struct check_ctx {
    int json;       /* keep every member for the JSON object; else print each when complete */
    out o;          /* --json: the members */
    size_t members; /* completed members */
    /* without --json: the member being read (its name, dtype and shape copied from the events,
     * whose pointers last only until the next call), printed when it completes */
    member cur;
    char *name;
    size_t name_cap;
    char dtype[64];
    uint64_t shape[64];
    wbuf text;
} check_ctx;

static int check_text(check_ctx *c, const npzs_event *ev) {
    member *m = &c->cur;
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        member_begin(m, ev);
        if (ev->name) {
            if (ev->name_len > c->name_cap) {
                char *nn = realloc(c->name, ev->name_len);
                if (!nn) return -1;
                c->name = nn;
                c->name_cap = ev->name_len;
            }
            memcpy(c->name, ev->name, ev->name_len);
            m->name = c->name;
            m->name_len = (uint32_t)ev->name_len;
        }
        break;
    case NPZS_EV_HEADER: {
        const npzs_array_info *a = ev->array;
        size_t dl = strlen(a->dtype);
        if (dl >= sizeof c->dtype) dl = sizeof c->dtype - 1;
        memcpy(c->dtype, a->dtype, dl);
        c->dtype[dl] = 0;
        member_header(m, a);
        if (m->ndim > 64) m->ndim = 64; /* the library's maximum */
        memcpy(c->shape, a->shape, m->ndim * sizeof *c->shape);
        m->dtype = c->dtype;
        m->shape = c->shape;
        break;
    }
    case NPZS_EV_MEMBER_END:
        member_end(m, ev);
        text_member(&c->text, m);
        c->members++;
        break;
    default:
        break;
    }
    return 0;
}

static int check_cb(void *ctx, const npzs_event *ev) {
    check_ctx *c = ctx;
    if ((c->json ? on_event(&c->o, ev) : check_text(c, ev)) < 0) {
        fprintf(stderr, "npzstream: out of memory\n");
        return -1;
    }
    if (c->json && ev->type == NPZS_EV_MEMBER_END) c->members++;
    return 0;
}


int cmd_check(int argc, char **argv) {
    int json = 0;
    const char *path = NULL;
    opts op;
    opts_init(&op);
    int pr = parse_args(argc, argv, &op, &json, &path, usage_check, usage);
    if (pr >= 0) return pr;
    const char *label;
    int fd;
    npzs_parser *p = start(path, &op, &label, &fd);
    if (!p) return 2;
    check_ctx c;
    memset(&c, 0, offsetof(check_ctx, text));
    c.json = json;
    wb_init(&c.text, stdout);
    int status = drive(p, fd, label, op.feed, check_cb, &c);
    npzs_format fmt = npzs_format_of(p);
    if (status == 0 || npzs_error(p)) { /* a verdict (I/O errors have none) */
        if (json) print_json(&c.o, status == 0, fmt, p, 0);
        else text_verdict(&c.text, c.members, status == 0, fmt, p, label);
        if (status != 0) error_line(label, p);
    }
    wb_flush(&c.text);
    out_free(&c.o);
    free(c.name);
    npzs_free(p);
    if (fd) close(fd);
    return status;
}
