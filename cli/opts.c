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
    "  --max-total-bytes N   total uncompressed member bytes (1099511627776)\n"
    "  --inflate-window N    inflate output chunk in bytes (262144)\n"
    "  --max-memory N        bytes the parser may hold, 0 for no cap (268435456)\n"
    "  --feed N              hand the parser at most N bytes per push (testing)\n"
    "Lenient flags (off by default; each accepts what the strict rules refuse, see SECURITY.md):\n"
    "  --lenient-npy-trailing   bytes after a .npy's array are consumed and ignored (as np.load does)\n"
    "  --lenient-header-newline a header ending \"}\\n\" then spaces (npyjs); NumPy 2.x on\n"
    "                           Python 3.12+ refuses such files\n";

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


void opts_init(opts *o) {
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
int parse_limit(opts *o, int argc, char **argv, int *i) {
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
        if (cli_parse_u64(val, &v) < 0) {
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

npzs_parser *new_parser(const opts *o) {
    const char *bad = npzs_limits_check(&o->lim);
    if (bad) {
        fprintf(stderr, "npzstream: %s: out of the range the library accepts\n", flag_of(bad));
        return NULL;
    }
    npzs_parser *p = npzs_new(&o->lim, NULL);
    if (!p) fprintf(stderr, "npzstream: out of memory (or --max-memory below the parser's own size)\n");
    return p;
}


/* Options of check and ls: --json, the limits, --help, one FILE.  Returns -1 to go on, or the
 * exit status (0 after --help, 2 on a usage error). */
int parse_args(int argc, char **argv, opts *op, int *json, const char **path, void (*help)(FILE *),
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
