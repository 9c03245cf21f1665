/*
 * vlen.c -- streaming parser for numcodecs VLenBytes framing holding ragged
 * little-endian arrays (Zarr vlen-ndarray).  See include/npzstream_vlen.h.
 *
 *   chunk   := count:u32le element{count}
 *   element := nbytes:u32le byte{nbytes}      nbytes % row_bytes == 0
 *
 * The machine stages only the 4-byte fields; element bytes are handed out
 * zero copy.  All state is in one fixed-size struct.  What an element is (its
 * dtype, its fixed dimensions: the spec) comes from spec.c.  It sees no
 * npzstream parser: the public headers, base/ and bytes/ only.
 */
#include <stdlib.h>
#include <string.h>

#include "npzstream_vlen.h"
#include "spec.h"
#include "../base/base.h"
#include "../bytes/bytes.h"

#ifdef NPZS_INTERNAL_H
#error "vlen/ sees no npzstream parser (internal.h)"
#endif

#define API NPZS__API

/* The states, in one list: (name, what it waits for). */
#define VLEN_STATE_MAP(X) \
    X(V_COUNT, "staging the count") \
    X(V_LEN, "staging element idx's length") \
    X(V_DATA, "element idx's bytes") \
    X(V_ELEM_END, "emit ELEMENT_END") \
    X(V_TAIL, "after the last element: wait for the end of input") \
    X(V_DONE, "END delivered") \
    X(V_FAILED, "sticky error")

enum vstate {
    V__BASE = 0,
#define X(name, doc) name,
    VLEN_STATE_MAP(X)
#undef X
        V__END
};

#ifdef NPZS_TESTING
static const char *const vstate_ids[] = {
#define X(name, doc) #name,
    VLEN_STATE_MAP(X)
#undef X
};

/* Test hooks (the fuzzers' state gate): the states reached (bit s-1 for state s), their names and
 * number. */
uint32_t npzs_vlen__visited(const npzs_vlen_parser *p);
const char *npzs_vlen__state_id(int i);
int npzs_vlen__nstates(void);
#endif

struct npzs_vlen_parser {
    npzs_vlen_spec spec;
    npzs_vlen_limits lim;
    npzs_allocator al;
    int state;
    int finished;
    uint64_t consumed; /* absolute offset of the next input byte */
    uint8_t stage[4];
    unsigned stage_len;
    uint64_t field_off; /* offset of the field being staged / of the current element's length */
    uint32_t count;
    uint32_t idx;     /* current element */
    uint32_t cur_len; /* its byte length */
    uint32_t cur_pos; /* its bytes seen */
    uint32_t crc;
    uint64_t total_bytes;
    uint64_t shape[NPZS_VLEN_MAX_NDIM];
    uint32_t visited; /* states reached */
    /* sticky error */
    int err;
    uint64_t err_off;
    const char *err_msg;
    long err_elem;
    /* a limit's numbers (npzs_vlen_error_limit): its name, its value in force, what the chunk declared */
    npzs__limit_hit err_lim;
};

/* ---- errors ------------------------------------------------------------------ */
API const char *npzs_vlen_error_name(int code) {
    switch (code) {
#define X(id, num, name, msg) \
    case num: return name;
        NPZS_VLEN_ERROR_MAP(X)
#undef X
    default: return npzs_error_name(code);
    }
}

API const char *npzs_vlen_strerror(int code) {
    switch (code) {
#define X(id, num, name, msg) \
    case num: return msg;
        NPZS_VLEN_ERROR_MAP(X)
#undef X
    default: return npzs_strerror(code);
    }
}

static int vfail(npzs_vlen_parser *p, int code, uint64_t off, long elem, const char *msg) {
    if (p->err) return p->err;
    p->err = code;
    p->err_off = off;
    p->err_elem = elem;
    p->err_msg = msg ? msg : npzs_vlen_strerror(code);
    p->state = V_FAILED;
    p->visited |= 1u << (V_FAILED - 1);
    return code;
}

/* A limit rejection: vfail, with the limit's name, its value and what the chunk declared. */
static int vlimit(npzs_vlen_parser *p, uint64_t off, long elem, const char *msg, const char *name, uint64_t value,
                  uint64_t needed) {
    if (!p->err) { p->err_lim = (npzs__limit_hit){name, value, needed}; }
    return vfail(p, NPZS_E_LIMIT, off, elem, msg);
}

#ifdef NPZS_TESTING
uint32_t npzs_vlen__visited(const npzs_vlen_parser *p) { return p->visited; }
const char *npzs_vlen__state_id(int i) { return i >= 0 && i < V__END - 1 ? vstate_ids[i] : NULL; }
int npzs_vlen__nstates(void) { return V__END - 1; }
#endif

API int npzs_vlen_error(const npzs_vlen_parser *p) { return p ? p->err : NPZS_E_BAD_CALL; }
API uint64_t npzs_vlen_error_offset(const npzs_vlen_parser *p) { return p && p->err ? p->err_off : 0; }
API const char *npzs_vlen_error_message(const npzs_vlen_parser *p) { return p && p->err ? p->err_msg : "no error"; }
API long npzs_vlen_error_element(const npzs_vlen_parser *p) { return p && p->err ? p->err_elem : -1; }
API int npzs_vlen_error_limit(const npzs_vlen_parser *p, const char **name, uint64_t *value, uint64_t *needed) {
    return npzs__limit_out(p && p->err ? &p->err_lim : NULL, name, value, needed);
}
API uint64_t npzs_vlen_consumed(const npzs_vlen_parser *p) { return p ? p->consumed : 0; }

/* ---- parser ------------------------------------------------------------------------ */
API void npzs_vlen_limits_default(npzs_vlen_limits *lim) {
    if (!lim) return;
    memset(lim, 0, sizeof *lim);
    lim->max_elements = UINT32_MAX;
    lim->max_element_bytes = UINT32_MAX;
    lim->max_total_bytes = UINT64_C(1) << 40;
}


API void npzs_vlen_reset(npzs_vlen_parser *p) {
    if (!p) return;
    p->state = V_COUNT;
    p->finished = 0;
    p->consumed = 0;
    p->stage_len = 0;
    p->field_off = 0;
    p->count = p->idx = p->cur_len = p->cur_pos = p->crc = 0;
    p->total_bytes = 0;
    memcpy(p->shape, p->spec.dims, sizeof p->shape);
    p->err = 0;
    p->err_off = 0;
    p->err_msg = NULL;
    p->err_lim = (npzs__limit_hit){NULL, 0, 0};
    p->err_elem = -1;
}

API npzs_vlen_parser *npzs_vlen_new(const npzs_vlen_spec *spec, const npzs_vlen_limits *lim,
                                    const npzs_allocator *alloc) {
    npzs_allocator al = npzs__malloc;
    if (!spec || !npzs__vlen_spec_valid(spec)) return NULL;
    if (alloc) {
        if (!alloc->alloc || !alloc->free) return NULL;
        al = *alloc;
    }
    npzs_vlen_limits l;
    if (lim) l = *lim;
    else npzs_vlen_limits_default(&l);
    if (l.max_total_bytes < 4) return NULL;
    npzs_vlen_parser *p = al.alloc(al.opaque, sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->spec = *spec;
    p->lim = l;
    p->al = al;
    npzs_vlen_reset(p);
    return p;
}

API void npzs_vlen_free(npzs_vlen_parser *p) {
    if (p) p->al.free(p->al.opaque, p);
}

API void npzs_vlen_finish(npzs_vlen_parser *p) {
    if (p) p->finished = 1;
}


/* Stage up to 4 bytes of a field.  Returns 1 when complete. */
static int stage(npzs_vlen_parser *p, const uint8_t *src, npzs_in *in, size_t *avail) {
    while (p->stage_len < 4 && *avail) {
        p->stage[p->stage_len++] = src[in->pos++];
        (*avail)--;
        p->consumed++;
    }
    return p->stage_len == 4;
}

/* The count is complete: check it, emit CHUNK_BEGIN. */
static int on_count(npzs_vlen_parser *p, npzs_vlen_event *ev) {
    p->count = npzs__le32(p->stage);
    p->stage_len = 0;
    if (p->count > p->lim.max_elements)
        return vlimit(p, 0, -1, "element count larger than max_elements", "max_elements", p->lim.max_elements,
                      p->count);
    if (4 + 4 * (uint64_t)p->count > p->lim.max_total_bytes)
        return vlimit(p, 0, -1, "the element count needs more bytes than max_total_bytes", "max_total_bytes",
                      p->lim.max_total_bytes, 4 + 4 * (uint64_t)p->count);
    p->idx = 0;
    p->field_off = p->consumed;
    p->state = p->count ? V_LEN : V_TAIL;
    ev->type = NPZS_VLEN_EV_CHUNK_BEGIN;
    ev->offset = 0;
    ev->count = p->count;
    return NPZS_EVENT;
}

/* Element idx's length is complete: check it, emit ELEMENT_BEGIN. */
static int on_length(npzs_vlen_parser *p, npzs_vlen_event *ev) {
    uint32_t len = npzs__le32(p->stage);
    uint64_t f = p->field_off;
    long ix = (long)p->idx;
    p->stage_len = 0;
    if (len % p->spec.row_bytes != 0)
        return vfail(p, NPZS_E_SIZE_MISMATCH, f, ix,
                     "element length is not a multiple of the fixed element size (itemsize x fixed dims)");
    if (len > p->lim.max_element_bytes)
        return vlimit(p, f, ix, "element longer than max_element_bytes", "max_element_bytes", p->lim.max_element_bytes,
                      len);
    /* f + 4 + len <= 2^32 * (count + 1) + 4: no overflow */
    uint64_t need = f + 4 + (uint64_t)len + 4 * (uint64_t)(p->count - p->idx - 1);
    if (need > p->lim.max_total_bytes)
        return vlimit(p, f, ix, "the chunk needs more bytes than max_total_bytes", "max_total_bytes",
                      p->lim.max_total_bytes, need);
    p->cur_len = len;
    p->cur_pos = 0;
    p->crc = 0;
    p->shape[0] = len / p->spec.row_bytes;
    p->state = len ? V_DATA : V_ELEM_END;
    ev->type = NPZS_VLEN_EV_ELEMENT_BEGIN;
    ev->offset = f;
    ev->index = p->idx;
    ev->nbytes = len;
    ev->ndim = p->spec.ndim;
    ev->shape = p->shape;
    return NPZS_EVENT;
}

API int npzs_vlen_next(npzs_vlen_parser *p, npzs_in *in, npzs_vlen_event *ev) {
    if (!p) return NPZS_E_BAD_CALL;
    if (!ev || (in && (in->pos > in->size || (!in->src && in->size))))
        return vfail(p, NPZS_E_BAD_CALL, p->consumed, -1, "bad argument");
    if (p->err) return p->err;
    memset(ev, 0, sizeof *ev);
    const uint8_t *src = in ? (const uint8_t *)in->src : NULL;
    size_t avail = in ? in->size - in->pos : 0;
    p->visited |= 1u << (p->state - 1);
    switch (p->state) {
    case V_COUNT:
        if (stage(p, src, in, &avail)) return on_count(p, ev);
        if (!p->finished) return NPZS_NEED_INPUT;
        return vfail(p, NPZS_E_TRUNCATED, 0, -1, p->consumed ? "input ended inside the element count" : "empty input");
    case V_LEN:
        if (p->stage_len == 0) p->field_off = p->consumed;
        if (stage(p, src, in, &avail)) return on_length(p, ev);
        if (!p->finished) return NPZS_NEED_INPUT;
        return vfail(p, NPZS_E_TRUNCATED, p->field_off, (long)p->idx,
                     p->stage_len ? "input ended inside an element's length field"
                                  : "input ended before all elements of the count");
    case V_DATA: {
        if (!avail) {
            if (!p->finished) return NPZS_NEED_INPUT;
            return vfail(p, NPZS_E_TRUNCATED, p->field_off, (long)p->idx,
                         "element length runs past the end of the input");
        }
        uint32_t left = p->cur_len - p->cur_pos;
        size_t n = avail < left ? avail : (size_t)left;
        const uint8_t *d = src + in->pos;
        /* n <= left < 2^32: one zlib call */
        p->crc = npzs__crc32(p->crc, d, n);
        ev->type = NPZS_VLEN_EV_DATA;
        ev->offset = p->consumed;
        ev->index = p->idx;
        ev->data = d;
        ev->len = n;
        ev->pos = p->cur_pos;
        ev->zero_copy = 1;
        in->pos += n;
        p->consumed += n;
        p->cur_pos += (uint32_t)n;
        if (p->cur_pos == p->cur_len) p->state = V_ELEM_END;
        return NPZS_EVENT;
    }
    case V_ELEM_END:
        ev->type = NPZS_VLEN_EV_ELEMENT_END;
        ev->offset = p->consumed;
        ev->index = p->idx;
        ev->nbytes = p->cur_len;
        ev->crc32 = p->crc;
        p->total_bytes += p->cur_len;
        p->idx++;
        p->state = p->idx < p->count ? V_LEN : V_TAIL;
        return NPZS_EVENT;
    case V_TAIL:
        if (avail) return vfail(p, NPZS_E_TRAILING_DATA, p->consumed, -1, "bytes after the last element");
        if (!p->finished) return NPZS_NEED_INPUT;
        p->state = V_DONE;
        ev->type = NPZS_VLEN_EV_END;
        ev->offset = p->consumed;
        ev->count = p->count;
        ev->total_bytes = p->total_bytes;
        return NPZS_EVENT;
    case V_DONE:
        if (avail) return vfail(p, NPZS_E_TRAILING_DATA, p->consumed, -1, "bytes after the end");
        return NPZS_DONE;
    case V_FAILED: return p->err;
    default: return vfail(p, NPZS_E_BAD_CALL, p->consumed, -1, "corrupt parser state");
    }
}
