/* fuzz_npz_mut: structure-aware .npz fuzzing (libFuzzer custom mutator).
 * The target is the same as fuzz_stream plus the split check (fz_check).  The custom
 * mutator reads the input as a ZIP through its central directory, mutates one thing
 * (a member's uncompressed content, its name, its method, its layout: sizes in the
 * local header or bit 3 + ZIP64 extra + 24-byte descriptor; drop, duplicate or swap
 * members) and writes the archive again with correct CRCs, sizes, offsets and end
 * record, so mutations reach the member-content and central-directory checks instead
 * of dying on a CRC.  One time in 6 the last directory entry gets a comment that ends in
 * fake end records (a ZIP64 end record and locator, or a locator alone, pointing at the
 * real directory, into the members or nowhere): the bytes zipfile reads before the end
 * record (src/zrec/zlocate.c).  One time in 8 it also mutates the rebuilt bytes raw.  Inputs
 * that do not parse as such a ZIP are mutated raw (LLVMFuzzerMutate).
 * In the AFL and replay builds LLVMFuzzerMutate is absent (weak) and only the target runs. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size) __attribute__((weak));

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    fz_check(data, size, NULL);
    return 0;
}

#define MAXM 8
typedef struct mem {
    char name[64];
    uint8_t *content;
    size_t n;
    int method, dd;
} mem;

static uint32_t rnd(unsigned *s) {
    *s = *s * 1103515245u + 12345u;
    return *s >> 8;
}
static uint16_t g16(const uint8_t *b) { return (uint16_t)(b[0] | (b[1] << 8)); }
static uint32_t g32(const uint8_t *b) { return (uint32_t)g16(b) | ((uint32_t)g16(b + 2) << 16); }

static int inflate_all(const uint8_t *s, size_t n, uint8_t **out, size_t *on) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (inflateInit2(&z, -15) != Z_OK) return -1;
    size_t cap = 4096, len = 0;
    uint8_t *b = malloc(cap);
    z.next_in = (Bytef *)(uintptr_t)s;
    z.avail_in = (uInt)n;
    int rc;
    do {
        if (len == cap) {
            if (cap >= (1u << 20)) break;
            b = realloc(b, cap *= 2);
        }
        z.next_out = b + len;
        z.avail_out = (uInt)(cap - len);
        rc = inflate(&z, Z_NO_FLUSH);
        len = cap - z.avail_out;
    } while (rc == Z_OK);
    inflateEnd(&z);
    if (rc != Z_STREAM_END) {
        free(b);
        return -1;
    }
    *out = b;
    *on = len;
    return 0;
}

/* Read members through the end record and central directory (no comment, no ZIP64). */
static int parse(const uint8_t *d, size_t n, mem *m, int *nm) {
    *nm = 0;
    if (n < 22 || g32(d + n - 22) != 0x06054B50) return -1;
    const uint8_t *e = d + n - 22;
    unsigned count = g16(e + 10);
    size_t off = g32(e + 16);
    if (count > MAXM) return -1;
    for (unsigned i = 0; i < count; i++) {
        if (off + 46 > n || g32(d + off) != 0x02014B50) return -1;
        const uint8_t *c = d + off;
        unsigned method = g16(c + 10), nl = g16(c + 28), el = g16(c + 30), cl = g16(c + 32);
        size_t cs = g32(c + 20), lo = g32(c + 42);
        if (nl == 0 || nl >= sizeof m->name || off + 46 + nl > n) return -1;
        if (lo + 30 > n || g32(d + lo) != 0x04034B50) return -1;
        size_t ds = lo + 30 + g16(d + lo + 26) + g16(d + lo + 28);
        if (ds > n || cs > n - ds) return -1;
        mem *x = &m[(*nm)++];
        memcpy(x->name, c + 46, nl);
        x->name[nl] = 0;
        x->method = method == 8 ? 8 : 0;
        x->dd = (g16(c + 8) & 8) != 0;
        if (x->method == 8) {
            if (inflate_all(d + ds, cs, &x->content, &x->n) < 0) return -1;
        } else {
            x->content = malloc(cs ? cs : 1);
            memcpy(x->content, d + ds, cs);
            x->n = cs;
        }
        off += 46 + nl + el + cl;
    }
    return 0;
}

static size_t mutate_raw(uint8_t *d, size_t n, size_t max) {
    if (LLVMFuzzerMutate) return LLVMFuzzerMutate(d, n, max);
    return n;
}

/* End the last directory entry (at `last`; the directory starts at cd) with a comment holding
 * fake end records; the end record follows the comment. */
static void plant(fz_buf *b, size_t last, size_t cd, unsigned *s) {
    unsigned how = rnd(s) % 3;
    size_t pad = rnd(s) % 8, clen = pad + (how == 0 ? 56 + 20 : 20);
    uint64_t eocd = b->n + clen, z64 = eocd - 76;
    uint64_t targets[4] = {cd, z64, 0, rnd(s) % (b->n + 1)};
    fz_put(b, "\0\0\0\0\0\0\0", pad);
    if (how == 0) { /* ZIP64 end record + locator */
        fz_put32(b, 0x06064B50u);
        fz_put64(b, rnd(s) % 4 ? 44 : rnd(s) % 64);
        fz_put16(b, 45);
        fz_put16(b, 45);
        fz_put32(b, rnd(s) % 8 ? 0 : 1);
        fz_put32(b, 0);
        uint64_t cnt = rnd(s) % 3;
        fz_put64(b, cnt);
        fz_put64(b, cnt);
        fz_put64(b, rnd(s) % 2 ? last - cd : rnd(s) % (b->n + 1)); /* directory size */
        fz_put64(b, targets[rnd(s) % 4]);                          /* directory offset */
    }
    fz_put32(b, 0x07064B50u);
    fz_put32(b, rnd(s) % 8 ? 0 : 1);
    fz_put64(b, how == 2 ? targets[rnd(s) % 4] : z64);
    fz_put32(b, rnd(s) % 8 ? 1 : rnd(s) % 3);
    b->p[last + 32] = (uint8_t)clen; /* the entry's comment length */
    b->p[last + 33] = (uint8_t)(clen >> 8);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
    mem m[MAXM];
    int nm = 0;
    unsigned s = seed;
    memset(m, 0, sizeof m);
    if (parse(data, size, m, &nm) < 0 || (rnd(&s) & 15) == 0) {
        for (int i = 0; i < nm; i++) free(m[i].content);
        return mutate_raw(data, size, max_size);
    }
    int k = nm ? (int)(rnd(&s) % (unsigned)nm) : 0;
    switch (nm ? rnd(&s) % 8 : 7) {
    case 0:
    case 1:
    case 2: { /* member content */
        size_t cap = m[k].n * 2 + 64;
        m[k].content = realloc(m[k].content, cap);
        m[k].n = mutate_raw(m[k].content, m[k].n, cap);
        break;
    }
    case 3: { /* name */
        size_t l = strlen(m[k].name);
        l = mutate_raw((uint8_t *)m[k].name, l, sizeof m[k].name - 1);
        m[k].name[l] = 0;
        if (!l) strcpy(m[k].name, "x");
        break;
    }
    case 4: m[k].method ^= 8; break;
    case 5: m[k].dd ^= 1; break;
    case 6: /* drop or swap */
        if (nm > 1 && (rnd(&s) & 1)) {
            free(m[k].content);
            m[k] = m[--nm];
        } else if (nm > 1) {
            mem t = m[0];
            m[0] = m[k];
            m[k] = t;
        }
        break;
    default: /* duplicate (a new name) */
        if (nm && nm < MAXM) {
            m[nm] = m[k];
            m[nm].content = malloc(m[k].n ? m[k].n : 1);
            memcpy(m[nm].content, m[k].content, m[k].n);
            snprintf(m[nm].name, sizeof m[nm].name, "m%u.npy", rnd(&s) % 100);
            nm++;
        }
        break;
    }
    fz_buf b = {0};
    fz_member fm[MAXM];
    for (int i = 0; i < nm; i++) {
        fz_member t = {m[i].name, m[i].content, m[i].n, m[i].method, m[i].dd, 0, 0, 0};
        fm[i] = t;
        fz_zip_member(&b, &fm[i]);
    }
    size_t cd = b.n, last = cd;
    for (int i = 0; i < nm; i++) {
        last = b.n;
        fz_zip_cdh(&b, &fm[i]);
    }
    if (nm && rnd(&s) % 6 == 0) plant(&b, last, cd, &s);
    fz_zip_eocd(&b, (unsigned)nm, (uint32_t)(b.n - cd), (uint32_t)cd);
    for (int i = 0; i < nm; i++) free(m[i].content);
    size_t out = size;
    if (b.n <= max_size) {
        memcpy(data, b.p, b.n);
        out = b.n;
        if ((rnd(&s) & 7) == 0) out = mutate_raw(data, out, max_size);
    } else {
        out = mutate_raw(data, size, max_size);
    }
    fz_free_buf(&b);
    return out;
}
