/*
 * zip.c -- the .npz (ZIP) machine: one step function per ZIP state of states.h, each called
 * by the dispatcher in npzs.c (npzs_next), with the contract given there: it consumes from *in,
 * moves p->state, and returns an npzs__rc (NPZS__GO: dispatch again; NPZS__EVENT, NPZS__NEED,
 * NPZS__ERROR).  The records are decoded and checked by the pure functions of zrec.c; this file checks
 * what a record must agree with elsewhere in the stream.
 *
 * Every byte of an accepted archive belongs to exactly one record or member, in order: local
 * header, data, [descriptor], ..., central directory, [ZIP64 end record, locator], end record,
 * comment, end of input.  Nothing is ever found by scanning for a signature.  Each local header
 * is remembered in a small record; the central directory must repeat it exactly; at the end,
 * zipfile's own end-record search (zlocate.c) must land on the records the stream parsed.
 */
#include <string.h>

#include "../internal.h"
#include "../core/buffer.h"

#define SIG_LFH 0x04034b50u
#define SIG_CDH 0x02014b50u
#define SIG_DD 0x08074b50u
#define SIG_Z64_EOCD 0x06064b50u
#define SIG_Z64_LOC 0x07064b50u
#define SIG_EOCD 0x06054b50u

#define LFH_SIZE 30
#define CDH_SIZE 46
#define Z64_EOCD_SIZE 56
#define Z64_LOC_SIZE 20
#define EOCD_SIZE 22

enum { PH_LOCALS, PH_CENTRAL, PH_Z64, PH_LOC, PH_END };

/* ---- the directory region's tail ------------------------------------------------------------
 * From the first central directory (or end) record on, every byte taken is also kept in
 * p->kept.tail, the last NPZS_TAIL_MAX of them once the region is longer: at the end of the input
 * zipfile's own end-record search runs over them (bind_end).  Bytes before the region (member
 * data) are not kept: the search can only land on them when it does not land on the end record
 * the stream parsed, and that is already a rejection.  The buffer grows with the region, room
 * being reserved (tail_reserve) before a record is taken, so keeping bytes never fails. */
static NPZS__INLINE int tail_reserve(npzs_parser *p, size_t more) {
    npzs__end *d = &p->end;
    if (p->kept.tail_cap >= NPZS_TAIL_MAX || d->tail_len + more <= p->kept.tail_cap) return 0;
    uint64_t need = d->tail_len + more;
    size_t cap = p->kept.tail_cap ? p->kept.tail_cap : 256;
    while (cap < need && cap < NPZS_TAIL_MAX) cap *= 2;
    if (cap > NPZS_TAIL_MAX) cap = NPZS_TAIL_MAX;
    uint8_t *t = npzs__alloc(p, cap);
    if (!t) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_TAIL);
    if (d->tail_len) memcpy(t, p->kept.tail, (size_t)d->tail_len); /* not a ring yet: tail_len <= tail_cap */
    npzs__free(p, p->kept.tail);
    p->kept.tail = t;
    p->kept.tail_cap = cap;
    return 0;
}

static void tail_put(npzs_parser *p, const uint8_t *s, size_t n) {
    npzs__end *d = &p->end;
    if (p->kept.tail_cap < NPZS_TAIL_MAX) { /* reserved: fits */
        memcpy(p->kept.tail + d->tail_len, s, n);
        d->tail_len += n;
        return;
    }
    if (n > NPZS_TAIL_MAX) {
        d->tail_len += n - NPZS_TAIL_MAX;
        s += n - NPZS_TAIL_MAX;
        n = NPZS_TAIL_MAX;
    }
    size_t at = (size_t)(d->tail_len % NPZS_TAIL_MAX), k = NPZS_TAIL_MAX - at;
    if (k > n) k = n;
    memcpy(p->kept.tail + at, s, k);
    memcpy(p->kept.tail, s + k, n - k);
    d->tail_len += n;
}

/* ---- input ---------------------------------------------------------------------------------- */

/* Take k bytes of the push (into buf unless NULL). */
static inline void eat(npzs_parser *p, npzs_in *in, uint8_t *buf, size_t k) {
    const uint8_t *s = (const uint8_t *)in->src + in->pos;
    if (buf) memcpy(buf, s, k);
    if (p->end.tail_on) tail_put(p, s, k);
    in->pos += k;
}

/* Stage bytes until p->stage holds n.  1 when complete, 0 when input ran out. */
static inline int take(npzs_parser *p, npzs_in *in, size_t n) {
    while (p->stage_len < n) {
        if (!in || in->pos == in->size) return 0;
        size_t k = n - p->stage_len, a = in->size - in->pos;
        if (k > a) k = a;
        eat(p, in, p->stage + p->stage_len, k);
        p->stage_len += k;
    }
    return 1;
}

/* Copy into buf until p->var_len == n (buf may be NULL to skip). */
static inline int take_var(npzs_parser *p, npzs_in *in, uint8_t *buf, size_t n) {
    while (p->var_len < n) {
        if (!in || in->pos == in->size) return 0;
        size_t k = n - p->var_len, a = in->size - in->pos;
        if (k > a) k = a;
        eat(p, in, buf ? buf + p->var_len : NULL, k);
        p->var_len += k;
    }
    return 1;
}

/* A record is done: the next one starts with its signature. */
static npzs__rc next_record(npzs_parser *p) {
    p->stage_len = 0;
    p->state = NPZS_S_ZIP_SIG;
    return NPZS__GO;
}

/* The member's next state, stepped into at once (the dispatcher's iteration left out: the member
 * states run one after the other within a push). */
#define GO(p, in, ev, S, step) ((p)->state = (S), NPZS_VISIT((p), (S)), step((p), (in), (ev)))

/* An error in the record being read, at its first byte: bad/bad_e for the checks (0 or < 0),
 * stop/stop_e for the steps. */
static int bad(npzs_parser *p, int code, int rule) { return npzs__fail(p, code, p->rec_off, rule); }
static int bad_e(npzs_parser *p, const npzs__zerr *e) { return npzs__fail(p, e->code, p->rec_off, e->rule); }
static npzs__rc stop(npzs_parser *p, int code, int rule) { return npzs__error(p, code, p->rec_off, rule); }
static npzs__rc stop_e(npzs_parser *p, const npzs__zerr *e) { return npzs__error(p, e->code, p->rec_off, e->rule); }

/* ---- member records -------------------------------------------------------------------------- */

/* Remember the member whose local header was just read: the central directory must repeat it. */
static int remember(npzs_parser *p) {
    uint32_t m = p->members;
    if ((m & (NPZS_REC_CHUNK - 1)) == 0) { /* a new chunk */
        size_t c = m >> NPZS_REC_SHIFT;
        if (c + 1 > p->recs_cap) {
            size_t n = p->recs_cap ? p->recs_cap * 2 : 16;
            npzs__record **t = npzs__alloc(p, n * sizeof *t);
            if (!t) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_RECORDS);
            if (p->recs_cap) memcpy(t, p->recs, p->recs_cap * sizeof *t);
            npzs__free(p, p->recs);
            p->recs = t;
            p->recs_cap = n;
        }
        p->recs[c] = npzs__alloc(p, NPZS_REC_CHUNK * sizeof **p->recs);
        if (!p->recs[c]) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_RECORDS);
        p->recs_chunks = c + 1;
    }
    const npzs__lfh *l = &p->lfh;
    npzs__block *b = p->names;
    if (!b || b->size - b->used < l->h.f.name_len) {
        size_t sz = l->h.f.name_len > 16384 ? l->h.f.name_len : 16384;
        b = npzs__alloc(p, sizeof *b + sz);
        if (!b) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_NAMES);
        b->next = p->names;
        b->used = 0;
        b->size = sz;
        p->names = b;
    }
    npzs__record *r = p->rec = npzs__rec(p, m);
    memset(r, 0, sizeof *r);
    r->lfh_off = p->rec_off;
    r->name = b->data + b->used;
    r->name_len = l->h.f.name_len;
    r->flags = l->h.f.flags;
    r->method = l->h.f.method;
    memcpy(b->data + b->used, p->kept.name, l->h.f.name_len);
    b->used += l->h.f.name_len;
    p->members = m + 1;
    return npzs__names_add(p, &p->ntab, p->recs, m, p->rec_off) < 0 ? p->err : 0;
}

void npzs__zip_input_release(npzs_parser *p) {
    for (size_t c = 0; c < p->recs_chunks; c++) npzs__free(p, p->recs[c]);
    npzs__free(p, p->recs);
    p->recs = NULL;
    p->recs_chunks = p->recs_cap = 0;
    while (p->names) {
        npzs__block *b = p->names;
        p->names = b->next;
        npzs__free(p, b);
    }
    npzs__names_release(p, &p->ntab);
}

void npzs__zip_release(npzs_parser *p) {
    npzs__zip_input_release(p);
    npzs__inf_release(p);
    npzs__free(p, p->kept.name);
    npzs__free(p, p->kept.extra);
    npzs__free(p, p->kept.tail);
    p->kept.name = p->kept.extra = p->kept.tail = NULL;
    p->kept.name_cap = p->kept.extra_cap = p->kept.tail_cap = 0;
}

/* Everything the local header states must equal what was measured. */
static int check_local(npzs_parser *p, uint64_t off) {
    npzs__zerr e;
    if (npzs__zr_lfh_deferred(&p->lfh.h, p->crc, p->data_in, p->c.pos, &e) < 0)
        return npzs__fail(p, e.code, off, e.rule);
    return 0;
}

/* ---- binding the verdict to zipfile's reading -------------------------------------------------
 * The input is complete.  zipfile finds its records from the end of the file (zlocate.c): every
 * reading of it (before and after the gh-139700 fix, both search windows) must arrive at the end
 * record, locator and ZIP64 end record this stream parsed, and read the directory where the
 * stream read it. */
static int bind_end(npzs_parser *p) {
    const npzs__end *d = &p->end;
    npzs__tailview v;
    uint64_t total = npzs__here(p);
    uint64_t keep = d->tail_len < NPZS_TAIL_MAX ? d->tail_len : NPZS_TAIL_MAX;
    size_t start = d->tail_len <= p->kept.tail_cap ? 0 : (size_t)(d->tail_len % NPZS_TAIL_MAX);
    v.a = p->kept.tail + start;
    v.alen = (size_t)keep - start;
    v.b = p->kept.tail;
    v.blen = start;
    v.base = total - keep;
    v.size = total;
    for (unsigned variant = 0; variant < NPZS_ZF_VARIANTS; variant++) {
        npzs__zf_end e;
        int st = npzs__zf_locate(&v, variant, &e);
        if (st == NPZS_ZF_MULTIDISK) return npzs__fail(p, NPZS_E_ZIP_UNSUPPORTED, e.at, NPZS_R_EOCD_FIND_MULTIDISK);
        if (st)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.at,
                              (variant & NPZS_ZF_FIXED64) ? NPZS_R_EOCD_FIND_FAILS_FIXED : NPZS_R_EOCD_FIND_FAILS);
        if (e.eocd_off != d->eocd_off) return npzs__fail(p, NPZS_E_CD_MISMATCH, e.eocd_off, NPZS_R_EOCD_FIND_OTHER);
        if (e.loc && !d->have_loc) return npzs__fail(p, NPZS_E_CD_MISMATCH, e.loc_off, NPZS_R_EOCD_FIND_LOCATOR);
        if (e.z64 != d->have_z64 || (e.z64 && (e.z64_off != d->z64_off || e.loc_off != d->loc_off)))
            return npzs__fail(p, NPZS_E_CD_MISMATCH, e.z64 ? e.z64_off : d->z64_off, NPZS_R_EOCD_FIND_Z64);
        if (e.cd_start != d->cd_start || e.rec.cd_off != d->cd_start || e.rec.cd_size != d->cd_end - d->cd_start)
            return npzs__fail(p, NPZS_E_CD_MISMATCH, d->eocd_off, NPZS_R_EOCD_FIND_CD);
    }
    return 0;
}

/* ---- the states ------------------------------------------------------------------------------ */

static int sig_first_byte_ok(const npzs_parser *p) {
    /* the first record must be a local header or an (empty archive) end record */
    static const uint8_t a[4] = {'P', 'K', 3, 4}, b[4] = {'P', 'K', 5, 6};
    return memcmp(p->stage, a, p->stage_len) == 0 || memcmp(p->stage, b, p->stage_len) == 0;
}

/* The first record after the members: from here on every byte is kept for bind_end. */
static int region_start(npzs_parser *p) {
    if (p->end.tail_on) return 0;
    if (tail_reserve(p, 64) < 0) return p->err;
    tail_put(p, p->stage, p->stage_len);
    p->end.tail_on = 1;
    return 0;
}

static int end_of_cd(npzs_parser *p) {
    npzs__end *d = &p->end;
    if (p->phase == PH_LOCALS && npzs__pol_directory(p) < 0) return p->err;
    if (p->phase == PH_LOCALS) d->cd_start = p->rec_off;
    d->cd_end = p->rec_off;
    if (d->cd_count != p->members) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_FEWER);
    if (region_start(p) < 0) return p->err;
    return 0;
}

static npzs__rc lfh_whole(npzs_parser *p, npzs_in *in, npzs_event *ev);
static npzs__rc cdh_whole(npzs_parser *p, npzs_in *in, size_t pending);

/* ZIP_SIG: the 4-byte signature of the next record; which ones may come depends on the phase. */
npzs__rc npzs__zip_sig(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (p->stage_len == 0 && in) { /* a whole record in the push: read in place */
        npzs__rc rc = NPZS__NOT_TAKEN;
        if (p->phase == PH_LOCALS) {
            rc = lfh_whole(p, in, ev);
        } else if (p->phase == PH_CENTRAL) { /* the directory's records one after the other, kept at once */
            size_t from = in->pos;
            while ((rc = cdh_whole(p, in, in->pos - from)) == NPZS__GO) {}
            if (rc != NPZS__ERROR && in->pos > from) tail_put(p, (const uint8_t *)in->src + from, in->pos - from);
        }
        if (rc != NPZS__NOT_TAKEN) return rc;
    }
    if (p->stage_len == 0) {
        p->rec_off = npzs__here(p);
        /* room for the signature and the fixed part of any directory record */
        if (p->end.tail_on && tail_reserve(p, 64) < 0) return NPZS__ERROR;
    }
    if (p->rec_off == 0) {
        /* byte by byte, so that "not a zip" is reported at once */
        while (p->stage_len < 4) {
            if (!take(p, in, p->stage_len + 1)) return npzs__need(p);
            if (!sig_first_byte_ok(p)) return npzs__error(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_FIRST);
        }
    } else if (!take(p, in, 4)) {
        return npzs__need(p);
    }
    uint32_t s = npzs__le32(p->stage);
    int in_cd = p->phase == PH_LOCALS || p->phase == PH_CENTRAL;
    if (p->phase == PH_LOCALS && s == SIG_LFH) {
        p->cur = p->members;
        p->lfh.name_ready = 0;
        p->state = NPZS_S_ZIP_LFH;
    } else if (in_cd && s == SIG_CDH) {
        if (p->phase == PH_LOCALS && npzs__pol_directory(p) < 0) return NPZS__ERROR;
        if (p->phase == PH_LOCALS) p->end.cd_start = p->rec_off;
        p->phase = PH_CENTRAL;
        if (region_start(p) < 0) return NPZS__ERROR;
        p->state = NPZS_S_ZIP_CDH;
    } else if (in_cd && s == SIG_Z64_EOCD) {
        if (end_of_cd(p) < 0) return NPZS__ERROR;
        p->state = NPZS_S_ZIP_Z64_EOCD;
    } else if (in_cd && s == SIG_EOCD) {
        if (end_of_cd(p) < 0) return NPZS__ERROR;
        p->state = NPZS_S_ZIP_EOCD;
    } else if (p->phase == PH_Z64 && s == SIG_Z64_LOC) {
        p->state = NPZS_S_ZIP_Z64_LOC;
    } else if (p->phase == PH_LOC && s == SIG_EOCD) {
        p->state = NPZS_S_ZIP_EOCD;
    } else {
        return stop(p, NPZS_E_ZIP_BAD_HEADER, s == SIG_LFH ? NPZS_R_LFH_AFTER_CD : NPZS_R_SIG_UNEXPECTED);
    }
    return NPZS__GO;
}

/* ---- the local header: its checks, shared by the states below and by lfh_whole ---------------- */

/* The 30 fixed bytes of a local header at b (its signature included). */
static int lfh_fixed(npzs_parser *p, const uint8_t *b) {
    npzs__zerr e;
    if (p->members >= p->lim.max_members) {
        npzs__limit_need(p, (uint64_t)p->members + 1);
        return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_MEMBERS);
    }
    if (npzs__zr_lfh(b, &p->lim, &p->lfh.h, &e) < 0) {
        npzs__limit_need(p, e.rule == NPZS_R_LIMIT_NAME ? p->lfh.h.f.name_len : p->lfh.h.f.extra_len);
        return bad_e(p, &e);
    }
    if (npzs__buffer(p, (void **)&p->kept.name, &p->kept.name_cap, p->lfh.h.f.name_len, p->rec_off, NPZS_R_NOMEM_NAME) <
            0 ||
        npzs__buffer(p, (void **)&p->kept.extra, &p->kept.extra_cap, p->lfh.h.f.extra_len, p->rec_off,
                     NPZS_R_NOMEM_EXTRA) < 0)
        return p->err;
    return 0;
}

/* The name (staged in p->kept.name) and the extra field at x: the member is checked, delimited and
 * remembered. */
static int lfh_vars(npzs_parser *p, const uint8_t *x) {
    npzs__zlfh *h = &p->lfh.h;
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    if (npzs__zr_name(p->kept.name, h->f.name_len, h->f.flags, &e) < 0 ||
        npzs__zr_extra(x, h->f.extra_len, 1, &z, &zl, &e) < 0 || npzs__zr_lfh_sizes(h, z, zl, &e) < 0)
        return bad_e(p, &e);
    uint64_t cap = npzs__total_cap(p);
    if (h->known && (h->usize > cap || p->total_out > cap - h->usize)) {
        npzs__limit_need(p, h->usize > UINT64_MAX - p->total_out ? UINT64_MAX : p->total_out + h->usize);
        return bad(p, npzs__total_code(p), npzs__total_rule(p, NPZS_R_LIMIT_TOTAL_MEMBER));
    }
    if (remember(p) < 0) return p->err;
    return npzs__pol_member(p);
}

/* MEMBER_BEGIN: start the content machine (and inflate) and emit the event. */
static npzs__rc member_begin(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    const npzs__record *r = p->rec;
    const npzs__zlfh *h = &p->lfh.h;
    int stored = h->f.method == NPZS_METHOD_STORED;
    p->data_start = npzs__here(p);
    p->data_in = 0;
    npzs__content_start(p, 0, stored, stored && h->dd, p->data_start);
    if (!stored && npzs__inf_begin(p) < 0) return NPZS__ERROR;
    p->state = stored ? NPZS_S_ZIP_STORED : NPZS_S_ZIP_DEFLATED;
    if (!npzs__wants(p, NPZS_EV_MEMBER_BEGIN)) /* on into the data (its own step's result) */
        return stored ? GO(p, in, ev, NPZS_S_ZIP_STORED, npzs__zip_stored) : NPZS__GO;
    *ev = (npzs_event){.type = NPZS_EV_MEMBER_BEGIN,
                       .member = p->cur,
                       .offset = r->lfh_off,
                       .name = (const char *)r->name,
                       .name_len = r->name_len,
                       .method = h->f.method,
                       .flags = h->f.flags};
    return NPZS__EVENT;
}

/* A record's fixed part, copied before any field of it is read.  The records whole in a push are
 * read where they are, but each byte once: a caller whose memory changes under the parser (a
 * file mapped while someone rewrites it: Python's npzstream.open, the command line's -j N) would
 * otherwise have a length checked against the push in one read and used in another (a name
 * copied past its buffer, an extra field read past the push).  The barrier keeps the compiler
 * from reading the fields from b again in place of the copy. */
static void fixed_once(uint8_t *fix, const uint8_t *b, size_t n) {
#if defined(__GNUC__) || defined(__clang__)
    memcpy(fix, b, n);
    __asm__ __volatile__("" : : "r"(fix) : "memory");
#else
    const volatile uint8_t *v = b;
    for (size_t i = 0; i < n; i++) fix[i] = v[i];
#endif
}

/* A local header whose 30 bytes, name and extra field are all in the push (the common case): the
 * states from ZIP_LFH to ZIP_MEMBER_BEGIN in one step, with their checks in their order, the push
 * taken as far as they take it, and the bytes read where they are (no staging).  NPZS__NOT_TAKEN
 * when the record is not whole in the push (the states then take it piece by piece). */
static npzs__rc lfh_whole(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    size_t avail = in->size - in->pos;
    if (avail < LFH_SIZE) return NPZS__NOT_TAKEN; /* (an empty push may have no buffer at all) */
    const uint8_t *b = (const uint8_t *)in->src + in->pos;
    uint8_t fix[LFH_SIZE]; /* the fixed part read once: see fixed_once */
    fixed_once(fix, b, LFH_SIZE);
    if (npzs__le32(fix) != SIG_LFH) return NPZS__NOT_TAKEN;
    size_t n = npzs__le16(fix + 26), x = npzs__le16(fix + 28);
    if (avail - LFH_SIZE < n + x) return NPZS__NOT_TAKEN;
    p->rec_off = npzs__here(p);
    p->cur = p->members;
    p->lfh.name_ready = 0;
    p->state = NPZS_S_ZIP_LFH;
    NPZS_VISIT(p, NPZS_S_ZIP_LFH); /* the states this step stands for */
    NPZS_VISIT(p, NPZS_S_ZIP_LFH_NAME);
    NPZS_VISIT(p, NPZS_S_ZIP_LFH_EXTRA);
    NPZS_VISIT(p, NPZS_S_ZIP_MEMBER_BEGIN);
    in->pos += LFH_SIZE;
    if (lfh_fixed(p, fix) < 0) return NPZS__ERROR;
    memcpy(p->kept.name, b + LFH_SIZE, n); /* staged: error messages name the member */
    p->lfh.name_ready = 1;
    in->pos += n + x;
    if (lfh_vars(p, b + LFH_SIZE + n) < 0) return NPZS__ERROR;
    return member_begin(p, in, ev);
}

/* ZIP_LFH: the 26 fixed bytes after a local header's signature. */
npzs__rc npzs__zip_lfh(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, LFH_SIZE)) return npzs__need(p);
    if (lfh_fixed(p, p->stage) < 0) return NPZS__ERROR;
    p->var_len = 0;
    p->state = NPZS_S_ZIP_LFH_NAME;
    return NPZS__GO;
}

/* ZIP_LFH_NAME: the local header's name. */
npzs__rc npzs__zip_lfh_name(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take_var(p, in, p->kept.name, p->lfh.h.f.name_len)) return npzs__need(p);
    p->lfh.name_ready = 1;
    p->var_len = 0;
    p->state = NPZS_S_ZIP_LFH_EXTRA;
    return NPZS__GO;
}

/* ZIP_LFH_EXTRA: the local extra fields; then the member is checked, delimited and remembered. */
npzs__rc npzs__zip_lfh_extra(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take_var(p, in, p->kept.extra, p->lfh.h.f.extra_len)) return npzs__need(p);
    if (lfh_vars(p, p->kept.extra) < 0) return NPZS__ERROR;
    p->state = NPZS_S_ZIP_MEMBER_BEGIN;
    return NPZS__GO;
}

/* ZIP_MEMBER_BEGIN: emit MEMBER_BEGIN, start the content machine (and inflate). */
npzs__rc npzs__zip_member_begin(npzs_parser *p, npzs_in *in, npzs_event *ev) { return member_begin(p, in, ev); }

/* ZIP_STORED: stored data straight from the push (zero copy); a stored member with a data
 * descriptor is delimited by its own .npy header. */
npzs__rc npzs__zip_stored(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    const npzs__zlfh *h = &p->lfh.h;
    uint64_t left = h->known ? h->csize - p->data_in : npzs__content_want(p);
    if (left == 0) {
        p->state = NPZS_S_ZIP_CONTENT_END;
        return NPZS__GO;
    }
    size_t avail = in ? in->size - in->pos : 0;
    if (!avail) return npzs__need(p);
    size_t n = avail < left ? avail : (size_t)left, used = 0;
    npzs__rc rc = npzs__content_feed(p, (const uint8_t *)in->src + in->pos, n, 1, &used, ev);
    in->pos += used;
    p->data_in += used;
    if (rc == NPZS__EVENT) ev->member = p->cur;
    if (rc == NPZS__NOT_TAKEN) /* the array ended: a member of known size has more, else its end */
        return h->known ? npzs__content_trailing(p) : NPZS__GO;
    if (rc != NPZS__NEED) return rc;
    if (h->known && p->data_in == h->csize) return GO(p, in, ev, NPZS_S_ZIP_CONTENT_END, npzs__zip_content_end);
    return NPZS__GO;
}

/* ZIP_DEFLATED: hand the window's bytes to the content machine, then refill it (inflate.c). */
npzs__rc npzs__zip_deflated(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    npzs__inflate *f = &p->inf;
    const npzs__zlfh *h = &p->lfh.h;
    if (f->win_pos < f->win_len) {
        size_t n = f->win_len - f->win_pos, used = 0;
        uint64_t room = npzs__total_cap(p) - p->total_out; /* total_out <= the cap always */
        if (p->c.pos >= room) { /* at least one byte more than the cap: all the input shows so far */
            npzs__limit_need(p, npzs__total_cap(p) + 1);
            return npzs__error(p, npzs__total_code(p), p->data_start, npzs__total_rule(p, NPZS_R_LIMIT_TOTAL_INFLATE));
        }
        if (n > room - p->c.pos) n = (size_t)(room - p->c.pos);
        /* content of a known size gets exactly that many bytes, whatever the window holds */
        if (h->known) {
            if (p->c.pos >= h->usize) return npzs__error(p, NPZS_E_SIZE_MISMATCH, p->data_start, NPZS_R_INFLATE_LONGER);
            if (n > h->usize - p->c.pos) n = (size_t)(h->usize - p->c.pos);
        }
        npzs__rc rc = npzs__content_feed(p, f->made + f->win_pos, n, 0, &used, ev);
        f->win_pos += used;
        if (rc == NPZS__EVENT) ev->member = p->cur;
        if (rc == NPZS__NOT_TAKEN) return npzs__content_trailing(p); /* inflated bytes past the array */
        return rc == NPZS__NEED ? NPZS__GO : rc;
    }
    if (f->bad) return npzs__error(p, NPZS_E_INFLATE, p->data_start, NPZS_R_INFLATE_DATA);
    if (f->end) {
        p->state = NPZS_S_ZIP_CONTENT_END;
        return NPZS__GO;
    }
    return npzs__inf_fill(p, in);
}

/* ZIP_CONTENT_END: the member's data ended; its content and sizes are checked. */
npzs__rc npzs__zip_content_end(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    const npzs__zlfh *h = &p->lfh.h;
    npzs__rc rc = npzs__content_end(p, ev);
    if (rc == NPZS__EVENT) ev->member = p->cur;
    if (rc != NPZS__GO) return rc;
    p->crc = npzs__content_crc(p);
    uint64_t end = p->data_start + p->data_in; /* where the member's data ends */
    if (h->f.method == NPZS_METHOD_DEFLATED && h->known && p->data_in != h->csize)
        return npzs__error(p, NPZS_E_SIZE_MISMATCH, end, NPZS_R_DEFLATE_END_EARLY);
    if (h->known && p->c.pos != h->usize) return npzs__error(p, NPZS_E_SIZE_MISMATCH, end, NPZS_R_INFLATE_SIZE);
    if (h->dd) {
        p->stage_len = 0;
        p->rec_off = npzs__here(p);
        p->state = NPZS_S_ZIP_DD;
        return NPZS__GO;
    }
    if (check_local(p, npzs__here(p)) < 0) return NPZS__ERROR;
    return GO(p, in, ev, NPZS_S_ZIP_MEMBER_END, npzs__zip_member_end);
}

/* ZIP_DD: the data descriptor: signature optional, 4- or 8-byte sizes (8 after a ZIP64 extra). */
npzs__rc npzs__zip_dd(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, 4)) return npzs__need(p);
    uint32_t crc = p->crc;
    /* the signature is optional; when the CRC itself equals it, the signature is required */
    int has_sig = npzs__le32(p->stage) == SIG_DD;
    int wide = p->lfh.h.z64;
    size_t total = (has_sig ? 4u : 0u) + 4u + (wide ? 16u : 8u);
    if (!take(p, in, total)) return npzs__need(p);
    npzs__zdd d;
    npzs__zr_dd(p->stage + (has_sig ? 4 : 0), wide, &d);
    if (d.crc != crc) return stop(p, NPZS_E_CRC_MISMATCH, NPZS_R_CRC_DD);
    if (d.csize != p->data_in || d.usize != p->c.pos) return stop(p, NPZS_E_SIZE_MISMATCH, NPZS_R_SIZE_DD);
    if (check_local(p, p->rec_off) < 0) return NPZS__ERROR;
    p->state = NPZS_S_ZIP_MEMBER_END;
    return NPZS__GO;
}

void npzs__seam_member_end(npzs_parser *p) {
    if (p->seam.passed) p->seam.passed(p->seam.ctx, npzs__here(p));
}

/* ZIP_MEMBER_END: the member is complete: remember its CRC and sizes, emit MEMBER_END. */
npzs__rc npzs__zip_member_end(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)in;
    npzs__record *r = p->rec;
    r->crc = p->crc;
    r->csize = p->data_in;
    r->usize = p->c.pos;
    p->total_out += p->c.pos;
    p->stage_len = 0;
    p->state = NPZS_S_ZIP_SIG;
    npzs__seam_member_end(p);
    if (!npzs__wants(p, NPZS_EV_MEMBER_END)) return NPZS__GO;
    *ev = (npzs_event){.type = NPZS_EV_MEMBER_END,
                       .member = p->cur,
                       .offset = npzs__here(p),
                       .name = (const char *)r->name,
                       .name_len = r->name_len,
                       .method = r->method,
                       .kind = p->c.kind,
                       .size = p->c.pos,
                       .csize = p->data_in,
                       .crc32 = r->crc,
                       .data_crc32 = p->c.crc_data,
                       .data_size = p->c.data_len,
                       .array = p->c.kind == NPZS_KIND_ARRAY ? &p->c.arr.info : NULL,
                       .sniff = p->c.sniff,
                       .sha256 = p->c.digest_ok ? p->c.digest : NULL};
    return NPZS__EVENT;
}

/* ---- the central directory header: its checks, shared by the states below and by cdh_whole ---- */

/* The 46 fixed bytes at b, against the member the entry must repeat. */
static int cdh_fixed(npzs_parser *p, const uint8_t *b) {
    npzs__zcdh *c = &p->cdh;
    npzs__zerr e;
    if (p->end.cd_count >= p->members) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_EXTRA_ENTRY);
    const npzs__record *r = p->cd_rec = npzs__rec(p, p->end.cd_count);
    if (npzs__zr_cdh(b, c, &e) < 0) return bad_e(p, &e);
    if (c->f.flags != r->flags) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_FLAGS);
    if (c->f.method != r->method) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_METHOD);
    if (c->f.crc != r->crc) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_CRC);
    if (c->f.name_len != r->name_len) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_NAME_LEN);
    if (c->f.extra_len > p->lim.max_extra_len) {
        npzs__limit_need(p, c->f.extra_len);
        return bad(p, NPZS_E_LIMIT, NPZS_R_LIMIT_EXTRA_CD);
    }
    if (npzs__buffer(p, (void **)&p->kept.extra, &p->kept.extra_cap, c->f.extra_len, p->rec_off, NPZS_R_NOMEM_EXTRA) <
        0)
        return p->err;
    return 0;
}

/* The name at s: byte for byte the local header's. */
static int cdh_name(npzs_parser *p, const uint8_t *s) {
    const npzs__record *r = p->cd_rec;
    if (memcmp(s, r->name, r->name_len) != 0) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_NAME);
    return 0;
}

/* The extra field at x (ZIP64 sizes and offset), against the member. */
static int cdh_extra(npzs_parser *p, const uint8_t *x) {
    const npzs__zcdh *c = &p->cdh;
    const npzs__record *r = p->cd_rec;
    npzs__zerr e;
    const uint8_t *z;
    size_t zl;
    npzs__zcdh_sizes s;
    if (npzs__zr_extra(x, c->f.extra_len, 0, &z, &zl, &e) < 0 || npzs__zr_cdh_zip64(c, z, zl, &s, &e) < 0)
        return bad_e(p, &e);
    if (s.off != r->lfh_off) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_OFFSET);
    if (s.csize != r->csize || s.usize != r->usize) return bad(p, NPZS_E_CD_MISMATCH, NPZS_R_CD_SIZES);
    return 0;
}

/* A central directory header (after the first) whose 46 bytes, name, extra field and comment
 * are all in the push: the states from ZIP_SIG to ZIP_CDH_COMMENT in one step, with the same
 * checks and reservations in the same order (the room reserved is the same: the record's 46
 * bytes are kept with the rest, once it passed), the push taken as far as they take it, the
 * bytes read where they are.  NPZS__NOT_TAKEN when the record is not whole in the push.  The caller keeps the
 * records' bytes (tail_put) after the last of a run: `pending` bytes of the run before this one
 * are still to be kept, and the room reserved counts them. */
static npzs__rc cdh_whole(npzs_parser *p, npzs_in *in, size_t pending) {
    size_t avail = in->size - in->pos;
    if (avail < CDH_SIZE) return NPZS__NOT_TAKEN;
    const uint8_t *b = (const uint8_t *)in->src + in->pos;
    uint8_t fix[CDH_SIZE]; /* the fixed part read once: see fixed_once */
    fixed_once(fix, b, CDH_SIZE);
    if (npzs__le32(fix) != SIG_CDH) return NPZS__NOT_TAKEN;
    size_t n = npzs__le16(fix + 28), x = npzs__le16(fix + 30), k = npzs__le16(fix + 32);
    if (avail - CDH_SIZE < n + x + k) return NPZS__NOT_TAKEN;
    p->rec_off = npzs__here(p);
    if (tail_reserve(p, pending + 64) < 0) return NPZS__ERROR;
    p->state = NPZS_S_ZIP_CDH;
    NPZS_VISIT(p, NPZS_S_ZIP_CDH);
    NPZS_VISIT(p, NPZS_S_ZIP_CDH_NAME);
    NPZS_VISIT(p, NPZS_S_ZIP_CDH_EXTRA);
    NPZS_VISIT(p, NPZS_S_ZIP_CDH_COMMENT);
    in->pos += CDH_SIZE;
    if (cdh_fixed(p, fix) < 0 || tail_reserve(p, pending + CDH_SIZE + n + x + k) < 0) return NPZS__ERROR;
    in->pos += n;
    if (cdh_name(p, b + CDH_SIZE) < 0) return NPZS__ERROR;
    in->pos += x;
    if (cdh_extra(p, b + CDH_SIZE + n) < 0) return NPZS__ERROR;
    in->pos += k;
    p->end.cd_count++;
    return next_record(p);
}

/* ZIP_CDH: the fixed part of a central directory header, against the member it must repeat. */
npzs__rc npzs__zip_cdh(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, CDH_SIZE)) return npzs__need(p);
    const npzs__zcdh *c = &p->cdh;
    if (cdh_fixed(p, p->stage) < 0 || tail_reserve(p, (size_t)c->f.name_len + c->f.extra_len + c->comment_len) < 0)
        return NPZS__ERROR;
    p->var_len = 0;
    p->state = NPZS_S_ZIP_CDH_NAME;
    return NPZS__GO;
}

/* ZIP_CDH_NAME: the central directory name, byte for byte the local header's. */
npzs__rc npzs__zip_cdh_name(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take_var(p, in, p->kept.name, p->cdh.f.name_len)) return npzs__need(p);
    if (cdh_name(p, p->kept.name) < 0) return NPZS__ERROR;
    p->var_len = 0;
    p->state = NPZS_S_ZIP_CDH_EXTRA;
    return NPZS__GO;
}

/* ZIP_CDH_EXTRA: the central extra fields (ZIP64 sizes and offset), against the member. */
npzs__rc npzs__zip_cdh_extra(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take_var(p, in, p->kept.extra, p->cdh.f.extra_len)) return npzs__need(p);
    if (cdh_extra(p, p->kept.extra) < 0) return NPZS__ERROR;
    p->var_len = 0;
    p->state = NPZS_S_ZIP_CDH_COMMENT;
    return NPZS__GO;
}

/* ZIP_CDH_COMMENT: the entry's comment, skipped (the end-record search reads it: bind_end). */
npzs__rc npzs__zip_cdh_comment(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take_var(p, in, NULL, p->cdh.comment_len)) return npzs__need(p);
    p->end.cd_count++;
    return next_record(p);
}

/* ZIP_Z64_EOCD: the ZIP64 end record, right after the central directory. */
npzs__rc npzs__zip_z64_eocd(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, Z64_EOCD_SIZE)) return npzs__need(p);
    npzs__end *d = &p->end;
    npzs__zend z;
    npzs__zerr e;
    if (npzs__zr_z64_eocd(p->stage, &z, &e) < 0) return stop_e(p, &e);
    if (z.count_disk != p->members || z.count != p->members) return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_Z64_COUNT);
    if (z.cd_size != d->cd_end - d->cd_start || z.cd_off != d->cd_start)
        return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_Z64_CD);
    d->have_z64 = 1;
    d->z64_off = p->rec_off;
    p->phase = PH_Z64;
    return next_record(p);
}

/* ZIP_Z64_LOC: the ZIP64 locator, right after the ZIP64 end record it points at. */
npzs__rc npzs__zip_z64_loc(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, Z64_LOC_SIZE)) return npzs__need(p);
    npzs__end *d = &p->end;
    npzs__zerr e;
    uint64_t at;
    if (npzs__zr_z64_loc(p->stage, &at, &e) < 0) return stop_e(p, &e);
    if (at != d->z64_off) return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_LOC_OFFSET);
    d->have_loc = 1;
    d->loc_off = p->rec_off;
    p->phase = PH_LOC;
    return next_record(p);
}

/* ZIP_EOCD: the end record; with a ZIP64 end record its fields may be the 0xFF.. sentinels. */
npzs__rc npzs__zip_eocd(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (!take(p, in, EOCD_SIZE)) return npzs__need(p);
    npzs__end *d = &p->end;
    npzs__zend r;
    npzs__zr_eocd(p->stage, &r);
    int z = d->have_z64;
    if (!((r.disk == 0 || (z && r.disk == 0xFFFF)) && (r.disk_cd == 0 || (z && r.disk_cd == 0xFFFF))))
        return stop(p, NPZS_E_ZIP_UNSUPPORTED, NPZS_R_DISK_EOCD);
    if (!((r.count_disk == p->members || (z && r.count_disk == 0xFFFF)) &&
          (r.count == p->members || (z && r.count == 0xFFFF))))
        return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_COUNT);
    if (!(r.cd_size == d->cd_end - d->cd_start || (z && r.cd_size == 0xFFFFFFFFu)))
        return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_CD_SIZE);
    if (!(r.cd_off == d->cd_start || (z && r.cd_off == 0xFFFFFFFFu)))
        return stop(p, NPZS_E_CD_MISMATCH, NPZS_R_EOCD_CD_OFFSET);
    d->comment_len = r.comment_len;
    d->eocd_off = p->rec_off;
    if (tail_reserve(p, d->comment_len) < 0) return NPZS__ERROR;
    p->var_len = 0;
    d->comment_sig = 0;
    p->phase = PH_END;
    p->state = NPZS_S_ZIP_EOCD_COMMENT;
    return NPZS__GO;
}

/* ZIP_EOCD_COMMENT: the archive comment: no record signature in it, ending at the end of input. */
npzs__rc npzs__zip_eocd_comment(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    npzs__end *d = &p->end;
    while (p->var_len < d->comment_len) {
        if (!in || in->pos == in->size) {
            if (p->finished) return npzs__error(p, NPZS_E_TRUNCATED, npzs__here(p), NPZS_R_COMMENT_PAST_END);
            return NPZS__NEED;
        }
        uint8_t c = ((const uint8_t *)in->src)[in->pos];
        eat(p, in, NULL, 1);
        p->var_len++;
        uint32_t w = d->comment_sig = (d->comment_sig << 8) | c;
        if (w == 0x504B0102u || w == 0x504B0304u || w == 0x504B0506u || w == 0x504B0606u || w == 0x504B0607u ||
            w == 0x504B0708u)
            return stop(p, NPZS_E_ZIP_BAD_HEADER, NPZS_R_COMMENT_SIG);
    }
    p->state = NPZS_S_ZIP_TAIL;
    return NPZS__GO;
}

/* ZIP_TAIL: the archive is complete; at the end of input zipfile's reading is checked. */
npzs__rc npzs__zip_tail(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (in && in->pos < in->size) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), NPZS_R_ZIP_TRAIL);
    if (!p->finished) return NPZS__NEED;
    if (bind_end(p) < 0) return NPZS__ERROR;
    p->state = NPZS_S_END_EMIT;
    return NPZS__GO;
}
