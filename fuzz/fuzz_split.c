/* fuzz_split: split invariance.
 * Input: [ctl][sched bytes (ctl & 15 of them)][file bytes]
 *   ctl bit 4: pass in == NULL after npzs_finish in the split run
 *   ctl bits 5-7: 0 -> the schedule bytes as given (see common.h; 0 = 0-byte push),
 *                 1 -> 1-byte pushes, 2 -> alternate 0- and 1-byte pushes, other -> as given;
 *                 4 and more: every array's data into a destination (npzs_data_into)
 * The file is parsed whole (one push) and under the schedule; abort unless the
 * normalized event digests, verdicts, error codes and offsets are identical. */
#include "common.h"

static const uint8_t sched_01[] = {0, 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size == 0) return 0;
    unsigned ctl = data[0];
    size_t sn = ctl & 15u;
    if (sn > size - 1) sn = size - 1;
    const uint8_t *sched = data + 1;
    const uint8_t *file = data + 1 + sn;
    size_t fn = size - 1 - sn;

    fz_opts o;
    fz_opts_init(&o);
    fz_result whole, split;
    if (!fz_run(file, fn, &o, &whole)) fz_die("npzs_new failed");
    switch (ctl >> 5) {
    case 1:
        sched = sched_01 + 1; /* {1} */
        sn = 1;
        break;
    case 2:
        sched = sched_01;
        sn = 2;
        break;
    default:
        break;
    }
    o.sched = sched;
    o.sched_n = sn;
    o.finish_null = (ctl >> 4) & 1;
    o.into = (ctl >> 5) >= 4;
    fz_run(file, fn, &o, &split);
    if (!fz_same(&whole, &split)) fz_report_mismatch(file, fn, NULL, sched, sn, &whole, &split);
    return 0;
}
