/*
 * fuzz/zfview.c -- the fuzz oracle for "what the stream validated is what zipfile reads": an
 * independent, deliberately plain re-statement of how CPython's zipfile opens an archive
 * (_EndRecData, _EndRecData64, _RealGetContents, _decodeExtra, and the local-header checks of
 * ZipFile.open), written from CPython's reading rules (src/zrec/zlocate.c's comment lists them) and
 * not sharing code with the library.  fz_run() calls it on every accepted .npz with the whole
 * input and aborts unless every variant lists exactly the members the stream reported, at the
 * same local header offsets, with the same data start, method, flags, sizes and CRC.
 */
#include "common.h"

#include <string.h>
#include <zlib.h>

/* zlib's CRC-32 of any length (the oracle's, and the harnesses' through common.h): here, below
 * fz_run, so that the oracle needs nothing of common.c */
uint32_t fz_crc32(const uint8_t *s, size_t n) {
    uLong c = crc32(0L, Z_NULL, 0);
    while (n) {
        uInt k = n > 0x40000000u ? 0x40000000u : (uInt)n;
        c = crc32(c, s, k);
        s += k;
        n -= k;
    }
    return (uint32_t)c;
}

static uint16_t g16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t g32(const uint8_t *b) { return (uint32_t)g16(b) | (uint32_t)g16(b + 2) << 16; }
static uint64_t g64(const uint8_t *b) { return (uint64_t)g32(b) | (uint64_t)g32(b + 4) << 32; }

/* bytes [off, off+len) of the file, when all of them are there */
static const uint8_t *at(const uint8_t *f, size_t n, uint64_t off, uint64_t len) {
    if (off > n || len > n - off) return NULL;
    return f + off;
}

long fz_zipfile_read(const uint8_t *f, size_t n, unsigned variant, fz_zf_entry *out, size_t cap) {
    /* _EndRecData */
    if (n < 22) return -1;
    uint64_t eocd = UINT64_MAX;
    if (memcmp(f + n - 22, "PK\5\6", 4) == 0 && f[n - 2] == 0 && f[n - 1] == 0) {
        eocd = n - 22;
    } else {
        size_t window = (variant & FZ_ZF_WIN65557) ? 65535 + 22 : 65536 + 22;
        size_t start = n > window ? n - window : 0;
        for (size_t i = n - 4 + 1; i-- > start;)
            if (memcmp(f + i, "PK\5\6", 4) == 0) {
                eocd = i;
                break;
            }
        if (eocd == UINT64_MAX || n - eocd < 22) return -1;
    }
    const uint8_t *e = f + eocd;
    uint64_t size_cd = g32(e + 12), offset_cd = g32(e + 16);
    uint64_t location = eocd;
    int used64 = 0;
    /* _EndRecData64 */
    if (eocd >= 20 && memcmp(f + eocd - 20, "PK\6\7", 4) == 0) {
        const uint8_t *l = f + eocd - 20;
        if (g32(l + 4) != 0 || g32(l + 16) > 1) return -1; /* "span multiple disks" */
        uint64_t locpos = eocd - 20;
        const uint8_t *z = NULL;
        if (!(variant & FZ_ZF_FIXED64)) {
            if (locpos < 56) return -1; /* the seek before byte 0 raises */
            if (memcmp(f + locpos - 56, "PK\6\6", 4) == 0) z = f + locpos - 56;
        } else {
            uint64_t reloff = g64(l + 8);
            if (locpos < 56 || reloff > locpos - 56) return -1;
            uint64_t extrasz = locpos - 56 - reloff;
            z = at(f, n, reloff, 56);
            if (!z) return -1;
            if (memcmp(z, "PK\6\6", 4) != 0 && reloff != locpos - 56) {
                z = f + locpos - 56;
                extrasz = 0;
            }
            if (memcmp(z, "PK\6\6", 4) != 0) return -1;
            uint64_t cs = g64(z + 40), co = g64(z + 48);
            if (co + cs < co || co + cs != reloff || g64(z + 4) + 12 != 56 + extrasz) return -1;
            location = (uint64_t)(z - f);
        }
        if (z) {
            used64 = 1;
            size_cd = g64(z + 40);
            offset_cd = g64(z + 48);
        }
    }
    /* _RealGetContents: concat = location - size - offset (- 76 before the fix) */
    uint64_t dir_end = location;
    if (used64 && !(variant & FZ_ZF_FIXED64)) dir_end = eocd - 76;
    if (size_cd > dir_end) return -1; /* start_dir < 0: "Bad offset for central directory" */
    uint64_t start_dir = dir_end - size_cd;
    /* concat = start_dir - offset_cd, as a signed distance (Python integers do not wrap) */
    int neg = offset_cd > start_dir;
    uint64_t mag = neg ? offset_cd - start_dir : start_dir - offset_cd;
    const uint8_t *cd = f + (start_dir < n ? start_dir : n);
    uint64_t cd_avail = start_dir < n ? n - start_dir : 0;
    if (cd_avail > size_cd) cd_avail = size_cd;
    uint64_t pos = 0, total = 0;
    long count = 0;
    while (total < size_cd) {
        if (cd_avail - pos < 46) return -1; /* "Truncated central directory" */
        const uint8_t *h = cd + pos;
        if (memcmp(h, "PK\1\2", 4) != 0) return -1;
        uint64_t nl = g16(h + 28), xl = g16(h + 30), cl = g16(h + 32);
        if (h[6] > 63) return -1; /* "zip file version" NotImplementedError */
        pos += 46;
        uint64_t take_n = nl < cd_avail - pos ? nl : cd_avail - pos;
        const uint8_t *name = cd + pos;
        pos += take_n;
        uint64_t take_x = xl < cd_avail - pos ? xl : cd_avail - pos;
        const uint8_t *x = cd + pos;
        pos += take_x;
        pos += cl < cd_avail - pos ? cl : cd_avail - pos;
        uint64_t usize = g32(h + 24), csize = g32(h + 20), hoff = g32(h + 42);
        /* _decodeExtra */
        uint64_t k = 0;
        while (take_x - k >= 4) {
            uint64_t tp = g16(x + k), ln = g16(x + k + 2);
            if (ln + 4 > take_x - k) return -1;
            if (tp == 1) {
                const uint8_t *d = x + k + 4;
                uint64_t dl = ln;
                if (usize == 0xFFFFFFFFu || usize == UINT64_MAX) {
                    if (dl < 8) return -1;
                    usize = g64(d);
                    d += 8;
                    dl -= 8;
                }
                if (csize == 0xFFFFFFFFu) {
                    if (dl < 8) return -1;
                    csize = g64(d);
                    d += 8;
                    dl -= 8;
                }
                if (hoff == 0xFFFFFFFFu) {
                    if (dl < 8) return -1;
                    hoff = g64(d);
                }
            } else if (tp == 0x7075 && (variant & FZ_ZF_UNICODE_PATH)) {
                /* 3.12+: a Unicode path extra whose CRC matches renames the member */
                if (ln < 5) return -1;
                if (x[k + 4] == 1 && g32(x + k + 5) == fz_crc32(name, (size_t)take_n))
                    return -1; /* renamed: not modelled */
            }
            k += 4 + ln;
        }
        /* header_offset += concat */
        if (neg) {
            if (hoff < mag) return -1; /* a negative offset: reading it fails */
            hoff -= mag;
        } else {
            if (hoff > UINT64_MAX - mag) return -1;
            hoff += mag;
        }
        if ((size_t)count < cap) {
            fz_zf_entry *o = &out[count];
            o->name = name;
            o->name_len = (size_t)take_n;
            o->lfh = hoff;
            o->csize = csize;
            o->usize = usize;
            o->crc = g32(h + 16);
            o->method = g16(h + 10);
            o->flags = g16(h + 8);
        }
        count++;
        total += 46 + nl + xl + cl;
    }
    /* ZipFile.open on each: the local header's signature and name; data follows its extra field */
    for (long i = 0; i < count && (size_t)i < cap; i++) {
        fz_zf_entry *o = &out[i];
        const uint8_t *lh = at(f, n, o->lfh, 30);
        if (!lh || memcmp(lh, "PK\3\4", 4) != 0) return -1;
        if (o->flags & 0x61) return -1; /* patched data, strong encryption, a password */
        uint64_t nl = g16(lh + 26), xl = g16(lh + 28);
        const uint8_t *ln = at(f, n, o->lfh + 30, nl);
        /* names compared decoded: equal bytes with the same UTF-8 flag (other cases not modelled) */
        if (!ln || nl != o->name_len || memcmp(ln, o->name, nl) != 0 || ((g16(lh + 6) ^ o->flags) & 0x800)) return -1;
        o->data = o->lfh + 30 + nl + xl;
        if (!at(f, n, o->data, o->csize)) return -1;
    }
    return count;
}
