/* report.h -- the report of an input: what the commands keep of each member as the events pass
 * (the summary: a few words a member, its strings in an arena) and its printed forms: the JSON
 * object of `check --json` (the fixed contract) and of `ls --json`, the text of `check`, the
 * rejection in words (of pieces every report shares: parts.h).  The command line (cli/) and the
 * WebAssembly module (wasm/shim.c) print through it, so both print the same bytes.  Everything is
 * written to a FILE the caller gives (a wbuf's, write.h): nothing here knows where output goes. */
#ifndef NPZS_REPORT_H
#define NPZS_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "npzstream.h"
#include "npzstream_inv.h"
#include "parts.h"
#include "write.h"

/* ---- the summary ---------------------------------------------------------------------------- */

/* What the summary keeps of a member: a few words, with the name, dtype and shape in the
 * summary's arena, so that memory grows by about 100 bytes per member and never by the data. */
typedef struct member {
    const char *name; /* NULL for a plain .npy */
    const char *dtype;
    const uint64_t *shape;
    const uint8_t *sha256; /* --sha256 or a policy that hashes: 32 bytes; else NULL */
    const char *dtext;     /* a structured dtype as NumPy prints it (ls); else NULL */
    uint64_t nbytes, size;
    uint64_t offset, csize; /* kept for `ls` */
    uint32_t name_len, ndim, data_crc, crc;
    uint8_t kind, method, vmaj, vmin, fortran, sniff;
} member;

/* Array data bytes, or the blob's size. */
#define DATA_SIZE(m) ((m)->kind == NPZS_KIND_ARRAY ? (m)->nbytes : (m)->size)

typedef struct out {
    member *m;
    size_t n, cap;
    int open;            /* m[n] was begun and not completed */
    struct block *arena; /* blocks that never move, freed together (out_free) */
} out;

/* Keep what the summary needs of an event (MEMBER_BEGIN, HEADER, MEMBER_END).  0, or -1 out of
 * memory. */
int out_event(out *o, const npzs_event *ev);
void out_free(out *o);

/* Room for element n of a table of *cap elements of `size` bytes: t itself while n < *cap, else
 * the table moved to twice as many (`first` when it has none); NULL when out of memory (t and
 * *cap as they were).  The summary's members, and what the commands keep beside them. */
void *table_room(void *t, size_t *cap, size_t n, size_t size, size_t first);

/* ---- its printed forms ---------------------------------------------------------------------- */

/* The JSON object of an input, to sink: ext = 0, exactly the `check --json` contract; ext = 1
 * (`ls --json`), more keys per member and a "summary"; file: a "file" key first (JSON Lines). */
void print_json(FILE *sink, const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext, const char *file);
/* The same with --keep-going (inv not NULL): each member has "status" and "error", and the
 * members the inventory lists past the strict parser's follow theirs (report/keep.h). */
void print_json_kept(FILE *sink, const out *o, int ok, npzs_format fmt, const npzs_parser *p, int ext, const char *file,
                     const npzs_inv *inv);
/* The object of an input that could not be opened or read: error.code "io" (flushed). */
void print_io_json(FILE *sink, const char *file, const char *why);

/* The text of `check`: a line per member, the array's part of it made by text_array (at most
 * TEXT_ARRAY_MAX bytes), then the verdict. */
#define DTYPE_TEXT_MAX 240
#define TEXT_ARRAY_MAX (DTYPE_TEXT_MAX + 64 * 22 + 32)
size_t text_array(char *t, const npzs_array_info *a);
/* name (NULL for a plain .npy), the array's text from text_array (NULL: a blob of size bytes) */
void text_member(wbuf *f, const char *name, size_t name_len, const char *arr, size_t arr_len, uint64_t size, int method,
                 uint32_t data_crc, int sniff, const uint8_t *sha256);
/* "LABEL: ok (npz, N members)" or "LABEL: REJECTED: " and the rejection; flushed. */
void text_verdict(wbuf *f, size_t members, int ok, npzs_format fmt, const npzs_parser *p, const char *label);
/* A rejection, once: "code at offset N (member M): message[: detail] [RULE]" then a hint line. */
void text_rejection(wbuf *f, const npzs_parser *p);

/* ---- check's report: what `npzstream check` prints of an input (cli/cmd_check.c), and what a
 * validation of the WebAssembly module returns (wasm/shim.c) ---------------------------------- */
typedef struct check_report {
    int json;            /* the JSON object: every member kept (o), printed with the verdict */
    int quiet;           /* nothing printed (-q): the members are counted all the same */
    size_t members;      /* completed members */
    out o;               /* json: the members */
    size_t arr_len;      /* text: the array part of the last line (arr), kept while the headers */
    size_t key_len;      /*   repeat byte for byte (key: that header; key_len 0: none kept) */
    const npzs_inv *inv; /* --keep-going: the walker's members follow the verdict (NULL: none) */
    wbuf text;           /* the sink; text: a line per member as it completes, then the verdict */
    char arr[TEXT_ARRAY_MAX];
    uint8_t key[256];
} check_report;

/* Ready for an input, printed to sink (the text's lines are flushed with the verdict, or by the
 * caller: wb_flush(&r->text)). */
void check_report_init(check_report *r, int json, int quiet, FILE *sink);
/* The events it reads (npzs_events): MEMBER_END, which names the member and points at an
 * array's header (everything a line prints), and for the JSON MEMBER_BEGIN and HEADER too. */
unsigned check_report_events(const check_report *r);
/* One event: 0, or -1 out of memory. */
int check_report_event(check_report *r, const npzs_event *ev);
/* The verdict, once (ok: accepted; else p's rejection): the JSON object (file: its "file" key,
 * or NULL) or the text verdict (label: the file's name); nothing when quiet. */
void check_report_verdict(check_report *r, int ok, const npzs_parser *p, const char *label, const char *file);

#endif
