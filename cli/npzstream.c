/*
 * npzstream -- command-line front end.
 *
 *   npzstream check [--json] [--feed N] [LIMITS] [FILE|-]
 *   npzstream ls [--json] [--feed N] [LIMITS] [FILE|-]
 *   npzstream extract KEY [-o OUT] [--feed N] [LIMITS] [FILE|-]
 *   npzstream vlen ...                       (cli/cmd_vlen.c)
 *   npzstream help [COMMAND] | --help | --version
 *
 * Every command reads FILE or stdin sequentially (never seeks).  Exit 0:
 * accepted, 1: rejected, 2: usage, I/O or out-of-memory error.  The output of
 * `check` (text and --json) is a fixed contract: it is only ever extended.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "npzstream.h"

#define READ_SIZE (1u << 20)

/* `npzstream vlen`: written in cli/cmd_vlen.c; argc/argv are the arguments after "vlen". */
int cmd_vlen(int argc, char **argv);

/* What the summary keeps of a member: a few words, with the name, dtype and shape in the
 * output's arena, so that memory grows by about 100 bytes per member and never by the data. */
typedef struct member {
    char *name;                /* NULL for a plain .npy */
    const char *dtype;
    const uint64_t *shape;
    uint64_t nbytes, size;
    uint64_t offset, csize;    /* kept for `ls` */
    uint32_t name_len, ndim, data_crc, crc;
    uint8_t kind, method, vmaj, vmin, fortran;
} member;

/* Array data bytes, or the blob's size; the preamble+header length of an array. */
#define DATA_SIZE(m) ((m)->kind == NPZS_KIND_ARRAY ? (m)->nbytes : (m)->size)
#define HEADER_LEN(m) ((m)->size - (m)->nbytes)

/* Blocks that never move, freed together: pointers into them stay valid. */
typedef struct block {
    struct block *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
} block;

typedef struct out {
    member *m;
    size_t n, cap;
    int open; /* m[n] was begun and not completed */
    block *arena;
} out;

static void *arena_alloc(out *o, size_t n) {
    n = (n + 7) & ~(size_t)7;
    block *b = o->arena;
    if (!b || b->size - b->used < n) {
        size_t sz = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + sz);
        if (!b) return NULL;
        b->next = o->arena;
        b->used = 0;
        b->size = sz;
        o->arena = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

/* ---- usage texts ------------------------------------------------------------ */

static const char LIMITS_HELP[] =
    "Limits (defaults in parentheses; see npzstream(1) and SECURITY.md):\n"
    "  --max-header-size N   .npy header size in characters (10000)\n"
    "  --max-ndim N          dimensions of an array, at most 64 (32)\n"
    "  --max-fields N        names, titles and types in a structured dtype (100000)\n"
    "  --max-depth N         nesting of structured dtypes, at most 1000 (32)\n"
    "  --max-members N       members of an archive (100000)\n"
    "  --max-name-len N      bytes of a member name, at most 65535 (4096)\n"
    "  --max-extra-len N     bytes of a ZIP extra field block, at most 65535 (65535)\n"
    "  --max-total-bytes N   total uncompressed member bytes (1099511627776)\n"
    "  --inflate-window N    inflate output chunk in bytes (262144)\n"
    "  --max-memory N        bytes the parser may hold, 0 for no cap (268435456)\n"
    "  --feed N              hand the parser at most N bytes per push (testing)\n"
    "Lenient flags (off by default; each accepts what the strict rules refuse, see SECURITY.md):\n"
    "  --lenient-npy-trailing   bytes after a .npy's array are consumed and ignored (as np.load does)\n"
    "  --lenient-header-newline a header ending \"}\\n\" then spaces (npyjs); NumPy 2.x on\n"
    "                           Python 3.12+ refuses such files\n";

static const char EXIT_HELP[] =
    "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error.\n";

static void usage(FILE *f) {
    fprintf(f,
            "usage: npzstream check [--json] [--feed N] [--max-header-size N] [--max-members N]\n"
            "                       [--max-total-bytes N] [FILE|-]\n"
            "       npzstream --version\n"
            "Validates a NumPy .npy or .npz file read as a stream (FILE, or stdin for '-').\n"
            "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error.\n");
}

static void usage_check(FILE *f) {
    usage(f);
    fprintf(f, "\n  --json                print one JSON object (the fixed contract of README.md)\n%s",
            LIMITS_HELP);
}

static void usage_all(FILE *f) {
    fprintf(f,
            "usage: npzstream check [--json] [OPTIONS] [FILE|-]           validate\n"
            "       npzstream ls [--json] [OPTIONS] [FILE|-]              list members (like unzip -l)\n"
            "       npzstream extract KEY [-o OUT] [OPTIONS] [FILE|-]     stream one member out\n"
            "       npzstream vlen ...                                   (npzstream vlen --help)\n"
            "       npzstream help [COMMAND] | --help | --version\n"
            "Reads a NumPy .npy or .npz file as a stream (FILE, or stdin for '-' or none);\n"
            "never seeks, so pipes and sockets work.  OPTIONS are the limits below and --feed.\n"
            "An .npz is valid only once its central directory was checked at the very end.\n\n"
            "%s%s", LIMITS_HELP, EXIT_HELP);
}

static void usage_ls(FILE *f) {
    fprintf(f,
            "usage: npzstream ls [--json] [OPTIONS] [FILE|-]\n"
            "Lists the members of an .npz (or the array of an .npy) as they stream past: data and\n"
            "stored sizes, kind, method, dtype, shape, order and name, then a summary line with\n"
            "the verdict.  Rows are provisional until the summary says ok.\n"
            "  --json                one JSON object: check's fields plus offset, size,\n"
            "                        stored_size, data_size, crc32 per member and a summary\n"
            "%s%s", LIMITS_HELP, EXIT_HELP);
}

static void usage_extract(FILE *f) {
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

/* ---- option parsing ------------------------------------------------------------ */

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    if (!s || !*s || *s == '-') return -1;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}

enum { L_HEADER, L_NDIM, L_FIELDS, L_DEPTH, L_MEMBERS, L_NAME, L_EXTRA, L_TOTAL, L_WINDOW, L_MEMORY, L_FEED, L__N };
static const char *const LIMIT_FLAGS[L__N] = {
    "--max-header-size", "--max-ndim",       "--max-fields",      "--max-depth",  "--max-members", "--max-name-len",
    "--max-extra-len",   "--max-total-bytes", "--inflate-window", "--max-memory", "--feed"};

typedef struct opts {
    npzs_limits lim;
    uint64_t feed;
    uint64_t given[L__N]; /* values as given, for diagnostics */
    unsigned set;         /* bit i: LIMIT_FLAGS[i] was given */
} opts;

static void opts_init(opts *o) {
    memset(o, 0, sizeof *o);
    npzs_limits_default(&o->lim);
}

static int set_limit(opts *o, int id, uint64_t v) {
    uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    if (id != L_HEADER && id != L_TOTAL && id != L_FEED && id != L_MEMBERS && id != L_MEMORY && v > UINT32_MAX) {
        fprintf(stderr, "npzstream: %s %" PRIu64 ": too large (at most %" PRIu32 ")\n", LIMIT_FLAGS[id], v,
                UINT32_MAX);
        return -1;
    }
    o->given[id] = v;
    o->set |= 1u << id;
    switch (id) {
    case L_HEADER: o->lim.max_header_size = v; break;
    case L_NDIM: o->lim.max_ndim = v32; break;
    case L_FIELDS: o->lim.max_fields = v32; break;
    case L_DEPTH: o->lim.max_depth = v32; break;
    case L_MEMBERS: o->lim.max_members = v > 0x7FFFFFFF ? 0x7FFFFFFF : (uint32_t)v; break;
    case L_NAME: o->lim.max_name_len = v32; break;
    case L_EXTRA: o->lim.max_extra_len = v32; break;
    case L_TOTAL: o->lim.max_total_bytes = v; break;
    case L_WINDOW: o->lim.inflate_window = v32; break;
    case L_MEMORY: o->lim.max_memory = v; break;
    default: o->feed = v; break;
    }
    return 0;
}

/* A limit flag at argv[*i] ("--flag N" or "--flag=N").  Returns 1 if it was one (and *i
 * advanced past its value), 0 if argv[*i] is not a limit flag, -1 on a bad value. */
static int parse_limit(opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    static const struct { const char *flag; uint32_t bit; } lenient[] = {
        {"--lenient-npy-trailing", NPZS_LENIENT_NPY_TRAILING},
        {"--lenient-header-newline", NPZS_LENIENT_HEADER_NEWLINE}};
    for (size_t k = 0; k < sizeof lenient / sizeof lenient[0]; k++)
        if (strcmp(a, lenient[k].flag) == 0) {
            o->lim.lenient |= lenient[k].bit;
            return 1;
        }
    for (int id = 0; id < L__N; id++) {
        size_t l = strlen(LIMIT_FLAGS[id]);
        if (strncmp(a, LIMIT_FLAGS[id], l) != 0 || (a[l] != 0 && a[l] != '=')) continue;
        const char *val = a[l] == '=' ? a + l + 1 : (*i + 1 < argc ? argv[*i + 1] : NULL);
        uint64_t v;
        if (parse_u64(val, &v) < 0) {
            fprintf(stderr, "npzstream: %s needs a non-negative integer\n", LIMIT_FLAGS[id]);
            return -1;
        }
        if (a[l] != '=') (*i)++;
        return set_limit(o, id, v) < 0 ? -1 : 1;
    }
    return 0;
}

/* The flag that sets a field of npzs_limits, for the diagnostics. */
static const char *flag_of(const char *field) {
    static const char *const f[][2] = {{"max_header_size", "--max-header-size"}, {"max_ndim", "--max-ndim"},
                                       {"max_fields", "--max-fields"},           {"max_depth", "--max-depth"},
                                       {"max_members", "--max-members"},         {"max_name_len", "--max-name-len"},
                                       {"max_extra_len", "--max-extra-len"},     {"inflate_window", "--inflate-window"},
                                       {"max_memory", "--max-memory"}};
    for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
        if (!strcmp(f[i][0], field)) return f[i][1];
    return field;
}

static npzs_parser *new_parser(const opts *o) {
    const char *bad = npzs_limits_check(&o->lim);
    if (bad) {
        fprintf(stderr, "npzstream: %s: out of the range the library accepts\n", flag_of(bad));
        return NULL;
    }
    npzs_parser *p = npzs_new(&o->lim, NULL);
    if (!p) fprintf(stderr, "npzstream: out of memory (or --max-memory below the parser's own size)\n");
    return p;
}

/* ---- output helpers --------------------------------------------------------------- */

/* The member loops write through a buffer of their own: stdio's per-call locking and
 * bookkeeping cost more than parsing a small member does. */
typedef struct wbuf {
    FILE *f;
    size_t n;
    char b[1 << 14];
} wbuf;

static void wb_init(wbuf *w, FILE *f) {
    w->f = f;
    w->n = 0;
}

static void wb_flush(wbuf *w) {
    if (w->n) fwrite(w->b, 1, w->n, w->f);
    w->n = 0;
}

static void wb_put_slow(wbuf *w, const void *s, size_t n) {
    wb_flush(w);
    if (n > sizeof w->b) fwrite(s, 1, n, w->f);
    else { memcpy(w->b, s, n); w->n = n; }
}

/* inline: with a literal, strlen and memcpy become a few moves */
static inline void wb_put(wbuf *w, const void *s, size_t n) {
    if (n > sizeof w->b - w->n) { wb_put_slow(w, s, n); return; }
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static inline void wb_s(wbuf *w, const char *s) { wb_put(w, s, strlen(s)); }

static void wb_c(wbuf *w, int c) {
    if (w->n == sizeof w->b) wb_flush(w);
    w->b[w->n++] = (char)c;
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static void wb_fmt(wbuf *w, const char *fmt, ...) {
    char t[512];
    va_list ap;
    va_start(ap, fmt);
    int k = vsnprintf(t, sizeof t, fmt, ap);
    va_end(ap);
    if (k > 0) wb_put(w, t, (size_t)k < sizeof t ? (size_t)k : sizeof t - 1);
}

/* JSON string from raw bytes: valid UTF-8 passes through, anything else is \u00XX. */
/* Length of the strict UTF-8 sequence starting at u[i] (no overlongs, no surrogates,
 * nothing above U+10FFFF), or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *u, size_t i, size_t n) {
    unsigned char c = u[i];
    size_t k = c >= 0xC2 && c <= 0xDF ? 1 : c >= 0xE0 && c <= 0xEF ? 2 : c >= 0xF0 && c <= 0xF4 ? 3 : 0;
    if (!k || k >= n - i) return 0;
    for (size_t j = 1; j <= k; j++)
        if ((u[i + j] & 0xC0) != 0x80) return 0;
    unsigned char d = u[i + 1];
    if ((c == 0xE0 && d < 0xA0) || (c == 0xED && d > 0x9F) || (c == 0xF0 && d < 0x90) || (c == 0xF4 && d > 0x8F))
        return 0;
    return k + 1;
}

/* Decimal without printf's format parsing (the member loops print many numbers). */
static void put_u64(wbuf *f, uint64_t v) {
    char b[24];
    int l = 24;
    do { b[--l] = (char)('0' + v % 10); v /= 10; } while (v);
    wb_put(f, b + l, (size_t)(24 - l));
}

static void json_str(wbuf *f, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    wb_c(f, '"');
    for (size_t i = 0; i < n; i++) {
        size_t run = i; /* plain ASCII goes out in one piece */
        while (run < n && u[run] >= 0x20 && u[run] < 0x7F && u[run] != '"' && u[run] != '\\') run++;
        if (run > i) {
            wb_put(f, u + i, run - i);
            i = run - 1;
            continue;
        }
        unsigned char c = u[i];
        if (c == '"' || c == '\\') { wb_c(f, '\\'); wb_c(f, c); }
        else if (c < 0x20 || c == 0x7F) wb_fmt(f, "\\u%04x", c);
        else if (c < 0x80) wb_c(f, c);
        else {
            size_t k = utf8_seq(u, i, n);
            if (k) { wb_put(f, u + i, k); i += k - 1; }
            else wb_fmt(f, "\\u%04x", c); /* a byte that is not UTF-8: as the code point of that byte */
        }
    }
    wb_c(f, '"');
}

/* Raw bytes for a terminal: printable ASCII and valid UTF-8 pass, the rest is \xHH. */
static void safe_str(wbuf *f, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n; i++) {
        size_t run = i; /* printable ASCII goes out in one piece */
        while (run < n && u[run] >= 0x20 && u[run] < 0x7F && u[run] != '\\') run++;
        if (run > i) {
            wb_put(f, u + i, run - i);
            i = run - 1;
            continue;
        }
        unsigned char c = u[i];
        if (c == '\\') wb_s(f, "\\\\");
        else if (c < 0x20 || c == 0x7F) wb_fmt(f, "\\x%02x", c);
        else if (c < 0x80) wb_c(f, c);
        else {
            size_t k = utf8_seq(u, i, n);
            if (k) { wb_put(f, u + i, k); i += k - 1; }
            else wb_fmt(f, "\\x%02x", c);
        }
    }
}

static void json_key(wbuf *f, const member *m) {
    size_t n = m->name_len;
    if (n > 4 && memcmp(m->name + n - 4, ".npy", 4) == 0) n -= 4;
    json_str(f, m->name, n);
}

/* ext = 0: exactly the `check --json` contract.  ext = 1 (`ls --json`): the same object with
 * more keys per member and a "summary" object. */
static void print_json(const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext) {
    wbuf w, *f = &w;
    wb_init(f, stdout);
    wb_fmt(f, "{\"ok\": %s, \"format\": %s, \"members\": [", ok ? "true" : "false",
            fmt == NPZS_FORMAT_NPY ? "\"npy\"" : fmt == NPZS_FORMAT_NPZ ? "\"npz\"" : "null");
    uint64_t tdata = 0, tstored = 0, tsize = 0;
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        wb_s(f, i ? ", {" : "{");
        wb_s(f, "\"name\": ");
        if (m->name) json_str(f, m->name, m->name_len); else wb_s(f, "null");
        wb_s(f, ", \"key\": ");
        if (m->name) json_key(f, m); else wb_s(f, "null");
        wb_s(f, m->kind == NPZS_KIND_ARRAY ? ", \"kind\": \"array\"" : ", \"kind\": \"blob\"");
        wb_s(f, m->method == NPZS_METHOD_DEFLATED ? ", \"method\": \"deflated\"" : ", \"method\": \"stored\"");
        if (m->kind == NPZS_KIND_ARRAY) {
            wb_s(f, ", \"version\": [");
            put_u64(f, (uint64_t)m->vmaj);
            wb_s(f, ", ");
            put_u64(f, (uint64_t)m->vmin);
            wb_s(f, "], \"dtype\": ");
            json_str(f, m->dtype, strlen(m->dtype));
            wb_s(f, ", \"shape\": [");
            for (uint32_t k = 0; k < m->ndim; k++) {
                if (k) wb_s(f, ", ");
                put_u64(f, m->shape[k]);
            }
            wb_s(f, m->fortran ? "], \"fortran_order\": true, \"nbytes\": " : "], \"fortran_order\": false, \"nbytes\": ");
            put_u64(f, m->nbytes);
            wb_s(f, ", \"data_crc32\": ");
            put_u64(f, m->data_crc);
            if (ext) wb_fmt(f, ", \"size\": %" PRIu64 ", \"header_len\": %" PRIu64, m->size, HEADER_LEN(m));
        } else {
            wb_s(f, ", \"size\": ");
            put_u64(f, m->size);
            wb_s(f, ", \"data_crc32\": ");
            put_u64(f, m->data_crc);
        }
        if (ext) {
            wb_fmt(f, ", \"offset\": %" PRIu64 ", \"stored_size\": %" PRIu64 ", \"data_size\": %" PRIu64
                       ", \"crc32\": %" PRIu32, m->offset, m->csize, DATA_SIZE(m), m->crc);
            tdata += DATA_SIZE(m);
            tstored += m->csize;
            tsize += m->size;
        }
        wb_c(f, '}');
    }
    wb_s(f, "], ");
    if (ext)
        wb_fmt(f, "\"summary\": {\"members\": %zu, \"data_bytes\": %" PRIu64 ", \"stored_bytes\": %" PRIu64
                   ", \"size\": %" PRIu64 ", \"input_bytes\": %" PRIu64 "}, ",
                o->n, tdata, tstored, tsize, npzs_consumed(p));
    if (npzs_ignored_bytes(p)) /* only with --lenient-npy-trailing */
        wb_fmt(f, "\"ignored_bytes\": %" PRIu64 ", ", npzs_ignored_bytes(p));
    wb_s(f, "\"error\": ");
    if (ok) {
        wb_s(f, "null");
    } else {
        int code = npzs_error(p);
        size_t nl;
        const char *nm = npzs_error_member_name(p, &nl);
        wb_fmt(f, "{\"code\": \"%s\", \"offset\": %" PRIu64 ", \"member\": ", npzs_error_name(code),
                npzs_error_offset(p));
        if (nm) json_str(f, nm, nl); else wb_s(f, "null");
        long mi = npzs_error_member(p);
        if (mi >= 0) wb_fmt(f, ", \"member_index\": %ld", mi);
        wb_s(f, ", \"message\": ");
        const char *msg = npzs_error_message(p);
        json_str(f, msg, strlen(msg));
        uint64_t co = npzs_error_content_offset(p);
        if (co != UINT64_MAX) wb_fmt(f, ", \"content_offset\": %" PRIu64, co);
        const char *rule = npzs_error_rule(p);
        if (rule) wb_fmt(f, ", \"rule\": \"%s\"", rule);
        wb_c(f, '}');
    }
    wb_s(f, "}\n");
    wb_flush(f);
}

static void put_hex32(wbuf *f, uint32_t v) {
    char b[8];
    for (int i = 7; i >= 0; i--, v >>= 4) b[i] = "0123456789abcdef"[v & 15];
    wb_put(f, b, 8);
}

/* `check` without --json: one line per member as soon as it is complete (nothing is kept), then
 * the verdict.  Names go through safe_str: a rejected archive's names were never validated
 * and must not reach a terminal raw. */
static void text_member(wbuf *f, const member *m) {
    wb_s(f, "  ");
    if (m->name) {
        safe_str(f, m->name, m->name_len);
        wb_s(f, ": ");
    }
    if (m->kind == NPZS_KIND_ARRAY) {
        wb_s(f, m->dtype);
        wb_s(f, " (");
        for (uint32_t k = 0; k < m->ndim; k++) {
            if (k) wb_s(f, ", ");
            put_u64(f, m->shape[k]);
        }
        wb_s(f, m->ndim == 1 ? ",)" : ")");
        if (m->fortran) wb_s(f, " fortran");
        wb_s(f, ", ");
        put_u64(f, m->nbytes);
    } else {
        wb_s(f, "blob, ");
        put_u64(f, m->size);
    }
    wb_s(f, m->method == NPZS_METHOD_DEFLATED ? " bytes, deflated, crc32 " : " bytes, stored, crc32 ");
    put_hex32(f, m->data_crc);
    wb_c(f, '\n');
}

static void text_verdict(wbuf *f, size_t members, int ok, npzs_format fmt, const npzs_parser *p,
                         const char *path) {
    if (ok) {
        wb_s(f, path);
        wb_fmt(f, ": ok (%s, %zu member%s)\n", fmt == NPZS_FORMAT_NPY ? "npy" : "npz", members,
               members == 1 ? "" : "s");
    } else {
        size_t nl;
        const char *nm = npzs_error_member_name(p, &nl);
        wb_s(f, path);
        wb_fmt(f, ": REJECTED: %s at offset %" PRIu64, npzs_error_name(npzs_error(p)), npzs_error_offset(p));
        if (nm) {
            wb_s(f, " (member ");
            safe_str(f, nm, nl);
            wb_c(f, ')');
        }
        wb_s(f, ": ");
        wb_s(f, npzs_error_message(p));
        wb_c(f, '\n');
    }
    wb_flush(f);
}

/* The rejection, on stderr: npzstream: FILE: offset N: member M: message (code).
 * "member M: " is left out when the error belongs to no member (archive structure). */
static void error_line(const char *label, const npzs_parser *p) {
    size_t nl;
    const char *nm = npzs_error_member_name(p, &nl);
    wbuf w, *f = &w;
    wb_init(f, stderr);
    wb_s(f, "npzstream: ");
    wb_s(f, label);
    wb_fmt(f, ": offset %" PRIu64 ": ", npzs_error_offset(p));
    if (nm) {
        wb_s(f, "member ");
        safe_str(f, nm, nl);
        wb_s(f, ": ");
    }
    wb_s(f, npzs_error_message(p));
    wb_fmt(f, " (%s)\n", npzs_error_name(npzs_error(p)));
    wb_flush(f);
}

/* ---- event bookkeeping -------------------------------------------------------------- */

/* The fields of a member the events give directly (the name, dtype and shape are copied by the
 * caller, into storage that outlives the event). */
static void member_begin(member *m, const npzs_event *ev) {
    memset(m, 0, sizeof *m);
    m->method = (uint8_t)ev->method;
    m->offset = ev->offset;
    m->dtype = "";
    m->kind = NPZS_KIND_BLOB;
}

static void member_header(member *m, const npzs_array_info *a) {
    m->kind = NPZS_KIND_ARRAY;
    m->vmaj = a->version_major;
    m->vmin = a->version_minor;
    m->fortran = (uint8_t)a->fortran_order;
    m->ndim = a->ndim;
    m->nbytes = a->nbytes;
}

static void member_end(member *m, const npzs_event *ev) {
    m->kind = (uint8_t)ev->kind;
    m->data_crc = ev->data_crc32;
    m->size = ev->size;
    m->csize = ev->csize;
    m->crc = ev->crc32;
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
        member_begin(m, ev);
        if (ev->name) {
            m->name = arena_alloc(o, ev->name_len ? ev->name_len : 1);
            if (!m->name) return -1;
            memcpy(m->name, ev->name, ev->name_len);
            m->name_len = (uint32_t)ev->name_len;
        }
        o->open = 1;
        break; /* counted (o->n++) only when complete */
    }
    case NPZS_EV_HEADER: {
        member *m = &o->m[o->n];
        const npzs_array_info *a = ev->array;
        member_header(m, a);
        size_t dl = strlen(a->dtype) + 1;
        char *dt = arena_alloc(o, dl);
        uint64_t *sh = arena_alloc(o, a->ndim * sizeof *sh);
        if (!dt || !sh) return -1;
        memcpy(dt, a->dtype, dl);
        memcpy(sh, a->shape, a->ndim * sizeof *sh);
        m->dtype = dt;
        m->shape = sh;
        break;
    }
    case NPZS_EV_MEMBER_END: {
        member_end(&o->m[o->n], ev);
        o->n++;
        o->open = 0;
        break;
    }
    default:
        break;
    }
    return 0;
}

static void out_free(out *o) {
    while (o->arena) {
        block *b = o->arena;
        o->arena = b->next;
        free(b);
    }
    free(o->m);
}

/* ---- the read loop ------------------------------------------------------------------ */

/* Called for every event; returns 0 to go on, -1 to stop with status 2 (it printed why). */
typedef int (*event_fn)(void *ctx, const npzs_event *ev);

/* Opens FILE, or stdin for NULL or "-".  Returns the fd (0 for stdin) or -1 (message printed). */
static int open_input(const char *path, const char **label) {
    *label = "-";
    if (!path || !strcmp(path, "-")) return 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        fprintf(stderr, "npzstream: %s: %s\n", path, strerror(errno));
        return -1;
    }
    *label = path;
    return fd;
}

int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                  cli_eof_fn at_eof, void *ctx) {
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_SIZE); /* a larger pipe where it is one; ignored otherwise */
#endif
    unsigned char *buf = malloc(READ_SIZE);
    int status = -1, eof = 0;
    if (!buf) { fprintf(stderr, "%s: out of memory\n", prog); status = 2; }
    while (status < 0) {
        ssize_t r = 0;
        if (!eof) {
            r = read(fd, buf, READ_SIZE);
            if (r < 0) {
                if (errno == EINTR) continue;
                fprintf(stderr, "%s: %s: read: %s\n", prog, label, strerror(errno));
                status = 2;
                break;
            }
            if (r == 0) { eof = 1; at_eof(ctx); }
        }
        size_t off = 0, len = (size_t)r;
        do {
            size_t n = len - off;
            if (feed && n > feed) n = (size_t)feed;
            npzs_in in = {buf + off, n, 0};
            status = push(ctx, &in);
            off += in.pos;
            if (status < 0 && in.pos < in.size) { /* cannot happen: NEED_INPUT means all was used */
                fprintf(stderr, "%s: internal error: input left over\n", prog);
                status = 2;
            }
        } while (off < len && status < 0);
        if (eof && status < 0) { fprintf(stderr, "%s: internal error: no verdict\n", prog); status = 2; }
    }
    free(buf);
    return status;
}

typedef struct drive_ctx {
    npzs_parser *p;
    event_fn fn;
    void *ctx;
} drive_ctx;

static int drive_push(void *vc, npzs_in *in) {
    drive_ctx *d = vc;
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(d->p, in, &ev);
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return rc == NPZS_E_NOMEM ? 2 : 1;
        if (d->fn(d->ctx, &ev) < 0) return 2;
        if (ev.type == NPZS_EV_END) return 0;
    }
}

static void drive_eof(void *vc) { npzs_finish(((drive_ctx *)vc)->p); }

/* Reads fd to the verdict, pushing at most feed bytes per call (0: no limit).
 * Returns 0 accepted, 1 rejected, 2 I/O error, out of memory or fn() stopped. */
static int drive(npzs_parser *p, int fd, const char *label, uint64_t feed, event_fn fn, void *ctx) {
    drive_ctx d = {p, fn, ctx};
    return cli_read_loop(fd, "npzstream", label, feed, drive_push, drive_eof, &d);
}

/* Open FILE (or stdin) and make a parser with the options' limits; NULL (all released, the reason
 * said on stderr) when either fails. */
static npzs_parser *start(const char *path, const opts *op, const char **label, int *fd) {
    *fd = open_input(path, label);
    if (*fd < 0) return NULL;
    npzs_parser *p = new_parser(op);
    if (!p && *fd) close(*fd);
    return p;
}

/* ---- check ------------------------------------------------------------------------------ */

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

/* Options of check and ls: --json, the limits, --help, one FILE.  Returns -1 to go on, or the
 * exit status (0 after --help, 2 on a usage error). */
static int parse_args(int argc, char **argv, opts *op, int *json, const char **path, void (*help)(FILE *),
                      void (*bad_usage)(FILE *)) {
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (!strcmp(a, "--json")) *json = 1;
        else if ((r = parse_limit(op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            bad_usage(stderr);
            return 2;
        } else if (*path) {
            fprintf(stderr, "npzstream: only one FILE\n");
            return 2;
        } else {
            *path = a;
        }
    }
    return -1;
}

static int cmd_check(int argc, char **argv) {
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

/* ---- ls ------------------------------------------------------------------------------------ */

typedef struct ls_ctx {
    out o;
    int json;
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
    printf("%12" PRIu64 " %12" PRIu64 "  %-5s  %-8s  %-10s %-16s %-5s  ", DATA_SIZE(m), m->csize,
           arr ? "array" : "blob", m->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored", arr ? m->dtype : "-",
           shape, arr ? (m->fortran ? "F" : "C") : "-");
    wbuf w;
    wb_init(&w, stdout);
    if (m->name) safe_str(&w, m->name, m->name_len);
    else wb_c(&w, '-');
    wb_c(&w, '\n');
    wb_flush(&w);
}

static int ls_cb(void *ctx, const npzs_event *ev) {
    ls_ctx *c = ctx;
    if (on_event(&c->o, ev) < 0) {
        fprintf(stderr, "npzstream: out of memory\n");
        return -1;
    }
    if (ev->type == NPZS_EV_MEMBER_END && !c->json) ls_row(&c->o.m[c->o.n - 1]);
    return 0;
}

static int cmd_ls(int argc, char **argv) {
    const char *path = NULL;
    ls_ctx c;
    memset(&c, 0, sizeof c);
    opts op;
    opts_init(&op);
    int pr = parse_args(argc, argv, &op, &c.json, &path, usage_ls, usage_ls);
    if (pr >= 0) return pr;
    const char *label;
    int fd;
    npzs_parser *p = start(path, &op, &label, &fd);
    if (!p) return 2;
    if (!c.json)
        printf("%12s %12s  %-5s  %-8s  %-10s %-16s %-5s  %s\n"
               "------------ ------------  -----  --------  ---------- ---------------- -----  ----\n",
               "Data", "Stored", "Kind", "Method", "DType", "Shape", "Order", "Name");
    int status = drive(p, fd, label, op.feed, ls_cb, &c);
    npzs_format fmt = npzs_format_of(p);
    if (status == 0 || npzs_error(p)) {
        if (c.json) {
            print_json(&c.o, status == 0, fmt, p, 1);
        } else {
            uint64_t td = 0, ts = 0;
            for (size_t i = 0; i < c.o.n; i++) { td += DATA_SIZE(&c.o.m[i]); ts += c.o.m[i].csize; }
            printf("------------ ------------\n");
            if (status == 0)
                printf("%12" PRIu64 " %12" PRIu64 "  %s, %zu member%s, %" PRIu64 " bytes read: ok\n", td, ts,
                       fmt == NPZS_FORMAT_NPY ? "npy" : "npz", c.o.n, c.o.n == 1 ? "" : "s", npzs_consumed(p));
            else
                printf("%12" PRIu64 " %12" PRIu64 "  %zu member%s before the error: REJECTED (%s)\n", td, ts, c.o.n,
                       c.o.n == 1 ? "" : "s", npzs_error_name(npzs_error(p)));
        }
        if (status == 1) error_line(label, p);
    }
    fflush(stdout);
    out_free(&c.o);
    npzs_free(p);
    if (fd) close(fd);
    return status;
}

/* ---- extract ------------------------------------------------------------------------------- */

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

static int cmd_extract(int argc, char **argv) {
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

/* ---- main --------------------------------------------------------------------------------- */

static int help(const char *cmd) {
    if (!cmd) usage_all(stdout);
    else if (!strcmp(cmd, "check")) usage_check(stdout);
    else if (!strcmp(cmd, "ls")) usage_ls(stdout);
    else if (!strcmp(cmd, "extract")) usage_extract(stdout);
    else if (!strcmp(cmd, "vlen")) {
        char h[] = "--help";
        char *args[] = {h, NULL};
        return cmd_vlen(1, args);
    } else {
        fprintf(stderr, "npzstream: no command %s\n", cmd);
        usage_all(stderr);
        return 2;
    }
    return 0;
}

int main(int argc, char **argv) {
#ifdef __GLIBC__
    /* Blocks from 64 KiB up (the parser's member table, the read buffer) come from mmap and go
     * back to the system when freed.  glibc would otherwise raise that threshold after the
     * first such free, and the old copies of a growing table would stay resident. */
    mallopt(M_MMAP_THRESHOLD, 64 * 1024);
#endif
    if (argc >= 2 && !strcmp(argv[1], "--version")) {
        printf("npzstream %s\n", NPZS_VERSION);
        return 0;
    }
    if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
        usage_all(stdout);
        return 0;
    }
    if (argc >= 2 && !strcmp(argv[1], "help")) return help(argc >= 3 ? argv[2] : NULL);
    if (argc >= 2 && !strcmp(argv[1], "ls")) return cmd_ls(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "extract")) return cmd_extract(argc - 2, argv + 2);
    if (argc >= 2 && !strcmp(argv[1], "vlen")) return cmd_vlen(argc - 2, argv + 2);
    if (argc < 2 || strcmp(argv[1], "check") != 0) {
        usage(stderr);
        return 2;
    }
    return cmd_check(argc - 2, argv + 2);
}
