/*
 * tests/api -- C-level tests of the public API (build/test_api):
 *   - split invariance: every file given on the command line is parsed whole,
 *     in 1-byte pushes, 7-byte pushes, with empty pushes interleaved, and at
 *     seeded random split points; events (data chunks merged), verdict, error
 *     code and offset must be identical;
 *   - every push is copied into a fresh heap buffer that is freed right after
 *     the call, so a pointer kept across calls is a use-after-free under ASan;
 *   - the progress invariant on every call;
 *   - zero copy: stored DATA chunks point into the pushed buffer;
 *   - allocator failure: fail the i-th allocation for every i, each must end
 *     in a clean NPZS_E_NOMEM (LeakSanitizer checks nothing leaks);
 *   - API contract: sticky errors, NPZS_DONE, trailing bytes, bad arguments,
 *     invalid limits, error names;
 *   - every .npy header met is parsed again by the general parser alone and by
 *     the default path (NumPy's exact text first): the results must agree.
 * One file per concern: driver.c (one input through a parser, its digest), files.c (every file),
 * input.c, par.c, contract.c, names.c, dtype.c, tree.c, sequence.c; this file runs their groups in
 * a fixed order (the random splits of the files depend on it), then the files.
 * Usage: test_api [--need-files N] [--only SUBSTR] [--list] [FILE|DIR]...
 *   --need-files N fails a run over fewer than N files (make check: a corpus that went missing is
 *   a failure, not a pass); --only and --list: tests/c/check.h (a file's group is "files/PATH").
 * Last line: "api: N passed, M failed".
 */
#include <stdlib.h>
#include <string.h>

#define NPZS_CHECK_MAIN
#include "api.h"

static const struct {
    const char *name;
    void (*run)(void);
} GROUPS[] = {
    {"names/siphash", test_siphash},
    {"dtype/header-memo", test_header_memo},
    {"dtype/array-size", test_array_size_rule},
    {"names/zr-name", test_zr_name},
    {"dtype/deep-descr", test_deep_descr},
    {"dtype/dtype-tree", test_dtype_tree},
    {"tree/big-tree", test_big_tree},
    {"tree/pool-full", test_pool_full},
    {"tree/pools-first", test_pools_first},
    {"tree/tree-grows", test_tree_grows},
    {"sequence/sequence", test_sequence},
    {"contract/events-call", test_events_call},
    {"contract/contract", test_contract},
    {"input/many-members", test_many_members},
    {"input/changing-input", test_changing_input},
    {"input/gathered-inflate", test_gathered_inflate},
    {"input/limit-numbers", test_limit_numbers},
};

int main(int argc, char **argv) {
    if (check_args(&argc, argv)) return 2;
    for (size_t i = 0; i < sizeof GROUPS / sizeof *GROUPS; i++)
        if (check_group(GROUPS[i].name)) GROUPS[i].run();
    static const char *const par_groups[] = {"par/copied", "par/stable", "par/stable-later"};
    for (int stable = 0; stable < 3; stable++)
        if (check_group(par_groups[stable])) test_par_input(stable);
    long need = 0, nfiles = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--need-files") && i + 1 < argc) {
            need = atol(argv[++i]);
            continue;
        }
        nfiles += test_path(argv[i]);
    }
    if (check_group("files/summary")) {
        CHECK(nfiles >= need, "%ld files read, %ld needed", nfiles, need);
        test_files_summary();
    }
    return check_done("api");
}
