/*
 * fuzz/replay_main.c -- run a harness's LLVMFuzzerTestOneInput over files and
 * directories (recursively), for CI replays and regression reproducers.
 *
 *   build/fuzz-replay/fuzz_split [--no-fork] [--states OUT] [--timeout S] [-v] PATH...
 *
 * Files run in a child process that is restarted after a crash, so one bad
 * input is counted and the rest still run.  Last line:
 *   <harness>: N passed, M failed
 * Exit status 1 when M > 0.  --states OUT appends one line
 * "<visited hex> <cvisited hex> <errors hex> <vlen visited hex> <scout visited hex>" (states and
 * error codes reached).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common.h"
#define NPZS_CHECK_MAIN /* the summary line of every suite */
#include "../tests/c/check.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char **files;
static size_t nfiles, capfiles;

static void add_file(const char *path) {
    if (nfiles == capfiles) {
        capfiles = capfiles ? capfiles * 2 : 256;
        files = realloc(files, capfiles * sizeof *files);
        if (!files) abort();
    }
    files[nfiles++] = strdup(path);
}

static void walk(const char *path) {
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        exit(2);
    }
    if (!S_ISDIR(st.st_mode)) {
        add_file(path);
        return;
    }
    DIR *d = opendir(path);
    if (!d) return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.') continue;
        if (!strcmp(e->d_name, "README.md") || !strcmp(e->d_name, "SOURCES.md")) continue;
        char *sub;
        if (asprintf(&sub, "%s/%s", path, e->d_name) < 0) abort();
        walk(sub);
        free(sub);
    }
    closedir(d);
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static uint8_t *read_file(const char *path, size_t *n) {
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 4096, len = 0;
    uint8_t *b = malloc(cap);
    for (;;) {
        if (len == cap) b = realloc(b, cap *= 2);
        size_t k = fread(b + len, 1, cap - len, f);
        if (!k) break;
        len += k;
    }
    fclose(f);
    /* exact-size copy so ASan catches reads past the end */
    uint8_t *e = malloc(len ? len : 1);
    memcpy(e, b, len);
    free(b);
    *n = len;
    return e;
}

typedef struct shared {
    volatile size_t cur, done;
    volatile uint64_t visited;
    volatile uint32_t cvisited, errors, vvisited, svisited;
} shared;

static int run_one(const char *path, int verbose) {
    size_t n = 0;
    uint8_t *b = read_file(path, &n);
    if (!b) {
        fprintf(stderr, "replay: cannot read %s\n", path);
        return 1;
    }
    if (verbose) fprintf(stderr, "replay: %s (%zu bytes)\n", path, n);
    LLVMFuzzerTestOneInput(b, n);
    free(b);
    return 0;
}

int main(int argc, char **argv) {
    int nofork = 0, verbose = 0;
    unsigned timeout = 25;
    const char *states = NULL;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--no-fork")) nofork = 1;
        else if (!strcmp(argv[i], "-v")) verbose = 1;
        else if (!strcmp(argv[i], "--states") && i + 1 < argc) states = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc) timeout = (unsigned)atoi(argv[++i]);
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "usage: %s [--no-fork] [--states OUT] [--timeout S] [-v] PATH...\n", argv[0]);
            return 2;
        } else walk(argv[i]);
    }
    qsort(files, nfiles, sizeof *files, cmp_str);
    const char *name = strrchr(argv[0], '/');
    name = name ? name + 1 : argv[0];

    size_t passed = 0, failed = 0;
    uint64_t visited = 0;
    uint32_t cvisited = 0, errors = 0, vvisited = 0, svisited = 0;
    if (nofork) {
        for (size_t i = 0; i < nfiles; i++) {
            if (run_one(files[i], verbose)) failed++;
            else passed++;
        }
        visited = fz_visited_all;
        cvisited = fz_cvisited_all;
        errors = fz_errors_seen;
        vvisited = fz_vlen_visited_all;
        svisited = fz_scout_visited_all;
    } else {
        shared *sh = mmap(NULL, sizeof *sh, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (sh == MAP_FAILED) abort();
        memset((void *)sh, 0, sizeof *sh);
        size_t i = 0;
        while (i < nfiles) {
            fflush(stdout);
            fflush(stderr);
            pid_t pid = fork();
            if (pid < 0) abort();
            if (pid == 0) {
                for (size_t j = i; j < nfiles; j++) {
                    sh->cur = j;
                    alarm(timeout);
                    int bad = run_one(files[j], verbose);
                    alarm(0);
                    sh->visited |= fz_visited_all;
                    sh->cvisited |= fz_cvisited_all;
                    sh->errors |= fz_errors_seen;
                    sh->vvisited |= fz_vlen_visited_all;
                    sh->svisited |= fz_scout_visited_all;
                    if (bad) _exit(3);
                    sh->done = j + 1;
                }
                _exit(0);
            }
            int status = 0;
            while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {}
            if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && sh->done == nfiles) {
                passed += nfiles - i;
                break;
            }
            size_t bad = sh->cur;
            passed += bad - i;
            failed++;
            if (WIFSIGNALED(status))
                printf("FAIL %s %s (signal %d%s)\n", name, files[bad], WTERMSIG(status),
                       WTERMSIG(status) == SIGALRM ? ": timeout" : "");
            else printf("FAIL %s %s (exit %d)\n", name, files[bad], WEXITSTATUS(status));
            i = bad + 1;
        }
        visited = sh->visited;
        cvisited = sh->cvisited;
        errors = sh->errors;
        vvisited = sh->vvisited;
        svisited = sh->svisited;
    }
    if (states) {
        FILE *f = fopen(states, "a");
        if (!f) {
            perror(states);
            return 2;
        }
        fprintf(f, "%llx %x %x %x %x %s\n", (unsigned long long)visited, (unsigned)cvisited, (unsigned)errors,
                (unsigned)vvisited, (unsigned)svisited, name);
        fclose(f);
    }
    return check_summary(name, (long)passed, (long)failed);
}
