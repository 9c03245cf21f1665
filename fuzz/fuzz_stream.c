/* fuzz_stream: the whole input in one push, then npzs_finish(), to END or an error.
 * All invariants of fz_run() (progress, chunk contiguity, sticky errors, no leak) apply. */
#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_opts o;
    fz_opts_init(&o);
    fz_result r;
    if (!fz_run(data, size, &o, &r)) fz_die("npzs_new failed with default limits");
    return 0;
}
