/*
 * npzstream -- command-line front end.
 *
 *   npzstream check [--json] [--feed N] [--max-header-size N] [--max-members N]
 *                   [--max-total-bytes N] [FILE|-]
 *
 * Reads FILE or stdin sequentially (never seeks), validates it, prints a
 * summary (or one JSON object with --json).  Exit 0: accepted, 1: rejected,
 * 2: usage, I/O or out-of-memory error.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "npzstream.h"

#define READ_SIZE (1u << 20)

typedef struct member {
    char *name;          /* NULL for a plain .npy */
    size_t name_len;
    int kind, method;
    int vmaj, vmin, fortran;
    char dtype[48];
    uint32_t ndim;
    uint64_t shape[64];
    uint64_t nbytes, size;
    uint32_t data_crc;
} member;

typedef struct out {
    member *m;
    size_t n, cap;
    int open; /* m[n] was begun and not completed */
} out;

static void usage(FILE *f) {
    fprintf(f,
            "usage: npzstream check [--json] [--feed N] [--max-header-size N] [--max-members N]\n"
            "                       [--max-total-bytes N] [FILE|-]\n"
            "       npzstream --version\n"
            "Validates a NumPy .npy or .npz file read as a stream (FILE, or stdin for '-').\n"
            "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error.\n");
}

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

/* JSON string from raw bytes: valid UTF-8 passes through, anything else is \u00XX. */
static void json_str(FILE *f, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    fputc('"', f);
    for (size_t i = 0; i < n; i++) {
        unsigned char c = u[i];
        if (c == '"' || c == '\\') { fputc('\\', f); fputc(c, f); }
        else if (c < 0x20 || c == 0x7F) fprintf(f, "\\u%04x", c);
        else if (c < 0x80) fputc(c, f);
        else {
            size_t k = c >= 0xF0 ? 3 : c >= 0xE0 ? 2 : c >= 0xC0 ? 1 : 0;
            int ok = k > 0 && i + k < n;
            for (size_t j = 1; ok && j <= k; j++) ok = (u[i + j] & 0xC0) == 0x80;
            if (ok) { fwrite(u + i, 1, k + 1, f); i += k; }
            else fprintf(f, "\\u%04x", c);
        }
    }
    fputc('"', f);
}

static void json_key(FILE *f, const member *m) {
    size_t n = m->name_len;
    if (n > 4 && memcmp(m->name + n - 4, ".npy", 4) == 0) n -= 4;
    json_str(f, m->name, n);
}

static void print_json(const out *o, int ok, npzs_format fmt, const npzs_parser *p) {
    FILE *f = stdout;
    fprintf(f, "{\"ok\": %s, \"format\": %s, \"members\": [", ok ? "true" : "false",
            fmt == NPZS_FORMAT_NPY ? "\"npy\"" : fmt == NPZS_FORMAT_NPZ ? "\"npz\"" : "null");
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        fputs(i ? ", {" : "{", f);
        fputs("\"name\": ", f);
        if (m->name) json_str(f, m->name, m->name_len); else fputs("null", f);
        fputs(", \"key\": ", f);
        if (m->name) json_key(f, m); else fputs("null", f);
        fprintf(f, ", \"kind\": \"%s\", \"method\": \"%s\"", m->kind == NPZS_KIND_ARRAY ? "array" : "blob",
                m->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored");
        if (m->kind == NPZS_KIND_ARRAY) {
            fprintf(f, ", \"version\": [%d, %d], \"dtype\": ", m->vmaj, m->vmin);
            json_str(f, m->dtype, strlen(m->dtype));
            fputs(", \"shape\": [", f);
            for (uint32_t k = 0; k < m->ndim; k++) fprintf(f, k ? ", %" PRIu64 : "%" PRIu64, m->shape[k]);
            fprintf(f, "], \"fortran_order\": %s, \"nbytes\": %" PRIu64 ", \"data_crc32\": %" PRIu32 "}",
                    m->fortran ? "true" : "false", m->nbytes, m->data_crc);
        } else {
            fprintf(f, ", \"size\": %" PRIu64 ", \"data_crc32\": %" PRIu32 "}", m->size, m->data_crc);
        }
    }
    fputs("], \"error\": ", f);
    if (ok) {
        fputs("null", f);
    } else {
        int code = npzs_error(p);
        size_t nl;
        const char *nm = npzs_error_member_name(p, &nl);
        fprintf(f, "{\"code\": \"%s\", \"offset\": %" PRIu64 ", \"member\": ", npzs_error_name(code),
                npzs_error_offset(p));
        if (nm) json_str(f, nm, nl); else fputs("null", f);
        fputs(", \"message\": ", f);
        const char *msg = npzs_error_message(p);
        json_str(f, msg, strlen(msg));
        uint64_t co = npzs_error_content_offset(p);
        if (co != UINT64_MAX) fprintf(f, ", \"content_offset\": %" PRIu64, co);
        fputc('}', f);
    }
    fputs("}\n", f);
}

static void print_text(const out *o, int ok, npzs_format fmt, const npzs_parser *p, const char *path) {
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        if (m->name) printf("  %.*s: ", (int)m->name_len, m->name);
        else printf("  ");
        if (m->kind == NPZS_KIND_ARRAY) {
            printf("%s (", m->dtype);
            for (uint32_t k = 0; k < m->ndim; k++) printf(k ? ", %" PRIu64 : "%" PRIu64, m->shape[k]);
            printf("%s)%s, %" PRIu64 " bytes, %s, crc32 %08" PRIx32 "\n", m->ndim == 1 ? "," : "",
                   m->fortran ? " fortran" : "", m->nbytes,
                   m->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored", m->data_crc);
        } else {
            printf("blob, %" PRIu64 " bytes, %s, crc32 %08" PRIx32 "\n", m->size,
                   m->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored", m->data_crc);
        }
    }
    if (ok) {
        printf("%s: ok (%s, %zu member%s)\n", path, fmt == NPZS_FORMAT_NPY ? "npy" : "npz", o->n,
               o->n == 1 ? "" : "s");
    } else {
        size_t nl;
        const char *nm = npzs_error_member_name(p, &nl);
        printf("%s: REJECTED: %s at offset %" PRIu64, path, npzs_error_name(npzs_error(p)), npzs_error_offset(p));
        if (nm) printf(" (member %.*s)", (int)nl, nm);
        printf(": %s\n", npzs_error_message(p));
    }
}

/* Handle one event: keep what the summary needs.  Returns 0, or -1 on out of memory. */
static int on_event(out *o, const npzs_event *ev) {
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN: {
        if (o->n == o->cap) {
            size_t nc = o->cap ? o->cap * 2 : 16;
            member *nm = realloc(o->m, nc * sizeof *nm);
            if (!nm) return -1;
            o->m = nm;
            o->cap = nc;
        }
        member *m = &o->m[o->n];
        memset(m, 0, sizeof *m);
        m->method = ev->method;
        if (ev->name) {
            m->name = malloc(ev->name_len ? ev->name_len : 1);
            if (!m->name) return -1;
            memcpy(m->name, ev->name, ev->name_len);
            m->name_len = ev->name_len;
        }
        m->kind = NPZS_KIND_BLOB;
        o->open = 1;
        break; /* counted (o->n++) only when complete */
    }
    case NPZS_EV_HEADER: {
        member *m = &o->m[o->n];
        const npzs_array_info *a = ev->array;
        m->kind = NPZS_KIND_ARRAY;
        m->vmaj = a->version_major;
        m->vmin = a->version_minor;
        m->fortran = a->fortran_order;
        snprintf(m->dtype, sizeof m->dtype, "%s", a->dtype);
        m->ndim = a->ndim;
        memcpy(m->shape, a->shape, a->ndim * sizeof *a->shape);
        m->nbytes = a->nbytes;
        break;
    }
    case NPZS_EV_MEMBER_END: {
        member *m = &o->m[o->n];
        m->kind = ev->kind;
        m->data_crc = ev->data_crc32;
        m->size = ev->size;
        o->n++;
        o->open = 0;
        break;
    }
    default:
        break;
    }
    return 0;
}

static int cmd_check(int argc, char **argv) {
    int json = 0;
    uint64_t feed = 0, v;
    const char *path = NULL;
    npzs_limits lim;
    npzs_limits_default(&lim);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--json")) json = 1;
        else if (!strcmp(a, "--feed") || !strcmp(a, "--max-header-size") || !strcmp(a, "--max-members") ||
                 !strcmp(a, "--max-total-bytes")) {
            if (i + 1 >= argc || parse_u64(argv[i + 1], &v) < 0) {
                fprintf(stderr, "npzstream: %s needs a non-negative integer\n", a);
                return 2;
            }
            i++;
            if (!strcmp(a, "--feed")) feed = v;
            else if (!strcmp(a, "--max-header-size")) lim.max_header_size = v;
            else if (!strcmp(a, "--max-members")) {
                if (v > 0x7FFFFFFF) v = 0x7FFFFFFF;
                lim.max_members = (uint32_t)v;
            } else lim.max_total_bytes = v;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage(stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            usage(stderr);
            return 2;
        } else if (path) {
            fprintf(stderr, "npzstream: only one FILE\n");
            return 2;
        } else {
            path = a;
        }
    }
    int fd = 0;
    const char *label = "-";
    if (path && strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY);
        if (fd < 0) {
            fprintf(stderr, "npzstream: %s: %s\n", path, strerror(errno));
            return 2;
        }
        label = path;
    }
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_SIZE); /* a larger pipe where it is one; ignored otherwise */
#endif
    npzs_parser *p = npzs_new(&lim, NULL);
    if (!p) {
        fprintf(stderr, "npzstream: invalid limits or out of memory\n");
        if (fd) close(fd);
        return 2;
    }
    unsigned char *buf = malloc(READ_SIZE);
    out o = {0};
    int status = -1, eof = 0;
    npzs_format fmt = NPZS_FORMAT_UNKNOWN;
    if (!buf) { fprintf(stderr, "npzstream: out of memory\n"); status = 2; }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof) {
            r = read(fd, buf, READ_SIZE);
            if (r < 0) {
                if (errno == EINTR) continue;
                fprintf(stderr, "npzstream: %s: read: %s\n", label, strerror(errno));
                status = 2;
                break;
            }
            if (r == 0) { eof = 1; npzs_finish(p); }
        }
        size_t off = 0, len = (size_t)r;
        do {
            size_t n = len - off;
            if (feed && n > feed) n = (size_t)feed;
            npzs_in in = {buf + off, n, 0};
            for (;;) {
                npzs_event ev;
                int rc = npzs_next(p, &in, &ev);
                if (rc == NPZS_NEED_INPUT) break;
                if (rc == NPZS_EVENT) {
                    if (on_event(&o, &ev) < 0) { fprintf(stderr, "npzstream: out of memory\n"); status = 2; break; }
                    if (ev.type == NPZS_EV_END) { status = 0; break; }
                    continue;
                }
                if (rc == NPZS_DONE) { status = 0; break; }
                status = rc == NPZS_E_NOMEM ? 2 : 1;
                break;
            }
            off += in.pos;
            if (status >= 0) break;
            if (in.pos < in.size) { /* cannot happen: NEED_INPUT means all was used */
                fprintf(stderr, "npzstream: internal error: input left over\n");
                status = 2;
            }
        } while (off < len && status < 0);
        if (eof && status < 0) { fprintf(stderr, "npzstream: internal error: no verdict\n"); status = 2; }
    }
    fmt = npzs_format_of(p);
    if (status == 0 || npzs_error(p)) { /* a verdict (I/O errors have none) */
        if (json) print_json(&o, status == 0, fmt, p);
        else print_text(&o, status == 0, fmt, p, label);
    }
    for (size_t i = 0; i < o.n; i++) free(o.m[i].name);
    if (o.open) free(o.m[o.n].name); /* a member that was not completed */
    free(o.m);
    free(buf);
    npzs_free(p);
    if (fd) close(fd);
    return status;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("npzstream %s\n", NPZS_VERSION);
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        usage(stderr);
        return 2;
    }
    return cmd_check(argc - 2, argv + 2);
}
