/* opts.c -- the options every command shares: the limits, the lenient flags, --feed, --json
 * and FILE; the parser made from them. */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const char *const LIMIT_FLAGS[L__N] = {
    "--max-header-size", "--max-ndim",       "--max-fields",      "--max-depth",  "--max-members", "--max-name-len",
    "--max-extra-len",   "--max-total-bytes", "--inflate-window", "--max-memory", "--feed"};

const char LIMITS_HELP[] =
    "Limits (defaults in parentheses; see npzstream(1) and SECURITY.md):\n"
    "  --max-header-size N   .npy header size in characters (10000)\n"
    "  --max-ndim N          dimensions of an array, at most 64 (32)\n"
    "  --max-fields N        names, titles and types in a structured dtype (100000)\n"
    "  --max-depth N         nesting of structured dtypes, at most 1000 (32)\n"
    "  --max-members N       members of an archive (100000)\n"
    "  --max-name-len N      bytes of a member name, at most 65535 (4096)\n"
    "  --max-extra-len N     bytes of a ZIP extra field block, at most 65535 (65535)\n"
    "  --max-total-bytes N   total uncompressed member bytes: stops zip bombs (1Gi)\n"
    "  --inflate-window N    inflate output chunk in bytes (256Ki)\n"
    "  --max-memory N        bytes the parser may hold, 0 for no cap (256Mi)\n"
    "  --feed N              hand the parser at most N bytes per push (testing)\n"
    "  --inflate-threads N   inflate the deflated members of one archive on N worker threads while\n"
    "                        the stream goes on (at most 64; 0 and 1: none; -j N and --jobs N are\n"
    "                        its former names); the verdict is the same as without\n"
    "  --inflate-memory N    bytes those workers' members may hold at once (128Mi a worker;\n"
    "                        --jobs-memory is its former name)\n"
    "Your rules (README.md, \"Policies\"):\n"
    "  --policy FILE         accept only files the JSON policy in FILE describes (members, dtypes,\n"
    "                        shapes, values, hashes); a violation is a rejection (code policy)\n"
    "  --sha256              report each array's SHA-256 (of its data bytes, however it was saved)\n"
    "Lenient flags (off by default; each accepts what the strict rules refuse, see SECURITY.md):\n"
    "  --lenient-npy-trailing   bytes after a .npy's array are consumed and ignored (as np.load does)\n"
    "  --lenient-header-newline a header ending \"}\\n\" then spaces (npyjs); NumPy 2.x on\n"
    "                           Python 3.12+ refuses such files\n"
    "  --lenient-fast-inflate   inflate with ISA-L (about 2x zlib; where the build has it): may\n"
    "                           accept deflate data zlib, and so np.load, refuses (SECURITY.md)\n";

const char EXIT_HELP[] =
    "Exit status: 0 accepted, 1 rejected (invalid or unsafe input), 2 usage or I/O error.\n";


int cli_parse_u64(const char *s, uint64_t *v) {
    char *end;
    if (!s || !*s || *s == '-' || *s == '+' || *s == ' ') return -1; /* strtoull would take them */
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || *end) return -1;
    *v = x;
    return 0;
}


/* A size: digits, then nothing or one suffix of SI (K M G T P E: powers of 1000) or IEC (Ki Mi Gi
 * Ti Pi Ei: powers of 1024); no sign, no space, no fraction; 0 or -1 (also on overflow). */
int cli_parse_size(const char *s, uint64_t *v) {
    if (!s || *s < '0' || *s > '9') return -1;
    uint64_t x = 0;
    for (; *s >= '0' && *s <= '9'; s++) {
        unsigned d = (unsigned)(*s - '0');
        if (x > (UINT64_MAX - d) / 10) return -1;
        x = x * 10 + d;
    }
    if (*s) {
        static const char units[] = "KMGTPE";
        const char *u = strchr(units, *s);
        if (!u || !*u) return -1;
        int iec = s[1] == 'i';
        if (s[1 + iec] != 0) return -1;
        uint64_t base = iec ? 1024 : 1000;
        for (long k = 0; k <= u - units; k++) {
            if (x > UINT64_MAX / base) return -1;
            x *= base;
        }
    }
    *v = x;
    return 0;
}

void opts_init(opts *o) {
    memset(o, 0, sizeof *o);
    npzs_limits_default(&o->lim);
}

void opts_free(opts *o) {
    npzs_policy_free(o->policy);
    o->policy = NULL;
}

/* --policy FILE: read (at most 1 MiB) and compiled; a fault is a usage error naming the line,
 * column and field. */
static int load_policy(opts *o, const char *path) {
    if (!path || !*path) {
        fprintf(stderr, "npzstream: --policy needs a file (JSON, README.md \"Policies\")\n");
        return -1;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "npzstream: --policy %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = (1u << 20) + 1, n = 0;
    char *text = malloc(cap);
    if (!text) { fclose(f); fprintf(stderr, "npzstream: out of memory\n"); return -1; }
    for (size_t r; n < cap && (r = fread(text + n, 1, cap - n, f)) > 0;) n += r;
    int rerr = ferror(f);
    fclose(f);
    if (rerr) { free(text); fprintf(stderr, "npzstream: --policy %s: read error\n", path); return -1; }
    if (n == cap) { free(text); fprintf(stderr, "npzstream: --policy %s: larger than 1 MiB\n", path); return -1; }
    npzs_policy_error e;
    npzs_policy *pol = npzs_policy_new(text, n, NULL, &e);
    free(text);
    if (!pol) {
        if (e.line) fprintf(stderr, "npzstream: --policy %s:%u:%u: %s%s%s\n", path, e.line, e.column, e.path,
                            e.path[0] ? ": " : "", e.message);
        else fprintf(stderr, "npzstream: --policy %s: %s\n", path, e.message);
        return -1;
    }
    npzs_policy_free(o->policy); /* the last --policy wins */
    o->policy = pol;
    return 0;
}

static int set_limit(opts *o, int id, uint64_t v) {
    uint32_t v32 = v > UINT32_MAX ? UINT32_MAX : (uint32_t)v;
    if (id != L_HEADER && id != L_TOTAL && id != L_FEED && id != L_MEMORY && v > UINT32_MAX) { /* never clamped */
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
    case L_MEMBERS: o->lim.max_members = v32; break; /* above 2^31 - 1: npzs_limits_check refuses it */
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
int parse_limit(opts *o, int argc, char **argv, int *i) {
    const char *a = argv[*i];
    static const struct { const char *flag; uint32_t bit; } lenient[] = {
        {"--lenient-npy-trailing", NPZS_LENIENT_NPY_TRAILING},
        {"--lenient-header-newline", NPZS_LENIENT_HEADER_NEWLINE},
        {"--lenient-fast-inflate", NPZS_LENIENT_FAST_INFLATE}};
    for (size_t k = 0; k < sizeof lenient / sizeof lenient[0]; k++)
        if (strcmp(a, lenient[k].flag) == 0) {
            o->lim.lenient |= lenient[k].bit;
            return 1;
        }
    if (!strcmp(a, "--policy") || !strncmp(a, "--policy=", 9)) {
        const char *v = a[8] == '=' ? a + 9 : (*i + 1 < argc ? argv[++*i] : NULL);
        return load_policy(o, v) < 0 ? -1 : 1;
    }
    if (!strcmp(a, "--sha256")) {
        if (!npzs_sha256_built()) {
            fprintf(stderr, "npzstream: --sha256: this build has no SHA-256 (rebuild with libssl-dev installed)\n");
            return -1;
        }
        o->sha256 = 1;
        return 1;
    }
    /* --inflate-threads N (-j N, --jobs N: its former names, kept), --inflate-memory SIZE
     * (--jobs-memory), -P N / --parallel N */
    static const struct { const char *flag; int kind; } counted[] = {
        {"--inflate-threads", 0}, {"--jobs", 0}, {"-j", 0}, {"--inflate-memory", 1}, {"--jobs-memory", 1},
        {"--parallel", 2}, {"-P", 2}};
    for (size_t k = 0; k < sizeof counted / sizeof counted[0]; k++) {
        const char *f = counted[k].flag;
        size_t l = strlen(f);
        if (strncmp(a, f, l) != 0) continue;
        int shortf = f[1] != '-';
        if (a[l] != 0 && a[l] != '=' && !(shortf && a[l] >= '0' && a[l] <= '9')) continue; /* --jobsfoo: not ours */
        const char *val = a[l] == '=' ? a + l + 1 : a[l] ? a + l : (*i + 1 < argc ? argv[*i + 1] : NULL);
        uint64_t v;
        int kind = counted[k].kind;
        if (kind == 1 ? cli_parse_size(val, &v) < 0 : cli_parse_u64(val, &v) < 0 || v > 64) {
            fprintf(stderr, kind == 1 ? "npzstream: %s needs a size (digits, optionally K M G or Ki Mi Gi ...)\n"
                                      : "npzstream: %s needs a number from 0 to 64\n", f);
            return -1;
        }
        if (!a[l]) (*i)++;
        if (kind == 0) o->jobs = (unsigned)v;
        else if (kind == 1) o->jobs_memory = v;
        else o->parallel = (unsigned)v;
        return 1;
    }
    for (int id = 0; id < L__N; id++) {
        size_t l = strlen(LIMIT_FLAGS[id]);
        if (strncmp(a, LIMIT_FLAGS[id], l) != 0 || (a[l] != 0 && a[l] != '=')) continue;
        const char *val = a[l] == '=' ? a + l + 1 : (*i + 1 < argc ? argv[*i + 1] : NULL);
        uint64_t v;
        if (cli_parse_size(val, &v) < 0) {
            fprintf(stderr, "npzstream: %s needs a non-negative integer, optionally with a suffix "
                            "(K M G T P E, or Ki Mi Gi Ti Pi Ei)\n", LIMIT_FLAGS[id]);
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

/* The parser of a batch: one a thread, made for the first file and reset (npzs_reset: the limits,
 * policy, hashing and buffers kept) for the next ones; parser_done() gives it back, batch_end()
 * releases it. */
static _Thread_local npzs_parser *kept;
static _Thread_local const opts *kept_for;

npzs_parser *batch_parser(const opts *o) {
    npzs_parser *p = kept;
    if (p && kept_for == o) {
        kept = NULL;
        npzs_reset(p);
        return p;
    }
    return new_parser(o);
}

void parser_done(npzs_parser *p, const opts *o) {
    if (!p) return;
    if (kept) {
        parser_free(p);
        return;
    }
    kept = p;
    kept_for = o;
}

/* The helper of -j N (--inflate-threads): one a thread too, over the thread's parser, kept with
 * it from file to file (npzs_reset of the parser resets the helper), so its workers start once
 * for the batch, and only when a member is large enough to gain from one. */
static _Thread_local npzs_par *kept_q;
static _Thread_local npzs_parser *kept_q_p;

npzs_par *batch_helper(npzs_parser *p, const opts *o, int data) {
    if (kept_q && kept_q_p == p) return kept_q;
    uint64_t held = o->jobs_memory ? o->jobs_memory : (uint64_t)o->jobs << 27;
    npzs_par *q = npzs_par_new(p, o->jobs, held);
    /* the workers keep only the headers unless the bytes are read: by the command, or by the
     * parser itself for a policy's value checks and hashes */
    if (q && !data && !o->policy && !o->sha256 && npzs_par_skip_data(q) != 0) {
        npzs_par_free(q);
        q = NULL;
    }
    if (q) {
        npzs_par_free(kept_q);
        kept_q = q;
        kept_q_p = p;
    }
    return q;
}

void parser_free(npzs_parser *p) {
    if (p && p == kept_q_p) {
        npzs_par_free(kept_q);
        kept_q = NULL;
        kept_q_p = NULL;
    }
    npzs_free(p);
}

void batch_end(void) {
    parser_free(kept);
    kept = NULL;
    kept_for = NULL;
    cli_read_buffer_free();
}

npzs_parser *new_parser(const opts *o) {
    const char *bad = npzs_limits_check(&o->lim);
    if (bad) {
        fprintf(ERR, "npzstream: %s: out of the range the library accepts\n", flag_of(bad));
        return NULL;
    }
    npzs_parser *p = npzs_new(&o->lim, NULL);
    if (!p) {
        fprintf(ERR, "npzstream: out of memory (or --max-memory below the parser's own size)\n");
        return NULL;
    }
    if ((o->policy && npzs_policy_use(p, o->policy) < 0) || (o->sha256 && npzs_hash(p, NPZS_HASH_SHA256) < 0)) {
        fprintf(ERR, "npzstream: out of memory for the policy (or --max-memory below it)\n");
        parser_free(p);
        return NULL;
    }
    return p;
}


/* Options of check and ls: the output mode, the limits, --help, FILEs and --files-from.
 * Returns -1 to go on, or the exit status (0 after --help, 2 on a usage error). */
int batch_parse(int argc, char **argv, batch *b, void (*help)(FILE *), void (*bad_usage)(FILE *)) {
    memset(b, 0, sizeof *b);
    opts_init(&b->op);
    b->paths = calloc((size_t)argc + 1, sizeof *b->paths);
    if (!b->paths) { fprintf(stderr, "npzstream: out of memory\n"); return 2; }
    int only_files = 0;
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        int r;
        if (only_files || a[0] != '-' || !a[1]) b->paths[b->npaths++] = a;
        else if (!strcmp(a, "--")) only_files = 1;
        else if (!strcmp(a, "--json")) b->json = 1;
        else if (!strcmp(a, "--jsonl")) b->jsonl = 1;
        else if (!strcmp(a, "-q") || !strcmp(a, "--quiet")) b->quiet = 1;
        else if (!strcmp(a, "-0") || !strcmp(a, "--null")) b->null_sep = 1;
        else if (!strcmp(a, "--sequence")) b->sequence = 1;
        else if (!strcmp(a, "--files-from") || !strncmp(a, "--files-from=", 13)) {
            const char *v = a[12] == '=' ? a + 13 : (i + 1 < argc ? argv[++i] : NULL);
            if (!v || !*v) { fprintf(stderr, "npzstream: --files-from needs a file name ('-' for stdin)\n"); return 2; }
            b->files_from = v;
        } else if ((r = parse_limit(&b->op, argc, argv, &i)) != 0) {
            if (r < 0) return 2;
        } else if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
            help(stdout);
            return 0;
        } else {
            fprintf(stderr, "npzstream: unknown option %s\n", a);
            bad_usage(stderr);
            return 2;
        }
    }
    if (b->json + b->jsonl + b->quiet > 1) {
        fprintf(stderr, "npzstream: --json, --jsonl and -q exclude each other\n");
        return 2;
    }
    if (b->json && (b->npaths > 1 || b->files_from)) {
        fprintf(stderr, "npzstream: --json is for one FILE (its object is the fixed contract); use --jsonl, one "
                        "object per file\n");
        return 2;
    }
    if (b->null_sep && !b->files_from) { fprintf(stderr, "npzstream: -0 goes with --files-from\n"); return 2; }
    if (b->files_from && !strcmp(b->files_from, "-"))
        for (size_t k = 0; k < b->npaths; k++)
            if (!strcmp(b->paths[k], "-")) {
                fprintf(stderr, "npzstream: stdin cannot be both the list of files and a FILE\n");
                return 2;
            }
    const char *bad = npzs_limits_check(&b->op.lim);
    if (bad) {
        fprintf(stderr, "npzstream: %s: out of the range the library accepts\n", flag_of(bad));
        return 2;
    }
    return -1;
}

void batch_free(batch *b) {
    free(b->paths);
    opts_free(&b->op);
}
