/* parts.c -- the pieces every report is made of: an error, a member's name and words (parts.h). */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "parts.h"

/* ---- an error ---- */

void report_error_of(report_error *e, const npzs_parser *p) {
    e->code = npzs_error_name(npzs_error(p));
    e->offset = npzs_error_offset(p);
    e->member = npzs_error_member_name(p, &e->member_len);
    e->member_index = npzs_error_member(p);
    e->message = npzs_error_message(p);
    e->content_offset = npzs_error_content_offset(p);
    e->rule = npzs_error_rule(p);
    e->detail = npzs_error_detail(p);
    e->hint = npzs_error_hint(p);
    if (!npzs_error_limit(p, &e->limit, &e->limit_value, &e->limit_needed)) e->limit = NULL;
}

const char *report_rule_message(const char *rule) {
    for (size_t i = 0; rule && i < npzs_rule_count(); i++)
        if (!strcmp(npzs_rule_id(i), rule)) return npzs_rule_message(i);
    return "";
}

void report_error_rule(report_error *e, const char *code, const char *rule, uint64_t offset, long member_index) {
    memset(e, 0, sizeof *e);
    e->code = code;
    e->rule = rule;
    e->message = report_rule_message(rule);
    e->hint = npzs_rule_hint(rule);
    e->offset = offset;
    e->member_index = member_index;
    e->content_offset = UINT64_MAX;
}

/* , "key": "words" (the library's words: escaped as any string) */
static void key_str(wbuf *f, const char *key, const char *s) {
    wb_s(f, ", \"");
    wb_s(f, key);
    wb_s(f, "\": ");
    json_str(f, s, strlen(s));
}

void json_error(wbuf *f, const report_error *e) {
    wb_s(f, "{\"code\": \"");
    wb_s(f, e->code);
    wb_s(f, "\", \"offset\": ");
    json_u64(f, e->offset);
    wb_s(f, ", ");
    if (e->member) json_bytes(f, "member", e->member, e->member_len);
    else wb_s(f, "\"member\": null");
    if (e->member_index >= 0) json_key_u64(f, "member_index", (uint64_t)e->member_index);
    key_str(f, "message", e->message);
    if (e->content_offset != UINT64_MAX) json_key_u64(f, "content_offset", e->content_offset);
    if (e->rule) json_key_word(f, "rule", e->rule);
    if (e->detail) key_str(f, "detail", e->detail); /* added in 0.5.0: a policy violation in words */
    if (e->hint) key_str(f, "hint", e->hint);       /* added in 0.5.0: what the user can do */
    if (e->limit) {                                 /* added in 0.8.0: a limit's numbers */
        wb_s(f, ", ");
        json_limit(f, e);
    }
    wb_c(f, '}');
}

void json_limit(wbuf *f, const report_error *e) {
    wb_s(f, "\"limit\": {\"name\": \"");
    wb_s(f, e->limit);
    wb_c(f, '"');
    json_key_u64(f, "value", e->limit_value);
    json_key_u64(f, "needed", e->limit_needed);
    wb_c(f, '}');
}

void text_limit(wbuf *f, const char *name, uint64_t value, uint64_t needed) {
    wb_fmt(f, REPORT_LIMIT_FMT, needed, name, value);
}

void text_error(wbuf *f, const report_error *e) {
    wb_fmt(f, "%s at offset %" PRIu64 ": ", e->code, e->offset);
    safe_words(f, e->message, strlen(e->message));
    if (e->limit) text_limit(f, e->limit, e->limit_value, e->limit_needed);
    if (e->rule) wb_fmt(f, " [%s]", e->rule);
}

/* ---- a member ---- */

void json_name_key(wbuf *f, const char *name, size_t n) {
    if (!name) {
        wb_s(f, "\"name\": null, \"key\": null");
        return;
    }
    json_bytes(f, "name", name, n);
    wb_s(f, ", ");
    if (n > 4 && memcmp(name + n - 4, ".npy", 4) == 0) n -= 4;
    json_bytes(f, "key", name, n);
}

const char *report_kind_name(int kind) {
    return kind == NPZS_KIND_ARRAY ? "array" : kind == NPZS_KIND_BLOB ? "blob" : NULL;
}

const char *report_method_name(int method) {
    return method == NPZS_METHOD_STORED ? "stored" : method == NPZS_METHOD_DEFLATED ? "deflated" : "other";
}

const char *report_status(int has_error, int checked) { return has_error ? "rejected" : checked ? "ok" : "listed"; }
