/* fuzz_vlen: Zarr vlen-ndarray chunks (include/npzstream_vlen.h).
 * Input: [ctl][arg][pattern][chunk bytes...]
 *   ctl bits 0-3: dtype: the 14 names in order, then "<f4", "|b1"
 *   ctl bits 4-5: limits: 0 defaults; 1 max_elements 4, max_element_bytes 64, max_total_bytes 256;
 *                 2 max_total_bytes 4 + arg; 3 max_elements arg, max_element_bytes 8 * arg
 *   ctl bits 6-7: split schedule: 0 1-byte pushes, 1 7-byte, 2 alternating 0- and 1-byte pushes,
 *                 3 pushes of (arg % 32) bytes (0: whole input after an empty push)
 *   pattern: a byte < 0x20 picks patterns[b % 8]; otherwise the text up to the first NUL
 *            (at most 100 bytes; no NUL: the rest is the pattern and the chunk is empty)
 * The chunk is parsed whole and under the schedule (a fresh heap copy per push, freed when
 * used, so ASan sees a pointer kept into caller memory).  abort() unless both runs agree
 * (events with DATA merged per element, verdict, code, offset, element) and match a plain
 * whole-buffer reference decoder; checks progress, DATA contiguity and zero copy, the
 * ELEMENT_END CRC against the DATA bytes, the inferred shape, sticky errors, NPZS_DONE
 * after END, balanced allocator hooks, and that a failing allocator gives NULL. */
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "common.h"

#include "npzstream_vlen.h"

uint32_t npzs_vlen__visited(const npzs_vlen_parser *p); /* test hook in src/vlen/vlen.c */

static const char *const dtype_names[16] = {"bool",      "int8",       "int16",  "int32",   "int64",   "uint8",
                                            "uint16",    "uint32",     "uint64", "float16", "float32", "float64",
                                            "complex64", "complex128", "<f4",    "|b1"};
static const char *const patterns[8] = {"null",       "null,2",      "null,3,4", "[null, 1]",
                                        "null,1,1,5", "null,2,null", "2,null",   "null,0"};

typedef struct vz_alloc {
    long fail_at, n, live;
} vz_alloc;

static void *vz_alloc_fn(void *o, size_t size) {
    vz_alloc *a = o;
    if (a->fail_at >= 0 && a->n == a->fail_at) {
        a->n++;
        return NULL;
    }
    a->n++;
    void *p = malloc(size ? size : 1);
    if (!p) fz_die("host malloc failed");
    a->live++;
    return p;
}
static void vz_free_fn(void *o, void *p) {
    vz_alloc *a = o;
    if (!p) fz_die("free hook called with NULL");
    if (a->live <= 0) fz_die("more frees than allocations");
    a->live--;
    free(p);
}

typedef struct vz_res {
    int accepted;
    int err;
    uint64_t err_off;
    long err_elem;
    uint64_t h;
    uint32_t elems;
} vz_res;

static void vz_mix(uint64_t *h, uint64_t v) {
    uint64_t x = *h ^ (v + 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    *h = x ^ (x >> 31);
}

/* mode < 0: one push; else the schedule of ctl bits 6-7 */
static vz_res vz_run(const npzs_vlen_spec *sp, const npzs_vlen_limits *lim, const uint8_t *data, size_t n, int mode,
                     unsigned arg) {
    vz_res r;
    memset(&r, 0, sizeof r);
    r.err_elem = -1;
    vz_alloc ac = {-1, 0, 0};
    npzs_allocator al = {vz_alloc_fn, vz_free_fn, &ac};
    npzs_vlen_parser *p = npzs_vlen_new(sp, lim, &al);
    if (!p) fz_die("npzs_vlen_new failed on a valid spec");
    size_t off = 0;
    unsigned k = 0;
    int finished = 0, done = 0, in_elem = 0;
    uint32_t cur = 0, count = 0, dcrc = 0;
    uint64_t dpos = 0;
    volatile uint8_t sink = 0;
    while (!done) {
        size_t take;
        if (mode < 0) take = k ? 0 : n;
        else if (mode == 0) take = 1;
        else if (mode == 1) take = 7;
        else if (mode == 2) take = k & 1;
        else take = (arg % 32) ? arg % 32 : (k ? n : 0);
        if (take > n - off) take = n - off;
        k++;
        int want_finish = off == n && take == 0 && (mode != 2 || (k & 1));
        if (mode == 3 && arg % 32 == 0 && k == 1) want_finish = 0;
        if (want_finish && !finished) {
            npzs_vlen_finish(p);
            finished = 1;
        }
        uint8_t *copy = malloc(take ? take : 1);
        if (!copy) fz_die("host malloc failed");
        if (take) memcpy(copy, data + off, take);
        npzs_in in = {copy, take, 0};
        for (;;) {
            npzs_vlen_event ev;
            size_t before = in.pos;
            uint64_t cons = npzs_vlen_consumed(p);
            int rc = npzs_vlen_next(p, &in, &ev);
            if (npzs_vlen_consumed(p) - cons != in.pos - before) fz_die("consumed() disagrees with in.pos");
            if (rc == NPZS_NEED_INPUT) {
                if (in.pos != in.size) fz_die("NEED_INPUT with input left");
                if (finished) fz_die("NEED_INPUT after finish (hang)");
                break;
            }
            if (rc < 0) {
                if (npzs_vlen_error(p) != rc) fz_die("error code != npzs_vlen_error()");
                npzs_vlen_event e2;
                if (npzs_vlen_next(p, &in, &e2) != rc || npzs_vlen_next(p, NULL, &e2) != rc) fz_die("error not sticky");
                if (!npzs_vlen_error_message(p)) fz_die("NULL error message");
                /* a limit's numbers: exactly for code limit, one of the limits, and past its value */
                const char *lname;
                uint64_t lvalue, lneeded;
                int have = npzs_vlen_error_limit(p, &lname, &lvalue, &lneeded);
                if (have != (rc == NPZS_E_LIMIT) || (!have && lname)) fz_die("limit numbers %d for error %d", have, rc);
                if (have &&
                    (lneeded <= lvalue || (strcmp(lname, "max_elements") && strcmp(lname, "max_element_bytes") &&
                                           strcmp(lname, "max_total_bytes"))))
                    fz_die("limit %s: needed %llu, value %llu", lname, (unsigned long long)lneeded,
                           (unsigned long long)lvalue);
                r.err = rc;
                r.err_off = npzs_vlen_error_offset(p);
                r.err_elem = npzs_vlen_error_element(p);
                if (in_elem) {
                    vz_mix(&r.h, dpos);
                    vz_mix(&r.h, dcrc);
                }
                done = 1;
                break;
            }
            if (rc != NPZS_EVENT) fz_die("unexpected return %d", rc);
            if (ev.type != NPZS_VLEN_EV_DATA) vz_mix(&r.h, (uint64_t)ev.type);
            switch (ev.type) {
            case NPZS_VLEN_EV_CHUNK_BEGIN:
                count = ev.count;
                vz_mix(&r.h, count);
                break;
            case NPZS_VLEN_EV_ELEMENT_BEGIN: {
                if (in_elem || ev.index != cur || cur >= count) fz_die("ELEMENT_BEGIN out of order");
                if (ev.ndim != sp->ndim || !ev.shape) fz_die("ELEMENT_BEGIN ndim");
                uint64_t prod = sp->itemsize;
                for (uint32_t d = 1; d < ev.ndim; d++) {
                    if (ev.shape[d] != sp->dims[d]) fz_die("fixed dimension changed");
                    prod *= ev.shape[d];
                }
                if (ev.shape[0] * prod != ev.nbytes) fz_die("inferred shape does not match nbytes");
                vz_mix(&r.h, ev.index);
                vz_mix(&r.h, ev.nbytes);
                vz_mix(&r.h, ev.shape[0]);
                vz_mix(&r.h, ev.offset);
                in_elem = 1;
                dpos = 0;
                dcrc = (uint32_t)crc32(0L, Z_NULL, 0);
                break;
            }
            case NPZS_VLEN_EV_DATA:
                if (!in_elem || ev.index != cur) fz_die("DATA outside its element");
                if (!ev.len || !ev.data || !ev.zero_copy) fz_die("empty or copied DATA");
                if (ev.data < copy || ev.len > take || ev.data + ev.len > copy + take)
                    fz_die("DATA outside the pushed buffer");
                if (ev.pos != dpos) fz_die("DATA pos not contiguous");
                if (ev.offset != off + (size_t)(ev.data - copy)) fz_die("DATA offset");
                for (size_t i = 0; i < ev.len; i++) sink ^= ev.data[i];
                dcrc = (uint32_t)crc32(dcrc, ev.data, (uInt)ev.len);
                dpos += ev.len;
                break;
            case NPZS_VLEN_EV_ELEMENT_END:
                if (!in_elem || ev.index != cur) fz_die("ELEMENT_END out of order");
                if (ev.nbytes != dpos || ev.crc32 != dcrc) fz_die("ELEMENT_END nbytes/crc != DATA bytes");
                vz_mix(&r.h, ev.crc32);
                vz_mix(&r.h, ev.offset);
                in_elem = 0;
                cur++;
                r.elems++;
                break;
            case NPZS_VLEN_EV_END: {
                if (!finished || cur != count || ev.count != count || ev.offset != n) fz_die("END");
                npzs_vlen_event e2;
                if (npzs_vlen_next(p, NULL, &e2) != NPZS_DONE) fz_die("no NPZS_DONE after END");
                r.accepted = 1;
                done = 1;
                break;
            }
            default: fz_die("unknown event type %d", (int)ev.type);
            }
            if (done) break;
        }
        off += in.pos;
        free(copy);
        if (finished && !done) fz_die("no verdict after finish");
    }
    (void)sink;
    fz_vlen_visited_all |= npzs_vlen__visited(p);
    npzs_vlen_free(p);
    if (ac.live) fz_die("allocation leak");
    return r;
}

static uint32_t rd32(const uint8_t *b) {
    return (uint32_t)b[0] | ((uint32_t)b[1] << 8) | ((uint32_t)b[2] << 16) | ((uint32_t)b[3] << 24);
}

/* Reference: the whole buffer at once, no streaming. */
static vz_res vz_ref(const npzs_vlen_spec *sp, const npzs_vlen_limits *l, const uint8_t *d, size_t n) {
    vz_res r;
    memset(&r, 0, sizeof r);
    r.err_elem = -1;
    if (n < 4) {
        r.err = NPZS_E_TRUNCATED;
        return r;
    }
    uint32_t count = rd32(d);
    if (count > l->max_elements || 4 + 4 * (uint64_t)count > l->max_total_bytes) {
        r.err = NPZS_E_LIMIT;
        return r;
    }
    uint64_t pos = 4;
    for (uint32_t i = 0; i < count; i++) {
        r.err_off = pos;
        r.err_elem = (long)i;
        if (pos + 4 > n) {
            r.err = NPZS_E_TRUNCATED;
            return r;
        }
        uint32_t len = rd32(d + pos);
        if (len % sp->row_bytes) {
            r.err = NPZS_E_SIZE_MISMATCH;
            return r;
        }
        if (len > l->max_element_bytes) {
            r.err = NPZS_E_LIMIT;
            return r;
        }
        if (pos + 4 + len + 4 * (uint64_t)(count - i - 1) > l->max_total_bytes) {
            r.err = NPZS_E_LIMIT;
            return r;
        }
        if (pos + 4 + len > n) {
            r.err = NPZS_E_TRUNCATED;
            r.elems = i;
            return r;
        }
        pos += 4 + (uint64_t)len;
        r.elems = i + 1;
    }
    r.err_elem = -1;
    r.err_off = pos;
    if (pos < n) {
        r.err = NPZS_E_TRAILING_DATA;
        return r;
    }
    r.accepted = 1;
    r.err_off = 0;
    return r;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
    if (size < 3) return 0;
    unsigned ctl = data[0], arg = data[1];
    const uint8_t *rest = data + 2;
    size_t rn = size - 2;
    char pat[101];
    const uint8_t *chunk;
    size_t cn;
    if (rest[0] < 0x20) {
        strcpy(pat, patterns[rest[0] % 8]);
        chunk = rest + 1;
        cn = rn - 1;
    } else {
        size_t i = 0;
        while (i < rn && i < 100 && rest[i]) i++;
        memcpy(pat, rest, i);
        pat[i] = 0;
        if (i < rn && rest[i] == 0) i++;
        chunk = rest + i;
        cn = rn - i;
    }
    const char *dt = dtype_names[ctl & 15];
    npzs_vlen_spec sp;
    size_t at = 0;
    const char *why = NULL;
    int rc = npzs_vlen_spec_parse(&sp, dt, pat, &at, &why);
    if (rc < 0) {
        if (!why || !*why) fz_die("spec error without a message");
        if (at > strlen(rc == NPZS_E_VLEN_BAD_DTYPE ? dt : pat)) fz_die("spec error offset past the string");
        if (rc != NPZS_E_BAD_SHAPE && rc != NPZS_E_SIZE_OVERFLOW && rc != NPZS_E_VLEN_BAD_DTYPE)
            fz_die("unexpected spec error %d", rc);
        return 0;
    }
    if (sp.ndim < 1 || sp.ndim > NPZS_VLEN_MAX_NDIM || sp.row_bytes == 0) fz_die("bad spec accepted");

    npzs_vlen_limits lim;
    npzs_vlen_limits_default(&lim);
    switch ((ctl >> 4) & 3) {
    case 1:
        lim.max_elements = 4;
        lim.max_element_bytes = 64;
        lim.max_total_bytes = 256;
        break;
    case 2: lim.max_total_bytes = 4 + arg; break;
    case 3:
        lim.max_elements = arg;
        lim.max_element_bytes = 8 * arg;
        break;
    default: break;
    }

    /* allocation failure: NULL, nothing leaked */
    vz_alloc ac = {0, 0, 0};
    npzs_allocator al = {vz_alloc_fn, vz_free_fn, &ac};
    if (npzs_vlen_new(&sp, &lim, &al) != NULL || ac.live) fz_die("failing allocator did not give NULL");

    vz_res whole = vz_run(&sp, &lim, chunk, cn, -1, arg);
    vz_res split = vz_run(&sp, &lim, chunk, cn, (int)(ctl >> 6), arg);
    if (whole.accepted != split.accepted || whole.err != split.err || whole.err_off != split.err_off ||
        whole.err_elem != split.err_elem || whole.h != split.h || whole.elems != split.elems)
        fz_die("split run differs: err %d/%d off %llu/%llu elem %ld/%ld", whole.err, split.err,
               (unsigned long long)whole.err_off, (unsigned long long)split.err_off, whole.err_elem, split.err_elem);
    vz_res ref = vz_ref(&sp, &lim, chunk, cn);
    if (ref.accepted != whole.accepted || ref.err != whole.err || ref.err_off != whole.err_off ||
        ref.err_elem != whole.err_elem || ref.elems != whole.elems)
        fz_die("reference decoder differs: err %d/%d off %llu/%llu elem %ld/%ld elems %u/%u", ref.err, whole.err,
               (unsigned long long)ref.err_off, (unsigned long long)whole.err_off, ref.err_elem, whole.err_elem,
               (unsigned)ref.elems, (unsigned)whole.elems);
    return 0;
}
