/* tests/api/files.c -- every input file given on the command line, and every file of every
 * directory given: split invariance (whole, 1-byte, 7-byte, empty pushes, every two-push split of a
 * small input, random splits), the fuzz driver's oracles, the parallel-inflate helper, npzs_events
 * masks, npzs_data_into, npzs_reset and the memory cap, ISA-L's inflate, a 1-byte inflate window,
 * and allocation failures, each against the whole parse. */
#define _DEFAULT_SOURCE /* scandir, alphasort */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "api.h"

static uint64_t par_used_total;  /* members the helper's workers inflated, over every file */
static uint64_t par_taken_total; /* arrays whose data the caller took from a worker (npzs_par_take_data) */
static long fast_checked;        /* files also read with NPZS_LENIENT_FAST_INFLATE */
static long zlib_checked;        /* files also read with NPZS_INFLATE_ZLIB */
static long files_tested;        /* files run (a group each) */

static void test_file(const char *path) {
    size_t len;
    uint8_t *buf = check_slurp(path, &len);
    if (!buf) {
        CHECK(0, "cannot read %s", path);
        return;
    }
    check_paths = 1;
    run whole = parse(buf, len, NULL, 0, NULL, NULL);
    check_paths = 0;
    CHECK(whole.progress_ok, "%s: progress invariant (whole)", path);
    CHECK(whole.zero_copy_ok, "%s: zero-copy chunk outside the pushed buffer", path);
    CHECK(whole.verdict != 0, "%s: no verdict", path);
    size_t one = 1, seven = 7, withzero[3] = {0, 3, 0};
    if (len <= (1u << 20)) {
        run r1 = parse(buf, len, &one, 1, NULL, NULL);
        CHECK(same(&whole, &r1) && r1.progress_ok, "%s: 1-byte pushes differ (verdict %d/%d off %llu/%llu)", path,
              whole.verdict, r1.verdict, (unsigned long long)whole.err_off, (unsigned long long)r1.err_off);
    }
    run r7 = parse(buf, len, &seven, 1, NULL, NULL);
    CHECK(same(&whole, &r7) && r7.progress_ok, "%s: 7-byte pushes differ", path);
    if (len <= (1u << 20)) {
        run rz = parse(buf, len, withzero, 3, NULL, NULL);
        CHECK(same(&whole, &rz) && rz.progress_ok, "%s: pushes with empty ones differ", path);
    }
    /* every two-push split of a small input (http-parser's test_scan) */
    if (len <= 2048) {
        int ok = 1;
        for (size_t cut = 1; cut < len && ok; cut++) {
            size_t two[2] = {cut, len};
            run rc = parse(buf, len, two, 2, NULL, NULL);
            if (!same(&whole, &rc) || !rc.progress_ok) {
                ok = 0;
                printf("  cut at %zu: verdict %d off %llu\n", cut, rc.verdict, (unsigned long long)rc.err_off);
            }
        }
        CHECK(ok, "%s: a two-push split differs", path);
    }
    for (int t = 0; t < 4; t++) {
        size_t sched[16];
        for (int i = 0; i < 16; i++) sched[i] = rnd(t < 2 ? 64 : 70000);
        sched[0] = sched[0] ? sched[0] : 1;
        run rr = parse(buf, len, sched, 16, NULL, NULL);
        CHECK(same(&whole, &rr) && rr.progress_ok, "%s: random split %d differs", path, t);
    }
    /* the fuzz driver's invariants, and its zipfile oracle on an accepted archive (fz_run aborts
     * on a violation: what the stream accepted must be what zipfile lists, member by member);
     * without the memo of the last header, the same events */
    {
        fz_opts fo;
        fz_opts_init(&fo);
        fz_result fr, fm;
        CHECK(fz_run(buf, len, &fo, &fr) && fr.accepted == (whole.verdict == 1), "%s: fz_run differs", path);
        fo.no_memo = 1;
        fz_run(buf, len, &fo, &fm);
        CHECK(fz_same(&fr, &fm), "%s: the events differ without the header memo", path);
    }
    /* the parallel-inflate helper (npzs_par_*, every deflated member of known size inflated ahead by
     * a worker): the same events, verdict and error as the parser alone, whatever the split, the
     * workers and the bound */
    {
        fz_opts fo;
        fz_opts_init(&fo);
        fz_result alone, alone_nd, pr;
        fz_run(buf, len, &fo, &alone);
        fo.no_data = 1;
        fz_run(buf, len, &fo, &alone_nd);
        static const uint8_t s7[] = {7}, s4k[] = {0xE4}, smix[] = {1, 0xE5, 3, 0, 0xE0};
        const struct {
            const uint8_t *s;
            size_t n;
            unsigned th;
            uint64_t held;
            int into;
            uint64_t skip;
            int take, stable;
        } runs[] = {{NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 0, 0},
                    {s4k, 1, 2, UINT64_C(1) << 30, 0, 0, 0, 0},
                    {s4k, 1, 1, 4096, 0, 0, 0, 0},
                    {smix, 5, 2, UINT64_C(1) << 30, 1, 0, 0, 0},
                    {s7, 1, 2, UINT64_C(1) << 30, 0, 0, 0, 0},
                    {NULL, 0, 2, UINT64_C(1) << 30, 0, UINT64_MAX, 0, 0},
                    {s4k, 1, 2, UINT64_C(1) << 30, 0, 64, 0, 0},
                    {smix, 5, 1, 1u << 20, 0, 700, 0, 0},
                    /* npzs_par_take_data: any address, 16-byte aligned ones only (the rest into a destination) */
                    {NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 1, 0},
                    {smix, 5, 2, UINT64_C(1) << 30, 1, 0, 5, 0},
                    {s4k, 1, 1, 1u << 20, 0, 0, 1, 0},
                    /* npzs_par_stable_input: the pushes slices of one copy, held by reference */
                    {s4k, 1, 2, UINT64_C(1) << 30, 0, UINT64_MAX, 0, 1},
                    {smix, 5, 1, 4096, 1, 0, 0, 1},
                    {NULL, 0, 2, UINT64_C(1) << 30, 0, 0, 5, 1}};
        for (size_t k = 0; k < sizeof runs / sizeof *runs; k++) {
            if (runs[k].s == s7 && len > (1u << 20)) continue;
            fo.sched = runs[k].s;
            fo.sched_n = runs[k].n;
            fo.par = 1;
            fo.par_threads = runs[k].th;
            fo.par_held = runs[k].held;
            fo.into = runs[k].into;
            fo.par_skip = runs[k].skip;
            fo.no_data = runs[k].skip != 0;
            fo.par_take = runs[k].take;
            fo.par_stable = runs[k].stable;
            fz_run(buf, len, &fo, &pr);
            CHECK(fz_same(runs[k].skip ? &alone_nd : &alone, &pr),
                  "%s: through the helper (run %zu) the result differs", path, k);
        }
        par_used_total += fo.par_used;
        par_taken_total += fo.par_taken;
        /* npzs_events through the helper (asked for after it is attached): the events asked for */
        static const unsigned pmasks[] = {NPZS_EV_BIT(NPZS_EV_MEMBER_END), NPZS_EV_BIT(NPZS_EV_HEADER),
                                          NPZS_EV_BIT(NPZS_EV_DATA) | NPZS_EV_BIT(NPZS_EV_BLOB)};
        for (size_t k = 0; k < sizeof pmasks / sizeof *pmasks; k++) {
            fz_opts fa, fp;
            fz_opts_init(&fa);
            fa.mask = pmasks[k];
            fz_result ra, rp;
            fz_run(buf, len, &fa, &ra);
            fp = fa;
            fp.mask_parser = 1;
            fp.par = 1;
            fp.par_threads = 2;
            fp.par_held = UINT64_C(1) << 30;
            fp.sched = s4k;
            fp.sched_n = 1;
            fz_run(buf, len, &fp, &rp);
            CHECK(fz_same(&ra, &rp), "%s: through the helper, events masked to %#x differ", path, pmasks[k]);
        }
    }
    /* npzs_events: a parser asked for some events delivers exactly those of the whole stream, at
     * every split, with the same verdict, error and offset (the parser skipping the others) */
    {
        static const unsigned masks[] = {0,
                                         NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                         NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                         NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_DATA),
                                         NPZS_EV_BIT(NPZS_EV_DATA) | NPZS_EV_BIT(NPZS_EV_BLOB),
                                         NPZS_EV_BIT(NPZS_EV_BLOB) | NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                         NPZS_EV_BIT(NPZS_EV_HEADER)};
        for (size_t k = 0; k < sizeof masks / sizeof *masks; k++) {
            ev_mask = masks[k];
            run ref = parse(buf, len, NULL, 0, NULL, NULL); /* every event delivered, these hashed */
            mask_on = 1;
            run m0 = parse(buf, len, NULL, 0, NULL, NULL);
            run m7 = parse(buf, len, &seven, 1, NULL, NULL);
            run m1 = len <= (1u << 16) ? parse(buf, len, &one, 1, NULL, NULL) : m0;
            run mz = len <= (1u << 16) ? parse(buf, len, withzero, 3, NULL, NULL) : m0;
            /* pushes that hold whole records (read in place) and end anywhere, empty ones between */
            int ok = 1;
            for (int t = 0; t < 3 && ok; t++) {
                size_t sched[9];
                for (int i = 0; i < 9; i++) sched[i] = i % 3 == 2 ? 0 : 1 + rnd(t ? 400 : 70000);
                run mr = parse(buf, len, sched, 9, NULL, NULL);
                if (!same(&ref, &mr) || !mr.progress_ok) ok = 0;
            }
            for (size_t cut = 1; cut < len && len <= 2048 && ok && k < 3; cut++) {
                size_t two[3] = {cut, 0, len};
                run mc = parse(buf, len, two, 3, NULL, NULL);
                if (!same(&ref, &mc) || !mc.progress_ok) {
                    ok = 0;
                    printf("  events %#x, cut at %zu: verdict %d off %llu\n", masks[k], cut, mc.verdict,
                           (unsigned long long)mc.err_off);
                }
            }
            mask_on = 0;
            CHECK(ok && same(&ref, &m0) && same(&ref, &m7) && same(&ref, &m1) && same(&ref, &mz) && m0.progress_ok &&
                      m7.progress_ok && m1.progress_ok && mz.progress_ok && ref.verdict == whole.verdict &&
                      ref.err_off == whole.err_off,
                  "%s: events masked to %#x differ (verdict %d/%d off %llu/%llu)", path, masks[k], ref.verdict,
                  m7.verdict, (unsigned long long)ref.err_off, (unsigned long long)m7.err_off);
        }
        ev_mask = NPZS_EV_ALL;
    }
    /* direct output: the same events, whatever the split, with every array's data written into
     * the caller's buffer */
    {
        into_mode = 1;
        run d0 = parse(buf, len, NULL, 0, NULL, NULL);
        run d7 = parse(buf, len, &seven, 1, NULL, NULL);
        run d1 = len <= (1u << 18) ? parse(buf, len, &one, 1, NULL, NULL) : d0;
        into_mode = 0;
        CHECK(same(&whole, &d0) && same(&whole, &d7) && same(&whole, &d1), "%s: npzs_data_into changes the events",
              path);
    }
    /* npzs_reset: the same parser, reset after the input (accepted or refused), reads it again
     * exactly as a new one does, and after another input too */
    {
        npzs_parser *p = npzs_new(NULL, NULL);
        run a = drive(p, buf, len, NULL, 0);
        uint64_t peak = p->mem_peak, held = npzs_memory(p);
        npzs_reset(p);
        CHECK(npzs_error(p) == 0 && npzs_memory(p) <= held && strcmp(npzs_state_name(p), "START") == 0,
              "%s: reset leaves the error, memory or state of the input", path);
        run b = drive(p, buf, len, &seven, 1);
        npzs_reset(p);
        static const uint8_t junk[] = "PK\3\4 not an archive";
        (void)drive(p, junk, sizeof junk - 1, NULL, 0);
        npzs_reset(p);
        run c = drive(p, buf, len, NULL, 0);
        CHECK(same(&whole, &a) && same(&whole, &b) && same(&whole, &c), "%s: a reset parser reads it differently",
              path);
        npzs_free(p);
        /* max_memory: the peak of this input is enough, one byte less is refused as LIMIT.max_memory,
         * and npzs_memory never passes the cap */
        npzs_limits ml;
        npzs_limits_default(&ml);
        ml.max_memory = peak;
        run at = parse(buf, len, NULL, 0, &ml, NULL);
        CHECK(same(&whole, &at), "%s: max_memory = its peak (%llu) changes the result", path, (unsigned long long)peak);
        ml.max_memory = peak - 1;
        p = npzs_new(&ml, NULL);
        if (p) {
            run under = drive(p, buf, len, NULL, 0);
            const char *rule = npzs_error_rule(p);
            CHECK(under.verdict == NPZS_E_LIMIT && rule && strcmp(rule, "LIMIT.max_memory") == 0 && p->mem_peak < peak,
                  "%s: max_memory one below the peak: verdict %d rule %s", path, under.verdict, rule ? rule : "NULL");
            const char *lname = NULL;
            uint64_t lvalue = 0, lneeded = 0;
            CHECK(npzs_error_limit(p, &lname, &lvalue, &lneeded) == 1 && lname && strcmp(lname, "max_memory") == 0 &&
                      lvalue == peak - 1 && lneeded > lvalue && lneeded <= peak,
                  "%s: max_memory's numbers: %s %llu %llu (peak %llu)", path, lname ? lname : "NULL",
                  (unsigned long long)lvalue, (unsigned long long)lneeded, (unsigned long long)peak);
            npzs_free(p);
        }
    }
    /* ISA-L's inflate (where built in): an accepted input gives the same events at every split;
     * a refused one is parsed to some verdict without a fault (ISA-L's may differ: the flag's
     * leniency), also with a 1-byte window */
    if (npzs_fast_inflate()) {
        npzs_limits fl;
        npzs_limits_default(&fl);
        fl.lenient = NPZS_LENIENT_FAST_INFLATE;
        run f0 = parse(buf, len, NULL, 0, &fl, NULL);
        run f7 = parse(buf, len, &seven, 1, &fl, NULL);
        run f1 = len <= (1u << 18) ? parse(buf, len, &one, 1, &fl, NULL) : f0;
        if (whole.verdict == 1)
            CHECK(same(&whole, &f0) && same(&whole, &f7) && same(&whole, &f1),
                  "%s: ISA-L's inflate reads it differently", path);
        CHECK(f0.verdict != 0 && f0.progress_ok && f7.progress_ok && same(&f0, &f7) && same(&f0, &f1),
              "%s: ISA-L's inflate: no verdict, or one that depends on the split", path);
        /* a 1-byte window: the same for an accepted input; a refused one may be refused at another
         * point (ISA-L finds some invalid data before giving the bytes ahead of it when its output
         * room is small: SECURITY.md, "Lenient flags"), always with a verdict */
        fl.inflate_window = 1;
        run fw = parse(buf, len, &seven, 1, &fl, NULL);
        CHECK(whole.verdict == 1 ? same(&f0, &fw) : fw.verdict < 0 && fw.progress_ok,
              "%s: ISA-L's inflate with a 1-byte window differs", path);
        /* a reset parser keeps ISA-L's state and reads the input again the same (LeakSanitizer
         * checks that nothing is lost) */
        fl.inflate_window = 1u << 18;
        npzs_parser *q = npzs_new(&fl, NULL);
        run a1 = drive(q, buf, len, NULL, 0);
        npzs_reset(q);
        run a2 = drive(q, buf, len, &seven, 1);
        CHECK(same(&a1, &f0) && same(&a2, &f0), "%s: ISA-L's inflate after a reset differs", path);
        npzs_free(q);
        fast_checked++;
    }
    /* the default decoder (src/zip/fastinf.c) against zlib alone (NPZS_INFLATE_ZLIB): the same
     * events, verdict, error, rule and offsets, whole, in 7-byte pushes and with a 1-byte window
     * (the default's own splits are checked against `whole` above and below) */
    {
        npzs_limits zl;
        npzs_limits_default(&zl);
        zl.lenient = NPZS_INFLATE_ZLIB;
        run z0 = parse(buf, len, NULL, 0, &zl, NULL);
        run z7 = parse(buf, len, &seven, 1, &zl, NULL);
        zl.inflate_window = 1;
        run zw = parse(buf, len, &seven, 1, &zl, NULL);
        CHECK(same(&whole, &z0) && same(&whole, &z7) && same(&whole, &zw),
              "%s: zlib alone reads it differently (verdict %d/%d off %llu/%llu)", path, whole.verdict, z0.verdict,
              (unsigned long long)whole.err_off, (unsigned long long)z0.err_off);
        zlib_checked++;
    }
    /* a small inflate window must not change anything either */
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.inflate_window = 1;
    run w1 = parse(buf, len, &seven, 1, &lim, NULL);
    CHECK(same(&whole, &w1), "%s: 1-byte inflate window differs", path);

    /* allocation failures: each must come back as NPZS_E_NOMEM, nothing leaks */
    if (len <= (1u << 16)) {
        check_alloc probe = {0, -1, 0, 0};
        run pr = parse(buf, len, NULL, 0, NULL, &probe);
        CHECK(same(&whole, &pr) && probe.live == 0, "%s: counting allocator changes the result or leaks", path);
        int ok = 1;
        for (long i = 0; i < probe.n; i++) {
            check_alloc c = {0, i, 0, 0};
            run fr = parse(buf, len, NULL, 0, NULL, &c);
            if (fr.verdict != NPZS_E_NOMEM && !same(&whole, &fr)) {
                ok = 0;
                printf("  alloc fail %ld: verdict %d\n", i, fr.verdict);
            }
            if (c.live != 0) {
                ok = 0;
                printf("  alloc fail %ld: %ld blocks leaked\n", i, c.live);
            }
        }
        CHECK(ok, "%s: allocation failure handling", path);
    }
    /* the same in 7-byte pushes (what only small pushes allocate: the inflate input) */
    if (len <= (1u << 14)) {
        check_alloc probe = {0, -1, 0, 0};
        run pr = parse(buf, len, &seven, 1, NULL, &probe);
        int ok = same(&whole, &pr) && probe.live == 0;
        for (long i = 0; i < probe.n; i++) {
            check_alloc c = {0, i, 0, 0};
            run fr = parse(buf, len, &seven, 1, NULL, &c);
            if ((fr.verdict != NPZS_E_NOMEM && !same(&whole, &fr)) || c.live != 0) ok = 0;
        }
        CHECK(ok, "%s: allocation failure handling in 7-byte pushes", path);
    }
    free(buf);
}

/* A file, or a directory's files (recursively, in name order), each the group "files/PATH": how
 * many were found (run or not: --need-files counts what is there). */
long test_path(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        CHECK(0, "%s: %s", path, strerror(errno));
        return 0;
    }
    if (!S_ISDIR(st.st_mode)) {
        size_t gl = strlen(path) + 7;
        char *group = malloc(gl);
        snprintf(group, gl, "files/%s", path);
        int run_it = check_group(group);
        free(group);
        if (run_it) {
            test_file(path);
            files_tested++;
        }
        return 1;
    }
    struct dirent **ents;
    int n = scandir(path, &ents, NULL, alphasort);
    long k = 0;
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.') {
            size_t len = strlen(path) + strlen(ents[i]->d_name) + 2;
            char *sub = malloc(len);
            snprintf(sub, len, "%s/%s", path, ents[i]->d_name);
            k += test_path(sub);
            free(sub);
        }
        free(ents[i]);
    }
    free(ents);
    return k;
}

/* What the files gave in all, once they ran: NumPy's own files take the fast header path (every
 * header agreed with the general parser), inflate wrote into destinations, the helper's workers
 * inflated members and gave arrays away. */
void test_files_summary(void) {
    int ran = files_tested > 0; /* the checks of what files give apply when files ran */
    printf("api: %ld headers, %ld through the fast path, all equal to the general parser's results\n", headers_seen,
           headers_fast);
    CHECK(!ran || headers_fast > 0, "no header took the fast path");
    printf("api: %ld files also read by zlib alone (NPZS_INFLATE_ZLIB), every run equal to the default decoder's\n",
           zlib_checked);
    CHECK(zlib_checked == files_tested, "%ld files read by zlib alone of %ld", zlib_checked, files_tested);
    printf("api: %s\n", npzs_fast_inflate() ? "ISA-L built in: every file read with NPZS_LENIENT_FAST_INFLATE too"
                                            : "built without ISA-L: NPZS_LENIENT_FAST_INFLATE is refused (checked)");
    if (!npzs_fast_inflate()) {
        npzs_limits fl;
        npzs_limits_default(&fl);
        fl.lenient = NPZS_LENIENT_FAST_INFLATE;
        CHECK(npzs_limits_check(&fl) && !strcmp(npzs_limits_check(&fl), "lenient"),
              "the fast inflate flag without ISA-L");
    }
    CHECK(into_bad == 0, "%llu DATA chunks outside the npzs_data_into destination", (unsigned long long)into_bad);
    printf("api: %llu data bytes inflated straight into npzs_data_into destinations\n",
           (unsigned long long)direct_bytes);
    CHECK(!ran || direct_bytes > 0, "inflate never wrote into a destination");
    printf("api: %llu members inflated by the helper's workers, every run equal to the parser's alone\n",
           (unsigned long long)par_used_total);
    CHECK(!ran || par_used_total > 0, "no member of the files came from a helper's worker");
    printf(
        "api: %llu arrays taken from the workers' output (npzs_par_take_data), every run equal to the parser's alone\n",
        (unsigned long long)par_taken_total);
    CHECK(!ran || par_taken_total > 0, "no array's data was taken from a worker");
}
