/*
 * npzs.c -- the public API (creation, limits, the caller's choices, the error's accessors) and the
 * one dispatcher; below it, the layers of src/ (README.md, "Layout"): the states in npy/ and zip/,
 * the error recorder and allocation in core/, the tables in base/.  The parser's side of the seam
 * to a helper is par/seam.c, beside the helper.
 *
 * npzs_next() is the only entry into the machine.  Its loop switches on every top-level state
 * of states.h and hands each to the step function its row names (the first and last states and
 * the plain .npy's in npy/plain.c, the ZIP states in zip/zip.c), with one contract for all of them:
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

/* ---- the error's accessors (recorded by core/err.c) ------------------------------------------ */
NPZS__API const char *npzs_error_hint(const npzs_parser *p) { return npzs_rule_hint(npzs_error_rule(p)); }

NPZS__API int npzs_error(const npzs_parser *p) { return p ? p->err : NPZS_E_BAD_CALL; }
NPZS__API uint64_t npzs_error_offset(const npzs_parser *p) { return p ? p->err_off : 0; }
NPZS__API const char *npzs_error_message(const npzs_parser *p) { return p && p->err ? p->err_msg : "no error"; }
NPZS__API const char *npzs_error_detail(const npzs_parser *p) {
    return p && p->err && p->err_detail[0] ? p->err_detail : NULL;
}
NPZS__API const char *npzs_error_rule(const npzs_parser *p) { return p && p->err ? npzs__rule_id(p->err_rule) : NULL; }
NPZS__API long npzs_error_member(const npzs_parser *p) { return p && p->err ? p->err_member : -1; }
NPZS__API uint64_t npzs_error_content_offset(const npzs_parser *p) {
    return p && p->err ? p->err_coff : NPZS_NO_OFFSET;
}
NPZS__API int npzs_error_limit(const npzs_parser *p, const char **name, uint64_t *value, uint64_t *needed) {
    return npzs__limit_out(p && p->err ? &p->err_lim : NULL, name, value, needed);
}
NPZS__API const char *npzs_error_member_name(const npzs_parser *p, size_t *len) {
    if (len) *len = 0;
    if (!p || !p->err || p->err_member < 0 || p->format != NPZS_FORMAT_NPZ) return NULL;
    uint32_t m = (uint32_t)p->err_member;
    if (m < p->members) { /* recorded */
        const npzs__record *r = npzs__rec(p, m);
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

/* ---- what the parser has read ---------------------------------------------------------------- */
NPZS__API npzs_format npzs_format_of(const npzs_parser *p) { return p ? p->format : NPZS_FORMAT_UNKNOWN; }
NPZS__API uint64_t npzs_consumed(const npzs_parser *p) { return p ? p->consumed - p->inf.orphan : 0; }
NPZS__API uint64_t npzs_ignored_bytes(const npzs_parser *p) { return p ? p->ignored : 0; }
NPZS__API uint64_t npzs_memory(const npzs_parser *p) { return p ? p->mem_used : 0; }

NPZS__API int npzs_state_index(const npzs_parser *p) {
    if (!p || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return -1;
    return p->state - NPZS_S__BASE - 1;
}
#ifdef NPZS_TESTING
uint64_t npzs__visited(const npzs_parser *p) { return p->visited; }
uint32_t npzs__cvisited(const npzs_parser *p) { return p->cvisited; }
#endif

NPZS__API const char *npzs_state_name(const npzs_parser *p) {
    if (!p || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return "INVALID";
    return npzs__state_id(p->state - NPZS_S__BASE - 1);
}

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
    npzs__names_seed(&p->ntab);
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

/* The end of input: told to an attached helper, which tells the parser once it has fed it all
 * (npzs__seam_finish, par/seam.c). */
NPZS__API void npzs_finish(npzs_parser *p) {
    if (!p) return;
    if (p->seam.finish) p->seam.finish(p->seam.ctx);
    else p->finished = 1;
}

/* ---- the dispatcher ------------------------------------------------------------------------- */

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

/* The one entry: a parser with a helper attached (npzs_par_new) is driven by the same call as one
 * without; the helper takes the push and feeds the parser (seam.h).  An older event layout goes
 * through a full-size event cut to its length, as below. */
NPZS__API int npzs_next_(npzs_parser *p, npzs_in *in, npzs_event *ev, size_t ev_size) {
    if (!p || !p->seam.next) return npzs__seam_parse(p, in, ev, ev_size);
    if (!ev || ev_size != EVENT_V010) return p->seam.next(p->seam.ctx, in, ev, ev_size);
    npzs_event full;
    int rc = p->seam.next(p->seam.ctx, in, &full, sizeof full);
    if (rc == NPZS_EVENT) memcpy(ev, &full, EVENT_V010);
    return rc;
}

/* The parser's own loop. */
int npzs__seam_parse(npzs_parser *p, npzs_in *in, npzs_event *ev, size_t ev_size) {
    if (!p || !ev || (in && (in->pos > in->size || (!in->src && in->size))))
        return p ? npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_ARG) : NPZS_E_BAD_CALL;
    if (ev_size != sizeof(npzs_event)) {
        if (ev_size != EVENT_V010) return npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_EVENT_SIZE);
        npzs_event full;
        int rc = npzs__seam_parse(p, in, &full, sizeof full);
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
