/* tests/api/driver.c -- the API suite's driver: one input through a parser under a push schedule,
 * every event folded into a digest (run), the progress and zero-copy rules checked on the way. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api.h"

int check_paths;
long headers_seen, headers_fast;
int into_mode;
int seq_mode;
int mask_on;
unsigned ev_mask = NPZS_EV_ALL;
uint64_t direct_bytes, into_bad;

uint64_t mix(uint64_t h, const void *p, size_t n) {
    const uint8_t *b = p;
    for (size_t i = 0; i < n; i++) {
        h ^= b[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

/* ---- the structured dtype's tree ---- */

/* The tree's invariants, checked on every header met: node 0 is the top-level struct and has
 * the array's itemsize; a subarray's element type comes before it and the product of its shape
 * times that type's size is its size; a field's type comes after its struct and lies inside it;
 * every field of every struct is listed once; a scalar's type string is NumPy's dtype.str.
 * 0 when they hold (the digest of the tree in *h), else a line saying which does not. */
const char *tree_check(const npzs_array_info *a, uint64_t *h) {
    if (!a->structured) return a->dt_nodes || a->dt_nnodes || a->dt_nfields ? "tree on a plain dtype" : NULL;
    const npzs_dtnode *n = a->dt_nodes;
    if (!n || a->dt_nnodes == 0) return "no tree";
    if (n[0].kind != NPZS_DT_STRUCT || n[0].itemsize != a->itemsize) return "node 0 is not the array's struct";
    uint64_t listed = 0;
    for (uint32_t k = 0; k < a->dt_nnodes; k++) {
        const npzs_dtnode *t = &n[k];
        MIXV(*h, t->kind);
        MIXV(*h, t->itemsize);
        if (t->kind == NPZS_DT_SCALAR) {
            if (!t->dtype || strlen(t->dtype) < 3) return "scalar without a type string";
            *h = mix(*h, t->dtype, strlen(t->dtype));
            char c = t->dtype[1];
            uint64_t w = strtoull(t->dtype + 2, NULL, 10);
            if (c == 'U') w *= 4;
            if (strchr("SUV", c) && w != t->itemsize) return "a string's width is not its size";
        } else if (t->kind == NPZS_DT_SUBARRAY) {
            if (t->base >= k || t->ndim == 0 || !t->shape) return "subarray base not before it";
            uint64_t sz = n[t->base].itemsize;
            for (uint32_t d = 0; d < t->ndim; d++) {
                sz *= t->shape[d];
                MIXV(*h, t->shape[d]);
            }
            if (sz != t->itemsize) return "subarray size is not shape times base";
        } else if (t->kind == NPZS_DT_STRUCT) {
            if ((uint64_t)t->first + t->count > a->dt_nfields) return "struct's fields out of range";
            for (uint32_t f = t->first; f < t->first + t->count; f++) {
                const npzs_dtfield *fd = &a->dt_fields[f];
                if (fd->type <= k || fd->type >= a->dt_nnodes) return "field type not after its struct";
                if (fd->offset + n[fd->type].itemsize > t->itemsize) return "field outside its struct";
                if (!fd->name || (!fd->title && fd->title_len)) return "a field's name or title";
                *h = mix(*h, fd->name, fd->name_len);
                if (fd->title) *h = mix(*h, fd->title, fd->title_len);
                MIXV(*h, fd->offset);
                MIXV(*h, fd->type);
            }
            listed += t->count;
        } else return "unknown node kind";
    }
    return listed == a->dt_nfields ? NULL : "a field listed twice or never";
}

/* Everything a header says, hashed; *why set when its dtype tree is inconsistent. */
uint64_t info_hash(const npzs_array_info *a, const char **why) {
    uint64_t h = 0xcbf29ce484222325ULL;
    h = mix(h, a->dtype, strlen(a->dtype));
    h = mix(h, a->descr, a->descr_len);
    h = mix(h, a->header, a->header_size);
    h = mix(h, a->shape, a->ndim * sizeof *a->shape);
    MIXV(h, a->nbytes);
    MIXV(h, a->fortran_order);
    MIXV(h, a->version_major);
    MIXV(h, a->header_len);
    *why = tree_check(a, &h);
    return h;
}

/* One input through parser p, pushed as sched says; the parser is left as the input left it. */
run drive(npzs_parser *p, const uint8_t *buf, size_t len, const size_t *sched, size_t nsched) {
    run r;
    memset(&r, 0, sizeof r);
    r.h = 0xcbf29ce484222325ULL;
    r.progress_ok = r.zero_copy_ok = 1;
    size_t off = 0, k = 0;
    int data_stream_member = -1;
    uint64_t data_h = 0x84222325ULL;
    uint8_t *dst = NULL;
    uint64_t dst_len = 0;
    uint64_t header_h = 0; /* info_hash of the last HEADER event */
    for (;;) {
        size_t n = len - off;
        if (nsched) {
            size_t s = sched[k++ % nsched];
            if (n > s) n = s;
        }
        uint8_t *copy = malloc(n ? n : 1);
        memcpy(copy, buf + off, n);
        npzs_in in = {n ? copy : NULL, n, 0}; /* an empty push may come without a buffer */
        int fin = off + n == len;
        if (fin) npzs_finish(p);
        int stop = 0;
        for (;;) {
            npzs_event ev;
            int rc = npzs_next(p, &in, &ev);
            if (rc == NPZS_NEED_INPUT) {
                if (in.pos != in.size || fin) {
                    r.progress_ok = 0;
                    stop = 1;
                }
                break;
            }
            if (rc == NPZS_EVENT) {
                r.events++;
                if (!(((ev_mask | NPZS_EV_BIT(NPZS_EV_END)) >> ev.type) & 1u)) {
                    if (mask_on) r.progress_ok = 0; /* delivered, though not asked for */
                    continue;
                }
                if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) {
                    if (ev.zero_copy && !(ev.data >= copy && ev.data + ev.len <= copy + n)) r.zero_copy_ok = 0;
                    if (dst && (ev.type != NPZS_EV_DATA || ev.data != dst + ev.pos || ev.pos + ev.len > dst_len ||
                                ev.zero_copy))
                        into_bad++;
                    for (size_t i = 0; i < ev.len; i++) data_h = (data_h ^ ev.data[i]) * 0x100000001b3ULL;
                    if (data_stream_member != (int)ev.member) data_stream_member = (int)ev.member;
                    continue;
                }
                if (ev.type == NPZS_EV_MEMBER_END) {
                    MIXV(r.h, data_h);
                    data_h = 0;
                    data_stream_member = -1;
                    if (dst) direct_bytes += p->c.out_direct;
                    free(dst);
                    dst = NULL;
                }
                MIXV(r.h, ev.type);
                MIXV(r.h, ev.member);
                if (ev.type == NPZS_EV_MEMBER_BEGIN) {
                    if (ev.name) r.h = mix(r.h, ev.name, ev.name_len);
                    MIXV(r.h, ev.method);
                    MIXV(r.h, ev.offset);
                } else if (ev.type == NPZS_EV_HEADER) {
                    const npzs_array_info *a = ev.array;
                    if (check_paths) { /* aborts, with both results, when the paths disagree */
                        size_t pre = a->version_major == 1 ? 10 : 12;
                        headers_seen++;
                        headers_fast += fz_header_paths(a->header + pre, a->header_size - pre, a->version_major == 3);
                    }
                    if (a->header_size != a->header_len) r.progress_ok = 0;
                    const char *why = NULL;
                    header_h = info_hash(a, &why);
                    MIXV(r.h, header_h);
                    if (why) {
                        r.progress_ok = 0;
                        printf("  dtype tree: %s\n", why);
                    }
                    if (into_mode && a->nbytes <= (UINT64_C(1) << 28)) {
                        dst_len = a->nbytes;
                        dst = malloc(a->nbytes ? (size_t)a->nbytes : 1);
                        if (npzs_data_into(p, dst, (size_t)a->nbytes) != 0) into_bad++;
                        if (!a->nbytes) {
                            free(dst);
                            dst = NULL;
                        }
                    }
                } else if (ev.type == NPZS_EV_MEMBER_END) {
                    /* an array's MEMBER_END points at its header again: the HEADER event's, when it came */
                    const char *why = NULL;
                    uint64_t ah = ev.array ? info_hash(ev.array, &why) : 0;
                    if ((ev.array != NULL) != (ev.kind == NPZS_KIND_ARRAY) || why ||
                        (ev.array && ((ev_mask >> NPZS_EV_HEADER) & 1u) && ah != header_h))
                        r.progress_ok = 0;
                    MIXV(r.h, ah);
                    MIXV(r.h, ev.size);
                    MIXV(r.h, ev.csize);
                    MIXV(r.h, ev.crc32);
                    MIXV(r.h, ev.data_crc32);
                    MIXV(r.h, ev.offset);
                } else if (ev.type == NPZS_EV_END) {
                    MIXV(r.h, ev.members);
                    MIXV(r.h, ev.offset);
                    r.verdict = 1;
                    stop = 1;
                    break;
                }
                continue;
            }
            if (rc == NPZS_DONE) {
                r.progress_ok = 0;
                stop = 1;
                break;
            }
            r.verdict = rc;
            r.err_off = npzs_error_offset(p);
            r.err_member = npzs_error_member(p);
            const char *rule = npzs_error_rule(p); /* the rule and content offset are compared too */
            if (rule) r.h = mix(r.h, rule, strlen(rule));
            uint64_t coff = npzs_error_content_offset(p);
            MIXV(r.h, coff);
            npzs_event ev2;
            if (npzs_next(p, &in, &ev2) != rc) r.progress_ok = 0; /* sticky */
            stop = 1;
            break;
        }
        off += in.pos;
        free(copy);
        if (stop) break;
    }
    free(dst);
    return r;
}

/* One input through a new parser (limits lim; cnt's hooks when given; the mask and sequence switches
 * above): its digest, or NPZS_E_NOMEM when the parser cannot be made. */
run parse(const uint8_t *buf, size_t len, const size_t *sched, size_t nsched, const npzs_limits *lim,
          check_alloc *cnt) {
    npzs_allocator al = {check_malloc, check_free, cnt};
    npzs_parser *p = npzs_new(lim, cnt ? &al : NULL);
    if (p && mask_on && npzs_events(p, ev_mask) != 0) {
        npzs_free(p);
        p = NULL;
    }
    if (p && seq_mode && npzs_npy_sequence(p) != 0) {
        npzs_free(p);
        p = NULL;
    }
    if (!p) {
        run r;
        memset(&r, 0, sizeof r);
        r.verdict = NPZS_E_NOMEM;
        return r;
    }
    run r = drive(p, buf, len, sched, nsched);
    npzs_free(p);
    return r;
}

int same(const run *a, const run *b) {
    return a->h == b->h && a->verdict == b->verdict && a->err_off == b->err_off && a->err_member == b->err_member;
}

static uint64_t rng = 0x9E3779B97F4A7C15ULL;
size_t rnd(size_t n) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return n ? (size_t)(rng % n) : 0;
}

/* A .npy of version `version`.0 (1, 2 or 3) of the header text `t` (padded as NumPy pads) and `data`
 * zero bytes; free() it.  npy_of: version 1.0. */
uint8_t *npy_v(const char *t, int version, size_t data, size_t *len) {
    size_t pre = version == 1 ? 10 : 12, n = strlen(t), pad = (64 - (pre + n + 1) % 64) % 64, hl = n + pad + 1;
    uint8_t *f = calloc(1, pre + hl + data);
    memcpy(f, "\x93NUMPY\x01\x00", 8);
    f[6] = (uint8_t)version;
    for (size_t k = 8; k < pre; k++) f[k] = (uint8_t)(hl >> (8 * (k - 8)));
    memcpy(f + pre, t, n);
    memset(f + pre + n, ' ', pad);
    f[pre + n + pad] = '\n';
    *len = pre + hl + data;
    return f;
}

uint8_t *npy_of(const char *t, size_t data, size_t *len) { return npy_v(t, 1, data, len); }
