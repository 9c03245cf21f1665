/* spec.h -- the spec of a vlen-ndarray element (spec.c), as the parser (vlen.c) checks it. */
#ifndef NPZS_VLEN_SPEC_H
#define NPZS_VLEN_SPEC_H

#include "npzstream_vlen.h"

/* 1 when *s is what npzs_vlen_spec_parse() makes of some dtype and pattern: a known dtype of its
 * itemsize, 1 to NPZS_VLEN_MAX_NDIM dimensions, the leading one variable (0), the others not 0,
 * row_bytes their product with the itemsize (a caller may have filled it by hand). */
int npzs__vlen_spec_valid(const npzs_vlen_spec *s);

#endif
