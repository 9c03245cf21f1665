/*
 * spec.c -- what one element of a vlen-ndarray chunk is: its dtype and its shape pattern, read
 * from the caller's two strings (npzs_vlen_spec_parse) into the spec the parser (vlen.c) frames
 * elements by, and the check of a spec the caller filled by hand.  Pure functions over strings.
 *
 *   dtype   := a name (bool, int8 .. uint64, float16 .. float64, complex64, complex128) or its
 *              little-endian dtype.str ('<f4', '|u1'; '<' for '|' in one-byte types)
 *   pattern := ws ['[' ws] dim (ws ',' ws dim)* [ws ']'] ws     dim := null | [1-9][0-9]*
 *              with one null, the leading dimension
 */
#include <string.h>

#include "npzstream_vlen.h"
#include "spec.h"
#include "../base/base.h"

#ifdef NPZS_INTERNAL_H
#error "vlen/ sees no npzstream parser (internal.h)"
#endif

typedef struct dtype_def {
    const char *name;
    const char *str; /* dtype.str */
    uint32_t itemsize;
} dtype_def;

static const dtype_def dtypes[] = {
    {"bool", "|b1", 1},      {"int8", "|i1", 1},         {"int16", "<i2", 2},   {"int32", "<i4", 4},
    {"int64", "<i8", 8},     {"uint8", "|u1", 1},        {"uint16", "<u2", 2},  {"uint32", "<u4", 4},
    {"uint64", "<u8", 8},    {"float16", "<f2", 2},      {"float32", "<f4", 4}, {"float64", "<f8", 8},
    {"complex64", "<c8", 8}, {"complex128", "<c16", 16},
};
#define NDTYPES (sizeof dtypes / sizeof dtypes[0])

static int cfg_fail(size_t *err_at, const char **err_msg, int code, size_t at, const char *msg) {
    if (err_at) *err_at = at;
    if (err_msg) *err_msg = msg;
    return code;
}

static const dtype_def *find_dtype(const char *s) {
    for (size_t i = 0; i < NDTYPES; i++)
        if (!strcmp(s, dtypes[i].name) || !strcmp(s, dtypes[i].str)) return &dtypes[i];
    /* one-byte types: NumPy prints '|', '<' means the same */
    if (s[0] == '<')
        for (size_t i = 0; i < NDTYPES; i++)
            if (dtypes[i].str[0] == '|' && !strcmp(s + 1, dtypes[i].str + 1)) return &dtypes[i];
    return NULL;
}

static int is_space(char c) { return c == ' ' || c == '\t'; }

NPZS__API int npzs_vlen_spec_parse(npzs_vlen_spec *spec, const char *dtype, const char *pattern, size_t *err_at,
                                   const char **err_msg) {
    if (!spec || !dtype || !pattern) return cfg_fail(err_at, err_msg, NPZS_E_BAD_CALL, 0, "NULL argument");
    memset(spec, 0, sizeof *spec);
    const dtype_def *d = find_dtype(dtype);
    if (!d) {
        if (dtype[0] == '>' || dtype[0] == '=')
            return cfg_fail(err_at, err_msg, NPZS_E_VLEN_BAD_DTYPE, 0,
                            "dtype must be little-endian ('<' or '|'): vlen-ndarray data is little-endian");
        return cfg_fail(err_at, err_msg, NPZS_E_VLEN_BAD_DTYPE, 0,
                        "unknown dtype (bool, int8..int64, uint8..uint64, float16/32/64, complex64/128)");
    }
    memcpy(spec->dtype, d->str, strlen(d->str) + 1);
    spec->itemsize = d->itemsize;

    /* pattern := ws ['[' ws] dim (ws ',' ws dim)* [ws ']'] ws */
    const char *s = pattern;
    size_t i = 0;
    while (is_space(s[i])) i++;
    int bracket = 0;
    if (s[i] == '[') {
        bracket = 1;
        i++;
        while (is_space(s[i])) i++;
    }
    uint32_t nd = 0;
    uint64_t row = d->itemsize;
    int have_null = 0;
    for (;;) {
        size_t tok = i;
        if (s[i] == 'n') {
            if (strncmp(s + i, "null", 4) != 0)
                return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok, "shape pattern: expected null or an integer");
            i += 4;
            if (have_null)
                return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok,
                                "shape pattern: more than one variable (null) dimension");
            /* a null after a fixed dimension cannot get here: the fixed one failed first */
            have_null = 1;
        } else if (s[i] >= '0' && s[i] <= '9') {
            uint64_t v = 0;
            int big = 0;
            while (s[i] >= '0' && s[i] <= '9') {
                if (v > (UINT64_MAX - 9) / 10) big = 1;
                else v = v * 10 + (uint64_t)(s[i] - '0');
                i++;
            }
            if (i - tok > 1 && s[tok] == '0')
                return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok, "shape pattern: leading zero in a dimension");
            if (v == 0 && !big)
                return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok,
                                "shape pattern: a fixed dimension of 0 leaves the variable one undetermined");
            if (nd == 0)
                return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok,
                                "shape pattern: the variable (null) dimension must be the leading one");
            if (big || v > (UINT64_C(1) << 63) / row)
                return cfg_fail(err_at, err_msg, NPZS_E_SIZE_OVERFLOW, tok,
                                "shape pattern: the fixed element size overflows");
            row *= v; /* <= 2^63 */
            if (nd < NPZS_VLEN_MAX_NDIM) spec->dims[nd] = v;
        } else if (s[i] == 0 && nd == 0 && !bracket) {
            return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok, "shape pattern: empty");
        } else {
            return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok, "shape pattern: expected null or an integer");
        }
        if (nd == NPZS_VLEN_MAX_NDIM)
            return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, tok, "shape pattern: more than 32 dimensions");
        nd++;
        while (is_space(s[i])) i++;
        if (s[i] == ',') {
            i++;
            while (is_space(s[i])) i++;
            continue;
        }
        break;
    }
    if (bracket) {
        if (s[i] != ']') return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, i, "shape pattern: expected ',' or ']'");
        i++;
        while (is_space(s[i])) i++;
    }
    if (s[i] != 0)
        return cfg_fail(err_at, err_msg, NPZS_E_BAD_SHAPE, i,
                        bracket ? "shape pattern: text after ']'" : "shape pattern: expected ','");
    spec->ndim = nd;
    spec->row_bytes = row;
    return 0;
}

/* The spec is what npzs_vlen_spec_parse() makes (a caller may have filled it by hand). */
int npzs__vlen_spec_valid(const npzs_vlen_spec *s) {
    const dtype_def *d = NULL;
    if (memchr(s->dtype, 0, sizeof s->dtype) == NULL) return 0;
    for (size_t i = 0; i < NDTYPES; i++)
        if (!strcmp(s->dtype, dtypes[i].str)) d = &dtypes[i];
    if (!d || d->itemsize != s->itemsize) return 0;
    if (s->ndim < 1 || s->ndim > NPZS_VLEN_MAX_NDIM || s->dims[0] != 0) return 0;
    uint64_t row = s->itemsize;
    for (uint32_t k = 1; k < s->ndim; k++) {
        if (s->dims[k] == 0 || s->dims[k] > (UINT64_C(1) << 63) / row) return 0;
        row *= s->dims[k];
    }
    return row == s->row_bytes;
}
