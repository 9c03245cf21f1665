/* contract.h -- what a function's callers must ensure, for the proof (prove/, `make prove`).
 *
 * Each precondition is written twice: as an ACSL `requires` above the function (Frama-C's EVA
 * checks it at every call the drivers make), and as NPZS_REQUIRE in the function's body, an
 * assert in the builds that define NPZS_CONTRACTS (the sanitizer build the tests run, where
 * AddressSanitizer also checks the `\valid_read` parts at every byte read) and nothing in the
 * others. */
#ifndef NPZS_CONTRACT_H
#define NPZS_CONTRACT_H

#if defined(NPZS_CONTRACTS) && !defined(__FRAMAC__)
#include <assert.h>
#define NPZS_REQUIRE(c) assert(c)
#else
#define NPZS_REQUIRE(c) ((void)0)
#endif

#endif
