/*
 * names.c -- the duplicate-name table of an .npz: no two members may share a name, and no
 * member's np.load key (the name without ".npy") may equal another member's name or key
 * (np.load would return only one of them).
 *
 * Open addressing over 32-bit hashes that are kept in the member records, so that growing the
 * table hashes no name again.  The hash is SipHash-1-3 under a 128-bit key drawn from the
 * operating system's random source for every parser (npzs__names_seed): an attacker who
 * chooses the names cannot predict which of them collide, so probe sequences stay short
 * whatever the archive holds.  Only timing depends on the key, never a result.
 */
#include <string.h>
#include <time.h>

#if defined(__linux__)
#include <sys/random.h>
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
#include <stdlib.h> /* arc4random_buf */
#endif

#include "../base/base.h"
#include "../base/contract.h"
#include "../base/rules.h"
#include "../view/members.h"

#ifdef NPZS_INTERNAL_H
#error "names.c sees the parser only as a handle (view/members.h): not its layout (internal.h)"
#endif

/* ---- SipHash-1-3 (Aumasson and Bernstein): one compression round per block, three final ---- */

#define ROTL64(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))

typedef struct sip {
    uint64_t v0, v1, v2, v3;
} sip;

static inline void sip_round(sip *s) {
    s->v0 += s->v1;
    s->v1 = ROTL64(s->v1, 13);
    s->v1 ^= s->v0;
    s->v0 = ROTL64(s->v0, 32);
    s->v2 += s->v3;
    s->v3 = ROTL64(s->v3, 16);
    s->v3 ^= s->v2;
    s->v0 += s->v3;
    s->v3 = ROTL64(s->v3, 21);
    s->v3 ^= s->v0;
    s->v2 += s->v1;
    s->v1 = ROTL64(s->v1, 17);
    s->v1 ^= s->v2;
    s->v2 = ROTL64(s->v2, 32);
}

/*@ requires \valid_read(key + (0 .. 1)) && (n == 0 || \valid_read(m + (0 .. n - 1))); */
uint64_t npzs__siphash13(const uint64_t key[2], const uint8_t *m, size_t n) {
    NPZS_REQUIRE(key && (m || n == 0));
    sip s = {key[0] ^ UINT64_C(0x736f6d6570736575), key[1] ^ UINT64_C(0x646f72616e646f6d),
             key[0] ^ UINT64_C(0x6c7967656e657261), key[1] ^ UINT64_C(0x7465646279746573)};
    size_t r = n & 7, i = n & ~(size_t)7; /* the whole words end at i, 0 to 7 bytes are left */
    for (size_t j = 0; j < i; j += 8) {
        uint64_t w = npzs__le64(m + j);
        s.v3 ^= w;
        sip_round(&s);
        s.v0 ^= w;
    }
    uint64_t last = (uint64_t)(n & 0xFF) << 56;
    if (r && n >= 8) /* the last 8 bytes, shifted down to the r that are left */
        last |= npzs__le64(m + n - 8) >> (8 * (8 - r));
    else if (r >= 4) /* two 4-byte loads that overlap where r < 8 (the same bytes, or-ed twice) */
        last |= npzs__le32(m + i) | ((uint64_t)npzs__le32(m + i + r - 4) << (8 * (r - 4)));
    else if (r) /* 1 to 3 bytes: the first, the middle and the last (some the same) */
        last |= m[i] | ((uint64_t)m[i + r / 2] << (8 * (r / 2))) | ((uint64_t)m[i + r - 1] << (8 * (r - 1)));
    s.v3 ^= last;
    sip_round(&s);
    s.v0 ^= last;
    s.v2 ^= 0xFF;
    sip_round(&s);
    sip_round(&s);
    sip_round(&s);
    return s.v0 ^ s.v1 ^ s.v2 ^ s.v3;
}

/* A fresh key from the system's random source.  Where none answers (a sandbox that forbids the
 * call), the address of the table (in its parser) and the clocks are mixed instead: unpredictable
 * enough for a remote attacker in practice, and a result never depends on it. */
void npzs__names_seed(npzs__names *t) {
    uint64_t k[2] = {0, 0};
    int got = 0;
#if defined(__linux__)
    got = getrandom(k, sizeof k, GRND_NONBLOCK) == (ssize_t)sizeof k;
#elif defined(__APPLE__) || defined(__FreeBSD__) || defined(__OpenBSD__) || defined(__NetBSD__)
    arc4random_buf(k, sizeof k);
    got = 1;
#endif
    if (!got) {
        struct timespec ts = {0, 0};
        timespec_get(&ts, TIME_UTC);
        uint64_t a = (uint64_t)(uintptr_t)t, now = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
        uint64_t c = (uint64_t)clock();
        uint8_t b[24];
        memcpy(b, &a, 8);
        memcpy(b + 8, &now, 8);
        memcpy(b + 16, &c, 8);
        static const uint64_t k0[2] = {UINT64_C(0x0706050403020100), UINT64_C(0x0F0E0D0C0B0A0908)};
        k[0] = npzs__siphash13(k0, b, sizeof b);
        b[0] ^= 0x5A;
        k[1] = npzs__siphash13(k0, b, sizeof b);
    }
    t->key[0] = k[0];
    t->key[1] = k[1];
}

/* ---- the table ------------------------------------------------------------------------------- */

/* Entries are (member << 1 | derived) + 1, 0 is empty: derived 0 is the raw name, 1 the key
 * np.load resolves (the name without ".npy"). */
static void entry(npzs__record *const *recs, uint32_t v, const uint8_t **s, size_t *n) {
    const npzs__record *r = npzs__rec_at(recs, (v - 1) >> 1);
    size_t len = r->name_len;
    *s = r->name;
    *n = ((v - 1) & 1) && len > 4 ? len - 4 : len; /* a key's name ends in ".npy": len > 4 */
}

static uint32_t entry_hash(npzs__record *const *recs, uint32_t v) {
    return npzs__rec_at(recs, (v - 1) >> 1)->hash[(v - 1) & 1];
}

/* Insert v (hash h) unless an equal name or key is there: returns 1 for a duplicate.  A probe
 * reads a name only when its hash is equal. */
static NPZS__INLINE int put(npzs__names *t, npzs__record *const *recs, uint32_t v, uint32_t h) {
    size_t mask = t->cap - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
        uint32_t w = t->slot[i];
        if (!w) {
            t->slot[i] = v;
            return 0;
        }
        if (entry_hash(recs, w) != h) continue;
        const uint8_t *s, *u;
        size_t n, m;
        entry(recs, v, &s, &n);
        entry(recs, w, &u, &m);
        if (m == n && memcmp(s, u, n) == 0) return 1;
    }
}

static int ends_npy(const uint8_t *s, size_t n) { return n > 4 && memcmp(s + n - 4, ".npy", 4) == 0; }

/* Enter v (hash h) in a table that holds no equal entry. */
static inline void place(npzs__names *t, uint32_t v, uint32_t h) {
    size_t mask = t->cap - 1, i = h & mask;
    while (t->slot[i]) i = (i + 1) & mask;
    t->slot[i] = v;
}

/* The table holds at most half of its slots, so linear probes stay short; grown, it takes the
 * entries of the members before `member` again, from their records in order. */
static int grow(npzs_parser *p, npzs__names *t, npzs__record *const *recs, uint32_t member, uint64_t off) {
    size_t used = (size_t)member * 2 + 2;
    if (used * 2 <= t->cap) return 0;
    size_t ncap = t->cap ? t->cap : 64;
    while (used * 2 > ncap) ncap *= 2;
    uint32_t *nh = npzs__alloc(p, ncap * sizeof *nh);
    if (!nh) return npzs__fail(p, NPZS_E_NOMEM, off, NPZS_R_NOMEM_NAME_TABLE);
    memset(nh, 0, ncap * sizeof *nh);
    npzs__free(p, t->slot);
    t->slot = nh;
    t->cap = ncap;
    for (uint32_t m = 0; m < member; m++) {
        const npzs__record *r = npzs__rec_at(recs, m);
        place(t, (m << 1) + 1, r->hash[0]);
        if (ends_npy(r->name, r->name_len)) place(t, (m << 1) + 2, r->hash[1]);
    }
    return 0;
}

/* A string's table hash: SipHash of it, or for a string that ends in ".npy" (and is longer), a
 * fixed mix of the SipHash of the rest.  Equal strings hash the same whatever member they come
 * from, and a name "k.npy" and its key "k" cost one SipHash while hashing apart (a key that
 * itself ends in ".npy" needs a second). */
static uint32_t npy_mix(uint64_t h) { return (uint32_t)((h ^ (h >> 29)) * UINT64_C(0xBF58476D1CE4E5B9) >> 32); }

static uint32_t hash_of(const npzs__names *t, const uint8_t *s, size_t n) {
    if (ends_npy(s, n)) return npy_mix(npzs__siphash13(t->key, s, n - 4));
    return (uint32_t)npzs__siphash13(t->key, s, n);
}

/* The member's record holds its name (1 to 65535 bytes); the table holds the entries of the
 * members before it (cap 0, or a power of two of slots at most half full). */
/*@ requires \valid(t) && member < 0x7FFFFFFF;
    requires \valid(recs[member >> NPZS_REC_SHIFT] + (member & (NPZS_REC_CHUNK - 1)));
    requires recs[member >> NPZS_REC_SHIFT][member & (NPZS_REC_CHUNK - 1)].name_len >= 1;
    requires \valid_read(recs[member >> NPZS_REC_SHIFT][member & (NPZS_REC_CHUNK - 1)].name +
                         (0 .. recs[member >> NPZS_REC_SHIFT][member & (NPZS_REC_CHUNK - 1)].name_len - 1));
    requires t->cap == 0 || \valid(t->slot + (0 .. t->cap - 1)); */
int npzs__names_add(npzs_parser *p, npzs__names *t, npzs__record *const *recs, uint32_t member, uint64_t off) {
    NPZS_REQUIRE(p && t && recs && member < 0x7FFFFFFFu && npzs__rec_at(recs, member)->name &&
                 npzs__rec_at(recs, member)->name_len >= 1);
    NPZS_REQUIRE(t->cap == 0 ||
                 (t->slot && t->cap >= 64 && (t->cap & (t->cap - 1)) == 0 && (size_t)member * 2 <= t->cap / 2));
    int rc = grow(p, t, recs, member, off);
    if (rc < 0) return rc;
    npzs__record *r = npzs__rec_at(recs, member);
    size_t n = r->name_len;
    int with_key = ends_npy(r->name, n);
    if (with_key && !ends_npy(r->name, n - 4)) { /* "k.npy", k not ending in ".npy": one SipHash for both */
        uint64_t k = npzs__siphash13(t->key, r->name, n - 4);
        r->hash[0] = npy_mix(k);
        r->hash[1] = (uint32_t)k;
    } else {
        r->hash[0] = hash_of(t, r->name, n);
        r->hash[1] = with_key ? hash_of(t, r->name, n - 4) : 0;
    }
    if (put(t, recs, (member << 1) + 1, r->hash[0]) || (with_key && put(t, recs, (member << 1) + 2, r->hash[1])))
        return npzs__fail(p, NPZS_E_DUPLICATE_NAME, off, NPZS_R_NAME_DUPLICATE);
    return 0;
}

void npzs__names_release(npzs_parser *p, npzs__names *t) {
    npzs__free(p, t->slot);
    t->slot = NULL;
    t->cap = 0;
}
