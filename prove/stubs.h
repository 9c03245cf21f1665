/* prove/stubs.h -- the parser as the proof sees it: for the analysed sources a handle they never
 * look into (src/view/handle.h), for the drivers and stubs.c nothing but its sticky error, which a
 * driver clears between two parses on one handle. */
#ifndef NPZS_PROVE_STUBS_H
#define NPZS_PROVE_STUBS_H

#include <stdint.h>
#include "view/handle.h"

struct npzs_parser {
    int err, rule;
    uint64_t off, coff;
};

#endif
