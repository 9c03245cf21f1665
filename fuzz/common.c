/* fuzz/common.c -- shared driver for the npzstream fuzz harnesses (see common.h). */
#include "common.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "internal.h" /* test-build helpers of the library, linked from its sources */
#include "bytes/text.h"

uint64_t fz_visited_all;
uint32_t fz_cvisited_all;
uint32_t fz_vlen_visited_all;
uint32_t fz_scout_visited_all;
uint32_t fz_errors_seen;

void fz_die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("fuzz invariant violated: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    fflush(stderr);
    abort();
}

void fz_opts_init(fz_opts *o) {
    memset(o, 0, sizeof *o);
    o->fail_at = -1;
}

/* ---- tracking allocator ---------------------------------------------------------- */
#define FZ_AMAGIC 0x6E707A73u
typedef struct fz_alloc_state {
    long fail_at;
    unsigned long count;
    int failed;
    size_t live, live_bytes, peak;
} fz_alloc_state;

typedef union fz_ahdr {
    struct {
        uint32_t magic;
        size_t size;
    } h;
    max_align_t align;
} fz_ahdr;

static void *fz_alloc(void *opaque, size_t size) {
    fz_alloc_state *a = opaque;
    unsigned long i = a->count++;
    if (a->fail_at >= 0 && (unsigned long)a->fail_at == i) {
        a->failed = 1;
        return NULL;
    }
    if (size > ((size_t)1 << 34)) fz_die("allocation of %zu bytes", size);
    fz_ahdr *h = malloc(sizeof *h + size);
    if (!h) fz_die("host malloc failed (%zu bytes)", size);
    h->h.magic = FZ_AMAGIC;
    h->h.size = size;
    a->live++;
    a->live_bytes += size;
    if (a->live_bytes > a->peak) a->peak = a->live_bytes;
    return h + 1;
}

static void fz_free(void *opaque, void *ptr) {
    fz_alloc_state *a = opaque;
    if (!ptr) fz_die("allocator free hook called with NULL");
    fz_ahdr *h = (fz_ahdr *)ptr - 1;
    if (h->h.magic != FZ_AMAGIC) fz_die("free of a pointer that the alloc hook never returned");
    if (a->live == 0) fz_die("more frees than allocations");
    h->h.magic = 0;
    a->live--;
    a->live_bytes -= h->h.size;
    free(h);
}

/* ---- digest -------------------------------------------------------------------------- */
typedef struct fz_dig {
    uint64_t h;
    FILE *log;
    /* pending DATA/BLOB stream of one member */
    int d_type;
    uint32_t d_member;
    uint64_t d_len;
    uint32_t d_crc, d_adler;
} fz_dig;

static void mix(fz_dig *d, uint64_t v) {
    uint64_t x = d->h ^ (v + 0x9E3779B97F4A7C15ull);
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
    d->h = x ^ (x >> 31);
}

static void mix_bytes(fz_dig *d, const void *s, size_t n) {
    mix(d, n);
    uint64_t f = 0xCBF29CE484222325ull;
    const uint8_t *b = s;
    for (size_t i = 0; i < n; i++) f = (f ^ b[i]) * 0x100000001B3ull;
    mix(d, f);
}

static void flush_data(fz_dig *d) {
    if (!d->d_type) return;
    mix(d, 0xDA7A0000u | (unsigned)d->d_type);
    mix(d, d->d_member);
    mix(d, d->d_len);
    mix(d, d->d_crc);
    mix(d, d->d_adler);
    if (d->log)
        fprintf(d->log, "%s member=%u len=%llu crc=%08x\n", d->d_type == NPZS_EV_DATA ? "DATA*" : "BLOB*",
                (unsigned)d->d_member, (unsigned long long)d->d_len, (unsigned)d->d_crc);
    d->d_type = 0;
    d->d_len = 0;
}

static void log_bytes(FILE *f, const void *s, size_t n) {
    const uint8_t *b = s;
    fputc('"', f);
    for (size_t i = 0; i < n && i < 200; i++) {
        if (b[i] >= 32 && b[i] < 127 && b[i] != '"' && b[i] != '\\') fputc(b[i], f);
        else fprintf(f, "\\x%02x", b[i]);
    }
    if (n > 200) fputs("...", f);
    fputc('"', f);
}

/* What the stream reported of each member, for the zipfile oracle (fz_zipfile_check). */
typedef struct fz_seen {
    uint64_t lfh, data, csize, usize;
    uint32_t crc;
    int method;
    unsigned flags;
    size_t name_len;
} fz_seen;
#define FZ_SEEN_MAX 4096

typedef struct fz_track {
    fz_seen *seen; /* the first FZ_SEEN_MAX members */
    size_t nseen, members;
    int in_member;
    uint32_t member;
    uint64_t next_pos; /* expected pos of the next DATA/BLOB chunk */
    int chunk_type;    /* DATA or BLOB, 0 before the first chunk */
    int seen_end;
    uint64_t name_hash; /* of the member's name at MEMBER_BEGIN: MEMBER_END repeats it */
    size_t name_len;
    volatile uint8_t sink;
} fz_track;

static uint64_t name_fnv(const char *s, size_t n) {
    uint64_t h = UINT64_C(0xcbf29ce484222325);
    for (size_t i = 0; i < n; i++) h = (h ^ (uint8_t)s[i]) * UINT64_C(0x100000001b3);
    return h ^ (s ? 0 : 1);
}

/* What MEMBER_END says of the member's sizes and CRCs. */
static void mix_end_sizes(fz_dig *d, const npzs_event *ev) {
    mix(d, (uint64_t)ev->kind);
    mix(d, ev->size);
    mix(d, ev->csize);
    mix(d, ev->crc32);
    mix(d, ev->data_crc32);
    mix(d, ev->data_size);
    mix(d, (uint64_t)ev->sniff);
    if (ev->sha256) mix_bytes(d, ev->sha256, 32);
}

/* What a header says (with the mask: HEADER, and MEMBER_END of an array). */
static void mix_header(fz_dig *d, const npzs_array_info *a) {
    mix_bytes(d, a->dtype, strlen(a->dtype));
    mix_bytes(d, a->descr, a->descr_len);
    for (uint32_t i = 0; i < a->ndim; i++) mix(d, a->shape[i]);
    mix(d, a->nbytes);
    mix_bytes(d, a->header, a->header_size);
}

/* With some events only (fz_opts.mask): what each says, without the sequence checks of on_event
 * (whose events may be missing); DATA and BLOB bytes as one CRC over the run (chunks are split
 * dependent), with the member index where it changes. */
static void on_masked_event(fz_dig *d, fz_track *t, const npzs_event *ev) {
    if (t->seen_end) fz_die("event %d after END", (int)ev->type);
    if (ev->type == NPZS_EV_DATA || ev->type == NPZS_EV_BLOB) {
        if (!t->in_member || t->member != ev->member || t->chunk_type != (int)ev->type) {
            mix(d, ev->type);
            mix(d, ev->member);
            t->in_member = 1;
            t->member = ev->member;
            t->chunk_type = (int)ev->type;
        }
        if (ev->pos != t->next_pos && t->next_pos != 0 && ev->pos != 0)
            fz_die("chunk pos %llu, expected %llu", (unsigned long long)ev->pos, (unsigned long long)t->next_pos);
        t->next_pos = ev->pos + ev->len;
        d->d_crc = (uint32_t)crc32(d->d_crc, ev->data, (uInt)ev->len);
        d->d_len += ev->len;
        return;
    }
    t->in_member = 0;
    t->next_pos = 0;
    mix(d, d->d_crc);
    mix(d, d->d_len);
    mix(d, ev->type);
    mix(d, ev->member);
    mix(d, ev->offset);
    const npzs_array_info *a = ev->array;
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        mix_bytes(d, ev->name, ev->name_len);
        mix(d, (uint64_t)ev->method);
        mix(d, ev->flags);
        break;
    case NPZS_EV_MEMBER_END:
        mix_bytes(d, ev->name, ev->name_len);
        mix_end_sizes(d, ev);
        if ((a != NULL) != (ev->kind == NPZS_KIND_ARRAY))
            fz_die("MEMBER_END: array %p for kind %d", (const void *)a, (int)ev->kind);
        if (a) mix_header(d, a); /* an array's MEMBER_END points at its header */
        break;
    case NPZS_EV_HEADER: mix_header(d, a); break;
    case NPZS_EV_END:
        t->seen_end = 1;
        mix(d, ev->members);
        break;
    default: fz_die("event type %d", (int)ev->type);
    }
}

static void on_event(fz_dig *d, fz_track *t, const npzs_event *ev) {
    if (ev->type != NPZS_EV_DATA && ev->type != NPZS_EV_BLOB) flush_data(d);
    if (t->seen_end) fz_die("event %d after END", (int)ev->type);
    switch (ev->type) {
    case NPZS_EV_MEMBER_BEGIN:
        if (t->in_member) fz_die("MEMBER_BEGIN inside member %u", (unsigned)t->member);
        t->in_member = 1;
        t->member = ev->member;
        t->next_pos = 0;
        t->chunk_type = 0;
        if (ev->name_len && !ev->name) fz_die("MEMBER_BEGIN name NULL with name_len %zu", ev->name_len);
        t->name_hash = name_fnv(ev->name, ev->name_len);
        t->name_len = ev->name_len;
        if (t->members++ < FZ_SEEN_MAX) {
            if (!t->seen && !(t->seen = calloc(FZ_SEEN_MAX, sizeof *t->seen))) fz_die("host calloc failed");
            fz_seen *s = &t->seen[t->nseen++];
            s->lfh = ev->offset;
            s->name_len = ev->name_len;
            s->method = ev->method;
            s->flags = ev->flags;
        }
        mix(d, 1);
        mix(d, ev->member);
        mix(d, ev->offset);
        mix_bytes(d, ev->name, ev->name_len);
        mix(d, (uint64_t)ev->method);
        mix(d, ev->flags);
        if (d->log) {
            fprintf(d->log, "MEMBER_BEGIN member=%u off=%llu method=%d flags=%#x name=", (unsigned)ev->member,
                    (unsigned long long)ev->offset, ev->method, ev->flags);
            log_bytes(d->log, ev->name, ev->name_len);
            fputc('\n', d->log);
        }
        break;
    case NPZS_EV_HEADER: {
        const npzs_array_info *a = ev->array;
        if (t->nseen && t->members == t->nseen) t->seen[t->nseen - 1].data = ev->offset;
        if (!t->in_member || ev->member != t->member) fz_die("HEADER outside its member");
        if (!a) fz_die("HEADER without array info");
        if (!a->dtype || !a->descr) fz_die("HEADER with NULL dtype/descr");
        if (a->descr[a->descr_len] != 0) fz_die("descr not NUL-terminated at descr_len");
        if (a->ndim > 64) fz_die("ndim %u > 64", (unsigned)a->ndim);
        if (a->ndim && !a->shape) fz_die("shape NULL with ndim %u", (unsigned)a->ndim);
        if (!a->header || a->header_size != a->header_len)
            fz_die("HEADER raw bytes: header %p, header_size %zu, header_len %llu", (const void *)a->header,
                   a->header_size, (unsigned long long)a->header_len);
        mix(d, 2);
        mix(d, ev->member);
        mix(d, ev->offset);
        mix(d, a->version_major);
        mix(d, a->version_minor);
        mix(d, (uint64_t)a->fortran_order);
        mix(d, (uint64_t)a->structured);
        mix_bytes(d, a->dtype, strlen(a->dtype));
        mix_bytes(d, a->descr, a->descr_len);
        mix(d, a->ndim);
        for (uint32_t i = 0; i < a->ndim; i++) mix(d, a->shape[i]);
        mix(d, a->itemsize);
        mix(d, a->count);
        mix(d, a->nbytes);
        mix(d, a->header_len);
        mix_bytes(d, a->header, a->header_size);
        if (d->log) {
            fprintf(d->log, "HEADER member=%u off=%llu v%u.%u fortran=%d structured=%d dtype=%s ndim=%u shape=(",
                    (unsigned)ev->member, (unsigned long long)ev->offset, a->version_major, a->version_minor,
                    a->fortran_order, a->structured, a->dtype, (unsigned)a->ndim);
            for (uint32_t i = 0; i < a->ndim; i++) fprintf(d->log, "%llu,", (unsigned long long)a->shape[i]);
            fprintf(d->log, ") itemsize=%llu nbytes=%llu header_len=%llu descr=", (unsigned long long)a->itemsize,
                    (unsigned long long)a->nbytes, (unsigned long long)a->header_len);
            log_bytes(d->log, a->descr, a->descr_len);
            fputc('\n', d->log);
        }
        break;
    }
    case NPZS_EV_DATA:
    case NPZS_EV_BLOB: {
        if (!t->in_member || ev->member != t->member)
            fz_die("%s chunk for member %u outside member %u", ev->type == NPZS_EV_DATA ? "DATA" : "BLOB",
                   (unsigned)ev->member, (unsigned)t->member);
        if (t->chunk_type && t->chunk_type != (int)ev->type) fz_die("DATA and BLOB mixed in one member");
        t->chunk_type = (int)ev->type;
        if (ev->len == 0) fz_die("empty %s chunk", ev->type == NPZS_EV_DATA ? "DATA" : "BLOB");
        if (!ev->data) fz_die("chunk data NULL");
        if (ev->pos != t->next_pos)
            fz_die("chunk pos %llu, expected %llu (member %u)", (unsigned long long)ev->pos,
                   (unsigned long long)t->next_pos, (unsigned)ev->member);
        t->next_pos += ev->len;
        /* read every byte (ASan checks [data, data+len)) */
        uint8_t acc = 0;
        for (size_t i = 0; i < ev->len; i++) acc ^= ev->data[i];
        t->sink ^= acc;
        if (d->d_type && (d->d_type != (int)ev->type || d->d_member != ev->member)) flush_data(d);
        if (!d->d_type) {
            d->d_type = (int)ev->type;
            d->d_member = ev->member;
            d->d_len = 0;
            d->d_crc = (uint32_t)crc32(0L, Z_NULL, 0);
            d->d_adler = (uint32_t)adler32(0L, Z_NULL, 0);
        }
        const uint8_t *s = ev->data;
        size_t left = ev->len;
        while (left) {
            uInt k = left > 0x40000000u ? 0x40000000u : (uInt)left;
            d->d_crc = (uint32_t)crc32(d->d_crc, s, k);
            d->d_adler = (uint32_t)adler32(d->d_adler, s, k);
            s += k;
            left -= k;
        }
        d->d_len += ev->len;
        break;
    }
    case NPZS_EV_MEMBER_END:
        if (!t->in_member || ev->member != t->member) fz_die("MEMBER_END outside its member");
        if (ev->name_len != t->name_len || name_fnv(ev->name, ev->name_len) != t->name_hash)
            fz_die("MEMBER_END of member %u does not repeat its name", (unsigned)ev->member);
        t->in_member = 0;
        if (t->nseen && t->members == t->nseen) {
            fz_seen *s = &t->seen[t->nseen - 1];
            s->csize = ev->csize;
            s->usize = ev->size;
            s->crc = ev->crc32;
        }
        mix(d, 5);
        mix(d, ev->member);
        mix(d, ev->offset);
        mix_end_sizes(d, ev);
        if (d->log)
            fprintf(
                d->log,
                "MEMBER_END member=%u off=%llu kind=%d size=%llu csize=%llu crc=%08x data_crc=%08x data_size=%llu\n",
                (unsigned)ev->member, (unsigned long long)ev->offset, (int)ev->kind, (unsigned long long)ev->size,
                (unsigned long long)ev->csize, (unsigned)ev->crc32, (unsigned)ev->data_crc32,
                (unsigned long long)ev->data_size);
        break;
    case NPZS_EV_END:
        if (t->in_member) fz_die("END inside member %u", (unsigned)t->member);
        t->seen_end = 1;
        mix(d, 6);
        mix(d, ev->offset);
        mix(d, (uint64_t)ev->format);
        mix(d, ev->members);
        if (d->log)
            fprintf(d->log, "END off=%llu format=%d members=%u\n", (unsigned long long)ev->offset, (int)ev->format,
                    (unsigned)ev->members);
        break;
    default: fz_die("unknown event type %d", (int)ev->type);
    }
}

/* ---- the driver ------------------------------------------------------------------- */

/* fz_opts.into: the destination of the current array, named at its HEADER */
/* npzs_par_take_data after every HEADER: the blocks taken (freed by the caller, after the run) */
typedef struct fz_taken {
    void **blocks;
    size_t n, cap;
    const uint8_t *data; /* the current array's data in its block, or NULL */
} fz_taken;

static void take_event(npzs_par *q, const fz_opts *o, const npzs_event *ev, fz_taken *tk) {
    if (ev->type == NPZS_EV_HEADER) {
        void *b = NULL;
        uint64_t off = 0;
        tk->data = NULL;
        int rc = npzs_par_take_data(q, (size_t)1 << (o->par_take - 1), &b, &off);
        if (rc == 1) return;
        if (rc != 0) fz_die("npzs_par_take_data right after HEADER: %d", rc);
        if (off != ev->array->header_len || ((uintptr_t)b + off) % ((size_t)1 << (o->par_take - 1)))
            fz_die("npzs_par_take_data: offset %llu for a header of %llu", (unsigned long long)off,
                   (unsigned long long)ev->array->header_len);
        if (tk->n == tk->cap && !(tk->blocks = realloc(tk->blocks, (tk->cap = tk->cap * 2 + 8) * sizeof *tk->blocks)))
            fz_die("host realloc failed");
        tk->blocks[tk->n++] = b;
        tk->data = (const uint8_t *)b + off;
        ((fz_opts *)(uintptr_t)o)->par_taken++;
    } else if (ev->type == NPZS_EV_DATA && tk->data) {
        if (ev->data != tk->data + ev->pos)
            fz_die("DATA chunk at pos %llu not in the taken block", (unsigned long long)ev->pos);
    } else if (ev->type == NPZS_EV_MEMBER_END) {
        tk->data = NULL;
    }
}

static void into_event(npzs_parser *p, const npzs_event *ev, uint8_t **dst) {
    if (ev->type == NPZS_EV_HEADER && ev->array->nbytes <= (16u << 20)) {
        size_t nb = (size_t)ev->array->nbytes;
        *dst = malloc(nb ? nb : 1);
        if (!*dst) fz_die("host malloc failed");
        if (npzs_data_into(p, *dst, nb) != 0) fz_die("npzs_data_into refused right after HEADER");
        if (!nb) {
            free(*dst);
            *dst = NULL;
        }
    } else if (ev->type == NPZS_EV_DATA && *dst) {
        if (ev->data != *dst + ev->pos || ev->zero_copy)
            fz_die("DATA chunk at pos %llu not in the npzs_data_into destination", (unsigned long long)ev->pos);
    } else if (ev->type == NPZS_EV_MEMBER_END) {
        free(*dst);
        *dst = NULL;
    }
}
static size_t sched_size(const fz_opts *o, size_t k, int *last_zero) {
    if (!o->sched) return SIZE_MAX;
    if (o->sched_n == 0) return 1;
    unsigned b = o->sched[k % o->sched_n];
    if (b == 0) {
        if (*last_zero) return 1; /* never two 0-byte pushes in a row: the run must end */
        *last_zero = 1;
        return 0;
    }
    *last_zero = 0;
    if (b < 0xE0) return b;
    return (size_t)1 << (b - 0xE0 + 8);
}

int fz_split_input(const uint8_t *data, size_t size, fz_split_in *s) {
    if (size == 0) return 0;
    s->ctl = data[0];
    s->sched_n = s->ctl & 15u;
    if (s->sched_n > size - 1) s->sched_n = size - 1;
    s->sched = data + 1;
    s->file = data + 1 + s->sched_n;
    s->file_n = size - 1 - s->sched_n;
    return 1;
}

void npzs__par_min_csize(npzs_par *q, uint64_t n); /* the library's, for tests */
void npzs__par_keep(npzs_par *q, uint64_t n);
uint32_t npzs__par_visited(const npzs_par *q);

/* The library's words (a detail, a policy fault's path or message): whole strict UTF-8 with no
 * character text output escapes (src/bytes/text.h), so that they print safely as they are. */
int fz_words_ok(const char *w) {
    const uint8_t *s = (const uint8_t *)w;
    size_t n = strlen(w);
    for (size_t i = 0; i < n;) {
        uint32_t cp = 0;
        size_t k = npzs_text_seq(s, i, n, &cp);
        if (!k || npzs_text_hidden(cp)) return 0;
        i += k;
    }
    return 1;
}

int fz_run(const uint8_t *data, size_t n, const fz_opts *o, fz_result *r) {
    memset(r, 0, sizeof *r);
    r->err_member = -1;
    r->err_coff = UINT64_MAX;
    fz_alloc_state as;
    memset(&as, 0, sizeof as);
    as.fail_at = o->fail_at;
    npzs_allocator al = {fz_alloc, fz_free, &as};
    npzs_parser *p = npzs_new(o->lim, &al);
    r->allocs = as.count;
    r->alloc_failed = as.failed;
    if (!p) {
        if (as.live) fz_die("npzs_new failed and leaked %zu allocations", as.live);
        return 0;
    }
    r->created = 1;
    if (o->no_memo) npzs__header_memo(p, 0);
    if (o->policy && npzs_policy_use(p, o->policy) != 0) {
        if (o->fail_at < 0 || npzs_error(p) != NPZS_E_NOMEM) fz_die("npzs_policy_use refused");
    }
    if (o->hash && npzs_hash(p, NPZS_HASH_SHA256) != 0) fz_die("npzs_hash refused");
    npzs_par *q = NULL;
    if (o->par) {
        q = npzs_par_new(p, o->par_threads, o->par_held);
        if (!q) fz_die("npzs_par_new failed");
        npzs__par_min_csize(q, 1);
        if (o->par_skip && npzs_par_skip_data(q) != 0) fz_die("npzs_par_skip_data failed");
        if (o->par_skip && o->par_skip != UINT64_MAX) npzs__par_keep(q, o->par_skip);
        if (o->par_stable == 1 && npzs_par_stable_input(q, 1) != 0) fz_die("npzs_par_stable_input refused");
    }
    /* stable input: the pushes are slices of one copy of the file, kept until the helper is freed */
    uint8_t *whole = q && o->par_stable ? malloc(n ? n : 1) : NULL;
    int stable_on = o->par_stable == 1;
    if (q && o->par_stable && !whole) fz_die("host malloc failed");
    if (whole && n) memcpy(whole, data, n);
    /* after the helper is attached: the events it needs stay emitted whatever the caller asks */
    if (o->mask && o->mask_parser && npzs_events(p, o->mask) != 0) fz_die("npzs_events(%#x) refused", o->mask);
#define FZ_NEXT(in_, ev_) npzs_next(p, (in_), (ev_)) /* through the helper when one is attached */

    fz_dig d;
    memset(&d, 0, sizeof d);
    d.log = o->log;
    fz_track t;
    memset(&t, 0, sizeof t);

    size_t off = 0, k = 0;
    int finished = 0;
    uint8_t *chunk = NULL;
    npzs_in in = {NULL, 0, 0};
    npzs_in *inp = &in;
    int have_chunk = 0, last_zero = 0;
    uint64_t calls = 0;
    uint8_t *dst = NULL;
    fz_taken tk;
    memset(&tk, 0, sizeof tk);
    for (;;) {
        if (!finished && (!have_chunk || in.pos == in.size)) {
            free(chunk);
            chunk = NULL;
            if (have_chunk && off == n) {
                npzs_finish(p);
                finished = 1;
                in.src = NULL;
                in.size = in.pos = 0;
                inp = o->finish_null ? NULL : &in;
                if (o->log) fprintf(o->log, "-- finish\n");
            } else {
                size_t want = sched_size(o, k++, &last_zero);
                if (want > n - off) want = n - off;
                if (whole && o->par_stable == 2 && off && !stable_on) { /* the first push copied, the rest not */
                    if (npzs_par_stable_input(q, 1) != 0) fz_die("npzs_par_stable_input refused mid-input");
                    stable_on = 1;
                }
                if (!whole || (o->par_stable == 2 && !stable_on)) {
                    chunk = malloc(want ? want : 1);
                    if (!chunk) fz_die("host malloc failed");
                    if (want) memcpy(chunk, data + off, want);
                }
                in.src = !want ? NULL : chunk ? chunk : whole + off; /* an empty push may come without a buffer */
                in.size = want;
                in.pos = 0;
                off += want;
                have_chunk = 1;
            }
        }
        size_t before = inp ? inp->pos : 0;
        npzs_event ev;
        int rc = FZ_NEXT(inp, &ev);
        calls++;
        if (rc == NPZS_EVENT) {
            if (inp && inp->pos < before) fz_die("npzs_next moved in.pos backwards");
            if (o->mask && !(((o->mask | NPZS_EV_BIT(NPZS_EV_END)) >> ev.type) & 1u)) {
                if (o->mask_parser) fz_die("event %d delivered outside npzs_events(%#x)", (int)ev.type, o->mask);
                continue;
            }
            if (ev.type == NPZS_EV_DATA || ev.type == NPZS_EV_BLOB) {
                if (q && o->par_skip) fz_die("a DATA or BLOB event with npzs_par_skip_data");
                if (o->no_data) continue;
            }
            r->events++;
            if (o->mask) on_masked_event(&d, &t, &ev);
            else on_event(&d, &t, &ev);
            if (q && o->par_take) take_event(q, o, &ev, &tk);
            if (o->into && !tk.data) into_event(p, &ev, &dst);
            continue;
        }
        if (rc == NPZS_NEED_INPUT) {
            if (finished) fz_die("NPZS_NEED_INPUT after npzs_finish (would hang)");
            if (in.pos != in.size)
                fz_die("NPZS_NEED_INPUT with %zu input bytes left (pos %zu of %zu)", in.size - in.pos, in.pos, in.size);
            continue;
        }
        if (rc == NPZS_DONE) {
            if (!t.seen_end) fz_die("NPZS_DONE before END");
            break;
        }
        if (rc < 0) {
            flush_data(&d);
            if (npzs_error(p) != rc) fz_die("npzs_next returned %d but npzs_error() is %d", rc, npzs_error(p));
            if (!strcmp(npzs_error_name(rc), "unknown")) fz_die("unknown error code %d", rc);
            npzs_event ev2;
            int rc2 = FZ_NEXT(inp, &ev2);
            if (rc2 != rc) fz_die("error not sticky: %d then %d", rc, rc2);
            r->err = rc;
            r->err_off = npzs_error_offset(p);
            r->err_member = npzs_error_member(p);
            r->err_coff = npzs_error_content_offset(p);
            r->err_rule = npzs_error_rule(p);
            const char *msg = npzs_error_message(p);
            if (!msg) fz_die("npzs_error_message NULL");
            const char *det = npzs_error_detail(p);
            if (det && !fz_words_ok(det))
                fz_die("a detail that is not whole UTF-8 or holds a hidden character: %s", det);
            /* a limit's numbers: exactly for the rules a limit decides (LIMIT.NAME with code limit,
             * HDR-SIZE.* header_too_large for max_header_size, S-NDIM.* bad_shape for max_ndim), that
             * limit's, and the input went past it */
            const char *lname, *rl = r->err_rule ? r->err_rule : "";
            uint64_t lvalue, lneeded;
            int have = npzs_error_limit(p, &lname, &lvalue, &lneeded);
            const char *want = !strncmp(rl, "LIMIT.", 6) && rc == NPZS_E_LIMIT                 ? rl + 6
                               : !strncmp(rl, "HDR-SIZE.", 9) && rc == NPZS_E_HEADER_TOO_LARGE ? "max_header_size"
                               : !strncmp(rl, "S-NDIM.", 7) && rc == NPZS_E_BAD_SHAPE          ? "max_ndim"
                                                                                               : NULL;
            if (have != (want != NULL) || (have && strncmp(want, lname, strlen(lname)) != 0) || (!have && lname))
                fz_die("limit numbers %d %s for error %d rule %s", have, lname ? lname : "NULL", rc, rl);
            if (have && lneeded <= lvalue)
                fz_die("limit %s: needed %llu within the value %llu", lname, (unsigned long long)lneeded,
                       (unsigned long long)lvalue);
            size_t nl = 0;
            const char *nm = npzs_error_member_name(p, &nl);
            uint8_t acc = 0;
            for (size_t i = 0; nm && i < nl; i++) acc ^= (uint8_t)nm[i];
            t.sink ^= acc;
            if (o->log)
                fprintf(o->log, "ERROR %s off=%llu member=%ld coff=%lld state-msg=%s\n", npzs_error_name(rc),
                        (unsigned long long)r->err_off, r->err_member, (long long)r->err_coff, msg);
            break;
        }
        fz_die("npzs_next returned %d", rc);
    }
    if (t.seen_end) {
        /* one more call: must be NPZS_DONE and leave the input alone */
        npzs_event ev;
        int rc = FZ_NEXT(inp, &ev);
        if (rc != NPZS_DONE) fz_die("call after END returned %d, not NPZS_DONE", rc);
        r->accepted = 1;
    }
    if (t.seen_end && r->err) fz_die("END and an error");
    if (t.seen_end && !o->mask && npzs_format_of(p) == NPZS_FORMAT_NPZ)
        fz_zipfile_check(data, n, t.seen, t.nseen, t.members);
    free(t.seen);
    flush_data(&d);
    free(chunk);
    free(dst);
    r->digest = d.h;
    r->visited = npzs__visited(p);
    r->cvisited = npzs__cvisited(p);
    fz_visited_all |= r->visited;
    fz_cvisited_all |= r->cvisited;
    if (r->err) fz_errors_seen |= 1u << ((unsigned)-r->err & 31u);
    if (q) {
        ((fz_opts *)(uintptr_t)o)->par_used += npzs_par_used(q);
        fz_scout_visited_all |= npzs__par_visited(q);
        npzs_par_free(q);
    }
    free(whole);
    for (size_t i = 0; i < tk.n; i++) al.free(al.opaque, tk.blocks[i]); /* the caller's, made with the hooks */
    free(tk.blocks);
#undef FZ_NEXT
    npzs_free(p);
    r->allocs = as.count;
    r->alloc_failed = as.failed;
    r->peak_bytes = as.peak;
    if (as.live) fz_die("leak: %zu allocations (%zu bytes) still live after npzs_free", as.live, as.live_bytes);
    (void)calls;
    if (getenv("FZ_VERBOSE")) fz_print_result(stderr, "run", r);
    return 1;
}

/* An accepted archive: every reading of zipfile (fz_zipfile_read) lists exactly the members the
 * stream reported, with the same local header, data start, method, flags, sizes and CRC-32. */
void fz_zipfile_check(const uint8_t *data, size_t n, const void *seen_v, size_t nseen, size_t members) {
    const fz_seen *seen = seen_v;
    if (members > nseen) return; /* more members than recorded: not checked */
    fz_zf_entry *zf = calloc(members + 1, sizeof *zf);
    if (!zf) fz_die("host calloc failed");
    for (unsigned v = 0; v < FZ_ZF_VARIANTS; v++) {
        long c = fz_zipfile_read(data, n, v, zf, members + 1);
        if (c < 0) fz_die("accepted, but zipfile (variant %u) refuses the archive", v);
        if ((size_t)c != members) fz_die("accepted %zu members, zipfile (variant %u) lists %ld", members, v, c);
        for (size_t i = 0; i < members; i++) {
            const fz_seen *s = &seen[i];
            const fz_zf_entry *z = &zf[i];
            if (z->lfh != s->lfh || z->name_len != s->name_len || z->method != (unsigned)s->method ||
                z->flags != s->flags || z->csize != s->csize || z->usize != s->usize || z->crc != s->crc)
                fz_die(
                    "member %zu: zipfile (variant %u) reads lfh %llu name_len %zu method %u flags %#x csize %llu "
                    "usize %llu crc %08x; the stream reported lfh %llu name_len %zu method %d flags %#x csize "
                    "%llu usize %llu crc %08x",
                    i, v, (unsigned long long)z->lfh, z->name_len, z->method, z->flags, (unsigned long long)z->csize,
                    (unsigned long long)z->usize, (unsigned)z->crc, (unsigned long long)s->lfh, s->name_len, s->method,
                    s->flags, (unsigned long long)s->csize, (unsigned long long)s->usize, (unsigned)s->crc);
            if (s->method == NPZS_METHOD_STORED && s->data && z->data != s->data)
                fz_die("member %zu: zipfile (variant %u) reads its data at %llu, the stream at %llu", i, v,
                       (unsigned long long)z->data, (unsigned long long)s->data);
        }
    }
    free(zf);
}

int fz_same(const fz_result *a, const fz_result *b) {
    int same_rule = a->err_rule == b->err_rule || (a->err_rule && b->err_rule && !strcmp(a->err_rule, b->err_rule));
    return a->created == b->created && a->digest == b->digest && a->accepted == b->accepted && a->err == b->err &&
           a->err_off == b->err_off && a->err_member == b->err_member && a->err_coff == b->err_coff && same_rule;
}

void fz_print_result(FILE *f, const char *tag, const fz_result *r) {
    fprintf(f,
            "%s: created=%d accepted=%d err=%d(%s) rule=%s off=%llu member=%ld coff=%lld digest=%016llx events=%llu\n",
            tag, r->created, r->accepted, r->err, r->err ? npzs_error_name(r->err) : "none",
            r->err_rule ? r->err_rule : "none", (unsigned long long)r->err_off, r->err_member, (long long)r->err_coff,
            (unsigned long long)r->digest, (unsigned long long)r->events);
}

/* ---- builders ------------------------------------------------------------------------ */
void fz_put(fz_buf *b, const void *s, size_t n) {
    if (b->n + n > b->cap) {
        size_t c = b->cap ? b->cap : 256;
        while (c < b->n + n) c *= 2;
        uint8_t *q = realloc(b->p, c);
        if (!q) fz_die("host realloc failed");
        b->p = q;
        b->cap = c;
    }
    if (n) memcpy(b->p + b->n, s, n);
    b->n += n;
}
void fz_put8(fz_buf *b, unsigned v) {
    uint8_t x = (uint8_t)v;
    fz_put(b, &x, 1);
}
void fz_put16(fz_buf *b, unsigned v) {
    uint8_t x[2] = {(uint8_t)v, (uint8_t)(v >> 8)};
    fz_put(b, x, 2);
}
void fz_put32(fz_buf *b, uint32_t v) {
    fz_put16(b, v & 0xFFFF);
    fz_put16(b, v >> 16);
}
void fz_put64(fz_buf *b, uint64_t v) {
    fz_put32(b, (uint32_t)v);
    fz_put32(b, (uint32_t)(v >> 32));
}
void fz_free_buf(fz_buf *b) {
    free(b->p);
    memset(b, 0, sizeof *b);
}

uint8_t *fz_deflate(const uint8_t *s, size_t n, size_t *out_n) {
    z_stream z;
    memset(&z, 0, sizeof z);
    if (deflateInit2(&z, 6, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) != Z_OK) fz_die("deflateInit2");
    size_t cap = deflateBound(&z, (uLong)n) + 16;
    uint8_t *out = malloc(cap);
    if (!out) fz_die("host malloc failed");
    z.next_in = (Bytef *)(uintptr_t)s;
    z.avail_in = (uInt)n;
    z.next_out = out;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END) fz_die("deflate did not finish");
    *out_n = cap - z.avail_out;
    deflateEnd(&z);
    return out;
}

void fz_npy(fz_buf *b, const char *dict, const uint8_t *data, size_t dn) {
    size_t dl = strlen(dict);
    size_t total = 10 + dl + 1;
    size_t pad = (64 - total % 64) % 64;
    fz_put(b, "\x93NUMPY\x01\x00", 8);
    fz_put16(b, (unsigned)(dl + pad + 1));
    fz_put(b, dict, dl);
    for (size_t i = 0; i < pad; i++) fz_put8(b, ' ');
    fz_put8(b, '\n');
    fz_put(b, data, dn);
}

void fz_zip_lfh(fz_buf *b, const char *name, size_t nl, unsigned version, unsigned flags, unsigned method, uint32_t crc,
                uint32_t csize, uint32_t usize, const uint8_t *extra, size_t en) {
    fz_put32(b, 0x04034B50);
    fz_put16(b, version);
    fz_put16(b, flags);
    fz_put16(b, method);
    fz_put16(b, 0);
    fz_put16(b, 0x21);
    fz_put32(b, crc);
    fz_put32(b, csize);
    fz_put32(b, usize);
    fz_put16(b, (unsigned)nl);
    fz_put16(b, (unsigned)en);
    fz_put(b, name, nl);
    fz_put(b, extra, en);
}

void fz_zip_cdh_raw(fz_buf *b, const char *name, size_t nl, unsigned version, unsigned flags, unsigned method,
                    uint32_t crc, uint32_t csize, uint32_t usize, uint32_t lfh_off) {
    fz_put32(b, 0x02014B50);
    fz_put16(b, (3 << 8) | (version & 0xFF));
    fz_put16(b, version);
    fz_put16(b, flags);
    fz_put16(b, method);
    fz_put16(b, 0);
    fz_put16(b, 0x21);
    fz_put32(b, crc);
    fz_put32(b, csize);
    fz_put32(b, usize);
    fz_put16(b, (unsigned)nl);
    fz_put16(b, 0);
    fz_put16(b, 0);
    fz_put16(b, 0);
    fz_put16(b, 0);
    fz_put32(b, 0x81A40000u);
    fz_put32(b, lfh_off);
    fz_put(b, name, nl);
}

static const uint8_t z64_zero[20] = {1, 0, 16, 0};

void fz_zip_member(fz_buf *b, fz_member *m) {
    size_t nl = strlen(m->name);
    const uint8_t *payload = m->content;
    size_t pn = m->content_n;
    uint8_t *def = NULL;
    if (m->method == 8) {
        def = fz_deflate(m->content, m->content_n, &pn);
        payload = def;
    }
    m->crc = fz_crc32(m->content, m->content_n);
    m->csize = pn;
    m->lfh_off = b->n;
    if (m->dd)
        fz_zip_lfh(b, m->name, nl, 20, 8, (unsigned)m->method, 0, 0, 0, m->dd == 3 ? NULL : z64_zero,
                   m->dd == 3 ? 0 : sizeof z64_zero);
    else fz_zip_lfh(b, m->name, nl, 20, 0, (unsigned)m->method, m->crc, (uint32_t)pn, (uint32_t)m->content_n, NULL, 0);
    fz_put(b, payload, pn);
    if (m->dd == 1) {
        fz_put32(b, 0x08074B50);
        fz_put32(b, m->crc);
        fz_put64(b, pn);
        fz_put64(b, m->content_n);
    }
    free(def);
}

void fz_zip_cdh(fz_buf *b, const fz_member *m) {
    fz_zip_cdh_raw(b, m->name, strlen(m->name), 20, m->dd ? 8 : 0, (unsigned)m->method, m->crc, (uint32_t)m->csize,
                   (uint32_t)m->content_n, (uint32_t)m->lfh_off);
}

const uint8_t *fz_npy_small(size_t *n) {
    static fz_buf b;
    if (!b.n) {
        uint8_t d[8];
        for (int i = 0; i < 8; i++) d[i] = (uint8_t)(i * 7 + 1);
        fz_npy(&b, "{'descr': '<i4', 'fortran_order': False, 'shape': (2,), }", d, 8);
    }
    *n = b.n;
    return b.p;
}

void fz_zip_eocd(fz_buf *b, unsigned count, uint32_t cd_size, uint32_t cd_off) {
    fz_put32(b, 0x06054B50);
    fz_put16(b, 0);
    fz_put16(b, 0);
    fz_put16(b, count);
    fz_put16(b, count);
    fz_put32(b, cd_size);
    fz_put32(b, cd_off);
    fz_put16(b, 0);
}

unsigned fz_take8(fz_reader *r) {
    if (!r->n) return 0;
    r->n--;
    return *r->p++;
}
uint32_t fz_take32(fz_reader *r) {
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) v |= (uint32_t)fz_take8(r) << (8 * i);
    return v;
}

static const uint8_t fz_check_sched[] = {1, 0, 7, 2, 0xE0, 3, 1, 1, 64, 5};

fz_result fz_check(const uint8_t *data, size_t n, const npzs_limits *lim) {
    fz_opts o;
    fz_opts_init(&o);
    o.lim = lim;
    fz_result a, b;
    fz_run(data, n, &o, &a);
    o.sched = fz_check_sched;
    o.sched_n = sizeof fz_check_sched;
    o.finish_null = 1;
    fz_run(data, n, &o, &b);
    if (!fz_same(&a, &b)) fz_report_mismatch(data, n, lim, NULL, 0, &a, &b);
    return a;
}

void fz_report_mismatch(const uint8_t *data, size_t n, const npzs_limits *lim, const uint8_t *sched, size_t sched_n,
                        const fz_result *a, const fz_result *b) {
    fz_opts o;
    fz_opts_init(&o);
    o.lim = lim;
    o.log = stderr;
    fz_result x;
    fprintf(stderr, "==== whole input (%zu bytes) ====\n", n);
    fz_run(data, n, &o, &x);
    if (sched) {
        o.sched = sched;
        o.sched_n = sched_n;
    } else {
        o.sched = fz_check_sched;
        o.sched_n = sizeof fz_check_sched;
    }
    o.finish_null = 1;
    fprintf(stderr, "==== split ====\n");
    fz_run(data, n, &o, &x);
    fz_print_result(stderr, "whole", a);
    fz_print_result(stderr, "split", b);
    fz_die("split invariance: whole and split parses differ");
}

/* The .npy header text s[0, n) through the general parser and through the default path
 * (NumPy's exact text first); abort unless they agree on everything: verdict, error code,
 * offset and message, and every field of the array info.  Returns 1 when the fast path
 * recognised the text. */
int fz_header_paths(const uint8_t *s, size_t n, int v3) {
    npzs_parser *g = npzs_new(NULL, NULL), *a = npzs_new(NULL, NULL), *f = npzs_new(NULL, NULL);
    if (!g || !a || !f) fz_die("npzs_new failed");
    npzs__hdr xg = npzs__hdr_of(g), xa = npzs__hdr_of(a), xf = npzs__hdr_of(f);
    int rg = npzs__parse_header_mode(&xg, s, n, v3, 10, NPZS__HDR_GENERAL);
    int ra = npzs__parse_header_mode(&xa, s, n, v3, 10, NPZS__HDR_AUTO);
    int rf = npzs__parse_header_mode(&xf, s, n, v3, 10, NPZS__HDR_FAST);
    int fast = rf != NPZS__HDR_NOT_FAST;
    if (rg != ra || g->err != a->err || g->err_coff != a->err_coff || (g->err && strcmp(g->err_msg, a->err_msg) != 0))
        fz_die("header paths disagree: general %d/%d at %llu (%s), default %d/%d at %llu (%s)", rg, g->err,
               (unsigned long long)g->err_coff, g->err ? g->err_msg : "ok", ra, a->err, (unsigned long long)a->err_coff,
               a->err ? a->err_msg : "ok");
    if (fast && (rf != rg || f->err != g->err)) fz_die("the fast path alone disagrees with the general parser");
    const npzs_parser *two[2] = {a, f};
    for (int k = 0; k < (fast ? 2 : 1) && rg == 0; k++) {
        const npzs_array_info *x = &g->c.arr.info, *y = &two[k]->c.arr.info;
        if (x->fortran_order != y->fortran_order || x->structured != y->structured || x->ndim != y->ndim ||
            x->itemsize != y->itemsize || x->count != y->count || x->nbytes != y->nbytes ||
            strcmp(x->dtype, y->dtype) != 0 || x->descr_len != y->descr_len ||
            memcmp(x->descr, y->descr, x->descr_len + 1) != 0 ||
            memcmp(x->shape, y->shape, x->ndim * sizeof *x->shape) != 0)
            fz_die("header paths disagree on the array info (dtype %s / %s)", x->dtype, y->dtype);
    }
    npzs_free(g);
    npzs_free(a);
    npzs_free(f);
    return fast;
}

/* ---- fnmatch as Python writes it, and the policy's lookup tried pattern by pattern ----------- */

/* The code points of the UTF-8 s (valid), in a malloc'd array: *n of them. */
static uint32_t *fz_code_points(const uint8_t *s, size_t sn, size_t *n) {
    uint32_t *c = malloc((sn + 1) * sizeof *c);
    if (!c) fz_die("out of memory");
    size_t k = 0;
    for (size_t i = 0; i < sn;) {
        uint8_t b = s[i];
        size_t len = b < 0x80 ? 1 : b < 0xE0 ? 2 : b < 0xF0 ? 3 : 4;
        uint32_t v = len == 1 ? b : len == 2 ? (b & 0x1Fu) : len == 3 ? (b & 0x0Fu) : (b & 0x07u);
        for (size_t j = 1; j < len && i + j < sn; j++) v = v << 6 | (s[i + j] & 0x3Fu);
        c[k++] = v;
        i += len;
    }
    *n = k;
    return c;
}

/* One item of a pattern, as CPython's fnmatch.translate makes its regular expression: a '*', a
 * '?', a literal, or a class (neg, ranges lo[k]..hi[k]). */
typedef struct fz_item {
    int kind; /* '*', '?', 'c' (literal lo[0]), '[' */
    int neg;
    size_t n;
    uint32_t *lo, *hi;
} fz_item;

/* The class P[i .. j) (between '[' and its ']'), as translate reads it: the text cut at each '-'
 * that makes a range (a search that resumes 3 code points past the last cut), the empty ranges
 * removed from the last to the first (a chunk whose last code point is above the next chunk's
 * first gives both up, the two chunks joined), a '!' first negating; in the regular expression
 * the chunks are joined by '-' (ranges) and every other code point is a literal.  Kept flat: the
 * code points with a mark for each cut, a removal deleting a cut and its two neighbours. */
#define FZ_CUT UINT32_MAX
static void fz_class(const uint32_t *P, size_t i, size_t j, fz_item *it) {
    uint32_t *t = malloc((j - i + 2) * sizeof *t); /* the code points and cuts; UINT32_MAX - 1: removed */
    if (!t) fz_die("out of memory");
    size_t n = 0;
    int dash = 0;
    for (size_t k = i; k < j; k++) dash |= P[k] == '-';
    if (!dash) {
        for (size_t k = i; k < j; k++) t[n++] = P[k];
    } else {
        size_t start = i, k = P[i] == '!' ? i + 2 : i + 1;
        for (;;) {
            while (k < j && P[k] != '-') k++;
            if (k >= j) break;
            for (size_t q = start; q < k; q++) t[n++] = P[q];
            t[n++] = FZ_CUT;
            start = k + 1;
            k += 3;
        }
        for (size_t q = start; q < j; q++) t[n++] = P[q];
        if (j == start) t[n - 1] = '-'; /* the text ends with a cut: a literal '-' instead */
        const uint32_t gone = FZ_CUT - 1;
        for (size_t k2 = n; k2-- > 0;) {
            if (t[k2] != FZ_CUT) continue;
            size_t a = k2, b = k2;
            while (a > 0 && t[a - 1] == gone) a--;
            while (b + 1 < n && t[b + 1] == gone) b++;
            if (a == 0 || b + 1 >= n) fz_die("fz_class: a cut at an end");
            if (t[a - 1] > t[b + 1]) t[a - 1] = t[k2] = t[b + 1] = gone;
        }
        size_t m = 0;
        for (size_t k2 = 0; k2 < n; k2++)
            if (t[k2] != gone) t[m++] = t[k2];
        n = m;
    }
    it->kind = '[';
    it->neg = n && t[0] == '!';                         /* translate: '!' first is '^' */
    if (it->neg && n > 1 && t[1] == FZ_CUT) t[1] = '-'; /* "[^-z]": a '-' first is a member */
    it->lo = malloc((n + 1) * sizeof *it->lo);
    it->hi = malloc((n + 1) * sizeof *it->hi);
    if (!it->lo || !it->hi) fz_die("out of memory");
    it->n = 0;
    for (size_t k = (size_t)it->neg; k < n; k++) {
        if (t[k] == FZ_CUT) continue;
        uint32_t lo = t[k], hi = lo;
        if (k + 2 < n && t[k + 1] == FZ_CUT) { /* a range: the cut's two neighbours */
            hi = t[k + 2];
            k += 2;
        }
        it->lo[it->n] = lo;
        it->hi[it->n++] = hi;
    }
    free(t);
}

int fz_fnmatch(const uint8_t *pat, size_t pn, const uint8_t *s, size_t sn) {
    size_t n, kn;
    uint32_t *P = fz_code_points(pat, pn, &n), *K = fz_code_points(s, sn, &kn);
    fz_item *it = calloc(n + 1, sizeof *it);
    if (!it) fz_die("out of memory");
    size_t m = 0;
    for (size_t i = 0; i < n;) {
        uint32_t c = P[i++];
        if (c == '*') {
            if (!m || it[m - 1].kind != '*') it[m++].kind = '*';
        } else if (c == '?') {
            it[m++].kind = '?';
        } else if (c == '[') {
            size_t j = i;
            if (j < n && P[j] == '!') j++;
            if (j < n && P[j] == ']') j++;
            while (j < n && P[j] != ']') j++;
            if (j >= n) { /* not closed: a literal '[' */
                it[m].kind = 'c';
                it[m].lo = malloc(sizeof *it[m].lo);
                if (!it[m].lo) fz_die("out of memory");
                it[m++].lo[0] = '[';
            } else {
                fz_class(P, i, j, &it[m++]);
                i = j + 1;
            }
        } else {
            it[m].kind = 'c';
            it[m].lo = malloc(sizeof *it[m].lo);
            if (!it[m].lo) fz_die("out of memory");
            it[m++].lo[0] = c;
        }
    }
    /* the items against the key's code points: the set of items matched so far, one code point
     * at a time (a '*' may take none) */
    uint8_t *cur = calloc(m + 1, 1), *nxt = calloc(m + 1, 1);
    if (!cur || !nxt) fz_die("out of memory");
    cur[0] = 1;
    for (size_t k = 0; k < m; k++)
        if (cur[k] && it[k].kind == '*') cur[k + 1] = 1;
    for (size_t i = 0; i < kn; i++) {
        memset(nxt, 0, m + 1);
        for (size_t k = 0; k < m; k++) {
            if (!cur[k]) continue;
            int ok = it[k].kind == '*' || it[k].kind == '?';
            if (it[k].kind == 'c') ok = it[k].lo[0] == K[i];
            if (it[k].kind == '[') {
                int hit = 0;
                for (size_t q = 0; q < it[k].n; q++) hit |= it[k].lo[q] <= K[i] && K[i] <= it[k].hi[q];
                ok = hit != it[k].neg;
            }
            if (ok) nxt[it[k].kind == '*' ? k : k + 1] = 1;
        }
        for (size_t k = 0; k < m; k++)
            if (nxt[k] && it[k].kind == '*') nxt[k + 1] = 1;
        uint8_t *t = cur;
        cur = nxt;
        nxt = t;
    }
    int r = cur[m];
    for (size_t k = 0; k < m; k++) {
        free(it[k].lo);
        free(it[k].hi);
    }
    free(it);
    free(cur);
    free(nxt);
    free(P);
    free(K);
    return r;
}

long fz_spec_brute(const npzs_policy *pol, const uint8_t *key, size_t n) {
    for (uint32_t i = 0; i < pol->nspecs; i++) {
        const npzs__pspec *s = &pol->specs[i];
        if (!s->glob && s->key_len == n && memcmp(s->key, key, n) == 0) return i;
    }
    for (uint32_t i = 0; i < pol->nspecs; i++) {
        const npzs__pspec *s = &pol->specs[i];
        uint64_t steps = 0;
        if (s->glob && npzs__glob_match((const uint8_t *)s->key, s->key_len, key, n, &steps)) return i;
    }
    return -1;
}

const char *fz_lookup_differs(const npzs_policy *pol, const uint8_t *key, size_t n, npzs__pmatch *m) {
    static char why[200];
    uint64_t steps = m->steps, glob = m->glob;
    uint32_t idx = 0;
    const npzs__pspec *s = npzs__pol_spec_for(pol, key, n, &idx, m);
    long got = s ? (long)idx : -1, want = fz_spec_brute(pol, key, n);
    if (got != want || (s && s != &pol->specs[idx])) {
        snprintf(why, sizeof why, "the index gives spec %ld, trying each pattern %ld", got, want);
        return why;
    }
    /* the automaton: a step a byte, a suffix link at most a byte (amortized), each group once,
     * the final suffix chain, the exact keys' binary search */
    uint64_t bound = 4 * (uint64_t)n + pol->ngroup + 64;
    if (m->steps - steps > bound) {
        snprintf(why, sizeof why, "%llu automaton steps on a key of %zu bytes (bound %llu)",
                 (unsigned long long)(m->steps - steps), n, (unsigned long long)bound);
        return why;
    }
    /* each pattern tried at most once, each try at most (key + 1) x 2 (pattern + 1) steps */
    uint64_t gbound = 0;
    for (uint32_t i = 0; i < pol->nspecs; i++)
        if (pol->specs[i].glob) gbound += 2 * ((uint64_t)n + 1) * ((uint64_t)pol->specs[i].key_len + 1);
    if (m->glob - glob > gbound) {
        snprintf(why, sizeof why, "%llu matcher steps (bound %llu)", (unsigned long long)(m->glob - glob),
                 (unsigned long long)gbound);
        return why;
    }
    return NULL;
}
