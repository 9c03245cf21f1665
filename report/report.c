/* report.c -- the summary kept from the events, and its printed forms: the fixed `check`
 * contract (JSON and text), ls's JSON, the rejection in words (report.h); the kept-going members
 * printed by keep.c, the pieces every report shares by parts.c. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report.h"
#include "keep.h"
#include "parts.h"
/* a structured dtype's field names as text: the table write.c spells names with */
#include "../src/bytes/text.h"

/* The preamble+header length of an array. */
#define HEADER_LEN(m) ((m)->size - (m)->nbytes)

/* ---- the JSON object ---- */

/* ext = 0: exactly the `check --json` contract.  ext = 1 (`ls --json`): the same object with
 * more keys per member and a "summary" object. */
void print_json(FILE *sink, const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext, const char *file) {
    print_json_kept(sink, o, ok, fmt, p, ext, file, NULL);
}

void print_json_kept(FILE *sink, const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext, const char *file,
                     const npzs_inv *inv) {
    wbuf w, *f = &w;
    wb_init(f, sink);
    wb_c(f, '{');
    if (file) { /* JSON Lines: which file */
        json_bytes(f, "file", file, strlen(file));
        wb_s(f, ", ");
    }
    wb_fmt(f, "\"ok\": %s, \"format\": %s, \"members\": [", ok ? "true" : "false",
           fmt == NPZS_FORMAT_NPY   ? "\"npy\""
           : fmt == NPZS_FORMAT_NPZ ? "\"npz\""
                                    : "null");
    uint64_t tdata = 0, tstored = 0, tsize = 0;
    for (size_t i = 0; i < o->n; i++) {
        const member *m = &o->m[i];
        wb_s(f, i ? ", {" : "{");
        json_name_key(f, m->name, m->name_len);
        json_key_word(f, "kind", report_kind_name(m->kind));
        json_key_word(f, "method", report_method_name(m->method));
        if (m->kind == NPZS_KIND_ARRAY) {
            wb_s(f, ", \"version\": [");
            json_u64(f, (uint64_t)m->vmaj);
            wb_s(f, ", ");
            json_u64(f, (uint64_t)m->vmin);
            wb_s(f, "], \"dtype\": ");
            json_str(f, m->dtype, strlen(m->dtype));
            wb_s(f, ", \"shape\": [");
            for (uint32_t k = 0; k < m->ndim; k++) {
                if (k) wb_s(f, ", ");
                json_u64(f, m->shape[k]);
            }
            wb_s(f, m->fortran ? "], \"fortran_order\": true" : "], \"fortran_order\": false");
            json_key_u64(f, "nbytes", m->nbytes);
            json_key_u64(f, "data_crc32", m->data_crc);
            if (ext) {
                json_key_u64(f, "size", m->size);
                json_key_u64(f, "header_len", HEADER_LEN(m));
            }
        } else {
            json_key_u64(f, "size", m->size);
            json_key_u64(f, "data_crc32", m->data_crc);
        }
        /* added in 0.5.0: what the content looks like, and its SHA-256 when asked for */
        json_key_word(f, "sniff", npzs_sniff_name(m->sniff));
        if (m->sha256) json_key_hex(f, "sha256", m->sha256, 32);
        if (ext) {
            json_key_u64(f, "offset", m->offset);
            json_key_u64(f, "stored_size", m->csize);
            json_key_u64(f, "data_size", DATA_SIZE(m));
            json_key_u64(f, "crc32", m->crc);
            tdata += DATA_SIZE(m);
            tstored += m->csize;
            tsize += m->size;
        }
        if (inv) wb_s(f, ", \"status\": \"ok\", \"error\": null"); /* kept going: checked by the strict parser */
        wb_c(f, '}');
    }
    if (inv) json_kept(f, inv, o->n, ok ? NULL : p);
    wb_s(f, "], ");
    if (inv) json_inventory(f, inv);
    if (ext) {
        wb_fmt(f,
               "\"summary\": {\"members\": %zu, \"data_bytes\": %" PRIu64 ", \"stored_bytes\": %" PRIu64
               ", \"size\": %" PRIu64,
               o->n, tdata, tstored, tsize);
        /* the bytes read: only for an accepted input (a rejected one may have had more taken in,
         * gathered for inflating, than it was read up to, depending on how it arrived) */
        if (ok) wb_fmt(f, ", \"input_bytes\": %" PRIu64, npzs_consumed(p));
        wb_s(f, "}, ");
    }
    if (npzs_ignored_bytes(p)) /* only with --lenient-npy-trailing */
        wb_fmt(f, "\"ignored_bytes\": %" PRIu64 ", ", npzs_ignored_bytes(p));
    wb_s(f, "\"error\": ");
    if (ok) {
        wb_s(f, "null");
    } else {
        report_error e;
        report_error_of(&e, p);
        json_error(f, &e);
    }
    wb_s(f, "}\n");
    wb_flush(f);
}

/* The object of an input that could not be opened or read: error.code "io". */
void print_io_json(FILE *sink, const char *file, const char *why) {
    wbuf w, *f = &w;
    wb_init(f, sink);
    wb_c(f, '{');
    if (file) {
        json_bytes(f, "file", file, strlen(file));
        wb_s(f, ", ");
    }
    wb_s(f,
         "\"ok\": false, \"format\": null, \"members\": [], \"error\": {\"code\": \"io\", \"offset\": 0, "
         "\"member\": null, \"message\": ");
    json_str(f, why, strlen(why));
    wb_s(f, "}}\n");
    wb_flush(f);
    fflush(sink);
}

/* ---- the text ---- */

/* `check` without --json: one line per member as soon as it is complete (nothing is kept), then
 * the verdict.  Names go through safe_str: a rejected archive's names were never validated and
 * must not reach a terminal raw. */

/* A structured dtype's node k as NumPy's repr of its descr writes it. */
static size_t dt_node_text(char *t, size_t cap, const npzs_array_info *a, uint32_t k, int depth) {
    size_t n = 0;
/* what fits of each piece is written (a piece cut short leaves no unwritten bytes before the end) */
#define PUT(str, len) \
    do { \
        size_t l_ = (len); \
        if (n < cap) { memcpy(t + n, (str), l_ < cap - n ? l_ : cap - n); } \
        n += l_; \
    } while (0)
#define PUTS(str) PUT((str), strlen(str))
    const npzs_dtnode *d = k < a->dt_nnodes ? &a->dt_nodes[k] : NULL;
    if (!d || depth > 8) {
        PUTS("...");
    } else if (d->kind == NPZS_DT_SCALAR) {
        PUTS("'");
        PUTS(d->dtype);
        PUTS("'");
    } else if (d->kind == NPZS_DT_SUBARRAY) {
        n += dt_node_text(t + (n < cap ? n : cap), n < cap ? cap - n : 0, a, d->base, depth + 1);
        char sh[32];
        PUTS(", (");
        for (uint32_t i = 0; i < d->ndim; i++) {
            int w = snprintf(sh, sizeof sh, i ? ", %" PRIu64 : "%" PRIu64, d->shape[i]);
            PUT(sh, (size_t)w);
        }
        PUTS(d->ndim == 1 ? ",)" : ")");
    } else {
        PUTS("[");
        for (uint32_t i = 0; i < d->count; i++) {
            const npzs_dtfield *f = &a->dt_fields[d->first + i];
            PUTS(i ? ", ('" : "('");
            for (size_t j = 0, adv; j < f->name_len; j += adv) { /* the name as text (a quote escaped) */
                char u[NPZS_TEXT_UNIT_MAX];
                PUT(u, npzs_text_unit(u, (const uint8_t *)f->name, j, f->name_len, "\\'", &adv));
            }
            PUTS("', ");
            n += dt_node_text(t + (n < cap ? n : cap), n < cap ? cap - n : 0, a, f->type, depth + 1);
            PUTS(")");
        }
        PUTS("]");
    }
#undef PUTS
#undef PUT
    return n;
}

/* A structured dtype as NumPy prints it ([('x', '<f4'), ('y', '<i2', (2,))]) into t (cap bytes,
 * cut with "..." when longer); the type string otherwise.  Returns the length. */
static size_t dtype_text(char *t, size_t cap, const npzs_array_info *a) {
    size_t n;
    if (!a->structured || !a->dt_nnodes) {
        n = strlen(a->dtype);
        if (n >= cap) n = cap - 1;
        memcpy(t, a->dtype, n);
    } else {
        n = dt_node_text(t, cap, a, 0, 0);
        if (n >= cap) { /* cut: the end says so, after the last whole UTF-8 character */
            n = cap - 4;
            while (n > 0 && ((unsigned char)t[n] & 0xC0) == 0x80) n--;
            memcpy(t + n, "...", 3);
            n += 3;
        }
    }
    t[n] = 0;
    return n;
}

/* The array's part of its line: dtype (shape)[ fortran], data bytes.  At most TEXT_ARRAY_MAX
 * bytes: a dtype of < 64 bytes, up to 64 dimensions of up to 20 digits and their separators. */
size_t text_array(char *t, const npzs_array_info *a) {
    char *o = t;
    o += dtype_text(o, DTYPE_TEXT_MAX, a);
    o = CUR_LIT(o, " (");
    uint32_t nd = a->ndim < 64 ? a->ndim : 64;
    for (uint32_t k = 0; k < nd; k++) {
        if (k) o = CUR_LIT(o, ", ");
        o = cur_u64(o, a->shape[k]);
    }
    o = nd == 1 ? CUR_LIT(o, ",)") : CUR_LIT(o, ")");
    if (a->fortran_order) o = CUR_LIT(o, " fortran");
    o = CUR_LIT(o, ", ");
    o = cur_u64(o, a->nbytes);
    return (size_t)(o - t);
}

void text_member(wbuf *f, const char *name, size_t name_len, const char *arr, size_t arr_len, uint64_t size, int method,
                 uint32_t data_crc, int sniff, const uint8_t *sha256) {
    char *o;
    if (name && name_len <= 1024 && plain_ascii((const unsigned char *)name, name_len)) { /* as it is, in one piece */
        o = wb_room(f, 4 + name_len + TEXT_ARRAY_MAX + 40);
        o = CUR_LIT(o, "  ");
        o = cur_s(o, name, name_len);
        o = CUR_LIT(o, ": ");
    } else {
        wb_s(f, "  ");
        if (name) {
            safe_str(f, name, name_len);
            wb_s(f, ": ");
        }
        o = wb_room(f, TEXT_ARRAY_MAX + 40);
    }
    if (arr) {
        o = cur_s(o, arr, arr_len);
    } else {
        o = CUR_LIT(o, "blob (");
        const char *k = npzs_sniff_name(sniff);
        o = cur_s(o, k, strlen(k));
        o = CUR_LIT(o, "), ");
        o = cur_u64(o, size);
    }
    o = method == NPZS_METHOD_DEFLATED ? CUR_LIT(o, " bytes, deflated, crc32 ") : CUR_LIT(o, " bytes, stored, crc32 ");
    o = cur_hex32(o, data_crc);
    wb_done(f, o);
    if (sha256) {
        wb_s(f, ", sha256 ");
        wb_hex(f, sha256, 32);
    }
    wb_c(f, '\n');
}

void text_verdict(wbuf *f, size_t members, int ok, npzs_format fmt, const npzs_parser *p, const char *label) {
    safe_str(f, label, strlen(label)); /* a file name is bytes from the outside too */
    if (ok) {
        wb_fmt(f, ": ok (%s, %zu member%s)\n", fmt == NPZS_FORMAT_NPY ? "npy" : "npz", members,
               members == 1 ? "" : "s");
    } else {
        wb_s(f, ": REJECTED: ");
        text_rejection(f, p);
    }
    wb_flush(f);
}

void text_rejection(wbuf *f, const npzs_parser *p) {
    size_t nl;
    const char *nm = npzs_error_member_name(p, &nl);
    wb_fmt(f, "%s at offset %" PRIu64, npzs_error_name(npzs_error(p)), npzs_error_offset(p));
    if (nm) {
        wb_s(f, " (member ");
        safe_str(f, nm, nl);
        wb_c(f, ')');
    }
    wb_s(f, ": ");
    const char *msg = npzs_error_message(p), *detail = npzs_error_detail(p), *rule = npzs_error_rule(p),
               *hint = npzs_error_hint(p);
    safe_words(f, msg, strlen(msg));
    if (detail) {
        wb_s(f, ": ");
        safe_words(f, detail, strlen(detail));
    }
    const char *lname;
    uint64_t lvalue, lneeded;
    if (npzs_error_limit(p, &lname, &lvalue, &lneeded)) text_limit(f, lname, lvalue, lneeded);
    if (rule) wb_fmt(f, " [%s]", rule);
    wb_c(f, '\n');
    if (hint) {
        wb_s(f, "  hint: ");
        safe_words(f, hint, strlen(hint));
        wb_c(f, '\n');
    }
}

/* ---- the summary ---- */

/* Blocks that never move, freed together: pointers into them stay valid. */
typedef struct block {
    struct block *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
} block;

static void *arena_alloc(out *o, size_t n) {
    n = (n + 7) & ~(size_t)7;
    block *b = o->arena;
    if (!b || b->size - b->used < n) {
        size_t sz = n > 65536 ? n : 65536;
        b = malloc(sizeof *b + sz);
        if (!b) return NULL;
        b->next = o->arena;
        b->used = 0;
        b->size = sz;
        o->arena = b;
    }
    void *p = b->data + b->used;
    b->used += n;
    return p;
}

void *table_room(void *t, size_t *cap, size_t n, size_t size, size_t first) {
    if (n < *cap) return t;
    size_t nc = *cap ? *cap * 2 : first;
    if (nc > SIZE_MAX / size) return NULL;
    void *nt = realloc(t, nc * size);
    if (nt) *cap = nc;
    return nt;
}

/* The fields of a member the events give directly (the name, dtype and shape are copied by the
 * caller, into storage that outlives the event). */
static void member_begin(member *m, const npzs_event *ev) {
    memset(m, 0, sizeof *m);
    m->method = (uint8_t)ev->method;
    m->offset = ev->offset;
    m->dtype = "";
    m->kind = NPZS_KIND_BLOB;
}

static void member_header(member *m, const npzs_array_info *a) {
    m->kind = NPZS_KIND_ARRAY;
    m->vmaj = a->version_major;
    m->vmin = a->version_minor;
    m->fortran = (uint8_t)a->fortran_order;
    m->ndim = a->ndim;
    m->nbytes = a->nbytes;
}

static void member_end(member *m, const npzs_event *ev) {
    m->kind = (uint8_t)ev->kind;
    m->sniff = (uint8_t)ev->sniff;
    m->data_crc = ev->data_crc32;
    m->size = ev->size;
    m->csize = ev->csize;
    m->crc = ev->crc32;
}

int out_event(out *o, const npzs_event *ev) {
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN: {
        member *ms = table_room(o->m, &o->cap, o->n, sizeof *o->m, 16);
        if (!ms) return -1;
        o->m = ms;
        member *m = &o->m[o->n];
        member_begin(m, ev);
        if (ev->name) {
            char *nm = arena_alloc(o, ev->name_len ? ev->name_len : 1);
            if (!nm) return -1;
            memcpy(nm, ev->name, ev->name_len);
            m->name = nm;
            m->name_len = (uint32_t)ev->name_len;
        }
        o->open = 1;
        break; /* counted (o->n++) only when complete */
    }
    case NPZS_EV_HEADER: {
        member *m = &o->m[o->n];
        const npzs_array_info *a = ev->array;
        member_header(m, a);
        size_t dl = strlen(a->dtype) + 1;
        char *dt = arena_alloc(o, dl);
        uint64_t *sh = arena_alloc(o, a->ndim * sizeof *sh);
        if (!dt || !sh) return -1;
        memcpy(dt, a->dtype, dl);
        memcpy(sh, a->shape, a->ndim * sizeof *sh);
        m->dtype = dt;
        m->shape = sh;
        if (a->structured) {
            char t[DTYPE_TEXT_MAX];
            size_t tl = dtype_text(t, sizeof t, a) + 1;
            char *d = arena_alloc(o, tl);
            if (!d) return -1;
            memcpy(d, t, tl);
            m->dtext = d;
        }
        break;
    }
    case NPZS_EV_MEMBER_END: {
        member *m = &o->m[o->n];
        member_end(m, ev);
        if (ev->sha256) {
            uint8_t *h = arena_alloc(o, 32);
            if (!h) return -1;
            memcpy(h, ev->sha256, 32);
            m->sha256 = h;
        }
        o->n++;
        o->open = 0;
        break;
    }
    default: break;
    }
    return 0;
}

void out_free(out *o) {
    while (o->arena) {
        block *b = o->arena;
        o->arena = b->next;
        free(b);
    }
    free(o->m);
}

/* ---- check's report ---- */

void check_report_init(check_report *r, int json, int quiet, FILE *sink) {
    memset(r, 0, offsetof(check_report, text)); /* not the 16 KiB buffer: a batch of small files */
    r->json = json;
    r->quiet = quiet;
    wb_init(&r->text, sink);
}

unsigned check_report_events(const check_report *r) {
    unsigned want = NPZS_EV_BIT(NPZS_EV_MEMBER_END);
    if (r->json) want |= NPZS_EV_BIT(NPZS_EV_MEMBER_BEGIN) | NPZS_EV_BIT(NPZS_EV_HEADER);
    return want;
}

/* A member's line, at its MEMBER_END: the event repeats the name (NULL for a .npy) and, for an
 * array, points at its header. */
static void check_line(check_report *r, const npzs_event *ev) {
    const npzs_array_info *a = ev->array;
    if (a && !(a->header_size && a->header_size == r->key_len && memcmp(a->header, r->key, r->key_len) == 0)) {
        r->arr_len = text_array(r->arr, a);
        r->key_len = a->header_size <= sizeof r->key ? (size_t)a->header_size : 0;
        memcpy(r->key, a->header, r->key_len);
    }
    text_member(&r->text, ev->name, ev->name_len, a ? r->arr : NULL, r->arr_len, ev->size, ev->method, ev->data_crc32,
                ev->sniff, ev->sha256);
}

int check_report_event(check_report *r, const npzs_event *ev) {
    if (r->json && out_event(&r->o, ev) < 0) return -1;
    if (ev->type != NPZS_EV_MEMBER_END) return 0;
    r->members++;
    if (!r->json && !r->quiet) check_line(r, ev);
    return 0;
}

void check_report_verdict(check_report *r, int ok, const npzs_parser *p, const char *label, const char *file) {
    npzs_format fmt = npzs_format_of(p);
    if (r->quiet) return;
    if (r->json) {
        print_json_kept(r->text.f, &r->o, ok, fmt, p, 0, file, r->inv);
    } else {
        text_verdict(&r->text, r->members, ok, fmt, p, label);
        if (r->inv) {
            text_kept(&r->text, r->inv, r->members, ok ? NULL : p);
            wb_flush(&r->text);
        }
    }
}
