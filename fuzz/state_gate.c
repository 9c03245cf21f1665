/* fuzz/state_gate.c -- the state-coverage gate.
 * Reads the lines "<visited hex> <cvisited hex> <errors hex> <vlen hex> <scout hex> <harness>" that
 * the replay builds write with --states, ORs them, prints every state of src/base/states.h (the
 * parser's, the content machine's, the parallel helper's scout's) and every error code with
 * reached / NOT REACHED, and exits 1 if any is never reached.  The vlen parser's states
 * (src/vlen/vlen.c) are gated the same way, from fuzz_vlen's runs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#define NPZS_CHECK_MAIN /* the summary line of every suite */
#include "../tests/c/check.h"

const char *npzs_vlen__state_id(int i); /* test hooks in src/vlen/vlen.c */
int npzs_vlen__nstates(void);

int main(int argc, char **argv) {
    unsigned long long v = 0;
    unsigned c = 0, e = 0, vv = 0, sv = 0;
    int lines = 0;
    for (int i = 1; i < argc; i++) {
        FILE *f = fopen(argv[i], "r");
        if (!f) {
            perror(argv[i]);
            return 2;
        }
        unsigned long long a;
        unsigned b, d, w, s;
        char name[256];
        while (fscanf(f, "%llx %x %x %x %x %255s", &a, &b, &d, &w, &s, name) == 6) {
            v |= a;
            c |= b;
            e |= d;
            vv |= w;
            sv |= s;
            lines++;
        }
        fclose(f);
    }
    if (!lines) {
        fprintf(stderr, "state-gate: no replay results\n");
        return 2;
    }
    int miss = 0, total = 0;
    printf("state-gate: %d replay result(s)\n", lines);
    for (int i = 0; i < NPZS_NSTATES; i++, total++) {
        int hit = (v >> i) & 1;
        if (!hit) {
            printf("  NOT REACHED  state  %s\n", npzs__state_id(i));
            miss++;
        }
    }
    for (int i = 0; i < NPZS_NCSTATES; i++, total++) {
        int hit = (c >> i) & 1;
        if (!hit) {
            printf("  NOT REACHED  cstate %s\n", npzs__cstate_id(i));
            miss++;
        }
    }
    for (int i = 0; i < NPZS_NSCSTATES; i++, total++) {
        if (!((sv >> i) & 1)) {
            printf("  NOT REACHED  scout  %s\n", npzs__scstate_id(i));
            miss++;
        }
    }
    for (int i = 0; i < npzs_vlen__nstates(); i++, total++) {
        if (!((vv >> i) & 1)) {
            printf("  NOT REACHED  vlen   %s\n", npzs_vlen__state_id(i));
            miss++;
        }
    }
    int emiss = 0, etotal = 0;
#define X(id, num, name, msg) \
    etotal++; \
    if (!((e >> ((unsigned)-(num)&31u)) & 1)) { \
        printf("  NOT REACHED  error  %s (%d)\n", name, num); \
        emiss++; \
    }
    NPZS_ERROR_MAP(X)
#undef X
    printf("state-gate: states %d/%d reached, error codes %d/%d reached\n", total - miss, total, etotal - emiss,
           etotal);
    return check_summary("state-gate", total - miss + etotal - emiss, miss + emiss);
}
