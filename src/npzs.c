/*
 * npzs.c -- the public API: creation, limits, allocation, errors, and the one dispatcher.
 *
 * npzs_next() is the only entry into the machine.  Its loop switches on every top-level state
 * of states.h and hands each to the step function its row names (the plain .npy states in
 * content.c, the ZIP states in zip.c, the rest here), with one contract for all of them:
 *   - a step reads from *in (advancing in->pos, never past in->size) and moves p->state;
 *   - it returns an npzs__rc: NPZS__GO (the state moved on: dispatch again), NPZS__EVENT (*ev was
 *     filled), NPZS__NEED (the push is used up and nothing can be emitted), NPZS__DONE or
 *     NPZS__ERROR (recorded by npzs__fail);
 *   - an event the caller did not ask for (npzs_events, npzs__wants) is not delivered: a step
 *     goes on past it at once, and the loop drops any that is built all the same;
 *   - offsets are absolute: npzs__here(p) is the offset of the next byte of the push.
 * The loop has one exit, where the bytes taken from the push are added to p->consumed and the
 * step's result becomes the public code.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- errors ------------------------------------------------------------------------------ */
NPZS__API const char *npzs_error_name(int code) {
    switch (code) {
#define X(id, num, name, msg) case num: return name;
        NPZS_ERROR_MAP(X)
#undef X
    default: return "unknown";
    }
}

NPZS__API const char *npzs_strerror(int code) {
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

NPZS__API size_t npzs_rule_count(void) { return NPZS_R__END - 1; }
NPZS__API const char *npzs_rule_id(size_t i) { return i + 1 < NPZS_R__END ? rule_ids[i + 1] : NULL; }
NPZS__API const char *npzs_rule_message(size_t i) { return i + 1 < NPZS_R__END ? rule_msgs[i + 1] : NULL; }

static const struct { const char *prefix, *hint; } hints[] = {
#define X(prefix, hint) {prefix, hint},
    NPZS_HINT_MAP(X)
#undef X
};

NPZS__API const char *npzs_rule_hint(const char *rule) {
    if (!rule) return NULL;
    const char *best = NULL;
    size_t best_len = 0;
    for (size_t i = 0; i < sizeof hints / sizeof hints[0]; i++) {
        size_t n = strlen(hints[i].prefix);
        if (n > best_len && strncmp(rule, hints[i].prefix, n) == 0) {
            best = hints[i].hint;
            best_len = n;
        }
    }
    return best;
}

NPZS__API const char *npzs_error_hint(const npzs_parser *p) { return npzs_rule_hint(npzs_error_rule(p)); }

/* The state's scope column (states.h): the member an error raised in it belongs to.  Every byte
 * of a plain .npy belongs to its array (a sequence's current one). */
static const unsigned char state_scope[] = {
#define X(name, step, scope, rec, doc) NPZS_SCOPE_##scope,
    NPZS_STATE_MAP(X)
#undef X
};

static long error_member(const npzs_parser *p) {
    if (p->format == NPZS_FORMAT_NPY) return (long)p->cur;
    if (p->format != NPZS_FORMAT_NPZ || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return -1;
    switch (state_scope[p->state - NPZS_S__BASE - 1]) {
    case NPZS_SCOPE_MEMBER: return (long)p->cur;
    case NPZS_SCOPE_ENTRY: return p->end.cd_count < p->members ? (long)p->end.cd_count : -1;
    default: return -1;
    }
}

/* The limit a LIMIT.* rule names, and its value in force: NULL for a rule of no limit. */
static const char *limit_of(const npzs_parser *p, int rule, uint64_t *value) {
    const npzs_limits *l = &p->lim;
    switch (rule) {
    case NPZS_R_LIMIT_MEMBERS: *value = l->max_members; return "max_members";
    case NPZS_R_LIMIT_TOTAL_ARRAY:
    case NPZS_R_LIMIT_TOTAL_MEMBER:
    case NPZS_R_LIMIT_TOTAL_INFLATE: *value = l->max_total_bytes; return "max_total_bytes";
    case NPZS_R_LIMIT_FIELDS: *value = l->max_fields; return "max_fields";
    case NPZS_R_LIMIT_DEPTH: *value = l->max_depth; return "max_depth";
    case NPZS_R_LIMIT_MEMORY: *value = l->max_memory; return "max_memory";
    case NPZS_R_LIMIT_NAME: *value = l->max_name_len; return "max_name_len";
    case NPZS_R_LIMIT_EXTRA:
    case NPZS_R_LIMIT_EXTRA_CD: *value = l->max_extra_len; return "max_extra_len";
    default: return NULL;
    }
}

int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule) {
    int have_need = p->lim_need_set;
    p->lim_need_set = 0; /* a need goes with the check that gave it, failed or not */
    if (p->err) return p->err; /* the first error stays */
    if (code == NPZS_E_NOMEM && p->mem_capped) { /* not the hooks: max_memory refused it */
        code = NPZS_E_LIMIT;
        rule = NPZS_R_LIMIT_MEMORY;
        have_need = 1; /* npzs__alloc gave it */
    }
    if (code == NPZS_E_LIMIT && have_need) {
        uint64_t value = 0;
        const char *name = limit_of(p, rule, &value);
        if (name) {
            p->err_lim_name = name;
            p->err_lim_value = value;
            p->err_lim_needed = p->lim_need;
        }
    }
    p->err = code;
    p->err_off = off;
    p->err_rule = rule;
    p->err_msg = rule > 0 && rule < NPZS_R__END ? rule_msgs[rule] : npzs_strerror(code);
    p->err_coff = NPZS_NO_OFFSET;
    p->err_detail[0] = 0;
    p->err_member = error_member(p);
    p->state = NPZS_S_FAILED;
    if (p->seam.passed) p->seam.passed(p->seam.ctx, UINT64_MAX);
    NPZS_VISIT(p, NPZS_S_FAILED);
    return code;
}

NPZS__API int npzs_error(const npzs_parser *p) { return p ? p->err : NPZS_E_BAD_CALL; }
NPZS__API uint64_t npzs_error_offset(const npzs_parser *p) { return p ? p->err_off : 0; }
NPZS__API const char *npzs_error_message(const npzs_parser *p) { return p && p->err ? p->err_msg : "no error"; }
NPZS__API const char *npzs_error_detail(const npzs_parser *p) { return p && p->err && p->err_detail[0] ? p->err_detail : NULL; }
NPZS__API const char *npzs_error_rule(const npzs_parser *p) { return p && p->err ? npzs__rule_id(p->err_rule) : NULL; }
NPZS__API long npzs_error_member(const npzs_parser *p) { return p && p->err ? p->err_member : -1; }
NPZS__API uint64_t npzs_error_content_offset(const npzs_parser *p) { return p && p->err ? p->err_coff : NPZS_NO_OFFSET; }
NPZS__API const char *npzs_error_member_name(const npzs_parser *p, size_t *len) {
    if (len) *len = 0;
    if (!p || !p->err || p->err_member < 0 || p->format != NPZS_FORMAT_NPZ) return NULL;
    uint32_t m = (uint32_t)p->err_member;
    if (m < p->members) { /* recorded */
        const npzs_record *r = npzs__rec(p, m);
        if (len) *len = r->name_len;
        return (const char *)r->name;
    }
    if (m == p->members && p->lfh.name_ready) {
        /* the member whose local header was being read: its name if complete */
        if (len) *len = p->lfh.h.f.name_len;
        return (const char *)p->kept.name;
    }
    return NULL;
}

NPZS__API npzs_format npzs_format_of(const npzs_parser *p) { return p ? p->format : NPZS_FORMAT_UNKNOWN; }
NPZS__API uint64_t npzs_consumed(const npzs_parser *p) { return p ? p->consumed - p->inf.orphan : 0; }
NPZS__API uint64_t npzs_ignored_bytes(const npzs_parser *p) { return p ? p->ignored : 0; }
NPZS__API uint64_t npzs_memory(const npzs_parser *p) { return p ? p->mem_used : 0; }

static const char *const state_ids[] = {
#define X(name, step, scope, rec, doc) #name,
    NPZS_STATE_MAP(X)
#undef X
};
static const char *const state_docs[] = {
#define X(name, step, scope, rec, doc) doc,
    NPZS_STATE_MAP(X)
#undef X
};
static const unsigned char state_recs[] = {
#define X(name, step, scope, rec, doc) NPZS_REC_##rec,
    NPZS_STATE_MAP(X)
#undef X
};
static const char *const rec_labels[] = {
#define X(name, label) label,
    NPZS_RECORD_MAP(X)
#undef X
};
static const char *const cstate_ids[] = {
#define X(name, doc) #name,
    NPZS_CSTATE_MAP(X)
#undef X
};

const char *npzs__state_id(int i) { return i >= 0 && i < NPZS_NSTATES ? state_ids[i] : NULL; }
NPZS__API int npzs_state_count(void) { return NPZS_NSTATES; }
NPZS__API const char *npzs_state_id(int i) { return npzs__state_id(i); }
NPZS__API int npzs_state_index(const npzs_parser *p) {
    if (!p || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return -1;
    return p->state - NPZS_S__BASE - 1;
}
NPZS__API npzs_record_part npzs_state_record(int i) { return (npzs_record_part)npzs__state_record(i); }
NPZS__API const char *npzs_record_label(npzs_record_part r) { return npzs__record_label((int)r); }
const char *npzs__state_doc(int i) { return i >= 0 && i < NPZS_NSTATES ? state_docs[i] : NULL; }
const char *npzs__cstate_id(int i) { return i >= 0 && i < NPZS_NCSTATES ? cstate_ids[i] : NULL; }
static const char *const scstate_ids[] = {
#define X(name, doc) #name,
    NPZS_SCOUT_MAP(X)
#undef X
};
const char *npzs__scstate_id(int i) { return i >= 0 && i < NPZS_NSCSTATES ? scstate_ids[i] : NULL; }
int npzs__state_record(int i) { return i >= 0 && i < NPZS_NSTATES ? state_recs[i] : NPZS_REC_NONE; }
const char *npzs__record_label(int r) { return r >= 0 && r < NPZS_REC__END ? rec_labels[r] : NULL; }
uint64_t npzs__visited(const npzs_parser *p) { return p->visited; }
uint32_t npzs__cvisited(const npzs_parser *p) { return p->cvisited; }

NPZS__API const char *npzs_state_name(const npzs_parser *p) {
    if (!p || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return "INVALID";
    return state_ids[p->state - NPZS_S__BASE - 1];
}

/* ---- allocation ----------------------------------------------------------------------------
 * Every allocation goes through the caller's hooks with a small header that remembers its size,
 * so that what the parser holds is known at every moment (npzs_memory) and capped by
 * max_memory; a refusal by the cap is reported as limit (LIMIT.max_memory), one by the hooks as
 * nomem. */
#define AHDR 16 /* the size header in front of every allocation: keeps the hook's alignment (>= 8) */

void *npzs__alloc(npzs_parser *p, size_t n) {
    if (n == 0) n = 1;
    if (n > SIZE_MAX - AHDR) return NULL;
    if (p->lim.max_memory && (n > p->lim.max_memory || p->mem_used > p->lim.max_memory - n)) {
        p->mem_capped = 1;
        p->lim_need = n > UINT64_MAX - p->mem_used ? UINT64_MAX : p->mem_used + n;
        return NULL;
    }
    uint8_t *h = p->al.alloc(p->al.opaque, AHDR + n);
    if (!h) return NULL;
    memcpy(h, &n, sizeof n); /* the hook's alignment may be less than a max_align_t's */
    p->mem_used += n;
    if (p->mem_used > p->mem_peak) p->mem_peak = p->mem_used;
    return h + AHDR;
}

void *npzs__alloc0(npzs_parser *p, size_t n) {
    void *b = npzs__alloc(p, n);
    if (b) memset(b, 0, n ? n : 1);
    return b;
}

void npzs__free(npzs_parser *p, void *ptr) {
    if (!ptr) return;
    uint8_t *h = (uint8_t *)ptr - AHDR;
    size_t n;
    memcpy(&n, h, sizeof n);
    p->mem_used -= n;
    p->al.free(p->al.opaque, h);
}

int npzs__buffer_grow(npzs_parser *p, void **buf, size_t *cap, size_t need, uint64_t off, int rule) {
    size_t n = *cap ? *cap : 64;
    while (n < need) n = n > SIZE_MAX / 2 ? need : n * 2;
    void *nb = npzs__alloc(p, n);
    if (!nb) return npzs__fail(p, NPZS_E_NOMEM, off, rule);
    npzs__free(p, *buf);
    *buf = nb;
    *cap = n;
    return 0;
}

static void *def_alloc(void *o, size_t n) { (void)o; return malloc(n); }
static void def_free(void *o, void *ptr) { (void)o; free(ptr); }
const npzs_allocator npzs__malloc = {def_alloc, def_free, NULL};

/* ---- limits --------------------------------------------------------------------------------- */
/* Every row of the limits table names a field of its width (a table and a struct that disagree
 * do not compile). */
#define X(f, bits, def, lo, hi, opt, help) \
    typedef char npzs__limit_width_##f[sizeof(((npzs_limits *)0)->f) * 8 == (bits) ? 1 : -1];
NPZS_LIMITS_MAP(X)
#undef X

static void limits_default(npzs_limits *lim) {
    memset(lim, 0, sizeof *lim);
#define X(f, bits, def, lo, hi, opt, help) lim->f = (def);
    NPZS_LIMITS_MAP(X)
#undef X
}

/* The size of npzs_limits in 0.1.0 (up to inflate_window), which the unversioned entry points
 * npzs_new and npzs_limits_default of 0.1.0 binaries read and write. */
#define LIMITS_V010 (offsetof(npzs_limits, inflate_window) + sizeof(uint32_t))

NPZS__API unsigned long npzs_version(void) { return NPZS_VERSION_NUM; }

NPZS__API void npzs_limits_default_(npzs_limits *lim, size_t size) {
    if (!lim || size < LIMITS_V010) return;
    npzs_limits d;
    limits_default(&d);
    memcpy(lim, &d, size < sizeof d ? size : sizeof d);
}

#undef npzs_limits_default
NPZS__API void npzs_limits_default(npzs_limits *lim) { npzs_limits_default_(lim, LIMITS_V010); }

/* The caller's limits of `size` bytes over the defaults; NULL when the size is not one this
 * library can read. */
static const npzs_limits *limits_read(const npzs_limits *lim, size_t size, npzs_limits *out) {
    limits_default(out);
    if (!lim) return out;
    if (size < LIMITS_V010 || size > sizeof *out) return NULL;
    memcpy(out, lim, size);
    return out;
}

static int in_range(uint64_t v, uint64_t lo, uint64_t hi) { return v >= lo && v <= hi; }

NPZS__API const char *npzs_limits_check_(const npzs_limits *lim, size_t size) {
    npzs_limits l;
    if (!limits_read(lim, size, &l)) return "size";
#define X(f, bits, def, lo, hi, opt, help) \
    if (!in_range(l.f, (lo), (hi))) return #f;
    NPZS_LIMITS_MAP(X)
#undef X
    uint32_t known = NPZS_LENIENT_NPY_TRAILING | NPZS_LENIENT_HEADER_NEWLINE | NPZS_INFLATE_ZLIB |
                     (npzs__fast_inflate_built() ? NPZS_LENIENT_FAST_INFLATE : 0);
    if (l.lenient & ~known) return "lenient";
    if (l.max_memory && l.max_memory < sizeof(npzs_parser)) return "max_memory"; /* not even the parser fits */
    return NULL;
}

#undef npzs_limits_check
NPZS__API const char *npzs_limits_check(const npzs_limits *lim) { return npzs_limits_check_(lim, sizeof *lim); }

/* One input's state, what is not 0 of it (npzs_new, npzs_reset). */
static void run_init(npzs_parser *p) {
    p->state = NPZS_S_START;
    p->err_member = -1;
    p->err_coff = NPZS_NO_OFFSET;
}

NPZS__API npzs_parser *npzs_new_(const npzs_limits *lim, size_t lim_size, const npzs_allocator *alloc) {
    npzs_allocator al = npzs__malloc;
    if (alloc) {
        if (!alloc->alloc || !alloc->free) return NULL;
        al = *alloc;
    }
    npzs_limits l;
    if (!limits_read(lim, lim_size, &l) || npzs_limits_check_(&l, sizeof l)) return NULL;
    npzs_parser *p = al.alloc(al.opaque, sizeof *p);
    if (!p) return NULL;
    memset(p, 0, sizeof *p);
    p->al = al;
    p->lim = l;
    p->mem_used = p->mem_peak = sizeof *p;
    p->ev_user = NPZS_EV_ALL;
    npzs__names_seed(p);
    run_init(p);
    return p;
}

#undef npzs_new
NPZS__API npzs_parser *npzs_new(const npzs_limits *lim, const npzs_allocator *alloc) {
    return npzs_new_(lim, LIMITS_V010, alloc);
}

NPZS__API void npzs_free(npzs_parser *p) {
    if (!p) return;
    npzs__content_release(p);
    npzs__zip_release(p);
    npzs__policy_release(p);
    p->al.free(p->al.opaque, p);
}

/* Back to the start of an input, keeping the buffers that do not depend on one (header staging
 * and the parser's scratch, the inflate state and window, the staging of names and extra fields,
 * the end-record tail); the member records and the name table of the last input are freed.
 * The caller's choices stay (limits, hooks, policy, hashing, the events mask, a helper, which
 * forgets the input too). */
NPZS__API void npzs_reset(npzs_parser *p) {
    if (!p) return;
    if (p->seam.reset) p->seam.reset(p->seam.ctx);
    npzs__zip_input_release(p);
    npzs__policy_reset(p);
    memset((char *)p + NPZS__RUN_OFFSET, 0, sizeof *p - NPZS__RUN_OFFSET);
    run_init(p);
}

/* ---- the seam (seam.h) ------------------------------------------------------------------- */

int npzs__seam_attach(npzs_parser *p, const npzs__seam *s) {
    if (p->seam.take || !s || !s->take) return -1;
    p->seam = *s;
    return 0;
}

void npzs__seam_detach(npzs_parser *p) {
    memset(&p->seam, 0, sizeof p->seam);
    if (p->inf.pre && p->state == NPZS_S_ZIP_DEFLATED) /* its bytes were the helper's: gone now */
        npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_PAR_FREE);
    p->inf.pre = NULL;
}

const npzs_limits *npzs__seam_limits(const npzs_parser *p) { return &p->lim; }
const npzs_allocator *npzs__seam_allocator(const npzs_parser *p) { return &p->al; }
unsigned npzs__seam_events(const npzs_parser *p) { return p->ev_user; }

int npzs__seam_bad_call(npzs_parser *p, int rule) { return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), rule); }

NPZS__API int npzs_fast_inflate(void) { return npzs__fast_inflate_built(); }

NPZS__API int npzs_npy_sequence(npzs_parser *p) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (p->state != NPZS_S_START || p->consumed || (p->lim.lenient & NPZS_LENIENT_NPY_TRAILING))
        return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_SEQUENCE);
    p->sequence = 1;
    return 0;
}

NPZS__API int npzs_hash(npzs_parser *p, unsigned what) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (p->state != NPZS_S_START || p->consumed || (what & ~NPZS_HASH_SHA256) || (what && !npzs__sha256_built()))
        return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_HASH);
    p->hashes = what;
    return 0;
}

NPZS__API int npzs_events(npzs_parser *p, unsigned mask) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (mask & ~(unsigned)NPZS_EV_ALL) return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_EVENTS);
    p->ev_user = mask | NPZS_EV_BIT(NPZS_EV_END);
    return 0;
}

NPZS__API void npzs_finish(npzs_parser *p) {
    if (p) p->finished = 1;
}

/* ---- the dispatcher ------------------------------------------------------------------------- */

/* START: the first byte decides the format. */
npzs__rc npzs__st_start(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (!in || in->pos == in->size) {
        if (!p->finished) return NPZS__NEED;
        return npzs__error(p, NPZS_E_TRUNCATED, 0, NPZS_R_TRUNC_EMPTY);
    }
    uint8_t b = ((const uint8_t *)in->src)[in->pos];
    if (b == 0x93) {
        p->format = NPZS_FORMAT_NPY;
        if (npzs__pol_start(p) < 0) return NPZS__ERROR;
        npzs__content_start(p, 1, 1, 0, 0);
        p->state = NPZS_S_NPY_CONTENT;
        p->cur = 0;
        p->members = 1;
        if (!npzs__wants(p, NPZS_EV_MEMBER_BEGIN)) return NPZS__GO;
        *ev = (npzs_event){.type = NPZS_EV_MEMBER_BEGIN, .member = 0, .offset = 0, .method = NPZS_METHOD_STORED};
        return NPZS__EVENT;
    }
    if (b == 'P') {
        p->format = NPZS_FORMAT_NPZ;
        if (npzs__pol_start(p) < 0) return NPZS__ERROR;
        p->state = NPZS_S_ZIP_SIG;
        return NPZS__GO;
    }
    return npzs__error(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_FIRST);
}

static int trail_rule(const npzs_parser *p) {
    return p->format == NPZS_FORMAT_NPY ? NPZS_R_NPY_TRAIL_AFTER_END : NPZS_R_ZIP_TRAIL_AFTER_END;
}

/* END_EMIT: the verdict. */
npzs__rc npzs__st_end_emit(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (in && in->pos < in->size) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), trail_rule(p));
    p->state = NPZS_S_DONE;
    *ev = (npzs_event){.type = NPZS_EV_END, .offset = npzs__here(p), .format = p->format, .members = p->members};
    return NPZS__EVENT;
}

/* DONE: END was delivered; only the end of input may follow. */
npzs__rc npzs__st_done(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (in && in->pos < in->size) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), trail_rule(p));
    return NPZS__DONE;
}

/* FAILED: the error stays. */
npzs__rc npzs__st_failed(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)p;
    (void)in;
    (void)ev;
    return NPZS__ERROR;
}

/* The npzs_event layouts this library can fill: 0.1.0's (unchanged to 0.4.0), and 0.5.0's, which
 * adds sniff and sha256 at the end.  An older size is filled through a full-size copy cut to its
 * length. */
#define EVENT_V010 offsetof(npzs_event, sniff)

#undef npzs_next
NPZS__API int npzs_next(npzs_parser *p, npzs_in *in, npzs_event *ev) { return npzs_next_(p, in, ev, EVENT_V010); }

/* One step of the state the parser is in: the row's step function (states.h). */
static npzs__rc dispatch(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    NPZS_VISIT(p, p->state);
    switch (p->state) {
#define X(name, step, scope, rec, doc) \
    case NPZS_S_##name: return step(p, in, ev);
        NPZS_STATE_MAP(X)
#undef X
    default: return npzs__error(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_STATE);
    }
}

NPZS__API int npzs_next_(npzs_parser *p, npzs_in *in, npzs_event *ev, size_t ev_size) {
    if (!p || !ev || (in && (in->pos > in->size || (!in->src && in->size))))
        return p ? npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_ARG) : NPZS_E_BAD_CALL;
    if (ev_size != sizeof(npzs_event)) {
        if (ev_size != EVENT_V010) return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_EVENT_SIZE);
        npzs_event full;
        int rc = npzs_next_(p, in, &full, sizeof full);
        if (rc == NPZS_EVENT) memcpy(ev, &full, EVENT_V010);
        return rc;
    }
    if (p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    if (p->c.pend_rule) return npzs__pol_pending(p); /* a violation in the chunk the last call gave */
    p->in = in; /* *ev is written whole by the step that emits an event, and only then */
    p->pos0 = in ? in->pos : 0;
    npzs__rc rc;
    for (;;) {
        rc = dispatch(p, in, ev);
        if (rc == NPZS__GO) continue;
        /* the events mask (npzs__wants): an event not asked for passes as if delivered (a violation
         * found in its chunk then fails at once, as at the next call) */
        if (rc == NPZS__EVENT && !npzs__wants(p, ev->type)) {
            if (p->c.pend_rule) {
                (void)npzs__pol_pending(p);
                rc = NPZS__ERROR;
                break;
            }
            continue;
        }
        break;
    }
    /* the one exit: what the steps took from the push is consumed; no pointer into it stays */
    p->consumed += in ? in->pos - p->pos0 : 0;
    p->in = NULL;
    switch (rc) {
    case NPZS__EVENT: return NPZS_EVENT;
    case NPZS__NEED: return NPZS_NEED_INPUT;
    case NPZS__DONE: return NPZS_DONE;
    case NPZS__ERROR: break;
    default: /* a step returned what no step may return here (NPZS__NOT_TAKEN) */
        npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_STATE);
        break;
    }
    /* an error not recorded would be a bug: never a pass */
    return p->err ? p->err : npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_STATE);
}

NPZS__API int npzs_error_limit(const npzs_parser *p, const char **name, uint64_t *value, uint64_t *needed) {
    int have = p && p->err == NPZS_E_LIMIT && p->err_lim_name;
    if (name) *name = have ? p->err_lim_name : NULL;
    if (value) *value = have ? p->err_lim_value : 0;
    if (needed) *needed = have ? p->err_lim_needed : 0;
    return have;
}
