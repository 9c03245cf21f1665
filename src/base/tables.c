/*
 * tables.c -- the library's words, each from its one table: the error codes' names and messages
 * (npzstream.h, NPZS_ERROR_MAP), every check's rule id, message and hint (rules.h), and the
 * states' names, documents, scopes and record parts (states.h).  Pure lookups: no parser here,
 * so that every layer may use them without reaching up.
 */
#include <stddef.h>
#include <string.h>

#include "npzstream.h"
#include "base.h"
#include "rules.h"
#include "states.h"

#ifdef NPZS_INTERNAL_H
#error "base/ is pure: it sees no parser (internal.h)"
#endif

/* ---- errors and rules ---------------------------------------------------------------------- */
NPZS__API const char *npzs_error_name(int code) {
    switch (code) {
#define X(id, num, name, msg) \
    case num: return name;
        NPZS_ERROR_MAP(X)
#undef X
    default: return "unknown";
    }
}

NPZS__API const char *npzs_strerror(int code) {
    switch (code) {
#define X(id, num, name, msg) \
    case num: return msg;
        NPZS_ERROR_MAP(X)
#undef X
    case 0: return "no error";
    default: return "unknown error";
    }
}

static const char *const rule_ids[] = {NULL,
#define X(name, id, msg) id,
                                       NPZS_RULE_MAP(X)
#undef X
};
static const char *const rule_msgs[] = {NULL,
#define X(name, id, msg) msg,
                                        NPZS_RULE_MAP(X)
#undef X
};

const char *npzs__rule_id(int rule) { return rule > 0 && rule < NPZS_R__END ? rule_ids[rule] : NULL; }
const char *npzs__rule_msg(int rule) { return rule > 0 && rule < NPZS_R__END ? rule_msgs[rule] : NULL; }

NPZS__API size_t npzs_rule_count(void) { return NPZS_R__END - 1; }
NPZS__API const char *npzs_rule_id(size_t i) { return i + 1 < NPZS_R__END ? rule_ids[i + 1] : NULL; }
NPZS__API const char *npzs_rule_message(size_t i) { return i + 1 < NPZS_R__END ? rule_msgs[i + 1] : NULL; }

static const struct {
    const char *prefix, *hint;
} hints[] = {
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

/* ---- states ----------------------------------------------------------------------------------- */
/* The state's scope column (states.h): the member an error raised in it belongs to.  Every byte
 * of a plain .npy belongs to its array (a sequence's current one). */
static const unsigned char state_scope[] = {
#define X(name, step, scope, rec, doc) NPZS_SCOPE_##scope,
    NPZS_STATE_MAP(X)
#undef X
};


int npzs__state_scope(int i) { return i >= 0 && i < NPZS_NSTATES ? state_scope[i] : NPZS_SCOPE_ARCHIVE; }

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
