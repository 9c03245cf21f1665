/*
 * npzstream_vlen.h -- streaming, validating parser for one ragged-array chunk
 * in the numcodecs VLenBytes framing (Zarr `vlen-bytes` / `vlen-ndarray`):
 *
 *     u32 LE count, then count times:  u32 LE byte length, that many bytes
 *
 * Each element is the raw little-endian C-order data of an array whose shape
 * follows a pattern with one variable leading dimension, [null, d1, ..., dk];
 * the leading extent is n = length / (itemsize * d1 * ... * dk).  The chunk is
 * the decoded chunk (after any compressor).
 *
 * Same style as npzstream.h: the caller pushes bytes (npzs_in), pulls events
 * one per call, errors are sticky negative npzs_error codes with an absolute
 * offset and a static message, limits and allocator hooks, no global state.
 *
 *     npzs_vlen_spec spec;
 *     size_t at; const char *why;
 *     int rc = npzs_vlen_spec_parse(&spec, "float32", "null,2", &at, &why);
 *     if (rc < 0) { reject: rc, at (character in the dtype or pattern), why }
 *     npzs_vlen_parser *p = npzs_vlen_new(&spec, NULL, NULL);
 *     npzs_in in = { buf, n, 0 };
 *     npzs_vlen_event ev;
 *     for (;;) {
 *         rc = npzs_vlen_next(p, &in, &ev);
 *         if (rc == NPZS_EVENT)           { handle(&ev); if (ev.type == NPZS_VLEN_EV_END) break; }
 *         else if (rc == NPZS_NEED_INPUT) { refill in, or npzs_vlen_finish(p) at the end }
 *         else                            { reject: rc, npzs_vlen_error_offset(p), ..._message(p) }
 *     }
 *     npzs_vlen_free(p);
 *
 * Events:  CHUNK_BEGIN ( ELEMENT_BEGIN DATA* ELEMENT_END ){count} END
 *
 * Guarantees (as for npzs_parser)
 *   - Any split of the input gives the same events (DATA boundaries aside: the
 *     concatenated DATA bytes of an element are identical), the same verdict,
 *     error code and error offset.
 *   - Never reads outside [src+pos, src+size), keeps no pointer into caller
 *     memory between calls; DATA events are zero copy (point into the caller's
 *     buffer; valid as long as that buffer).  Other pointers in an event are
 *     valid until the next call on the same parser.
 *   - Memory O(1): one allocation of a fixed size (npzs_vlen_new), whatever
 *     the count or the lengths.  Time linear in the input.
 *   - Progress: each call consumes input, emits an event, returns
 *     NPZS_NEED_INPUT with the input used up, or fails.  DATA chunks are never
 *     empty.
 *   - Errors are sticky.  END is the verdict: it is emitted only after
 *     npzs_vlen_finish() and after checking that no byte follows the last
 *     element.
 *
 * Rejections (code, offset):
 *   truncated      the input ends inside the count, inside a length field or
 *                  inside an element's bytes, or before all count elements:
 *                  offset of the incomplete field / of the length field of the
 *                  incomplete element / of the missing element (= input length)
 *   size_mismatch  an element length that is not a multiple of the row size
 *                  (itemsize * d1 * ... * dk): offset of its length field
 *   trailing_data  bytes after the last element: offset of the first one
 *   limit          count > max_elements (offset 0); an element longer than
 *                  max_element_bytes (its length field); a chunk whose declared
 *                  structure needs more than max_total_bytes (the field that
 *                  made it so: 0 for the count, else the length field)
 *   bad_call       API misuse (NULL parser/event, pos > size, src NULL)
 *   nomem          (only from npzs_vlen_new, which then returns NULL)
 * Configuration (npzs_vlen_spec_parse; offset = character in the string):
 *   bad_shape      a pattern that is empty or malformed, has no variable
 *                  dimension, more than one, or one that is not leading; a
 *                  fixed dimension of 0; more than NPZS_VLEN_MAX_NDIM dims
 *   size_overflow  itemsize * d1 * ... * dk does not fit 2^63
 *   NPZS_E_VLEN_BAD_DTYPE  a dtype that is not one of the supported names
 */
#ifndef NPZSTREAM_VLEN_H
#define NPZSTREAM_VLEN_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- error codes added by this module (values from -100 downwards) -------- */
#define NPZS_VLEN_ERROR_MAP(X) X(BAD_DTYPE, -100, "bad_dtype", "unsupported or malformed dtype")

enum npzs_vlen_error {
#define NPZS_VLEN_X_ENUM(id, num, name, msg) NPZS_E_VLEN_##id = (num),
    NPZS_VLEN_ERROR_MAP(NPZS_VLEN_X_ENUM)
#undef NPZS_VLEN_X_ENUM
};

/* Name / default message of any code: this module's codes and npzstream.h's. */
const char *npzs_vlen_error_name(int code);
const char *npzs_vlen_strerror(int code);
/*  Returns   the code's name and message; "unknown" for a value that is none.
 *  Errors    none.
 *  Lifetime  static text.
 *  Threads   any.
 *  Added in  0.1.0. */

/* ---- configuration ------------------------------------------------------- */
#define NPZS_VLEN_MAX_NDIM 32 /* dimensions of an element, including the variable one */

typedef struct npzs_vlen_spec {
    char dtype[8];                     /* NumPy's dtype.str: "|b1", "|i1", "<i2", ..., "<f4", "<c16" */
    uint32_t itemsize;                 /* 1, 2, 4, 8 or 16 */
    uint32_t ndim;                     /* 1 .. NPZS_VLEN_MAX_NDIM, the variable dimension included */
    uint64_t dims[NPZS_VLEN_MAX_NDIM]; /* dims[0] = 0 (variable), dims[1..ndim-1] >= 1 */
    uint64_t row_bytes;                /* itemsize * dims[1] * ... * dims[ndim-1] */
} npzs_vlen_spec;

/* Fill *spec from a dtype and a shape pattern (NUL-terminated strings).
 *   dtype:   bool, int8, int16, int32, int64, uint8, uint16, uint32, uint64,
 *            float16, float32, float64, complex64, complex128, or NumPy's
 *            little-endian type string ("<f4", "|b1", "<i1" or "|u1", ...).
 *            Big-endian and native ('=') strings are refused.
 *   pattern: comma-separated dimensions, optionally in [ ], spaces allowed
 *            around tokens: "null,2", "[null, 3, 4]", "null".  Exactly one
 *            `null`, and it must be first; the others are decimal integers
 *            >= 1 without sign or leading zeros.
 * Returns 0, or a negative code (NPZS_E_VLEN_BAD_DTYPE, NPZS_E_BAD_SHAPE,
 * NPZS_E_SIZE_OVERFLOW, NPZS_E_BAD_CALL for NULL arguments) with *err_at set
 * to the offending character (in dtype for BAD_DTYPE, in pattern otherwise)
 * and *err_msg to a static message; err_at and err_msg may be NULL. */
int npzs_vlen_spec_parse(npzs_vlen_spec *spec, const char *dtype, const char *pattern, size_t *err_at,
                         const char **err_msg);
/*  Returns   0, or -1 with *err_at and *err_msg naming the fault (when not NULL).
 *  Errors    a dtype or pattern this parser cannot read.
 *  Lifetime  spec holds no pointer into dtype or pattern.
 *  Threads   any.
 *  Added in  0.1.0. */

/* ---- limits ---------------------------------------------------------------
 * Fill with npzs_vlen_limits_default(), then change what you need. */
typedef struct npzs_vlen_limits {
    uint32_t max_elements;      /* count (default 2^32-1: only the bytes bound it) */
    uint32_t max_element_bytes; /* byte length of one element (default 2^32-1) */
    uint64_t max_total_bytes;   /* bytes of the whole chunk, framing included
                                   (default 2^40; at least 4).  Checked against
                                   what the count and lengths declare, before
                                   the bytes arrive. */
} npzs_vlen_limits;

void npzs_vlen_limits_default(npzs_vlen_limits *lim);
/*  Returns   nothing (lim filled).
 *  Errors    none.
 *  Lifetime  none.
 *  Threads   any.
 *  Added in  0.1.0. */

/* ---- events ---------------------------------------------------------------- */
typedef enum npzs_vlen_event_type {
    NPZS_VLEN_EV_CHUNK_BEGIN = 1,   /* count */
    NPZS_VLEN_EV_ELEMENT_BEGIN = 2, /* index, nbytes, ndim, shape (inferred) */
    NPZS_VLEN_EV_DATA = 3,          /* index, data, len, pos, zero_copy */
    NPZS_VLEN_EV_ELEMENT_END = 4,   /* index, nbytes, crc32 */
    NPZS_VLEN_EV_END = 5            /* count, total_bytes */
} npzs_vlen_event_type;

typedef struct npzs_vlen_event {
    npzs_vlen_event_type type;
    uint64_t offset;       /* absolute input offset: CHUNK_BEGIN 0; ELEMENT_BEGIN its
                               length field; DATA data[0]; ELEMENT_END the byte after
                               the element; END the input length */
    uint32_t count;        /* CHUNK_BEGIN, END: number of elements */
    uint32_t index;        /* ELEMENT_*, DATA: 0-based element index */
    uint32_t nbytes;       /* ELEMENT_BEGIN, ELEMENT_END: element byte length */
    uint32_t ndim;         /* ELEMENT_BEGIN: spec ndim */
    const uint64_t *shape; /* ELEMENT_BEGIN: ndim entries, shape[0] inferred */
    const uint8_t *data;   /* DATA: len > 0 bytes */
    size_t len;
    uint32_t pos;         /* DATA: offset of data[0] in the element */
    int zero_copy;        /* DATA: 1 (points into the caller's npzs_in buffer) */
    uint32_t crc32;       /* ELEMENT_END: CRC-32 (zlib) of the element bytes */
    uint64_t total_bytes; /* END: sum of the element byte lengths */
} npzs_vlen_event;

typedef struct npzs_vlen_parser npzs_vlen_parser;

/* Create a parser for one chunk.  spec must come from npzs_vlen_spec_parse();
 * lim and alloc may be NULL (defaults); all are copied.  Returns NULL when the
 * allocation fails, or spec or a limit is invalid. */
npzs_vlen_parser *npzs_vlen_new(const npzs_vlen_spec *spec, const npzs_vlen_limits *lim, const npzs_allocator *alloc);
/* Start over for another chunk with the same spec and limits (clears errors). */
void npzs_vlen_reset(npzs_vlen_parser *p);
void npzs_vlen_free(npzs_vlen_parser *p);
/*  Returns   npzs_vlen_new: the parser, or NULL (out of memory, an invalid spec or limit).
 *  Errors    none recorded (there is no parser).
 *  Lifetime  spec, lim and alloc are copied; npzs_vlen_reset forgets the chunk and its error;
 *            npzs_vlen_free ends every pointer the parser gave.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.1.0. */

/* Advance.  NPZS_EVENT (*ev filled), NPZS_NEED_INPUT (in->pos == in->size: push
 * more, or npzs_vlen_finish()), NPZS_DONE (END delivered before), or a negative
 * code (sticky).  in may be NULL.  Bytes given after END are trailing_data. */
int npzs_vlen_next(npzs_vlen_parser *p, npzs_in *in, npzs_vlen_event *ev);
/* Declare the end of the input. */
void npzs_vlen_finish(npzs_vlen_parser *p);
/*  Returns   npzs_vlen_next: NPZS_EVENT, NPZS_NEED_INPUT, NPZS_DONE, or a negative code (sticky).
 *  Errors    every framing fault with its code, offset and element (npzs_vlen_error_*).
 *  Lifetime  no pointer into in is kept between calls; an event's pointers are valid until the next
 *            call.
 *  Threads   one thread at a time per parser (parsers are independent: any number in any threads).
 *  Added in  0.1.0. */

int npzs_vlen_error(const npzs_vlen_parser *p);                 /* sticky code, 0 if none */
uint64_t npzs_vlen_error_offset(const npzs_vlen_parser *p);     /* absolute input offset */
const char *npzs_vlen_error_message(const npzs_vlen_parser *p); /* static text */
long npzs_vlen_error_element(const npzs_vlen_parser *p);        /* element index, or -1 (count, trailing) */
uint64_t npzs_vlen_consumed(const npzs_vlen_parser *p);         /* input bytes consumed */
/*  Returns   the sticky code (0 for none), its offset, message, element (-1 for none), the bytes
 *            consumed.
 *  Errors    none.
 *  Lifetime  the message is static text.
 *  Threads   any thread that does not call the parser at the same time.
 *  Added in  0.1.0. */

/* The numbers of a `limit` rejection: *name the limit ("max_elements", "max_element_bytes",
 * "max_total_bytes": npzs_vlen_limits' fields), *value its value in force and *needed what the
 * chunk declared in its unit (elements; bytes of the element; bytes of the chunk, framing
 * included, as far as the count and the lengths so far declare it).  Any pointer may be NULL. */
int npzs_vlen_error_limit(const npzs_vlen_parser *p, const char **name, uint64_t *value, uint64_t *needed);
/*  Returns   1 for a `limit` error (its numbers filled); 0 otherwise (*name NULL, the numbers 0), a
 *            NULL parser too.
 *  Errors    none.
 *  Lifetime  *name is static text.
 *  Threads   any thread that does not call the parser at the same time.
 *  Added in  0.8.0. */

#ifdef __cplusplus
}
#endif
#endif /* NPZSTREAM_VLEN_H */
