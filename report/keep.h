/* keep.h -- the kept-going report (--keep-going): the members the inventory walker lists past the
 * strict parser's (src/inv/inv.c, npzstream_inv.h), each with its status and its own error, printed
 * after those the parser completed.  Members are matched by order: the walker meets the same local
 * headers as the parser, so the parser's n completed members are the walker's first n. */
#ifndef NPZS_REPORT_KEEP_H
#define NPZS_REPORT_KEEP_H

#include <stddef.h>

#include "npzstream.h"
#include "npzstream_inv.h"
#include "parts.h"
#include "write.h"

/* The walker's member i with its error as a report_error (the file's, p's, for the member the
 * parser stopped in: rejected and i the first past its completed ones). */
void keep_error(report_error *e, const npzs_inv *v, size_t i, const npzs_parser *p, size_t from);
/* ", {member}..." for the walker's members from `from` on (after `from` strict members were printed;
 * p: the rejected parser, NULL when it accepted).  A rejected .npy (no walker members) is one
 * member with the file's error. */
void json_kept(wbuf *f, const npzs_inv *v, size_t from, const npzs_parser *p);
/* The same as text lines ("  kept going: NAME: ..."). */
void text_kept(wbuf *f, const npzs_inv *v, size_t from, const npzs_parser *p);
/* "inventory": {"zip", "complete" (the end record was reached), "members", "error" (where the
 * listing stopped, or null)}, and the separator after it. */
void json_inventory(wbuf *f, const npzs_inv *v);

#endif
