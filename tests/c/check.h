/*
 * tests/c/check.h -- the one harness of the C suites (tests/api, policy, vlen, vectors, contracts,
 * crc, inflate), after expat's minicheck: a check, its tally, groups run by name, and the summary
 * line that tests/run_all.py, make's fuzz targets and the Python wrappers read (the fuzz replays
 * and the state gate print theirs through it too).
 *
 *   CHECK(cond, fmt, ...)    counts a pass, or prints "FAIL file:line: <message>" and counts a
 *                            failure (the first CHECK_PRINTED are printed, every one counted)
 *   check_args(&argc, argv)  takes the harness's options out of argv, leaving the suite's own:
 *                              --only SUBSTR  run only the groups whose name contains SUBSTR
 *                                             (no group matching is a failure)
 *                              --list         print the groups' names instead of running them
 *                            returns 0, or 2 after a usage message (a missing SUBSTR)
 *   check_group(name)        1 when the group runs; under --list prints its name and returns 0
 *   check_done(suite)        prints the last line "SUITE: N passed, M failed"; the exit status
 *                            (1 when anything failed)
 *   check_summary(suite, passed, failed)
 *                            that line and status for a program that counts on its own (the fuzz
 *                            replays: inputs; the state gate: states reached)
 *
 * Shared by every suite as well (each had its own copy): check_slurp, a whole file in memory, and
 * check_alloc, the allocator hooks (npzs_allocator's shape) that count calls and blocks and fail
 * the i-th call.
 *
 * One file of each binary defines NPZS_CHECK_MAIN before it includes this header: the tally and
 * the functions are defined there and declared everywhere else.  The header needs nothing but
 * libc, so a suite built by a plain `cc -o t tests/x/t.c ...` (tests/crc, tests/contracts) needs
 * no more flags to use it.
 */
#ifndef NPZS_TESTS_CHECK_H
#define NPZS_TESTS_CHECK_H

#include <stddef.h>
#include <stdint.h>

#if defined(__GNUC__) || defined(__clang__)
#define NPZS_CHECK_PRINTF(f, a) __attribute__((format(printf, f, a)))
#else
#define NPZS_CHECK_PRINTF(f, a)
#endif

enum { CHECK_PRINTED = 200 };

extern long check_passed, check_failed;

#define CHECK(cond, ...) \
    do { \
        if (cond) check_passed++; \
        else check_fail(__FILE__, __LINE__, __VA_ARGS__); \
    } while (0)

void check_fail(const char *file, int line, const char *fmt, ...) NPZS_CHECK_PRINTF(3, 4);
int check_args(int *argc, char **argv);
int check_group(const char *name);
int check_done(const char *suite);
int check_summary(const char *suite, long passed, long failed);

/* The file's bytes (a non-NULL buffer for an empty file), its length in *len; NULL when it cannot
 * be read.  free() it. */
uint8_t *check_slurp(const char *path, size_t *len);

/* Allocator hooks: call number fail_at (counted from 0 in n) returns NULL, none when fail_at < 0;
 * live is the blocks held (a free of NULL counts too: the library never makes one, so a nonzero
 * live at the end is a leak or a foreign free), peak the most held at once.
 * npzs_allocator al = {check_malloc, check_free, &(check_alloc){0, -1, 0, 0}}. */
typedef struct check_alloc {
    long n, fail_at, live, peak;
} check_alloc;
void *check_malloc(void *opaque, size_t size);
void check_free(void *opaque, void *ptr);

#ifdef NPZS_CHECK_MAIN
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

long check_passed, check_failed;
static const char *check_only; /* --only's SUBSTR, or NULL: every group runs */
static int check_listing, check_matched;

void check_fail(const char *file, int line, const char *fmt, ...) {
    if (check_failed++ < CHECK_PRINTED) {
        va_list ap;
        va_start(ap, fmt);
        printf("FAIL %s:%d: ", file, line);
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
    } else if (check_failed == CHECK_PRINTED + 1) {
        printf("(more failures: counted, not printed)\n");
    }
}

int check_args(int *argc, char **argv) {
    int out = 1;
    for (int i = 1; i < *argc; i++) {
        if (!strcmp(argv[i], "--only")) {
            if (i + 1 >= *argc) {
                fprintf(stderr, "%s: --only needs a SUBSTR (a part of a group's name)\n", argv[0]);
                return 2;
            }
            check_only = argv[++i];
        } else if (!strcmp(argv[i], "--list")) {
            check_listing = 1;
        } else {
            argv[out++] = argv[i];
        }
    }
    argv[out] = NULL;
    *argc = out;
    return 0;
}

int check_group(const char *name) {
    if (check_only && !strstr(name, check_only)) return 0;
    check_matched++;
    if (check_listing) {
        printf("%s\n", name);
        return 0;
    }
    return 1;
}

int check_done(const char *suite) {
    if (check_listing) return 0;
    if (check_only && !check_matched) {
        check_failed++;
        printf("FAIL --only %s: no group matches\n", check_only);
    }
    return check_summary(suite, check_passed, check_failed);
}

int check_summary(const char *suite, long passed, long failed) {
    printf("%s: %ld passed, %ld failed\n", suite, passed, failed);
    return failed ? 1 : 0;
}

uint8_t *check_slurp(const char *path, size_t *len) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    uint8_t *b = malloc(cap);
    for (size_t r; b && (r = fread(b + n, 1, cap - n, f)) > 0;) {
        n += r;
        if (n == cap) {
            uint8_t *nb = realloc(b, cap *= 2);
            if (!nb) free(b);
            b = nb;
        }
    }
    if (b && ferror(f)) {
        free(b);
        b = NULL;
    }
    fclose(f);
    *len = n;
    return b;
}

void *check_malloc(void *opaque, size_t size) {
    check_alloc *a = opaque;
    if (a->n++ == a->fail_at) return NULL;
    void *p = malloc(size);
    if (p && ++a->live > a->peak) a->peak = a->live;
    return p;
}

void check_free(void *opaque, void *ptr) {
    check_alloc *a = opaque;
    a->live--;
    free(ptr);
}
#endif /* NPZS_CHECK_MAIN */
#endif /* NPZS_TESTS_CHECK_H */
