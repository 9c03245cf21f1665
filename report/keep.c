/* keep.c -- the kept-going report: the inventory's members past the strict parser's (keep.h),
 * of the pieces every report shares (parts.h). */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "keep.h"

void keep_error(report_error *e, const npzs_inv *v, size_t i, const npzs_parser *p, size_t from) {
    const npzs_inv_member *m = npzs_inv_get(v, i);
    memset(e, 0, sizeof *e);
    e->member_index = -1;
    e->content_offset = UINT64_MAX;
    if (p && i == from && (m->source & NPZS_INV_LOCAL) && m->offset <= npzs_error_offset(p)) {
        report_error_of(e, p); /* the member the parser stopped in: the file's error */
        return;
    }
    if (!m->error) return;
    e->code = npzs_error_name(m->error);
    e->offset = m->error_offset;
    e->member = m->name;
    e->member_len = m->name_len;
    e->member_index = (long)i;
    e->message = m->message;
    e->content_offset = m->content_offset;
    e->rule = m->rule;
    e->hint = npzs_rule_hint(m->rule);
    if (m->limit) {
        e->limit = m->limit;
        e->limit_value = m->limit_value;
        e->limit_needed = m->limit_needed;
    }
}

static void json_member(wbuf *f, const npzs_inv_member *m, const report_error *e) {
    wb_c(f, '{');
    json_name_key(f, m->name, m->name_len);
    json_key_word(f, "kind", report_kind_name((int)m->kind)); /* (an enum: its values fit) */
    json_key_word(f, "method", report_method_name(m->method));
    if (m->kind == NPZS_KIND_ARRAY && m->dtype[0]) {
        wb_s(f, ", \"dtype\": ");
        json_str(f, m->dtype, strlen(m->dtype));
        json_key_u64(f, "ndim", m->ndim);
        wb_s(f, ", \"shape\": [");
        for (uint32_t k = 0; k < m->ndim && k < 8; k++) {
            if (k) wb_s(f, ", ");
            json_u64(f, m->shape[k]);
        }
        wb_s(f, m->fortran_order ? "], \"fortran_order\": true" : "], \"fortran_order\": false");
        json_key_u64(f, "nbytes", m->nbytes);
    }
    json_key_u64(f, "size", m->size);
    json_key_u64(f, "stored_size", m->csize);
    json_key_u64(f, "offset", m->offset);
    json_key_u64(f, "crc32", m->crc32);
    json_key_word(f, "sniff", m->sniff ? npzs_sniff_name(m->sniff) : NULL);
    json_key_word(f, "source",
                  m->source == (NPZS_INV_LOCAL | NPZS_INV_CENTRAL) ? "local+central"
                  : m->source == NPZS_INV_CENTRAL                  ? "central"
                                                                   : "local");
    json_key_word(f, "status", report_status(e->code != NULL, m->checked));
    wb_s(f, ", \"error\": ");
    if (e->code) json_error(f, e);
    else wb_s(f, "null");
    wb_c(f, '}');
}

void json_kept(wbuf *f, const npzs_inv *v, size_t from, const npzs_parser *p) {
    size_t n = npzs_inv_count(v);
    if (!n && p && from == 0 && npzs_format_of(p) == NPZS_FORMAT_NPY) { /* a rejected .npy: its one array */
        report_error e;
        report_error_of(&e, p);
        wb_c(f, '{');
        json_name_key(f, NULL, 0);
        wb_s(f, ", \"kind\": \"array\", \"status\": \"rejected\", \"error\": ");
        json_error(f, &e);
        wb_c(f, '}');
        return;
    }
    for (size_t i = from; i < n; i++) {
        report_error e;
        keep_error(&e, v, i, p, from);
        if (i) wb_s(f, ", ");
        json_member(f, npzs_inv_get(v, i), &e);
    }
}

void text_kept(wbuf *f, const npzs_inv *v, size_t from, const npzs_parser *p) {
    size_t n = npzs_inv_count(v);
    for (size_t i = from; i < n; i++) {
        const npzs_inv_member *m = npzs_inv_get(v, i);
        report_error e;
        keep_error(&e, v, i, p, from);
        wb_s(f, "  kept going: ");
        safe_str(f, m->name, m->name_len);
        wb_s(f, ": ");
        if (m->kind == NPZS_KIND_ARRAY && m->dtype[0]) wb_fmt(f, "array %s, ", m->dtype);
        else if (m->sniff) wb_fmt(f, "blob (%s), ", npzs_sniff_name(m->sniff));
        wb_fmt(f, "%" PRIu64 " bytes, %s, %s", m->size, report_method_name(m->method),
               report_status(e.code != NULL, m->checked));
        if (m->source == NPZS_INV_CENTRAL) wb_s(f, " (central directory only)");
        if (e.code) {
            wb_s(f, ": ");
            text_error(f, &e);
        }
        wb_c(f, '\n');
    }
    const char *rule;
    uint64_t off;
    int err = npzs_inv_error(v, &rule, &off);
    if (err && err != NPZS_E_TRUNCATED) { /* the listing's own end (a cut member says it already) */
        const char *lname;
        uint64_t lvalue, lneeded;
        wb_fmt(f, "  kept going: stopped at offset %" PRIu64 ": %s", off, npzs_error_name(err));
        if (npzs_inv_error_limit(v, &lname, &lvalue, &lneeded)) text_limit(f, lname, lvalue, lneeded);
        wb_fmt(f, " [%s]\n", rule ? rule : "");
    }
}

void json_inventory(wbuf *f, const npzs_inv *v) {
    const char *rule;
    uint64_t off;
    int err = npzs_inv_error(v, &rule, &off);
    wb_fmt(f, "\"inventory\": {\"zip\": %s, \"complete\": %s, \"members\": %zu, \"error\": ",
           npzs_inv_is_zip(v) ? "true" : "false", npzs_inv_complete(v) ? "true" : "false", npzs_inv_count(v));
    if (err) {
        report_error e;
        report_error_rule(&e, npzs_error_name(err), rule, off, -1);
        if (!npzs_inv_error_limit(v, &e.limit, &e.limit_value, &e.limit_needed)) e.limit = NULL;
        json_error(f, &e);
    } else {
        wb_s(f, "null");
    }
    wb_s(f, "}, ");
}
