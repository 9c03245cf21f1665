/* cmd_refs.c -- `npzstream refs`: a kerchunk reference set (version 1) for the stored arrays of
 * an accepted .npz (or .npy), printed only after the verdict.
 *
 * A stored member's array data is one run of bytes of the file, at its content's start plus its
 * .npy header's length: a zarr v2 array of one chunk (chunks = shape, no compressor, no filter,
 * the header's dtype and order) whose chunk is that range.  What zarr could not read as
 * np.load does is listed in the group's attributes (.zattrs, "npzstream") with the reason, and
 * never referenced: deflated members (raw deflate with a .npy header inside: no standard codec
 * reads it), structured dtypes, dtypes zarr has not (long double, empty items), members that are
 * not arrays, and keys that are not zarr names.
 * The same set as npzstream.refs() in Python (python/src/npzstream/references.py): both follow
 * refs_reason() below, and tests/engines/test_refs.py compares them. */
#define _GNU_SOURCE
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sandbox.h"
#include "output.h"

void usage_refs(FILE *f) {
    fprintf(f,
            "usage: npzstream refs [--url URL] [OPTIONS] [FILE|-]\n"
            "Prints a kerchunk reference set (JSON, version 1) for the stored arrays of FILE, once\n"
            "the whole file was accepted: a zarr v2 group (an array for a .npy) in which each stored\n"
            "array is one chunk, a byte range of FILE.  fsspec's reference filesystem and zarr read\n"
            "them as np.load does.  Deflated members, structured dtypes, dtypes zarr has not (long\n"
            "double, empty items), members that are not arrays and keys that are not zarr names are\n"
            "not referenced: the group's attributes\n"
            "(\"npzstream\" in .zattrs) list every member with the reason.  A rejected file prints\n"
            "nothing on stdout (the rejection on stderr).\n"
            "  --url URL             the URL the references name (default: FILE as given; needed\n"
            "                        for stdin)\n"
            "%s%s",
            limits_help(), EXIT_HELP);
}

/* What the references need beyond the member list (out): where each array's data starts. */
typedef struct refs_ctx {
    out o;
    uint64_t *data_at; /* per member: content start + header length (UINT64_MAX: no header) */
    size_t cap;
    int bad_offset; /* a stored array's first DATA byte was not where its header ends */
} refs_ctx;

static int refs_cb(void *ctx, const npzs_event *ev) {
    refs_ctx *c = ctx;
    if (ev->type == NPZS_EV_DATA) { /* stored data arrives in place: it must start after the header */
        if (ev->pos == 0 && ev->zero_copy && c->o.n < c->cap && c->data_at[c->o.n] != ev->offset) c->bad_offset = 1;
        return 0;
    }
    if (out_event(&c->o, ev) < 0) goto nomem;
    if (ev->type == NPZS_EV_MEMBER_BEGIN) {
        uint64_t *d = table_room(c->data_at, &c->cap, c->o.n, sizeof *c->data_at, 16);
        if (!d) goto nomem;
        c->data_at = d;
        c->data_at[c->o.n] = UINT64_MAX;
    } else if (ev->type == NPZS_EV_HEADER) {
        c->data_at[c->o.n] = ev->offset + ev->array->header_len;
    }
    return 0;
nomem:
    fprintf(ERR, "npzstream: out of memory\n");
    return -1;
}

/* The key np.load gives the member (its name without ".npy"); a .npy has none (NULL). */
static size_t refs_key(const member *m) {
    size_t n = m->name_len;
    if (n > 4 && memcmp(m->name + n - 4, ".npy", 4) == 0) n -= 4;
    return n;
}

/* zarr reads the dtype as NumPy does: dtype.str is byte order, kind, item size (and a datetime's
 * unit); zarr has no long double ('<f16', '<c32') and no empty item ('|S0', '<U0', '|V0'). */
static int zarr_dtype(const char *dt) {
    if (strlen(dt) < 3) return 0;
    unsigned long size = strtoul(dt + 2, NULL, 10);
    switch (dt[1]) {
    case 'b':
    case 'i':
    case 'u':
    case 'M':
    case 'm': return 1;
    case 'f': return size == 2 || size == 4 || size == 8;
    case 'c': return size == 8 || size == 16;
    case 'S':
    case 'U':
    case 'V': return size > 0;
    default: return 0;
    }
}

/* Why a member is not referenced, or NULL when it is.  The order of the tests is the reason
 * given: python/src/npzstream/references.py's _reason() tests in the same order. */
static const char *refs_reason(const member *m) {
    if (m->kind != NPZS_KIND_ARRAY) return "not an array";
    if (m->method != NPZS_METHOD_STORED) return "deflated";
    if (m->dtext) return "structured dtype";
    if (!zarr_dtype(m->dtype)) return "dtype zarr cannot read";
    if (m->name) { /* a zarr node name: no '/' (a path in the group), no leading '.' (.zarray, ...) */
        size_t n = refs_key(m);
        if (memchr(m->name, '/', n) || m->name[0] == '.') return "key is not a zarr name";
    }
    return NULL;
}

/* A zarr v2 array's metadata (.zarray), keys in sorted order: chunks = shape (at least 1 each:
 * an empty array has no chunk), no compressor or filter, the header's dtype and order. */
static void zarray(wbuf *w, const member *m) {
    wb_s(w, "{\"chunks\":[");
    for (uint32_t d = 0; d < m->ndim; d++) wb_fmt(w, d ? ",%" PRIu64 : "%" PRIu64, m->shape[d] ? m->shape[d] : 1);
    wb_s(w, "],\"compressor\":null,\"dtype\":");
    json_str(w, m->dtype, strlen(m->dtype));
    wb_fmt(w, ",\"fill_value\":null,\"filters\":null,\"order\":\"%c\",\"shape\":[", m->fortran ? 'F' : 'C');
    for (uint32_t d = 0; d < m->ndim; d++) wb_fmt(w, d ? ",%" PRIu64 : "%" PRIu64, m->shape[d]);
    wb_s(w, "],\"zarr_format\":2}");
}

/* The group's (or the .npy array's) attributes: every member, referenced or why not. */
static void zattrs(wbuf *w, const out *o, npzs_format fmt) {
    wb_fmt(w, "{\"npzstream\":{\"format\":\"%s\",\"members\":[", fmt == NPZS_FORMAT_NPY ? "npy" : "npz");
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        const char *why = refs_reason(m);
        wb_s(w, i ? ",{\"key\":" : "{\"key\":");
        if (m->name) json_str(w, m->name, refs_key(m));
        else wb_s(w, "null");
        if (why) {
            wb_s(w, ",\"referenced\":false,\"reason\":");
            json_str(w, why, strlen(why));
            wb_c(w, '}');
        } else {
            wb_s(w, ",\"referenced\":true}");
        }
    }
    wb_s(w, "]}}");
}

/* Write the inner document made by fn as a JSON string (kerchunk keeps zarr metadata as text). */
static int inner(wbuf *w, void (*fn)(wbuf *, const void *, const void *), const void *a, const void *b) {
    char *text = NULL;
    size_t len = 0;
    FILE *mem = open_memstream(&text, &len);
    if (!mem) return -1;
    wbuf t;
    wb_init(&t, mem);
    fn(&t, a, b);
    wb_flush(&t);
    int bad = ferror(mem);
    if (fclose(mem) != 0 || bad) {
        free(text);
        return -1;
    }
    json_str(w, text, len);
    free(text);
    return 0;
}

static void zarray_fn(wbuf *w, const void *m, const void *unused) {
    (void)unused;
    zarray(w, m);
}
static void zattrs_fn(wbuf *w, const void *o, const void *fmt) { zattrs(w, o, *(const npzs_format *)fmt); }
static void zgroup_fn(wbuf *w, const void *a, const void *b) {
    (void)a;
    (void)b;
    wb_s(w, "{\"zarr_format\":2}");
}

/* "KEY/SUFFIX" as a JSON string (KEY empty: the root, "SUFFIX"). */
static int json_path(wbuf *w, const char *key, size_t key_len, const char *suffix) {
    size_t sl = strlen(suffix), n = key_len ? key_len + 1 + sl : sl;
    char *t = malloc(n ? n : 1);
    if (!t) return -1;
    if (key_len) {
        memcpy(t, key, key_len);
        t[key_len] = '/';
    }
    memcpy(t + (key_len ? key_len + 1 : 0), suffix, sl);
    json_str(w, t, n);
    free(t);
    return 0;
}

/* The chunk's reference: "KEY/0.0": ["URL", offset, length] (one chunk: index 0 on every axis;
 * "0" for a 0-d array). */
static int chunk_ref(wbuf *w, const member *m, size_t key_len, const char *url, uint64_t at) {
    char idx[2 * 64 + 2] = "0";
    for (uint32_t d = 1; d < m->ndim && d < 64; d++) memcpy(idx + 2 * d - 1, ".0", 3);
    wb_c(w, ',');
    if (json_path(w, m->name, key_len, idx) < 0) return -1;
    wb_c(w, ':');
    wb_c(w, '[');
    json_str(w, url, strlen(url));
    wb_fmt(w, ",%" PRIu64 ",%" PRIu64 "]", at, m->nbytes);
    return 0;
}

static int print_refs(const refs_ctx *c, npzs_format fmt, const char *url) {
    wbuf w;
    wb_init(&w, stdout);
    const out *o = &c->o;
    int root_array = fmt == NPZS_FORMAT_NPY && o->n == 1 && !refs_reason(&o->m[0]);
    wb_s(&w, "{\"version\":1,\"refs\":{");
    if (root_array) {
        wb_s(&w, "\".zarray\":");
        if (inner(&w, zarray_fn, &o->m[0], NULL) < 0) return -1;
    } else {
        wb_s(&w, "\".zgroup\":");
        if (inner(&w, zgroup_fn, NULL, NULL) < 0) return -1;
    }
    wb_s(&w, ",\".zattrs\":");
    if (inner(&w, zattrs_fn, o, &fmt) < 0) return -1;
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        if (refs_reason(m)) continue;
        size_t kl = m->name ? refs_key(m) : 0;
        if (kl) {
            wb_c(&w, ',');
            if (json_path(&w, m->name, kl, ".zarray") < 0) return -1;
            wb_c(&w, ':');
            if (inner(&w, zarray_fn, m, NULL) < 0) return -1;
        }
        if (m->nbytes && chunk_ref(&w, m, kl, url, c->data_at[i]) < 0) return -1;
    }
    wb_s(&w, "}}\n");
    wb_flush(&w);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : -1;
}

int cmd_refs(int argc, char **argv) {
    opts op;
    opts_init(&op);
    const char *path = NULL, *url = NULL;
    int status = 2;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "--url")) {
            if (i + 1 >= argc || !*argv[i + 1]) {
                fprintf(stderr, "npzstream: --url needs a URL\n");
                goto done;
            }
            url = argv[++i];
        } else if (!strncmp(a, "--url=", 6) && a[6]) {
            url = a + 6;
        } else if ((r = parse_limit(&op, argc, argv, &i)) != 0) {
            if (r < 0) goto done;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_refs(stdout);
            status = 0;
            goto done;
        } else if (a[0] == '-' && a[1] && strcmp(a, "--")) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            usage_refs(stderr);
            goto done;
        } else {
            if (!strcmp(a, "--")) {
                if (++i >= argc) break;
                a = argv[i];
                if (i + 1 < argc) {
                    fprintf(stderr, "npzstream: refs reads one FILE\n");
                    goto done;
                }
            }
            if (path) {
                fprintf(stderr, "npzstream: refs reads one FILE\n");
                goto done;
            }
            path = a;
        }
    }
    if (op.parallel > 1) {
        fprintf(stderr, "npzstream: -P is for check and ls (refs reads one file)\n");
        goto done;
    }
    if (!url && (!path || !strcmp(path, "-"))) {
        fprintf(stderr, "npzstream: refs of stdin needs --url URL (the references name it)\n");
        goto done;
    }
    const char *label;
    int fd;
    npzs_parser *p = open_parser(path, &op, &label, &fd);
    if (!p) goto done;
    /* confined once its input is open, as check is (sandbox.h): the references go to stdout */
    cli_confine_spec sb = {.prog = "npzstream", .off = op.no_sandbox, .hashing = op.sha256};
    if (cli_confine(&sb) < 0) {
        parser_free(p);
        if (fd) close(fd);
        goto done;
    }
    npzs_events(p, NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_DATA) |
                       NPZS_EV_BIT(NPZS_EV_MEMBER_END));
    refs_ctx c;
    memset(&c, 0, sizeof c);
    status = drive(p, fd, label, &op, 0, refs_cb, &c, NULL, 0);
    if (status == 1) {
        error_line(label, p);
    } else if (status == 0 && c.bad_offset) { /* cannot happen: the parser says where data is */
        fprintf(stderr, "npzstream: %s: a stored array's data is not where its header ends: no references\n", label);
        status = 2;
    } else if (status == 0 && print_refs(&c, npzs_format_of(p), url ? url : path) < 0) {
        fprintf(stderr, "npzstream: writing the references failed\n");
        status = 2;
    }
    out_free(&c.o);
    free(c.data_at);
    parser_free(p);
    if (fd) close(fd);
done:
    opts_free(&op);
    return status;
}
