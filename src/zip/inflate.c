/*
 * inflate.c -- the inflate back end of deflated members.
 *
 * One small contract (npzs__inflater below: start, run, end) stands between the ZIP machine and
 * the library that inflates: zlib, the reference whose verdict np.load shares, or (the default
 * for a member whose compressed size is known) the fast decoder of fastinf.c, whose verdict
 * and output are zlib's and which lends the blocks it does not vouch for to zlib itself.
 * npzs__inf_fill() refills the parser's output window from the push: it sizes the output to what
 * the member's content can still take (so a bomb is stopped at the first byte too many), gathers
 * small pushes, and records the end of the stream or an error for the machine to act on once
 * the window's bytes are used.
 */
#include <string.h>

#include "fastinf.h"
#include "../internal.h"
#include "../core/buffer.h"

/* ---- the back end contract --------------------------------------------------------------------
 * start: begin a raw deflate stream (allocate on first use, reset after); 0 or < 0 recorded.
 * run:   inflate io->in[0, in_len) into io->out[0, out_len); sets io->took and io->made and
 *        returns NPZS__INF_OK (more to come), NPZS__INF_END (the stream ended; io->back of the
 *        bytes taken lie past its end), NPZS__INF_BAD (invalid data) or NPZS__INF_NOMEM.
 * end:   release everything. */
typedef struct npzs__inflater {
    int (*start)(npzs_parser *p);
    int (*run)(npzs_parser *p, npzs__inf_io *io);
    void (*end)(npzs_parser *p);
} npzs__inflater;

static voidpf z_alloc(voidpf opaque, uInt items, uInt size) {
    npzs_parser *p = opaque;
    if (size && items > SIZE_MAX / size) return Z_NULL;
    return npzs__alloc(p, (size_t)items * size);
}
static void z_free(voidpf opaque, voidpf ptr) { npzs__free((npzs_parser *)opaque, ptr); }

static int zlib_start(npzs_parser *p) {
    if (!p->kept.zs_init) {
        memset(&p->kept.zs, 0, sizeof p->kept.zs);
        p->kept.zs.zalloc = z_alloc;
        p->kept.zs.zfree = z_free;
        p->kept.zs.opaque = p;
        int rc = inflateInit2(&p->kept.zs, -15);
        if (rc != Z_OK)
            return npzs__fail(p, rc == Z_MEM_ERROR ? NPZS_E_NOMEM : NPZS_E_BAD_CALL, p->rec_off,
                              rc == Z_MEM_ERROR ? NPZS_R_NOMEM_INFLATE : NPZS_R_CALL_ZLIB);
        p->kept.zs_init = 1;
    } else if (inflateReset(&p->kept.zs) != Z_OK) {
        return npzs__fail(p, NPZS_E_BAD_CALL, p->rec_off, NPZS_R_CALL_ZLIB);
    }
    return 0;
}

static int zlib_run(npzs_parser *p, npzs__inf_io *io) {
    z_stream *zs = &p->kept.zs;
    zs->next_in = io->in_len ? (Bytef *)(uintptr_t)io->in : io->out; /* zlib wants a pointer */
    zs->avail_in = (uInt)io->in_len;
    zs->next_out = io->out;
    zs->avail_out = (uInt)io->out_len;
    int zr = inflate(zs, Z_NO_FLUSH);
    io->took = io->in_len - zs->avail_in;
    io->made = io->out_len - zs->avail_out;
    io->back = 0; /* zlib stops at the stream's last byte */
    if (zr == Z_STREAM_END) return NPZS__INF_END;
    if (zr == Z_MEM_ERROR) return NPZS__INF_NOMEM;
    if (zr == Z_DATA_ERROR || zr == Z_NEED_DICT || zr == Z_STREAM_ERROR) return NPZS__INF_BAD; /* raw: no dictionary */
    return NPZS__INF_OK;
}

static void zlib_end(npzs_parser *p) {
    if (p->kept.zs_init) inflateEnd(&p->kept.zs);
    p->kept.zs_init = 0;
}

static const npzs__inflater zlib_inflater = {zlib_start, zlib_run, zlib_end};

/* ---- the fast decoder (fastinf.c) -------------------------------------------------------------
 * For members whose compressed size the local header gives (the input is then bounded by the
 * member, and its last byte known: the decoder reads a few bytes ahead of a rest point and gives
 * back, through io->back, those past the stream's end).  Everything it may need is allocated
 * here, at the member's start: zlib's state and window (for the blocks it lends to zlib) and
 * its own (once per parser), so inflating never allocates and no limit is met in the middle of
 * a member. */
static int fast_start(npzs_parser *p) {
    if (zlib_start(p) < 0) return p->err;
    static const Bytef none[1] = {0};
    int rc = inflateSetDictionary(&p->kept.zs, none, 0); /* allocates zlib's window, once */
    if (rc != Z_OK)
        return npzs__fail(p, rc == Z_MEM_ERROR ? NPZS_E_NOMEM : NPZS_E_BAD_CALL, p->rec_off,
                          rc == Z_MEM_ERROR ? NPZS_R_NOMEM_INFLATE : NPZS_R_CALL_ZLIB);
    if (!p->kept.fi) {
        p->kept.fi = npzs__alloc(p, npzs__fi_size());
        if (!p->kept.fi) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_INFLATE);
        npzs__fi_init(p->kept.fi);
    }
    npzs__fi_reset(p->kept.fi);
    return 0;
}

static int fast_run(npzs_parser *p, npzs__inf_io *io) {
    int last = io->in_len == p->lfh.h.csize - p->data_in; /* the member's last bytes */
    int rc = npzs__fi_run(p->kept.fi, &p->kept.zs, io->in, io->in_len, last, io->out, io->out_len, &io->took, &io->made,
                          &io->back);
    if (rc == NPZS__FI_END) return NPZS__INF_END;
    if (rc == NPZS__FI_BAD) return NPZS__INF_BAD;
    if (rc == NPZS__FI_NOMEM) return NPZS__INF_NOMEM;
    return NPZS__INF_OK;
}

static void fast_end(npzs_parser *p) {
    zlib_end(p);
    npzs__free(p, p->kept.fi);
    p->kept.fi = NULL;
}

static const npzs__inflater fast_inflater = {fast_start, fast_run, fast_end};

#ifdef NPZS_HAVE_ISAL
/* ISA-L's inflate (NPZS_LENIENT_FAST_INFLATE): faster, and not zlib: it accepts some deflate
 * streams zlib refuses (incomplete or over-subscribed Huffman code sets) and decides some
 * invalid or cut streams at another point (SECURITY.md, "Lenient flags"; fuzz_inflate_diff
 * measures it).  Used only for members whose compressed size the local header gives: its
 * input is then bounded by the member, and the bytes it reads ahead past the stream's end
 * (at most the 8 of its bit buffer) are given back through io->back. */
#include <isa-l/igzip_lib.h>

static int isal_start(npzs_parser *p) {
    if (!p->kept.isal) {
        p->kept.isal = npzs__alloc(p, sizeof(struct inflate_state));
        if (!p->kept.isal) return npzs__fail(p, NPZS_E_NOMEM, p->rec_off, NPZS_R_NOMEM_INFLATE);
    }
    struct inflate_state *st = p->kept.isal;
    isal_inflate_init(st);
    st->crc_flag = ISAL_DEFLATE;
    st->hist_bits = 15;
    return 0;
}

static int isal_run(npzs_parser *p, npzs__inf_io *io) {
    struct inflate_state *st = p->kept.isal;
    st->next_in = (uint8_t *)(uintptr_t)io->in;
    st->avail_in = (uint32_t)io->in_len;
    st->next_out = io->out;
    st->avail_out = (uint32_t)(io->out_len > UINT32_MAX ? UINT32_MAX : io->out_len);
    uint32_t out0 = st->avail_out;
    int rc = isal_inflate(st);
    io->took = io->in_len - st->avail_in;
    io->made = out0 - st->avail_out;
    io->back = 0;
    if (rc < 0) return NPZS__INF_BAD;
    if (st->block_state == ISAL_BLOCK_FINISH) {
        /* whole bytes still in its bit buffer: read past the stream's end, in this call or an
         * earlier one (with a full output window it may have taken the input calls ago) */
        io->back = (size_t)(st->read_in_length > 0 ? st->read_in_length / 8 : 0);
        return NPZS__INF_END;
    }
    return NPZS__INF_OK;
}

static void isal_end(npzs_parser *p) {
    npzs__free(p, p->kept.isal);
    p->kept.isal = NULL;
}

static const npzs__inflater isal_inflater = {isal_start, isal_run, isal_end};
#endif

/* A member inflated ahead by zlib on a worker (par.c): its output, given as the window takes it.
 * It is used only when zlib ended the stream exactly at the member's last compressed byte, so the
 * bytes, their order and the end are those zlib gives here.  The member's zlib state is started
 * all the same, and its window allocated where zlib's first output would allocate it: the
 * parser's memory and its max_memory verdicts are those of a parser without the helper. */
static int pre_run(npzs_parser *p, npzs__inf_io *io) {
    npzs__inflate *f = &p->inf;
    npzs__pre *j = f->pre;
    uint64_t left = (j->given < j->keep ? j->keep : j->len) - j->given;
    size_t give = io->out_len < left ? io->out_len : (size_t)left;
    if (j->given >= j->keep) give = 0; /* the rest was skipped (npzs__content_skip) */
    if (give && !j->given) {
        static const Bytef none[1] = {0};
        if (inflateSetDictionary(&p->kept.zs, none, 0) == Z_MEM_ERROR) return NPZS__INF_NOMEM;
    }
    if (io->out == p->kept.win) io->ext = j->out + j->given;
    else memcpy(io->out, j->out + j->given, give);
    j->given += give;
    io->took = io->in_len;
    io->made = give;
    io->back = 0;
    if (j->given == j->len && p->data_in + io->took == p->lfh.h.csize) return NPZS__INF_END;
    return NPZS__INF_OK;
}

/* A member inflated ahead without the bytes after its first ones (npzs_par_skip_data) whose rest
 * the content machine could not take at once (npzs__content_skip: a header that ends with the
 * kept bytes, a member longer than its array, the total limit, DATA events asked for again): it is
 * inflated again, here, by the parser's zlib from the member's compressed bytes (the helper's
 * pieces); the bytes already given are made again and dropped.  The job was clean, so the stream
 * ends exactly at its last compressed byte. */
static int pre_zlib(npzs_parser *p, npzs__inf_io *io) {
    npzs__pre *j = p->inf.pre;
    z_stream *zs = &p->kept.zs;
    for (;;) {
        size_t room = io->out_len;
        int drop = j->zout < j->given;
        if (drop && j->given - j->zout < room) room = (size_t)(j->given - j->zout);
        while (j->zpiece < j->in_n && j->zpiece_pos == j->in_len[j->zpiece]) {
            j->zpiece++;
            j->zpiece_pos = 0;
        }
        size_t left = j->zpiece < j->in_n ? j->in_len[j->zpiece] - j->zpiece_pos : 0;
        uInt ai = (uInt)(left > 0x40000000u ? 0x40000000u : left);
        zs->next_in = ai ? (Bytef *)(uintptr_t)(j->in[j->zpiece] + j->zpiece_pos) : io->out;
        zs->avail_in = ai;
        zs->next_out = io->out;
        zs->avail_out = (uInt)room;
        int zr = inflate(zs, Z_NO_FLUSH);
        j->zpiece_pos += ai - zs->avail_in;
        j->zpos += ai - zs->avail_in;
        size_t made = room - zs->avail_out;
        j->zout += made;
        if (zr == Z_MEM_ERROR) return NPZS__INF_NOMEM;
        if (zr != Z_OK && zr != Z_STREAM_END) return NPZS__INF_BAD;          /* cannot happen: zlib ended it before */
        if (zr == Z_OK && !made && ai == zs->avail_in) return NPZS__INF_BAD; /* no progress: cannot happen either */
        if (drop) {
            if (zr == Z_STREAM_END && j->zout < j->given) return NPZS__INF_BAD;
            continue;
        }
        j->given += made;
        io->took = io->in_len;
        io->made = made;
        io->back = 0;
        if (zr == Z_STREAM_END && p->data_in + io->took == p->lfh.h.csize) return NPZS__INF_END;
        if (zr == Z_STREAM_END) j->len = j->given;
        return NPZS__INF_OK;
    }
}

static int pre_any(npzs_parser *p, npzs__inf_io *io) { return p->inf.pre->z ? pre_zlib(p, io) : pre_run(p, io); }

/* Started as the parser's own back end would be (its memory is the same with the helper or
 * without). */
static const npzs__inflater pre_inflater = {zlib_start, pre_any, zlib_end};
static const npzs__inflater pre_fast_inflater = {fast_start, pre_any, fast_end};

/* The back end of a member: for one whose compressed size is known, ISA-L when built in and
 * asked for (NPZS_LENIENT_FAST_INFLATE), else the fast decoder, or zlib under NPZS_INFLATE_ZLIB;
 * zlib for the others (their input is not bounded: zlib stops at the stream's last byte). */
static const npzs__inflater *backend_for(const npzs_parser *p) {
    if (!p->lfh.h.known) return &zlib_inflater;
#ifdef NPZS_HAVE_ISAL
    if (p->lim.lenient & NPZS_LENIENT_FAST_INFLATE) return &isal_inflater;
#endif
    return p->lim.lenient & NPZS_INFLATE_ZLIB ? &zlib_inflater : &fast_inflater;
}

int npzs__fast_inflate_built(void) {
#ifdef NPZS_HAVE_ISAL
    return 1;
#else
    return 0;
#endif
}

/* ---- members -------------------------------------------------------------------------------- */

int npzs__inf_begin(npzs_parser *p) {
    npzs__inflate *f = &p->inf;
    /* the window holds what the member can produce (its declared size + 1 to see an overrun),
     * at most inflate_window: a small archive never allocates the whole window */
    const npzs__zlfh *h = &p->lfh.h;
    size_t need = p->lim.inflate_window;
    if (h->known && h->usize < need) need = (size_t)h->usize + 1;
    if (npzs__buffer(p, (void **)&p->kept.win, &p->kept.win_cap, need, p->rec_off, NPZS_R_NOMEM_WINDOW) < 0)
        return p->err;
    f->be = backend_for(p);
    f->pre = NULL;
    if (p->seam.take && h->known &&
        (f->be == &zlib_inflater || f->be == &fast_inflater)) { /* the one question (seam.h) */
        f->pre = p->seam.take(p->seam.ctx, p->data_start, h->csize);
        if (f->pre) f->be = f->be == &fast_inflater ? &pre_fast_inflater : &pre_inflater;
    }
    if (f->be->start(p) < 0) return p->err;
    f->win_len = f->win_pos = 0;
    f->made = p->kept.win;
    f->zin_pos = f->zin_len = 0;
    f->end = 0;
    f->bad = 0;
    return 0;
}

void npzs__inf_release(npzs_parser *p) {
    fast_end(p); /* and zlib's */
#ifdef NPZS_HAVE_ISAL
    isal_end(p);
#endif
    npzs__free(p, p->kept.win);
    npzs__free(p, p->kept.zin);
    p->kept.win = p->kept.zin = NULL;
    p->kept.win_cap = 0;
}

/* Small pushes of a deflated member.  zlib's cost per inflate() call (it copies each call's
 * output into its own window and leaves its fast loop near the end of the input) makes
 * 4 KiB calls ~15% slower than large ones, so when a push ends inside a member of known
 * compressed size with less than NPZS_ZIN_MIN bytes to inflate, the bytes are gathered in
 * zin and inflated together with the next pushes.  Gathered bytes are taken from the caller;
 * since they never extend past the member's compressed size and are inflated before anything
 * that follows, every event and every verdict is the one the large push gives (the one
 * exception, a stream that ends early, hands its leftover back: inf.orphan). */
#define NPZS_ZIN_SIZE (64u * 1024u)
#define NPZS_ZIN_MIN (32u * 1024u)

/* Gather up to k bytes of the push.  Returns 0 or < 0 (out of memory).  The gathered bytes are
 * topped up only while fewer than NPZS_ZIN_MIN wait, so a compaction (which moves fewer than
 * NPZS_ZIN_MIN bytes) happens only after NPZS_ZIN_SIZE - NPZS_ZIN_MIN bytes were inflated from
 * the buffer since the last one: the copying stays proportional to the input. */
static int zin_take(npzs_parser *p, npzs_in *in, size_t k) {
    npzs__inflate *f = &p->inf;
    if (!p->kept.zin) {
        p->kept.zin = npzs__alloc(p, NPZS_ZIN_SIZE);
        if (!p->kept.zin) return npzs__fail(p, NPZS_E_NOMEM, p->data_start, NPZS_R_NOMEM_ZIN);
    }
    if (f->zin_pos && k > NPZS_ZIN_SIZE - f->zin_len) { /* compact to make room */
        memmove(p->kept.zin, p->kept.zin + f->zin_pos, f->zin_len - f->zin_pos);
        f->zin_len -= f->zin_pos;
        f->zin_pos = 0;
    }
    if (k > NPZS_ZIN_SIZE - f->zin_len) k = NPZS_ZIN_SIZE - f->zin_len;
    memcpy(p->kept.zin + f->zin_len, (const uint8_t *)in->src + in->pos, k);
    f->zin_len += k;
    in->pos += k;
    return 0;
}

/* The window is empty: inflate more into it.  Returns NPZS__GO (the window has bytes, or the
 * stream's end or error was recorded in inf.end / inf.bad), NPZS__NEED or NPZS__ERROR. */
npzs__rc npzs__inf_fill(npzs_parser *p, npzs_in *in) {
    npzs__inflate *f = &p->inf;
    const npzs__zlfh *l = &p->lfh.h;
    npzs__pre *j = f->pre;
    if (j && !j->z && j->given == j->keep && j->keep < j->len) {
        /* the kept bytes are used: the rest at once, as its CRC, if the content machine takes it
         * as it would take the bytes (within every size and the total limit); else inflate the
         * member again (pre_zlib) */
        uint64_t n = j->len - j->given, room = p->lim.max_total_bytes - p->total_out;
        int fits = p->c.pos <= room && n <= room - p->c.pos &&
                   (!l->known || (p->c.pos <= l->usize && n <= l->usize - p->c.pos));
        if (fits && npzs__content_skip(p, n, j->crc_rest)) {
            j->given = j->len;
            j->keep = j->len;
            f->win_pos = f->win_len = 0;
            return NPZS__GO;
        }
        j->z = 1;
    }
    size_t avail = in ? in->size - in->pos : 0;
    /* output cap: what the content can take (+1 to see an overrun), the declared size (+1
     * likewise), the total limit; cap - 1 < x is written so that x + 1 cannot wrap (a limit of
     * 2^64 - 1 is "no limit") */
    uint64_t want = npzs__content_want(p);
    uint64_t cap = want == UINT64_MAX ? p->lim.inflate_window : want + 1;
    if (l->known) {
        uint64_t left = l->usize >= p->c.pos ? l->usize - p->c.pos : 0;
        if (cap - 1 > left) cap = left + 1;
    }
    uint64_t room = p->lim.max_total_bytes - p->total_out;
    if (p->c.pos <= room && cap - 1 > room - p->c.pos) cap = room - p->c.pos + 1;
    uint64_t any = cap; /* the cap but for the window's size */
    if (cap > p->kept.win_cap) cap = p->kept.win_cap;
    size_t zin = f->zin_len - f->zin_pos;
    uint64_t in_cap = avail;
    if (l->known && !f->pre) {
        uint64_t rest = l->csize - p->data_in - zin; /* member bytes not taken yet */
        if (in_cap > rest) in_cap = rest;
        if (!p->finished && zin + avail < NPZS_ZIN_MIN && rest > avail) { /* gather, wait */
            if (avail && zin_take(p, in, avail) < 0) return NPZS__ERROR;
            return NPZS__NEED;
        }
        if (zin && zin < NPZS_ZIN_MIN && in_cap) { /* top the gathered bytes up to the minimum */
            size_t k = NPZS_ZIN_MIN - zin;
            if (k > in_cap) k = (size_t)in_cap;
            if (zin_take(p, in, k) < 0) return NPZS__ERROR;
            zin = f->zin_len - f->zin_pos;
        }
    }
    npzs__inf_io io;
    if (zin) {
        io.in = p->kept.zin + f->zin_pos;
        io.in_len = zin;
    } else {
        if (l->known && in_cap > l->csize - p->data_in) in_cap = l->csize - p->data_in;
        io.in = in_cap ? (const uint8_t *)in->src + in->pos : NULL;
        io.in_len = (size_t)(in_cap > 0x40000000u ? 0x40000000u : in_cap);
    }
    io.ext = NULL;
    io.out = f->made = p->kept.win;
    io.out_len = (size_t)cap;
    /* the caller named the data's destination: inflate writes the array's bytes straight into
     * it, as many as the content still takes (the window is left for what comes after, where a
     * byte too many is seen) */
    const npzs__content *c = &p->c;
    if (c->out && c->state == NPZS_C_DATA && any > 1) {
        uint64_t d = any - 1 > 0x40000000u ? 0x40000000u : any - 1;
        io.out = f->made = c->out + c->data_len;
        io.out_len = (size_t)d;
    }
    int zr = f->be->run(p, &io);
    if (f->made != p->kept.win) p->c.out_direct += io.made;
    if (io.ext) f->made = (uint8_t *)(uintptr_t)io.ext;
    if (io.took) {
        if (zin) {
            f->zin_pos += io.took;
            if (f->zin_pos == f->zin_len) f->zin_pos = f->zin_len = 0;
        } else {
            in->pos += io.took;
        }
        p->data_in += io.took;
    }
    f->win_pos = 0;
    f->win_len = io.made;
    if (zr == NPZS__INF_END) {
        f->end = 1;
        if (io.back) { /* read past the stream's end: not the member's content, given back */
            p->data_in -= io.back;
            f->orphan += io.back;
        }
        /* gathered bytes after the stream's end: the member is about to be rejected (its
         * compressed size is not reached); they are given back so that the input count is the
         * one a large push gives */
        f->orphan += f->zin_len - f->zin_pos;
        f->zin_pos = f->zin_len = 0;
    } else if (zr == NPZS__INF_NOMEM) {
        return npzs__error(p, NPZS_E_NOMEM, p->data_start, NPZS_R_NOMEM_INFLATE);
    } else if (zr == NPZS__INF_BAD) {
        f->bad = 1; /* raised once the window's bytes are used */
    } else if (!io.took && !io.made) {
        /* no progress: inflate needs input */
        if (l->known && p->data_in == l->csize)
            return npzs__error(p, NPZS_E_SIZE_MISMATCH, npzs__here(p), NPZS_R_DEFLATE_SHORT);
        return npzs__need(p);
    }
    return NPZS__GO;
}
