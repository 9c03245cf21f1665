/* cmd_trace.c -- `npzstream trace`: where in the structure the parse is, record by record.
 *
 * The input is pushed one byte at a time, so every state the parser passes through between two
 * bytes is seen with the absolute offset where it starts.  Each ZIP record the parser read (local
 * header, its name and extra fields, data descriptor, central entry, end records) is printed
 * once the parser leaves it, its fields decoded for display from the bytes the parser consumed;
 * the events follow as they come, and at the end the verdict, with the rule on a rejection.
 * Nothing here decides anything: the verdict is the library's.  For debugging a refused
 * upload, not for speed (10 to 20 MB/s).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sandbox.h"

void usage_trace(FILE *f) {
    fprintf(f,
            "usage: npzstream trace [OPTIONS] [--sequence] [FILE|-]\n"
            "Prints one line per parser state with the offset where it starts, each ZIP record\n"
            "(local header, name, extra fields, data descriptor, central entry, end records) with\n"
            "its fields, the events, and the verdict (on a rejection: offset, code, rule, message).\n"
            "For a person debugging a refused file: it parses one byte per push.\n"
            "%s%s",
            limits_help(), EXIT_HELP);
}

typedef struct tr_ctx {
    wbuf w;
    int state;    /* the row of the library's state table the parser is in */
    int start;    /* the first row (START) */
    uint8_t *rec; /* the bytes of the record being read, from its first byte */
    size_t rec_len, rec_cap;
    uint16_t name_len, extra_len; /* of the record being read */
} tr_ctx;

static uint16_t g16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t g32(const uint8_t *b) { return (uint32_t)g16(b) | (uint32_t)g16(b + 2) << 16; }
static uint64_t g64(const uint8_t *b) { return (uint64_t)g32(b) | (uint64_t)g32(b + 4) << 32; }

/* The bytes a state takes are a record's (the table's record column). */
static int record_state(int s) { return npzs_state_record(s) != NPZS_REC_NONE; }

static void extras(wbuf *w, const uint8_t *x, size_t n) {
    wb_s(w, "           extra fields:");
    if (!n) wb_s(w, " none");
    size_t i = 0;
    while (n - i >= 4) {
        uint16_t id = g16(x + i), len = g16(x + i + 2);
        wb_fmt(w, " [id 0x%04x, %u bytes", id, len);
        if (id == 1 && n - i - 4 >= len)
            for (uint16_t k = 0; k + 8 <= len; k += 8) wb_fmt(w, "%s%" PRIu64, k ? " " : ": ", g64(x + i + 4 + k));
        wb_c(w, ']');
        i += 4u + len;
        if (i > n) {
            wb_s(w, " (runs past the block)");
            break;
        }
    }
    if (i < n) wb_fmt(w, " + %zu bytes left over", n - i);
    wb_c(w, '\n');
}

/* The parser left state `s`: print the record (or the part of it) it read there. */
static void left(tr_ctx *t, int s) {
    const uint8_t *r = t->rec;
    size_t n = t->rec_len;
    wbuf *w = &t->w;
    npzs_record_part part = npzs_state_record(s);
    if (part == NPZS_REC_LFH && n >= 30) {
        t->name_len = g16(r + 26);
        t->extra_len = g16(r + 28);
        wb_fmt(w,
               "           local header: version %u, flags 0x%04x, method %u, crc32 %08" PRIx32 ", compressed %" PRIu32
               ", uncompressed %" PRIu32 ", name %u bytes, extra %u bytes\n",
               g16(r + 4), g16(r + 6), g16(r + 8), g32(r + 14), g32(r + 18), g32(r + 22), t->name_len, t->extra_len);
    } else if ((part == NPZS_REC_LFH_NAME && n >= 30u + t->name_len) ||
               (part == NPZS_REC_CDH_NAME && n >= 46u + t->name_len)) {
        size_t at = part == NPZS_REC_LFH_NAME ? 30 : 46;
        wb_s(w, "           name: ");
        json_str(w, (const char *)r + at, t->name_len);
        wb_c(w, '\n');
    } else if (part == NPZS_REC_LFH_EXTRA && n >= 30u + t->name_len + t->extra_len) {
        extras(w, r + 30 + t->name_len, t->extra_len);
    } else if (part == NPZS_REC_CDH_EXTRA && n >= 46u + t->name_len + t->extra_len) {
        extras(w, r + 46 + t->name_len, t->extra_len);
    } else if (part == NPZS_REC_CDH && n >= 46) {
        t->name_len = g16(r + 28);
        t->extra_len = g16(r + 30);
        wb_fmt(w,
               "           central entry: made by 0x%04x, version %u, flags 0x%04x, method %u, crc32 %08" PRIx32
               ", compressed %" PRIu32 ", uncompressed %" PRIu32
               ", name %u, extra %u, comment %u bytes, disk %u"
               ", local header at %" PRIu32 "\n",
               g16(r + 4), g16(r + 6), g16(r + 8), g16(r + 10), g32(r + 16), g32(r + 20), g32(r + 24), t->name_len,
               t->extra_len, g16(r + 32), g16(r + 34), g32(r + 42));
    } else if (part == NPZS_REC_DD && n >= 12) {
        int sig = n >= 16 && g32(r) == 0x08074b50u;
        const uint8_t *d = r + (sig ? 4 : 0);
        size_t m = n - (sig ? 4 : 0);
        if (m >= 20)
            wb_fmt(w,
                   "           data descriptor%s: crc32 %08" PRIx32 ", compressed %" PRIu64 ", uncompressed %" PRIu64
                   " (ZIP64)\n",
                   sig ? " (signed)" : "", g32(d), g64(d + 4), g64(d + 12));
        else
            wb_fmt(w,
                   "           data descriptor%s: crc32 %08" PRIx32 ", compressed %" PRIu32 ", uncompressed %" PRIu32
                   "\n",
                   sig ? " (signed)" : "", g32(d), g32(d + 4), g32(d + 8));
    } else if (part == NPZS_REC_Z64_EOCD && n >= 56) {
        wb_fmt(w,
               "           zip64 end record: size %" PRIu64 ", disks %" PRIu32 "/%" PRIu32 ", entries %" PRIu64
               "/%" PRIu64 ", directory %" PRIu64 " bytes at %" PRIu64 "\n",
               g64(r + 4), g32(r + 16), g32(r + 20), g64(r + 24), g64(r + 32), g64(r + 40), g64(r + 48));
    } else if (part == NPZS_REC_Z64_LOC && n >= 20) {
        wb_fmt(w, "           zip64 locator: disk %" PRIu32 ", end record at %" PRIu64 ", disks %" PRIu32 "\n",
               g32(r + 4), g64(r + 8), g32(r + 16));
    } else if (part == NPZS_REC_EOCD && n >= 22) {
        wb_fmt(w,
               "           end record: disks %u/%u, entries %u/%u, directory %" PRIu32 " bytes at %" PRIu32
               ", comment %u bytes\n",
               g16(r + 4), g16(r + 6), g16(r + 8), g16(r + 10), g32(r + 12), g32(r + 16), g16(r + 20));
    }
}

static void shape(wbuf *w, const npzs_array_info *a) {
    wb_c(w, '(');
    for (uint32_t d = 0; d < a->ndim; d++) wb_fmt(w, d ? ", %" PRIu64 : "%" PRIu64, a->shape[d]);
    wb_s(w, a->ndim == 1 ? ",)" : ")");
}

static void event(tr_ctx *t, const npzs_event *ev) {
    wbuf *w = &t->w;
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        wb_fmt(w, "%10" PRIu64 "  event MEMBER_BEGIN member %u, %s", ev->offset, ev->member,
               ev->method == NPZS_METHOD_DEFLATED ? "deflated" : "stored");
        if (ev->name) {
            wb_s(w, ", name ");
            json_str(w, ev->name, ev->name_len);
        }
        wb_c(w, '\n');
        break;
    case NPZS_EV_HEADER:
        wb_fmt(w, "%10" PRIu64 "  event HEADER member %u: .npy %u.%u, dtype %s, shape ", ev->offset, ev->member,
               ev->array->version_major, ev->array->version_minor, ev->array->dtype);
        shape(w, ev->array);
        wb_fmt(w, ", %s order, %" PRIu64 " data bytes after a %" PRIu64 "-byte header\n",
               ev->array->fortran_order ? "Fortran" : "C", ev->array->nbytes, ev->array->header_len);
        break;
    case NPZS_EV_MEMBER_END:
        wb_fmt(w,
               "%10" PRIu64 "  event MEMBER_END member %u: %s, %" PRIu64 " bytes (%" PRIu64
               " in the input), crc32 %08" PRIx32 "\n",
               ev->offset, ev->member, ev->kind == NPZS_KIND_ARRAY ? "array" : "blob", ev->size, ev->csize, ev->crc32);
        break;
    case NPZS_EV_END:
        wb_fmt(w, "%10" PRIu64 "  event END: %s, %u member%s\n", ev->offset,
               ev->format == NPZS_FORMAT_NPY ? "npy" : "npz", ev->members, ev->members == 1 ? "" : "s");
        break;
    default: /* DATA and BLOB chunks: their bytes are the member's, summed up at MEMBER_END */ break;
    }
}

static void state_to(tr_ctx *t, npzs_parser *p) {
    int now = npzs_state_index(p);
    if (now == t->state || npzs_error(p)) return; /* FAILED: the verdict says */
    /* START only looks at the first byte: the state after it starts at 0, with that byte */
    int first = t->state == t->start;
    left(t, t->state);
    npzs_record_part part = npzs_state_record(now);
    if (!first && (part == NPZS_REC_SIG || part == NPZS_REC_DD)) t->rec_len = 0; /* a record starts */
    wb_fmt(&t->w, "%10" PRIu64 "  %s\n", first ? 0 : npzs_consumed(p), npzs_state_id(now));
    t->state = now;
}

typedef struct tr_drive {
    npzs_parser *p;
    tr_ctx *t;
    int failed;
} tr_drive;

/* Run the parser on in until it needs input (or stops): 0, or the final status. */
static int tr_run(tr_drive *d, npzs_in *in) {
    for (;;) {
        npzs_event ev;
        int rc = npzs_next(d->p, in, &ev);
        state_to(d->t, d->p);
        if (rc == NPZS_EVENT) {
            event(d->t, &ev);
            if (ev.type == NPZS_EV_END) return 1;
            continue;
        }
        if (rc == NPZS_NEED_INPUT) return 0;
        if (rc == NPZS_DONE) return 1;
        d->failed = 1;
        return rc == NPZS_E_NOMEM ? 3 : 2;
    }
}

/* One byte at a time, after an empty push: the parser first goes as far as it can without the
 * byte, so the state it is in then is the one that takes the byte, at its exact offset. */
static int tr_push(void *vc, npzs_in *in) {
    tr_drive *d = vc;
    tr_ctx *t = d->t;
    size_t end = in->size;
    int r = 0;
    if (end == 0) { /* the end of the input */
        r = tr_run(d, NULL);
    } else {
        for (size_t i = in->pos; i < end && !r; i++) {
            npzs_in none = {in->src, i, i}, one = {in->src, i + 1, i};
            if ((r = tr_run(d, &none)) != 0) break;
            if (record_state(t->state)) {
                uint8_t *nb = table_room(t->rec, &t->rec_cap, t->rec_len, 1, 4096);
                if (!nb) {
                    fprintf(stderr, "npzstream: out of memory\n");
                    return 2;
                }
                t->rec = nb;
                t->rec[t->rec_len++] = ((const uint8_t *)in->src)[i];
            }
            r = tr_run(d, &one);
            if (t->w.n > sizeof t->w.b / 2) wb_flush(&t->w);
        }
    }
    in->pos = end;
    if (r == 0) return -1;
    return r == 1 ? 0 : r == 2 ? 1 : 2;
}

static void tr_eof(void *vc) { npzs_finish(((tr_drive *)vc)->p); }

int cmd_trace(int argc, char **argv) {
    batch b;
    int status = batch_parse(argc, argv, &b, usage_trace, usage_trace);
    if (status >= 0) {
        batch_free(&b);
        return status;
    }
    if (b.npaths > 1 || b.files_from || b.json || b.jsonl) {
        fprintf(stderr, "npzstream: trace reads one FILE and prints text\n");
        batch_free(&b);
        return 2;
    }
    if (b.op.jobs > 1) { /* the states it prints are the parser's, one member after the other */
        fprintf(stderr, "npzstream: trace runs the parser alone (no -j)\n");
        batch_free(&b);
        return 2;
    }
    char err[256];
    const char *label;
    int fd = cli_open(b.npaths ? b.paths[0] : NULL, &label, err, sizeof err);
    if (fd < 0) {
        io_failure(&b, label, err);
        batch_free(&b);
        return 2;
    }
    npzs_parser *p = new_parser(&b.op);
    if (!p) {
        if (fd) close(fd);
        batch_free(&b);
        return 2;
    }
    if (b.sequence) npzs_npy_sequence(p);
    /* confined once its input is open, as check is (sandbox.h): reads nothing else, writes only
     * stdout and stderr */
    cli_confine_spec sb = {.prog = "npzstream", .off = b.op.no_sandbox, .hashing = b.op.sha256};
    if (cli_confine(&sb) < 0) {
        parser_free(p);
        if (fd) close(fd);
        batch_free(&b);
        return 2;
    }
    tr_ctx t;
    memset(&t, 0, sizeof t);
    wb_init(&t.w, stdout);
    t.state = t.start = npzs_state_index(p);
    wb_fmt(&t.w, "%10d  %s\n", 0, npzs_state_id(t.state));
    tr_drive d = {p, &t, 0};
    status = cli_read_loop(fd, "npzstream", label, 0, tr_push, tr_eof, &d);
    if (d.failed) {
        left(&t, t.state);
        size_t nl = 0;
        const char *nm = npzs_error_member_name(p, &nl);
        wb_fmt(&t.w, "%10" PRIu64 "  REJECTED in %s: %s, rule %s: %s", npzs_error_offset(p), npzs_state_id(t.state),
               npzs_error_name(npzs_error(p)), npzs_error_rule(p) ? npzs_error_rule(p) : "-", npzs_error_message(p));
        if (npzs_error_member(p) >= 0) wb_fmt(&t.w, " (member %ld", npzs_error_member(p));
        if (nm) {
            wb_s(&t.w, " ");
            json_str(&t.w, nm, nl);
        }
        if (npzs_error_member(p) >= 0) wb_c(&t.w, ')');
        wb_c(&t.w, '\n');
    }
    wb_flush(&t.w);
    fflush(stdout);
    free(t.rec);
    parser_free(p);
    if (fd) close(fd);
    batch_free(&b);
    return status;
}
