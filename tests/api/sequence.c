/* tests/api/sequence.c -- npzs_npy_sequence: .npy arrays back to back. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

/* npzs_npy_sequence: three arrays back to back give three members at every split; cut inside
 * any of them, truncated at the cut; and the call is refused after the first byte. */
void test_sequence(void) {
    size_t la, lb, lc;
    uint8_t *a = npy_of("{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", 8, &la);
    uint8_t *b = npy_of("{'descr': '<f8', 'fortran_order': True, 'shape': (2, 1), }", 16, &lb);
    uint8_t *c = npy_of("{'descr': '|u1', 'fortran_order': False, 'shape': (), }", 1, &lc);
    size_t n = la + lb + lc;
    uint8_t *s = malloc(n);
    memcpy(s, a, la);
    memcpy(s + la, b, lb);
    memcpy(s + la + lb, c, lc);
    s[la + lb - 16 + 3] = 0x5A; /* a data byte of b: the events must carry it */
    seq_mode = 1;
    run whole = parse(s, n, NULL, 0, NULL, NULL);
    CHECK(whole.verdict == 1 && whole.events == 3 * 4 + 1, "sequence: verdict %d, %d events", whole.verdict,
          whole.events);
    size_t one = 1;
    run r1 = parse(s, n, &one, 1, NULL, NULL);
    CHECK(same(&whole, &r1) && r1.progress_ok, "sequence: 1-byte pushes differ");
    int ok = 1;
    for (size_t cut = 1; cut < n && ok; cut++) {
        size_t two[2] = {cut, n};
        run rc = parse(s, n, two, 2, NULL, NULL);
        if (!same(&whole, &rc) || !rc.progress_ok) {
            ok = 0;
            printf("  sequence cut at %zu differs\n", cut);
        }
        run t = parse(s, cut, NULL, 0, NULL, NULL); /* the input ends at the cut */
        int between = cut == la || cut == la + lb;
        if (between ? t.verdict != 1 : (t.verdict != NPZS_E_TRUNCATED || t.err_off != cut)) {
            ok = 0;
            printf("  sequence ending at %zu: verdict %d off %llu\n", cut, t.verdict, (unsigned long long)t.err_off);
        }
    }
    CHECK(ok, "sequence: a split or a cut differs");
    /* npzs_events: an array that ends without its event (HEADER of an empty array, its last DATA)
     * leaves the bytes after it to the next array */
    static const unsigned masks[] = {0, NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                     NPZS_EV_BIT(NPZS_EV_HEADER) | NPZS_EV_BIT(NPZS_EV_MEMBER_END),
                                     NPZS_EV_BIT(NPZS_EV_DATA), NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN)};
    for (size_t k = 0; k < sizeof masks / sizeof *masks && ok; k++) {
        ev_mask = masks[k];
        run ref = parse(s, n, NULL, 0, NULL, NULL);
        mask_on = 1;
        for (size_t cut = 0; cut < n && ok; cut++) {
            size_t two[2] = {cut ? cut : 1, n};
            run rc = parse(s, n, two, 2, NULL, NULL);
            if (!same(&ref, &rc) || !rc.progress_ok || rc.verdict != 1) {
                ok = 0;
                printf("  sequence, events %#x, cut at %zu: verdict %d\n", masks[k], cut, rc.verdict);
            }
        }
        mask_on = 0;
    }
    ev_mask = NPZS_EV_ALL;
    CHECK(ok, "sequence: with events masked a split differs");
    seq_mode = 0;
    run plain = parse(s, n, NULL, 0, NULL, NULL);
    CHECK(plain.verdict == NPZS_E_TRAILING_DATA && plain.err_off == la, "without the mode: trailing data at %zu", la);
    /* misuse: after the first byte, and with the lenient trailing flag */
    npzs_parser *p = npzs_new(NULL, NULL);
    npzs_in in = {s, 1, 0};
    npzs_event ev;
    (void)npzs_next(p, &in, &ev);
    int rc = npzs_npy_sequence(p);
    CHECK(rc == NPZS_E_BAD_CALL && npzs_error_rule(p) && !strcmp(npzs_error_rule(p), "CALL.sequence"),
          "npzs_npy_sequence after the first byte: %d", rc);
    npzs_free(p);
    npzs_limits lim;
    npzs_limits_default(&lim);
    lim.lenient = NPZS_LENIENT_NPY_TRAILING;
    p = npzs_new(&lim, NULL);
    CHECK(npzs_npy_sequence(p) == NPZS_E_BAD_CALL, "npzs_npy_sequence with NPZS_LENIENT_NPY_TRAILING");
    npzs_free(p);
    free(a);
    free(b);
    free(c);
    free(s);
}
