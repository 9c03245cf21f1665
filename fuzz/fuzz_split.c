/* fuzz_split: split invariance.
 * Input: [ctl][sched bytes (ctl & 15 of them)][file bytes]
 *   the split run parses every .npy header (the whole run keeps its memo of the last one)
 *   ctl bit 4: pass in == NULL after npzs_finish in the split run
 *   ctl bits 5-7: 0 -> the schedule bytes as given (see common.h; 0 = 0-byte push),
 *                 1 -> 1-byte pushes, 2 -> alternate 0- and 1-byte pushes, other -> as given;
 *                 4 and more: every array's data into a destination (npzs_data_into)
 * The file is parsed whole (one push) and under the schedule; abort unless the
 * normalized event digests, verdicts, error codes and offsets are identical. */
#include "common.h"

static const uint8_t sched_01[] = {0, 1};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_split_in in;
    if (!fz_split_input(data, size, &in)) return 0;
    unsigned ctl = in.ctl;
    size_t sn = in.sched_n, fn = in.file_n;
    const uint8_t *sched = in.sched, *file = in.file;

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
    o.no_memo = 1; /* every header parsed: the memo of the last one must change nothing */
    fz_run(file, fn, &o, &split);
    if (!fz_same(&whole, &split)) fz_report_mismatch(file, fn, NULL, sched, sn, &whole, &split);
    return 0;
}
