/* fuzz_split: split invariance.
 * Input: [ctl][sched bytes (ctl & 15 of them)][file bytes]
 *   the split run parses every .npy header (the whole run keeps its memo of the last one)
 *   ctl bit 4: pass in == NULL after npzs_finish in the split run
 *   ctl bits 5-7: 0 -> the schedule bytes as given (see common.h; 0 = 0-byte push),
 *                 1 -> 1-byte pushes, 2 -> alternate 0- and 1-byte pushes, other -> as given;
 *                 4 and more: every array's data into a destination (npzs_data_into)
 * The file is parsed whole (one push) and under the schedule; abort unless the
 * normalized event digests, verdicts, error codes and offsets are identical.  Then again with
 * some events only (npzs_events, a mask drawn from the file's length): the whole stream
 * filtered against the parser asked for them, under the schedule. */
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
    default: break;
    }
    o.sched = sched;
    o.sched_n = sn;
    o.finish_null = (ctl >> 4) & 1;
    o.into = (ctl >> 5) >= 4;
    o.no_memo = 1; /* every header parsed: the memo of the last one must change nothing */
    fz_run(file, fn, &o, &split);
    if (!fz_same(&whole, &split)) fz_report_mismatch(file, fn, NULL, sched, sn, &whole, &split);
    /* npzs_events: a parser asked for some events (drawn from the input) delivers exactly those
     * of the whole stream, under the schedule, with the same verdict, error and offsets */
    fz_opts m;
    fz_opts_init(&m);
    m.mask = ((unsigned)fn * 0x9E3779B1u >> 27) & 0x3Eu;
    if (!m.mask) m.mask = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    fz_result mwhole, msplit;
    fz_run(file, fn, &m, &mwhole);
    m.sched = sched;
    m.sched_n = sn;
    m.mask_parser = 1;
    fz_run(file, fn, &m, &msplit);
    if (!fz_same(&mwhole, &msplit)) fz_report_mismatch(file, fn, NULL, sched, sn, &mwhole, &msplit);
    if (mwhole.accepted != whole.accepted || mwhole.err != whole.err || mwhole.err_off != whole.err_off)
        fz_die("events masked to %#x: another verdict", m.mask);
    return 0;
}
