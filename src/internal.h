/* internal.h -- the parser's layout, shared by the parser's sources (not installed).  The
 * parallel helper (par.c, pool.c, scout.c, parbuf.c) does not include it: it sees the parser
 * through seam.h (par/seam.c, the parser's side) and the public API only; nor do the sources that
 * see the parser as a handle for its services (view/: zip/names.c, npy/npyhdr.c, core/buffer.c). */
#ifndef NPZS_INTERNAL_H
#define NPZS_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <zlib.h>

#include "npzstream.h"
#include "base/base.h"
#include "base/rules.h"
#include "base/seam.h"
#include "base/states.h"
#include "bytes/bytes.h"
#include "policy/policy.h"
#include "view/handle.h"
#include "view/header.h"
#include "view/members.h"
#include "zrec/zrec.h"

#define NPZS_NO_OFFSET UINT64_MAX

/* A stored array's bytes copied into the caller's destination (npzs_data_into) at most this many
 * at a step: the CRC-32 (and a policy's checks, a hash) then read them from the cache they were
 * just written to, not from memory again (64 MiB stored: 8.9-10.1 ms against 9.6-11.9, bench/
 * README.md, "one member and eight").  Inflated bytes are not cut so: in the same trial the
 * decoder's calls cost what the pass saves there. */
#define NPZS_COPY_SLICE (256u << 10)

/* A block of recorded member names (they are compared with the central directory's). */
typedef struct npzs__block {
    struct npzs__block *next;
    size_t used, size;
    uint8_t data[];
} npzs__block;

/* Member content: the .npy machine, or a blob. */
typedef struct npzs__content {
    int state;       /* enum npzs_cstate */
    int top;         /* 1: plain .npy file (truncation is "truncated", no sniffing) */
    int direct;      /* 1: content bytes are input bytes (stored), offsets map 1:1 */
    int must_be_npy; /* stored + data descriptor: a blob cannot be delimited */
    uint64_t base;   /* direct: input offset of content byte 0; else member data start */
    uint64_t pos;    /* content bytes consumed */
    uint8_t pre[16]; /* magic, version, header length */
    size_t pre_len, pre_need;
    size_t hdr_len, hlen; /* the header text staged (kept.hdr), its declared length */
    npzs_kind kind;
    uint64_t data_left;
    uint8_t *out;                /* npzs_data_into: the caller's destination of the data (NULL: none) */
    uint64_t out_direct;         /* data bytes inflated straight into it (for tests) */
    uint32_t crc_head, crc_data; /* CRC of the npy preamble+header, of the data */
    uint64_t head_len, data_len;
    /* the last member CRC's first part: crc_head run over data_len zero bytes (npzs__content_crc;
     * arrays of one header and size repeat it) */
    uint32_t shift_head, shift_crc;
    uint64_t shift_len;
    int shift_ok;
    npzs__harray arr; /* the array its header gives (the header parser's: view/header.h) */
    /* the last header parsed (its preamble and text, of at most 268 bytes), if it is not
     * structured: what the parse set and the CRC-32 of those bytes, valid while the shape, dtype
     * and scratch it points into are untouched (content.c: forgotten before any other parse) */
    uint8_t hmemo[268];
    size_t hmemo_len; /* 0: none */
    uint32_t hmemo_crc;
    int hmemo_off;       /* never kept (tests: npzs__header_memo) */
    int hmemo_miss;      /* this member's header, whole in a buffer, was not the memo's */
    uint64_t hmemo_hits; /* headers taken from it (tests) */
    npzs_array_info hmemo_info;
    /* a policy's checks and the content hash (policy/, bytes/sha256.c) */
    npzs__vcheck vc; /* the array's values (finite, range) */
    int checks;      /* vc.on, or a blob's bytes are capped: chunks are looked at */
    int hashing;     /* SHA-256 of the data (or blob) as it streams */
    int digest_ok;   /* digest holds the finished hash */
    int pend_rule;   /* a violation in the chunk just emitted: the next call fails with it */
    uint64_t pend_coff;
    int sniff; /* npzs_sniff, once known */
    uint64_t sha[NPZS_SHA_CTX_WORDS];
    uint8_t digest[32];
} npzs__content;

/* ---- the parser's parts ---- */

/* The local header being read. */
typedef struct npzs__lfh {
    npzs__zlfh h;
    int name_ready; /* its name is staged (for error messages) */
} npzs__lfh;

/* The end of an archive: the directory's extent, the end records parsed, and the directory
 * region's last bytes for zipfile's end-record search (zip.c, zlocate.c). */
typedef struct npzs__end {
    uint64_t cd_start, cd_end;
    uint32_t cd_count; /* directory entries read */
    int have_z64, have_loc;
    uint64_t z64_off, loc_off, eocd_off;
    uint16_t comment_len;
    uint32_t comment_sig; /* rolling window over the archive comment */
    uint64_t tail_len;    /* bytes of the region seen (kept.tail); the region starts at cd_start */
    int tail_on;
} npzs__end;

/* Inflate (inflate.c): one member's state; its buffers are the parser's kept ones. */
typedef struct npzs__inflate {
    size_t win_len, win_pos;         /* kept.win[win_pos, win_len): made, not yet given */
    uint8_t *made;                   /* where the bytes [win_pos, win_len) are: kept.win, or the caller's
                                   destination (npzs_data_into), or a helper's output */
    size_t zin_pos, zin_len;         /* kept.zin[zin_pos, zin_len): taken from the caller, not yet inflated */
    int end;                         /* the deflate stream ended */
    int bad;                         /* invalid data, raised once the window is used */
    uint64_t orphan;                 /* gathered bytes after a stream's early end: handed back */
    const struct npzs__inflater *be; /* the back end of the current member (inflate.c) */
    npzs__pre *pre;                  /* the member's output, inflated ahead (seam.h), or NULL */
} npzs__inflate;

typedef struct npzs__inf_io {
    const uint8_t *in;
    size_t in_len;
    uint8_t *out;
    size_t out_len;
    size_t took, made;
    size_t back;        /* NPZS__INF_END: bytes taken (in this call or earlier ones) that lie past the
                    stream's end (a back end that reads ahead), which the caller gives back */
    const uint8_t *ext; /* out was the window, and the made bytes are here instead (no copy) */
} npzs__inf_io;
enum { NPZS__INF_OK, NPZS__INF_END, NPZS__INF_BAD, NPZS__INF_NOMEM };

/* The buffers a parser keeps from one input to the next (npzs_reset keeps them, not what they
 * hold), each grown to the largest need yet and released by npzs_free. */
typedef struct npzs__kept {
    /* content.c: the staged header (+1 for a NUL); npyhdr.c: its scratch, pools and published
     * tree (view/header.h) */
    uint8_t *hdr;
    size_t hdr_cap;
    npzs__hkept h;
    /* inflate.c: zlib's state (it points at itself: never moved), the fast decoder's
     * (fastinf.c), ISA-L's, the output window (up to inflate_window bytes), the gathering buffer
     * of small pushes */
    z_stream zs;
    int zs_init;
    struct npzs__fastinf *fi;
    void *isal;
    uint8_t *win, *zin;
    size_t win_cap;
    /* zip.c: the staging of names and extra fields, the directory region's last bytes (a ring
     * once NPZS_TAIL_MAX of them are kept) */
    uint8_t *name, *extra, *tail;
    size_t name_cap, extra_cap, tail_cap;
} npzs__kept;

/* The parser, in three parts by lifetime: the caller's choices and the accounting (the
 * parser's life), the kept buffers, and one input's state (from `state` on), which npzs_reset
 * zeroes in one memset after freeing what that input allocated (npzs__zip_input_release). */
struct npzs_parser {
    /* ---- the caller's choices: the parser's life ---- */
    npzs_limits lim;
    npzs_allocator al;
    npzs__pstate pol;            /* a policy (policy/enforce.c): its state for one input is reset with it */
    unsigned hashes;             /* npzs_hash: NPZS_HASH_* */
    uint32_t ev_user;            /* npzs_events: the events the caller wants (NPZS_EV_BIT bits) */
    npzs__seam seam;             /* a helper inflating members ahead (seam.h; take == NULL: none) */
    npzs__names ntab;            /* names.c: the duplicate-name table; its key (random per parser)
                                   is the parser's, its slots one input's (freed at npzs_reset) */
    uint64_t mem_used, mem_peak; /* bytes held through the hooks (the parser included) */

    /* ---- kept buffers ---- */
    npzs__kept kept;

    /* ---- one input: zeroed by npzs_reset (run_init, npzs.c, sets what is not 0) ---- */
    int state; /* enum npzs_state */
    int finished;
    int sequence; /* npzs_npy_sequence: .npy arrays back to back */
    npzs_format format;
    uint64_t consumed;  /* input bytes taken before this call (npzs_next adds each call's) */
    const npzs_in *in;  /* during a call: the push (NULL between calls) */
    size_t pos0;        /* during a call: in->pos at its start */
    uint64_t total_out; /* content bytes of all members so far */
    uint64_t ignored;   /* bytes consumed, never parsed (NPZS_LENIENT_NPY_TRAILING) */
    int mem_capped;     /* an allocation was refused by max_memory */

    /* sticky error */
    int err;
    const char *err_msg;
    int err_rule; /* enum npzs_rule */
    uint64_t err_off;
    long err_member;
    uint64_t err_coff;
    char err_detail[200]; /* a policy violation in words (npzs_error_detail) */
    /* a limit's numbers (npzs_error_limit): its name, its value in force, what the input needed;
     * the need is given by the check (npzs__limit_need) just before it fails */
    npzs__limit_hit err_lim;
    uint64_t lim_need;
    int lim_need_set;

    /* fixed-size record staging */
    uint8_t stage[64];
    size_t stage_len;
    uint64_t rec_off; /* offset of the record being staged */

    /* the archive */
    int phase;        /* zip.c: locals, central directory, after the ZIP64 end record, after the locator, end */
    uint32_t members; /* local headers seen */
    npzs__end end;
    npzs__zcdh cdh;             /* the central directory header being read */
    const npzs__record *cd_rec; /* the member it must repeat (npzs__rec(p, p->end.cd_count)) */
    size_t var_len;             /* progress staging a name / extra / comment */
    /* member records for the central directory check */
    npzs__record **recs;          /* in chunks of NPZS_REC_CHUNK that never move (view/members.h) */
    size_t recs_chunks, recs_cap; /* chunks allocated, entries of the chunk table */
    struct npzs__block *names;    /* the recorded names, newest block first; blocks never move */

    /* the member being read (set at its local header) */
    uint32_t cur; /* its index */
    npzs__lfh lfh;
    npzs__record *rec;   /* its record (npzs__rec(p, p->cur)) once remembered */
    uint64_t data_start; /* offset of its data */
    uint64_t data_in;    /* its compressed bytes consumed */
    uint32_t crc;        /* its CRC-32, once its content ended */
    npzs__inflate inf;
    npzs__content c;

    /* states reached (diagnostics, coverage gate in tests) */
    uint64_t visited;
    uint32_t cvisited;
};
#define NPZS__RUN_OFFSET offsetof(struct npzs_parser, state)

/* Member i's record (view/members.h). */
static inline npzs__record *npzs__rec(const npzs_parser *p, uint32_t i) { return npzs__rec_at(p->recs, i); }

/* ---- shared helpers ---- */

/* What a step returns (a state's step function, and the parts of one: the content machine,
 * inflate's refill): never one of the public codes, so that neither can pass for the other;
 * npzs_next_ turns them into those at its one exit.  Helpers that only check return 0 or < 0
 * (the error recorded), one meaning too. */
typedef enum npzs__rc {
    NPZS__GO = 0x100, /* the state moved on: dispatch again */
    NPZS__EVENT,      /* *ev is filled: the dispatcher delivers it, or drops it (npzs_events) */
    NPZS__NEED,       /* the push is used up and nothing can be emitted: more input */
    NPZS__DONE,       /* END was delivered: only the end of input may follow */
    NPZS__NOT_TAKEN,  /* a fast path declined, nothing consumed: the states take the bytes */
    NPZS__ERROR       /* the error is recorded (p->err) */
} npzs__rc;

/* The events mask, read here only: the dispatcher (npzs_next_) delivers an event of type t only
 * when this holds, and a step asks it before building one, so that past an event the caller did
 * not ask for it goes on at once, as if the event had been taken (npzs_events). */
static inline int npzs__wants(const npzs_parser *p, npzs_event_type t) { return (p->ev_user >> t) & 1u; }

/* The absolute offset of the next byte of the push (during a call). */
static inline uint64_t npzs__here(const npzs_parser *p) {
    return p->consumed + (p->in ? p->in->pos - p->pos0 : 0) - p->inf.orphan;
}

/* Allocation and the error recorder (core/): view/handle.h. */

/* An error recorded (npzs__fail, npzs__fail_content), for a step: NPZS__ERROR. */
static inline npzs__rc npzs__error(npzs_parser *p, int code, uint64_t off, int rule) {
    (void)npzs__fail(p, code, off, rule);
    return NPZS__ERROR;
}
static inline npzs__rc npzs__error_content(npzs_parser *p, int code, uint64_t coff, int rule) {
    (void)npzs__fail_content(p, code, coff, rule);
    return NPZS__ERROR;
}
/* More input is needed: NPZS__NEED, or truncated after npzs_finish() (NPZS__ERROR). */
static inline npzs__rc npzs__need(npzs_parser *p) {
    if (p->finished) return npzs__error(p, NPZS_E_TRUNCATED, npzs__here(p), NPZS_R_TRUNC_ARCHIVE);
    return NPZS__NEED;
}


/* The cap on the bytes of all members: the limit, or the policy's max_total_bytes when it is the
 * tighter; going over it is limit (the given rule) or policy (POLICY.total-bytes). */
static inline uint64_t npzs__total_cap(const npzs_parser *p) {
    uint64_t c = p->lim.max_total_bytes;
    return p->pol.pol && p->pol.pol->max_total_bytes < c ? p->pol.pol->max_total_bytes : c;
}
static inline int npzs__total_code(const npzs_parser *p) {
    return npzs__total_cap(p) < p->lim.max_total_bytes ? NPZS_E_POLICY : NPZS_E_LIMIT;
}
static inline int npzs__total_rule(const npzs_parser *p, int limit_rule) {
    return npzs__total_cap(p) < p->lim.max_total_bytes ? NPZS_R_POLICY_TOTAL_BYTES : limit_rule;
}

/* policy/enforce.c: the policy's checks, each at the point of the stream that decides it (0 or < 0, the
 * error recorded); they return 0 at once when no policy is used */
int npzs__pol_start(npzs_parser *p);               /* the format is known */
int npzs__pol_member(npzs_parser *p);              /* a local header was remembered */
int npzs__pol_directory(npzs_parser *p);           /* the first record after the members */
int npzs__pol_blob(npzs_parser *p, uint64_t coff); /* the content is not a .npy */
int npzs__pol_sniffed(npzs_parser *p, int sniff);  /* a blob's kind is known */
size_t npzs__pol_blob_room(const npzs_parser *p, uint64_t have, size_t n);
int npzs__pol_header(npzs_parser *p); /* an array's header was parsed */
/* The data ended with c->digest: the pinned value (emitted: the last chunk goes out as an event,
 * the error then comes at the next call). */
int npzs__pol_digest(npzs_parser *p, uint64_t coff, int emitted);
int npzs__pol_defer(npzs_parser *p, uint64_t coff, int rule);
int npzs__pol_pending(npzs_parser *p); /* the deferred violation, now */
int npzs__pol_value_fail(npzs_parser *p, int rule, uint64_t coff);
void npzs__policy_reset(npzs_parser *p);
void npzs__policy_release(npzs_parser *p);
int npzs__policy_hashes(const npzs_parser *p); /* "hash": "sha256" */


/* content.c: the content machine */
void npzs__content_start(npzs_parser *p, int top, int direct, int must_be_npy, uint64_t base);
/* Feed content bytes.  Returns NPZS__EVENT (*used bytes taken), NPZS__NEED (all of them taken),
 * NPZS__NOT_TAKEN (the array is complete and the bytes from *used on are not its: what follows
 * a plain .npy or a member of unknown size, or, inside a member, content after its array:
 * npzs__content_trailing) or NPZS__ERROR. */
npzs__rc npzs__content_trailing(npzs_parser *p);
npzs__rc npzs__content_feed(npzs_parser *p, const uint8_t *buf, size_t len, int zero_copy, size_t *used,
                            npzs_event *ev);
/* Content ended.  Returns NPZS__EVENT (call again), NPZS__GO (a clean end) or NPZS__ERROR. */
npzs__rc npzs__content_end(npzs_parser *p, npzs_event *ev);
/* Most content bytes the machine can take now without failing (for inflate's output cap). */
uint64_t npzs__content_want(const npzs_parser *p);
/* n content bytes that are not at hand, their CRC-32 given (a member inflated ahead without its
 * bytes, par.c): 1 when the machine took them as it would take the bytes (array data or blob,
 * within its size, no check or hash looking at them, and no DATA or BLOB event wanted for them),
 * else 0 and nothing changed. */
int npzs__content_skip(npzs_parser *p, uint64_t n, uint32_t crc);
void npzs__content_release(npzs_parser *p);
/* 1 right after an array's HEADER, before its first data byte (npzs_data_into, npzs_par_take_data). */
int npzs__content_at_data(const npzs_parser *p);
/* The CRC-32 of the whole member content (an array's header and data, or the blob), once it ended. */
uint32_t npzs__content_crc(npzs_parser *p);

/* npyhdr.c, the header parser (view/header.h), called on the parser's part: its limits, its kept
 * buffers, the member's array (p->c.arr), the offset of the next input byte. */
static inline npzs__hdr npzs__hdr_of(npzs_parser *p) {
    return (npzs__hdr){.p = p, .lim = &p->lim, .kept = &p->kept.h, .arr = &p->c.arr, .here = npzs__here(p)};
}
#ifdef NPZS_TESTING
/* content.c, test hook: 0 turns off the memo of the last header (on by default); the headers it
 * gave. */
void npzs__header_memo(npzs_parser *p, int on);
uint64_t npzs__header_memo_hits(const npzs_parser *p);
#endif

/* The step functions of the state table (states.h), one per state (npy/plain.c, zip/zip.c); the
 * contract is in npzs.c. */
#define NPZS__X_STEP(name, step, scope, rec, doc) npzs__rc step(npzs_parser *p, npzs_in *in, npzs_event *ev);
NPZS_STATE_MAP(NPZS__X_STEP)
#undef NPZS__X_STEP
void npzs__zip_release(npzs_parser *p);
/* What one input allocated (member records, names, the name table): freed (npzs_reset, npzs_free). */
void npzs__zip_input_release(npzs_parser *p);

/* inflate.c: the inflate back end (zlib) */
int npzs__fast_inflate_built(void); /* inflate.c: ISA-L compiled in */
int npzs__inf_begin(npzs_parser *p);
/* The window is used up: inflate more.  NPZS__GO, NPZS__NEED or NPZS__ERROR. */
npzs__rc npzs__inf_fill(npzs_parser *p, npzs_in *in);
void npzs__inf_release(npzs_parser *p);

/* The states reached, for the tests and the fuzzers' state gate; the command-line tool, which
 * compiles the library's sources itself (LTO) and never reads them, is built without
 * (-DNPZS_NO_VISIT: 24 instructions a member). */
#ifdef NPZS_NO_VISIT
#define NPZS_VISIT(p, s) ((void)(p))
#define NPZS_CVISIT(p, s) ((void)(p))
#else
#define NPZS_VISIT(p, s) ((p)->visited |= (uint64_t)1 << ((s)-NPZS_S__BASE - 1))
#define NPZS_CVISIT(p, s) ((p)->cvisited |= (uint32_t)1 << ((s)-NPZS_C__BASE - 1))
#endif

#ifdef NPZS_TESTING
/* Test hooks (the C suites and the fuzzers are built with NPZS_TESTING): bitmaps of the states
 * reached so far. */
uint64_t npzs__visited(const npzs_parser *p);
uint32_t npzs__cvisited(const npzs_parser *p);
#endif

#endif
