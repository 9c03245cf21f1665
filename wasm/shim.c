/* shim.c -- the C side of the WebAssembly build: one validation a handle, driven by the JavaScript
 * module (wasm/npzstream.js) through the functions below, over the library's public API alone
 * and the report (report/, compiled into the wasm), which prints what `npzstream check` prints:
 * the JSON object of `npzstream check --json FILE` and the text of `npzstream check FILE`, byte
 * for byte, from the same events (check_report, as cli/cmd_check.c runs it).
 *
 *   nzs_new()  nzs_set(name, value)...  nzs_policy(json)  nzs_start(flags, label)
 *   (write up to nzs_in_cap() bytes at nzs_in(), nzs_push(n))...  nzs_finish()
 *   nzs_take(): what was printed since the last call (JSON, text, or a setup fault)
 *   nzs_free()
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../report/report.h"

#define NZS_EXPORT __attribute__((used, visibility("default")))
#define IN_CAP (1u << 20) /* bytes a push: the JavaScript side splits larger chunks */

enum { NZS_GOING = -1, NZS_OK = 0, NZS_REJECTED = 1, NZS_ERROR = 2 };

typedef struct nzs {
    npzs_limits lim;
    npzs_policy *pol;
    npzs_parser *p;
    int status;  /* NZS_GOING until the verdict */
    char *label; /* the file's name in the text verdict */
    FILE *mem;   /* what is printed, until nzs_take() */
    char *buf, *taken;
    size_t len, taken_len;
    unsigned char *in;
    check_report r; /* the text of `check FILE`, or the JSON object of `check --json FILE` */
} nzs;

/* ---- what is printed: into a memory stream, handed over by nzs_take() ---- */

static FILE *out_file(nzs *h) {
    if (!h->mem) h->mem = open_memstream(&h->buf, &h->len);
    return h->mem;
}

static void say(nzs *h, const char *s, size_t n) {
    FILE *f = out_file(h);
    if (f) fwrite(s, 1, n, f);
}

NZS_EXPORT const char *nzs_take(nzs *h) {
    free(h->taken);
    h->taken = NULL;
    h->taken_len = 0;
    if (h->mem) {
        fclose(h->mem);
        h->mem = NULL;
        h->taken = h->buf;
        h->taken_len = h->len;
        h->buf = NULL;
    }
    return h->taken ? h->taken : "";
}

NZS_EXPORT size_t nzs_taken(const nzs *h) { return h->taken_len; }

/* ---- setup ---- */

NZS_EXPORT nzs *nzs_new(void) {
    nzs *h = calloc(1, sizeof *h);
    if (!h) return NULL;
    npzs_limits_default(&h->lim);
    h->status = NZS_GOING;
    return h;
}

/* A limit (npzs_limits' field names) or a lenient flag (lenient_npy_trailing, ...: "0" or "1"),
 * its value in decimal.  0, -1 for a name that is none, -2 for a value out of the field's range
 * (never clamped). */
NZS_EXPORT int nzs_set(nzs *h, const char *name, const char *value) {
    static const struct {
        const char *name;
        size_t off;
        int wide;
    } f[] = {{"max_header_size", offsetof(npzs_limits, max_header_size), 1},
             {"max_ndim", offsetof(npzs_limits, max_ndim), 0},
             {"max_fields", offsetof(npzs_limits, max_fields), 0},
             {"max_depth", offsetof(npzs_limits, max_depth), 0},
             {"max_members", offsetof(npzs_limits, max_members), 0},
             {"max_name_len", offsetof(npzs_limits, max_name_len), 0},
             {"max_extra_len", offsetof(npzs_limits, max_extra_len), 0},
             {"max_total_bytes", offsetof(npzs_limits, max_total_bytes), 1},
             {"inflate_window", offsetof(npzs_limits, inflate_window), 0},
             {"max_memory", offsetof(npzs_limits, max_memory), 1}};
    static const struct {
        const char *name;
        uint32_t bit;
    } lenient[] = {{"lenient_npy_trailing", NPZS_LENIENT_NPY_TRAILING},
                   {"lenient_header_newline", NPZS_LENIENT_HEADER_NEWLINE},
                   {"lenient_fast_inflate", NPZS_LENIENT_FAST_INFLATE},
                   {"inflate_zlib", NPZS_INFLATE_ZLIB}};
    char *end;
    if (!value || value[0] < '0' || value[0] > '9') return -2;
    errno = 0;
    unsigned long long v = strtoull(value, &end, 10);
    if (*end || errno) return -2;
    for (size_t i = 0; i < sizeof lenient / sizeof lenient[0]; i++)
        if (!strcmp(name, lenient[i].name)) {
            if (v > 1) return -2;
            h->lim.lenient = v ? h->lim.lenient | lenient[i].bit : h->lim.lenient & ~lenient[i].bit;
            return 0;
        }
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!strcmp(name, f[i].name)) {
            char *at = (char *)&h->lim + f[i].off;
            if (f[i].wide) {
                uint64_t x = v;
                memcpy(at, &x, sizeof x);
            } else {
                if (v > UINT32_MAX) return -2;
                uint32_t x = (uint32_t)v;
                memcpy(at, &x, sizeof x);
            }
            return 0;
        }
    return -1;
}

/* The policy, compiled.  0, or -1 with the fault as a JSON object in nzs_take():
 * {"line": L, "column": C, "offset": O, "path": "...", "message": "..."}. */
NZS_EXPORT int nzs_policy(nzs *h, const char *json, size_t len) {
    npzs_policy_error e;
    npzs_policy_free(h->pol);
    h->pol = npzs_policy_new(json, len, NULL, &e);
    if (h->pol) return 0;
    wbuf w;
    wb_init(&w, out_file(h));
    if (!w.f) return -1;
    wb_fmt(&w, "{\"line\": %" PRIu32 ", \"column\": %" PRIu32 ", \"offset\": %" PRIu64 ", \"path\": ", e.line, e.column,
           e.offset);
    json_str(&w, e.path, strlen(e.path));
    wb_s(&w, ", \"message\": ");
    json_str(&w, e.message, strlen(e.message));
    wb_c(&w, '}');
    wb_flush(&w);
    return -1;
}

/* Start, with flags: NZS_TEXT for the text output (label: the file's name in it), NZS_HASH for
 * SHA-256, NZS_SEQUENCE for .npy arrays back to back (--sequence).  0, -1 for a limit the
 * library refuses (its field name in nzs_take()), -2 out of memory, -3 hashing asked for in a
 * build without SHA-256 (rule CALL.hash). */
enum { NZS_TEXT = 1, NZS_HASH = 2, NZS_SEQUENCE = 4 };

NZS_EXPORT int nzs_start(nzs *h, int flags, const char *label) {
    const char *bad = npzs_limits_check(&h->lim);
    if (bad) {
        say(h, bad, strlen(bad));
        return -1;
    }
    int hash = (flags & NZS_HASH) != 0;
    if (hash && !npzs_sha256_built()) return -3;
    check_report_init(&h->r, (flags & NZS_TEXT) == 0, 0, NULL); /* the sink: out_file() as it prints */
    h->label = strdup(label ? label : "-");
    h->in = malloc(IN_CAP);
    h->p = npzs_new(&h->lim, NULL);
    if (!h->label || !h->in || !h->p) return -2;
    if ((h->pol && npzs_policy_use(h->p, h->pol) < 0) || (hash && npzs_hash(h->p, NPZS_HASH_SHA256) < 0)) return -2;
    if ((flags & NZS_SEQUENCE) && npzs_npy_sequence(h->p) < 0) return -1; /* with lenient_npy_trailing */
    npzs_events(h->p, check_report_events(&h->r));                        /* the events the report reads */
    return 0;
}

NZS_EXPORT unsigned char *nzs_in(nzs *h) { return h->in; }
NZS_EXPORT size_t nzs_in_cap(void) { return IN_CAP; }

/* ---- the events, through check's report ---- */

/* The verdict, printed once (the text's member lines before it). */
static int verdict(nzs *h, int status) {
    h->status = status;
    if (status == NZS_OK || npzs_error(h->p)) {
        if (!out_file(h)) return NZS_ERROR;
        check_report_verdict(&h->r, status == NZS_OK, h->p, h->label, NULL);
    }
    wb_flush(&h->r.text);
    return status;
}

static int run(nzs *h, npzs_in *in) {
    if (h->status != NZS_GOING) return h->status; /* bytes after the verdict are not read */
    if (!(h->r.text.f = out_file(h))) {           /* the memory stream, reopened after an nzs_take() */
        h->status = NZS_ERROR;
        return NZS_ERROR;
    }
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(h->p, in, &ev);
        if (rc == NPZS_NEED_INPUT) return NZS_GOING;
        if (rc == NPZS_DONE) return verdict(h, NZS_OK);
        if (rc < 0) return verdict(h, rc == NPZS_E_NOMEM ? NZS_ERROR : NZS_REJECTED);
        if (check_report_event(&h->r, &ev) < 0) {
            h->status = NZS_ERROR; /* the report itself ran out of memory: no verdict to print */
            return NZS_ERROR;
        }
        if (ev.type == NPZS_EV_END) return verdict(h, NZS_OK);
    }
}

/* n bytes written at nzs_in(): NZS_GOING (-1) for more, else the verdict's status, its report
 * in nzs_take(). */
NZS_EXPORT int nzs_push(nzs *h, size_t n) {
    npzs_in in = {h->in, n > IN_CAP ? IN_CAP : n, 0};
    return run(h, &in);
}

NZS_EXPORT int nzs_finish(nzs *h) {
    if (h->status != NZS_GOING) return h->status;
    npzs_finish(h->p);
    int rc = run(h, NULL);
    return rc == NZS_GOING ? verdict(h, NZS_ERROR) : rc; /* cannot happen: finish always decides */
}

NZS_EXPORT double nzs_consumed(const nzs *h) { return h->p ? (double)npzs_consumed(h->p) : 0; }

NZS_EXPORT void nzs_free(nzs *h) {
    if (!h) return;
    nzs_take(h);
    free(h->taken);
    npzs_free(h->p);
    npzs_policy_free(h->pol);
    out_free(&h->r.o);
    free(h->in);
    free(h->label);
    free(h);
}

/* ---- the library's own answers the JavaScript side shows ---- */

NZS_EXPORT const char *nzs_rule_hint(const char *rule) { return npzs_rule_hint(rule); }
NZS_EXPORT const char *nzs_rule_message(const char *rule) {
    const char *m = report_rule_message(rule);
    return m[0] ? m : NULL; /* (every rule of the table has words) */
}
NZS_EXPORT unsigned nzs_version(void) { return (unsigned)npzs_version(); }
NZS_EXPORT int nzs_sha256_built(void) { return npzs_sha256_built(); }
