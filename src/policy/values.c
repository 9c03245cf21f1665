/*
 * values.c -- a policy's checks on an array's elements (no NaN, no infinity, a range), run over
 * each DATA chunk as it streams, at memory speed: whole blocks are tested without a branch, with
 * 16-byte vectors where the compiler has them (GCC's and clang's vector extensions; plain C
 * elsewhere), and only a block that fails is looked at element by element.  An element cut by a
 * chunk's end waits in a carry of at most 8 bytes.
 *
 * A float is NaN or infinite when its exponent bits are all ones; a datetime64 or timedelta64 is
 * NaT when it is INT64_MIN; a big-endian element is tested with the mask's and the value's bytes
 * swapped, so no element is ever byte-swapped for those tests.  bfloat16 is the top half of a
 * float32: 8 exponent bits, 7 mantissa bits.
 */
#include <math.h>
#include <string.h>

#include "policy.h"
#include "../base/base.h"
#include "../base/rules.h"

#ifdef NPZS_INTERNAL_H
#error "the policy compiler is pure: it sees no parser (internal.h)"
#endif

static uint64_t load(const uint8_t *s, unsigned w) {
    switch (w) {
    case 1: return s[0];
    case 2: {
        uint16_t x;
        memcpy(&x, s, 2);
        return x;
    }
    case 4: {
        uint32_t x;
        memcpy(&x, s, 4);
        return x;
    }
    default: {
        uint64_t x;
        memcpy(&x, s, 8);
        return x;
    }
    }
}

static uint64_t swap(uint64_t x, unsigned w) {
    uint64_t r = 0;
    for (unsigned i = 0; i < w; i++) r |= ((x >> (8 * i)) & 0xFF) << (8 * (w - 1 - i));
    return r;
}

static const uint64_t exp_mask[9] = {0, 0, 0x7C00u, 0, 0x7F800000u, 0, 0, 0, UINT64_C(0x7FF0000000000000)};
static const uint64_t mant_mask[9] = {0, 0, 0x3FFu, 0, 0x7FFFFFu, 0, 0, 0, UINT64_C(0x000FFFFFFFFFFFFF)};
#define BF16_EXP 0x7F80u
#define BF16_MANT 0x007Fu
#define NAT (UINT64_C(1) << 63)

/* The bits a FLOAT element's exponent has (all set: NaN or infinite), and its mantissa's. */
static uint64_t emask(const npzs__vcheck *v) { return v->bf16 ? BF16_EXP : exp_mask[v->w]; }
static uint64_t mmask(const npzs__vcheck *v) { return v->bf16 ? BF16_MANT : mant_mask[v->w]; }

/* The value of one FLOAT element (little-endian after swap) as a double: exactly. */
static double as_double(uint64_t x, const npzs__vcheck *v) {
    if (v->w == 8) {
        double d;
        memcpy(&d, &x, 8);
        return d;
    }
    if (v->w == 4 || v->bf16) {
        uint32_t u = (uint32_t)(v->w == 4 ? x : x << 16);
        float f;
        memcpy(&f, &u, 4);
        return f;
    }
    /* float16: sign, 5 exponent bits, 10 mantissa bits */
    unsigned e = (unsigned)(x >> 10) & 0x1F, m = (unsigned)x & 0x3FF;
    double d = e == 0    ? m / 16777216.0
               : e == 31 ? (m ? (double)NAN : (double)INFINITY)
                         : (1024 + m) * (double)(1u << e) / 33554432.0;
    return (x & 0x8000) ? -d : d;
}

/* 0 when the element passes, else its rule. */
static int elem_bad(const npzs__vcheck *v, uint64_t raw) {
    uint64_t x = v->big ? swap(raw, v->w) : raw;
    switch (v->cls) {
    case NPZS_VK_FLOAT: {
        uint64_t m = emask(v);
        if (v->finite && (x & m) == m) return (x & mmask(v)) ? NPZS_R_POLICY_NAN : NPZS_R_POLICY_INF;
        if (v->lo.on || v->hi.on) {
            double d = as_double(x, v);
            if (v->w == 8 ? !((!v->lo.on || d >= v->lo.d) && (!v->hi.on || d <= v->hi.d))
                          : !((!v->lo.on || (float)d >= v->lo.f) && (!v->hi.on || (float)d <= v->hi.f)))
                return NPZS_R_POLICY_RANGE;
        }
        return 0;
    }
    case NPZS_VK_NAT: return x == NAT ? NPZS_R_POLICY_NAN : 0; /* NaT, as np.isfinite and np.isnat see it */
    case NPZS_VK_SINT: {
        unsigned sh = 64u - 8u * v->w;
        int64_t i = (int64_t)(x << sh) >> sh;
        if ((v->lo.on && (v->lo.none_i || i < v->lo.i)) || (v->hi.on && (v->hi.none_i || i > v->hi.i)))
            return NPZS_R_POLICY_RANGE;
        return 0;
    }
    case NPZS_VK_BOOL: x = x != 0; break; /* NumPy reads any byte but 0 as True, 1 */
    default: break;
    }
    if ((v->lo.on && (v->lo.none_u || x < v->lo.u)) || (v->hi.on && (v->hi.none_u || x > v->hi.u)))
        return NPZS_R_POLICY_RANGE;
    return 0;
}

/* The index of the first of m elements at s that fails, or m. */
static size_t scan_slow(const npzs__vcheck *v, const uint8_t *s, size_t m, int *rule) {
    for (size_t j = 0; j < m; j++) {
        int r = elem_bad(v, load(s + j * v->w, v->w));
        if (r) {
            *rule = r;
            return j;
        }
    }
    return m;
}

#define BLOCK 1024 /* elements tested together before a failure is looked for */

#if defined(__GNUC__) || defined(__clang__)
typedef uint16_t v16u __attribute__((vector_size(16)));
typedef uint32_t v32u __attribute__((vector_size(16)));
typedef uint64_t v64u __attribute__((vector_size(16)));
typedef float v32f __attribute__((vector_size(16)));
typedef double v64f __attribute__((vector_size(16)));

/* 1 when some of the n bytes at s (a multiple of 16) hold an element whose masked bits are `want`. */
static int any_masked(const uint8_t *s, size_t n, unsigned w, uint64_t mask, uint64_t want) {
    v64u acc = {0, 0};
    if (w == 2) {
        v16u m = {0}, t = {0}, a = {0};
        for (int k = 0; k < 8; k++) {
            m[k] = (uint16_t)mask;
            t[k] = (uint16_t)want;
        }
        for (size_t i = 0; i < n; i += 16) {
            v16u x;
            memcpy(&x, s + i, 16);
            a |= (v16u)((x & m) == t);
        }
        memcpy(&acc, &a, 16);
    } else if (w == 4) {
        v32u m = {(uint32_t)mask, (uint32_t)mask, (uint32_t)mask, (uint32_t)mask}, a = {0};
        v32u t = {(uint32_t)want, (uint32_t)want, (uint32_t)want, (uint32_t)want};
        for (size_t i = 0; i < n; i += 16) {
            v32u x;
            memcpy(&x, s + i, 16);
            a |= (v32u)((x & m) == t);
        }
        memcpy(&acc, &a, 16);
    } else {
        v64u m = {mask, mask}, t = {want, want};
        for (size_t i = 0; i < n; i += 16) {
            v64u x;
            memcpy(&x, s + i, 16);
            acc |= (v64u)((x & m) == t);
        }
    }
    return (acc[0] | acc[1]) != 0;
}

/* 1 when some little-endian float of the n bytes at s (a multiple of 16) is outside [lo, hi] or NaN. */
static int any_outside(const npzs__vcheck *v, const uint8_t *s, size_t n) {
    if (v->w == 4) {
        float lo = v->lo.on ? v->lo.f : -(float)INFINITY, hi = v->hi.on ? v->hi.f : (float)INFINITY;
        v32f l = {lo, lo, lo, lo}, h = {hi, hi, hi, hi};
        v32u a = {0};
        for (size_t i = 0; i < n; i += 16) {
            v32f x;
            memcpy(&x, s + i, 16);
            a |= (v32u) ~((x >= l) & (x <= h));
        }
        return (a[0] | a[1] | a[2] | a[3]) != 0;
    }
    double lo = v->lo.on ? v->lo.d : -(double)INFINITY, hi = v->hi.on ? v->hi.d : (double)INFINITY;
    v64f l = {lo, lo}, h = {hi, hi};
    v64u a = {0, 0};
    for (size_t i = 0; i < n; i += 16) {
        v64f x;
        memcpy(&x, s + i, 16);
        a |= (v64u) ~((x >= l) & (x <= h));
    }
    return (a[0] | a[1]) != 0;
}
#define HAVE_VECTORS 1
#endif

/* The index of the first of m elements at s that fails, or m. */
static size_t scan(const npzs__vcheck *v, const uint8_t *s, size_t m, int *rule) {
#ifdef HAVE_VECTORS
    /* the vector tests: finiteness and NaT at any byte order; a range on little-endian float32 and float64 */
    int fin = v->cls == NPZS_VK_FLOAT && v->finite, nat = v->cls == NPZS_VK_NAT;
    int rng = v->cls == NPZS_VK_FLOAT && (v->lo.on || v->hi.on);
    if ((fin || rng || nat) && (!rng || (!v->big && v->w >= 4))) {
        uint64_t mask = nat ? ~UINT64_C(0) : emask(v), want = nat ? NAT : mask;
        if (v->big) {
            mask = swap(mask, v->w);
            want = swap(want, v->w);
        }
        size_t j = 0;
        while (m - j >= BLOCK) {
            const uint8_t *b = s + j * v->w;
            size_t n = (size_t)BLOCK * v->w;
            if (((fin || nat) && any_masked(b, n, v->w, mask, want)) || (rng && any_outside(v, b, n))) {
                size_t k = scan_slow(v, b, BLOCK, rule);
                if (k < BLOCK) return j + k;
            }
            j += BLOCK;
        }
        size_t k = scan_slow(v, s + j * v->w, m - j, rule);
        return j + k;
    }
#endif
    return scan_slow(v, s, m, rule);
}

size_t npzs__values_scan(npzs__vcheck *v, const uint8_t *s, size_t n, uint64_t pos, uint64_t *bad_at, int *rule) {
    size_t k = 0;
    unsigned w = v->w;
    if (v->carry_len) { /* an element begun in the last chunk */
        size_t need = w - v->carry_len;
        if (n < need) {
            memcpy(v->carry + v->carry_len, s, n);
            v->carry_len = (uint8_t)(v->carry_len + n);
            return n;
        }
        memcpy(v->carry + v->carry_len, s, need);
        int r = elem_bad(v, load(v->carry, w));
        uint64_t start = pos - v->carry_len;
        v->carry_len = 0;
        k = need;
        if (r) {
            *rule = r;
            *bad_at = start;
            return k;
        }
    }
    size_t m = (n - k) / w;
    size_t j = scan(v, s + k, m, rule);
    if (j < m) {
        *bad_at = pos + k + j * w;
        return k + (j + 1) * w;
    }
    k += m * w;
    v->carry_len = (uint8_t)(n - k);
    memcpy(v->carry, s + k, n - k);
    return n;
}
