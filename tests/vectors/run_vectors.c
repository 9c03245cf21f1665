/*
 * run_vectors.c -- the test vectors with nothing but a C compiler and zlib.
 *
 * Reads tests/vectors/MANIFEST.tsv (written by gen.py from tests/bad/cases.py) and feeds every
 * vector to the library whole and then at every push size from 1 byte to its length, each push
 * copied so that it ends against an inaccessible page (and, for the whole and 1-byte runs, once
 * more starting right after one): a read past either end of a pushed buffer is a SIGSEGV.  Every
 * run must give the manifest's verdict, error code, offset, rule and member, and the same events
 * (data merged) as the whole run.
 *
 * With --par, every vector also goes through the parallel-inflate helper (npzs_par_*, every
 * deflated member of known size inflated ahead, whatever its size) with 1 and 2 workers, a
 * bound that holds everything and one that holds almost nothing, at pushes of 1, 2, 3, 7, 64
 * and 4096 bytes and whole, also with npzs_par_skip_data (no DATA or BLOB events; a job keeping
 * its first 1, 64, 150 bytes or the default, so that the parser skips the rest or inflates the
 * member again), and with npzs_par_stable_input (the vector placed once against the guard page,
 * pushed in slices of that copy, which the helper holds by reference; or only after the first
 * push, which is copied): each run must give the same verdict, error and events as the parser
 * alone, and some runs must have taken members from the workers.
 *
 * --par-only runs the whole input alone and then only the helper's runs (for the thread sanitizer).
 *
 * usage: run_vectors [--dir DIR] [--par | --par-only] [-v] [--only SUBSTR] [--list]
 *   each vector is a group named by its name: --only runs the vectors whose name contains SUBSTR
 *   and fails when there is none (tests/c/check.h); with --par, "helper-summary" is one more.
 * Last line: "vectors: N passed, M failed"; exit 1 when M > 0.
 */
#define _DEFAULT_SOURCE /* mmap MAP_ANONYMOUS, strtok_r */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NPZS_CHECK_MAIN
#include "../c/check.h"
#include "npzstream.h"

static int verbose;

/* ---- a buffer with an inaccessible page on each side ---------------------------------------- */
typedef struct guarded {
    uint8_t *base; /* the mapping: guard page, cap bytes, guard page */
    size_t cap, page;
} guarded;

static int guarded_init(guarded *g, size_t need) {
    g->page = (size_t)sysconf(_SC_PAGESIZE);
    g->cap = (need + g->page - 1) / g->page * g->page;
    if (g->cap == 0) g->cap = g->page;
    void *m = mmap(NULL, g->cap + 2 * g->page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) return -1;
    g->base = m;
    if (mprotect(g->base, g->page, PROT_NONE) || mprotect(g->base + g->page + g->cap, g->page, PROT_NONE)) return -1;
    return 0;
}

static void guarded_free(guarded *g) { munmap(g->base, g->cap + 2 * g->page); }

/* n bytes of src placed against the upper guard page (right) or the lower one */
static const uint8_t *guarded_put(guarded *g, const uint8_t *src, size_t n, int right) {
    uint8_t *dst = g->base + g->page + (right ? g->cap - n : 0);
    if (n) memcpy(dst, src, n);
    return dst;
}

/* ---- one run -------------------------------------------------------------------------------- */
typedef struct outcome {
    int rc; /* 1: END; else the error code */
    uint64_t off;
    const char *rule; /* static text */
    long member;
    uint64_t digest;    /* events, data merged */
    uint64_t digest_nd; /* events but DATA and BLOB (npzs_par_skip_data delivers none) */
    int data_events;
} outcome;

static uint64_t mix(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * UINT64_C(0x100000001b3);
    return h;
}
#define MIXV(h, v) ((h) = mix((h), &(v), sizeof(v)))

static int sequence;        /* the vector's options include --sequence */
static npzs_policy *policy; /* --policy FILE */
static int sha256;          /* --sha256 */

/* the helper of a run: workers (-1: none, the parser alone) and its bound */
typedef struct par_cfg {
    int threads;
    uint64_t held;
    uint64_t skip; /* npzs_par_skip_data, keeping that many bytes of a member (0: not skipping) */
    int stable;    /* npzs_par_stable_input: the vector placed once, pushed in slices of it (1); the
                      first push copied as usual, the rest so (2) */
} par_cfg;
static const par_cfg ALONE = {-1, 0, 0, 0};
static uint64_t par_used, par_runs;
void npzs__par_min_csize(npzs_par *q, uint64_t n); /* the library's, for tests */
void npzs__par_keep(npzs_par *q, uint64_t n);

static outcome run_par(const npzs_limits *lim, const uint8_t *buf, size_t len, size_t step, guarded *g, int right,
                       par_cfg pc) {
    outcome o = {0, 0, NULL, -1, UINT64_C(0xcbf29ce484222325), UINT64_C(0xcbf29ce484222325), 0};
    npzs_parser *p = npzs_new(lim, NULL);
    if (!p) {
        o.rc = NPZS_E_NOMEM;
        return o;
    }
    if (sequence && npzs_npy_sequence(p) != 0) {
        o.rc = 98;
        npzs_free(p);
        return o;
    }
    if ((policy && npzs_policy_use(p, policy) != 0) || (sha256 && npzs_hash(p, NPZS_HASH_SHA256) != 0)) {
        o.rc = 95;
        npzs_free(p);
        return o;
    }
    npzs_par *q = NULL;
    if (pc.threads >= 0) {
        q = npzs_par_new(p, (unsigned)pc.threads, pc.held);
        if (!q) {
            o.rc = 97;
            npzs_free(p);
            return o;
        }
        npzs__par_min_csize(q, 1);
        if (pc.skip && npzs_par_skip_data(q) != 0) {
            o.rc = 96;
            npzs_par_free(q);
            npzs_free(p);
            return o;
        }
        if (pc.skip && pc.skip != UINT64_MAX) npzs__par_keep(q, pc.skip);
        if (pc.stable == 1 && npzs_par_stable_input(q, 1) != 0) {
            o.rc = 94;
            npzs_par_free(q);
            npzs_free(p);
            return o;
        }
    }
    const uint8_t *all = pc.stable == 1 ? guarded_put(g, buf, len, right) : NULL;
    uint64_t data = UINT64_C(0x84222325);
    size_t off = 0;
    /* with the helper, the calls alternate between its 0.x entry (npzs_par_next, npzs_par_finish)
     * and the one entry on the parser (npzs_next, npzs_finish): the two are one */
    unsigned calls = 0;
    for (;;) {
        if (pc.stable == 2 && off && !all) { /* the first push was copied: the rest by reference */
            if (npzs_par_stable_input(q, 1) != 0) {
                o.rc = 94;
                break;
            }
            all = guarded_put(g, buf, len, right);
        }
        size_t n = len - off < step ? len - off : step;
        npzs_in in = {all ? all + off : guarded_put(g, buf + off, n, right), n, 0};
        if (off + n == len) {
            if (q && (calls & 1)) npzs_par_finish(q);
            else npzs_finish(p);
        }
        npzs_event ev;
        int rc;
        while ((rc = q && (++calls & 1) ? npzs_par_next(q, &in, &ev) : npzs_next(p, &in, &ev)) == NPZS_EVENT) {
            if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) {
                data = mix(data, ev.data, ev.len);
                o.data_events++;
                continue;
            }
            MIXV(o.digest_nd, ev.type);
            MIXV(o.digest_nd, ev.member);
            MIXV(o.digest_nd, ev.offset);
            if (ev.type == NPZS_EV_MEMBER_BEGIN && ev.name) o.digest_nd = mix(o.digest_nd, ev.name, ev.name_len);
            if (ev.type == NPZS_EV_HEADER) {
                o.digest_nd = mix(o.digest_nd, ev.array->dtype, strlen(ev.array->dtype));
                o.digest_nd = mix(o.digest_nd, ev.array->shape, ev.array->ndim * sizeof *ev.array->shape);
                MIXV(o.digest_nd, ev.array->nbytes);
                MIXV(o.digest_nd, ev.array->fortran_order);
            }
            if (ev.type == NPZS_EV_MEMBER_END) {
                MIXV(o.digest_nd, ev.size);
                MIXV(o.digest_nd, ev.crc32);
                MIXV(o.digest_nd, ev.data_crc32);
                MIXV(o.digest_nd, ev.data_size);
                MIXV(o.digest_nd, ev.sniff);
                if (ev.sha256) o.digest_nd = mix(o.digest_nd, ev.sha256, 32);
                o.digest = mix(o.digest, &o.digest_nd, sizeof o.digest_nd);
                MIXV(o.digest, data);
                data = UINT64_C(0x84222325);
            }
            if (ev.type == NPZS_EV_END) {
                o.rc = 1;
                break;
            }
        }
        off += in.pos;
        if (o.rc == 1) break;
        if (rc < 0) {
            o.rc = rc;
            o.off = npzs_error_offset(p);
            o.rule = npzs_error_rule(p);
            o.member = npzs_error_member(p);
            break;
        }
        if (rc != NPZS_NEED_INPUT || in.pos != in.size || off == len) { /* progress invariant broken */
            o.rc = 99;
            break;
        }
    }
    o.digest = mix(o.digest, &o.digest_nd, sizeof o.digest_nd);
    if (q) {
        par_used += npzs_par_used(q);
        par_runs++;
        npzs_par_free(q);
    }
    npzs_free(p);
    return o;
}

static outcome run(const npzs_limits *lim, const uint8_t *buf, size_t len, size_t step, guarded *g, int right) {
    return run_par(lim, buf, len, step, g, right, ALONE);
}

static int par_mode;

/* ---- the manifest --------------------------------------------------------------------------- */
typedef struct vec {
    char name[256], verdict[64], rule[128], args[256];
    uint64_t off;
    long member;
} vec;

static int parse_u64(const char *s, uint64_t *v) {
    char *end;
    errno = 0;
    unsigned long long x = strtoull(s, &end, 10);
    if (errno || end == s || *end) return -1;
    *v = x;
    return 0;
}

/* --policy FILE: the policy compiled (a fault fails the vector) */
static int policy_of(const char *path) {
    size_t n;
    uint8_t *t = check_slurp(path, &n);
    if (!t) return -1;
    npzs_policy_error e;
    policy = npzs_policy_new((const char *)t, n, NULL, &e);
    free(t);
    if (!policy) printf("policy %s:%u:%u: %s: %s\n", path, e.line, e.column, e.path, e.message);
    return policy ? 0 : -1;
}

/* the check options a vector may carry, as limits */
static int limits_of(const char *args, npzs_limits *lim) {
    npzs_limits_default(lim);
    sequence = sha256 = 0;
    npzs_policy_free(policy);
    policy = NULL;
    char buf[256];
    snprintf(buf, sizeof buf, "%s", args);
    for (char *save = NULL, *t = strtok_r(buf, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
        if (!strcmp(t, "--lenient-npy-trailing")) {
            lim->lenient |= NPZS_LENIENT_NPY_TRAILING;
            continue;
        }
        if (!strcmp(t, "--lenient-header-newline")) {
            lim->lenient |= NPZS_LENIENT_HEADER_NEWLINE;
            continue;
        }
        if (!strcmp(t, "--sequence")) {
            sequence = 1;
            continue;
        }
        if (!strcmp(t, "--sha256")) {
            sha256 = 1;
            continue;
        }
        char *v = strtok_r(NULL, " ", &save);
        if (v && !strcmp(t, "--policy")) {
            if (policy_of(v) < 0) return -1;
            continue;
        }
        uint64_t x;
        if (!v || parse_u64(v, &x)) return -1;
        if (!strcmp(t, "--max-header-size")) lim->max_header_size = x;
        else if (!strcmp(t, "--max-total-bytes")) lim->max_total_bytes = x;
        else if (!strcmp(t, "--max-memory")) lim->max_memory = x;
        else if (x > UINT32_MAX) return -1;
        else if (!strcmp(t, "--max-members")) lim->max_members = (uint32_t)x;
        else if (!strcmp(t, "--max-extra-len")) lim->max_extra_len = (uint32_t)x;
        else if (!strcmp(t, "--max-fields")) lim->max_fields = (uint32_t)x;
        else if (!strcmp(t, "--max-depth")) lim->max_depth = (uint32_t)x;
        else if (!strcmp(t, "--max-name-len")) lim->max_name_len = (uint32_t)x;
        else return -1;
    }
    return 0;
}

static int matches(const vec *v, const outcome *o) {
    if (!strcmp(v->verdict, "ok")) return o->rc == 1;
    return o->rc < 0 && !strcmp(npzs_error_name(o->rc), v->verdict) && o->off == v->off && o->rule &&
           !strcmp(o->rule, v->rule) && o->member == v->member;
}

static void check_vector(const char *dir, const vec *v) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.bin", dir, v->name);
    size_t len;
    uint8_t *buf = check_slurp(path, &len);
    if (!buf) {
        CHECK(0, "%s: cannot read %s", v->name, path);
        return;
    }
    npzs_limits lim;
    guarded g;
    const char *setup = limits_of(v->args, &lim) ? "options this runner does not know"
                        : guarded_init(&g, len)  ? "mmap"
                                                 : NULL;
    if (setup) {
        CHECK(0, "%s: %s (%s)", v->name, setup, v->args);
        free(buf);
        return;
    }
    outcome whole = run(&lim, buf, len, len ? len : 1, &g, 1);
    CHECK(matches(v, &whole), "%s: got %s@%" PRIu64 " rule %s member %ld, want %s@%" PRIu64 " rule %s member %ld",
          v->name, whole.rc == 1 ? "ok" : npzs_error_name(whole.rc), whole.off, whole.rule ? whole.rule : "-",
          whole.member, v->verdict, v->off, v->rule, v->member);
    if (matches(v, &whole)) {
        char why[512] = ""; /* the first run that differs: one failure of the vector */
        for (size_t step = 1; step <= len && !why[0] && par_mode < 2; step++) {
            for (int right = 1; right >= (step == 1 ? 0 : 1) && !why[0]; right--) {
                outcome o = run(&lim, buf, len, step, &g, right);
                if (!matches(v, &o) || o.digest != whole.digest)
                    snprintf(why, sizeof why, "pushes of %zu bytes (%s guard) give %s@%" PRIu64 "%s", step,
                             right ? "upper" : "lower", o.rc == 1 ? "ok" : npzs_error_name(o.rc), o.off,
                             o.digest != whole.digest ? ", other events" : "");
            }
        }
        if (!why[0] && par_mode < 2) {
            outcome low = run(&lim, buf, len, len ? len : 1, &g, 0);
            if (!matches(v, &low) || low.digest != whole.digest)
                snprintf(why, sizeof why, "the whole input against the lower guard page differs");
        }
        if (!why[0] && policy) { /* the policy only adds rejections: without it, the same verdict or a
                                    rejection the policy's came first (its code is policy) */
            npzs_policy *pol = policy;
            policy = NULL;
            outcome bare = run(&lim, buf, len, len ? len : 1, &g, 1);
            policy = pol;
            int same = bare.rc == whole.rc && bare.off == whole.off && bare.rule == whole.rule;
            if (!same && whole.rc != NPZS_E_POLICY)
                snprintf(why, sizeof why,
                         "without its policy %s@%" PRIu64 ", with it %s@%" PRIu64 " (not a policy rejection)",
                         bare.rc == 1 ? "ok" : npzs_error_name(bare.rc), bare.off,
                         whole.rc == 1 ? "ok" : npzs_error_name(whole.rc), whole.off);
        }
        static const size_t steps[] = {1, 2, 3, 7, 64, 4096, 0};
        static const par_cfg cfgs[] = {{1, UINT64_C(1) << 30, 0, 0},
                                       {2, UINT64_C(1) << 30, 0, 0},
                                       {2, 4096, 0, 0},
                                       {0, UINT64_C(1) << 30, 0, 0},
                                       {2, UINT64_C(1) << 30, UINT64_MAX, 0},
                                       {2, UINT64_C(1) << 30, 1, 0},
                                       {1, 70000, 64, 0},
                                       {2, UINT64_C(1) << 30, 150, 0},
                                       {2, UINT64_C(1) << 30, 0, 1},
                                       {2, 4096, 0, 1},
                                       {2, UINT64_C(1) << 30, UINT64_MAX, 1},
                                       {1, 70000, 64, 1},
                                       {2, UINT64_C(1) << 30, UINT64_MAX, 2},
                                       {2, 4096, 0, 2}};
        for (size_t c = 0; par_mode && !why[0] && c < sizeof cfgs / sizeof *cfgs; c++) {
            for (size_t k = 0; !why[0] && k < sizeof steps / sizeof *steps; k++) {
                size_t step = steps[k] ? steps[k] : (len ? len : 1);
                outcome o = run_par(&lim, buf, len, step, &g, 1, cfgs[c]);
                int same = cfgs[c].skip ? o.digest_nd == whole.digest_nd && o.data_events == 0
                                        : o.digest == whole.digest;
                if (!matches(v, &o) || !same)
                    snprintf(why, sizeof why,
                             "through the helper (%d workers, bound %" PRIu64
                             "%s), pushes of %zu bytes "
                             "give %s@%" PRIu64 " rule %s%s",
                             cfgs[c].threads, cfgs[c].held, cfgs[c].stable ? ", stable input" : "", step,
                             o.rc == 1 ? "ok" : npzs_error_name(o.rc), o.off, o.rule ? o.rule : "-",
                             !same ? ", other events" : "");
            }
        }
        CHECK(!why[0], "%s: %s", v->name, why);
        if (verbose) printf("ok %s (%zu bytes, %zu split sizes)\n", v->name, len, len);
    }
    guarded_free(&g);
    free(buf);
}

int main(int argc, char **argv) {
    const char *dir = "tests/vectors";
    if (check_args(&argc, argv)) return 2;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--dir") && i + 1 < argc) dir = argv[++i];
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--par")) par_mode = 1;
        else if (!strcmp(argv[i], "--par-only")) par_mode = 2;
        else {
            fprintf(stderr, "usage: run_vectors [--dir DIR] [--par | --par-only] [-v] [--only SUBSTR] [--list]\n");
            return 2;
        }
    }
    char path[4096];
    snprintf(path, sizeof path, "%s/MANIFEST.tsv", dir);
    FILE *m = fopen(path, "r");
    if (!m) {
        fprintf(stderr, "run_vectors: cannot open %s\n", path);
        return 2;
    }
    char line[1024];
    long lineno = 0;
    while (fgets(line, sizeof line, m)) {
        lineno++;
        if (line[0] == '#' || line[0] == '\n') continue;
        line[strcspn(line, "\n")] = 0;
        char *col[6] = {0};
        int nc = 0;
        for (char *s = line; nc < 6; nc++) {
            col[nc] = s;
            char *tab = strchr(s, '\t');
            if (!tab) {
                nc++;
                break;
            }
            *tab = 0;
            s = tab + 1;
        }
        vec v;
        memset(&v, 0, sizeof v);
        uint64_t mem;
        int ok_row = nc == 6 && strlen(col[0]) < sizeof v.name && strlen(col[1]) < sizeof v.verdict &&
                     strlen(col[3]) < sizeof v.rule && strlen(col[5]) < sizeof v.args;
        if (ok_row) {
            strcpy(v.name, col[0]);
            strcpy(v.verdict, col[1]);
            strcpy(v.rule, col[3]);
            strcpy(v.args, col[5]);
            if (strcmp(v.verdict, "ok")) {
                ok_row = !parse_u64(col[2], &v.off);
                if (!strcmp(col[4], "-1")) v.member = -1;
                else if (!parse_u64(col[4], &mem)) v.member = (long)mem;
                else ok_row = 0;
            }
        }
        if (!ok_row) {
            CHECK(0, "%s:%ld: a malformed manifest line", path, lineno);
            continue;
        }
        if (check_group(v.name)) check_vector(dir, &v);
    }
    fclose(m);
    /* what the helper did over every vector: a group of its own, so --only a vector skips it */
    if (par_mode && check_group("helper-summary")) {
        printf("helper: %" PRIu64 " runs, %" PRIu64 " members taken from the workers\n", par_runs, par_used);
        if (par_used == 0) CHECK(0, "--par: no member came from a worker");
    }
    npzs_policy_free(policy);
    return check_done("vectors");
}
