/* write.h -- bytes out: a buffered writer over a FILE (the sink: stdout or stderr, a -P thread's
 * buffer, the WebAssembly module's memory stream), numbers and JSON keys written into it, and how
 * bytes from outside are spelled in it: as JSON strings, and as text a terminal shows as it is
 * (src/bytes/text.h's one table).  The report (report/) and the commands (cli/) write through it. */
#ifndef NPZS_WRITE_H
#define NPZS_WRITE_H

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The member loops write through a buffer of their own: stdio's per-call locking and
 * bookkeeping cost more than parsing a small member does. */
typedef struct wbuf {
    FILE *f;
    size_t n;
    char b[1 << 14];
} wbuf;

void wb_init(wbuf *w, FILE *f);
void wb_flush(wbuf *w);
void wb_put_slow(wbuf *w, const void *s, size_t n);

/* inline: with a literal, strlen and memcpy become a few moves */
static inline void wb_put(wbuf *w, const void *s, size_t n) {
    if (n > sizeof w->b - w->n) {
        wb_put_slow(w, s, n);
        return;
    }
    memcpy(w->b + w->n, s, n);
    w->n += n;
}

static inline void wb_s(wbuf *w, const char *s) { wb_put(w, s, strlen(s)); }

void wb_c(wbuf *w, int c);
void wb_fmt(wbuf *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* printf into the buffer (at most 511 bytes); as words (safe_words) when `words`. */
void wb_vfmt(wbuf *w, int words, const char *fmt, va_list ap);

/* Writing straight into the buffer: a cursor into w->b after wb_room(w, n) made room for the n
 * bytes (n <= sizeof w->b) the writer may need; wb_done(w, cursor) takes them.  The member loops
 * print many short pieces: no call per piece, no printf format parsing. */
static inline char *wb_room(wbuf *w, size_t n) {
    if (sizeof w->b - w->n < n) wb_flush(w);
    return w->b + w->n;
}

static inline void wb_done(wbuf *w, char *o) { w->n = (size_t)(o - w->b); }

/* What a cursor writes: n bytes, a literal, a number in decimal (at most 20 bytes), a 32-bit
 * number in hex (8 bytes, lower case).  Each returns the cursor past what it wrote. */
static inline char *cur_s(char *o, const char *s, size_t n) {
    memcpy(o, s, n);
    return o + n;
}
#define CUR_LIT(o, lit) cur_s((o), (lit), sizeof(lit) - 1)
char *cur_u64(char *o, uint64_t v);
char *cur_hex32(char *o, uint32_t v);

/* ---- JSON pieces: a number, bytes in hex, and an object's next key with its value
 * (no printf: the member loops write many of them) ---- */

/* A number, in decimal. */
void json_u64(wbuf *f, uint64_t v);
/* n bytes (n <= 64) as 2n hex digits, lower case, unquoted. */
void wb_hex(wbuf *f, const uint8_t *b, size_t n);
/* , "key": v */
void json_key_u64(wbuf *f, const char *key, uint64_t v);
/* , "key": "word" -- a word of the library's own (a sniff, a method's name: nothing to escape),
 * or null when word is NULL */
void json_key_word(wbuf *f, const char *key, const char *word);
/* , "key": "hex" of n bytes (a SHA-256) */
void json_key_hex(wbuf *f, const char *key, const uint8_t *b, size_t n);

/* 1 when the n bytes at u are all printable ASCII but the backslash: text as it is. */
int plain_ascii(const unsigned char *u, size_t n);

/* A JSON string literal (UTF-8 kept but hidden characters: \u escapes; U+FFFD for the rest). */
void json_str(wbuf *f, const char *s, size_t n);
/* "key": "display" for raw bytes, and when they are not valid UTF-8 "key_b64": their base64, so
 * that two different byte strings never give the same JSON (the contract's lossless scheme). */
void json_bytes(wbuf *f, const char *key, const char *s, size_t n);
/* Text output (src/bytes/text.h): bytes made printable for a terminal, every character that is not
 * shown as it is (controls, bidi controls, line separators, surrogates), every byte that is not
 * UTF-8 and a backslash written as an escape (\xHH, \uHHHH, \\). */
void safe_str(wbuf *f, const char *s, size_t n);
/* The library's words (messages, details, hints): the same, but a backslash stays as it is (a
 * name in them is escaped already). */
void safe_words(wbuf *f, const char *s, size_t n);

#endif
