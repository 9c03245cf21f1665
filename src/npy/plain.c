/*
 * plain.c -- a plain .npy file, and the states every input starts and ends in (the top-level
 * table of states.h; the ZIP states are zip/zip.c's).  START reads the first byte, which says
 * .npy or .npz; a .npy's bytes then feed the content machine (content.c) straight from the input
 * (NPY_CONTENT), its MEMBER_END follows (NPY_MEMBER_END), and after it only the end of input, the
 * next array of a sequence or lenient trailing bytes (NPY_TAIL).  Both formats end in END_EMIT
 * (the verdict), DONE and FAILED.  Each is a step function the dispatcher calls (npzs.c, whose
 * contract they keep).
 */
#include "../internal.h"

/* ---- every input's first state ---------------------------------------------------------------- */

/* START: the first byte decides the format. */
npzs__rc npzs__st_start(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (!in || in->pos == in->size) {
        if (!p->finished) return NPZS__NEED;
        return npzs__error(p, NPZS_E_TRUNCATED, 0, NPZS_R_TRUNC_EMPTY);
    }
    uint8_t b = ((const uint8_t *)in->src)[in->pos];
    if (b == 0x93) {
        p->format = NPZS_FORMAT_NPY;
        if (npzs__pol_start(p) < 0) return NPZS__ERROR;
        npzs__content_start(p, 1, 1, 0, 0);
        p->state = NPZS_S_NPY_CONTENT;
        p->cur = 0;
        p->members = 1;
        if (!npzs__wants(p, NPZS_EV_MEMBER_BEGIN)) return NPZS__GO;
        *ev = (npzs_event){.type = NPZS_EV_MEMBER_BEGIN, .member = 0, .offset = 0, .method = NPZS_METHOD_STORED};
        return NPZS__EVENT;
    }
    if (b == 'P') {
        p->format = NPZS_FORMAT_NPZ;
        if (npzs__pol_start(p) < 0) return NPZS__ERROR;
        p->state = NPZS_S_ZIP_SIG;
        return NPZS__GO;
    }
    return npzs__error(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_FIRST);
}

/* ---- the plain .npy file: the content machine fed straight from the input ------------------ */

/* NPY_CONTENT: the input is the content. */
npzs__rc npzs__npy_content(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (p->c.state == NPZS_C_DONE) {
        p->state = NPZS_S_NPY_MEMBER_END;
        return NPZS__GO;
    }
    size_t avail = in ? in->size - in->pos : 0;
    if (!avail) {
        if (!p->finished) return NPZS__NEED;
        npzs__rc rc = npzs__content_end(p, ev);
        if (rc == NPZS__EVENT) ev->member = p->cur;
        return rc;
    }
    size_t used = 0;
    npzs__rc rc = npzs__content_feed(p, (const uint8_t *)in->src + in->pos, avail, 1, &used, ev);
    in->pos += used;
    if (rc == NPZS__EVENT) ev->member = p->cur;
    /* not taken: after the array, the NPY states' (its MEMBER_END, then a sequence's next array,
     * lenient trailing bytes, or trailing data) */
    return rc == NPZS__NEED || rc == NPZS__NOT_TAKEN ? NPZS__GO : rc;
}

/* NPY_MEMBER_END: emit MEMBER_END for the array. */
npzs__rc npzs__npy_member_end(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)in;
    p->total_out += p->c.head_len + p->c.data_len;
    p->state = NPZS_S_NPY_TAIL;
    uint64_t size = p->c.head_len + p->c.data_len;
    if (!npzs__wants(p, NPZS_EV_MEMBER_END)) return NPZS__GO;
    *ev = (npzs_event){.type = NPZS_EV_MEMBER_END,
                       .member = p->cur,
                       .offset = npzs__here(p),
                       .kind = NPZS_KIND_ARRAY,
                       .size = size,
                       .csize = size,
                       .crc32 = npzs__content_crc(p),
                       .data_crc32 = p->c.crc_data,
                       .data_size = p->c.data_len,
                       .array = &p->c.arr.info,
                       .sniff = p->c.sniff,
                       .sha256 = p->c.digest_ok ? p->c.digest : NULL};
    return NPZS__EVENT;
}

/* NPY_TAIL: the array is complete; only the end of input may follow (or, with
 * NPZS_LENIENT_NPY_TRAILING, any bytes, consumed and never read). */
npzs__rc npzs__npy_tail(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    size_t avail = in ? in->size - in->pos : 0;
    if (avail && p->sequence) { /* the next array of a sequence (npzs_npy_sequence) */
        if (p->members >= p->lim.max_members) {
            npzs__limit_need(p, (uint64_t)p->members + 1);
            return npzs__error(p, NPZS_E_LIMIT, npzs__here(p), NPZS_R_LIMIT_MEMBERS);
        }
        uint64_t at = npzs__here(p);
        npzs__content_start(p, 1, 1, 0, at);
        p->cur = p->members++;
        p->state = NPZS_S_NPY_CONTENT;
        if (!npzs__wants(p, NPZS_EV_MEMBER_BEGIN)) return NPZS__GO;
        *ev = (npzs_event){.type = NPZS_EV_MEMBER_BEGIN, .member = p->cur, .offset = at, .method = NPZS_METHOD_STORED};
        return NPZS__EVENT;
    }
    if (avail && (p->lim.lenient & NPZS_LENIENT_NPY_TRAILING)) {
        in->pos += avail;
        p->ignored += avail;
        avail = 0;
    }
    if (avail) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), NPZS_R_NPY_TRAIL);
    if (!p->finished) return NPZS__NEED;
    p->state = NPZS_S_END_EMIT;
    return NPZS__GO;
}

/* ---- every input's last states ---------------------------------------------------------------- */

static int trail_rule(const npzs_parser *p) {
    return p->format == NPZS_FORMAT_NPY ? NPZS_R_NPY_TRAIL_AFTER_END : NPZS_R_ZIP_TRAIL_AFTER_END;
}

/* END_EMIT: the verdict. */
npzs__rc npzs__st_end_emit(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    if (in && in->pos < in->size) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), trail_rule(p));
    p->state = NPZS_S_DONE;
    *ev = (npzs_event){.type = NPZS_EV_END, .offset = npzs__here(p), .format = p->format, .members = p->members};
    return NPZS__EVENT;
}

/* DONE: END was delivered; only the end of input may follow. */
npzs__rc npzs__st_done(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)ev;
    if (in && in->pos < in->size) return npzs__error(p, NPZS_E_TRAILING_DATA, npzs__here(p), trail_rule(p));
    return NPZS__DONE;
}

/* FAILED: the error stays. */
npzs__rc npzs__st_failed(npzs_parser *p, npzs_in *in, npzs_event *ev) {
    (void)p;
    (void)in;
    (void)ev;
    return NPZS__ERROR;
}
