/* keep.c -- the kept-going report: the inventory's members past the strict parser's (keep.h). */
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
}

const char *keep_status(const npzs_inv_member *m, int has_error) {
    return has_error ? "rejected" : m->checked ? "ok" : "listed";
}

static const char *method_name(int method) {
    return method == NPZS_METHOD_STORED ? "stored" : method == NPZS_METHOD_DEFLATED ? "deflated" : "other";
}

static void json_member(wbuf *f, const npzs_inv_member *m, const report_error *e) {
    wb_c(f, '{');
    json_name_key(f, m->name, m->name_len);
    wb_s(f, m->kind == NPZS_KIND_ARRAY ? ", \"kind\": \"array\"" : m->kind == NPZS_KIND_BLOB ? ", \"kind\": \"blob\"" : ", \"kind\": null");
    wb_fmt(f, ", \"method\": \"%s\"", method_name(m->method));
    if (m->kind == NPZS_KIND_ARRAY && m->dtype[0]) {
        wb_s(f, ", \"dtype\": ");
        json_str(f, m->dtype, strlen(m->dtype));
        wb_fmt(f, ", \"ndim\": %" PRIu32 ", \"shape\": [", m->ndim);
        for (uint32_t k = 0; k < m->ndim && k < 8; k++) wb_fmt(f, k ? ", %" PRIu64 : "%" PRIu64, m->shape[k]);
        wb_fmt(f, "], \"fortran_order\": %s, \"nbytes\": %" PRIu64, m->fortran_order ? "true" : "false", m->nbytes);
    }
    wb_fmt(f, ", \"size\": %" PRIu64 ", \"stored_size\": %" PRIu64 ", \"offset\": %" PRIu64 ", \"crc32\": %" PRIu32,
           m->size, m->csize, m->offset, m->crc32);
    if (m->sniff) wb_fmt(f, ", \"sniff\": \"%s\"", npzs_sniff_name(m->sniff));
    else wb_s(f, ", \"sniff\": null");
    wb_fmt(f, ", \"source\": \"%s\"", m->source == (NPZS_INV_LOCAL | NPZS_INV_CENTRAL) ? "local+central"
                                      : m->source == NPZS_INV_CENTRAL ? "central" : "local");
    wb_fmt(f, ", \"status\": \"%s\", \"error\": ", keep_status(m, e->code != NULL));
    if (e->code) json_error(f, e);
    else wb_s(f, "null");
    wb_c(f, '}');
}

void json_kept(wbuf *f, const npzs_inv *v, size_t from, const npzs_parser *p) {
    size_t n = npzs_inv_count(v);
    if (!n && p && from == 0 && npzs_format_of(p) == NPZS_FORMAT_NPY) { /* a rejected .npy: its one array */
        report_error e;
        report_error_of(&e, p);
        wb_s(f, "{\"name\": null, \"key\": null, \"kind\": \"array\", \"status\": \"rejected\", \"error\": ");
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
        wb_fmt(f, "%" PRIu64 " bytes, %s, %s", m->size, method_name(m->method), keep_status(m, e.code != NULL));
        if (m->source == NPZS_INV_CENTRAL) wb_s(f, " (central directory only)");
        if (e.code) {
            wb_fmt(f, ": %s at offset %" PRIu64 ": ", e.code, e.offset);
            safe_words(f, e.message, strlen(e.message));
            if (e.rule) wb_fmt(f, " [%s]", e.rule);
        }
        wb_c(f, '\n');
    }
    const char *rule;
    uint64_t off;
    int err = npzs_inv_error(v, &rule, &off);
    if (err && err != NPZS_E_TRUNCATED) /* the listing's own end (a cut member says it already) */
        wb_fmt(f, "  kept going: stopped at offset %" PRIu64 ": %s [%s]\n", off, npzs_error_name(err), rule ? rule : "");
}

void json_inventory(wbuf *f, const npzs_inv *v) {
    const char *rule;
    uint64_t off;
    int err = npzs_inv_error(v, &rule, &off);
    wb_fmt(f, "\"inventory\": {\"zip\": %s, \"complete\": %s, \"members\": %zu, \"error\": ",
           npzs_inv_is_zip(v) ? "true" : "false", npzs_inv_complete(v) ? "true" : "false", npzs_inv_count(v));
    if (err) {
        report_error e = {npzs_error_name(err), off, NULL, 0, -1, "", UINT64_MAX, rule, NULL, npzs_rule_hint(rule), NULL, 0, 0};
        for (size_t i = 0; rule && i < npzs_rule_count(); i++)
            if (!strcmp(npzs_rule_id(i), rule)) e.message = npzs_rule_message(i);
        json_error(f, &e);
    } else {
        wb_s(f, "null");
    }
    wb_s(f, "}, ");
}
