/* cmd_check.c -- `npzstream check`: the verdict, as text or as the fixed JSON contract. */
#include <stdio.h>

#include "cli.h"
#include "output.h"

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
    fprintf(f,
            "\n"
            "  --json                print one JSON object (the fixed contract of README.md; one FILE)\n"
            "  --jsonl               JSON Lines: one object per file, with a \"file\" key, flushed per file;\n"
            "                        a file that cannot be opened or read gets error.code \"io\"\n"
            "  -q, --quiet           print nothing: the exit status only\n"
            "  --files-from F        check the files named in F, one a line ('-': stdin), after the FILEs\n"
            "  -0, --null            the names in F are NUL-separated (find -print0); without it they\n"
            "                        are newline-separated and taken byte for byte (a '\\r' stays)\n"
            "  -P N, --parallel N    check N files at once (at most 64): the output in the input's\n"
            "                        order, the same bytes as one at a time\n"
            "  --keep-going          after a rejection, list every member the stream can still frame\n"
            "                        (local headers, then the central directory), each with its own\n"
            "                        status and error; the verdict stays the first error (README.md)\n"
            "  --sequence            the input is .npy arrays back to back (repeated np.save to one\n"
            "                        stream): each is a member; the end must fall between two arrays\n"
            "Sizes take a suffix: K M G T P E (powers of 1000), Ki Mi Gi Ti Pi Ei (powers of 1024).\n%s",
            limits_help());
}

static int check_cb(void *ctx, const npzs_event *ev) {
    if (check_report_event(ctx, ev) < 0) {
        fprintf(ERR, "npzstream: out of memory\n");
        return -1;
    }
    return 0;
}

static int check_file(const char *path, const batch *b, void *unused) {
    (void)unused;
    file_run r;
    int st = file_begin(path, b, &r);
    if (st >= 0) return st;
    check_report c; /* the report the WebAssembly module prints too (wasm/shim.c) */
    check_report_init(&c, b->json || b->jsonl, b->quiet, OUT);
    c.inv = r.inv;
    npzs_events(r.p, check_report_events(&c)); /* only the events the output reads */
    int status = file_drive(&r, b, check_cb, &c);
    if (r.verdict) check_report_verdict(&c, status == 0, r.p, r.label, b->jsonl ? r.label : NULL); /* once */
    wb_flush(&c.text);
    file_end(&r, b, &c.o);
    return status;
}

int cmd_check(int argc, char **argv) {
    batch b;
    int pr = batch_parse(argc, argv, &b, usage_check, usage);
    if (pr < 0) pr = batch_confine(&b);
    if (pr < 0) pr = batch_run(&b, check_file, NULL);
    batch_free(&b);
    return pr;
}
