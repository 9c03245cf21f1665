/* cli.h -- what the npzstream commands share: the options (opts.c), the input's bytes (io.c), one
 * input through a parser (run.c), the files of a batch (batch.c); and the commands themselves.
 * Where output goes is output.h's; what is printed of an input, the report's (report/). */
#ifndef NPZS_CLI_H
#define NPZS_CLI_H

#include <signal.h>
#include <stdint.h>
#include <stdio.h>

#include "npzstream.h"
#include "npzstream_inv.h"
#include "../report/report.h"

/* ---- opts.c: the options ---------------------------------------------------------------------- */

typedef struct opts {
    npzs_limits lim;
    uint64_t feed;
    unsigned jobs;        /* -j N: deflated members inflated by N worker threads (0, 1: none) */
    uint64_t jobs_memory; /* --jobs-memory: what the helper may hold (0: 128 MiB a worker) */
    npzs_policy *policy;  /* --policy FILE, compiled */
    int sha256;           /* --sha256: every member's SHA-256 */
    unsigned parallel;    /* -P N: check or ls N files at once (0, 1: one at a time) */
    int no_sandbox;       /* --no-sandbox: the command not confined (sandbox.h) */
} opts;

extern const char EXIT_HELP[];
/* --help's text of the shared options: the library's limits table, then the rest. */
const char *limits_help(void);
void limits_print(FILE *f, int man); /* `help limits [--man]` */
/* Whether the limits are in the range the library accepts (npzs_limits_check); if not, says
 * which flag is out of it on err (the field's name when no flag sets it) and returns 0. */
int limits_in_range(const npzs_limits *lim, FILE *err);
/* A decimal number, digits only (no sign, no space); 0 or -1. */
int cli_parse_u64(const char *s, uint64_t *v);
/* A size: digits and an optional suffix (K M G T P E, Ki Mi Gi Ti Pi Ei); 0 or -1. */
int cli_parse_size(const char *s, uint64_t *v);
void opts_init(opts *o);
void opts_free(opts *o);
/* A limit or lenient flag at argv[*i] ("--flag N" or "--flag=N").  Returns 1 if it was one (and
 * *i advanced past its value), 0 if argv[*i] is not one, -1 on a bad value (message printed). */
int parse_limit(opts *o, int argc, char **argv, int *i);

/* What check and ls run over: FILEs and --files-from, with the output mode. */
typedef struct batch {
    opts op;
    int json, jsonl, quiet, null_sep, sequence;
    int keep_going;         /* --keep-going: the inventory walker beside the parser (file_run.inv) */
    const char *files_from; /* a list of names (one a line, or NUL-separated with -0); "-": stdin */
    const char **paths;
    size_t npaths;
    FILE *list; /* --files-from's names read in before the sandbox (batch_confine) */
    char *list_buf;
} batch;
/* Options of check and ls.  Returns -1 to go on, or the exit status (0 after --help, 2 on a
 * usage error, the message printed). */
int batch_parse(int argc, char **argv, batch *b, void (*help)(FILE *), void (*bad_usage)(FILE *));
void batch_free(batch *b);

/* ---- io.c: the input's bytes ------------------------------------------------------------------ */

/* One read() of a file or a pipe: at most 128 KiB (the buffer's pages count in every run's RSS).
 * A file larger than one read is mapped after it where only the CRC-32 reads its members' bytes
 * (run.c), so the buffer serves pipes, small files and the reads of --sha256, --policy and
 * extract.  (The "30% less CPU than 256 KiB or 1 MiB" once measured here was the buffer's place,
 * not its size: io.c, read_buffer.)  A pipe given to stdin holds two reads; a mapped file is
 * pushed in slices of twice as much. */
#define CLI_READ_SIZE (128u << 10)
#define CLI_READ_ALIGN 4096u /* the read buffer starts a page (io.c, read_buffer) */
/* What a read of a directory adds to its error: how a tree is read. */
#define CLI_TREE_HINT \
    " (to read a tree: npzstream scan -r DIR, or find DIR -name '*.np[yz]' -print0 | npzstream check " \
    "--files-from - -0)"
#define CLI_PIPE_SIZE (2 * CLI_READ_SIZE)
#define CLI_MAP_SLICE (2 * CLI_READ_SIZE)
extern volatile sig_atomic_t cli_interrupted; /* a signal extract catches: its number */

/* Opens FILE, or stdin for NULL or "-" (label "-").  Returns the fd (0 for stdin) or -1 with
 * the reason in err. */
int cli_open(const char *path, const char **label, char *err, size_t errlen);

/* Hand the parser one slice of input.  Returns -1 when the slice was used up and more input is
 * needed, else the final status: 0 accepted, 1 rejected, 2 error. */
typedef int (*cli_push_fn)(void *ctx, npzs_in *in);
/* The end of the input was reached. */
typedef void (*cli_eof_fn)(void *ctx);
/* Called before each read with the bytes read so far: -1 to go on reading, or the status of the
 * rest of the input, which it took over (run.c: a mapped file). */
typedef int (*cli_divert_fn)(void *ctx, uint64_t off);

/* Read fd to the verdict in large pieces (a stdin pipe is enlarged where possible), pushing at
 * most feed bytes per call (0: no limit).  Returns the status from push(), or 2 on a read error.
 * prog names the command in messages ("npzstream", "npzstream vlen"). */
int cli_read_loop(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push, cli_eof_fn at_eof,
                  void *ctx);
/* The same; a read error's text goes to err (when not NULL) instead of stderr, and divert (when
 * not NULL) may take the rest of the input over. */
int cli_read_loop_err(int fd, const char *prog, const char *label, uint64_t feed, cli_push_fn push, cli_eof_fn at_eof,
                      void *ctx, char *err, size_t errlen, cli_divert_fn divert);
/* The thread's read buffer, released (batch_end). */
void cli_read_buffer_free(void);

/* A regular file mapped for the thread's -j N helper (io.c says when and why). */
typedef struct cli_map {
    const uint8_t *b; /* the file's bytes */
    size_t len;
    size_t dropped; /* the pages before it are dropped from the process */
    int slot;
} cli_map;
/* fd mapped into m when it is a regular file of more than `from` bytes (those read already), the
 * thread's last mapping was released and a slot is free: 0, or -1 (then it is read on). */
int cli_map_file(int fd, uint64_t from, cli_map *m);
/* The parser passed the bytes before `passed`: their pages are dropped from the process
 * (MADV_DONTNEED: a private mapping of a file reads them again from the file if touched), a
 * CLI_MAP_SLICE at a time (one madvise a 4 KiB push doubled the time of --feed 4096). */
void cli_map_passed(cli_map *m, uint64_t passed);
/* 1 when the file changed size while it was mapped (a page past its new end was touched, or its
 * size differs now): an I/O failure, whatever the parser made of the bytes. */
int cli_map_changed(const cli_map *m, int fd);
/* The thread's mapped file unmapped: call once its helper's jobs are over (its parser reset, or
 * the helper freed), or, with no helper, once its pushes are. */
void cli_unmap(void);

/* ---- run.c: one input through a parser -------------------------------------------------------- */

/* A parser with the options' limits; NULL with the reason on stderr.  parser_free() releases a
 * parser and its helper. */
npzs_parser *new_parser(const opts *o);
void parser_free(npzs_parser *p);
/* What the thread kept for a batch, released: its parser, helper, mapping and read buffer. */
void batch_end(void);

/* -j N (--inflate-threads): the thread's helper attached to p (made for p's first input, kept with
 * it: npzs_next() and npzs_finish() on p go through it), ready for a new input; nothing without -j.
 * data as for drive().  0, or 2 when its workers cannot be made (said on stderr).  drive() does
 * this; a command that drives p itself (scan) calls it before each input. */
int input_helper(npzs_parser *p, const opts *op, int data);

/* Called for every event; returns 0 to go on, -1 to stop with status 2 (it printed why). */
typedef int (*event_fn)(void *ctx, const npzs_event *ev);
/* Reads fd to the verdict, pushing at most --feed bytes per call (with -j N, through the thread's
 * helper).  Returns 0 accepted, 1 rejected, 2 I/O error (its text in err when err is given, else
 * on stderr), out of memory or fn() stopped.
 * data: 0 when the command reads no DATA or BLOB bytes (check, ls): with -j the workers then keep
 * only each member's header (npzs_par_skip_data) and no DATA or BLOB event comes, and the rest of
 * a regular file may be mapped; 1 (extract): the file is read, and the bytes a DATA event points
 * at are those every check read. */
int drive(npzs_parser *p, int fd, const char *label, const opts *op, int data, event_fn fn, void *ctx, char *err,
          size_t errlen);
/* The same with the inventory walker inv (not NULL: --keep-going) fed every byte of the input
 * after the parser, to its end: the parser's status once the input has ended; the walker is told
 * the parser's error offset before the bytes past it (npzs_inv_check_after), and finished. */
int drive_inv(npzs_parser *p, npzs_inv *inv, int fd, const char *label, const opts *op, int data, event_fn fn,
              void *ctx, char *err, size_t errlen);
/* The thread's walker for --keep-going (reset for each input, released by batch_end); NULL out of
 * memory (said). */
npzs_inv *batch_inv(const opts *o);
/* Open FILE (or stdin) and make a parser with the options' limits; NULL (all released, the reason
 * said on stderr) when either fails. */
npzs_parser *open_parser(const char *path, const opts *op, const char **label, int *fd);

/* One FILE of a batch (check, ls): file_begin opens it and takes the batch's parser (with
 * --sequence): -1 to go on, or the exit status, the failure said (io_failure).  file_drive drives
 * it (no DATA read) and says whether there is a verdict to print: none when the input could not
 * be read whole (said by io_failure) or the command stopped.  file_end flushes the output, frees
 * the members' table and gives the file and the parser back. */
typedef struct file_run {
    npzs_parser *p;
    int fd;
    int verdict;   /* file_drive: the parser decided (accepted, or rejected with its error) */
    npzs_inv *inv; /* --keep-going: the thread's walker, fed the whole input (file_begin) */
    const char *label;
    char err[256]; /* why the input could not be opened or read */
} file_run;
int file_begin(const char *path, const batch *b, file_run *r);
int file_drive(file_run *r, const batch *b, event_fn fn, void *ctx);
void file_end(file_run *r, const batch *b, out *o);
/* An input that could not be opened or read: said on stderr, and as JSON with --json or --jsonl
 * (error.code "io"); returns 2. */
int io_failure(const batch *b, const char *label, const char *why);

/* ---- batch.c: the files of a batch ------------------------------------------------------------ */

/* One file: path is a name, or "-"/NULL for stdin.  Returns 0 accepted, 1 rejected, 2 error. */
typedef int (*file_fn)(const char *path, const batch *b, void *ctx);
/* Every FILE, then every name of --files-from (stdin alone when there is neither), one at a time
 * or -P N at once; the worst status of all (2 > 1 > 0). */
int batch_run(const batch *b, file_fn fn, void *ctx);
/* Any batch's work in order: the names next() gives, each done by fn (with parallel > 1 on one of
 * that many threads, its output to OUT and ERR), then on the calling thread, in the names' order,
 * that output written out and done() handed what fn left in *data: the same bytes as one at a time.
 * thread_end releases what a thread kept (each worker's at its end, the caller's at the batch's).
 * The worst status of all. */
typedef struct batch_work {
    const char *(*next)(void *src, int *status); /* valid until the next call; NULL at the end (*status 2: failed) */
    void *src;
    int (*fn)(const char *name, void *ctx, void **data);
    void (*done)(void *ctx, void *data); /* NULL: fn leaves nothing */
    void (*thread_end)(void);
    void *ctx;
    unsigned parallel;
} batch_work;
int batch_work_run(const batch_work *w);
/* The process confined (sandbox.h) to reading the batch's FILEs and --files-from's names, which are
 * read in first for that (a list that cannot be read is said when the batch reads it); nothing
 * with --no-sandbox.  Returns -1 to go on, or 2 (said on stderr). */
int batch_confine(batch *b);

/* ---- the commands: argc/argv are the arguments after the command's name ----------------------- */

void usage(FILE *f);
void usage_check(FILE *f);
void usage_ls(FILE *f);
void usage_extract(FILE *f);
void usage_trace(FILE *f);
void usage_refs(FILE *f);
void usage_scan(FILE *f);
int cmd_check(int argc, char **argv);
int cmd_ls(int argc, char **argv);
int cmd_extract(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_refs(int argc, char **argv);
int cmd_scan(int argc, char **argv);
int cmd_vlen(int argc, char **argv);

#endif
