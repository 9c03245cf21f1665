/* header.h -- the .npy header parser's part of the parser (npy/npyhdr.c): the buffers it keeps
 * from one header to the next, the array a parse fills, and the call that gives it both with the
 * limits it checks.  npyhdr.c sees the parser only through this and handle.h (the handle it
 * allocates and records errors through), never its layout; content.c makes the call
 * (npzs__hdr_of, internal.h). */
#ifndef NPZS_HEADER_H
#define NPZS_HEADER_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"
#include "handle.h"
#include "../base/base.h"

/* A pool of the header parser ("the pools" in npyhdr.c): chunks of NPZS_POOL_CHUNK bytes, found
 * through directory blocks of NPZS_POOL_DIR chunks, at most NPZS_POOL_TOP of those (a pool holds
 * at most 128 MiB).  Every block has a size fixed at compile time, so that each access is bounded
 * by a constant (SECURITY.md, "What is proven").  top: NULL until the parser's first header
 * (npzs__header_pools). */
enum { NPZS_POOL_CHUNK = 2048, NPZS_POOL_DIR = 256, NPZS_POOL_TOP = 256 };
typedef struct npzs__hpool {
    uint8_t ***top;
} npzs__hpool;

/* What the header parser keeps from one header, and one input, to the next (among the parser's
 * kept buffers: npzs_reset keeps them), each grown to the largest need yet and released by
 * npzs__header_release: its scratch (decoded strings and the UTF-8 copy of the descr), its pools
 * (the name list, the descr parser's stack of frames, at most 2 * max_depth + 1 and as many as the
 * nesting met, the structured dtype's tree while it is built: nodes, fields, shapes, type
 * strings), and the tree as published (one block: the API's arrays). */
typedef struct npzs__hkept {
    uint8_t *scratch;
    npzs__hpool names, frames, tnodes, tfields, tdims, tstrs;
    void *dt;
    size_t scratch_cap, dt_cap;
} npzs__hkept;

/* The array a parse fills (valid once it returned 0: info points into shape, dtype, scratch and
 * the published tree), and the last type string the fast header path met with what type_string
 * made of it (one input's: npzs_reset forgets it with the member's content). */
typedef struct npzs__harray {
    npzs_array_info info;
    uint64_t shape[NPZS_MAX_NDIM];
    char dtype[48];
    uint8_t type_memo[16];
    size_t type_memo_len;
    uint64_t type_memo_itemsize;
    char type_memo_dtype[48];
} npzs__harray;

/* One call of the header parser: what it is given of the parser. */
typedef struct npzs__hdr {
    npzs_parser *p;         /* the handle: allocation and the error recorder (handle.h) */
    const npzs_limits *lim; /* max_header_size, max_ndim, max_fields, max_depth, lenient */
    npzs__hkept *kept;
    npzs__harray *arr;
    uint64_t here; /* the input offset of the next byte: where an error that is no
                                   byte of the text is recorded (nomem of scratch, CALL.*) */
} npzs__hdr;

/* Parse the staged header text s[0, n) (after the preamble; text_off its first byte's content
 * offset): fills x->arr.  Returns 0, or < 0 with the error recorded on x->p. */
int npzs__parse_header(const npzs__hdr *x, const uint8_t *s, size_t n, int v3, uint64_t text_off);
/* The same with the path chosen (the tests compare the two): NPZS__HDR_AUTO is what
 * npzs__parse_header does (the exact-NumPy-text fast path, else the general parser);
 * NPZS__HDR_GENERAL the general parser only; NPZS__HDR_FAST the fast path only, which
 * returns NPZS__HDR_NOT_FAST, recording nothing, for a text it does not recognise. */
enum { NPZS__HDR_AUTO, NPZS__HDR_GENERAL, NPZS__HDR_FAST };
#define NPZS__HDR_NOT_FAST 1
int npzs__parse_header_mode(const npzs__hdr *x, const uint8_t *s, size_t n, int v3, uint64_t text_off, int mode);
/* The first chunk of each of the header parser's pools, made before every header is parsed (only
 * the first call allocates): 0, or < 0 with NOMEM recorded at text_off.  npzs__header_release
 * frees the pools and the published tree (npzs__content_release). */
int npzs__header_pools(const npzs__hdr *x, uint64_t text_off);
void npzs__header_release(const npzs__hdr *x);

#endif
