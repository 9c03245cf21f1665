/*
 * content.c -- the member content machine: a .npy's preamble, header and data, or a blob (a
 * member that is not a .npy), fed content bytes by the plain .npy states (plain.c) or by the ZIP
 * member states (zip/zip.c).  Its states are the content states of states.h.
 */
#include <stdlib.h>
#include <string.h>

#include "../internal.h"
#include "../core/buffer.h"

static const uint8_t npy_magic[6] = {0x93, 'N', 'U', 'M', 'P', 'Y'};

/* ------------------------------------------------------------------------ */
/* content machine                                                          */
/* ------------------------------------------------------------------------ */

void npzs__content_start(npzs_parser *p, int top, int direct, int must_be_npy, uint64_t base) {
    npzs__content *c = &p->c;
    c->state = top ? NPZS_C_PRE : NPZS_C_SNIFF;
    c->top = top;
    c->direct = direct;
    c->must_be_npy = must_be_npy;
    c->base = base;
    c->pos = 0;
    c->pre_len = 0;
    c->pre_need = top ? 8 : 6;
    c->hdr_len = c->hlen = 0;
    c->kind = top ? NPZS_KIND_ARRAY : NPZS_KIND_BLOB;
    c->data_left = 0;
    c->out = NULL;
    c->crc_head = c->crc_data = 0;
    c->head_len = c->data_len = 0;
    c->hmemo_miss = 0; /* (c->arr.info is written whole by the header that comes, if any) */
    c->vc.on = 0;
    c->checks = 0;
    c->digest_ok = 0;
    c->pend_rule = 0;
    c->sniff = top ? NPZS_SNIFF_NPY : NPZS_SNIFF_NONE;
    c->hashing = p->hashes || npzs__policy_hashes(p) || (p->pol.spec && p->pol.spec->has_sha);
    if (c->hashing) npzs__sha256_init(c->sha);
}

/* The blob's first bytes are staged (all of them when it ended): its kind, and the policy on it. */
static int blob_sniffed(npzs_parser *p, int ended) {
    npzs__content *c = &p->c;
    c->sniff = npzs__sniff(c->pre, c->pre_len, ended);
    return npzs__pol_sniffed(p, c->sniff);
}

/* The content is a blob, found at its byte coff (not the magic there, or the end). */
static int blob_found(npzs_parser *p, uint64_t coff) {
    npzs__content *c = &p->c;
    if (c->must_be_npy) return npzs__fail(p, NPZS_E_ZIP_UNSUPPORTED, p->rec_off, NPZS_R_DD_BLOB);
    c->kind = NPZS_KIND_BLOB;
    if (npzs__pol_blob(p, coff) < 0) return p->err;
    c->checks = p->pol.spec && p->pol.spec->max_bytes != UINT64_MAX;
    return 0;
}

void npzs__content_release(npzs_parser *p) {
    npzs__free(p, p->kept.hdr);
    p->kept.hdr = NULL;
    p->kept.hdr_cap = 0;
    npzs__hdr x = npzs__hdr_of(p);
    npzs__header_release(&x);
}

uint64_t npzs__content_want(const npzs_parser *p) {
    const npzs__content *c = &p->c;
    switch (c->state) {
    case NPZS_C_DATA: return c->data_left;
    case NPZS_C_DONE: return 0;
    default: return UINT64_MAX;
    }
}

int npzs__content_skip(npzs_parser *p, uint64_t n, uint32_t crc) {
    npzs__content *c = &p->c;
    unsigned ev = c->state == NPZS_C_BLOB ? NPZS_EV_BLOB : NPZS_EV_DATA;
    if (c->out || c->checks || c->hashing || ((p->ev_user >> ev) & 1u) ||
        !(c->state == NPZS_C_BLOB || (c->state == NPZS_C_DATA && n <= c->data_left)))
        return 0;
    c->crc_data = npzs__crc32_combine(c->crc_data, crc, n);
    c->data_len += n;
    c->pos += n;
    if (c->state == NPZS_C_DATA && !(c->data_left -= n)) c->state = NPZS_C_DONE;
    return 1;
}

/* CRC(header || data) = CRC(header) shifted over the data's length, xor CRC(data): the shift, the
 * costly part, is kept for the next member, which repeats it when its header and size do. */
uint32_t npzs__content_crc(npzs_parser *p) {
    npzs__content *c = &p->c;
    if (c->kind != NPZS_KIND_ARRAY) return c->crc_data;
    if (!c->shift_ok || c->shift_head != c->crc_head || c->shift_len != c->data_len) {
        c->shift_crc = npzs__crc32_combine(c->crc_head, 0, c->data_len);
        c->shift_head = c->crc_head;
        c->shift_len = c->data_len;
        c->shift_ok = 1;
    }
    return c->shift_crc ^ c->crc_data;
}

npzs__rc npzs__content_trailing(npzs_parser *p) {
    return npzs__error_content(p, NPZS_E_TRAILING_DATA, p->c.pos, NPZS_R_ZIP_MEMBER_TRAIL);
}

/* Preamble complete up to pre_len: check it and decide what comes next. */
static int preamble(npzs_parser *p) {
    npzs__content *c = &p->c;
    if (c->pre_len == 8) { /* the magic was checked byte by byte as it arrived */
        if (!((c->pre[6] == 1 || c->pre[6] == 2 || c->pre[6] == 3) && c->pre[7] == 0))
            return npzs__fail_content(p, NPZS_E_BAD_VERSION, 6, NPZS_R_NPY_VERSION);
        c->pre_need = c->pre[6] == 1 ? 10 : 12;
        return 0;
    }
    uint64_t hlen = c->pre[6] == 1 ? npzs__le16(c->pre + 8) : npzs__le32(c->pre + 8);
    uint64_t maxb = p->lim.max_header_size;
    if (c->pre[6] == 3) maxb = maxb > UINT64_MAX / 4 ? UINT64_MAX : maxb * 4; /* chars counted after decoding */
    if (hlen > maxb) { /* max_header_size counts characters: a v3 header's bytes hold at least a quarter as many */
        npzs__limit_need(p, c->pre[6] == 3 ? hlen / 4 + (hlen % 4 != 0) : hlen);
        return npzs__fail_content(p, NPZS_E_HEADER_TOO_LARGE, 8, NPZS_R_HDR_TOO_LARGE_BYTES);
    }
    c->hlen = (size_t)hlen;
    /* hdr holds the preamble and the text: the member's raw bytes up to its data */
    if (npzs__buffer(p, (void **)&p->kept.hdr, &p->kept.hdr_cap, c->pre_len + c->hlen + 1, npzs__here(p),
                     NPZS_R_NOMEM_HEADER) < 0)
        return p->err;
    memcpy(p->kept.hdr, c->pre, c->pre_len);
    c->hdr_len = 0;
    c->state = NPZS_C_HDR;
    return 0;
}

#ifdef NPZS_TESTING
void npzs__header_memo(npzs_parser *p, int on) {
    p->c.hmemo_off = !on;
    p->c.hmemo_len = 0;
}

uint64_t npzs__header_memo_hits(const npzs_parser *p) { return p->c.hmemo_hits; }
#endif

/* The header is staged: parse it, or take the last one's results when its bytes (preamble
 * and text) repeat it exactly (arrays of one shape and dtype: where headers cost most). */
static int header_parse(npzs_parser *p) {
    npzs__content *c = &p->c;
    size_t n = c->pre_len + c->hlen;
    if (c->hmemo_len && !c->hmemo_miss && n == c->hmemo_len && memcmp(p->kept.hdr, c->hmemo, n) == 0) {
        c->arr.info = c->hmemo_info;
        c->crc_head = c->hmemo_crc;
        c->hmemo_hits++;
        return 0;
    }
    c->hmemo_len = 0; /* the parse writes where the memo points */
    memset(&c->arr.info, 0, sizeof c->arr.info);
    c->arr.info.version_major = c->pre[6];
    c->crc_head = npzs__crc32(0, p->kept.hdr, n);
    npzs__hdr x = npzs__hdr_of(p);
    if (npzs__header_pools(&x, c->pre_len) < 0) return p->err;
    if (npzs__parse_header(&x, p->kept.hdr + c->pre_len, c->hlen, c->pre[6] == 3, c->pre_len) < 0) return p->err;
    if (!c->hmemo_off && !c->arr.info.structured && n <= sizeof c->hmemo) {
        memcpy(c->hmemo, p->kept.hdr, n);
        c->hmemo_len = n;
        c->hmemo_crc = c->crc_head;
        c->hmemo_info = c->arr.info;
    }
    return 0;
}

/* The header's results are in c->arr.info, its bytes (preamble and text) at `bytes`. */
static NPZS__INLINE int header_done(npzs_parser *p, const uint8_t *bytes) {
    npzs__content *c = &p->c;
    c->arr.info.header = bytes;
    c->arr.info.header_size = c->pre_len + c->hlen;
    c->head_len = c->pre_len + c->hlen;
    c->arr.info.header_len = c->head_len;
    c->data_left = c->arr.info.nbytes;
    /* total output limit, checked as soon as the size is declared */
    uint64_t need = c->head_len + c->arr.info.nbytes, cap = npzs__total_cap(p);
    if (need > cap || p->total_out > cap - need) {
        npzs__limit_need(p, need > UINT64_MAX - p->total_out ? UINT64_MAX : p->total_out + need);
        return npzs__fail_content(p, npzs__total_code(p), c->pre_len, npzs__total_rule(p, NPZS_R_LIMIT_TOTAL_ARRAY));
    }
    c->sniff = NPZS_SNIFF_NPY;
    if (npzs__pol_header(p) < 0) return p->err;
    c->checks = c->vc.on;
    if (c->hashing && c->arr.info.nbytes == 0) { /* no data: the digest is known now */
        npzs__sha256_final(c->sha, c->digest);
        c->digest_ok = 1;
        if (npzs__pol_digest(p, c->head_len, 0) < 0) return p->err;
    }
    c->state = NPZS_C_HEADER_EVENT;
    return 0;
}

static int header_complete(npzs_parser *p) {
    if (header_parse(p) < 0) return p->err;
    return header_done(p, p->kept.hdr);
}

/* A member's content starts with the bytes of the memo, all in this buffer: the states below
 * would stage them, check the magic, version and length they already passed, and take the
 * memo's results (header_parse); those are taken at once, the bytes read where they are. */
static int header_memo_whole(npzs_parser *p) {
    npzs__content *c = &p->c;
    size_t n = c->hmemo_len;
    c->pre_len = c->hmemo[6] == 1 ? 10 : 12; /* (c->pre, the staging, is not read for an array) */
    c->hlen = c->hdr_len = n - c->pre_len;
    c->pos += n;
    c->kind = NPZS_KIND_ARRAY;
    c->arr.info = c->hmemo_info;
    c->crc_head = c->hmemo_crc;
    c->hmemo_hits++;
    NPZS_CVISIT(p, NPZS_C_PRE);
    NPZS_CVISIT(p, NPZS_C_HDR);
    return header_done(p, c->hmemo);
}

/* A DATA or BLOB chunk of *n content bytes at buf: the policy's checks (which may cut it after
 * a failing element, *n then its new length: the error comes after the event, npzs__pol_defer),
 * the CRC, the hash, the counts, and the event (NPZS__EVENT), or, when the caller does not want
 * it, nothing more (NPZS__GO: the error of a cut chunk then comes at once); NPZS__ERROR when the
 * chunk fails at its first byte (no byte of it goes out), or is cut and not wanted. */
static NPZS__INLINE npzs__rc chunk(npzs_parser *p, npzs__content *c, npzs_event *ev, npzs_event_type type,
                                   const uint8_t *buf, size_t *n, int zero_copy) {
    int rule = 0, emit = npzs__wants(p, type);
    uint64_t bad = 0;
    size_t len = *n;
    if (c->checks) {
        if (type == NPZS_EV_DATA) {
            size_t ok = npzs__values_scan(&c->vc, buf, len, c->data_len, &bad, &rule);
            if (rule) {
                len = ok;
                bad += c->head_len; /* a content offset */
            }
        } else {
            size_t ok = npzs__pol_blob_room(p, c->data_len, len);
            if (ok < len) {
                len = ok;
                bad = c->data_len + ok;
                rule = NPZS_R_POLICY_MEMBER_BYTES;
            }
        }
        if (rule && (len == 0 || !emit)) {
            npzs__pol_value_fail(p, rule, bad);
            return NPZS__ERROR;
        }
    }
    if (emit)
        *ev = (npzs_event){.type = type,
                           .offset = c->direct ? c->base + c->pos : c->base,
                           .data = buf,
                           .len = len,
                           .pos = c->data_len,
                           .zero_copy = zero_copy};
    c->crc_data = npzs__crc32(c->crc_data, buf, len);
    if (c->hashing) npzs__sha256_update(c->sha, buf, len);
    c->data_len += len;
    c->pos += len;
    *n = len;
    if (rule) npzs__pol_defer(p, bad, rule);
    return emit ? NPZS__EVENT : NPZS__GO;
}

/* The array's last data byte was taken (emitted: in a chunk that goes out as an event). */
static int data_done(npzs_parser *p, int emitted) {
    npzs__content *c = &p->c;
    c->state = NPZS_C_DONE;
    if (!c->hashing) return 0;
    npzs__sha256_final(c->sha, c->digest);
    c->digest_ok = 1;
    return c->pend_rule ? 0 : npzs__pol_digest(p, c->pos, emitted);
}

npzs__rc npzs__content_feed(npzs_parser *p, const uint8_t *buf, size_t len, int zero_copy, size_t *used,
                            npzs_event *ev) {
    npzs__content *c = &p->c;
    size_t i = 0;
    for (;;) {
        NPZS_CVISIT(p, c->state);
        switch (c->state) {
        case NPZS_C_SNIFF:
            if (c->pre_len == 0 && c->hmemo_len && len - i >= c->hmemo_len) {
                if (memcmp(buf + i, c->hmemo, c->hmemo_len) == 0) {
                    if (header_memo_whole(p) < 0) return NPZS__ERROR;
                    i += c->hmemo_len;
                    continue; /* NPZS_C_HEADER_EVENT */
                }
                c->hmemo_miss = 1; /* these bytes, staged, will not match it either */
            }
            if (c->pre_len == 0 && len - i >= 8 && memcmp(buf + i, npy_magic, 6) == 0) {
                /* the whole magic and version at once (the loops below take them byte by byte) */
                memcpy(c->pre, buf + i, 8);
                c->pre_len = 8;
                i += 8;
                c->pos += 8;
                c->kind = NPZS_KIND_ARRAY;
                c->pre_need = 8;
                if (preamble(p) < 0) return NPZS__ERROR;
                size_t more = c->pre_need - 8; /* the header length: at once too when it is here */
                if (len - i >= more) {
                    memcpy(c->pre + 8, buf + i, more);
                    c->pre_len += more;
                    i += more;
                    c->pos += more;
                    if (preamble(p) < 0) return NPZS__ERROR;
                    continue; /* NPZS_C_HDR */
                }
                c->state = NPZS_C_PRE;
                continue;
            }
            while (i < len && c->pre_len < 6) {
                uint8_t b = buf[i];
                if (b != npy_magic[c->pre_len]) {
                    /* not npy: a blob, whose first bytes are staged for its sniff, then emitted */
                    if (blob_found(p, c->pre_len) < 0) return NPZS__ERROR;
                    c->state = NPZS_C_BLOB_SNIFF;
                    break;
                }
                c->pre[c->pre_len++] = b;
                i++;
                c->pos++;
            }
            if (c->state != NPZS_C_SNIFF) continue;
            if (c->pre_len < 6) goto need;
            c->kind = NPZS_KIND_ARRAY;
            c->pre_need = 8;
            c->state = NPZS_C_PRE;
            continue;
        case NPZS_C_PRE:
            while (c->pre_len < c->pre_need) {
                if (i == len) goto need;
                /* reject a wrong magic at its first byte, not after 8 */
                if (c->pre_len < 6 && buf[i] != npy_magic[c->pre_len])
                    return npzs__error_content(p, NPZS_E_BAD_MAGIC, 0, NPZS_R_MAGIC_NPY);
                c->pre[c->pre_len++] = buf[i++];
                c->pos++;
                if (c->pre_len == 8 || c->pre_len == c->pre_need) {
                    if (preamble(p) < 0) return NPZS__ERROR;
                    if (c->state == NPZS_C_HDR) break;
                }
            }
            continue;
        case NPZS_C_HDR: {
            size_t n = c->hlen - c->hdr_len;
            if (n > len - i) n = len - i;
            memcpy(p->kept.hdr + c->pre_len + c->hdr_len, buf + i, n);
            c->hdr_len += n;
            i += n;
            c->pos += n;
            if (c->hdr_len < c->hlen) goto need;
            if (header_complete(p) < 0) return NPZS__ERROR;
            continue;
        }
        case NPZS_C_HEADER_EVENT:
            c->state = c->data_left ? NPZS_C_DATA : NPZS_C_DONE;
            if (!npzs__wants(p, NPZS_EV_HEADER)) continue;
            *ev = (npzs_event){.type = NPZS_EV_HEADER, .offset = c->base, .array = &c->arr.info};
            *used = i;
            return NPZS__EVENT;
        case NPZS_C_DATA: {
            if (i == len) goto need;
            size_t n = len - i;
            if (n > c->data_left) n = (size_t)c->data_left;
            const uint8_t *at = buf + i;
            int out = 0;
            if (c->out) { /* into the caller's destination, unless inflate wrote them there */
                uint8_t *to = c->out + c->data_len;
                if (at != to && n > NPZS_COPY_SLICE) n = NPZS_COPY_SLICE;
                if (at != to) memcpy(to, at, n);
                at = to;
                out = 1;
            }
            npzs__rc rc = chunk(p, c, ev, NPZS_EV_DATA, at, &n, out ? 0 : zero_copy);
            if (rc == NPZS__ERROR) return NPZS__ERROR;
            c->data_left -= n;
            i += n;
            if (!c->data_left && data_done(p, rc == NPZS__EVENT) < 0) return NPZS__ERROR;
            if (rc == NPZS__GO) continue; /* not asked for: on to what follows */
            *used = i;
            return NPZS__EVENT;
        }
        case NPZS_C_DONE:
            if (i == len) goto need;
            *used = i; /* the array is whole: the bytes from i on are not its (the caller says what
                          they are: npzs__content_trailing) */
            return NPZS__NOT_TAKEN;
        case NPZS_C_BLOB_SNIFF: /* a blob's first bytes, staged */
            while (i < len && c->pre_len < NPZS_SNIFF_BYTES) {
                c->pre[c->pre_len++] = buf[i++];
                c->pos++;
            }
            if (c->pre_len < NPZS_SNIFF_BYTES) goto need;
            if (blob_sniffed(p, 0) < 0) return NPZS__ERROR;
            c->state = NPZS_C_BLOB_STAGED;
            continue;
        case NPZS_C_BLOB_STAGED: { /* the sniffed bytes, counted in pos already: the blob's first chunk */
            c->state = NPZS_C_BLOB;
            c->pos -= c->pre_len;
            size_t n = c->pre_len;
            npzs__rc rc = chunk(p, c, ev, NPZS_EV_BLOB, c->pre, &n, 0);
            if (rc == NPZS__ERROR) return NPZS__ERROR;
            if (n < c->pre_len) c->pos += c->pre_len - n; /* cut by max_bytes: failing at the next call */
            if (rc == NPZS__GO) continue;
            *used = i;
            return NPZS__EVENT;
        }
        case NPZS_C_BLOB: {
            if (i == len) goto need;
            size_t n = len - i;
            npzs__rc rc = chunk(p, c, ev, NPZS_EV_BLOB, buf + i, &n, zero_copy);
            if (rc == NPZS__ERROR) return NPZS__ERROR;
            i += n;
            if (rc == NPZS__GO) continue;
            *used = i;
            return NPZS__EVENT;
        }
        default: return npzs__error(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_CONTENT_STATE);
        }
    }
need:
    *used = len;
    return NPZS__NEED;
}

npzs__rc npzs__content_end(npzs_parser *p, npzs_event *ev) {
    npzs__content *c = &p->c;
    for (;;) {
        switch (c->state) {
        case NPZS_C_SNIFF: /* the content ended inside the magic (or at once): a blob */
            if (blob_found(p, c->pre_len) < 0) return NPZS__ERROR;
            c->state = NPZS_C_BLOB_SNIFF;
            continue;
        case NPZS_C_BLOB_SNIFF:
            if (blob_sniffed(p, 1) < 0) return NPZS__ERROR;
            c->state = c->pre_len ? NPZS_C_BLOB_STAGED : NPZS_C_BLOB;
            if (!c->pre_len) continue;
            break;
        case NPZS_C_BLOB: /* the blob's end: its digest */
            c->state = NPZS_C_DONE;
            if (!c->hashing) return NPZS__GO;
            npzs__sha256_final(c->sha, c->digest);
            c->digest_ok = 1;
            return npzs__pol_digest(p, c->pos, 0) < 0 ? NPZS__ERROR : NPZS__GO;
        case NPZS_C_PRE:
        case NPZS_C_HDR:
        case NPZS_C_DATA:
            if (c->top) return npzs__error(p, NPZS_E_TRUNCATED, npzs__here(p), NPZS_R_TRUNC_ARRAY);
            return npzs__error(p, NPZS_E_SIZE_MISMATCH, npzs__here(p), NPZS_R_ZIP_CONTENT_SHORT);
        case NPZS_C_HEADER_EVENT:
        case NPZS_C_BLOB_STAGED: break;
        default: return NPZS__GO;
        }
        /* an event is due (the staged bytes of a blob, or an array's HEADER): the end is looked at
         * again once it went out */
        size_t used;
        npzs__rc rc = npzs__content_feed(p, NULL, 0, 0, &used, ev);
        if (rc != NPZS__NEED) return rc;
    }
}

int npzs__content_at_data(const npzs_parser *p) {
    const npzs__content *c = &p->c;
    int inside = p->state == NPZS_S_NPY_CONTENT || p->state == NPZS_S_ZIP_STORED || p->state == NPZS_S_ZIP_DEFLATED;
    int before_data = c->state == NPZS_C_DATA || (c->state == NPZS_C_DONE && c->arr.info.nbytes == 0);
    return inside && c->kind == NPZS_KIND_ARRAY && before_data && c->data_len == 0;
}

NPZS__API int npzs_data_into(npzs_parser *p, void *dst, size_t cap) {
    if (!p) return NPZS_E_BAD_CALL;
    if (p->err) return p->err;
    npzs__content *c = &p->c;
    if (!npzs__content_at_data(p) || !dst || cap < c->arr.info.nbytes)
        return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), NPZS_R_CALL_DATA_INTO);
    if (c->arr.info.nbytes) c->out = dst; /* an empty array has nothing to write */
    return 0;
}
