/*
 * seam.c -- the parser's side of the seam (base/seam.h): a helper attached and detached, the end
 * of input it passes on, and what it may ask of the parser (its limits, hooks and events mask; a
 * member's output it holds, at an array's data; a bad call recorded as the parser's own).  The
 * one file of par/ that sees the parser's layout: the helper's files (par.c, scout.c, parbuf.c,
 * pool.c) reach the parser through these, the parser's own loop (npzs__seam_parse, npzs.c) and
 * the public API only.  The parser tells the helper the rest itself, through the seam's function
 * pointers: a member passed (zip/zip.c), an error (core/err.c), a reset (npzs.c).
 */
#include <string.h>

#include "../internal.h"

/* ---- a helper attached ---------------------------------------------------------------------- */

int npzs__seam_attach(npzs_parser *p, const npzs__seam *s) {
    if (p->seam.take || !s || !s->take) return -1;
    p->seam = *s;
    return 0;
}

void npzs__seam_detach(npzs_parser *p) {
    memset(&p->seam, 0, sizeof p->seam);
    if (p->inf.pre && p->state == NPZS_S_ZIP_DEFLATED) /* its bytes were the helper's: gone now */
        npzs__fail(p, NPZS_E_BAD_CALL, p->consumed, NPZS_R_CALL_PAR_FREE);
    p->inf.pre = NULL;
}

/* The end of input, once the helper has fed the parser all it holds (npzs_finish with none). */
void npzs__seam_finish(npzs_parser *p) {
    if (p) p->finished = 1;
}

/* ---- what the helper may ask ---------------------------------------------------------------- */

const npzs_limits *npzs__seam_limits(const npzs_parser *p) { return &p->lim; }
const npzs_allocator *npzs__seam_allocator(const npzs_parser *p) { return &p->al; }
unsigned npzs__seam_events(const npzs_parser *p) { return p->ev_user; }

int npzs__seam_data_block(const npzs_parser *p, npzs__pre **pre, uint64_t *head_len) {
    const npzs__content *c = &p->c;
    const npzs__pre *j = p->inf.pre;
    if (!npzs__content_at_data(p) || c->out) return -1;
    if (p->state != NPZS_S_ZIP_DEFLATED || !j || j->z || j->keep != j->len || !c->arr.info.nbytes) return 0;
    *pre = p->inf.pre;
    *head_len = c->head_len;
    return 1;
}

int npzs__seam_bad_call(npzs_parser *p, int rule) { return npzs__fail(p, NPZS_E_BAD_CALL, npzs__here(p), rule); }
