/*
 * cmd_vlen.c -- `npzstream vlen`: validate one Zarr vlen-ndarray chunk
 * (numcodecs VLenBytes framing of ragged little-endian arrays).
 *
 *   npzstream vlen --dtype DTYPE --shape PATTERN [--json] [--feed N]
 *                  [--max-elements N] [--max-element-bytes N] [--max-total-bytes N] [FILE|-]
 *
 * Reads FILE or stdin sequentially.  Exit 0: accepted, 1: rejected (invalid
 * chunk, or a dtype / shape pattern the codec refuses), 2: usage, I/O or
 * out-of-memory error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sandbox.h"
#include "npzstream_vlen.h"

typedef struct vl_elem {
    uint32_t nbytes, crc;
} vl_elem;

typedef struct vl_out {
    vl_elem *e; /* --json: every element (the object lists them before the verdict) */
    size_t n, cap;
    int have_count;
    uint32_t count;
    const npzs_vlen_spec *text; /* text mode: each element's line is printed as it completes */
    wbuf w;
} vl_out;

static void vl_usage(FILE *f) {
    fprintf(f,
            "usage: npzstream vlen --dtype DTYPE --shape PATTERN [--json] [--feed N] [--no-sandbox]\n"
            "                      [--max-elements N] [--max-element-bytes N] [--max-total-bytes N] [FILE|-]\n"
            "Validates one vlen-ndarray chunk (numcodecs VLenBytes framing: u32 count, then per\n"
            "element u32 byte length + little-endian C-order data) read as a stream.\n"
            "  DTYPE    bool, int8..int64, uint8..uint64, float16/32/64, complex64/128, or '<f4' style\n"
            "  PATTERN  element shape with one leading variable dimension: null | null,2 | [null, 3, 4]\n"
            "  --no-sandbox  do not confine the process (by default, once FILE is open, it may read\n"
            "           nothing else, and never exec, fork or open a socket: npzstream --sandbox-info)\n"
            "Exit status: 0 accepted, 1 rejected, 2 usage or I/O error.\n");
}

static void vl_shape(wbuf *f, const npzs_vlen_spec *sp, uint64_t lead, int pattern) {
    wb_c(f, pattern ? '[' : '(');
    for (uint32_t k = 0; k < sp->ndim; k++) {
        if (k) wb_s(f, ", ");
        if (k == 0 && pattern == 1) wb_s(f, "null");
        else wb_fmt(f, "%" PRIu64, k ? sp->dims[k] : lead);
    }
    if (!pattern && sp->ndim == 1) wb_c(f, ',');
    wb_c(f, pattern ? ']' : ')');
}

/* A rejection's numbers when a limit decided it (npzs_vlen_error_limit): name NULL otherwise. */
typedef struct vl_limit {
    const char *name;
    uint64_t value, needed;
} vl_limit;

/* where: "input", "dtype" or "shape" */
static void vl_print_json(const vl_out *o, const npzs_vlen_spec *sp, int ok, int code, uint64_t off, long elem,
                          const char *where, const char *msg, const vl_limit *lim) {
    wbuf w, *f = &w;
    wb_init(f, stdout);
    wb_fmt(f, "{\"ok\": %s, \"dtype\": ", ok ? "true" : "false");
    if (sp) json_str(f, sp->dtype, strlen(sp->dtype));
    else wb_s(f, "null");
    wb_s(f, ", \"pattern\": ");
    if (sp) vl_shape(f, sp, 0, 1);
    else wb_s(f, "null");
    wb_s(f, ", \"count\": ");
    if (o->have_count) wb_fmt(f, "%" PRIu32, o->count);
    else wb_s(f, "null");
    wb_s(f, ", \"elements\": [");
    for (size_t i = 0; i < o->n; i++) {
        wb_s(f, i ? ", {\"shape\": " : "{\"shape\": ");
        vl_shape(f, sp, o->e[i].nbytes / sp->row_bytes, 2);
        wb_fmt(f, ", \"nbytes\": %" PRIu32 ", \"crc32\": %" PRIu32 "}", o->e[i].nbytes, o->e[i].crc);
    }
    wb_s(f, "], \"error\": ");
    if (ok) {
        wb_s(f, "null");
    } else {
        const char *name = npzs_vlen_error_name(code);
        wb_s(f, "{\"code\": ");
        json_str(f, name, strlen(name));
        wb_fmt(f, ", \"offset\": %" PRIu64 ", \"where\": \"%s\", \"element\": ", off, where);
        if (elem >= 0) wb_fmt(f, "%ld", elem);
        else wb_s(f, "null");
        wb_s(f, ", \"message\": ");
        json_str(f, msg, strlen(msg));
        if (lim->name) /* added in 0.8.0, as check --json's error.limit */
            wb_fmt(f, ", \"limit\": {\"name\": \"%s\", \"value\": %" PRIu64 ", \"needed\": %" PRIu64 "}", lim->name,
                   lim->value, lim->needed);
        wb_c(f, '}');
    }
    wb_s(f, "}\n");
    wb_flush(f);
}

static void vl_print_text(const vl_out *o, const npzs_vlen_spec *sp, int ok, int code, uint64_t off, long elem,
                          const char *where, const char *msg, const vl_limit *lim, const char *label) {
    wbuf w, *f = &w;
    wb_init(f, stdout);                /* the element lines went out as they came (vl_push) */
    safe_str(f, label, strlen(label)); /* a file's name: bytes from outside */
    if (ok) {
        wb_s(f, ": ok (vlen ");
        safe_str(f, sp->dtype, strlen(sp->dtype));
        wb_c(f, ' ');
        vl_shape(f, sp, 0, 1);
        wb_fmt(f, ", %zu element%s)\n", o->n, o->n == 1 ? "" : "s");
    } else {
        wb_fmt(f, ": REJECTED: %s at offset %" PRIu64, npzs_vlen_error_name(code), off);
        if (strcmp(where, "input") != 0) wb_fmt(f, " of --%s", where);
        if (elem >= 0) wb_fmt(f, " (element %ld)", elem);
        wb_s(f, ": ");
        safe_words(f, msg, strlen(msg));
        if (lim->name) wb_fmt(f, " (needs %" PRIu64 "; %s is %" PRIu64 ")", lim->needed, lim->name, lim->value);
        wb_c(f, '\n');
    }
    wb_flush(f);
}

static int vl_push(vl_out *o, const npzs_vlen_event *ev) {
    if (ev->type == NPZS_VLEN_EV_CHUNK_BEGIN) {
        o->have_count = 1;
        o->count = ev->count;
    } else if (ev->type == NPZS_VLEN_EV_ELEMENT_END && o->text) { /* memory stays flat */
        wb_fmt(&o->w, "  [%zu] ", o->n);
        vl_shape(&o->w, o->text, ev->nbytes / o->text->row_bytes, 0);
        wb_fmt(&o->w, " %" PRIu32 " bytes, crc32 %08" PRIx32 "\n", ev->nbytes, ev->crc32);
        o->n++;
    } else if (ev->type == NPZS_VLEN_EV_ELEMENT_END) {
        vl_elem *ne = table_room(o->e, &o->cap, o->n, sizeof *o->e, 64);
        if (!ne) return -1;
        o->e = ne;
        o->e[o->n].nbytes = ev->nbytes;
        o->e[o->n].crc = ev->crc32;
        o->n++;
    }
    return 0;
}

typedef struct vl_drive {
    npzs_vlen_parser *p;
    vl_out *o;
} vl_drive;

static int vl_push_input(void *vc, npzs_in *in) {
    vl_drive *d = vc;
    for (;;) {
        npzs_vlen_event ev;
        memset(&ev, 0, sizeof ev); /* (written by every NPZS_EVENT; the optimiser cannot see that) */
        int rc = npzs_vlen_next(d->p, in, &ev);
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return 1;
        if (vl_push(d->o, &ev) < 0) {
            fprintf(stderr, "npzstream vlen: out of memory\n");
            return 2;
        }
        if (ev.type == NPZS_VLEN_EV_END) return 0;
    }
}

static void vl_eof(void *vc) { npzs_vlen_finish(((vl_drive *)vc)->p); }

int cmd_vlen(int argc, char **argv) {
    int json = 0, no_sandbox = 0;
    uint64_t feed = 0, v;
    const char *path = NULL, *dtype = NULL, *pattern = NULL;
    npzs_vlen_limits lim;
    npzs_vlen_limits_default(&lim);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-sandbox")) {
            no_sandbox = 1;
        } else if (!strcmp(a, "--dtype") || !strcmp(a, "--shape")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "npzstream vlen: %s needs a value\n", a);
                return 2;
            }
            if (!strcmp(a, "--dtype")) dtype = argv[++i];
            else pattern = argv[++i];
        } else if (!strcmp(a, "--feed") || !strcmp(a, "--max-elements") || !strcmp(a, "--max-element-bytes") ||
                   !strcmp(a, "--max-total-bytes")) {
            if (i + 1 >= argc || cli_parse_u64(argv[i + 1], &v) < 0) {
                fprintf(stderr, "npzstream vlen: %s needs a non-negative integer\n", a);
                return 2;
            }
            i++;
            if (!strcmp(a, "--feed")) feed = v;
            else if (!strcmp(a, "--max-elements")) lim.max_elements = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
            else if (!strcmp(a, "--max-element-bytes"))
                lim.max_element_bytes = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
            else lim.max_total_bytes = v;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            vl_usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream vlen: unknown option %s\n", a);
            vl_usage(stderr);
            return 2;
        } else if (path) {
            fprintf(stderr, "npzstream vlen: only one FILE\n");
            return 2;
        } else {
            path = a;
        }
    }
    if (!dtype || !pattern) {
        fprintf(stderr, "npzstream vlen: --dtype and --shape are required\n");
        vl_usage(stderr);
        return 2;
    }
    if (lim.max_total_bytes < 4) {
        fprintf(stderr, "npzstream vlen: --max-total-bytes must be at least 4\n");
        return 2;
    }
    const char *label = path && strcmp(path, "-") != 0 ? path : "-";
    vl_out o;
    memset(&o, 0, sizeof o);

    /* the dtype and pattern come from array metadata: a bad one is a rejection */
    npzs_vlen_spec spec;
    size_t at = 0;
    const char *why = NULL;
    int rc = npzs_vlen_spec_parse(&spec, dtype, pattern, &at, &why);
    if (rc < 0) {
        const char *where = rc == NPZS_E_VLEN_BAD_DTYPE ? "dtype" : "shape";
        vl_limit none = {NULL, 0, 0};
        if (json) vl_print_json(&o, NULL, 0, rc, at, -1, where, why, &none);
        else {
            wbuf w;
            wb_init(&w, stdout);
            safe_str(&w, label, strlen(label));
            wb_fmt(&w, ": REJECTED: %s at offset %zu of --%s: %s\n", npzs_vlen_error_name(rc), at, where, why);
            wb_flush(&w);
        }
        return 1;
    }

    int fd = 0;
    if (path && strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "npzstream vlen: %s: %s\n", path, strerror(errno));
            return 2;
        }
    }
    npzs_vlen_parser *p = npzs_vlen_new(&spec, &lim, NULL);
    if (!p) {
        fprintf(stderr, "npzstream vlen: invalid limits or out of memory\n");
        if (fd) close(fd);
        return 2;
    }
    /* confined once its input is open, as check is (sandbox.h): reads nothing else, writes only
     * stdout and stderr */
    cli_confine_spec sb = {.prog = "npzstream vlen", .off = no_sandbox};
    if (cli_confine(&sb) < 0) {
        npzs_vlen_free(p);
        if (fd) close(fd);
        return 2;
    }
    if (!json) {
        o.text = &spec;
        wb_init(&o.w, stdout);
    }
    vl_drive d = {p, &o};
    int status = cli_read_loop(fd, "npzstream vlen", label, feed, vl_push_input, vl_eof, &d);
    if (!json) wb_flush(&o.w);
    if (status == 0 || npzs_vlen_error(p)) {
        int code = npzs_vlen_error(p);
        vl_limit lv;
        (void)npzs_vlen_error_limit(p, &lv.name, &lv.value, &lv.needed);
        if (json)
            vl_print_json(&o, &spec, status == 0, code, npzs_vlen_error_offset(p), npzs_vlen_error_element(p), "input",
                          npzs_vlen_error_message(p), &lv);
        else
            vl_print_text(&o, &spec, status == 0, code, npzs_vlen_error_offset(p), npzs_vlen_error_element(p), "input",
                          npzs_vlen_error_message(p), &lv, label);
    }
    free(o.e);
    npzs_vlen_free(p);
    if (fd) close(fd);
    return status;
}
