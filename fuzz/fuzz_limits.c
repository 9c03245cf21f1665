/* fuzz_limits: limits and allocation failures.
 * Input: [8 control bytes][file...]
 *   c0: max_header_size   c1: max_ndim          c2: max_fields / max_depth
 *   c3: max_members / max_name_len              c4: max_extra_len / max_total_bytes
 *   c5: inflate_window    c6: index of the allocation to fail (255: none)
 *   c7: bit 0: pass the file in 1-byte pushes; bit 1: the loosest limits instead (below)
 * Every limit is at most its default (tighter, never looser) and never 0 where
 * npzs_new() needs a positive value, unless c7 bit 1 asks for the loosest limits npzs_new()
 * accepts (max_depth 1000, max_ndim 64, max_members 2^31-1, max_name_len 65535, max_total_bytes
 * 2^64-1, max_fields 2^32-1; max_header_size and inflate_window 16 MiB, since both are
 * allocated as declared and the fuzzer's memory is 2 GiB).  Oracles:
 *   - loosest: the run gives the default run's result unless the default run failed with a
 *     limit code; it never crashes (a descr nested 1000 deep, say);
 *   - the run with the limits either gives the same result as the default run, or
 *     fails with a limit code (limit, header_too_large, bad_shape for max_ndim);
 *     inflate_window alone never changes the result;
 *   - with the i-th allocation failing: npzs_new() returns NULL, or the run fails
 *     with nomem; if the failure point was never reached, the result is unchanged;
 *   - no leak (fz_run counts allocations; LeakSanitizer too);
 *   - API misuse (bad npzs_in, NULL event) returns bad_call, never crashes. */
#include <string.h>

#include "common.h"

static const uint64_t hdr_sizes[] = {1, 8, 40, 64, 100, 128, 300, 1000, 4000, 10000};
static const uint32_t fields[] = {1, 2, 3, 5, 16, 100, 1000, 100000};
static const uint32_t members[] = {1, 2, 3, 4, 8, 100, 100000};
static const uint32_t names[] = {1, 4, 5, 6, 8, 16, 255, 4096};
static const uint32_t extras[] = {0, 4, 19, 20, 24, 36, 1024, 65535};
static const uint64_t totals[] = {0, 1, 64, 100, 200, 1000, 4096, 65536, 1u << 20, UINT64_C(1) << 40};
static const uint32_t windows[] = {1, 2, 7, 64, 100, 4096, 65536, 256 * 1024};
#define PICK(t, v) (t)[(v) % (sizeof(t) / sizeof((t)[0]))]

static void misuse(void) {
    npzs_event ev;
    uint8_t b[4] = {0x93, 'N', 'U', 'M'};
    npzs_in bad = {NULL, 5, 0};
    if (npzs_next(NULL, NULL, &ev) != NPZS_E_BAD_CALL) fz_die("npzs_next(NULL) did not return bad_call");
    npzs_parser *p = npzs_new(NULL, NULL);
    if (!p) return;
    if (npzs_next(p, &bad, &ev) != NPZS_E_BAD_CALL) fz_die("npzs_next(src NULL, size 5) did not return bad_call");
    if (npzs_error(p) != NPZS_E_BAD_CALL) fz_die("bad_call not sticky");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    if (!p) return;
    npzs_in in = {b, 4, 5};
    if (npzs_next(p, &in, &ev) != NPZS_E_BAD_CALL) fz_die("pos > size did not return bad_call");
    npzs_free(p);
    p = npzs_new(NULL, NULL);
    if (!p) return;
    in.pos = 0;
    if (npzs_next(p, &in, NULL) != NPZS_E_BAD_CALL) fz_die("NULL event did not return bad_call");
    npzs_free(p);
    fz_errors_seen |= 1u << 20;
}

static int limit_code(int e) { return e == NPZS_E_LIMIT || e == NPZS_E_HEADER_TOO_LARGE || e == NPZS_E_BAD_SHAPE; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 8) return 0;
    const uint8_t *c = data;
    const uint8_t *file = data + 8;
    size_t fn = size - 8;
    npzs_limits lim, def;
    npzs_limits_default(&lim);
    npzs_limits_default(&def);
    lim.max_header_size = PICK(hdr_sizes, c[0]);
    lim.max_ndim = c[1] % 65;
    lim.max_fields = PICK(fields, c[2] & 7);
    lim.max_depth = 1 + (c[2] >> 3) % 32;
    lim.max_members = PICK(members, c[3] & 7);
    lim.max_name_len = PICK(names, c[3] >> 3);
    lim.max_extra_len = PICK(extras, c[4] & 7);
    lim.max_total_bytes = PICK(totals, c[4] >> 3);
    lim.inflate_window = PICK(windows, c[5]);
    /* never looser than the defaults */
#define CAP(f) \
    if (lim.f > def.f) lim.f = def.f
    CAP(max_header_size);
    CAP(max_ndim);
    CAP(max_fields);
    CAP(max_depth);
    CAP(max_members);
    CAP(max_name_len);
    CAP(max_extra_len);
    CAP(max_total_bytes);
    CAP(inflate_window);
#undef CAP
    if (lim.inflate_window < 64 && lim.max_total_bytes > 65536) lim.max_total_bytes = 65536;
    int loose = (c[7] & 2) != 0;
    if (loose) {
        lim.max_header_size = 1u << 24;
        lim.max_ndim = 64;
        lim.max_fields = UINT32_MAX;
        lim.max_depth = 1000;
        lim.max_members = 0x7FFFFFFF;
        lim.max_name_len = 65535;
        lim.max_extra_len = 65535;
        lim.max_total_bytes = UINT64_MAX;
        lim.inflate_window = 1u << 24;
    }
    int window_only = lim.max_header_size == def.max_header_size && lim.max_ndim == def.max_ndim &&
                      lim.max_fields == def.max_fields && lim.max_depth == def.max_depth &&
                      lim.max_members == def.max_members && lim.max_name_len == def.max_name_len &&
                      lim.max_extra_len == def.max_extra_len && lim.max_total_bytes == def.max_total_bytes;
    static const uint8_t one[] = {1};

    fz_opts o;
    fz_opts_init(&o);
    if (c[7] & 1) {
        o.sched = one;
        o.sched_n = 1;
    }
    fz_result ref, lr, fr;
    fz_run(file, fn, &o, &ref);
    o.lim = &lim;
    if (!fz_run(file, fn, &o, &lr)) fz_die("npzs_new rejected valid limits");
    if (loose) {
        if (!fz_same(&ref, &lr) && !limit_code(ref.err)) {
            fz_print_result(stderr, "default", &ref);
            fz_print_result(stderr, "loosest", &lr);
            fz_die("the loosest limits changed a result that no default limit decided");
        }
    } else if (!fz_same(&ref, &lr)) {
        if (window_only || !limit_code(lr.err)) {
            fz_print_result(stderr, "default", &ref);
            fz_print_result(stderr, "limited", &lr);
            fz_die("a tighter limit changed the result without a limit error");
        }
    }
    if (c[6] != 255) {
        o.fail_at = c[6];
        if (fz_run(file, fn, &o, &fr)) {
            if (fr.alloc_failed) {
                if (fr.err != NPZS_E_NOMEM) {
                    fz_print_result(stderr, "limited", &lr);
                    fz_print_result(stderr, "alloc-fail", &fr);
                    fz_die("allocation %u failed but the run ended with %s, not nomem", (unsigned)c[6],
                           fr.err ? npzs_error_name(fr.err) : "success");
                }
            } else if (!fz_same(&lr, &fr)) {
                fz_die("result changed although no allocation failed");
            }
        } else if (!fr.alloc_failed) {
            fz_die("npzs_new returned NULL without an allocation failure");
        }
    }
    misuse();
    return 0;
}
