/*
 * err.c -- the one error recorder: the first error of a parser, its code, offset, rule, message
 * and member, recorded once (an error is sticky), and a limit's numbers when the check gave them
 * (npzs__limit_need, npzs_error_limit); npzs__fail_content for an error found at an
 * offset in a member's content.  Every layer records through here, below all of them.
 */
#include "../internal.h"

static long error_member(const npzs_parser *p) {
    if (p->format == NPZS_FORMAT_NPY) return (long)p->cur;
    if (p->format != NPZS_FORMAT_NPZ || p->state <= NPZS_S__BASE || p->state >= NPZS_S__END) return -1;
    switch (npzs__state_scope(p->state - NPZS_S__BASE - 1)) {
    case NPZS_SCOPE_MEMBER: return (long)p->cur;
    case NPZS_SCOPE_ENTRY: return p->end.cd_count < p->members ? (long)p->end.cd_count : -1;
    default: return -1;
    }
}

/* The limit a rule is decided by (the LIMIT.* rules, a header longer than max_header_size, more
 * dimensions than max_ndim), and its value in force: NULL for a rule of no limit. */
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
    case NPZS_R_HDR_TOO_LARGE_BYTES:
    case NPZS_R_HDR_TOO_LARGE_CHARS: *value = l->max_header_size; return "max_header_size";
    case NPZS_R_NDIM:
    case NPZS_R_FIELD_NDIM: *value = l->max_ndim; return "max_ndim";
    default: return NULL;
    }
}

void npzs__limit_need(npzs_parser *p, uint64_t n) {
    p->lim_need = n;
    p->lim_need_set = 1;
}

int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule) {
    int have_need = p->lim_need_set;
    p->lim_need_set = 0;                         /* a need goes with the check that gave it, failed or not */
    if (p->err) return p->err;                   /* the first error stays */
    if (code == NPZS_E_NOMEM && p->mem_capped) { /* not the hooks: max_memory refused it */
        code = NPZS_E_LIMIT;
        rule = NPZS_R_LIMIT_MEMORY;
        have_need = 1; /* npzs__alloc gave it */
    }
    if (have_need) { /* limit, header_too_large, bad_shape: the rule names the limit */
        uint64_t value = 0;
        const char *name = limit_of(p, rule, &value);
        if (name) p->err_lim = (npzs__limit_hit){name, value, p->lim_need};
    }
    p->err = code;
    p->err_off = off;
    p->err_rule = rule;
    p->err_msg = rule > 0 && rule < NPZS_R__END ? npzs__rule_msg(rule) : npzs_strerror(code);
    p->err_coff = NPZS_NO_OFFSET;
    p->err_detail[0] = 0;
    p->err_member = error_member(p);
    p->state = NPZS_S_FAILED;
    if (p->seam.passed) p->seam.passed(p->seam.ctx, UINT64_MAX);
    NPZS_VISIT(p, NPZS_S_FAILED);
    return code;
}

/* Error at content position coff (absolute where the content is the input's own bytes, else the
 * member's first content byte). */
int npzs__fail_content(npzs_parser *p, int code, uint64_t coff, int rule) {
    if (p->err) return p->err; /* the first error stays, with its content offset */
    uint64_t off = p->c.direct ? p->c.base + coff : p->c.base;
    int rc = npzs__fail(p, code, off, rule);
    p->err_coff = coff;
    return rc;
}
