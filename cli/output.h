/* output.h -- where a command's output goes, and its lines on stderr. */
#ifndef NPZS_CLI_OUTPUT_H
#define NPZS_CLI_OUTPUT_H

#include <stdio.h>

#include "npzstream.h"

/* Where a command's output goes: stdout and stderr, or (check and ls with -P N, one file per
 * thread) the thread's buffers, written out in the input's order (batch.c). */
extern _Thread_local FILE *cli_stdout, *cli_stderr;
#define OUT (cli_stdout ? cli_stdout : stdout)
#define ERR (cli_stderr ? cli_stderr : stderr)

/* A line on stderr: "PROG: A[SEP B]" and the rest from fmt, the names A and B as text (safe_str). */
void cli_say(const char *prog, const char *a, const char *sep, const char *b, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* The rejection on stderr (extract, refs: stdout is the member's bytes or the references):
 * "npzstream: FILE: REJECTED: code at offset N (member M): message[: detail] [RULE]", the hint. */
void error_line(const char *label, const npzs_parser *p);

#endif
