/* cmd_ls.c -- `npzstream ls`: the members as they stream past, then the verdict. */
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
#include "../report/keep.h"

void usage_ls(FILE *f) {
    fprintf(f,
            "usage: npzstream ls [--json | --jsonl | -q] [OPTIONS] [--files-from F [-0]] [FILE|-]...\n"
            "Lists the members of an .npz (or the array of an .npy) as they stream past: data and\n"
            "stored sizes, kind, method, dtype, shape, order and name, then a summary line with\n"
            "the verdict.  Rows are provisional until the summary says ok.  Several files: a\n"
            "table each, under its name.\n"
            "  --json                one JSON object: check's fields plus offset, size,\n"
            "                        stored_size, data_size, crc32 per member and a summary\n"
            "                        (input_bytes only when the input is accepted)\n"
            "  --jsonl               one such object per file, with a \"file\" key\n"
            "  --keep-going          after a rejection, list every member the stream can still\n"
            "                        frame, each with its status and error (as for check)\n"
            "  -q, --files-from, -0, -P N, --sequence: as for check\n"
            "%s%s",
            limits_help(), EXIT_HELP);
}

typedef struct ls_ctx {
    out o;
    int json, quiet;
} ls_ctx;

static void ls_row(const member *m) {
    char shape[64 * 22 + 8];
    size_t k = 0;
    if (m->kind == NPZS_KIND_ARRAY) {
        shape[k++] = '(';
        for (uint32_t d = 0; d < m->ndim; d++)
            k += (size_t)snprintf(shape + k, sizeof shape - k, d ? ", %" PRIu64 : "%" PRIu64, m->shape[d]);
        k += (size_t)snprintf(shape + k, sizeof shape - k, "%s)", m->ndim == 1 ? "," : "");
    } else {
        k += (size_t)snprintf(shape, sizeof shape, "-");
    }
    int arr = m->kind == NPZS_KIND_ARRAY;
    fprintf(OUT, "%12" PRIu64 " %12" PRIu64 "  %-5s  %-8s  %-10s %-16s %-5s  ", DATA_SIZE(m), m->csize,
            arr ? "array" : "blob", m->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored",
            arr ? (m->dtext ? m->dtext : m->dtype) : "-", shape, arr ? (m->fortran ? "F" : "C") : "-");
    wbuf w;
    wb_init(&w, OUT);
    if (m->name) safe_str(&w, m->name, m->name_len);
    else wb_c(&w, '-');
    wb_c(&w, '\n');
    wb_flush(&w);
}

static int ls_cb(void *ctx, const npzs_event *ev) {
    ls_ctx *c = ctx;
    if (out_event(&c->o, ev) < 0) {
        fprintf(ERR, "npzstream: out of memory\n");
        return -1;
    }
    if (ev->type == NPZS_EV_MEMBER_END && !c->json && !c->quiet) ls_row(&c->o.m[c->o.n - 1]);
    return 0;
}

static int ls_file(const char *path, const batch *b, void *vmany) {
    int many = *(int *)vmany;
    file_run r;
    int st = file_begin(path, b, &r);
    if (st >= 0) return st;
    npzs_parser *p = r.p;
    const char *label = r.label;
    ls_ctx c;
    memset(&c, 0, sizeof c);
    c.json = b->json || b->jsonl;
    c.quiet = b->quiet;
    if (!c.json && !c.quiet) {
        if (many) {
            wbuf w;
            wb_init(&w, OUT);
            safe_str(&w, label, strlen(label));
            wb_s(&w, ":\n");
            wb_flush(&w);
        }
        fprintf(OUT,
                "%12s %12s  %-5s  %-8s  %-10s %-16s %-5s  %s\n"
                "------------ ------------  -----  --------  ---------- ---------------- -----  ----\n",
                "Data", "Stored", "Kind", "Method", "DType", "Shape", "Order", "Name");
    }
    int status = file_drive(&r, b, ls_cb, &c);
    npzs_format fmt = npzs_format_of(p);
    if (r.verdict && !b->quiet) {
        if (c.json) {
            print_json_kept(OUT, &c.o, status == 0, fmt, p, 1, b->jsonl ? label : NULL, r.inv);
        } else {
            uint64_t td = 0, ts = 0;
            for (size_t i = 0; i < c.o.n; i++) {
                td += DATA_SIZE(&c.o.m[i]);
                ts += c.o.m[i].csize;
            }
            fprintf(OUT, "------------ ------------\n");
            if (status == 0) {
                fprintf(OUT, "%12" PRIu64 " %12" PRIu64 "  %s, %zu member%s, %" PRIu64 " bytes read: ok\n", td, ts,
                        fmt == NPZS_FORMAT_NPY ? "npy" : "npz", c.o.n, c.o.n == 1 ? "" : "s", npzs_consumed(p));
            } else { /* the verdict, once: REJECTED (code), then the error with its rule and hint */
                fprintf(OUT, "%12" PRIu64 " %12" PRIu64 "  %zu member%s before the error: REJECTED (%s)\n", td, ts,
                        c.o.n, c.o.n == 1 ? "" : "s", npzs_error_name(npzs_error(p)));
                wbuf w;
                wb_init(&w, OUT);
                wb_s(&w, "  ");
                text_rejection(&w, p);
                wb_flush(&w);
            }
            if (r.inv) {
                wbuf w;
                wb_init(&w, OUT);
                text_kept(&w, r.inv, c.o.n, status == 0 ? NULL : p);
                wb_flush(&w);
            }
            if (many) fprintf(OUT, "\n");
        }
    }
    file_end(&r, b, &c.o);
    return status;
}

int cmd_ls(int argc, char **argv) {
    batch b;
    int pr = batch_parse(argc, argv, &b, usage_ls, usage_ls);
    if (pr < 0) {
        int many = b.npaths > 1 || b.files_from != NULL;
        pr = batch_confine(&b);
        if (pr < 0) pr = batch_run(&b, ls_file, &many);
    }
    batch_free(&b);
    return pr;
}
