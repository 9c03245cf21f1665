/* parts.h -- the pieces every report of an input is made of: an error as its JSON object and its
 * line of text (the parser's, a member's kept going, a scan's finding), a rule's words by its id,
 * and a member's name and key, kind, method and status as the JSON spells them.  Check's and ls's
 * report (report.c), the kept-going one (keep.c), scan's (cli/cmd_scan.c) and the WebAssembly
 * module (wasm/shim.c) print through them, so that each piece is spelled one way. */
#ifndef NPZS_REPORT_PARTS_H
#define NPZS_REPORT_PARTS_H

#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"
#include "write.h"

/* ---- an error ----------------------------------------------------------------------------- */

/* An error object as the JSON prints it: the file's (report_error_of: the parser's), a member's
 * (kept going), a scan's finding. */
typedef struct report_error {
    const char *code; /* npzs_error_name's, or "io", "skipped" */
    uint64_t offset;
    const char *member; /* raw bytes, or NULL */
    size_t member_len;
    long member_index; /* -1: none */
    const char *message;
    uint64_t content_offset;          /* UINT64_MAX: none */
    const char *rule, *detail, *hint; /* or NULL */
    const char *limit;                /* the limit a rejection broke (npzs_error_limit), or NULL */
    uint64_t limit_value, limit_needed;
} report_error;

/* The parser's error (its words live until its next call). */
void report_error_of(report_error *e, const npzs_parser *p);
/* An error named by a rule of the table (its message and hint): code, the byte, the member's
 * index (-1: none); no member, detail or limit. */
void report_error_rule(report_error *e, const char *code, const char *rule, uint64_t offset, long member_index);
/* A rule's message by its id ("" for NULL or an id the table does not hold). */
const char *report_rule_message(const char *rule);

/* {"code", "offset", "member" (and "member_b64"), "member_index", "message", "content_offset",
 * "rule", "detail", "hint", "limit"}: the contract's error object, the optional keys only when set. */
void json_error(wbuf *f, const report_error *e);
/* "limit": {"name", "value", "needed"} of an error that has a limit's numbers (e->limit set), no
 * separator before it: json_error's key, and a SARIF result's property. */
void json_limit(wbuf *f, const report_error *e);
/* "CODE at offset N: MESSAGE (needs N; LIMIT is V) [RULE]" (a kept-going member's, a finding's: no
 * detail, no hint; the limit's numbers when it has them). */
void text_error(wbuf *f, const report_error *e);
/* A limit's numbers in words: " (needs NEEDED; NAME is VALUE)", the format's arguments in that
 * order (needed, name, value). */
#define REPORT_LIMIT_FMT " (needs %" PRIu64 "; %s is %" PRIu64 ")"
void text_limit(wbuf *f, const char *name, uint64_t value, uint64_t needed);

/* ---- a member ----------------------------------------------------------------------------- */

/* "name": ..., "key": ... of a member name (the key: without ".npy"); both null when name is
 * NULL (a plain .npy, a gzip's content). */
void json_name_key(wbuf *f, const char *name, size_t n);
/* "array", "blob", or NULL (not known: a member listed, never read) */
const char *report_kind_name(int kind);
/* "stored", "deflated", or "other" */
const char *report_method_name(int method);
/* A member's "status": "rejected" (an error), "ok" (checked), "listed" (framed only). */
const char *report_status(int has_error, int checked);

#endif
