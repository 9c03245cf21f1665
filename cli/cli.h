/* cli.h -- what the npzstream commands share: options (opts.c), input (io.c).  Where output goes
 * is output.h's; what is printed of an input, the report's (report/). */
#ifndef NPZS_CLI_H
#define NPZS_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "npzstream.h"
#include "../report/report.h"

typedef struct opts {
    npzs_limits lim;
    uint64_t feed;
    unsigned jobs;        /* -j N: deflated members inflated by N worker threads (0, 1: none) */
    uint64_t jobs_memory; /* --jobs-memory: what the helper may hold (0: 128 MiB a worker) */
    npzs_policy *policy;  /* --policy FILE, compiled */
    int sha256;           /* --sha256: every member's SHA-256 */
    unsigned parallel;    /* -P N: check or ls N files at once (0, 1: one at a time) */
} opts;

extern const char EXIT_HELP[];
/* --help's text of the shared options: the library's limits table, then the rest. */
const char *limits_help(void);
void limits_print(FILE *f, int man); /* `help limits [--man]` */
/* A decimal number, digits only (no sign, no space); 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
void opts_init(opts *o);
void opts_free(opts *o);
/* A limit or lenient flag at argv[*i] ("--flag N" or "--flag=N").  Returns 1 if it was one (and
 * *i advanced past its value), 0 if argv[*i] is not one, -1 on a bad value (message printed). */
int parse_limit(opts *o, int argc, char **argv, int *i);
/* A parser with the options' limits; NULL with the reason on stderr. */
npzs_parser *new_parser(const opts *o);
/* The same for the files of a batch: the thread's parser of the last file, reset, when there is
 * one; give it back with parser_done(); batch_end() releases what the thread kept. */
npzs_parser *batch_parser(const opts *o);
void parser_done(npzs_parser *p, const opts *o);
void batch_end(void);
/* Is a member's data read by more than the CRC-32: by the command (data: it reads the DATA and
 * BLOB events, as extract writes them), or by the parser for --sha256 or a policy's value checks
 * and hashes?  When it is not, the -j N helper keeps only each member's header
 * (npzs_par_skip_data) and the rest of a regular file may be mapped (io.c, drive). */
int data_read(const opts *o, int data);
/* The -j N helper over p (data: the command reads the arrays' bytes), kept with p; NULL when its
 * workers cannot be made.  parser_free() releases a parser and its helper. */
npzs_par *batch_helper(npzs_parser *p, const opts *o, int data);
void parser_free(npzs_parser *p);
void cli_read_buffer_free(void);
/* The file drive() mapped for the thread's helper (-j N), unmapped: call once the helper's jobs
 * are over (its parser reset, or the helper freed). */
void cli_unmap(void);
int cli_parse_size(const char *s, uint64_t *v); /* digits and an SI or IEC suffix (K, Mi, ...) */
extern volatile sig_atomic_t cli_interrupted; /* a signal extract catches: its number (io.c) */

/* What check and ls run over: FILEs and --files-from, with the output mode. */
typedef struct batch {
    opts op;
    int json, jsonl, quiet, null_sep, sequence;
    const char *files_from;  /* a list of names (one a line, or NUL-separated with -0); "-": stdin */
    const char **paths;
    size_t npaths;
} batch;
/* Options of check and ls.  Returns -1 to go on, or the exit status (0 after --help, 2 on a
 * usage error, the message printed). */
int batch_parse(int argc, char **argv, batch *b, void (*help)(FILE *), void (*bad_usage)(FILE *));
void batch_free(batch *b);
/* One file: path is a name, or "-"/NULL for stdin.  Returns 0 accepted, 1 rejected, 2 error. */
typedef int (*file_fn)(const char *path, const batch *b, void *ctx);
/* Every FILE, then every name of --files-from (stdin alone when there is neither); the worst
 * status of all (2 > 1 > 0). */
int batch_run(const batch *b, file_fn fn, void *ctx);

/* Called for every event; returns 0 to go on, -1 to stop with status 2 (it printed why). */
typedef int (*event_fn)(void *ctx, const npzs_event *ev);
/* Opens FILE, or stdin for NULL or "-" (label "-").  Returns the fd (0 for stdin) or -1 with
 * the reason in err. */
int cli_open(const char *path, const char **label, char *err, size_t errlen);
/* Reads fd to the verdict, pushing at most feed bytes per call (0: no limit).  Returns 0
 * accepted, 1 rejected, 2 I/O error (its text in err when err is given, else on stderr), out of
 * memory or fn() stopped. */
/* data: 0 when the command reads no DATA or BLOB bytes (check, ls): with -j the workers then keep
 * only each member's header (npzs_par_skip_data) and no DATA or BLOB event comes, and the rest of
 * a regular file may be mapped (data_read); 1 (extract): the file is read, and the bytes a DATA
 * event points at are those every check read. */
int drive(npzs_parser *p, int fd, const char *label, const opts *op, int data, event_fn fn, void *ctx, char *err,
          size_t errlen);
/* Open FILE (or stdin) and make a parser with the options' limits; NULL (all released, the reason
 * said on stderr) when either fails. */
npzs_parser *start(const char *path, const opts *op, const char **label, int *fd);

/* One FILE of a batch (check, ls): file_begin opens it and takes the batch's parser (with
 * --sequence): -1 to go on, or the exit status, the failure said (io_failure: on stderr, and as
 * JSON with --json or --jsonl); file_end flushes the output, frees the members' table and gives
 * the file and the parser back. */
typedef struct file_run {
    npzs_parser *p;
    int fd;
    const char *label;
} file_run;
int file_begin(const char *path, const batch *b, file_run *r, char *err, size_t errlen);
void file_end(file_run *r, const batch *b, out *o);
int io_failure(const batch *b, const char *label, const char *why);

/* the commands: argc/argv are the arguments after the command's name */
void usage(FILE *f);
void usage_check(FILE *f);
void usage_ls(FILE *f);
void usage_extract(FILE *f);
int cmd_check(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_vlen(int argc, char **argv);
void usage_trace(FILE *f);
int cmd_trace(int argc, char **argv);
void usage_refs(FILE *f);
int cmd_refs(int argc, char **argv);

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
/* The same; a read error's text goes to err (when not NULL) instead of stderr. */
int cli_read_loop_err(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push,
                      cli_eof_fn at_eof, void *ctx, char *err, size_t errlen);

#endif
