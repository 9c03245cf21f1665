/* npzs.c -- public API, errors, allocation, and the top-level driver. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#if defined(__GNUC__)
#define API __attribute__((visibility("default")))
#else
#define API
#endif

/* ---- errors -------------------------------------------------------------- */
API const char *npzs_error_name(int code) {
    switch (code) {
#define X(id, num, name, msg) case num: return name;
        NPZS_ERROR_MAP(X)
#undef X
    default: return "unknown";
    }
}

API const char *npzs_strerror(int code) {
    switch (code) {
#define X(id, num, name, msg) case num: return msg;
        NPZS_ERROR_MAP(X)
#undef X
    case 0: return "no error";
    default: return "unknown error";
    }
}

static const char *const rule_ids[] = {
    NULL,
#define X(name, id, msg) id,
    NPZS_RULE_MAP(X)
#undef X
};
static const char *const rule_msgs[] = {
    NULL,
#define X(name, id, msg) msg,
    NPZS_RULE_MAP(X)
#undef X
};

const char *npzs__rule_id(int rule) { return rule > 0 && rule < NPZS_R__END ? rule_ids[rule] : NULL; }

int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule) {
    if (p->err) return p->err; /* the first error stays */
    p->err = code;
    p->err_off = off;
    p->err_rule = rule;
    p->err_msg = rule > 0 && rule < NPZS_R__END ? rule_msgs[rule] : npzs_strerror(code);
    p->err_coff = NPZS_NO_OFFSET;
    p->err_member = (p->format == NPZS_FORMAT_NPY) ? 0 : -1;
    if (p->format == NPZS_FORMAT_NPZ && p->state >= NPZS_S_ZIP_LFH && p->state <= NPZS_S_ZIP_MEMBER_END)
        p->err_member = (long)p->cur;
    if (p->format == NPZS_FORMAT_NPZ && p->state >= NPZS_S_ZIP_CDH && p->state <= NPZS_S_ZIP_CDH_COMMENT &&
        p->cd_count < p->members)
        p->err_member = (long)p->cd_count;
    p->state = NPZS_S_FAILED;
    NPZS_VISIT(p, NPZS_S_FAILED);
    return code;
}

API int npzs_error(const npzs_parser *p) { return p ? p->err : NPZS_E_BAD_CALL; }
API uint64_t npzs_error_offset(const npzs_parser *p) { return p ? p->err_off : 0; }
API const char *npzs_error_message(const npzs_parser *p) {
    return p && p->err ? p->err_msg : "no error";
}
API const char *npzs_error_rule(const npzs_parser *p) { return p && p->err ? npzs__rule_id(p->err_rule) : NULL; }
API long npzs_error_member(const npzs_parser *p) { return p && p->err ? p->err_member : -1; }
API uint64_t npzs_error_content_offset(const npzs_parser *p) {
    return p && p->err ? p->err_coff : NPZS_NO_OFFSET;
}
API const char *npzs_error_member_name(const npzs_parser *p, size_t *len) {
    if (len) *len = 0;
    if (!p || !p->err || p->err_member < 0 || p->format != NPZS_FORMAT_NPZ) return NULL;
    uint32_t m = (uint32_t)p->err_member;
    if (m < p->members) { /* recorded */
        const npzs_record *r = npzs__rec(p, m);
        if (len) *len = r->name_len;
        return (const char *)r->name;
    }
    if (m == p->members && p->name_ready) {
        /* the member whose local header was being read: its name if complete */
        if (len) *len = p->l_name_len;
        return (const char *)p->name;
    }
    return NULL;
}

API npzs_format npzs_format_of(const npzs_parser *p) { return p ? p->format : NPZS_FORMAT_UNKNOWN; }
API uint64_t npzs_consumed(const npzs_parser *p) { return p ? p->consumed : 0; }
API uint64_t npzs_ignored_bytes(const npzs_parser *p) { return p ? p->ignored : 0; }

static const char *const state_ids[] = {
#define X(name, doc) #name,
    NPZS_STATE_MAP(X)
#undef X
};
static const char *const state_docs[] = {
#define X(name, doc) doc,
    NPZS_STATE_MAP(X)
#undef X
};
static const char *const cstate_ids[] = {
#define X(name, doc) #name,
    NPZS_CSTATE_MAP(X)
#undef X
};

const char *npzs__state_id(int i) { return i >= 0 && i < NPZS_NSTATES ? state_ids[i] : NULL; }
const char *npzs__state_doc(int i) { return i >= 0 && i < NPZS_NSTATES ? state_docs[i] : NULL; }
const char *npzs__cstate_id(int i) { return i >= 0 && i < NPZS_NCSTATES ? cstate_ids[i] : NULL; }
uint64_t npzs__visited(const npzs_parser *p) { return p->visited; }
uint32_t npzs__cvisited(const npzs_parser *p) { return p->cvisited; }

API const char *npzs_state_name(const npzs_parser *p) {
    if (!p || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return "INVALID";
    return state_ids[p->state - NPZS_S__BASE - 1];
}

/* ---- allocation ------------------------------------------------------------ */
void *npzs__alloc(npzs_parser *p, size_t n) {
    if (n == 0) n = 1;
    return p->al.alloc(p->al.opaque, n);
}
void npzs__free(npzs_parser *p, void *ptr) {
    if (ptr) p->al.free(p->al.opaque, ptr);
}
static void *def_alloc(void *o, size_t n) { (void)o; return malloc(n); }
static void def_free(void *o, void *ptr) { (void)o; free(ptr); }

static void limits_default(npzs_limits *lim) {
    memset(lim, 0, sizeof *lim);
    lim->max_header_size = 10000;
    lim->max_ndim = 32;
    lim->max_fields = 100000;
    lim->max_depth = 32;
    lim->max_members = 100000;
    lim->max_name_len = 4096;
    lim->max_extra_len = 65535;
    lim->max_total_bytes = UINT64_C(1) << 40;
    lim->inflate_window = 256 * 1024;
}

/* The size of npzs_limits in 0.1.0 (up to inflate_window), which the unversioned entry points
 * npzs_new and npzs_limits_default of 0.1.0 binaries read and write. */
#define LIMITS_V010 (offsetof(npzs_limits, inflate_window) + sizeof(uint32_t))

API unsigned long npzs_version(void) { return NPZS_VERSION_NUM; }

API void npzs_limits_default_(npzs_limits *lim, size_t size) {
    if (!lim || size < LIMITS_V010) return;
    npzs_limits d;
    limits_default(&d);
    memcpy(lim, &d, size < sizeof d ? size : sizeof d);
}

#undef npzs_limits_default
API void npzs_limits_default(npzs_limits *lim) { npzs_limits_default_(lim, LIMITS_V010); }

API npzs_parser *npzs_new_(const npzs_limits *lim, size_t lim_size, const npzs_allocator *alloc) {
    npzs_allocator al = {def_alloc, def_free, NULL};
    if (alloc) {
        if (!alloc->alloc || !alloc->free) return NULL;
        al = *alloc;
    }
    npzs_limits l;
    limits_default(&l);
    if (lim) {
        if (lim_size < LIMITS_V010 || lim_size > sizeof l) return NULL;
        memcpy(&l, lim, lim_size);
    }
    if (l.max_header_size == 0 || l.max_header_size > (UINT64_C(1) << 30) || l.max_ndim > NPZS_MAX_NDIM ||
        l.max_fields == 0 || l.max_depth == 0 || l.max_depth > 1000 || l.max_members == 0 ||
        l.max_members > UINT32_C(0x7FFFFFFF) || l.max_name_len == 0 || l.max_name_len > 65535 ||
        l.max_extra_len > 65535 || l.inflate_window == 0 ||
        (l.lenient & ~(uint32_t)(NPZS_LENIENT_NPY_TRAILING | NPZS_LENIENT_HEADER_NEWLINE)))
        return NULL;
    npzs_parser *p = al.alloc(al.opaque, sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->al = al;
    p->lim = l;
    p->state = NPZS_S_START;
    p->err_member = -1;
    p->err_coff = NPZS_NO_OFFSET;
    npzs__names_seed(p);
    return p;
}

#undef npzs_new
API npzs_parser *npzs_new(const npzs_limits *lim, const npzs_allocator *alloc) {
    return npzs_new_(lim, LIMITS_V010, alloc);
}

API void npzs_free(npzs_parser *p) {
    if (!p) return;
    npzs__content_release(p);
    npzs__zip_release(p);
    p->al.free(p->al.opaque, p);
}

API void npzs_finish(npzs_parser *p) {
    if (p) p->finished = 1;
}

/* ---- driver ------------------------------------------------------------------ */

static int npy_step(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    const uint8_t *src = in ? (const uint8_t *)in->src : NULL;
    size_t avail = in ? in->size - in->pos : 0;
    for (;;) {
        NPZS_VISIT(p, p->state);
        switch (p->state) {
        case NPZS_S_NPY_CONTENT: {
            if (p->c.state == NPZS_C_DONE) { p->state = NPZS_S_NPY_MEMBER_END; continue; }
            if (!avail) {
                if (!p->finished) return NPZS_NEED_INPUT;
                int rc = npzs__content_end(p, ev);
                if (rc == NPZS_EVENT) { ev->member = 0; return rc; }
                if (rc < 0) return rc;
                continue;
            }
            size_t used = 0;
            int rc = npzs__content_feed(p, src + in->pos, avail, 1, &used, ev);
            in->pos += used;
            avail -= used;
            p->consumed += used;
            if (rc == NPZS_EVENT) {
                ev->member = 0;
                return rc;
            }
            if (rc < 0) return rc;
            continue;
        }
        case NPZS_S_NPY_MEMBER_END:
            p->total_out += p->c.head_len + p->c.data_len;
            p->state = NPZS_S_NPY_TAIL;
            ev->type = NPZS_EV_MEMBER_END;
            ev->member = 0;
            ev->offset = p->consumed;
            ev->kind = NPZS_KIND_ARRAY;
            ev->size = ev->csize = p->c.head_len + p->c.data_len;
            ev->data_size = p->c.data_len;
            ev->data_crc32 = p->c.crc_data;
            ev->crc32 = npzs__crc32_combine(p->c.crc_head, p->c.crc_data, p->c.data_len);
            return NPZS_EVENT;
        case NPZS_S_NPY_TAIL:
            if (avail && (p->lim.lenient & NPZS_LENIENT_NPY_TRAILING)) { /* consumed, never read */
                in->pos += avail;
                p->consumed += avail;
                p->ignored += avail;
                avail = 0;
            }
            if (avail)
                return npzs__fail(p, NPZS_E_TRAILING_DATA, p->consumed, NPZS_R_NPY_TRAIL);
            if (!p->finished) return NPZS_NEED_INPUT;
            p->state = NPZS_S_END_EMIT;
            return NPZS__CONTINUE;
        default:
            return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_STATE);
        }
    }
}

static int trail_rule(const npzs_parser *p) {
    return p->format == NPZS_FORMAT_NPY ? NPZS_R_NPY_TRAIL_AFTER_END : NPZS_R_ZIP_TRAIL_AFTER_END;
}

API int npzs_next(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (!p || !ev || (in && (in->pos > in->size || (!in->src && in->size))))
        return p ? npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_ARG) : NPZS_E_BAD_CALL;
    if (p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    memset(ev, 0, sizeof *ev);
    size_t avail = in ? in->size - in->pos : 0;
    for (;;) {
        NPZS_VISIT(p, p->state);
        switch (p->state) {
        case NPZS_S_START:
            if (!avail) {
                if (!p->finished) return NPZS_NEED_INPUT;
                return npzs__fail(p, NPZS_E_TRUNCATED, 0, NPZS_R_TRUNC_EMPTY);
            }
            {
                uint8_t b = ((const uint8_t *)in->src)[in->pos];
                if (b == 0x93) {
                    p->format = NPZS_FORMAT_NPY;
                    npzs__content_start(p, 1, 1, 0, 0);
                    p->state = NPZS_S_NPY_CONTENT;
                    ev->type = NPZS_EV_MEMBER_BEGIN;
                    ev->member = 0;
                    ev->offset = 0;
                    ev->method = NPZS_METHOD_STORED;
                    return NPZS_EVENT;
                }
                if (b == 'P') {
                    p->format = NPZS_FORMAT_NPZ;
                    p->state = NPZS_S_ZIP_SIG;
                    continue;
                }
                return npzs__fail(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_FIRST);
            }
        case NPZS_S_NPY_CONTENT:
        case NPZS_S_NPY_MEMBER_END:
        case NPZS_S_NPY_TAIL: {
            int rc = npy_step(p, in, ev);
            if (rc != NPZS__CONTINUE) return rc;
            continue;
        }
        case NPZS_S_END_EMIT:
            if (in && in->pos < in->size)
                return npzs__fail(p, NPZS_E_TRAILING_DATA, p->consumed, trail_rule(p));
            p->state = NPZS_S_DONE;
            ev->type = NPZS_EV_END;
            ev->offset = p->consumed;
            ev->format = p->format;
            ev->members = p->format == NPZS_FORMAT_NPY ? 1 : p->members;
            return NPZS_EVENT;
        case NPZS_S_DONE:
            if (in && in->pos < in->size)
                return npzs__fail(p, NPZS_E_TRAILING_DATA, p->consumed, trail_rule(p));
            return NPZS_DONE;
        case NPZS_S_FAILED:
            return p->err;
        default: {
            int rc = npzs__zip_step(p, in, ev);
            if (rc != NPZS__CONTINUE) return rc;
            continue;
        }
        }
    }
}
