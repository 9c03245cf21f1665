/* cmd_scan.c -- `npzstream scan`: a sweep over model files for what a loader would run.
 *
 * Each input is a unit: its first bytes say what container it is (npy, a ZIP: npz, torch, keras or
 * zip by its member names, gzip, pickle, safetensors, unknown), an .npy or a ZIP goes through the
 * strict parser (and with --keep-going the inventory walker, src/inv/inv.c), and each member gets a
 * verdict of its own: a pickle member, an object array (the parser's PICKLE), and a zip or gzip
 * member is looked inside (in memory, bounded by --nested-depth and --nested-bytes) as a unit of
 * its own.  Every refusal is a finding (rule id, member path, byte offset); the first is the
 * file's error.  Output: text, JSON Lines (--jsonl) and SARIF 2.1.0 (--sarif).
 * Exit: 0 nothing found, 1 findings, 2 an input could not be read or was skipped. */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <zlib.h>

#include "cli.h"
#include "output.h"
#include "sandbox.h"
#include "../report/keep.h"
#include "../report/parts.h"

/* ---- options ---- */

typedef struct scan_opts {
    opts op;
    int recursive, jsonl, quiet, keep_going;
    int follow;             /* --follow-symlinks: links met while walking are followed */
    const char *sarif;      /* NULL: none; "-": stdout */
    uint64_t max_file_size; /* bytes; a larger file is skipped unread */
    uint64_t timeout;       /* seconds a file may take */
    uint64_t nested_depth;  /* containers inside containers looked into */
    uint64_t nested_bytes;  /* bytes of one nested container held to look inside */
} scan_opts;

#define SCAN_MAX_FILE_SIZE (4ull << 30)
#define SCAN_TIMEOUT 60u
#define SCAN_NESTED_DEPTH 4u
#define SCAN_NESTED_BYTES (64ull << 20)

void usage_scan(FILE *f) {
    fprintf(f,
            "usage: npzstream scan [-r] [--jsonl | -q] [--sarif [FILE|-]] [--keep-going] [-P N] [--max-file-size N]\n"
            "                      [--timeout S] [--nested-depth N] [--nested-bytes N] [LIMITS] PATH...\n"
            "Sweeps model files for pickles a loader would run: each file is identified by its content\n"
            "(npy, npz, torch, keras, zip, pickle, safetensors, gzip, unknown), each member gets its own\n"
            "verdict, and every pickle is a finding: an object array, a pickle member (np.load returns\n"
            "its bytes; torch.load would run it), a pickle inside a zip or gzip member, a pickle file.\n"
            "  -r, --recursive       walk directories (symbolic links met there are not followed: each\n"
            "                        is reported as skipped); PATHs named on the line are followed\n"
            "  --follow-symlinks     with -r, follow the links met while walking too: a link to a file\n"
            "                        is scanned, one to a directory walked, unless that directory was\n"
            "                        walked already (a loop: reported as skipped)\n"
            "  --jsonl               one JSON object per file (\"file\", \"ok\", \"container\", \"members\"\n"
            "                        each with \"status\" and \"error\", \"findings\", \"error\")\n"
            "  -q, --quiet           print nothing: the exit status only\n"
            "  --sarif [FILE]        SARIF 2.1.0 of every finding to FILE, or to stdout for '-' or when\n"
            "                        no FILE follows (the next argument is taken as FILE unless it starts\n"
            "                        with '-'); with --sarif to stdout nothing else is printed there\n"
            "  --keep-going          list every member after a rejection too, each with its verdict\n"
            "  -P N, --parallel N    scan N files at once (at most 64): the output (and the SARIF) in the\n"
            "                        walk's order, the same bytes as one at a time\n"
            "  --max-file-size N     skip files larger than N bytes unread (4Gi)\n"
            "  --timeout S           give up on a file after S seconds (60)\n"
            "  --nested-depth N      look into zip and gzip members N levels deep (4)\n"
            "  --nested-bytes N      hold at most N bytes of one nested container (64Mi)\n"
            "  --policy FILE, --sha256, --inflate-threads N (-j N)\n"
            "                        as for check, on a file that is an .npy or a ZIP (not on what is\n"
            "                        nested in its members): a violation of the policy is a finding\n"
            "                        (code policy, with its detail), each member's SHA-256 is printed\n"
            "  --no-sandbox          do not confine the process: by default, once the paths are known (and\n"
            "                        the --sarif FILE made), it may only read the files named and beneath\n"
            "                        the directories named, and never exec, fork or open a socket\n"
            "Exit status: 0 nothing found, 1 findings, 2 a file could not be read or was skipped (never 0\n"
            "when anything was skipped).\n"
            "%s",
            limits_help());
}

static int scan_parse(int argc, char **argv, scan_opts *so, const char ***paths, size_t *npaths) {
    memset(so, 0, sizeof *so);
    opts_init(&so->op);
    so->max_file_size = SCAN_MAX_FILE_SIZE;
    so->timeout = SCAN_TIMEOUT;
    so->nested_depth = SCAN_NESTED_DEPTH;
    so->nested_bytes = SCAN_NESTED_BYTES;
    *paths = calloc((size_t)argc + 1, sizeof **paths);
    *npaths = 0;
    if (!*paths) {
        fprintf(stderr, "npzstream: out of memory\n");
        return 2;
    }
    static const struct {
        const char *flag;
        size_t off;
    } nums[] = {{"--max-file-size", offsetof(scan_opts, max_file_size)},
                {"--timeout", offsetof(scan_opts, timeout)},
                {"--nested-depth", offsetof(scan_opts, nested_depth)},
                {"--nested-bytes", offsetof(scan_opts, nested_bytes)}};
    int only_files = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r = 0;
        size_t k;
        if (only_files || a[0] != '-' || !a[1]) {
            (*paths)[(*npaths)++] = a;
            continue;
        }
        if (!strcmp(a, "--")) {
            only_files = 1;
            continue;
        }
        if (!strcmp(a, "-r") || !strcmp(a, "--recursive")) {
            so->recursive = 1;
            continue;
        }
        if (!strcmp(a, "--jsonl")) {
            so->jsonl = 1;
            continue;
        }
        if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) {
            so->quiet = 1;
            continue;
        }
        if (!strcmp(a, "--keep-going")) {
            so->keep_going = 1;
            continue;
        }
        if (!strcmp(a, "--follow-symlinks")) {
            so->follow = 1;
            continue;
        }
        if (!strncmp(a, "--sarif=", 8)) {
            so->sarif = a[8] ? a + 8 : "-";
            continue;
        }
        if (!strcmp(a, "--sarif")) {
            so->sarif = i + 1 < argc && (argv[i + 1][0] != '-' || !strcmp(argv[i + 1], "-")) ? argv[++i] : "-";
            continue;
        }
        for (k = 0; k < sizeof nums / sizeof nums[0]; k++) {
            size_t l = strlen(nums[k].flag);
            if (strncmp(a, nums[k].flag, l) || (a[l] && a[l] != '=')) continue;
            const char *val = a[l] == '=' ? a + l + 1 : i + 1 < argc ? argv[++i] : NULL;
            uint64_t v;
            if (cli_parse_size(val, &v) < 0) {
                fprintf(stderr, "npzstream: %s needs a number (a size takes K M G or Ki Mi Gi)\n", nums[k].flag);
                return 2;
            }
            memcpy((char *)so + nums[k].off, &v, sizeof v);
            break;
        }
        if (k < sizeof nums / sizeof nums[0]) continue;
        if ((r = parse_limit(&so->op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
            continue;
        }
        if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            usage_scan(stdout);
            return 0;
        }
        fprintf(stderr, "npzstream: unknown option %s\n", a);
        usage_scan(stderr);
        return 2;
    }
    if (so->jsonl && so->quiet) {
        fprintf(stderr, "npzstream: --jsonl and -q exclude each other\n");
        return 2;
    }
    if (so->sarif && !strcmp(so->sarif, "-") && so->jsonl) {
        fprintf(stderr, "npzstream: --sarif to stdout and --jsonl exclude each other (give --sarif a FILE)\n");
        return 2;
    }
    if (!*npaths) {
        fprintf(stderr, "npzstream: scan needs a PATH ('-' for stdin)\n");
        usage_scan(stderr);
        return 2;
    }
    return limits_in_range(&so->op.lim, stderr) ? -1 : 2;
}

/* ---- what a unit finds ---- */

enum container { C_NONE, C_NPY, C_NPZ, C_TORCH, C_KERAS, C_ZIP, C_PICKLE, C_SAFETENSORS, C_GZIP, C_UNKNOWN };
static const char *const CONTAINER[] = {NULL,  "npy",    "npz",         "torch", "keras",
                                        "zip", "pickle", "safetensors", "gzip",  "unknown"};

typedef struct unit unit;

/* A finding: the error object (its member is the path "outer!/inner"), owned strings. */
typedef struct finding {
    report_error e;
    char *path;
    char *detail; /* a policy's violation in words (--policy), or NULL */
} finding;

/* A member, as the parser or the walker saw it, with its verdict. */
typedef struct smember {
    char *name;
    size_t name_len;
    int kind, method, sniff, from_walker;
    uint64_t size, csize, offset;
    const uint8_t *sha256; /* --sha256: the parser's (in the unit's summary), or NULL */
    char dtype[64];
    report_error err; /* its first finding (code NULL: none) */
    unit *nested;     /* what is inside it, when looked into */
} smember;

struct unit {
    const scan_opts *so;
    int depth, container, status; /* status: -1 going on; 0 nothing; 1 findings; 2 skipped */
    uint8_t head[16];
    size_t head_n;
    uint64_t total;
    struct timespec start;
    npzs_parser *p;
    int own_p, final;
    npzs_inv *inv;
    out o; /* the parser's members */
    smember *m;
    size_t n, cap;
    finding *f;
    size_t nf, capf;
    /* the bytes of the member being read, while they may be a nested container */
    uint8_t *keep;
    size_t keep_n, keep_cap;
    int keep_on, keep_over;
    uint8_t kpre[4];
    size_t kpre_n;
    /* a gzip: its content inflated */
    z_stream z;
    int z_ready, z_end, z_bad;
    unit *gz;
    unit **wnested; /* kept going: what is inside the walker's member i */
    size_t wn, kidx;
    int kseen;
    const char *skip_rule; /* skipped: the rule */
    char skip_msg[160];
    report_error skip_lim; /* skipped at a limit: its numbers (limit NULL: none) */
};

/* A scan limit's numbers on a finding or a skip: the option's name as the JSON says it
 * (max_file_size, nested_depth, nested_bytes), its value in force, what the input needed.  A size
 * that is not known (a stream's, a gzip's content) needs one byte more than the limit: the numbers
 * never depend on how the input was split. */
static void set_limit(report_error *e, const char *name, uint64_t value, uint64_t needed) {
    e->limit = name;
    e->limit_value = value;
    e->limit_needed = needed > value ? needed : value + 1;
}

static double elapsed(const unit *u) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)(t.tv_sec - u->start.tv_sec) + (double)(t.tv_nsec - u->start.tv_nsec) / 1e9;
}

static char *dup_bytes(const char *s, size_t n) {
    char *d = malloc(n + 1);
    if (d) {
        if (n) memcpy(d, s, n);
        d[n] = 0;
    }
    return d;
}

/* A finding of the unit (path: the member's path, or NULL for the file itself); NULL out of memory. */
static finding *add_finding(unit *u, const report_error *e, const char *path, size_t path_len) {
    finding *nf = table_room(u->f, &u->capf, u->nf, sizeof *u->f, 8);
    if (!nf) return NULL;
    u->f = nf;
    finding *f = &u->f[u->nf++];
    f->e = *e;
    f->path = path ? dup_bytes(path, path_len) : NULL;
    f->e.member = f->path;
    f->e.member_len = path ? path_len : 0;
    /* the parser's words live until its next call: the detail is copied */
    f->detail = e->detail ? dup_bytes(e->detail, strlen(e->detail)) : NULL;
    f->e.detail = f->detail;
    return f;
}

static smember *add_member(unit *u, const char *name, size_t name_len) {
    smember *nm = table_room(u->m, &u->cap, u->n, sizeof *u->m, 16);
    if (!nm) return NULL;
    u->m = nm;
    smember *m = &u->m[u->n++];
    memset(m, 0, sizeof *m);
    m->name = name ? dup_bytes(name, name_len) : NULL;
    m->name_len = name ? name_len : 0;
    return m;
}

/* A dtype string into the member (cut at its room; no printf on the per-member path). */
static void dtype_copy(smember *m, const char *dt) {
    size_t l = strnlen(dt, sizeof m->dtype - 1);
    memcpy(m->dtype, dt, l);
    m->dtype[l] = 0;
}

/* A member's finding: on the member (its first) and on the unit. */
static void member_finding(unit *u, size_t i, report_error *e) {
    smember *m = &u->m[i];
    e->member_index = (long)i;
    const finding *f = add_finding(u, e, m->name, m->name_len);
    if (!m->err.code) {
        m->err = *e;
        m->err.member = m->name;
        m->err.member_len = m->name_len;
        m->err.detail = f ? f->detail : NULL;
    }
}

static void unit_free(unit *u);
static unit *unit_new(const scan_opts *so, int depth, npzs_parser *p, npzs_inv *inv);
static int unit_push(unit *u, const uint8_t *b, size_t n);
static int unit_finish(unit *u);

/* ---- nested containers ---- */

/* The member's first bytes decide whether they are kept: a zip or a gzip. */
static void keep_begin(unit *u) {
    u->keep_n = 0;
    u->keep_on = 1;
    u->keep_over = 0;
    u->kpre_n = 0;
}

static void keep_bytes(unit *u, const uint8_t *b, size_t n) {
    if (!u->keep_on || !n) return;
    size_t k = 0;
    while (u->kpre_n < 4 && k < n) u->kpre[u->kpre_n++] = b[k++];
    if (u->kpre_n >= 2 && !(u->kpre[0] == 'P' && u->kpre[1] == 'K') && !(u->kpre[0] == 0x1F && u->kpre[1] == 0x8B)) {
        u->keep_on = 0; /* neither: nothing to look into */
        return;
    }
    if (u->keep_over) return;
    if (u->keep_n + n > u->so->nested_bytes) {
        u->keep_over = 1;
        return;
    }
    uint8_t *nb = u->keep;
    while (u->keep_n + n > u->keep_cap) {
        size_t nc = u->keep_cap ? u->keep_cap * 2 : 65536;
        if (!(nb = realloc(u->keep, nc))) {
            u->keep_over = 1;
            return;
        }
        u->keep = nb;
        u->keep_cap = nc;
    }
    memcpy(u->keep + u->keep_n, b, n);
    u->keep_n += n;
}

/* The findings of a nested unit, on member i of u (their paths under the member's name). */
static void nested_findings(unit *u, size_t i, const unit *c) {
    smember *m = &u->m[i];
    for (size_t k = 0; k < c->nf; k++) {
        const finding *cf = &c->f[k];
        /* "outer!/inner"; a gzip's content has no name: its findings keep the inner path alone */
        size_t cl = cf->path ? cf->e.member_len : 0, sep = m->name && cl ? 2 : 0;
        size_t pl = (m->name ? m->name_len : 0) + sep + cl;
        char *path = malloc(pl + 1);
        if (!path) continue;
        if (m->name) memcpy(path, m->name, m->name_len);
        if (sep) memcpy(path + m->name_len, "!/", 2);
        if (cl) memcpy(path + pl - cl, cf->path, cl);
        path[pl] = 0;
        report_error e = cf->e;
        /* a pickle one level down or deeper: a pickle a later loader would meet inside */
        if (e.rule && (!strcmp(e.rule, "SCAN.pickle-member") || !strcmp(e.rule, "SCAN.pickle-file"))) {
            e.rule = "SCAN.pickle-nested";
            e.message = report_rule_message(e.rule);
            e.hint = npzs_rule_hint(e.rule);
        }
        e.offset = m->offset; /* the byte of this file: the member's local header */
        e.content_offset = cf->e.offset;
        e.member_index = (long)i;
        add_finding(u, &e, pl ? path : NULL, pl);
        if (!m->err.code) {
            m->err = e;
            m->err.member = m->name;
            m->err.member_len = m->name_len;
        }
        free(path);
    }
}

/* Look inside member i's kept bytes (a zip or a gzip), bounded. */
static void keep_end(unit *u, size_t i) {
    smember *m = &u->m[i];
    int kept = u->keep_on && u->kpre_n >= 2;
    u->keep_on = 0;
    if (!kept) return;
    report_error e;
    if (u->keep_over) {
        report_error_rule(&e, "limit", "SCAN.nested-bytes", m->offset, (long)i);
        set_limit(&e, "nested_bytes", u->so->nested_bytes, m->size);
        member_finding(u, i, &e);
        return;
    }
    if ((uint64_t)u->depth + 1 > u->so->nested_depth) {
        report_error_rule(&e, "limit", "SCAN.nested-depth", m->offset, (long)i);
        set_limit(&e, "nested_depth", u->so->nested_depth, (uint64_t)u->depth + 1);
        member_finding(u, i, &e);
        return;
    }
    unit *c = unit_new(u->so, u->depth + 1, NULL, NULL);
    if (!c) return;
    c->start = u->start;
    if (unit_push(c, u->keep, u->keep_n) < 0) unit_finish(c);
    m->nested = c;
    nested_findings(u, i, c);
}

/* ---- a ZIP's members: its kind by the names ---- */

static int has_name(const unit *u, const char *s) {
    size_t l = strlen(s);
    for (size_t i = 0; i < u->n; i++)
        if (u->m[i].name_len == l && !memcmp(u->m[i].name, s, l)) return 1;
    return 0;
}

/* torch.save: "<dir>/data.pkl" with "<dir>/data/..." beside it; Keras 3: config.json with
 * model.weights.h5 or metadata.json; an npz: a .npy member or none; any other ZIP: zip. */
static int zip_kind(const unit *u) {
    for (size_t i = 0; i < u->n; i++) {
        const smember *m = &u->m[i];
        if (m->name_len > 9 && !memcmp(m->name + m->name_len - 9, "/data.pkl", 9)) {
            size_t dl = m->name_len - 8; /* "<dir>/" */
            for (size_t j = 0; j < u->n; j++)
                if (u->m[j].name_len > dl + 5 && !memcmp(u->m[j].name, m->name, dl) &&
                    !memcmp(u->m[j].name + dl, "data/", 5))
                    return C_TORCH;
        }
    }
    if (has_name(u, "config.json") && (has_name(u, "model.weights.h5") || has_name(u, "metadata.json"))) return C_KERAS;
    if (!u->n) return C_NPZ;
    for (size_t i = 0; i < u->n; i++)
        if (u->m[i].name_len > 4 && !memcmp(u->m[i].name + u->m[i].name_len - 4, ".npy", 4)) return C_NPZ;
    return C_ZIP;
}

/* ---- the parser's events ---- */

static void strict_member(unit *u, const member *om) {
    smember *m = add_member(u, om->name, om->name_len);
    if (!m) return;
    m->kind = om->kind;
    m->method = om->method;
    m->sniff = om->sniff;
    m->size = om->size;
    m->csize = om->csize;
    m->offset = om->offset;
    m->sha256 = om->sha256;
    if (om->kind == NPZS_KIND_ARRAY) dtype_copy(m, om->dtype);
    size_t i = u->n - 1;
    if (m->sniff == NPZS_SNIFF_PICKLE) {
        report_error e;
        report_error_rule(&e, "pickle", "SCAN.pickle-member", m->offset, (long)i);
        member_finding(u, i, &e);
    }
    keep_end(u, i);
}

static int event(unit *u, const npzs_event *ev) {
    if (ev->type == NPZS_EV_BLOB) {
        keep_bytes(u, ev->data, ev->len);
        return 0;
    }
    if (out_event(&u->o, ev) < 0) return -1;
    if (ev->type == NPZS_EV_MEMBER_BEGIN) keep_begin(u);
    if (ev->type == NPZS_EV_MEMBER_END) strict_member(u, &u->o.m[u->o.n - 1]);
    return 0;
}

/* Push to the parser: its status once decided (0, 1, 2), else -1. */
static int parse_some(unit *u, const uint8_t *b, size_t n, int eof) {
    npzs_in in = {b, n, 0};
    if (eof) npzs_finish(u->p);
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(u->p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) return -1;
        if (rc == NPZS_DONE) return 0;
        if (rc < 0) return rc == NPZS_E_NOMEM ? 2 : 1;
        if (event(u, &ev) < 0) return 2;
        if (ev.type == NPZS_EV_END) return 0;
    }
}

/* The walker's content of a checked member (kept going). */
static int inv_content(void *ctx, size_t i, const uint8_t *data, size_t len) {
    unit *u = ctx;
    if (!u->kseen || u->kidx != i) {
        keep_begin(u);
        u->kidx = i;
        u->kseen = 1;
    }
    if (data) {
        keep_bytes(u, data, len);
        return 0;
    }
    u->kseen = 0;
    int kept = u->keep_on && u->kpre_n >= 2;
    u->keep_on = 0;
    if (!kept || u->keep_over || (uint64_t)u->depth + 1 > u->so->nested_depth) return 0; /* said at its end */
    unit **t = u->wnested;
    if (i >= u->wn) {
        size_t nn = i + 16;
        if (!(t = realloc(u->wnested, nn * sizeof *t))) return 0;
        memset(t + u->wn, 0, (nn - u->wn) * sizeof *t);
        u->wnested = t;
        u->wn = nn;
    }
    unit *c = unit_new(u->so, u->depth + 1, NULL, NULL);
    if (!c) return 0;
    c->start = u->start;
    if (unit_push(c, u->keep, u->keep_n) < 0) unit_finish(c);
    unit_free(u->wnested[i]);
    u->wnested[i] = c;
    return 0;
}

/* ---- a unit: classified by its first bytes, then streamed ---- */

/* u (or a new unit when NULL) for a new input: a unit's tables (its members, findings, kept bytes
 * and nested slots) are kept from one file of a sweep to the next, as the parser is. */
static unit *unit_init(unit *u, const scan_opts *so, int depth, npzs_parser *p, npzs_inv *inv) {
    if (!u) u = calloc(1, sizeof *u);
    if (!u) return NULL;
    u->so = so;
    u->depth = depth;
    u->status = -1;
    u->final = -1;
    u->p = p;
    u->inv = inv;
    clock_gettime(CLOCK_MONOTONIC, &u->start);
    return u;
}

static unit *unit_new(const scan_opts *so, int depth, npzs_parser *p, npzs_inv *inv) {
    return unit_init(NULL, so, depth, p, inv);
}

/* What the unit holds for its input freed; its tables kept, every other field zero. */
static void unit_clear(unit *u) {
    for (size_t i = 0; i < u->n; i++) {
        free(u->m[i].name);
        unit_free(u->m[i].nested);
    }
    for (size_t i = 0; i < u->nf; i++) {
        free(u->f[i].path);
        free(u->f[i].detail);
    }
    out_free(&u->o);
    if (u->z_ready) inflateEnd(&u->z);
    unit_free(u->gz);
    for (size_t i = 0; i < u->wn; i++) unit_free(u->wnested[i]);
    if (u->wn) memset(u->wnested, 0, u->wn * sizeof *u->wnested);
    if (u->own_p) npzs_free(u->p);
    if (u->depth > 0) npzs_inv_free(u->inv);
    unit keep = *u;
    memset(u, 0, sizeof *u);
    u->m = keep.m;
    u->cap = keep.cap;
    u->f = keep.f;
    u->capf = keep.capf;
    u->keep = keep.keep;
    u->keep_cap = keep.keep_cap;
    u->wnested = keep.wnested;
    u->wn = keep.wn;
}

static void unit_free(unit *u) {
    if (!u) return;
    unit_clear(u);
    free(u->m);
    free(u->f);
    free(u->keep);
    free(u->wnested);
    free(u);
}

static int classify(unit *u, int ended) {
    const uint8_t *h = u->head;
    size_t n = u->head_n;
    if (n >= 6 && !memcmp(h, "\x93NUMPY", 6)) return C_NPY;
    if (n >= 4 && h[0] == 'P' && h[1] == 'K' && ((h[2] == 3 && h[3] == 4) || (h[2] == 5 && h[3] == 6))) return C_ZIP;
    if (n >= 2 && h[0] == 0x1F && h[1] == 0x8B) return C_GZIP;
    if (n >= 1 && npzs_sniff_bytes(h, n, ended) == NPZS_SNIFF_PICKLE) return C_PICKLE;
    if (n >= 9 && h[8] == '{') { /* safetensors: an 8-byte little-endian header length, then its JSON */
        uint64_t hl = 0;
        for (int k = 7; k >= 0; k--) hl = hl << 8 | h[k];
        if (hl >= 2 && hl <= (100u << 20)) return C_SAFETENSORS;
    }
    return C_UNKNOWN;
}

/* The container is known: set up what reads the rest.  -1 to go on, else the unit's status. */
static int unit_start(unit *u, int ended) {
    u->container = classify(u, ended);
    report_error e;
    switch (u->container) {
    case C_NPY:
    case C_ZIP:
        if (!u->p) {
            if (!(u->p = npzs_new(&u->so->op.lim, NULL))) return u->status = 2;
            u->own_p = 1;
        }
        npzs_events(u->p, NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_BLOB) |
                              NPZS_EV_BIT(NPZS_EV_MEMBER_END));
        if (u->so->keep_going && u->container == C_ZIP) {
            if (!u->inv && !(u->inv = npzs_inv_new(&u->so->op.lim, NULL))) return u->status = 2;
            npzs_inv_content(u->inv, inv_content, u);
        } else {
            u->inv = u->depth > 0 ? (npzs_inv_free(u->inv), NULL) : NULL;
        }
        return -1;
    case C_GZIP:
        memset(&u->z, 0, sizeof u->z);
        if (inflateInit2(&u->z, 16 + 15) != Z_OK) return u->status = 2;
        u->z_ready = 1;
        keep_begin(u);
        u->kpre_n = 4; /* keep every byte: the content is looked into whatever it is */
        memcpy(u->kpre, "PK\3\4", 4);
        return -1;
    case C_PICKLE:
        report_error_rule(&e, "pickle", "SCAN.pickle-file", 0, -1);
        add_finding(u, &e, NULL, 0);
        return u->status = 1;
    default: return u->status = 0; /* safetensors, unknown: nothing a loader unpickles */
    }
}

/* The parser's verdict: its error is a finding; the walker learns where it stopped. */
static void parser_final(unit *u, int st) {
    u->final = st;
    if (st == 1 || npzs_error(u->p)) {
        report_error e;
        report_error_of(&e, u->p);
        if (u->inv) npzs_inv_check_after(u->inv, npzs_error_offset(u->p));
        /* the member it stopped in: listed (its name, from the parser's table) with the error */
        size_t nl;
        const char *nm = npzs_error_member_name(u->p, &nl);
        if (!u->inv && u->o.open && nm) {
            smember *m = add_member(u, nm, nl);
            if (m) {
                m->offset = u->o.m[u->o.n].offset;
                m->method = u->o.m[u->o.n].method;
                member_finding(u, u->n - 1, &e);
                return;
            }
        }
        if (u->inv) return; /* the walker's members say it (unit_finish) */
        add_finding(u, &e, nm, nm ? nl : 0);
    }
}

static void gzip_some(unit *u, const uint8_t *b, size_t n) {
    u->z.next_in = (Bytef *)(uintptr_t)b;
    u->z.avail_in = (uInt)n;
    uint8_t zbuf[65536];
    while (u->z.avail_in && !u->z_end && !u->z_bad) {
        u->z.next_out = zbuf;
        u->z.avail_out = sizeof zbuf;
        int rc = inflate(&u->z, Z_NO_FLUSH);
        keep_bytes(u, zbuf, sizeof zbuf - u->z.avail_out);
        if (rc == Z_STREAM_END) u->z_end = 1;
        else if (rc != Z_OK && rc != Z_BUF_ERROR) u->z_bad = 1;
        else if (rc == Z_BUF_ERROR) break;
        if (u->keep_over) break; /* past --nested-bytes: said at the end */
    }
}

/* The walker's members past the parser's completed ones, each with its verdict (kept going). */
static void walker_members(unit *u) {
    size_t from = u->o.n, cnt = npzs_inv_count(u->inv);
    const npzs_parser *rej = npzs_error(u->p) ? u->p : NULL;
    int attached = 0;
    for (size_t i = from; i < cnt; i++) {
        const npzs_inv_member *w = npzs_inv_get(u->inv, i);
        smember *m = add_member(u, w->name, w->name_len);
        if (!m) return;
        size_t k = u->n - 1;
        m->from_walker = 1;
        m->kind = (int)w->kind; /* (an enum: its values fit) */
        m->method = w->method;
        m->sniff = w->sniff;
        m->size = w->size;
        m->csize = w->csize;
        m->offset = w->offset;
        dtype_copy(m, w->dtype);
        report_error e;
        keep_error(&e, u->inv, i, rej, from);
        if (e.code) {
            attached |= rej && i == from && e.rule == npzs_error_rule(rej);
            member_finding(u, k, &e);
        }
        if (m->sniff == NPZS_SNIFF_PICKLE) {
            report_error_rule(&e, "pickle", "SCAN.pickle-member", m->offset, (long)k);
            member_finding(u, k, &e);
        }
        if (m->sniff == NPZS_SNIFF_ZIP || m->sniff == NPZS_SNIFF_GZIP) {
            unit *c = i < u->wn ? u->wnested[i] : NULL;
            if (c) {
                u->wnested[i] = NULL;
                m->nested = c;
                nested_findings(u, k, c);
            } else if (w->checked) {
                int deep = (uint64_t)u->depth + 1 > u->so->nested_depth;
                report_error_rule(&e, "limit", deep ? "SCAN.nested-depth" : "SCAN.nested-bytes", m->offset, (long)k);
                if (deep) set_limit(&e, "nested_depth", u->so->nested_depth, (uint64_t)u->depth + 1);
                else set_limit(&e, "nested_bytes", u->so->nested_bytes, w->size);
                member_finding(u, k, &e);
            }
        }
    }
    if (rej && !attached) { /* the parser's error belongs to no member the walker lists */
        report_error e;
        report_error_of(&e, rej);
        size_t nl;
        const char *nm = npzs_error_member_name(rej, &nl);
        add_finding(u, &e, nm, nm ? nl : 0);
    }
}

static void gzip_end(unit *u) {
    report_error e;
    smember *m = add_member(u, NULL, 0); /* the content: a member without a name */
    if (!m) return;
    m->kind = NPZS_KIND_BLOB;
    m->size = u->keep_n;
    m->csize = u->total;
    m->sniff = npzs_sniff_bytes(u->keep, u->keep_n, 1);
    if (u->z_bad || !u->z_end) report_error_rule(&e, "inflate", "SCAN.nested-invalid", 0, 0);
    else if (u->keep_over) {
        report_error_rule(&e, "limit", "SCAN.nested-bytes", 0, 0);
        set_limit(&e, "nested_bytes", u->so->nested_bytes, 0); /* the content's size is not known */
    } else if ((uint64_t)u->depth + 1 > u->so->nested_depth) {
        report_error_rule(&e, "limit", "SCAN.nested-depth", 0, 0);
        set_limit(&e, "nested_depth", u->so->nested_depth, (uint64_t)u->depth + 1);
    } else {
        unit *c = unit_new(u->so, u->depth + 1, NULL, NULL);
        if (!c) return;
        c->start = u->start;
        if (unit_push(c, u->keep, u->keep_n) < 0) unit_finish(c);
        m->nested = c;
        nested_findings(u, 0, c);
        return;
    }
    member_finding(u, 0, &e);
}

/* The unit's end: its members complete, its kind, its status. */
static int unit_end(unit *u) {
    if (u->container == C_NPY || u->container == C_ZIP) {
        if (u->inv) walker_members(u);
        else if (u->final < 0) parser_final(u, 2);
        if (u->container == C_ZIP) u->container = zip_kind(u);
    } else if (u->container == C_GZIP) {
        gzip_end(u);
    }
    int st = u->nf ? 1 : 0;
    if (u->status < st) u->status = st;
    for (size_t i = 0; i < u->n; i++)
        if (u->m[i].nested && u->m[i].nested->status == 2) u->status = 2;
    return u->status;
}

/* The bytes after the head, to the container's reader: -1 to go on, else the status. */
static int unit_feed(unit *u, const uint8_t *b, size_t n, int eof) {
    if (u->container == C_GZIP) {
        if (n) gzip_some(u, b, n);
        return eof || u->z_end || u->z_bad || u->keep_over ? unit_end(u) : -1;
    }
    if (u->final < 0) {
        int st = parse_some(u, b, n, eof);
        if (st >= 0) parser_final(u, st);
    }
    if (u->inv) {
        if (n && npzs_inv_push(u->inv, b, n) != 0) return u->status = 2;
        if (eof) npzs_inv_finish(u->inv);
    }
    if (eof || (u->final >= 0 && !u->inv)) return unit_end(u);
    return -1;
}

static void skip(unit *u, const char *rule) {
    u->skip_rule = rule;
    u->status = 2;
}

/* Why a skipped unit was: its own words (an errno's, say), else its rule's. */
static const char *skip_words(const unit *u) {
    return u->skip_msg[0] ? u->skip_msg : report_rule_message(u->skip_rule);
}

/* Bytes of the unit's input: -1 to go on, else its status (the rest is not needed). */
static int unit_push(unit *u, const uint8_t *b, size_t n) {
    if (u->status >= 0) return u->status;
    u->total += n;
    if (u->depth == 0 && u->total > u->so->max_file_size) {
        skip(u, "SCAN.max-file-size");
        set_limit(&u->skip_lim, "max_file_size", u->so->max_file_size, 0); /* a stream's size is not known */
        return 2;
    }
    double took = u->depth == 0 && u->so->timeout ? elapsed(u) : 0.0;
    if (took > (double)u->so->timeout) {
        skip(u, "SCAN.timeout");
        set_limit(&u->skip_lim, "timeout", u->so->timeout, (uint64_t)took); /* whole seconds, > timeout */
        return 2;
    }
    if (!u->container) {
        size_t k = 0, had = u->head_n;
        while (u->head_n < sizeof u->head && k < n) u->head[u->head_n++] = b[k++];
        if (u->head_n < sizeof u->head) return -1;
        if (unit_start(u, 0) >= 0) return u->status;
        /* the head is this push's first bytes: the reader takes the push whole (a 16-byte push
         * first would make the parser stage the local header across two pushes, for every file) */
        if (!had) return unit_feed(u, b, n, 0);
        int st = unit_feed(u, u->head, u->head_n, 0);
        if (st >= 0) return st;
        b += k;
        n -= k;
    }
    return unit_feed(u, b, n, 0);
}

static int unit_finish(unit *u) {
    if (u->status >= 0) return u->status;
    if (!u->container) {
        if (unit_start(u, 1) >= 0) return u->status;
        if (u->container == C_NPY || u->container == C_ZIP || u->container == C_GZIP) {
            int st = unit_feed(u, u->head, u->head_n, 0);
            if (st >= 0) return st;
        }
    }
    return unit_feed(u, NULL, 0, 1);
}

/* ---- printing ---- */

static void json_unit(wbuf *f, const unit *u);

static void json_smember(wbuf *f, const smember *m) {
    wb_c(f, '{');
    json_name_key(f, m->name, m->name_len);
    json_key_word(f, "kind", report_kind_name(m->kind));
    json_key_word(f, "method", report_method_name(m->method));
    if (m->dtype[0]) {
        wb_s(f, ", \"dtype\": ");
        json_str(f, m->dtype, strlen(m->dtype));
    }
    json_key_u64(f, "size", m->size);
    json_key_u64(f, "stored_size", m->csize);
    json_key_u64(f, "offset", m->offset);
    json_key_word(f, "sniff", m->sniff ? npzs_sniff_name(m->sniff) : NULL);
    if (m->sha256) json_key_hex(f, "sha256", m->sha256, 32);
    json_key_word(f, "status", report_status(m->err.code != NULL, m->kind != 0));
    wb_s(f, ", \"error\": ");
    if (m->err.code) json_error(f, &m->err);
    else wb_s(f, "null");
    if (m->nested) {
        wb_s(f, ", \"contains\": {");
        json_unit(f, m->nested);
        wb_c(f, '}');
    }
    wb_c(f, '}');
}

/* The unit as JSON: ok, container, format, members, findings, error (a file's: with "file"). */
static void json_unit(wbuf *f, const unit *u) {
    report_error skipped;
    wb_s(f, u->status == 0 ? "\"ok\": true, \"container\": " : "\"ok\": false, \"container\": ");
    if (u->container) {
        wb_c(f, '"');
        wb_s(f, CONTAINER[u->container]);
        wb_c(f, '"');
    } else {
        wb_s(f, "null");
    }
    npzs_format fmt = u->p && (u->container != C_GZIP && u->container != C_PICKLE) ? npzs_format_of(u->p)
                                                                                   : NPZS_FORMAT_UNKNOWN;
    wb_s(f, fmt == NPZS_FORMAT_NPY   ? ", \"format\": \"npy\""
            : fmt == NPZS_FORMAT_NPZ ? ", \"format\": \"npz\""
                                     : ", \"format\": null");
    wb_s(f, ", \"members\": [");
    for (size_t i = 0; i < u->n; i++) {
        if (i) wb_s(f, ", ");
        json_smember(f, &u->m[i]);
    }
    wb_s(f, "], \"findings\": [");
    for (size_t i = 0; i < u->nf; i++) {
        if (i) wb_s(f, ", ");
        json_error(f, &u->f[i].e);
    }
    wb_s(f, "], \"error\": ");
    if (u->nf) {
        json_error(f, &u->f[0].e);
    } else if (u->skip_rule) {
        report_error_rule(&skipped, "skipped", u->skip_rule, 0, -1);
        skipped.message = skip_words(u);
        if (u->skip_lim.limit)
            set_limit(&skipped, u->skip_lim.limit, u->skip_lim.limit_value, u->skip_lim.limit_needed);
        json_error(f, &skipped);
    } else {
        wb_s(f, "null");
    }
}

static void text_unit(wbuf *f, const unit *u, const char *prefix) {
    for (size_t i = 0; i < u->n; i++) {
        const smember *m = &u->m[i];
        wb_s(f, "  ");
        wb_s(f, prefix);
        safe_str(f, m->name ? m->name : "", m->name_len);
        wb_s(f, ": ");
        if (m->kind == NPZS_KIND_ARRAY) wb_fmt(f, "array %s", m->dtype[0] ? m->dtype : "?");
        else if (m->sniff) wb_fmt(f, "blob (%s)", npzs_sniff_name(m->sniff));
        else wb_s(f, "-");
        wb_fmt(f, ", %" PRIu64 " bytes", m->size);
        if (m->sha256) {
            wb_s(f, ", sha256 ");
            wb_hex(f, m->sha256, 32);
        }
        if (m->nested) wb_fmt(f, ", %s", m->nested->container ? CONTAINER[m->nested->container] : "?");
        if (m->err.code) {
            wb_s(f, ": ");
            text_error(f, &m->err);
        } else {
            wb_s(f, m->kind ? ": ok" : ": listed");
        }
        wb_c(f, '\n');
        if (m->nested && prefix[0] == 0) text_unit(f, m->nested, "  ");
    }
}

static void text_file(wbuf *f, const unit *u, const char *label) {
    safe_str(f, label, strlen(label));
    wb_fmt(f, ": %s (%s, %zu member%s",
           u->status == 0   ? "ok"
           : u->status == 1 ? "FOUND"
                            : "SKIPPED",
           u->container ? CONTAINER[u->container] : "-", u->n, u->n == 1 ? "" : "s");
    if (u->nf) wb_fmt(f, ", %zu finding%s", u->nf, u->nf == 1 ? "" : "s");
    wb_s(f, ")\n");
    text_unit(f, u, "");
    for (size_t i = 0; i < u->nf; i++) {
        const report_error *e = &u->f[i].e;
        wb_s(f, "  finding: ");
        if (e->member) {
            safe_str(f, e->member, e->member_len);
            wb_s(f, ": ");
        }
        text_error(f, e);
        wb_c(f, '\n');
    }
    if (u->skip_rule) { wb_fmt(f, "  skipped: %s [%s]\n", skip_words(u), u->skip_rule); }
}

/* ---- SARIF 2.1.0: every finding of every file, written at the end ---- */

typedef struct sarif_result {
    char *file;
    report_error e; /* its member: the path, owned */
    char *path;
} sarif_result;

/* SARIF's results and notifications: a file's (made on the thread that scans it), then the whole
 * run's (each file's added in the input's order: the same document with -P N as without). */
typedef struct sarif_set {
    sarif_result *r;
    size_t nr, capr;
    char **skipped; /* files skipped or unreadable (SARIF's notifications) */
    size_t ns, caps;
} sarif_set;

/* What a thread keeps from one file to the next: its parser, its walker, its file's unit (their
 * tables); released by scan_thread_end. */
typedef struct scanner {
    npzs_parser *p;
    npzs_inv *inv;
    unit *top;
} scanner;
static _Thread_local scanner mine;

/* One file's scan: the options, and where its SARIF goes (NULL without --sarif). */
typedef struct sweep {
    const scan_opts *so;
    sarif_set *set;
} sweep;

static void sarif_keep(sarif_set *s, const char *file, const unit *u) {
    for (size_t i = 0; i < u->nf; i++) {
        sarif_result *nr = table_room(s->r, &s->capr, s->nr, sizeof *s->r, 16);
        if (!nr) return;
        s->r = nr;
        sarif_result *r = &s->r[s->nr++];
        r->file = dup_bytes(file, strlen(file));
        r->e = u->f[i].e;
        r->path = u->f[i].path ? dup_bytes(u->f[i].path, u->f[i].e.member_len) : NULL;
        r->e.member = r->path;
        r->e.detail = NULL; /* the unit's (SARIF gives the message) */
    }
}

static void note_skipped(sarif_set *s, const char *file, const char *why) {
    char **ns = table_room(s->skipped, &s->caps, s->ns, sizeof *s->skipped, 16);
    if (!ns) return;
    s->skipped = ns;
    size_t fl = strlen(file), wl = strlen(why);
    char *t = malloc(fl + wl + 3);
    if (!t) return;
    memcpy(t, file, fl);
    memcpy(t + fl, ": ", 2);
    memcpy(t + fl + 2, why, wl + 1);
    s->skipped[s->ns++] = t;
}

/* A path as a URI reference (RFC 3986): unreserved bytes and '/' as they are, the rest %XX. */
static void uri(wbuf *f, const char *s) {
    static const char hex[] = "0123456789ABCDEF";
    wb_c(f, '"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if ((*c >= 'a' && *c <= 'z') || (*c >= 'A' && *c <= 'Z') || (*c >= '0' && *c <= '9') || strchr("-._~/", *c))
            wb_c(f, *c);
        else {
            wb_c(f, '%');
            wb_c(f, hex[*c >> 4]);
            wb_c(f, hex[*c & 15]);
        }
    }
    wb_c(f, '"');
}

static void sarif_write(const sarif_set *s, FILE *sink) {
    wbuf w, *f = &w;
    wb_init(f, sink);
    /* the rules the results name, each once, in the order met: their descriptors from the table */
    const char **rules = calloc(s->nr + 1, sizeof *rules);
    size_t nrules = 0;
    wb_s(
        f,
        "{\"$schema\": \"https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json\", \"version\": \"2.1.0\", \"runs\": [{"
        "\"tool\": {\"driver\": {\"name\": \"npzstream\", \"version\": \"" NPZS_VERSION
        "\", "
        "\"rules\": [");
    for (size_t i = 0; rules && i < s->nr; i++) {
        const char *id = s->r[i].e.rule ? s->r[i].e.rule : s->r[i].e.code;
        size_t k = 0;
        while (k < nrules && strcmp(rules[k], id)) k++;
        if (k < nrules) continue;
        rules[nrules++] = id;
        if (k) wb_s(f, ", ");
        wb_s(f, "{\"id\": ");
        json_str(f, id, strlen(id));
        const char *msg = report_rule_message(id), *hint = npzs_rule_hint(id);
        wb_s(f, ", \"shortDescription\": {\"text\": ");
        json_str(f, msg[0] ? msg : id, strlen(msg[0] ? msg : id));
        wb_c(f, '}');
        if (hint) {
            wb_s(f, ", \"help\": {\"text\": ");
            json_str(f, hint, strlen(hint));
            wb_c(f, '}');
        }
        wb_s(f, ", \"defaultConfiguration\": {\"level\": \"error\"}}");
    }
    wb_s(f, "]}}, \"invocations\": [{\"executionSuccessful\": ");
    wb_s(f, s->ns ? "false" : "true");
    wb_s(f, ", \"toolExecutionNotifications\": [");
    for (size_t i = 0; i < s->ns; i++) {
        if (i) wb_s(f, ", ");
        wb_s(f, "{\"level\": \"error\", \"message\": {\"text\": ");
        json_str(f, s->skipped[i], strlen(s->skipped[i]));
        wb_s(f, "}}");
    }
    wb_s(f, "]}], \"results\": [");
    for (size_t i = 0; i < s->nr; i++) {
        const sarif_result *r = &s->r[i];
        const char *id = r->e.rule ? r->e.rule : r->e.code;
        size_t k = 0;
        while (rules && k < nrules && strcmp(rules[k], id)) k++;
        if (i) wb_s(f, ", ");
        wb_s(f, "{\"ruleId\": ");
        json_str(f, id, strlen(id));
        if (rules) wb_fmt(f, ", \"ruleIndex\": %zu", k);
        wb_s(f, ", \"level\": \"error\", \"message\": {\"text\": ");
        char msg[700];
        int n = snprintf(msg, sizeof msg, "%s: %s", r->e.code, r->e.message);
        if (r->e.limit && n > 0 && (size_t)n < sizeof msg) /* the numbers as the text output says them */
            snprintf(msg + n, sizeof msg - (size_t)n, REPORT_LIMIT_FMT, r->e.limit_needed, r->e.limit,
                     r->e.limit_value);
        json_str(f, msg, strlen(msg));
        wb_s(f, "}");
        if (r->e.limit) { /* added in 0.8.0: a limit's numbers, as the JSON's error gives them */
            wb_s(f, ", \"properties\": {");
            json_limit(f, &r->e);
            wb_c(f, '}');
        }
        wb_s(f, ", \"locations\": [{\"physicalLocation\": {\"artifactLocation\": {\"uri\": ");
        uri(f, r->file);
        wb_fmt(f, "}, \"region\": {\"byteOffset\": %" PRIu64 "}}", r->e.offset);
        if (r->path) {
            wb_s(f, ", \"logicalLocations\": [{\"name\": ");
            json_str(f, r->path, r->e.member_len);
            wb_s(f, ", \"fullyQualifiedName\": ");
            json_str(f, r->path, r->e.member_len);
            wb_s(f, ", \"kind\": \"member\"}]");
        }
        wb_s(f, "}]}");
    }
    wb_s(f, "]}]}\n");
    wb_flush(f);
    free(rules);
}

/* ---- the files ---- */

static void report_unit(sweep *s, const char *label, unit *u) {
    const scan_opts *so = s->so;
    int sarif_stdout = so->sarif && !strcmp(so->sarif, "-");
    if (s->set) sarif_keep(s->set, label, u);
    if (u->skip_rule && s->set) note_skipped(s->set, label, skip_words(u));
    if (so->quiet || sarif_stdout) return;
    wbuf w;
    wb_init(&w, OUT);
    if (so->jsonl) {
        wb_c(&w, '{');
        json_bytes(&w, "file", label, strlen(label));
        wb_s(&w, ", ");
        json_unit(&w, u);
        wb_s(&w, "}\n");
    } else {
        text_file(&w, u, label);
    }
    wb_flush(&w);
    fflush(OUT);
}

/* A file that is not read (a link, a FIFO, too large, or it cannot be opened). */
static int skipped_file(sweep *s, const char *label, const char *rule, const char *why, const report_error *lim) {
    unit *u = unit_new(s->so, 0, NULL, NULL);
    if (!u) return 2;
    skip(u, rule);
    if (lim) u->skip_lim = *lim;
    snprintf(u->skip_msg, sizeof u->skip_msg, "%s", why ? why : report_rule_message(rule));
    if (!s->so->quiet && !s->so->jsonl) cli_say("npzstream", label, NULL, NULL, ": %s", u->skip_msg);
    report_unit(s, label, u);
    unit_free(u);
    return 2;
}

static int scan_push(void *ctx, npzs_in *in) {
    unit *u = ctx;
    int st = unit_push(u, (const uint8_t *)in->src + in->pos, in->size - in->pos);
    in->pos = in->size;
    return st;
}

static void scan_eof(void *ctx) { unit_finish(ctx); }

/* One file (walked: its links not followed). */
static int scan_file(sweep *s, const char *path, int walked) {
    int fd = 0;
    const char *label = path;
    if (strcmp(path, "-") != 0) {
        fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | (walked ? O_NOFOLLOW : 0));
        if (fd < 0) {
            if (errno == ELOOP && walked) return skipped_file(s, label, "SCAN.symlink", NULL, NULL);
            char buf[64]; /* strerror_r: the threads of -P N share strerror's buffer */
            return skipped_file(s, label, "SCAN.not-regular", strerror_r(errno, buf, sizeof buf), NULL);
        }
        struct stat st;
        if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
            close(fd);
            return skipped_file(s, label, "SCAN.not-regular", NULL, NULL);
        }
        if ((uint64_t)st.st_size > s->so->max_file_size) {
            close(fd);
            report_error lim = {0};
            set_limit(&lim, "max_file_size", s->so->max_file_size, (uint64_t)st.st_size);
            return skipped_file(s, label, "SCAN.max-file-size", NULL, &lim);
        }
        fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
    }
    if (mine.p) npzs_reset(mine.p);
    else if (!(mine.p = new_parser(&s->so->op))) {
        if (fd) close(fd);
        return 2;
    }
    if (input_helper(mine.p, &s->so->op, 1) != 0) { /* -j N: the bytes read (nested containers) */
        if (fd) close(fd);
        return 2;
    }
    if (mine.inv) npzs_inv_reset(mine.inv);
    if (mine.top) unit_clear(mine.top);
    unit *u = mine.top = unit_init(mine.top, s->so, 0, mine.p, mine.inv);
    if (!u) {
        if (fd) close(fd);
        return 2;
    }
    char err[256] = "";
    int st = cli_read_loop_err(fd, "npzstream", label, s->so->op.feed, scan_push, scan_eof, u, err, sizeof err, NULL);
    if (fd) close(fd);
    if (u->inv && !mine.inv) mine.inv = u->inv; /* kept for the next file */
    /* (u->p and a top unit's u->inv are the thread's: unit_clear leaves them) */
    if (st == 2 && err[0]) return skipped_file(s, label, "SCAN.not-regular", err, NULL);
    if (u->status < 0) u->status = st;
    if (u->skip_rule && !s->so->quiet && !s->so->jsonl)
        cli_say("npzstream", label, NULL, NULL, ": skipped: %s", report_rule_message(u->skip_rule));
    report_unit(s, label, u);
    return u->status;
}

/* ---- the paths: what each names, walked in order ---- */

/* The walk yields entries: a tag byte, then the path.  The tags: */
#define E_NAMED 'n'   /* named on the line (or stdin, "-"): a link is followed */
#define E_WALKED 'w'  /* met while walking: opened without following a link */
#define E_LINK 'l'    /* a symbolic link met while walking: skipped */
#define E_DIR 'r'     /* a directory named without -r: skipped */
#define E_DEEP 'd'    /* a directory nested too deep: skipped */
#define E_ERRNO 'e'   /* "e<errno>:<path>": could not be listed or looked at: skipped */
#define E_AGAIN 'a'   /* --follow-symlinks: a link to a directory walked already (a loop): skipped */
#define WALK_DEPTH 64 /* directories below a named one, at most */

/* One directory being walked: its entries' names in byte order. */
typedef struct level {
    char *dir;
    char **names;
    size_t n, i;
} level;

typedef struct walk {
    const scan_opts *so;
    const char *const *paths;
    size_t npaths, i;
    level *stack;
    size_t depth, cap;
    char *entry;   /* the entry given last (valid until the next call) */
    dev_t out_dev; /* --sarif FILE, made before the walk: never itself scanned */
    ino_t out_ino;
    int has_out;
    /* --follow-symlinks: every directory walked (a link to one is not followed again, so that a
     * loop ends and each directory is walked at most twice: once through links, once as itself),
     * and the links followed (the sandbox's rules: their targets may be outside the PATHs) */
    struct stat *seen;
    size_t nseen, capseen;
    char **links;
    size_t nlinks, caplinks;
} walk;

/* --follow-symlinks: the directory st was walked already; else it is noted as walked (0). */
static int walked_before(walk *w, const struct stat *st) {
    for (size_t k = 0; k < w->nseen; k++)
        if (w->seen[k].st_dev == st->st_dev && w->seen[k].st_ino == st->st_ino) return 1;
    struct stat *ns = table_room(w->seen, &w->capseen, w->nseen, sizeof *w->seen, 16);
    if (ns) {
        w->seen = ns;
        w->seen[w->nseen++] = *st;
    }
    return 0;
}

/* --follow-symlinks: a link followed, noted for the sandbox (0, or ENOMEM). */
static int note_link(walk *w, const char *p) {
    char **nl = table_room(w->links, &w->caplinks, w->nlinks, sizeof *w->links, 16);
    if (!nl || !(nl[w->nlinks] = strdup(p))) return ENOMEM;
    w->links = nl;
    w->nlinks++;
    return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The names in directory `path`, sorted (strcmp: alphasort's order in the C locale, without
 * strcoll's cost on each comparison of a large folder).  0, or an errno.  A directory met while
 * walking is opened without following a link: one swapped for a link after its lstat is refused. */
static int list_dir(const char *path, int nofollow, level *lv) {
    int fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC | (nofollow ? O_NOFOLLOW : 0));
    DIR *d = fd < 0 ? NULL : fdopendir(fd);
    if (!d) {
        int e = errno;
        if (fd >= 0) close(fd);
        return e;
    }
    size_t cap = 0;
    int e = 0;
    struct dirent *de;
    memset(lv, 0, sizeof *lv);
    for (errno = 0; (de = readdir(d)); errno = 0) {
        if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, "..")) continue;
        char **nn = table_room(lv->names, &cap, lv->n, sizeof *lv->names, 16);
        char *name = nn ? strdup(de->d_name) : NULL;
        if (nn) lv->names = nn;
        if (!name) {
            e = ENOMEM;
            break;
        }
        lv->names[lv->n++] = name;
    }
    if (!e && errno) e = errno;
    closedir(d);
    if (e) {
        for (size_t k = 0; k < lv->n; k++) free(lv->names[k]);
        free(lv->names);
        memset(lv, 0, sizeof *lv);
        return e;
    }
    if (lv->n) qsort(lv->names, lv->n, sizeof *lv->names, by_name);
    return 0;
}

static void level_free(level *lv) {
    for (size_t k = lv->i; k < lv->n; k++) free(lv->names[k]);
    free(lv->names);
    free(lv->dir);
}

/* The entry tag+path (or "e<errno>:" path) as w->entry; NULL out of memory. */
static const char *walk_say(walk *w, char tag, int err, const char *path) {
    char num[16] = "";
    if (tag == E_ERRNO) snprintf(num, sizeof num, "%d:", err);
    size_t nl = strlen(num), pl = strlen(path);
    free(w->entry);
    if (!(w->entry = malloc(1 + nl + pl + 1))) return NULL;
    w->entry[0] = tag;
    memcpy(w->entry + 1, num, nl);
    memcpy(w->entry + 1 + nl, path, pl + 1);
    return w->entry;
}

/* Walk into directory path (owned by the walk from here): 0, or the errno it could not be listed for. */
static int walk_push(walk *w, char *path, int nofollow) {
    level *ns = table_room(w->stack, &w->cap, w->depth, sizeof *w->stack, 8);
    if (!ns) {
        free(path);
        return ENOMEM;
    }
    w->stack = ns;
    int e = list_dir(path, nofollow, &w->stack[w->depth]);
    if (e) {
        free(path);
        return e;
    }
    w->stack[w->depth++].dir = path;
    return 0;
}

/* The next entry, NULL at the end (*status raised to 2 out of memory). */
static const char *walk_next(walk *w, int *status) {
    for (;;) {
        if (w->depth) {
            level *lv = &w->stack[w->depth - 1];
            if (lv->i == lv->n) {
                level_free(lv);
                w->depth--;
                continue;
            }
            char *name = lv->names[lv->i++];
            size_t dl = strlen(lv->dir), l = dl + strlen(name) + 2;
            char *p = malloc(l);
            if (p) snprintf(p, l, "%s%s%s", lv->dir, lv->dir[dl - 1] == '/' ? "" : "/", name);
            free(name);
            if (!p) break;
            struct stat st;
            const char *e;
            int err = lstat(p, &st) != 0 ? errno : 0, link = !err && S_ISLNK(st.st_mode) && w->so->follow;
            if (link) err = stat(p, &st) != 0 ? errno : note_link(w, p); /* dangling: ENOENT; a loop of links: ELOOP */
            if (err) e = walk_say(w, E_ERRNO, err, p);
            else if (S_ISLNK(st.st_mode)) e = walk_say(w, E_LINK, 0, p);
            else if (w->has_out && st.st_dev == w->out_dev && st.st_ino == w->out_ino) {
                free(p);
                continue;
            } else if (!S_ISDIR(st.st_mode)) e = walk_say(w, link ? E_NAMED : E_WALKED, 0, p);
            else if (w->depth - 1 > WALK_DEPTH) e = walk_say(w, E_DEEP, 0, p);
            else if (w->so->follow && walked_before(w, &st) && link) e = walk_say(w, E_AGAIN, 0, p);
            else {
                char *keep = strdup(p);
                err = keep ? walk_push(w, keep, !link) : ENOMEM;
                e = err ? walk_say(w, E_ERRNO, err, p) : NULL;
                if (!err) {
                    free(p);
                    continue;
                }
            }
            free(p);
            if (!e) break;
            return e;
        }
        if (w->i == w->npaths) return NULL;
        const char *path = w->paths[w->i++];
        struct stat st;
        if (!strcmp(path, "-") || stat(path, &st) != 0 || !S_ISDIR(st.st_mode))
            return walk_say(w, E_NAMED, 0, path) ? w->entry : (*status = 2, NULL);
        if (!w->so->recursive) return walk_say(w, E_DIR, 0, path) ? w->entry : (*status = 2, NULL);
        if (w->so->follow) (void)walked_before(w, &st);
        char *keep = strdup(path);
        int err = keep ? walk_push(w, keep, 0) : ENOMEM;
        if (err) return walk_say(w, E_ERRNO, err, path) ? w->entry : (*status = 2, NULL);
    }
    fprintf(stderr, "npzstream: out of memory\n");
    *status = 2;
    return NULL;
}

static void walk_free(walk *w) {
    while (w->depth) level_free(&w->stack[--w->depth]);
    for (size_t k = 0; k < w->nlinks; k++) free(w->links[k]);
    free(w->links);
    free(w->seen);
    free(w->stack);
    free(w->entry);
}

/* The run: its options, and the SARIF of the files done so far. */
typedef struct scan_run {
    const scan_opts *so;
    sarif_set all;
} scan_run;

/* One entry of the walk (batch_work's fn: on a worker with -P N): scanned, or said to be skipped;
 * its SARIF left in *data. */
static int scan_entry(const char *entry, void *ctx, void **data) {
    const scan_run *run = ctx;
    sweep one = {run->so, NULL}, *s = &one;
    if (run->so->sarif && !(*data = s->set = calloc(1, sizeof *s->set))) {
        fprintf(ERR, "npzstream: out of memory\n");
        return 2;
    }
    const char *path = entry + 1;
    char buf[64];
    switch (entry[0]) {
    case E_NAMED: return scan_file(s, path, 0);
    case E_WALKED: return scan_file(s, path, 1);
    case E_LINK: return skipped_file(s, path, "SCAN.symlink", NULL, NULL);
    case E_DIR: return skipped_file(s, path, "SCAN.not-regular", "a directory (scan -r walks it)", NULL);
    case E_DEEP: return skipped_file(s, path, "SCAN.not-regular", "directories nested too deep", NULL);
    case E_AGAIN:
        return skipped_file(s, path, "SCAN.symlink",
                            "a link to a directory walked already (a loop, or a second way in): not followed", NULL);
    default: {
        char *end;
        long err = strtol(path, &end, 10);
        return skipped_file(s, end + 1, "SCAN.not-regular", strerror_r((int)err, buf, sizeof buf), NULL);
    }
    }
}

static void sarif_set_free(sarif_set *s) {
    for (size_t i = 0; s && i < s->nr; i++) {
        free(s->r[i].file);
        free(s->r[i].path);
    }
    for (size_t i = 0; s && i < s->ns; i++) free(s->skipped[i]);
    if (s) {
        free(s->r);
        free(s->skipped);
    }
}

/* A file's SARIF added to the run's (batch_work's done: in the input's order). */
static void scan_done(void *ctx, void *data) {
    scan_run *run = ctx;
    sarif_set *f = data, *all = &run->all;
    for (size_t i = 0; f && i < f->nr; i++) {
        sarif_result *nr = table_room(all->r, &all->capr, all->nr, sizeof *all->r, 16);
        if (!nr) break;
        all->r = nr;
        all->r[all->nr++] = f->r[i];
        f->r[i].file = f->r[i].path = NULL;
    }
    for (size_t i = 0; f && i < f->ns; i++) {
        char **ns = table_room(all->skipped, &all->caps, all->ns, sizeof *all->skipped, 16);
        if (!ns) break;
        all->skipped = ns;
        all->skipped[all->ns++] = f->skipped[i];
        f->skipped[i] = NULL;
    }
    sarif_set_free(f);
    free(f);
}

/* What the thread kept from file to file, released (batch_work's thread_end). */
static void scan_thread_end(void) {
    unit_free(mine.top);
    parser_free(mine.p); /* and its -j helper */
    npzs_inv_free(mine.inv);
    memset(&mine, 0, sizeof mine);
    batch_end();
}

static int worse(int a, int b) { return a > b ? a : b; }

static const char *walk_source(void *src, int *status) { return walk_next(src, status); }

/* --follow-symlinks: the walk's entries, all taken before the sandbox (the links' targets are
 * then known: each gets a rule) */
typedef struct walked {
    char **e;
    size_t n, cap, i;
} walked;

static const char *walked_source(void *src, int *status) {
    walked *l = src;
    (void)status;
    return l->i < l->n ? l->e[l->i++] : NULL;
}

static int walk_all(walk *w, walked *l) {
    int status = 0;
    for (const char *e; (e = walk_next(w, &status));) {
        char **ne = table_room(l->e, &l->cap, l->n, sizeof *l->e, 64);
        if (!ne || !(ne[l->n] = strdup(e))) {
            fprintf(stderr, "npzstream: out of memory\n");
            return 2;
        }
        l->e = ne;
        l->n++;
    }
    return status;
}

/* The sandbox (sandbox.h): the files named for reading, the directories named with -r for reading
 * beneath, and so the links followed (their targets: a file, or a directory beneath); nothing
 * written but stdout, stderr and the SARIF file (open already).  -1 to go on, or 2. */
static int scan_confine(const scan_opts *so, const char *const *paths, size_t npaths, char *const *links,
                        size_t nlinks) {
    cli_confine_spec c;
    memset(&c, 0, sizeof c);
    c.prog = "npzstream";
    c.off = so->op.no_sandbox;
    c.hashing = so->op.sha256;
    const char **files = calloc(npaths + 1, sizeof *files), **dirs = calloc(npaths + nlinks + 1, sizeof *dirs);
    int status = -1;
    if (!files || !dirs) {
        fprintf(stderr, "npzstream: out of memory\n");
        status = 2;
    } else {
        for (size_t i = 0; i < npaths; i++) {
            struct stat st;
            if (!strcmp(paths[i], "-")) continue;
            if (so->recursive && stat(paths[i], &st) == 0 && S_ISDIR(st.st_mode)) dirs[c.n_read_dirs++] = paths[i];
            else files[c.n_read_files++] = paths[i]; /* a directory without -r: only looked at */
        }
        for (size_t i = 0; i < nlinks; i++) dirs[c.n_read_dirs++] = links[i];
        c.read_files = files;
        c.read_dirs = dirs;
        if (cli_confine(&c) < 0) status = 2;
    }
    free(files);
    free(dirs);
    return status;
}

int cmd_scan(int argc, char **argv) {
    scan_opts so;
    const char **paths;
    size_t npaths;
    int status = scan_parse(argc, argv, &so, &paths, &npaths);
    if (status >= 0) {
        free(paths);
        opts_free(&so.op);
        return status;
    }
    scan_run run;
    memset(&run, 0, sizeof run);
    run.so = &so;
    walk w;
    memset(&w, 0, sizeof w);
    w.so = &so;
    w.paths = paths;
    w.npaths = npaths;
    /* --sarif FILE is made before the sandbox, which refuses making files (its error is said
     * after the sweep, as before); the walk leaves it out */
    FILE *sink = so.sarif && strcmp(so.sarif, "-") ? fopen(so.sarif, "w") : NULL;
    int sink_errno = errno;
    struct stat ost;
    if (sink && fstat(fileno(sink), &ost) == 0) {
        w.has_out = 1;
        w.out_dev = ost.st_dev;
        w.out_ino = ost.st_ino;
    }
    walked all;
    memset(&all, 0, sizeof all);
    int pre = so.follow ? walk_all(&w, &all) : 0;
    /* the sandbox failed (or the walk ran out of memory): nothing is scanned */
    int unconfined = pre == 2 || scan_confine(&so, paths, npaths, w.links, w.nlinks) >= 0;
    status = unconfined ? 2 : 0;
    if (unconfined) /* the SARIF says so, as a failed run, rather than being left empty */
        note_skipped(&run.all, "npzstream scan",
                     pre == 2 ? "out of memory before the scan: nothing was scanned"
                              : "the process could not be confined (stderr says why): nothing was scanned "
                                "(--no-sandbox runs unconfined)");
    else {
        batch_work work = {so.follow ? walked_source : walk_source,
                           so.follow ? (void *)&all : (void *)&w,
                           scan_entry,
                           scan_done,
                           scan_thread_end,
                           &run,
                           so.op.parallel};
        status = worse(pre, batch_work_run(&work));
    }
    for (size_t i = 0; i < all.n; i++) free(all.e[i]);
    free(all.e);
    if (so.sarif) {
        if (!strcmp(so.sarif, "-")) sink = OUT;
        if (!sink) {
            fprintf(stderr, "npzstream: --sarif %s: %s\n", so.sarif, strerror(sink_errno));
            status = 2;
        } else {
            sarif_write(&run.all, sink);
            if (sink != OUT && fclose(sink) != 0) status = 2;
        }
    }
    walk_free(&w);
    sarif_set_free(&run.all);
    free(paths);
    opts_free(&so.op);
    return status;
}
