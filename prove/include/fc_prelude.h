/* prove/include/fc_prelude.h -- included before every analysed source: Frama-C 25 parses no
 * _Alignas (src/policy/policy.h aligns a policy arena's blocks, which no analysed source uses). */
#define _Alignas(x)

/* C11's timespec_get (src/zip/names.c, the seed's fallback), which Frama-C 25's libc lacks: it
 * fills *ts with any time */
#include <time.h>
#ifndef TIME_UTC
#define TIME_UTC 1
/*@ requires \valid(ts);
    assigns *ts \from \nothing;
    ensures \initialized(ts) && (\result == 0 || \result == base);
*/
extern int timespec_get(struct timespec *ts, int base);
#endif

/* getrandom's flag (Frama-C 25's sys/random.h declares the call, not its flags) */
#define GRND_NONBLOCK 1

/* getrandom, which Frama-C 25's sys/random.h declares without a specification */
#include <sys/random.h>
/*@ requires \valid((char *)buf + (0 .. len - 1));
    assigns ((char *)buf)[0 .. len - 1] \from \nothing;
    assigns \result \from len, flags;
    ensures \result == -1 || (0 <= \result <= len);
    ensures \result == len ==> \initialized((char *)buf + (0 .. len - 1));
*/
extern ssize_t getrandom(void *buf, size_t len, unsigned int flags);
