/*
 * fastinf.c -- a raw deflate decoder whose verdict and output are zlib 1.2.13's: see fastinf.h.
 *
 * The decoder reads its input at rest points: between symbols and between blocks, with fewer
 * than 8 bits held (the top bits of the last byte taken).  From a rest point it either decodes
 * a whole unit (a block header, a symbol) or, when the input ends inside the unit, stays there:
 * with more input to come the unread bytes are kept (the carry, at most CARRY_MAX) and read
 * first at the next call; at the input's last byte the unit is looked at as zlib looks at it
 * (a header goes to zlib; a symbol is refused if the bits there are already decide it, else the
 * stream is cut short), so the verdict never depends on how the input was split.
 *
 * Decoding tables: one 32-bit entry per index of `bits` bits (a sub-table behind an entry for
 * the codes longer than the root), laid out as
 *   bits  0-7   the bits the symbol takes: its code and its extra bits (a length's or a
 *               distance's); for a sub-table pointer, the root's bits
 *   bits  8-11  the code's own bits (the extra bits follow them); for a pointer, the
 *               sub-table's index bits; for a literal, the table's root bits (bits 8-15 of a
 *               literal's entry are the root bits, bits 12-15 zero)
 *   bit  12     E_BAD: a symbol zlib refuses (fixed codes: 286, 287; distances 30, 31)
 *   bit  14     E_EOB: end of block            bit  15     E_SUB: a pointer to a sub-table
 *   bits 16-31  the literal, the length's or distance's base, or the sub-table's offset; a
 *               literal's bit 31 is E_LIT
 * A length is an entry with none of the four flags.  A symbol is consumed in one shift of its
 * low byte, and its extra bits read from the bits before the shift, off the path to the next
 * lookup.  A literal's low 16 bits are BEXTR's operand for the index of the next symbol's entry
 * (from bit E_BITS, root bits long): one step of the loop's critical path, where a shift and a
 * mask are two (NEXT, in fast_codes_t).
 */
#include <string.h>

#include "fastinf.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define FI_BEXTR 1
#else
#define FI_BEXTR 0
#endif

#define WSIZE 32768u /* deflate's window, zlib's for -15 window bits */
#define WMASK (WSIZE - 1u)
#define LL_ROOT 11u /* root bits of the literal/length table */
#define D_ROOT 8u   /* and of the distance table */
#define LL_ENOUGH \
    2340u             /* entries a complete code of up to 286 symbols, lengths <= 15,
                                    needs with an 11-bit root (zlib's examples/enough.c) */
#define D_ENOUGH 400u /* 30 symbols, 8-bit root */
#define CL_ROOT 7u
/* The longest unit read from a rest point: a dynamic header, 3 + 14 + 19 * 3 bits and at most 7
 * bits for each of 316 code lengths (a repeat code costs less per length), 2286 bits, plus the 7
 * bits of the byte it starts in: 287 bytes.  A symbol is 48 bits at most. */
#define CARRY_MAX 320u
#define SCRATCH (2u * CARRY_MAX)
/* The fast loop runs while FAST_IN input bytes (two 8-byte loads, each advancing at most 7) and
 * FAST_OUT bytes of room remain (a step writes 4 literals, or 2 and a match of 258 written 8
 * bytes at a time, up to 13 bytes past its end). */
#define FAST_IN 16u
#define FAST_OUT 280u

#define E_BAD 0x1000u
#define E_LIT 0x80000000u
#define E_EOB 0x4000u
#define E_SUB 0x8000u
#define E_BITS(e) ((e)&0xFFu)
#define E_CODE(e) (((e) >> 8) & 0xFu)
#define E_VAL(e) ((e) >> 16)

enum { M_HEADER = 1, M_STORED, M_CODES, M_ZLIB, M_DONE, M_BAD, M_TRUNC };

struct npzs__fastinf {
    int mode;      /* M_* */
    int last;      /* the block being read is the stream's last */
    uint64_t bits; /* at rest: nbits (< 8) bits, zeros above */
    unsigned nbits;
    uint32_t stored;              /* M_STORED: bytes of the block still to copy */
    uint32_t copy_len, copy_dist; /* M_CODES: a match not copied whole (the output was full) */
    uint64_t total;               /* output bytes of the stream before this call */
    size_t hist_avail;            /* during a call: min(total, WSIZE) at its start */
    uint32_t wpos;                /* hist[]: the last WSIZE bytes of output, a ring; next write */
    const uint32_t *ll, *dt;      /* the block's tables (dyn_* or fix_*) and their root bits */
    unsigned ll_bits, d_bits;
    int fixed_built;          /* fix_* hold the fixed code's tables (kept across streams) */
    uint8_t zlast;            /* M_ZLIB: the last byte zlib took (its unused bits are its top) */
    uint64_t blocks, zblocks; /* blocks begun; blocks handed to zlib */
    unsigned every;           /* tests: every n-th block to zlib */
    int bmi;                  /* the CPU has BMI1 (BEXTR): fast_codes_bmi */
    size_t carry;             /* scratch[0, carry): input taken, not read yet */
    uint8_t scratch[SCRATCH];
    uint8_t hist[WSIZE];
    uint32_t dyn_ll[LL_ENOUGH], dyn_dt[D_ENOUGH];
    uint32_t fix_ll[1u << 9], fix_dt[1u << 5];
};

/* 1 when fast_codes_bmi may run here (the CPU has BMI1). */
static int cpu_bmi(void) {
#if FI_BEXTR
    return __builtin_cpu_supports("bmi") ? 1 : 0;
#else
    return 0;
#endif
}

size_t npzs__fi_size(void) { return sizeof(npzs__fastinf); }

void npzs__fi_init(npzs__fastinf *s) {
    s->fixed_built = 0;
    s->every = 0;
    s->bmi = cpu_bmi();
    npzs__fi_reset(s);
}

void npzs__fi_reset(npzs__fastinf *s) {
    s->mode = M_HEADER;
    s->last = 0;
    s->bits = 0;
    s->nbits = 0;
    s->stored = 0;
    s->copy_len = s->copy_dist = 0;
    s->total = 0;
    s->wpos = 0;
    s->carry = 0;
    s->blocks = s->zblocks = 0;
}

#ifdef NPZS_TESTING
uint64_t npzs__fi_zlib_blocks(const npzs__fastinf *s) { return s->zblocks; }
void npzs__fi_zlib_every(npzs__fastinf *s, unsigned n) { s->every = n; }
void npzs__fi_portable(npzs__fastinf *s, int on) { s->bmi = on ? 0 : cpu_bmi(); }
#endif

static inline uint64_t mask64(unsigned n) { return ((uint64_t)1 << n) - 1u; }

#if FI_BEXTR
/* BMI1's BEXTR: ctl's bits 0-7 the first bit, bits 8-15 the count (only where the CPU has it). */
static inline uint64_t bextr(uint64_t v, uint64_t ctl) {
    uint64_t r;
    __asm__("bextr %2, %1, %0" : "=r"(r) : "r"(v), "r"(ctl) : "cc");
    return r;
}
#else
static inline uint64_t bextr(uint64_t v, uint64_t ctl) {
    return v >> (ctl & 0xFFu) & mask64((unsigned)(ctl >> 8 & 0xFFu));
}
#endif

/* 8 input bytes as a little-endian word (the bit order of deflate). */
static inline uint64_t le64(const uint8_t *p) {
    uint64_t v;
    memcpy(&v, p, sizeof v);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

/* ---- the tables ---------------------------------------------------------------------------- */

/* RFC 1951, 3.2.5: lengths 257..285 and distances 0..29, base and extra bits. */
static const uint16_t len_base[29] = {3,  4,  5,  6,  7,  8,  9,  10, 11,  13,  15,  17,  19,  23, 27,
                                      31, 35, 43, 51, 59, 67, 83, 99, 115, 131, 163, 195, 227, 258};
static const uint8_t len_extra[29] = {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2,
                                      2, 3, 3, 3, 3, 4, 4, 4, 4, 5, 5, 5, 5, 0};
static const uint16_t dist_base[30] = {1,    2,    3,    4,    5,    7,    9,    13,    17,    25,
                                       33,   49,   65,   97,   129,  193,  257,  385,   513,   769,
                                       1025, 1537, 2049, 3073, 4097, 6145, 8193, 12289, 16385, 24577};
static const uint8_t dist_extra[30] = {0, 0, 0, 0, 1, 1, 2, 2,  3,  3,  4,  4,  5,  5,  6,
                                       6, 7, 7, 8, 8, 9, 9, 10, 10, 11, 11, 12, 12, 13, 13};

/* A symbol's entry but for its code's length, with its extra bits in the low byte (build()
 * adds the code's length).  Symbols 286 and 287 (fixed code only: a dynamic header has at most
 * 286) and distances 30 and 31 are refused as zlib refuses them. */
static uint32_t ll_entry(unsigned sym) {
    if (sym < 256) return E_LIT | (uint32_t)sym << 16;
    if (sym == 256) return E_EOB;
    if (sym < 286) return (uint32_t)len_base[sym - 257] << 16 | len_extra[sym - 257];
    return E_BAD;
}
static uint32_t dt_entry(unsigned sym) {
    if (sym < 30) return (uint32_t)dist_base[sym] << 16 | dist_extra[sym];
    return E_BAD;
}

/* 1 when the code lengths lens[0, n) (each at most maxlen) make a complete prefix code: every
 * string of bits starts with exactly one code.  zlib accepts a few incomplete sets (none at all;
 * a single code of one bit); those are left to zlib, like everything not complete. */
static int complete(const uint8_t *lens, unsigned n, unsigned maxlen) {
    unsigned count[16] = {0};
    for (unsigned i = 0; i < n; i++) count[lens[i]]++;
    int32_t left = 1;
    for (unsigned l = 1; l <= maxlen; l++) {
        left = 2 * left - (int32_t)count[l];
        if (left < 0) return 0; /* over-subscribed */
    }
    return left == 0;
}

/* The code after rev, of len bits, in the canonical order, its bits reversed (deflate sends a
 * code's first bit first): add 1 at the top and carry downwards.  A longer next code keeps the
 * value: the bits it adds are zeros at the top. */
static unsigned next_rev(unsigned rev, unsigned len) {
    unsigned incr = 1u << (len - 1u);
    while (rev & incr) incr >>= 1;
    return incr ? (rev & (incr - 1u)) + incr : 0u;
}

/* An entry as build() stores it: a literal's second byte the root bits, for NEXT(); any other
 * symbol's the code's own bits, for its extra bits. */
static uint32_t placed(uint32_t e, unsigned len, unsigned root) {
    if (e & E_LIT) return (e & ~0xFFFFu) | root << 8 | len;
    return (e & ~0xFFFu) | len << 8 | (len + (e & 0xFFu));
}

/* Fill tab (cap entries) for the complete code lens[0, n): a root of min(root, longest) bits, a
 * sub-table behind each root entry whose codes are longer, as small as its codes allow (zlib's
 * inftrees.c sizes them so: enough.c's bounds hold).  entry(sym) gives each symbol's entry.
 * The root is filled a code length at a time: the entries of the codes shorter than len, which
 * fill tab[0, 2^(len-1)) (its index the code's bits and any after them), are copied once to
 * make tab[0, 2^len), and each code of len bits is stored at its bits.  Returns the root bits,
 * or 0 when cap entries would not do (never for a complete code). */
static unsigned build(uint32_t *tab, unsigned cap, const uint8_t *lens, unsigned n, unsigned root,
                      uint32_t (*entry)(unsigned)) {
    unsigned count[16] = {0}, offs[16], left[16];
    uint16_t sorted[288];
    for (unsigned i = 0; i < n; i++) count[lens[i]]++;
    unsigned maxlen = 15, minlen = 1;
    while (maxlen > 1 && !count[maxlen]) maxlen--;
    while (minlen < maxlen && !count[minlen]) minlen++;
    if (root > maxlen) root = maxlen;
    if (minlen > root || (1u << root) > cap) return 0; /* not with a complete code */
    offs[1] = 0;
    for (unsigned l = 1; l < 15; l++) offs[l + 1] = offs[l] + count[l];
    for (unsigned i = 0; i < n; i++)
        if (lens[i]) sorted[offs[lens[i]]++] = (uint16_t)i;
    unsigned rev = 0, k = 0, size = 1u << minlen;
    for (unsigned len = minlen; len <= root; len++) {
        if (len > minlen) {
            memcpy(tab + size, tab, size * sizeof *tab);
            size <<= 1;
        }
        for (unsigned c = 0; c < count[len]; c++, k++) {
            tab[rev] = placed(entry(sorted[k]), len, root);
            rev = next_rev(rev, len);
        }
    }
    memcpy(left, count, sizeof left);
    unsigned used = 1u << root, low = ~0u, sub = 0, sub_bits = 0;
    for (unsigned len = root + 1; len <= maxlen; len++) {
        for (unsigned c = 0; c < count[len]; c++, k++) {
            uint32_t e = placed(entry(sorted[k]), len, root);
            if ((rev & ((1u << root) - 1u)) != low) { /* a new sub-table for this root prefix */
                low = rev & ((1u << root) - 1u);
                sub_bits = len - root;
                int32_t room = 1 << sub_bits;
                while (sub_bits + root < maxlen) {
                    room -= (int32_t)left[sub_bits + root];
                    if (room <= 0) break;
                    sub_bits++;
                    room <<= 1;
                }
                sub = used;
                if (used + (1u << sub_bits) > cap) return 0;
                used += 1u << sub_bits;
                tab[low] = E_SUB | (uint32_t)sub << 16 | (uint32_t)sub_bits << 8 | root;
            }
            for (unsigned i = rev >> root; i < (1u << sub_bits); i += 1u << (len - root)) tab[sub + i] = e;
            left[len]--;
            rev = next_rev(rev, len);
        }
    }
    return root;
}

static void fixed_tables(npzs__fastinf *s) {
    if (!s->fixed_built) {
        uint8_t l[288];
        memset(l, 8, 144);
        memset(l + 144, 9, 112);
        memset(l + 256, 7, 24);
        memset(l + 280, 8, 8);
        build(s->fix_ll, 1u << 9, l, 288, 9, ll_entry);
        memset(l, 5, 32);
        build(s->fix_dt, 1u << 5, l, 32, 5, dt_entry);
        s->fixed_built = 1;
    }
    s->ll = s->fix_ll;
    s->ll_bits = 9;
    s->dt = s->fix_dt;
    s->d_bits = 5;
}

/* ---- input ---------------------------------------------------------------------------------- */

typedef struct src {
    const uint8_t *p;
    size_t n, pos;
} src;

/* A bit reader that takes bytes one at a time, as they are needed (zlib's slow path). */
typedef struct br {
    uint64_t b;
    unsigned n;
    const uint8_t *p;
    size_t len, pos;
} br;

static int need(br *r, unsigned k) {
    while (r->n < k) {
        if (r->pos == r->len) return 0;
        r->b |= (uint64_t)r->p[r->pos++] << r->n;
        r->n += 8;
    }
    return 1;
}
static unsigned peek(const br *r, unsigned k) { return (unsigned)(r->b & mask64(k)); }
static void drop(br *r, unsigned k) {
    r->b >>= k;
    r->n -= k;
}

/* A symbol of a table whose root is the longest code (no sub-tables): -1 when the input ends. */
static int small_sym(br *r, const uint32_t *tab, unsigned bits) {
    for (;;) {
        uint32_t e = tab[peek(r, bits)];
        if (E_BITS(e) <= r->n) {
            drop(r, E_BITS(e));
            return (int)E_VAL(e);
        }
        if (r->pos == r->len) return -1;
        r->b |= (uint64_t)r->p[r->pos++] << r->n;
        r->n += 8;
    }
}

/* ---- block headers ---------------------------------------------------------------------------- */

enum { H_OK, H_ZLIB, H_NEED };
static const uint8_t cl_order[19] = {16, 17, 18, 0, 8, 7, 9, 6, 10, 5, 11, 4, 12, 3, 13, 2, 14, 1, 15};

static uint32_t cl_entry(unsigned sym) { return (uint32_t)sym << 16; }

/* Read the block header at r (a rest point): H_OK with the block's tables, or stored length, in
 * s (zlib takes it as it is); H_ZLIB: a header zlib must judge (anything not plainly valid);
 * H_NEED: the input ends inside it. */
static int header(npzs__fastinf *s, br *r) {
    if (!need(r, 3)) return H_NEED;
    unsigned v = peek(r, 3);
    drop(r, 3);
    s->last = (int)(v & 1u);
    switch (v >> 1) {
    case 0:
        drop(r, r->n & 7u);
        if (!need(r, 32)) return H_NEED;
        v = peek(r, 32);
        if ((v & 0xFFFFu) != (~v >> 16 & 0xFFFFu)) return H_ZLIB;
        drop(r, 32);
        s->stored = v & 0xFFFFu;
        s->mode = M_STORED;
        return H_OK;
    case 1:
        fixed_tables(s);
        s->mode = M_CODES;
        return H_OK;
    case 3: return H_ZLIB;
    default: break;
    }
    if (!need(r, 14)) return H_NEED;
    unsigned nlen = peek(r, 5) + 257, ndist = (peek(r, 10) >> 5) + 1, ncode = (peek(r, 14) >> 10) + 4;
    drop(r, 14);
    if (nlen > 286 || ndist > 30) return H_ZLIB;
    uint8_t cl[19] = {0};
    for (unsigned i = 0; i < ncode; i++) {
        if (!need(r, 3)) return H_NEED;
        cl[cl_order[i]] = (uint8_t)peek(r, 3);
        drop(r, 3);
    }
    if (!complete(cl, 19, 7)) return H_ZLIB;
    uint32_t cl_tab[1u << CL_ROOT];
    unsigned cl_bits = build(cl_tab, 1u << CL_ROOT, cl, 19, CL_ROOT, cl_entry);
    uint8_t lens[286 + 30];
    unsigned have = 0, total = nlen + ndist;
    while (have < total) {
        int sym = small_sym(r, cl_tab, cl_bits);
        if (sym < 0) return H_NEED;
        if (sym < 16) {
            lens[have++] = (uint8_t)sym;
            continue;
        }
        unsigned extra = sym == 16 ? 2u : sym == 17 ? 3u : 7u, base = sym == 18 ? 11u : 3u;
        if (sym == 16 && have == 0) return H_ZLIB; /* a repeat of no length */
        if (!need(r, extra)) return H_NEED;
        unsigned n = base + peek(r, extra);
        drop(r, extra);
        if (have + n > total) return H_ZLIB; /* past the lengths */
        uint8_t l = sym == 16 ? lens[have - 1] : 0;
        memset(lens + have, l, n);
        have += n;
    }
    if (lens[256] == 0) return H_ZLIB; /* no end-of-block code */
    if (!complete(lens, nlen, 15) || !complete(lens + nlen, ndist, 15)) return H_ZLIB;
    s->ll_bits = build(s->dyn_ll, LL_ENOUGH, lens, nlen, LL_ROOT, ll_entry);
    s->d_bits = build(s->dyn_dt, D_ENOUGH, lens + nlen, ndist, D_ROOT, dt_entry);
    if (!s->ll_bits || !s->d_bits) return H_ZLIB; /* cannot happen: complete codes fit */
    s->ll = s->dyn_ll;
    s->dt = s->dyn_dt;
    s->mode = M_CODES;
    return H_OK;
}

/* ---- output ----------------------------------------------------------------------------------- */

/* The call's output so far is base[0, o); before it, the ring (hist_avail bytes of it). */
static void hist_add(npzs__fastinf *s, const uint8_t *p, size_t n) {
    if (n >= WSIZE) {
        memcpy(s->hist, p + n - WSIZE, WSIZE);
        s->wpos = 0;
        return;
    }
    size_t a = WSIZE - s->wpos;
    if (a > n) a = n;
    memcpy(s->hist + s->wpos, p, a);
    memcpy(s->hist, p + a, n - a);
    s->wpos = (uint32_t)((s->wpos + n) & WMASK);
}

/* Copy n bytes of a match dist back to base[o, o + n): the bytes before the call's output from
 * the ring, the rest from the output (byte by byte: the copy may overlap itself). */
static void copy_match(const npzs__fastinf *s, uint8_t *base, size_t o, size_t dist, size_t n) {
    size_t i = 0;
    if (dist > o) {
        size_t k = dist - o, at = (s->wpos - k) & WMASK;
        for (; i < n && i < k; i++, at = (at + 1) & WMASK) base[o + i] = s->hist[at];
    }
    for (; i < n; i++) base[o + i] = base[o + i - dist]; /* o + i >= dist here */
}

/* ---- symbols ---------------------------------------------------------------------------------- */

enum { C_MORE, C_EOB, C_BAD, C_NEED };

/* The block's symbols while FAST_IN input bytes and FAST_OUT bytes of room remain (the caller
 * checked both once).  The bit buffer is refilled 8 bytes at a time (its bits above the count are
 * the next input bits); at the end whole bytes are given back, to a rest point.  C_MORE: a
 * margin was reached.  bmi: a literal's next index by BEXTR (fast_codes_bmi, where the CPU has
 * BMI1), else by a shift and a mask (fast_codes_plain); the bytes and decisions are the same. */
static inline __attribute__((always_inline)) int fast_codes_t(npzs__fastinf *s, src *in, uint8_t *base, size_t *opos,
                                                              size_t olen, const int bmi) {
    const uint8_t *ip = in->p + in->pos, *ilim = in->p + in->n - FAST_IN;
    uint8_t *op = base + *opos, *olim = base + olen - FAST_OUT;
    uint64_t bb = s->bits, saved;
    unsigned bc = s->nbits;
    const uint32_t *ll = s->ll, *dt = s->dt;
    const uint64_t llm = mask64(s->ll_bits), dm = mask64(s->d_bits);
    const size_t histav = s->hist_avail;
    int rc = C_MORE;
    /* After a refill the 64 bits of bb are all input bits (bc of them counted, the next ones
     * above), so an entry looked up after at most 53 bits were used is right: the next symbol's
     * entry is looked up before the current one's bytes are written, and a refill (which keeps
     * the low bits) comes before it is used. */
#define REFILL() \
    do { \
        bb |= le64(ip) << bc; \
        ip += (63u - bc) >> 3; \
        bc |= 56u; \
    } while (0)
#define CONSUME(e) \
    do { \
        bb >>= E_BITS(e); \
        bc -= E_BITS(e); \
    } while (0)
#define NEXT(e) ((size_t)(bmi ? bextr(bb, e) : (bb >> E_BITS(e)) & llm)) /* < 2^15 */
#define SUB(tab, e) tab[E_VAL(e) + ((bb >> E_BITS(e)) & mask64(E_CODE(e)))]
#define EXTRA(e) ((size_t)((saved & mask64(E_BITS(e))) >> E_CODE(e)))
    REFILL(); /* 56 bits or more: three literals, or a length and its distance (48) */
    uint32_t e = ll[bb & llm];
    for (;;) {
        if (e & E_LIT) {
            uint8_t lit = (uint8_t)E_VAL(e);
            size_t i = NEXT(e);
            CONSUME(e);
            e = ll[i];
            *op++ = lit;
            if (e & E_LIT) {
                lit = (uint8_t)E_VAL(e);
                i = NEXT(e);
                CONSUME(e);
                e = ll[i];
                *op++ = lit;
                if (e & E_LIT) {
                    lit = (uint8_t)E_VAL(e);
                    i = NEXT(e);
                    CONSUME(e);
                    e = ll[i];
                    *op++ = lit;
                    if ((e & E_LIT) && bc >= 25u) { /* a 4th when 15 + 10 bits are left */
                        lit = (uint8_t)E_VAL(e);
                        i = NEXT(e);
                        CONSUME(e);
                        e = ll[i];
                        *op++ = lit;
                    }
                    goto next;
                }
            }
            REFILL();
        }
        if (e & (E_SUB | E_EOB | E_BAD)) {
            if (e & E_SUB) e = SUB(ll, e);
            if (e & E_LIT) {
                CONSUME(e);
                *op++ = (uint8_t)E_VAL(e);
                e = ll[bb & llm];
                goto next;
            }
            if (e & (E_EOB | E_BAD)) {
                CONSUME(e);
                rc = e & E_EOB ? C_EOB : C_BAD;
                break;
            }
        }
        saved = bb;
        CONSUME(e);
        size_t len = E_VAL(e) + EXTRA(e);
        e = dt[bb & dm];
        if (e & (E_SUB | E_BAD)) {
            if (e & E_SUB) e = SUB(dt, e);
            if (e & E_BAD) {
                rc = C_BAD;
                break;
            }
        }
        saved = bb;
        CONSUME(e);
        size_t dist = E_VAL(e) + EXTRA(e);
        e = ll[bb & llm];
        size_t done = (size_t)(op - base);
        if (dist > done) {
            if (dist - done > histav) { /* before the stream's first byte */
                rc = C_BAD;
                break;
            }
            copy_match(s, base, done, dist, len);
            op += len;
            goto next;
        }
        const uint8_t *from = op - dist;
        uint8_t *end = op + len;
        if (dist >= 8) { /* 8 bytes at a time, up to 13 past the end (room is left for them) */
            memcpy(op, from, 8);
            memcpy(op + 8, from + 8, 8);
            if (len > 16) {
                op += 16;
                from += 16;
                do {
                    memcpy(op, from, 8);
                    op += 8;
                    from += 8;
                } while (op < end);
            }
        } else if (dist == 1) {
            memset(op, op[-1], len);
        } else {
            while (op < end) *op++ = *from++;
        }
        op = end;
    next:
        if (ip > ilim || op > olim) break;
        REFILL();
    }
#undef REFILL
#undef CONSUME
#undef NEXT
#undef SUB
#undef EXTRA
    ip -= bc >> 3; /* whole bytes read ahead go back */
    bc &= 7u;
    s->bits = bb & mask64(bc);
    s->nbits = bc;
    in->pos = (size_t)(ip - in->p);
    *opos = (size_t)(op - base);
    return rc;
}

static int fast_codes_plain(npzs__fastinf *s, src *in, uint8_t *base, size_t *opos, size_t olen) {
    return fast_codes_t(s, in, base, opos, olen, 0);
}
#if FI_BEXTR
static int fast_codes_bmi(npzs__fastinf *s, src *in, uint8_t *base, size_t *opos, size_t olen) {
    return fast_codes_t(s, in, base, opos, olen, 1);
}
#endif

/* One symbol from a rest point with the input there is, its parts in zlib's order, each looked
 * at once its bits are there (a code's lookup in the bits there are, zeros above, finds a code
 * longer than them unless the code is whole; a refused symbol has no extra bits).  Needs room
 * for one byte.  C_MORE: a literal was written, or a match is left in copy_len / copy_dist;
 * C_NEED: the input ends inside the symbol before anything decides it (nothing is taken);
 * C_BAD: refused. */
static int slow_symbol(npzs__fastinf *s, src *in, uint8_t *base, size_t *opos) {
    uint64_t bb = s->bits, saved;
    unsigned bc = s->nbits;
    size_t pos = in->pos;
    while (bc <= 48 && pos < in->n) {
        bb |= (uint64_t)in->p[pos++] << bc;
        bc += 8;
    }
    uint32_t e = s->ll[bb & mask64(s->ll_bits)];
    if (e & E_SUB) {
        if (E_BITS(e) > bc) return C_NEED;
        e = s->ll[E_VAL(e) + ((bb >> E_BITS(e)) & mask64(E_CODE(e)))];
    }
    if (E_BITS(e) > bc) return C_NEED;
    if (e & E_BAD) return C_BAD;
    int rc = C_MORE;
    saved = bb;
    bb >>= E_BITS(e);
    bc -= E_BITS(e);
    if (e & E_LIT) {
        base[(*opos)++] = (uint8_t)E_VAL(e);
    } else if (e & E_EOB) {
        rc = C_EOB;
    } else {
        uint32_t len = E_VAL(e) + (uint32_t)((saved & mask64(E_BITS(e))) >> E_CODE(e));
        e = s->dt[bb & mask64(s->d_bits)];
        if (e & E_SUB) {
            if (E_BITS(e) > bc) return C_NEED;
            e = s->dt[E_VAL(e) + ((bb >> E_BITS(e)) & mask64(E_CODE(e)))];
        }
        if (E_BITS(e) > bc) return C_NEED;
        if (e & E_BAD) return C_BAD;
        saved = bb;
        bb >>= E_BITS(e);
        bc -= E_BITS(e);
        uint32_t dist = E_VAL(e) + (uint32_t)((saved & mask64(E_BITS(e))) >> E_CODE(e));
        if (dist > *opos + s->hist_avail) return C_BAD; /* before the stream's first byte */
        s->copy_len = len;
        s->copy_dist = dist;
    }
    pos -= bc >> 3;
    bc &= 7u;
    s->bits = bb & mask64(bc);
    s->nbits = bc;
    in->pos = pos;
    return rc;
}

/* ---- zlib's blocks ------------------------------------------------------------------------------ */

/* Hand the block starting at the rest point to zlib: its window the last WSIZE bytes of output
 * (inflateSetDictionary adds to what it was given before: the ring's part, then the call's),
 * the bits held primed.  0, or -1 when zlib refuses (not with a valid stream). */
static int hand_over(npzs__fastinf *s, z_stream *zs, const uint8_t *base, size_t o) {
    if (inflateReset(zs) != Z_OK) return -1;
    uint64_t all = s->total + o;
    size_t want = all < WSIZE ? (size_t)all : WSIZE;
    size_t from_out = o < want ? o : want, from_ring = want - from_out;
    if (from_ring) {
        size_t at = (s->wpos - from_ring) & WMASK, first = WSIZE - at < from_ring ? WSIZE - at : from_ring;
        if (inflateSetDictionary(zs, s->hist + at, (uInt)first) != Z_OK) return -1;
        if (first < from_ring && inflateSetDictionary(zs, s->hist, (uInt)(from_ring - first)) != Z_OK) return -1;
    }
    if (from_out && inflateSetDictionary(zs, base + o - from_out, (uInt)from_out) != Z_OK) return -1;
    if (s->nbits && inflatePrime(zs, (int)s->nbits, (int)s->bits) != Z_OK) return -1;
    s->zlast = (uint8_t)(s->bits << (8u - s->nbits));
    s->mode = M_ZLIB;
    s->zblocks++;
    return 0;
}

/* ---- the decoder -------------------------------------------------------------------------------- */

enum { R_OUT, R_NEED, R_SWITCH, R_END, R_BAD, R_TRUNC, R_NOMEM };

static int block_end(npzs__fastinf *s) {
    if (s->last) {
        s->mode = M_DONE;
        return R_END;
    }
    s->mode = M_HEADER;
    return -1;
}

/* Decode from in (at a rest point) into base[*o, olen) until the output is full (R_OUT), the
 * input ends at a rest point with more to come (R_NEED) or at its last byte (R_TRUNC: cut
 * short), a rest point at or past stop_at is reached (R_SWITCH: the carry was read), the stream
 * ends (R_END) or is refused (R_BAD). */
static int decode(npzs__fastinf *s, z_stream *zs, src *in, uint8_t *base, size_t *o, size_t olen, int last,
                  size_t stop_at) {
    for (;;) {
        if (in->pos >= stop_at) return R_SWITCH;
        switch (s->mode) {
        case M_HEADER: {
            br r = {s->bits, s->nbits, in->p, in->n, in->pos};
            int h = header(s, &r);
            if (h == H_NEED && !last) return R_NEED; /* at the block's start, for more input */
            if (h != H_NEED) s->blocks++;
            if (h == H_OK && s->every && s->blocks % s->every == 0) h = H_ZLIB;
            if (h == H_OK) {
                r.pos -= r.n >> 3;
                r.n &= 7u;
                s->bits = r.b & mask64(r.n);
                s->nbits = r.n;
                in->pos = r.pos;
                break;
            }
            if (hand_over(s, zs, base, *o) < 0) {
                s->mode = M_BAD;
                return R_BAD;
            }
            break;
        }
        case M_STORED: {
            if (!s->stored) {
                int rc = block_end(s);
                if (rc >= 0) return rc;
                break;
            }
            size_t room = olen - *o, avail = in->n - in->pos;
            if (!room) return R_OUT;
            if (!avail) {
                if (!last) return R_NEED;
                s->mode = M_TRUNC;
                return R_TRUNC;
            }
            size_t k = s->stored;
            if (k > avail) k = avail;
            if (k > room) k = room;
            memcpy(base + *o, in->p + in->pos, k);
            *o += k;
            in->pos += k;
            s->stored -= (uint32_t)k;
            break;
        }
        case M_CODES: {
            if (s->copy_len) {
                size_t room = olen - *o, k = s->copy_len < room ? s->copy_len : room;
                copy_match(s, base, *o, s->copy_dist, k);
                *o += k;
                s->copy_len -= (uint32_t)k;
                if (s->copy_len) return R_OUT;
            }
            if (*o == olen) return R_OUT;
            int c;
            if (stop_at == SIZE_MAX && in->n - in->pos >= FAST_IN && olen - *o >= FAST_OUT) {
#if FI_BEXTR
                c = s->bmi ? fast_codes_bmi(s, in, base, o, olen) : fast_codes_plain(s, in, base, o, olen);
#else
                c = fast_codes_plain(s, in, base, o, olen);
#endif
            } else {
                c = slow_symbol(s, in, base, o);
            }
            if (c == C_EOB) {
                int rc = block_end(s);
                if (rc >= 0) return rc;
            } else if (c == C_BAD) {
                s->mode = M_BAD;
                return R_BAD;
            } else if (c == C_NEED) {
                if (!last) return R_NEED;
                s->mode = M_TRUNC;
                return R_TRUNC;
            }
            break;
        }
        case M_ZLIB: {
            size_t avail = in->n - in->pos, room = olen - *o;
            uInt ai = (uInt)(avail > 0x40000000u ? 0x40000000u : avail);
            uInt ao = (uInt)(room > 0x40000000u ? 0x40000000u : room);
            zs->next_in = (Bytef *)(uintptr_t)(in->p + in->pos);
            zs->avail_in = ai;
            zs->next_out = base + *o;
            zs->avail_out = ao;
            int zr = inflate(zs, Z_BLOCK);
            size_t tk = ai - zs->avail_in, mk = ao - zs->avail_out;
            in->pos += tk;
            *o += mk;
            if (tk) s->zlast = in->p[in->pos - 1];
            if (zr == Z_MEM_ERROR) return R_NOMEM;
            if (zr == Z_STREAM_END) {
                s->mode = M_DONE;
                return R_END;
            }
            if (zr != Z_OK && zr != Z_BUF_ERROR) {
                s->mode = M_BAD;
                return R_BAD;
            }
            if (zs->data_type & 128) { /* at a block's end: the last one, or the decoder's again */
                if (zs->data_type & 64) {
                    s->mode = M_DONE;
                    return R_END;
                }
                s->nbits = (unsigned)zs->data_type & 7u;
                s->bits = s->nbits ? (uint64_t)(s->zlast >> (8u - s->nbits)) : 0;
                s->mode = M_HEADER;
                break;
            }
            if (!tk && !mk) {
                if (*o == olen) return R_OUT;
                if (!last) return R_NEED;
                s->mode = M_TRUNC;
                return R_TRUNC;
            }
            break;
        }
        case M_DONE: return R_END;
        case M_TRUNC: return R_TRUNC;
        default: return R_BAD;
        }
    }
}

int npzs__fi_run(npzs__fastinf *s, z_stream *zs, const uint8_t *in, size_t in_len, int last, uint8_t *out,
                 size_t out_len, size_t *took, size_t *made, size_t *back) {
    static const uint8_t none[1] = {0};
    if (!in_len) in = none; /* never an offset from NULL */
    *took = *back = 0;
    s->hist_avail = s->total < WSIZE ? (size_t)s->total : WSIZE;
    size_t o = 0, skip = 0; /* skip: input bytes read through the carry */
    int rc;
    if (s->carry) { /* the carry first, followed by as much of the input as fits */
        size_t old = s->carry, k = in_len < SCRATCH - old ? in_len : SCRATCH - old;
        memcpy(s->scratch + old, in, k);
        src sc = {s->scratch, old + k, 0};
        rc = decode(s, zs, &sc, out, &o, out_len, last && k == in_len, old);
        if (sc.pos >= old && (rc == R_SWITCH || rc == R_OUT)) { /* into the input: read it there */
            s->carry = 0;
            skip = sc.pos - old;
            if (rc == R_OUT) {
                *took = skip;
                goto out;
            }
        } else if (rc == R_OUT || (rc == R_NEED && k == in_len)) { /* the unread bytes stay (for
                                                                      NEED: with all the input) */
            size_t keep = (rc == R_NEED ? old + k : old) - sc.pos;
            memmove(s->scratch, s->scratch + sc.pos, keep);
            s->carry = keep;
            *took = rc == R_NEED ? in_len : 0;
            goto out;
        } else { /* ended, refused or cut short inside the carry and what was added */
            s->carry = 0;
            if (rc == R_NEED) { /* cannot happen: a unit is shorter than what was added */
                s->mode = M_BAD;
                rc = R_BAD;
            }
            *took = rc == R_TRUNC ? k : sc.pos > old ? sc.pos - old : 0;
            if (rc == R_END && sc.pos < old) *back = old - sc.pos;
            goto out;
        }
    }
    src d = {in, in_len, skip};
    rc = decode(s, zs, &d, out, &o, out_len, last, SIZE_MAX);
    if (rc == R_NEED) { /* fewer than CARRY_MAX bytes: a unit's start (see CARRY_MAX) */
        size_t keep = in_len - d.pos;
        if (keep > CARRY_MAX) { /* cannot happen; refuse rather than lose bytes */
            s->mode = M_BAD;
            rc = R_BAD;
        } else {
            memcpy(s->scratch, in + d.pos, keep);
            s->carry = keep;
            d.pos = in_len;
        }
    }
    *took = rc == R_TRUNC ? in_len : d.pos;
out:
    hist_add(s, out, o);
    s->total += o;
    *made = o;
    if (rc == R_END) return NPZS__FI_END;
    if (rc == R_BAD) return NPZS__FI_BAD;
    if (rc == R_NOMEM) return NPZS__FI_NOMEM;
    return NPZS__FI_OK;
}
