/* handle.h -- the parser as a handle: its services to the sources that do not see its layout
 * (internal.h).  The duplicate-name table (zip/names.c) and the .npy header parser (npy/npyhdr.c)
 * include this and their own part (members.h, header.h), never internal.h (each refuses it, and
 * `make purity` checks their include trees): npzs_parser is an incomplete type for them, which
 * they pass back to these functions and never look into.  Declarations only: the services are
 * above, in core/, which includes internal.h.  The proof analyses them so, over a
 * re-statement of these services (prove/stubs.c). */
#ifndef NPZS_HANDLE_H
#define NPZS_HANDLE_H

#include <stddef.h>
#include <stdint.h>

#include "npzstream.h"

/* core/mem.c: allocation through the caller's hooks, counted (npzs_memory) and capped by
 * max_memory; NULL when either refuses (npzs__fail with NPZS_E_NOMEM then reports which). */
void *npzs__alloc(npzs_parser *p, size_t n);
void *npzs__alloc0(npzs_parser *p, size_t n); /* npzs__alloc, zeroed */
void npzs__free(npzs_parser *p, void *ptr);
/* A buffer grown over these: core/buffer.h. */

/* core/err.c: record the first error (an error is sticky): its code, absolute offset and rule
 * (enum npzs_rule, which gives the message).  Returns the code of the error recorded (the
 * first), which is < 0. */
int npzs__fail(npzs_parser *p, int code, uint64_t off, int rule);
/* The same at offset coff of the member's content. */
int npzs__fail_content(npzs_parser *p, int code, uint64_t coff, int rule);
/* What the input needs of the limit whose check fails next (bytes, members, fields, levels: the
 * limit's unit); npzs__fail keeps it with the limit's name and value (npzs_error_limit). */
void npzs__limit_need(npzs_parser *p, uint64_t n);

#endif
