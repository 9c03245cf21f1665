/*
 * zlocate.c -- how CPython's zipfile finds the end records of an archive, re-stated as a pure
 * function over a view of the input's last bytes.
 *
 * np.load opens an .npz with zipfile.ZipFile, which never reads the archive front to back: it
 * looks for the end-of-central-directory record from the end of the file (_EndRecData), then
 * for a ZIP64 locator and ZIP64 end record before it (_EndRecData64), and reads the central
 * directory wherever those records say it is, shifted by the "concat" distance
 * (_RealGetContents).  A stream parses the same records in order.  The two can only be trusted
 * to agree when this function, run over the bytes the stream saw, arrives at exactly the records
 * the stream parsed: zip.c calls it at the end of every archive, and the fuzz harnesses call it
 * on every accepted input (fuzz/common.c, with the whole input as the view).
 *
 * The search, as CPython 3.10-3.14 do it (offsets absolute, sizes in bytes):
 *  1. If the input has at least 22 bytes, the last 22 start with PK\5\6 and the last two bytes
 *     are zero (a comment length of 0), that is the end record.
 *  2. Otherwise the LAST occurrence of PK\5\6 in the final W bytes is taken (W = 65536 + 22;
 *     65535 + 22 since gh-113977, in 3.12.10+, later 3.13 and 3.14); fewer than 22 bytes from
 *     there to the end means "not a zip file".  Neither path checks the comment length against
 *     the bytes that follow, nor the record's disk numbers or entry counts.
 *  3. When the 20 bytes before the end record start with PK\6\7 (a ZIP64 locator), a disk number
 *     != 0 or more than one disk is refused ("span multiple disks").  Then
 *     - before the fix for CVE-2025-8291 (gh-139700; 3.10.0-18, 3.11.0-13, 3.12.0-11, 3.13.0-9,
 *       3.14.0) the 56 bytes right before the locator are a ZIP64 end record if they start with
 *       PK\6\6, else the locator is ignored; the locator's offset is never read;
 *     - with the fix (3.10.19+, 3.11.14+, 3.12.12+, 3.13.10+, 3.14.1+) the locator's offset must
 *       not point past the 56 bytes before it; the record is read there (or, when no signature
 *       is there, right before the locator: prepended data), must have the signature, must end
 *       exactly at the locator, and its directory must end exactly at the locator's offset.
 *     A ZIP64 end record that is used overrides all the end record's numbers.
 *  4. The directory is taken to end where the end record (or the ZIP64 end record: before the
 *     fix always 76 bytes before the end record, with the fix where it was found) begins:
 *     start_dir = that position - directory size, refused when negative; concat = start_dir -
 *     the stated directory offset is added to every local header offset.
 * The stream accepts an archive only when every variant finds its end record, its locator and
 * ZIP64 end record (or none) exactly where it parsed them, and reads the directory exactly
 * where the stream read it (concat 0); SECURITY.md (S-ZIP-EOCD-FIND) says why.
 */
#include <string.h>

#include "zrec.h"
#include "../base/base.h"
#include "../base/contract.h"

#ifdef NPZS_INTERNAL_H
#error "zrec/ is pure: it sees no parser (internal.h)"
#endif

#define SIG_EOCD "PK\x05\x06"
#define SIG_LOC "PK\x06\x07"
#define SIG_Z64 "PK\x06\x06"

/* Copy n bytes at absolute offset off out of the view.  0 when some are outside it (each byte is
 * checked against its span too: a view whose size is not base + alen + blen cannot be read past
 * a span).  out is zeroed first: no byte of it is ever left unset, whichever span it comes from. */
static int get(const npzs__tailview *v, uint64_t off, size_t n, uint8_t *out) {
    memset(out, 0, n);
    if (off < v->base || off > v->size || n > v->size - off) return 0;
    uint64_t r = off - v->base;
    for (size_t k = 0; k < n; k++, r++) {
        uint64_t rb = r - v->alen;
        if (r < v->alen) out[k] = v->a[r];
        else if (rb < v->blen) out[k] = v->b[rb];
        else return 0;
    }
    return 1;
}

static int sig_at(const npzs__tailview *v, uint64_t off, const char *sig) {
    uint8_t b[4];
    return get(v, off, 4, b) && memcmp(b, sig, 4) == 0;
}

static int fail(npzs__zf_end *e, int status, uint64_t at, const char *msg) {
    e->status = status;
    e->at = at;
    e->msg = msg;
    return status;
}

/*@ requires \valid_read(v) && \valid(e);
    requires v->alen == 0 || \valid_read(v->a + (0 .. v->alen - 1));
    requires v->blen == 0 || \valid_read(v->b + (0 .. v->blen - 1)); */
int npzs__zf_locate(const npzs__tailview *v, unsigned variant, npzs__zf_end *e) {
    /* and, for the search to be zipfile's (not for its safety: get() checks each span), a view
     * whose size is base + alen + blen */
    NPZS_REQUIRE(v && e && (v->a || !v->alen) && (v->b || !v->blen) && v->alen <= UINT64_MAX - v->base &&
                 v->blen <= UINT64_MAX - v->base - v->alen && v->size == v->base + v->alen + v->blen);
    memset(e, 0, sizeof *e);
    uint64_t size = v->size;
    uint8_t r[56];
    /* 1. an end record without a comment at the very end */
    uint64_t pos = UINT64_MAX;
    if (size < 22) return fail(e, NPZS_ZF_NOTZIP, 0, "shorter than an end record");
    if (!get(v, size - 22, 22, r)) return fail(e, NPZS_ZF_UNKNOWN, size - 22, "needs bytes before the view");
    if (memcmp(r, SIG_EOCD, 4) == 0 && r[20] == 0 && r[21] == 0) pos = size - 22;
    /* 2. the last signature in the final W bytes */
    if (pos == UINT64_MAX) {
        uint64_t w = (variant & NPZS_ZF_WIN65557) ? 65535 + 22 : 65536 + 22;
        uint64_t lo = size > w ? size - w : 0;
        for (uint64_t k = size - 4 + 1; k-- > lo;) {
            if (k < v->base) return fail(e, NPZS_ZF_UNKNOWN, k, "needs bytes before the view");
            if (sig_at(v, k, SIG_EOCD)) {
                pos = k;
                break;
            }
        }
        if (pos == UINT64_MAX) return fail(e, NPZS_ZF_NOTZIP, size, "no end record in the last 64 KiB");
        if (size - pos < 22)
            return fail(e, NPZS_ZF_NOTZIP, pos, "the last end-record signature has no room for the record");
        get(v, pos, 22, r);
    }
    e->eocd_off = pos;
    npzs__zr_eocd(r, &e->rec);
    uint64_t dir_end = pos; /* where zipfile takes the directory to end */
    /* 3. a ZIP64 locator right before it */
    if (pos >= 20) {
        uint64_t lo = pos - 20;
        uint8_t l[20];
        if (!get(v, lo, 20, l)) return fail(e, NPZS_ZF_UNKNOWN, lo, "needs bytes before the view");
        if (memcmp(l, SIG_LOC, 4) == 0) {
            e->loc = 1;
            e->loc_off = lo;
            if (npzs__le32(l + 4) != 0 || npzs__le32(l + 16) > 1)
                return fail(e, NPZS_ZF_MULTIDISK, lo, "zipfile refuses archives that span multiple disks");
            uint64_t reloff = npzs__le64(l + 8), z = UINT64_MAX, extra = 0;
            if (!(variant & NPZS_ZF_FIXED64)) {
                if (lo < 56) /* a real file's seek before byte 0 fails (io.BytesIO clamps) */
                    return fail(e, NPZS_ZF_BAD, lo, "the ZIP64 locator has no room for a ZIP64 end record before it");
                if (!get(v, lo - 56, 56, r)) return fail(e, NPZS_ZF_UNKNOWN, lo - 56, "needs bytes before the view");
                if (memcmp(r, SIG_Z64, 4) == 0) z = lo - 56;
            } else {
                if (lo < 56 || reloff > lo - 56)
                    return fail(e, NPZS_ZF_BAD, lo, "the ZIP64 locator points past the ZIP64 end record's place");
                z = reloff;
                extra = lo - 56 - reloff;
                if (!get(v, z, 56, r)) return fail(e, NPZS_ZF_UNKNOWN, z, "needs bytes before the view");
                if (memcmp(r, SIG_Z64, 4) != 0 && reloff != lo - 56) {
                    z = lo - 56;
                    extra = 0;
                    if (!get(v, z, 56, r)) return fail(e, NPZS_ZF_UNKNOWN, z, "needs bytes before the view");
                }
                if (memcmp(r, SIG_Z64, 4) != 0)
                    return fail(e, NPZS_ZF_BAD, z, "no ZIP64 end record where the ZIP64 locator points");
                uint64_t cs = npzs__le64(r + 40), co = npzs__le64(r + 48), rsz = npzs__le64(r + 4);
                if (co + cs < co || co + cs != reloff || rsz != 44 + extra)
                    return fail(e, NPZS_ZF_BAD, z, "the ZIP64 end record does not fit its locator");
            }
            if (z != UINT64_MAX) {
                e->z64 = 1;
                e->z64_off = z;
                uint16_t comment_len = e->rec.comment_len;
                npzs__zr_z64_fields(r, &e->rec);
                e->rec.comment_len = comment_len;
                dir_end = (variant & NPZS_ZF_FIXED64) ? z : pos - 76;
            }
        }
    }
    /* 4. where the directory is read */
    if (e->rec.cd_size > dir_end)
        return fail(e, NPZS_ZF_BAD, pos, "zipfile finds a bad offset for the central directory");
    e->cd_start = dir_end - e->rec.cd_size;
    return 0;
}
