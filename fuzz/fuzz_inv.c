/* fuzz_inv: the inventory walker (src/inv/inv.c, npzstream_inv.h) that --keep-going runs beside the
 * strict parser.  Input: [ctl][file]; ctl's low 4 bits choose the push size (1 << k bytes, 0: the
 * whole input at once), bit 4 where members start being checked (0: from the first byte; else
 * the strict parser's error offset, as the command line does), bit 5 small limits (max_members 3,
 * max_total_bytes 256, max_name_len 16: the walker's INV.limit and a checked member's own limit
 * with their numbers).  Oracles (fz_die otherwise):
 *   - the listing is the same whatever the push size (names, offsets, sizes, sources, errors, rules,
 *     a limit's numbers);
 *   - on an input the strict parser accepts, the walker lists exactly its members (names and
 *     local header offsets, in order), each met in both the stream and the central directory,
 *     reaches the end record, and finds no error in any member it checks;
 *   - the strict verdict is that of the parser alone (the walker only reads). */
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "npzstream_inv.h"

typedef struct strict {
    int ok;
    uint64_t err_off;
    size_t n;
    uint64_t off[64];
} strict;

static void run_strict(const uint8_t *d, size_t n, strict *s) {
    memset(s, 0, sizeof *s);
    npzs_parser *p = npzs_new(NULL, NULL);
    if (!p) abort();
    npzs_in in = {d, n, 0};
    int fin = 0;
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(p, &in, &ev);
        if (rc == NPZS_NEED_INPUT) {
            if (fin) fz_die("fuzz_inv: NEED_INPUT after finish");
            npzs_finish(p);
            fin = 1;
            continue;
        }
        if (rc < 0) break;
        if (rc == NPZS_DONE || ev.type == NPZS_EV_END) {
            s->ok = 1;
            break;
        }
        if (ev.type == NPZS_EV_MEMBER_BEGIN && s->n < 64) s->off[s->n++] = ev.offset;
    }
    s->err_off = npzs_error_offset(p);
    npzs_free(p);
}

static npzs_inv *walk(const uint8_t *d, size_t n, size_t step, uint64_t check_after, const npzs_limits *lim) {
    npzs_inv *v = npzs_inv_new(lim, NULL);
    if (!v) abort();
    npzs_inv_check_after(v, check_after);
    for (size_t i = 0; i < n;) {
        size_t k = step && n - i > step ? step : n - i;
        if (npzs_inv_push(v, d + i, k) != 0) break;
        i += k;
    }
    npzs_inv_finish(v);
    return v;
}

static void same(const npzs_inv *a, const npzs_inv *b) {
    if (npzs_inv_count(a) != npzs_inv_count(b))
        fz_die("fuzz_inv: %zu members whole, %zu split", npzs_inv_count(a), npzs_inv_count(b));
    for (size_t i = 0; i < npzs_inv_count(a); i++) {
        const npzs_inv_member *x = npzs_inv_get(a, i), *y = npzs_inv_get(b, i);
        if (x->name_len != y->name_len || memcmp(x->name, y->name, x->name_len) || x->offset != y->offset ||
            x->size != y->size || x->csize != y->csize || x->source != y->source || x->error != y->error ||
            x->error_offset != y->error_offset || x->sniff != y->sniff || x->kind != y->kind || x->rule != y->rule ||
            x->limit != y->limit || x->limit_value != y->limit_value || x->limit_needed != y->limit_needed)
            fz_die("fuzz_inv: member %zu differs with the push size", i);
        if ((x->error == NPZS_E_LIMIT && !x->limit) || (x->limit && (!x->error || x->limit_needed <= x->limit_value)))
            fz_die("fuzz_inv: member %zu: a limit error without its numbers, or numbers that say no limit", i);
    }
    const char *ra, *rb, *la, *lb;
    uint64_t oa, ob, va, vb, na, nb;
    int ea = npzs_inv_error(a, &ra, &oa);
    if (ea != npzs_inv_error(b, &rb, &ob) || oa != ob || ra != rb || npzs_inv_complete(a) != npzs_inv_complete(b))
        fz_die("fuzz_inv: the listing's end differs with the push size");
    int ha = npzs_inv_error_limit(a, &la, &va, &na);
    if (ha != npzs_inv_error_limit(b, &lb, &vb, &nb) || la != lb || va != vb || na != nb)
        fz_die("fuzz_inv: the listing's limit numbers differ with the push size");
    if (ha != (ea == NPZS_E_LIMIT) || (ha && na <= va))
        fz_die("fuzz_inv: the listing's limit error and its numbers disagree");
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 1) return 0;
    unsigned ctl = data[0];
    const uint8_t *d = data + 1;
    size_t n = size - 1;
    strict s;
    run_strict(d, n, &s);
    uint64_t after = (ctl & 16) && !s.ok ? s.err_off : 0;
    npzs_limits small;
    npzs_limits_default(&small);
    small.max_members = 3;
    small.max_total_bytes = 256;
    small.max_name_len = 16;
    const npzs_limits *lim = (ctl & 32) ? &small : NULL;
    npzs_inv *whole = walk(d, n, 0, after, lim);
    npzs_inv *split = walk(d, n, (ctl & 15) ? (size_t)1 << ((ctl & 15) - 1) : 1, after, lim);
    same(whole, split);
    strict again;
    run_strict(d, n, &again);
    if (again.ok != s.ok || again.err_off != s.err_off) fz_die("fuzz_inv: the strict verdict changed");
    if (s.ok && !lim && npzs_inv_is_zip(whole) && s.n < 64) {
        if (npzs_inv_count(whole) != s.n)
            fz_die("fuzz_inv: %zu members listed, the parser had %zu", npzs_inv_count(whole), s.n);
        if (!npzs_inv_complete(whole) || npzs_inv_error(whole, NULL, NULL))
            fz_die("fuzz_inv: an accepted archive not listed to its end");
        for (size_t i = 0; i < s.n; i++) {
            const npzs_inv_member *m = npzs_inv_get(whole, i);
            if (m->offset != s.off[i] || m->source != (NPZS_INV_LOCAL | NPZS_INV_CENTRAL))
                fz_die("fuzz_inv: member %zu at %llu, the parser's at %llu", i, (unsigned long long)m->offset,
                       (unsigned long long)s.off[i]);
            if (m->error)
                fz_die("fuzz_inv: member %zu of an accepted archive has error %s (%s)", i, npzs_error_name(m->error),
                       m->rule ? m->rule : "");
        }
    }
    npzs_inv_free(whole);
    npzs_inv_free(split);
    return 0;
}
