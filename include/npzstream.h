/*
 * npzstream.h -- streaming, validating parser for NumPy .npy and .npz files.
 *
 * The caller pushes whatever bytes it has and pulls events, one per call:
 *
 *     npzs_parser *p = npzs_new(NULL, NULL);          // default limits, malloc
 *     npzs_in in = { buf, n, 0 };                      // bytes the caller holds
 *     npzs_event ev;
 *     for (;;) {
 *         int rc = npzs_next(p, &in, &ev);
 *         if (rc == NPZS_EVENT)      { handle(&ev); if (ev.type == NPZS_EV_END) break; }
 *         else if (rc == NPZS_NEED_INPUT) { refill in (or npzs_finish(p) at EOF); }
 *         else                       { fail(npzs_error(p)); break; }   // rc < 0
 *     }
 *     npzs_free(p);
 *
 * Guarantees
 *   - Any split of the input gives the same events (data chunk boundaries
 *     aside: the concatenated bytes of DATA and BLOB events are identical), the
 *     same verdict, the same error code and the same error offset.
 *   - The parser never seeks, never reads outside [src, src+size) of the
 *     npzs_in it is given, and keeps NO pointer into caller memory between
 *     calls.  Pointers inside an event are valid until the next call on the
 *     same parser (and, for zero-copy chunks, as long as the caller's buffer).
 *   - Memory is bounded by the limits, never by the data size.  The only
 *     allocations go through the allocator hooks.  There is no global state
 *     (but one fact per process: whether libcrypto could be loaded, npzs_sha256_built).
 *   - Progress: each npzs_next() call consumes input, emits an event, returns
 *     NPZS_NEED_INPUT with the input used up, or fails.
 *   - Errors are sticky: once a call returned an error, every later call
 *     returns the same code.
 *
 * .npz archives: MEMBER_*, HEADER, DATA and BLOB events are PROVISIONAL.
 * np.load trusts the central directory at the end of the file, a stream sees
 * the local headers first; only the END event, emitted after the central
 * directory has been checked against every local header, data descriptor,
 * CRC and size seen, is the verdict.  A caller must not act on an archive
 * (store it, load it, hand its arrays on) before END arrives.
 */
#ifndef NPZSTREAM_H
#define NPZSTREAM_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each function (or group of accessors) ends its contract with one block: Returns, Errors (the
 * codes and rules a call records), Lifetime (what it keeps and what stays valid), Threads, Added
 * in.  "Sticky": the parser keeps the error and every later call returns it. */

/* The version of this header: major << 16 | minor << 8 | patch.  A major change breaks the ABI:
 * bump the SONAME with it.  Additions since 0.1.0 are marked "added in". */
#define NPZS_VERSION "0.8.0"
#define NPZS_VERSION_NUM 0x000800

/* NPZS_VERSION_NUM of the library actually linked (added in 0.2.0). */
unsigned long npzs_version(void);
/*  Returns   NPZS_VERSION_NUM of the library linked.
 *  Errors    none.
 *  Lifetime  none.
 *  Threads   any.
 *  Added in  0.2.0. */

/* ---- return values of npzs_next() ------------------------------------- */
#define NPZS_NEED_INPUT 0 /* input used up, nothing to emit: push more or finish */
#define NPZS_EVENT 1      /* *ev was filled */
#define NPZS_DONE 2       /* the END event was already delivered; nothing more */

/* ---- error codes: stable, append-only.  (name, number, default message) --
 * The names are the ones `npzstream check --json` prints. */
#define NPZS_ERROR_MAP(X) \
    X(TRUNCATED, -1, "truncated", "input ended before the file was complete") \
    X(BAD_MAGIC, -2, "bad_magic", "not a .npy or .npz file") \
    X(BAD_VERSION, -3, "bad_version", "unsupported .npy format version") \
    X(HEADER_TOO_LARGE, -4, "header_too_large", ".npy header larger than the limit") \
    X(BAD_HEADER, -5, "bad_header", "malformed .npy header") \
    X(PICKLE, -6, "pickle", "object arrays (pickle) are refused") \
    X(BAD_SHAPE, -7, "bad_shape", "invalid shape") \
    X(SIZE_OVERFLOW, -8, "size_overflow", "array size overflows") \
    X(ZIP_BAD_HEADER, -9, "zip_bad_header", "malformed ZIP record") \
    X(ZIP_UNSUPPORTED, -10, "zip_unsupported", "unsupported ZIP feature") \
    X(CRC_MISMATCH, -11, "crc_mismatch", "CRC-32 mismatch") \
    X(SIZE_MISMATCH, -12, "size_mismatch", "size mismatch") \
    X(CD_MISMATCH, -13, "cd_mismatch", "central directory disagrees with the stream") \
    X(DUPLICATE_NAME, -14, "duplicate_name", "duplicate member name or key") \
    X(TRAILING_DATA, -15, "trailing_data", "bytes after the end") \
    X(LIMIT, -16, "limit", "a configured limit was exceeded") \
    X(INFLATE, -17, "inflate", "invalid deflate data") \
    X(BAD_NAME, -18, "bad_name", "invalid member name") \
    X(NOMEM, -19, "nomem", "out of memory (allocator failed)") \
    X(BAD_CALL, -20, "bad_call", "API misuse (bad argument or call order)") \
    X(POLICY, -21, "policy", "the input breaks the caller's policy") /* added in 0.5.0 */

enum npzs_error {
#define NPZS_X_ENUM(id, num, name, msg) NPZS_E_##id = (num),
    NPZS_ERROR_MAP(NPZS_X_ENUM)
#undef NPZS_X_ENUM
        NPZS_E_NONE = 0
};

/* ---- events --------------------------------------------------------------
 * Sequence, .npy:  MEMBER_BEGIN HEADER DATA* MEMBER_END END
 * Sequence, .npz:  ( MEMBER_BEGIN (HEADER DATA* | BLOB*) MEMBER_END )* END
 */
typedef enum npzs_event_type {
    NPZS_EV_MEMBER_BEGIN = 1, /* name, method, flags, index, offset */
    NPZS_EV_HEADER = 2,       /* array: the validated .npy header */
    NPZS_EV_DATA = 3,         /* a chunk of array data bytes */
    NPZS_EV_BLOB = 4,         /* a chunk of a member that is not a .npy */
    NPZS_EV_MEMBER_END = 5,   /* member complete, sizes and CRC checked; name, and array (0.4.0) */
    NPZS_EV_END = 6           /* verdict: the whole input is valid */
} npzs_event_type;

typedef enum npzs_format { NPZS_FORMAT_UNKNOWN = 0, NPZS_FORMAT_NPY = 1, NPZS_FORMAT_NPZ = 2 } npzs_format;

/* What a member's content looks like (added in 0.5.0), from its first 16 bytes and its last:
 * npy for an array; for a blob empty, pickle (a protocol 2-5 header, or a protocol 0-1 opcode
 * first and STOP last), zip, gzip, text (UTF-8 without control characters but tab, newline,
 * carriage return and form feed) or binary.  A pickle blob is returned by np.load as bytes: it runs
 * only if the caller unpickles it, which a policy can forbid (allow_blobs). */
#define NPZS_SNIFF_MAP(X) \
    X(NPY, 1, "npy") \
    X(EMPTY, 2, "empty") \
    X(PICKLE, 3, "pickle") X(ZIP, 4, "zip") X(GZIP, 5, "gzip") X(TEXT, 6, "text") X(BINARY, 7, "binary")
typedef enum npzs_sniff {
#define NPZS_X_SNIFF(id, num, name) NPZS_SNIFF_##id = (num),
    NPZS_SNIFF_MAP(NPZS_X_SNIFF)
#undef NPZS_X_SNIFF
        NPZS_SNIFF_NONE = 0
} npzs_sniff;
/* "npy", "pickle", ...; "unknown" otherwise (added in 0.5.0). */
const char *npzs_sniff_name(int sniff);
/*  Returns   the kind's name ("pickle", ...), "unknown" for a value that is none.
 *  Errors    none.
 *  Lifetime  static text.
 *  Threads   any.
 *  Added in  0.5.0. */
/* What len bytes look like, as a blob's sniff says it (NPZS_SNIFF_*; NPZS_SNIFF_NPY is never
 * returned): data is the first bytes of a content (at most the first 16 are read), ended says
 * they are all of it (`npzstream scan` names a top-level pickle with it). */
int npzs_sniff_bytes(const void *data, size_t len, int ended);
/*  Returns   an NPZS_SNIFF_* kind other than NPZS_SNIFF_NPY; NPZS_SNIFF_EMPTY for data NULL or
 *            len 0.
 *  Errors    none.
 *  Lifetime  data is read during the call only.
 *  Threads   any.
 *  Added in  0.7.0. */
typedef enum npzs_kind { NPZS_KIND_ARRAY = 1, NPZS_KIND_BLOB = 2 } npzs_kind;

#define NPZS_METHOD_STORED 0
#define NPZS_METHOD_DEFLATED 8

/* A structured dtype, parsed (added in 0.2.0): a tree of type nodes.  Node 0 is the array's
 * dtype (a STRUCT).  A STRUCT's fields are fields[first .. first + count), in the descr's order,
 * padding left out (its bytes are the room between offsets and the struct's itemsize); a
 * SUBARRAY is `shape` elements of node `base` (a subarray of a subarray is two nodes, as NumPy
 * keeps it: build the tree bottom up and you get NumPy's dtype); a SCALAR is a type string as
 * dtype.str spells it ("<f8", "|S3", "<M8[us]").  A subarray's base comes before it, a field's
 * type after its struct.  Everything is valid until the next call, like the HEADER event. */
typedef enum npzs_dtkind { NPZS_DT_SCALAR = 1, NPZS_DT_STRUCT = 2, NPZS_DT_SUBARRAY = 3 } npzs_dtkind;
typedef struct npzs_dtnode {
    npzs_dtkind kind;
    uint64_t itemsize;     /* bytes of one element of this type */
    const char *dtype;     /* SCALAR: NUL-terminated; else NULL */
    uint32_t first, count; /* STRUCT: its fields */
    uint32_t base;         /* SUBARRAY: the element type */
    uint32_t ndim;         /* SUBARRAY */
    const uint64_t *shape;
} npzs_dtnode;
typedef struct npzs_dtfield {
    const char *name; /* UTF-8, name_len bytes (not NUL-terminated) */
    size_t name_len;
    const char *title; /* NULL when the field has no title; else UTF-8, title_len bytes */
    size_t title_len;
    uint64_t offset; /* in the enclosing struct */
    uint32_t type;   /* its node */
} npzs_dtfield;

/* The validated .npy header (HEADER event; valid until the next call). */
typedef struct npzs_array_info {
    uint8_t version_major, version_minor; /* 1.0, 2.0 or 3.0 */
    int fortran_order;                    /* 0 or 1 */
    int structured;                       /* descr is a field list */
    const char *dtype;                    /* NUL-terminated, NumPy's dtype.str: "<f4", "|b1", "|V12" */
    const char *descr;                    /* the descr value as written, NUL-terminated, in UTF-8 (a v1.0/v2.0
                             header is latin-1: converted) */
    size_t descr_len;
    const uint8_t *header; /* the member's raw bytes from the magic to the data: preamble and
                              header text exactly as read (header_size == header_len) */
    size_t header_size;
    uint32_t ndim;
    const uint64_t *shape; /* ndim entries */
    uint64_t itemsize;
    uint64_t count;      /* product of shape (1 for a 0-d array) */
    uint64_t nbytes;     /* count * itemsize: exactly this many DATA bytes follow */
    uint64_t header_len; /* bytes of magic+preamble+header = offset of the data in the member */
    /* structured: the dtype as a tree (added in 0.2.0; NULL and 0 otherwise) */
    const npzs_dtnode *dt_nodes;
    uint32_t dt_nnodes, dt_nfields;
    const npzs_dtfield *dt_fields;
} npzs_array_info;

typedef struct npzs_event {
    npzs_event_type type;
    uint32_t member; /* 0-based member index (0 for a .npy) */
    uint64_t offset; /* absolute input offset of the thing the event describes:
                             MEMBER_BEGIN: its local header (0 for .npy);
                             HEADER: the member's content start;
                             DATA/BLOB: for stored bytes, the input offset of data[0];
                                        for inflated bytes, the member's data start;
                             MEMBER_END: the end of the member (after any descriptor);
                             END: total input length */
    /* MEMBER_BEGIN and MEMBER_END (npz) */
    const char *name; /* raw name bytes, not NUL-terminated; NULL for .npy */
    size_t name_len;
    int method;     /* NPZS_METHOD_* (stored for .npy) */
    unsigned flags; /* ZIP general purpose flags */
    /* HEADER; MEMBER_END of an array, its header again (added in 0.4.0; NULL for a blob) */
    const npzs_array_info *array;
    /* DATA / BLOB */
    const uint8_t *data;
    size_t len;
    uint64_t pos;  /* offset of data[0] in the array data (DATA) or in the blob (BLOB) */
    int zero_copy; /* 1: data points into the caller's npzs_in buffer */
    /* MEMBER_END */
    npzs_kind kind;
    uint64_t size;       /* uncompressed member size (npy: whole content) */
    uint64_t csize;      /* compressed size (== size when stored) */
    uint32_t crc32;      /* CRC-32 of the whole member content */
    uint32_t data_crc32; /* CRC-32 of the array data bytes (blob: == crc32) */
    uint64_t data_size;  /* array data bytes (blob: == size) */
    /* END */
    npzs_format format;
    uint32_t members;
    /* MEMBER_END (added in 0.5.0) */
    int sniff;             /* npzs_sniff: what the content looks like (NPZS_SNIFF_NPY for an array) */
    const uint8_t *sha256; /* when hashing (npzs_hash, a policy's "hash" or pinned value): the 32-byte
                                 SHA-256 of the array data (a blob: of its bytes), the same however the
                                 archive was written; else NULL */
} npzs_event;

/* ---- limits --------------------------------------------------------------
 * Fill with npzs_limits_default(), then change what you need.  npzs_new() refuses
 * (returns NULL for) a zero where a positive number is needed and values above the
 * maxima given below. */
typedef struct npzs_limits {
    uint64_t max_header_size; /* .npy header, in decoded characters as NumPy counts
                                  them (default 10000, NumPy's max_header_size; at most
                                  2^30).  Stops header-parsing DoS; the header is staged
                                  (up to 4 bytes a character in v3.0) with a scratch of
                                  4x its size. */
    uint32_t max_ndim;        /* dimensions of an array (default 32, NumPy 1.x; at most 64) */
    uint32_t max_fields;      /* field names and titles in a header's descr (default
                                  100000; the header size bounds them anyway) */
    uint32_t max_depth;       /* nesting of structured dtypes (default 32, at most 1000) */
    uint32_t max_members;     /* members of an archive (default 100000) */
    uint32_t max_name_len;    /* bytes of a member name (default 4096, at most 65535) */
    uint32_t max_extra_len;   /* bytes of one extra field block (default 65535: no limit) */
    uint64_t max_total_bytes; /* total member content bytes (inflated) of an input,
                                  default 2^30 (1 GiB; 1 TiB before 0.5.0): stops zip
                                  bombs, at the header that declares the size when one
                                  does (SECURITY.md, "Defaults for untrusted input") */
    uint32_t inflate_window;  /* inflate output chunk in bytes (default 256 KiB) */
    uint32_t lenient;         /* NPZS_LENIENT_* bits: each accepts one thing the strict default
                                  refuses (SECURITY.md, "Lenient flags"); 0 by default (added in
                                  0.2.0); also NPZS_INFLATE_ZLIB (0.8.0) */
    uint64_t max_memory;      /* bytes the parser may hold through the allocator hooks at once,
                                  itself included (default 256 MiB; 0: no cap but the other
                                  limits); more is refused as limit, rule LIMIT.max_memory
                                  (added in 0.2.0) */
} npzs_limits;

/* The numeric limits, one row each (added in 0.6.0), in the struct's order:
 *   X(field, bits, default, minimum, maximum, option, help)
 * bits: the field's width (32 or 64); npzs_limits_check() refuses a value outside [minimum,
 * maximum] (and max_memory below the parser's own size, but 0).  The library's defaults and
 * checks, the command line's options and --help, the Python module's names and the man pages
 * all take the limits from here. */
#define NPZS_LIMITS_MAP(X) \
    X(max_header_size, 64, 10000, 1, UINT64_C(1) << 30, "--max-header-size", ".npy header size in characters") \
    X(max_ndim, 32, 32, 0, 64, "--max-ndim", "dimensions of an array") \
    X(max_fields, 32, 100000, 1, UINT32_MAX, "--max-fields", "names, titles and types in a structured dtype") \
    X(max_depth, 32, 32, 1, 1000, "--max-depth", "nesting of structured dtypes") \
    X(max_members, 32, 100000, 1, 0x7FFFFFFF, "--max-members", "members of an archive") \
    X(max_name_len, 32, 4096, 1, 65535, "--max-name-len", "bytes of a member name") \
    X(max_extra_len, 32, 65535, 0, 65535, "--max-extra-len", "bytes of a ZIP extra field block") \
    X(max_total_bytes, 64, UINT64_C(1) << 30, 0, UINT64_MAX, "--max-total-bytes", \
      "total uncompressed member bytes: stops zip bombs") \
    X(inflate_window, 32, 256u * 1024u, 1, UINT32_MAX, "--inflate-window", "inflate output chunk in bytes") \
    X(max_memory, 64, UINT64_C(256) << 20, 0, UINT64_MAX, "--max-memory", "bytes the parser may hold, 0 for no cap")

/* Lenient flags, off by default (llhttp-style: each is named, documented and tested).
 * NPZS_LENIENT_NPY_TRAILING: a plain .npy may be followed by bytes (a writer that overwrote a
 *   longer file without truncating it); they are consumed, never read, and counted by
 *   npzs_ignored_bytes().  Gives up: the check that nothing hides after the array (polyglot
 *   files, a second array).  NumPy ignores such bytes too.
 * NPZS_LENIENT_HEADER_NEWLINE: the header text may end "}\n" followed by spaces (npyjs writes
 *   this).  Gives up: loadability by NumPy 2.x on Python 3.12 and later, which refuses these
 *   headers (NumPy 1.24 and 2.x on Python 3.11 load them). */
#define NPZS_LENIENT_NPY_TRAILING 0x1u
#define NPZS_LENIENT_HEADER_NEWLINE 0x2u
/* NPZS_LENIENT_FAST_INFLATE (added in 0.2.0; only in a library built with ISA-L, else refused as
 *   an invalid limit): deflated members whose compressed size the local header gives are
 *   inflated with ISA-L (about 2x zlib).  Gives up: zlib's verdict on invalid deflate data.  ISA-L
 *   accepts some streams zlib refuses (incomplete or over-subscribed Huffman code sets) and
 *   decides some invalid or cut streams at another point (inflate vs size_mismatch), so an
 *   archive np.load cannot load may be accepted; where both accept, the bytes are the same
 *   (SECURITY.md has the measured rates).  npzs_fast_inflate() says whether it is built in. */
#define NPZS_LENIENT_FAST_INFLATE 0x4u
/* NPZS_INFLATE_ZLIB (added in 0.8.0; not a lenient flag, it accepts nothing more: it only
 *   shares the field): every deflated member is inflated by zlib alone.  By default a member
 *   whose compressed size the local header gives is inflated by the library's own decoder, whose
 *   verdict and output are zlib's byte for byte (it hands zlib the blocks it does not vouch for;
 *   SECURITY.md, "The inflater"), about 1.4x to 2.7x zlib; this is the reference it is measured
 *   against, and the way back should they ever differ.  Members with a data descriptor are
 *   always inflated by zlib. */
#define NPZS_INFLATE_ZLIB 0x8u
/* 1 when this library was built with ISA-L (NPZS_LENIENT_FAST_INFLATE is available), else 0
 * (added in 0.2.0). */
int npzs_fast_inflate(void);
/*  Returns   1 with ISA-L built in, else 0.
 *  Errors    none.
 *  Lifetime  none.
 *  Threads   any.
 *  Added in  0.2.0. */

/* The name of the first field of lim that npzs_new() would refuse ("max_ndim", ...; "size" for
 * a struct size this library cannot read), or NULL when all are valid (added in 0.2.0). */
const char *npzs_limits_check_(const npzs_limits *lim, size_t size);
#define npzs_limits_check(lim) npzs_limits_check_((lim), sizeof(npzs_limits))
/*  Returns   NULL when every field is valid, else the first field's name ("size" for a struct size
 *            it cannot read).
 *  Errors    none.
 *  Lifetime  static text.
 *  Threads   any (lim is only read).
 *  Added in  0.2.0. */

/* Fill with the defaults.  The macro passes the struct's size, so a program built against an
 * older header (a smaller npzs_limits) is never written past its struct. */
void npzs_limits_default_(npzs_limits *lim, size_t size);
#define npzs_limits_default(lim) npzs_limits_default_((lim), sizeof(npzs_limits))
/*  Returns   nothing (lim filled; nothing written for a NULL lim or a size older than 0.1.0's).
 *  Errors    none.
 *  Lifetime  none.
 *  Threads   any.
 *  Added in  0.1.0; npzs_limits_default_ 0.2.0. */

/* ---- allocator hooks ------------------------------------------------------
 * alloc returns NULL on failure (reported as NPZS_E_NOMEM); free accepts
 * pointers from alloc only.  Both NULL means malloc/free.  zlib's inflate
 * state and window are allocated through the same hooks. */
typedef struct npzs_allocator {
    void *(*alloc)(void *opaque, size_t size);
    void (*free)(void *opaque, void *ptr);
    void *opaque;
} npzs_allocator;

typedef struct npzs_parser npzs_parser;

/* Create a parser.  lim and alloc may be NULL (defaults); both are copied.
 * Returns NULL when the allocation fails or a limit is invalid (0 where a
 * positive number is needed).  The macro passes sizeof(npzs_limits) (added in 0.2.0): a size
 * from an older header reads the fields it had and takes the defaults of the others; a size
 * larger than this library knows (a newer header) is refused.  Bindings call npzs_new_ with
 * the size of the struct they allocate. */
npzs_parser *npzs_new_(const npzs_limits *lim, size_t lim_size, const npzs_allocator *alloc);
#define npzs_new(lim, alloc) npzs_new_((lim), sizeof(npzs_limits), (alloc))
/*  Returns   the parser, or NULL (out of memory, an invalid limit, a limits size it cannot read, an
 *            allocator with a NULL hook).
 *  Errors    none recorded (there is no parser).
 *  Lifetime  lim and alloc are copied; free with npzs_free().
 *  Threads   the parser is used by one thread at a time; npzs_new itself: any.
 *  Added in  0.1.0; npzs_new_ 0.2.0. */

/* Release everything; p may be NULL. */
void npzs_free(npzs_parser *p);
/*  Returns   nothing.
 *  Errors    none.
 *  Lifetime  every pointer the parser gave (events, error texts, member names) ends here; free a
 *            helper (npzs_par_free) before its parser.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.1.0. */

/* Start a new input with the same parser, limits and hooks, keeping the buffers that do not
 * depend on an input (added in 0.2.0).  Everything about the previous input, its error
 * included, is forgotten.  The caller's choices stay: limits, hooks, policy, hashing, the events
 * mask, and (0.6.0) a parallel helper, which forgets the input with it (npzs_par_reset() is the
 * same call). */
void npzs_reset(npzs_parser *p);
/*  Returns   nothing.
 *  Errors    the last input's error is forgotten.
 *  Lifetime  an event's pointers and npzs_data_into's destination of the last input end here.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.2.0; a helper kept 0.6.0. */

/* Input window.  npzs_next() reads src[pos..size) and advances pos. */
typedef struct npzs_in {
    const void *src;
    size_t size;
    size_t pos;
} npzs_in;

/* Advance.  Returns NPZS_EVENT (*ev written whole: the fields its type does not use are zero;
 * *ev is written by no other return), NPZS_NEED_INPUT (in->pos ==
 * in->size; push more bytes, or call npzs_finish() at end of input), NPZS_DONE
 * (END already delivered), or a negative npzs_error (sticky).  in may be NULL
 * after npzs_finish().  Bytes given after END are trailing_data. */
int npzs_next(npzs_parser *p, npzs_in *in, npzs_event *ev);
/* What the npzs_next macro calls with sizeof(npzs_event) (added in 0.2.0): the library writes
 * only a layout it knows, and refuses any other size (NPZS_E_BAD_CALL, rule CALL.event-size), so
 * a program built against another header can never be written past its struct.  Bindings call
 * it with the size of the struct they allocate. */
int npzs_next_(npzs_parser *p, npzs_in *in, npzs_event *ev, size_t ev_size);
#define npzs_next(p, in, ev) npzs_next_((p), (in), (ev), sizeof(npzs_event))
/*  Returns   NPZS_EVENT, NPZS_NEED_INPUT, NPZS_DONE, or a negative npzs_error (sticky: every later
 *            call returns it).
 *  Errors    every input fault with its code, rule, offset and member (npzs_error_*);
 *            NPZS_E_BAD_CALL for a NULL parser or event, in->pos > in->size, a NULL src with a size
 *            (CALL.arg), an event size it cannot write (CALL.event-size).
 *  Lifetime  no pointer into in is kept between calls; an event's pointers are valid until the next
 *            call on the parser (or on its helper).
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *            With a helper attached (npzs_par_new) the call goes through it and may wait for its
 *            workers.
 *  Added in  0.1.0; npzs_next_ 0.2.0; through an attached helper 0.8.0. */

/* Direct output (added in 0.2.0): right after an array's HEADER event, before its first DATA
 * event, name where its data goes: dst, at least ev.array->nbytes bytes.  The array's bytes are
 * then written there (a deflated member is inflated straight into it, a stored one copied once)
 * and its DATA events point into dst (data == dst + pos, zero_copy 0).  dst must stay valid until
 * the member's MEMBER_END, an error, npzs_reset() or npzs_free().  Like the events, what it
 * holds is provisional until END.  Returns 0, or NPZS_E_BAD_CALL (sticky, rule CALL.data-into)
 * when called anywhere else or with a destination smaller than the array. */
int npzs_data_into(npzs_parser *p, void *dst, size_t cap);
/*  Returns   0, or NPZS_E_BAD_CALL.
 *  Errors    CALL.data-into (sticky): not right after a HEADER, or cap smaller than the array.
 *  Lifetime  dst must stay valid until the member's MEMBER_END, an error, npzs_reset() or
 *            npzs_free().
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.2.0. */

/* A sequence of .npy arrays on one stream (added in 0.2.0), as repeated np.save calls to one
 * file, pipe or socket write them: call before the first byte.  A plain .npy input then goes on
 * after each array's MEMBER_END with the next array (MEMBER_BEGIN with the next member index,
 * offset = its first byte); END comes when the input ends between two arrays (ev.members = how
 * many); an input ending inside an array is truncated, anything else the usual errors (a byte
 * that starts no array is bad_magic).  max_members bounds the arrays.  An .npz input is read as
 * usual.  Returns 0, or NPZS_E_BAD_CALL (sticky, rule CALL.sequence) after the first byte or
 * with NPZS_LENIENT_NPY_TRAILING. */
int npzs_npy_sequence(npzs_parser *p);
/*  Returns   0, or NPZS_E_BAD_CALL.
 *  Errors    CALL.sequence (sticky): after the first byte, or with NPZS_LENIENT_NPY_TRAILING.
 *  Lifetime  npzs_reset() keeps it.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.2.0. */

/* The events the caller wants (added in 0.4.0): a mask of NPZS_EV_BIT(type) bits.  The others
 * are not delivered: the parser does everything it does for them (checks, CRC-32, the caller's
 * destination of npzs_data_into) and goes on as if the caller had taken them, so a validator that
 * reads no array bytes asks for NPZS_EV_BIT(NPZS_EV_MEMBER_END) alone (which names the member and
 * points at its header) and gets one event a member instead of four or more.  END is always
 * delivered, and errors, offsets and the verdict never depend on the mask.  The default is
 * NPZS_EV_ALL; npzs_reset() keeps the mask; npzs_par_next() delivers the same events (and
 * npzs_par_skip_data() clears DATA and BLOB from it).  May be
 * called at any time: it decides the events emitted from then on.  Returns 0, or
 * NPZS_E_BAD_CALL (sticky, rule CALL.events) for a bit that names no event. */
#define NPZS_EV_BIT(type) (1u << (type))
#define NPZS_EV_ALL 0x7Eu
int npzs_events(npzs_parser *p, unsigned mask);
/*  Returns   0, or NPZS_E_BAD_CALL.
 *  Errors    CALL.events (sticky): a bit that names no event.
 *  Lifetime  npzs_reset() keeps the mask.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.4.0. */

/* Declare the end of the input.  Later npzs_next() calls emit the remaining
 * events and END, or fail with truncated. */
void npzs_finish(npzs_parser *p);
/*  Returns   nothing (the verdict comes from the next npzs_next()).
 *  Errors    none here; an input that ends inside a record is truncated at the next call.
 *  Lifetime  none.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *            With a helper attached it is told to the helper, which tells the parser once it has
 *            fed it every byte it holds.
 *  Added in  0.1.0; through an attached helper 0.8.0. */

/* ---- error details (valid after a negative return) ------------------------ */
int npzs_error(const npzs_parser *p);                 /* sticky code, 0 if none */
uint64_t npzs_error_offset(const npzs_parser *p);     /* absolute input offset */
const char *npzs_error_message(const npzs_parser *p); /* static text, finer than strerror */
/* The rule the input broke (added in 0.2.0): a stable id "GROUP.check", e.g. "S-HDR-WS.after-dict"
 * or "ZIP-DEFLATE.unterminated"; NULL when there is no error.  Groups that start with "S-" are
 * rules stricter than some NumPy (SECURITY.md lists each); LIMIT.* are the limits, NOMEM.* and
 * CALL.* allocation failures and API misuse.  Lifetime: static text. */
const char *npzs_error_rule(const npzs_parser *p);
/* What the error found, in words, for a policy rejection (added in 0.5.0): "'labels' has N = 9 where
 * 'images' bound it to 10", "dtype '<f8' is not allowed (the policy allows <f4)"; NULL for the
 * other errors (their message says it all).  Valid until the next call on the parser.  Whole
 * UTF-8 and safe to print: a name in it is quoted with at most 64 bytes of its text, controls, bidi
 * controls, line separators and surrogates as \xHH or \uHHHH escapes, a backslash or quote after
 * a backslash, cut after a whole character ("..." then; README.md "Names in the output"). */
const char *npzs_error_detail(const npzs_parser *p);
/* What the user can do about the error, in plain words ("the file was cut short: download it
 * again", "raise --max-total-bytes"), or NULL (added in 0.5.0; static text). */
const char *npzs_error_hint(const npzs_parser *p);
/* The rules (added in 0.5.0): for i from 0 to npzs_rule_count() - 1, the rule's id and its
 * message (NULL past the end); the hint of a rule id (NULL for none).  Static text. */
size_t npzs_rule_count(void);
const char *npzs_rule_id(size_t i);
const char *npzs_rule_message(size_t i);
const char *npzs_rule_hint(const char *rule);
/* Member the error belongs to: -1 when none (archive structure, central directory): print it
 * only when it is >= 0 (a .npy's array is member 0). */
long npzs_error_member(const npzs_parser *p);
/* Name of that member (raw bytes, not NUL-terminated) or NULL; valid until npzs_free. */
const char *npzs_error_member_name(const npzs_parser *p, size_t *len);
/* Position inside the member's (uncompressed) content where the error was found,
 * or UINT64_MAX when the error is not inside a member's content. */
uint64_t npzs_error_content_offset(const npzs_parser *p);
/*  Returns   the error accessors above: the sticky code (0 for none; NPZS_E_BAD_CALL for a NULL
 *            parser), its input offset, message, rule id, detail, hint, member index (-1 for none),
 *            that member's name and the offset in its content (UINT64_MAX for none); the name,
 *            detail and hint may be NULL.
 *  Errors    none.
 *  Lifetime  the message, rule and hint are static text; the detail until the next call on the
 *            parser; the member's name until npzs_free().
 *  Threads   any thread that does not call the parser at the same time.
 *  Added in  npzs_error, _offset, _message, _member, _member_name, _content_offset 0.1.0; _rule
 *            0.2.0; _detail, _hint and the rules' table 0.5.0. */

/* The numbers of a rejection a limit decided: *name the limit ("max_members", "max_total_bytes",
 * "max_memory", "max_name_len", "max_extra_len", "max_fields", "max_depth", "max_header_size",
 * "max_ndim"), *value its value in force and *needed what the input needed or declared in the
 * limit's unit (members, bytes, fields, levels, characters, dimensions).  Where the input stops
 * being read at the limit, *needed is what it had shown: one more than the limit for an inflated
 * member longer than it declared, a field or a dimension past the limit; a quarter of a v3
 * header's bytes (its fewest characters).  Any pointer may be NULL. */
int npzs_error_limit(const npzs_parser *p, const char **name, uint64_t *value, uint64_t *needed);
/*  Returns   1 for an error `limit` (every LIMIT.* rule), `header_too_large` (HDR-SIZE.*:
 *            max_header_size) or `bad_shape` for more dimensions than max_ndim (S-NDIM.*); 0
 *            otherwise (*name NULL, the numbers 0), a NULL parser too.
 *  Errors    none.
 *  Lifetime  *name is static text.
 *  Threads   any thread that does not call the parser at the same time.
 *  Added in  0.8.0. */

const char *npzs_error_name(int code); /* "truncated", ... ; "unknown" otherwise */
const char *npzs_strerror(int code);   /* default message */
/*  Returns   the code's name and default message; "unknown", "unknown error" for a value that is
 *            none.
 *  Errors    none.
 *  Lifetime  static text.
 *  Threads   any.
 *  Added in  0.1.0. */

/* The input's format once its first byte was seen (NPZS_FORMAT_UNKNOWN before). */
npzs_format npzs_format_of(const npzs_parser *p);
/* Bytes consumed but never parsed: after a .npy with NPZS_LENIENT_NPY_TRAILING (added in 0.2.0). */
uint64_t npzs_ignored_bytes(const npzs_parser *p);
/* Bytes the parser holds through the allocator hooks now, itself included (added in 0.2.0). */
uint64_t npzs_memory(const npzs_parser *p);
/* Total input bytes consumed so far (taken from the npzs_in buffers: a deflated member's bytes
 * may be taken, and counted, before they are inflated; when such a member's deflate stream ends
 * before its compressed size, the count steps back to the stream's end and the member is
 * rejected there). */
uint64_t npzs_consumed(const npzs_parser *p);
/*  Returns   the input's format, the bytes ignored, the bytes held now, the bytes consumed (0 or
 *            NPZS_FORMAT_UNKNOWN for a NULL parser).
 *  Errors    none.
 *  Lifetime  none.
 *  Threads   any thread that does not call the parser at the same time.
 *  Added in  npzs_format_of, npzs_consumed 0.1.0; npzs_ignored_bytes, npzs_memory 0.2.0. */
/* Name of the current state (for diagnostics and tests). */
const char *npzs_state_name(const npzs_parser *p);
/* For tools that trace a parse (added in 0.6.0), from the library's state table: the row the
 * parser is in, 0 .. npzs_state_count() - 1 (-1 for NULL); a row's name (as npzs_state_name
 * gives it), and the part of a ZIP record whose bytes the state takes (NPZS_REC_*: the local
 * header's fixed part, its name, ...; NPZS_REC_NONE when its bytes are no record's), with the
 * part's words ("local header", ...). */
#define NPZS_RECORD_MAP(X) \
    X(NONE, "") \
    X(SIG, "signature") \
    X(LFH, "local header") \
    X(LFH_NAME, "local header name") \
    X(LFH_EXTRA, "local header extra fields") \
    X(DD, "data descriptor") \
    X(CDH, "central entry") \
    X(CDH_NAME, "central entry name") \
    X(CDH_EXTRA, "central entry extra fields") \
    X(CDH_COMMENT, "central entry comment") \
    X(Z64_EOCD, "zip64 end record") \
    X(Z64_LOC, "zip64 locator") \
    X(EOCD, "end record") \
    X(EOCD_COMMENT, "archive comment")
typedef enum npzs_record_part {
#define NPZS_X_REC(name, label) NPZS_REC_##name,
    NPZS_RECORD_MAP(NPZS_X_REC)
#undef NPZS_X_REC
        NPZS_REC__END
} npzs_record_part;
int npzs_state_index(const npzs_parser *p);
int npzs_state_count(void);
const char *npzs_state_id(int state);
npzs_record_part npzs_state_record(int state);
const char *npzs_record_label(npzs_record_part part);
/*  Returns   the state table's rows and words: the row the parser is in (-1 for NULL), how many
 *            rows, a row's name (NULL past the end), the record part its bytes belong to, and the
 *            part's words.
 *  Errors    none.
 *  Lifetime  static text.
 *  Threads   any (the parser's row: a thread that does not call it at the same time).
 *  Added in  npzs_state_name 0.1.0; the others 0.6.0. */

/* ---- content hashes (added in 0.5.0) ----------------------------------------------------------
 * With NPZS_HASH_SHA256, every MEMBER_END carries the SHA-256 of the array's data bytes (a blob's:
 * of its bytes), computed as they stream: the same for np.save, np.savez, np.savez_compressed
 * and an archive written to a pipe.  Call before the first byte (npzs_reset keeps it); 0 turns it
 * off.  Returns 0, or NPZS_E_BAD_CALL (sticky, rule CALL.hash) after the first byte, for an
 * unknown bit, or when this library was built without SHA-256 (npzs_sha256_built()). */
#define NPZS_HASH_SHA256 1u
int npzs_hash(npzs_parser *p, unsigned what);
/*  Returns   0, or NPZS_E_BAD_CALL.
 *  Errors    CALL.hash (sticky): after the first byte, an unknown bit, or no SHA-256 in this build.
 *  Lifetime  npzs_reset() keeps it.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.5.0. */
/* 1 when this library computes SHA-256, else 0: it was built with OpenSSL's headers and its
 * libcrypto (libcrypto.so.3 for OpenSSL 3) could be loaded.  libcrypto is not linked: the first
 * call that needs it (this one, npzs_hash, a policy that hashes or pins a value) loads it with
 * dlopen, once for the process (thread-safe; never unloaded), so a program that never hashes
 * never maps it.  A program that will forbid opening files (a seccomp sandbox) and wants hashing
 * calls this first. */
int npzs_sha256_built(void);
/*  Returns   1 when SHA-256 can be computed, else 0.
 *  Errors    none.
 *  Lifetime  libcrypto, once loaded, stays for the process.
 *  Threads   any (the first load is thread-safe).
 *  Added in  0.5.0. */

/* ---- policies (added in 0.5.0) -----------------------------------------------------------------
 * A policy declares the files a caller accepts, in JSON (README.md, "Policies"): the members (keys
 * and glob patterns, required or optional, others allowed or not, blobs allowed or not), per
 * member the dtypes, byte order, order, shape (with dimension names shared between members),
 * element counts, bytes, the values (no NaN, infinity or NaT, a range) and a pinned SHA-256 (of one
 * exact array: the spec gives its dtype.str, shape and order with the hash), and caps
 * on the members and bytes in all.  The parser enforces it while the bytes arrive: a violation is
 * an error like any other (NPZS_E_POLICY, a rule POLICY.*, npzs_error_detail() in words), found at
 * the earliest byte that decides it (a dtype or shape at its header, before any data byte; a NaN
 * at its element; a required member at the central directory).  Without a policy nothing
 * changes; with one, an input is accepted only if it is accepted without it, and every error it
 * has without the policy is reported the same unless a policy violation comes first.
 *
 * npzs_policy_new compiles the len bytes of JSON at text (UTF-8, at most 1 MiB) into a policy
 * object allocated through alloc (NULL: malloc); it is read-only from then on and may be used by
 * any number of parsers at once, in any thread.  NULL on a fault, described in *err when err is
 * not NULL: the line and column of the text, and the field ("members.images.shape[1]"). */
typedef struct npzs_policy npzs_policy;
typedef struct npzs_policy_error {
    uint32_t line, column; /* 1-based; 0 when the fault has no place in the text (out of memory) */
    uint64_t offset;       /* the byte offset in the text */
    char path[160];        /* the field, "" for the whole document (keys as text, as in npzs_error_detail) */
    char message[160];     /* whole UTF-8, names quoted as in npzs_error_detail */
} npzs_policy_error;
npzs_policy *npzs_policy_new(const char *text, size_t len, const npzs_allocator *alloc, npzs_policy_error *err);
/*  Returns   the compiled policy, or NULL with the fault in *err (when err is not NULL).
 *  Errors    a fault of the text (line, column, path, message), or out of memory (line 0).
 *  Lifetime  text is not kept; free the policy with npzs_policy_free() after every parser using it
 *            is done.
 *  Threads   compile in any thread; the policy is read-only and shared by any number of parsers in
 *            any threads.
 *  Added in  0.5.0. */
/* Release a policy (NULL is fine); no parser may use it any more. */
void npzs_policy_free(npzs_policy *pol);
/*  Returns   nothing.
 *  Errors    none.
 *  Lifetime  no parser may use pol any more.
 *  Threads   after every parser using it is done.
 *  Added in  0.5.0. */
/* Enforce pol on the parser's input (NULL: no policy), before its first byte; npzs_reset keeps it.
 * The policy must outlive its use.  Its "hash" or a pinned value turns hashing on.  Returns 0,
 * NPZS_E_BAD_CALL (sticky, rule CALL.policy) after the first byte, or NPZS_E_NOMEM. */
int npzs_policy_use(npzs_parser *p, const npzs_policy *pol);
/*  Returns   0, NPZS_E_BAD_CALL, or NPZS_E_NOMEM.
 *  Errors    CALL.policy (sticky): after the first byte.
 *  Lifetime  pol must outlive its use; npzs_reset() keeps it.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.5.0. */

/* The parallel helper (npzs_par_*, npzs_pool_*) has its own header, included here for the
 * programs written against 0.5.0 and earlier. */
#ifdef __cplusplus
}
#endif
#include "npzstream_par.h"
#endif /* NPZSTREAM_H */
