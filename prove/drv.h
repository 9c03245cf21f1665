/* prove/drv.h -- what the EVA drivers share: nondeterministic bytes and limits.
 *
 * A driver gives an entry point every input the callers can give: bytes of any value (
 * Frama_C_make_unknown), lengths anywhere in their range, limits anywhere in the ranges
 * npzs_limits_check_ (src/npzs.c) accepts.  Buffers are allocated at their exact length (EVA's
 * malloc builtin), so a read one byte past the end is an alarm.  For a length that is an interval
 * the analysis can only bound reads by the interval's largest value; drivers therefore analyse
 * short lengths one by one (Frama_C_interval_split, each with its own exact-size buffer) and
 * every length up to the limit in one buffer of the largest size. */
#ifndef NPZS_PROVE_DRV_H
#define NPZS_PROVE_DRV_H

#include <stdlib.h>
#include <string.h>
#include "__fc_builtin.h"
#include "npzstream.h"
#include "base/base.h"

/* n bytes of any value, in a block of exactly n bytes (n >= 1) */
static inline uint8_t *any_bytes(size_t n) {
    uint8_t *b = malloc(n ? n : 1); /* -eva-alloc-builtin fresh: a new block each call */
    if (!b) Frama_C_abort();
    Frama_C_make_unknown((char *)b, n);
    return b;
}

static inline uint32_t u32_in(uint32_t lo, uint32_t hi) { return Frama_C_unsigned_int_interval(lo, hi); }
static inline size_t size_in(size_t lo, size_t hi) { return Frama_C_size_t_interval(lo, hi); }
static inline uint64_t u64_any(void) {
    uint64_t v;
    Frama_C_make_unknown((char *)&v, sizeof v);
    return v;
}
static inline uint64_t u64_in(uint64_t lo, uint64_t hi) {
    uint64_t v = u64_any();
    if (v < lo || v > hi) v = lo; /* the analysis keeps [lo, hi] */
    return v;
}

/* Limits anywhere in the ranges npzs_limits_check_ accepts (src/npzs.c). */
static inline void any_limits(npzs_limits *l) {
    l->max_header_size = u64_in(1, UINT64_C(1) << 30);
    l->max_ndim = u32_in(0, NPZS_MAX_NDIM);
    l->max_fields = u32_in(1, UINT32_MAX);
    l->max_depth = u32_in(1, 1000);
    l->max_members = u32_in(1, 0x7FFFFFFFu);
    l->max_name_len = u32_in(1, 65535);
    l->max_extra_len = u32_in(0, 65535);
    l->max_total_bytes = u64_any();
    l->inflate_window = u32_in(1, UINT32_MAX);
    l->lenient = u32_in(0, NPZS_LENIENT_NPY_TRAILING | NPZS_LENIENT_HEADER_NEWLINE | NPZS_LENIENT_FAST_INFLATE);
    l->max_memory = u64_any();
}

#endif
