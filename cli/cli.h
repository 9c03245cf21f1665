/* cli.h -- what the npzstream commands share: options (opts.c), output (output.c), input (io.c). */
#ifndef NPZS_CLI_H
#define NPZS_CLI_H

#include <stdint.h>

#include "npzstream.h"

#include <stdio.h>
#include <string.h>

/* Where a command's output goes: stdout and stderr, or (check and ls with -P N, one file per
 * thread) the thread's buffers, written out in the input's order (io.c, batch_run). */
extern _Thread_local FILE *cli_stdout, *cli_stderr;
#define OUT (cli_stdout ? cli_stdout : stdout)
#include <signal.h>
extern volatile sig_atomic_t cli_interrupted; /* a signal extract catches: its number (io.c) */
#define ERR (cli_stderr ? cli_stderr : stderr)


/* What the summary keeps of a member: a few words, with the name, dtype and shape in the
 * output's arena, so that memory grows by about 100 bytes per member and never by the data. */
typedef struct member {
    const char *name;          /* NULL for a plain .npy */
    const char *dtype;
    const uint64_t *shape;
    const uint8_t *sha256;     /* --sha256 or a policy that hashes: 32 bytes; else NULL */
    const char *dtext;         /* a structured dtype as NumPy prints it (ls); else NULL */
    uint64_t nbytes, size;
    uint64_t offset, csize;    /* kept for `ls` */
    uint32_t name_len, ndim, data_crc, crc;
    uint8_t kind, method, vmaj, vmin, fortran, sniff;
} member;

/* Array data bytes, or the blob's size; the preamble+header length of an array. */
#define DATA_SIZE(m) ((m)->kind == NPZS_KIND_ARRAY ? (m)->nbytes : (m)->size)
#define HEADER_LEN(m) ((m)->size - (m)->nbytes)

/* Blocks that never move, freed together: pointers into them stay valid. */
typedef struct block {
    struct block *next;
    size_t used, size;
    _Alignas(8) unsigned char data[];
} block;

typedef struct out {
    member *m;
    size_t n, cap;
    int open; /* m[n] was begun and not completed */
    block *arena;
} out;

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

/* The member loops write through a buffer of their own: stdio's per-call locking and
 * bookkeeping cost more than parsing a small member does. */
typedef struct wbuf {
    FILE *f;
    size_t n;
    char b[1 << 14];
} wbuf;

void wb_put_slow(wbuf *w, const void *s, size_t n);

/* inline: with a literal, strlen and memcpy become a few moves */
static inline void wb_put(wbuf *w, const void *s, size_t n) {
    if (n > sizeof w->b - w->n) { wb_put_slow(w, s, n); return; }
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static inline void wb_s(wbuf *w, const char *s) { wb_put(w, s, strlen(s)); }

void wb_init(wbuf *w, FILE *f);
void wb_flush(wbuf *w);
void wb_c(wbuf *w, int c);
void wb_fmt(wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
void json_str(wbuf *f, const char *s, size_t n);   /* a JSON string literal (UTF-8 kept but hidden characters: \u escapes; U+FFFD for the rest) */
/* "key": "display" for raw bytes, and when they are not valid UTF-8 "key_b64": their base64, so
 * that two different byte strings never give the same JSON (the contract's lossless scheme). */
void json_bytes(wbuf *f, const char *key, const char *s, size_t n);
/* Text output (src/text.h): bytes made printable for a terminal, every character that is not
 * shown as it is (controls, bidi controls, line separators, surrogates), every byte that is not
 * UTF-8 and a backslash written as an escape (\xHH, \uHHHH, \\). */
void safe_str(wbuf *f, const char *s, size_t n);
/* The library's words (messages, details, hints): the same, but a backslash stays as it is (a
 * name in them is escaped already). */
void safe_words(wbuf *f, const char *s, size_t n);
/* The JSON object of an input (ext: ls's extra fields; file: a "file" key first, for JSON Lines) */
void print_json(const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext, const char *file);
/* The object of an input that could not be opened or read: error.code "io" */
void print_io_json(const char *file, const char *why);
#define DTYPE_TEXT_MAX 240
#define TEXT_ARRAY_MAX (DTYPE_TEXT_MAX + 64 * 22 + 32)
size_t text_array(char *t, const npzs_array_info *a);
void text_member(wbuf *f, const char *name, size_t name_len, const char *arr, size_t arr_len, uint64_t size, int method,
                 uint32_t data_crc, int sniff, const uint8_t *sha256);
void text_verdict(wbuf *f, size_t members, int ok, npzs_format fmt, const npzs_parser *p, const char *label);
/* A rejection, once: "code at offset N (member M): message[: detail] [RULE]" then a hint line. */
void text_rejection(wbuf *f, const npzs_parser *p);
void error_line(const char *label, const npzs_parser *p);
/* A line on stderr: "PROG: A[SEP B]" and the rest from fmt, the names A and B as text (safe_str). */
void cli_say(const char *prog, const char *a, const char *sep, const char *b, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
/* A structured dtype as NumPy prints it ([('x', '<f4'), ('y', '<i2', (2,))]) into t (cap bytes,
 * cut with "..." when longer); the type string otherwise.  Returns the length. */
size_t dtype_text(char *t, size_t cap, const npzs_array_info *a);
void member_begin(member *m, const npzs_event *ev);
void member_header(member *m, const npzs_array_info *a);
void member_end(member *m, const npzs_event *ev);
int on_event(out *o, const npzs_event *ev); /* keep what the summary needs; -1: out of memory */
void out_free(out *o);

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
