/* output.c -- where a command's output goes (stdout and stderr, or a -P thread's buffers), and
 * its lines on stderr.  What it prints of an input is the report's (report/). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "output.h"
#include "../report/report.h"

_Thread_local FILE *cli_stdout, *cli_stderr;

/* "PROG: " then a, then sep and b when b is not NULL (names: a file's, a member's, a key; printed
 * as text, safe_str's), then the rest of the line, fmt's. */
void cli_say(const char *prog, const char *a, const char *sep, const char *b, const char *fmt, ...) {
    wbuf w, *f = &w;
    wb_init(f, ERR);
    wb_s(f, prog);
    wb_s(f, ": ");
    safe_str(f, a, strlen(a));
    if (b) {
        wb_s(f, sep);
        safe_str(f, b, strlen(b));
    }
    va_list ap;
    va_start(ap, fmt);
    wb_vfmt(f, 1, fmt, ap);
    va_end(ap);
    wb_c(f, '\n');
    wb_flush(f);
}

/* The rejection on stderr (extract, whose stdout may be the member's bytes): npzstream: FILE:
 * REJECTED: code at offset N (member M): message[: detail] [RULE], then the hint. */
void error_line(const char *label, const npzs_parser *p) {
    wbuf w, *f = &w;
    wb_init(f, ERR);
    wb_s(f, "npzstream: ");
    safe_str(f, label, strlen(label));
    wb_s(f, ": REJECTED: ");
    text_rejection(f, p);
    wb_flush(f);
}
