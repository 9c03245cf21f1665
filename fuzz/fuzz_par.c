/* fuzz_par: the parallel-inflate helper (npzs_par_*) against the parser alone.
 * Input: [ctl][sched bytes (ctl & 15 of them)][file bytes]
 *   ctl bit 4: 2 workers (else 1)
 *   ctl bit 5: a bound of 4 KiB (the helper must feed the parser through its holds) instead of 1 GiB
 *   ctl bits 6-7: 0 -> the schedule as given (common.h), 1 -> 1-byte pushes, 2 -> one push,
 *                 3 -> as given with every array's data into a destination (npzs_data_into)
 *   the file's length odd (and not skip_data): npzs_par_take_data after every HEADER (alignment
 *                 1, or 16 when the length is 3 mod 4): a taken array's DATA must be in its block
 *   ctl bits 4-5 both set and the file's last byte odd: npzs_par_skip_data instead of the
 *                 small bound, a job keeping (last byte >> 1) + 1 bytes of a member (DATA and
 *                 BLOB events then left out of both digests)
 *   bit 2 of the file's length set: npzs_par_stable_input, the pushes slices of one copy of the
 *                 file (the helper holds them by reference); with bit 3 set too, only from the
 *                 second push on (the first copied)
 * The file is parsed whole by the parser alone, then through the helper (every deflated member
 * of known size inflated ahead by a worker, whatever its size) under the schedule; abort unless
 * the normalized event digests, verdicts, error codes and offsets are identical. */
#include "common.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_split_in in;
    if (!fz_split_input(data, size, &in)) return 0;
    fz_opts o;
    fz_opts_init(&o);
    fz_result alone, par;
    if (!fz_run(in.file, in.file_n, &o, &alone)) fz_die("npzs_new failed");
    o.par = 1;
    o.par_threads = (in.ctl >> 4) & 1 ? 2 : 1;
    o.par_held = (in.ctl >> 5) & 1 ? 4096 : (uint64_t)1 << 30;
    if ((in.ctl & 0x30) == 0x30 && in.file_n && (in.file[in.file_n - 1] & 1)) {
        o.no_data = 1;
        o.par_skip = (uint64_t)(in.file[in.file_n - 1] >> 1) + 1;
        o.par_held = (uint64_t)1 << 30;
        fz_opts a0;
        fz_opts_init(&a0);
        a0.no_data = 1;
        fz_run(in.file, in.file_n, &a0, &alone);
    }
    o.par_stable = (in.file_n >> 2) & 1 ? 1 + (int)((in.file_n >> 3) & 1) : 0;
    if (!o.par_skip && (in.file_n & 1)) o.par_take = (in.file_n & 3) == 3 ? 5 : 1;
    switch (in.ctl >> 6) {
    case 1:
        o.sched = in.file;
        o.sched_n = 0;
        break; /* 1-byte pushes */
    case 2: o.sched = NULL; break;
    default:
        o.sched = in.sched;
        o.sched_n = in.sched_n;
        o.into = (in.ctl >> 6) == 3;
        break;
    }
    fz_run(in.file, in.file_n, &o, &par);
    if (!fz_same(&alone, &par)) fz_report_mismatch(in.file, in.file_n, NULL, o.sched, o.sched_n, &alone, &par);
    return 0;
}
