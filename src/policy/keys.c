/*
 * keys.c -- a member's key to its spec: the exact keys (sorted, found by binary search) and the
 * patterns (fnmatchcase over code points, filed under one literal each in an automaton made once
 * when the policy is compiled, walked once per key when it is enforced).
 */
#include <string.h>

#include "policy.h"
#include "../base/base.h"

#ifdef NPZS_INTERNAL_H
#error "the policy compiler is pure: it sees no parser (internal.h)"
#endif

/* A block of the policy's arena, zeroed (NULL out of memory). */
static void *zal(npzs_policy *p, size_t n) {
    void *b = npzs__parena_alloc(&p->a, n ? n : 1);
    if (b) memset(b, 0, n ? n : 1);
    return b;
}

/* Name i of the policy's specs (the exact keys' set, npzs__find_name). */
const char *npzs__spec_name(const void *ctx, uint32_t i, uint32_t *len) {
    const npzs__pspec *s = &((const npzs_policy *)ctx)->specs[i];
    *len = s->key_len;
    return s->key;
}

/* ---- patterns ------------------------------------------------------------------------------------
 * fnmatch (Python's fnmatchcase) over UTF-8 code points: '*', '?', '[...]' with ranges and '!'; a
 * '[' that no ']' closes is a literal.
 *
 * A member's key takes the first pattern, in the policy's order, that matches it.  Trying every
 * pattern on every key costs patterns x members; instead each pattern is filed under one literal
 * it needs (a run of plain characters: the longest of its prefix, its suffix and its other runs),
 * and a key is tried only on the patterns whose literal it holds where the pattern needs it: a
 * prefix at its start, a suffix at its end, another run anywhere.  The literals are the words of
 * one Aho-Corasick automaton (each node's children sorted by byte, suffix links), which a key
 * walks once, byte by byte:
 *   - while the whole key so far is a node, that node's prefix patterns are candidates;
 *   - at each byte, the nodes on the suffix chain with "anywhere" patterns (each once a key: a
 *     node met again, and the rest of its chain, were tried at its first meeting);
 *   - at the end, the nodes on the suffix chain with suffix patterns.
 * Candidates are tried in the policy's order (each list is), those after a pattern already found
 * skipped: the first match is the one trying every pattern in turn finds.  A key costs its bytes
 * times log2(256) in the automaton, plus its candidates, each at most (key) x (pattern) steps of
 * glob_match.  Patterns without a literal character ("*", "?", "[a-z]*[0-9]") are candidates for
 * every key: the worst case left (SECURITY.md).  Keys and literals are valid UTF-8 (a name: zrec.c;
 * the policy: json.c), so a run of code points in a pattern is the same bytes in a key it matches. */

static uint32_t cp(const uint8_t *s, size_t n, size_t *i) {
    uint8_t c = s[*i];
    size_t k = c < 0x80 ? 1 : c < 0xE0 ? 2 : c < 0xF0 ? 3 : 4;
    if (*i + k > n) k = n - *i;
    uint32_t v = k == 1 ? c : k == 2 ? (c & 0x1Fu) : k == 3 ? (c & 0x0Fu) : (c & 0x07u);
    for (size_t j = 1; j < k; j++) v = v << 6 | (s[*i + j] & 0x3Fu);
    *i += k;
    return v;
}

/* One past the pattern's last ']' (0: none): a '[' is closed when a ']' follows its first member. */
static size_t bracket_end(const uint8_t *pat, size_t pn) {
    while (pn && pat[pn - 1] != ']') pn--;
    return pn;
}

/* The class at pat[*pi] ('[' included); -1 when it is not closed (a literal '['), else whether it
 * holds c, *pi past it; the bytes read are counted in *steps.  last: bracket_end's (an unclosed
 * '[' is known without reading the rest: a pattern of many would otherwise be read to its end
 * once for each).
 * Python's translate (3.10 on) deletes the empty ranges ("z-a") from the class's text before it
 * looks for a '!' first: a '!' that only empty ranges come before negates the class too, and is
 * not in it ("[b-a!]" is any character); when it begins a range, the '-' and its end are then
 * plain members ("[a-0!-z]" is "[^-z]"). */
static int in_class(const uint8_t *pat, size_t pn, size_t *pi, uint32_t c, size_t last, uint64_t *steps) {
    size_t i = *pi + 1;
    int neg = 0, hit = 0, lead = 1, empty = 0; /* lead: only empty ranges so far (empty of them) */
    if (i < pn && pat[i] == '!') {
        neg = 1;
        lead = 0;
        i++;
    }
    *steps += 1;
    if (last <= i + 1) return -1; /* no ']' after the first member */
    size_t first = i;
    while (i < pn && (pat[i] != ']' || i == first)) {
        uint32_t a = cp(pat, pn, &i), b = a;
        int range = 0;
        if (i + 1 < pn && pat[i] == '-' && pat[i + 1] != ']') {
            i++;
            b = cp(pat, pn, &i);
            range = 1;
        }
        if (lead && range && a > b) {
            empty = 1;
            continue;
        }
        int bang = lead && empty && a == '!'; /* translate's '!' first */
        lead = 0;
        if (bang) {
            neg = 1;
            if (range && (c == '-' || c == b)) hit = 1; /* "!-b": '-' and b */
            continue;
        }
        if (a <= c && c <= b) hit = 1;
    }
    *steps += i - *pi;
    if (i >= pn) return -1;
    *pi = i + 1;
    return hit != neg;
}

/* Greedy with one star remembered: at most (key) x (pattern) steps, counted in *steps.  last:
 * bracket_end's. */
static int glob_match(const uint8_t *pat, size_t pn, size_t last, const uint8_t *s, size_t sn, uint64_t *steps) {
    size_t pi = 0, si = 0, star_p = SIZE_MAX, star_s = 0;
    while (si < sn) {
        (*steps)++;
        if (pi < pn && pat[pi] == '*') {
            star_p = ++pi;
            star_s = si;
            continue;
        }
        if (pi < pn) {
            size_t si2 = si, pi2 = pi;
            uint32_t c = cp(s, sn, &si2);
            int ok;
            if (pat[pi] == '?') {
                pi2++;
                ok = 1;
            } else if (pat[pi] == '[' && (ok = in_class(pat, pn, &pi2, c, last, steps)) >= 0) {
            } else {
                ok = cp(pat, pn, &pi2) == c;
            }
            if (ok) {
                pi = pi2;
                si = si2;
                continue;
            }
        }
        if (star_p == SIZE_MAX) return 0;
        pi = star_p; /* the star takes one more character */
        cp(s, sn, &star_s);
        si = star_s;
    }
    while (pi < pn && pat[pi] == '*') pi++;
    return pi == pn;
}

int npzs__glob_match(const uint8_t *pat, size_t pn, const uint8_t *s, size_t sn, uint64_t *steps) {
    return glob_match(pat, pn, bracket_end(pat, pn), s, sn, steps);
}

/* ---- the index, made once (members_of) ---- */

enum { LIT_NONE, LIT_START, LIT_END, LIT_ANY }; /* where a pattern's literal is in a key it matches */
typedef struct plit {
    const char *s;
    uint32_t len, glob;
    uint8_t kind;
} plit;

static const char *lit_name(const void *item, uint32_t *len) {
    const plit *l = item;
    *len = l->len;
    return l->s;
}

/* A pattern's shape: the code points of a key it matches (g), and the literal it is filed under
 * (l->kind LIT_NONE: it has none).  The same reading of the pattern as glob_match's. */
static void pattern_shape(const uint8_t *pat, size_t pn, npzs__pglob *g, plit *l, uint64_t *steps) {
    size_t last = bracket_end(pat, pn), i = 0, run = 0; /* run: where the current run of literals began */
    uint32_t chars = 0;
    int star = 0;
    l->kind = LIT_NONE;
    l->len = 0;
    for (;;) {
        size_t j = i;
        if (i < pn && pat[i] != '*' && pat[i] != '?' && (pat[i] != '[' || in_class(pat, pn, &j, 0, last, steps) < 0)) {
            cp(pat, pn, &i); /* a literal character */
            chars++;
            continue;
        }
        if (i > run) { /* a run ends: the longest one, at equal lengths a prefix, then a suffix */
            uint8_t kind = run == 0 ? LIT_START : i == pn ? LIT_END : LIT_ANY;
            if (i - run > l->len || (i - run == l->len && kind < l->kind)) {
                l->s = (const char *)pat + run;
                l->len = (uint32_t)(i - run);
                l->kind = kind;
            }
        }
        if (i == pn) break;
        if (pat[i] == '*') {
            star = 1;
            i++;
        } else {
            chars++;
            i = pat[i] == '?' ? i + 1 : j;
        }
        run = i;
    }
    g->min = chars;
    g->max = star ? UINT32_MAX : chars;
    g->last = (uint32_t)last;
}

/* The child of node q by byte b (0: none). */
static uint32_t child(const npzs_policy *p, uint32_t q, uint8_t b) {
    uint32_t lo = p->nodes[q].kid, hi = lo + p->nodes[q].nkid;
    while (lo < hi) {
        uint32_t mid = lo + (hi - lo) / 2;
        uint8_t m = p->nodes[mid].byte;
        if (m == b) return mid;
        if (m < b) lo = mid + 1;
        else hi = mid;
    }
    return 0;
}

/* The automaton of the literals of e[0 .. n) (sorted by bytes; equal ones in the policy's order). */
static int automaton(npzs_policy *p, const npzs__sortent *e, uint32_t n) {
    size_t nodes = 1, distinct = 1; /* the root, then each literal's bytes the one before it does not share */
    for (uint32_t k = 0; k < n; k++) {
        const plit *x = e[k].item, *y = k ? e[k - 1].item : NULL;
        uint32_t same = 0;
        while (y && same < x->len && same < y->len && x->s[same] == y->s[same]) same++;
        nodes += x->len - same;
        distinct += !y || same < x->len || same < y->len;
        p->a.work += same + 1;
    }
    p->nodes = zal(p, nodes * sizeof *p->nodes);
    p->groups = zal(p, distinct * sizeof *p->groups); /* group 0: none */
    p->gids = zal(p, n * sizeof *p->gids);
    if (!p->nodes || !p->groups || !p->gids) return -1;
    npzs__pnode *N = p->nodes;
#define LIT(k) ((const plit *)e[k].item)
    /* breadth first: node q stands for the literals of e[lo .. hi), which share their first d bytes
     * (while it waits for its turn: lo in its fail, hi in its any, d in its end) */
    N[0].any = n;
    uint32_t made = 1, groups = 1, gids = 0;
    for (uint32_t q = 0; q < made; q++) {
        uint32_t lo = N[q].fail, hi = N[q].any, d = N[q].end, i = lo;
        p->a.work += hi - lo;
        while (i < hi && LIT(i)->len == d) i++; /* the literals q is: they sort first */
        if (i > lo) {
            npzs__pgroup *g = &p->groups[groups];
            N[q].group = groups++;
            g->at = gids;
            for (uint8_t kind = LIT_START; kind <= LIT_ANY; kind++)
                for (uint32_t k = lo; k < i; k++)
                    if (LIT(k)->kind == kind) p->gids[gids++] = LIT(k)->glob;
            for (uint32_t k = lo; k < i; k++) {
                g->nstart += LIT(k)->kind == LIT_START;
                g->nend += LIT(k)->kind == LIT_END;
                g->nany += LIT(k)->kind == LIT_ANY;
            }
        }
        N[q].kid = made;
        while (i < hi) {
            uint8_t b = (uint8_t)LIT(i)->s[d];
            uint32_t f = i;
            while (f < hi && (uint8_t)LIT(f)->s[d] == b) f++;
            npzs__pnode *k = &N[made++];
            k->byte = b;
            k->fail = i;
            k->any = f;
            k->end = d + 1;
            N[q].nkid++;
            i = f;
        }
    }
#undef LIT
    /* the suffix links, breadth first: a node's comes from its parent's */
    N[0].fail = N[0].any = N[0].end = 0;
    for (uint32_t q = 0; q < made; q++)
        for (uint32_t k = N[q].kid; k < N[q].kid + N[q].nkid; k++) {
            uint32_t f = 0;
            for (uint32_t s = N[q].fail; q; s = N[s].fail) {
                p->a.work++;
                if ((f = child(p, s, N[k].byte)) || !s) break;
            }
            const npzs__pgroup *g = &p->groups[N[k].group];
            N[k].fail = f;
            N[k].any = g->nany ? k : N[f].any;
            N[k].end = g->nend ? k : N[f].end;
        }
    p->nnode = made;
    p->ngroup = groups;
    return 0;
}

int npzs__keys_index(npzs_policy *p) {
    p->nglob = 0;
    for (uint32_t i = 0; i < p->nspecs; i++) p->nglob += p->specs[i].glob;
    if (!p->nglob) return 0;
    p->globs = zal(p, p->nglob * sizeof *p->globs);
    plit *l = zal(p, p->nglob * sizeof *l);
    if (!p->globs || !l) return -1;
    uint32_t n = 0;
    for (uint32_t i = 0, k = 0; i < p->nspecs; i++) {
        const npzs__pspec *s = &p->specs[i];
        if (!s->glob) continue;
        npzs__pglob *g = &p->globs[k];
        g->spec = i;
        pattern_shape((const uint8_t *)s->key, s->key_len, g, &l[n], &p->a.work);
        p->a.work += s->key_len;
        l[n].glob = k++;
        n += l[n].kind != LIT_NONE; /* the others are bare */
    }
    p->nbare = p->nglob - n;
    p->bare = zal(p, p->nbare * sizeof *p->bare);
    if (!p->bare) return -1;
    for (uint32_t k = 0, j = 0; k < p->nglob; k++) { /* the globs l[0 .. n) does not hold */
        if (j < n && l[j].glob == k) j++;
        else p->bare[k - j] = k;
    }
    if (!n) return 0;
    npzs__sortent *e = npzs__sort_room(&p->a, n);
    if (!e) return -1;
    for (uint32_t k = 0; k < n; k++) e[k].item = &l[k];
    npzs__sort_names(&p->a, e, n, lit_name);
    return automaton(p, e, n);
}

/* ---- a key's lookup ---- */

/* The patterns ids[0 .. n) (in the policy's order) tried on the key until one matches, *best its
 * index; those at *best and after are skipped.  kcp: the key's code points. */
static void try_patterns(const npzs_policy *p, const uint32_t *ids, uint32_t n, const uint8_t *key, size_t kn,
                         uint32_t kcp, uint32_t *best, npzs__pmatch *m) {
    for (uint32_t i = 0; i < n && ids[i] < *best; i++) {
        const npzs__pglob *g = &p->globs[ids[i]];
        const npzs__pspec *s = &p->specs[g->spec];
        m->tried++;
        if (kcp >= g->min && kcp <= g->max &&
            glob_match((const uint8_t *)s->key, s->key_len, g->last, key, kn, &m->glob)) {
            *best = ids[i];
            return;
        }
    }
}

/* The first pattern that matches the key (UINT32_MAX: none). */
static uint32_t first_pattern(const npzs_policy *p, const uint8_t *key, size_t n, npzs__pmatch *m) {
    uint32_t best = UINT32_MAX, kcp = 0;
    for (size_t i = 0; i < n; i++) kcp += (key[i] & 0xC0) != 0x80;
    if (p->nnode) {
        if (++m->gen == 0) { /* every 255 keys */
            memset(m->seen, 0, p->ngroup);
            m->gen = 1;
        }
        const npzs__pnode *N = p->nodes;
        const npzs__pgroup *G = p->groups;
        uint32_t q = 0;
        int whole = 1; /* q is the whole key so far */
        for (size_t i = 0; i < n; i++) {
            uint32_t t;
            while (!(t = child(p, q, key[i])) && q) {
                q = N[q].fail;
                whole = 0;
                m->steps++;
            }
            whole &= t != 0;
            q = t;
            m->steps++;
            const npzs__pgroup *h = &G[N[q].group];
            if (whole && h->nstart) try_patterns(p, p->gids + h->at, h->nstart, key, n, kcp, &best, m);
            for (uint32_t u = N[q].any; u && m->seen[N[u].group] != m->gen; u = N[N[u].fail].any) {
                const npzs__pgroup *g = &G[N[u].group];
                m->seen[N[u].group] = m->gen;
                m->steps++;
                try_patterns(p, p->gids + g->at + g->nstart + g->nend, g->nany, key, n, kcp, &best, m);
            }
        }
        for (uint32_t u = N[q].end; u; u = N[N[u].fail].end) {
            const npzs__pgroup *g = &G[N[u].group];
            m->steps++;
            try_patterns(p, p->gids + g->at + g->nstart, g->nend, key, n, kcp, &best, m);
        }
    }
    try_patterns(p, p->bare, p->nbare, key, n, kcp, &best, m);
    return best;
}

/* The spec for key: an exact key first (binary search), else the first pattern that matches. */
static const npzs__pspec *spec_for(const npzs_policy *pol, const uint8_t *key, size_t n, uint32_t *index,
                                   npzs__pmatch *m) {
    size_t at;
    if (npzs__find_name(pol->exact, pol->nexact, npzs__spec_name, pol, (const char *)key, n, &at, &m->steps)) {
        *index = pol->exact[at];
        return &pol->specs[*index];
    }
    uint32_t g = first_pattern(pol, key, n, m);
    if (g == UINT32_MAX) return NULL;
    *index = pol->globs[g].spec;
    return &pol->specs[*index];
}

const npzs__pspec *npzs__pol_spec_for(const npzs_policy *pol, const uint8_t *key, size_t n, uint32_t *index,
                                      npzs__pmatch *m) {
    return spec_for(pol, key, n, index, m);
}
