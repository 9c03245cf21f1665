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
            "usage: npzstream check [--json | --jsonl | -q] [--policy FILE] [--sha256] [-P N] [--feed N]\n"
            "                       [--max-total-bytes N] [LIMITS] [--sequence] [--files-from F [-0]] [FILE|-]...\n"
            "       npzstream --version\n"
            "Validates NumPy .npy or .npz files read as a stream (FILEs, or stdin for '-' or none).\n"
            "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error;\n"
            "with several files the worst of them.\n");
}

void usage_check(FILE *f) {
    usage(f);
    fprintf(f, "\n"
               "  --json                print one JSON object (the fixed contract of README.md; one FILE)\n"
               "  --jsonl               JSON Lines: one object per file, with a \"file\" key, flushed per file;\n"
               "                        a file that cannot be opened or read gets error.code \"io\"\n"
               "  -q, --quiet           print nothing: the exit status only\n"
               "  --files-from F        check the files named in F, one a line ('-': stdin), after the FILEs\n"
               "  -0, --null            the names in F are NUL-separated (find -print0); without it they\n"
               "                        are newline-separated and taken byte for byte (a '\\r' stays)\n"
               "  -P N, --parallel N    check N files at once (at most 64): the output in the input's\n"
               "                        order, the same bytes as one at a time\n"
               "  --sequence            the input is .npy arrays back to back (repeated np.save to one\n"
               "                        stream): each is a member; the end must fall between two arrays\n"
               "Sizes take a suffix: K M G T P E (powers of 1000), Ki Mi Gi Ti Pi Ei (powers of 1024).\n%s",
            limits_help());
}


typedef struct check_ctx {
    int json;       /* keep every member for the JSON object; else print each when complete */
    out o;          /* --json: the members */
    size_t members; /* completed members */
    int quiet;
    wbuf text;
    /* without --json: the array part of a member's line, kept while the headers repeat byte for
     * byte (the same header says the same dtype and shape) */
    char arr[TEXT_ARRAY_MAX];
    size_t arr_len;
    uint8_t key[256];
    size_t key_len; /* 0: no text kept */
} check_ctx;

/* Text: the parser delivers MEMBER_END alone (check_file), which names the member and, for an
 * array, points at its header: everything the line prints. */
static int check_text(check_ctx *c, const npzs_event *ev) {
    if (ev->type != NPZS_EV_MEMBER_END) return 0;
    c->members++;
    if (c->quiet) return 0;
    const npzs_array_info *a = ev->array;
    if (a && !(a->header_size && a->header_size == c->key_len && memcmp(a->header, c->key, c->key_len) == 0)) {
        c->arr_len = text_array(c->arr, a);
        c->key_len = a->header_size <= sizeof c->key ? (size_t)a->header_size : 0;
        memcpy(c->key, a->header, c->key_len);
    }
    /* MEMBER_END repeats the name (NULL for a .npy) */
    text_member(&c->text, ev->name, ev->name_len, a ? c->arr : NULL, c->arr_len, ev->size, ev->method, ev->data_crc32,
                ev->sniff, ev->sha256);
    return 0;
}

static int check_cb(void *ctx, const npzs_event *ev) {
    check_ctx *c = ctx;
    if ((c->json ? on_event(&c->o, ev) : check_text(c, ev)) < 0) {
        fprintf(ERR, "npzstream: out of memory\n");
        return -1;
    }
    if (c->json && ev->type == NPZS_EV_MEMBER_END) c->members++;
    return 0;
}


static int check_file(const char *path, const batch *b, void *unused) {
    (void)unused;
    char err[256] = "";
    file_run r;
    int st = file_begin(path, b, &r, err, sizeof err);
    if (st >= 0) return st;
    npzs_parser *p = r.p;
    const char *label = r.label;
    /* only the events the output reads: MEMBER_END (with the array's header) a member for text */
    unsigned want = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    if (b->json || b->jsonl) want |= NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_HEADER);
    npzs_events(p, want);
    check_ctx c;
    memset(&c, 0, offsetof(check_ctx, text));
    c.json = b->json || b->jsonl;
    c.quiet = b->quiet;
    wb_init(&c.text, OUT);
    c.key_len = 0;
    int status = drive(p, r.fd, label, &b->op, 0, check_cb, &c, err, sizeof err);
    npzs_format fmt = npzs_format_of(p);
    if (status == 2 && err[0]) { /* the input could not be read whole: no verdict, whatever the parser said */
        io_failure(b, label, err);
    } else if (status == 0 || npzs_error(p)) { /* a verdict */
        if (b->quiet) {
        } else if (c.json) {
            print_json(&c.o, status == 0, fmt, p, 0, b->jsonl ? label : NULL);
        } else {
            text_verdict(&c.text, c.members, status == 0, fmt, p, label); /* the verdict, once */
        }
    }
    wb_flush(&c.text);
    file_end(&r, b, &c.o);
    return status;
}

int cmd_check(int argc, char **argv) {
    batch b;
    int pr = batch_parse(argc, argv, &b, usage_check, usage);
    if (pr < 0) pr = batch_run(&b, check_file, NULL);
    batch_free(&b);
    return pr;
}
