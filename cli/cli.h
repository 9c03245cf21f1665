/* cli.h -- what the npzstream subcommands share (cli/npzstream.c). */
#ifndef NPZS_CLI_H
#define NPZS_CLI_H

#include <stdint.h>

#include "npzstream.h"

/* Hand the parser one slice of input.  Returns -1 when the slice was used up and more input is
 * needed, else the final status: 0 accepted, 1 rejected, 2 error. */
typedef int (*cli_push_fn)(void *ctx, npzs_in *in);
/* The end of the input was reached. */
typedef void (*cli_eof_fn)(void *ctx);

/* Read fd to the verdict in large pieces (a stdin pipe is enlarged where possible), pushing at
 * most feed bytes per call (0: no limit).  Returns the status from push(), or 2 on a read error.
 * prog names the command in messages ("npzstream", "npzstream vlen"). */
int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                  cli_eof_fn at_eof, void *ctx);

#endif
