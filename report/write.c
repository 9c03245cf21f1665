/* write.c -- the buffered writer, numbers and JSON keys, and bytes spelled as JSON strings and as
 * text (write.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>

#include "write.h"
/* the characters text never shows raw: one table with the library's words (src/policy/) */
#include "../src/bytes/text.h"

void wb_init(wbuf *w, FILE *f) {
    w->f = f;
    w->n = 0;
}

void wb_flush(wbuf *w) {
    if (w->n) fwrite(w->b, 1, w->n, w->f);
    w->n = 0;
}

void wb_put_slow(wbuf *w, const void *s, size_t n) {
    wb_flush(w);
    if (n > sizeof w->b) fwrite(s, 1, n, w->f);
    else {
        memcpy(w->b, s, n);
        w->n = n;
    }
}

void wb_c(wbuf *w, int c) {
    if (w->n == sizeof w->b) wb_flush(w);
    w->b[w->n++] = (char)c;
}

void wb_vfmt(wbuf *w, int words, const char *fmt, va_list ap) {
    char t[512];
    int k = vsnprintf(t, sizeof t, fmt, ap);
    size_t n = k <= 0 ? 0 : (size_t)k < sizeof t ? (size_t)k : sizeof t - 1;
    if (words) safe_words(w, t, n);
    else wb_put(w, t, n);
}

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
void wb_fmt(wbuf *w, const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    wb_vfmt(w, 0, fmt, ap);
    va_end(ap);
}

/* ---- numbers, straight into the buffer (write.h's cursor) ---- */

/* "00" to "99", and "00" to "ff": two characters a step */
static const char dec2[201] =
    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
    "8081828384858687888990919293949596979899";
static const char hex2[513] =
    "000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f"
    "202122232425262728292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f"
    "404142434445464748494a4b4c4d4e4f505152535455565758595a5b5c5d5e5f"
    "606162636465666768696a6b6c6d6e6f707172737475767778797a7b7c7d7e7f"
    "808182838485868788898a8b8c8d8e8f909192939495969798999a9b9c9d9e9f"
    "a0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3b4b5b6b7b8b9babbbcbdbebf"
    "c0c1c2c3c4c5c6c7c8c9cacbcccdcecfd0d1d2d3d4d5d6d7d8d9dadbdcdddedf"
    "e0e1e2e3e4e5e6e7e8e9eaebecedeeeff0f1f2f3f4f5f6f7f8f9fafbfcfdfeff";

char *cur_u64(char *o, uint64_t v) {
    size_t d = 1;
    for (uint64_t t = v; t >= 10; t /= 10) d++;
    char *e = o + d;
    for (; v >= 100; v /= 100) {
        e -= 2;
        memcpy(e, dec2 + 2 * (v % 100), 2);
    }
    if (v >= 10) memcpy(e - 2, dec2 + 2 * v, 2);
    else e[-1] = (char)('0' + v);
    return o + d;
}

char *cur_hex32(char *o, uint32_t v) {
    memcpy(o, hex2 + 2 * (v >> 24), 2);
    memcpy(o + 2, hex2 + 2 * ((v >> 16) & 0xFF), 2);
    memcpy(o + 4, hex2 + 2 * ((v >> 8) & 0xFF), 2);
    memcpy(o + 6, hex2 + 2 * (v & 0xFF), 2);
    return o + 8;
}

void json_u64(wbuf *f, uint64_t v) { wb_done(f, cur_u64(wb_room(f, 20), v)); }

void wb_hex(wbuf *f, const uint8_t *b, size_t n) {
    char *o = wb_room(f, 2 * n);
    for (size_t i = 0; i < n; i++, o += 2) memcpy(o, hex2 + 2 * b[i], 2);
    wb_done(f, o);
}

/* , "key": (the key is the caller's literal: a few bytes) */
static void key(wbuf *f, const char *k) {
    wb_s(f, ", \"");
    wb_s(f, k);
    wb_s(f, "\": ");
}

void json_key_u64(wbuf *f, const char *k, uint64_t v) {
    key(f, k);
    json_u64(f, v);
}

void json_key_word(wbuf *f, const char *k, const char *word) {
    key(f, k);
    if (!word) {
        wb_s(f, "null");
        return;
    }
    wb_c(f, '"');
    wb_s(f, word);
    wb_c(f, '"');
}

void json_key_hex(wbuf *f, const char *k, const uint8_t *b, size_t n) {
    key(f, k);
    wb_c(f, '"');
    wb_hex(f, b, n);
    wb_c(f, '"');
}

/* ---- bytes from outside: as JSON strings, and as text ---- */

/* Length of the strict UTF-8 sequence starting at u[i] (no overlongs, no surrogates,
 * nothing above U+10FFFF), *cp its code point; or 0 when the bytes there are not one. */
static size_t utf8_seq(const unsigned char *u, size_t i, size_t n, uint32_t *cp) {
    size_t k = npzs_text_seq(u, i, n, cp);
    return k && *cp >= 0xD800 && *cp <= 0xDFFF ? 0 : k;
}

/* A JSON string from raw bytes.  UTF-8 passes through but for the characters text.h hides
 * (controls, bidi controls, line separators), which are \u escapes: the JSON holds the same
 * string and shows nothing raw where it is printed.  A byte that is not UTF-8 is U+FFFD
 * (json_bytes adds the bytes themselves), a surrogate's three bytes too: strict JSON readers
 * refuse a lone surrogate's escape (and only a name that is no UTF-8 could hold one here). */
void json_str(wbuf *f, const char *s, size_t n) {
    const unsigned char *u = (const unsigned char *)s;
    wb_c(f, '"');
    for (size_t i = 0; i < n;) {
        size_t run = i; /* plain ASCII goes out in one piece */
        while (run < n && u[run] >= 0x20 && u[run] < 0x7F && u[run] != '"' && u[run] != '\\') run++;
        if (run > i) {
            wb_put(f, u + i, run - i);
            i = run;
            continue;
        }
        uint32_t cp = 0;
        size_t k = utf8_seq(u, i, n, &cp);
        if (!k) {
            wb_s(f, "\\ufffd");
            k = 1;
        } else if (cp == '"' || cp == '\\') {
            wb_c(f, '\\');
            wb_c(f, (int)cp);
        } else if (npzs_text_hidden(cp)) {
            wb_fmt(f, "\\u%04x", (unsigned)cp);
        } else {
            wb_put(f, u + i, k);
        }
        i += k;
    }
    wb_c(f, '"');
}

static int utf8_ok(const unsigned char *u, size_t n) {
    for (size_t i = 0; i < n; i++) {
        if (u[i] < 0x80) continue;
        uint32_t cp = 0;
        size_t k = utf8_seq(u, i, n, &cp);
        if (!k) return 0;
        i += k - 1;
    }
    return 1;
}

static void base64(wbuf *f, const unsigned char *u, size_t n) {
    static const char t[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    for (size_t i = 0; i < n; i += 3) {
        uint32_t v = (uint32_t)u[i] << 16 | (i + 1 < n ? (uint32_t)u[i + 1] << 8 : 0) | (i + 2 < n ? u[i + 2] : 0);
        wb_c(f, t[v >> 18]);
        wb_c(f, t[(v >> 12) & 63]);
        wb_c(f, i + 1 < n ? t[(v >> 6) & 63] : '=');
        wb_c(f, i + 2 < n ? t[v & 63] : '=');
    }
}

void json_bytes(wbuf *f, const char *key, const char *s, size_t n) {
    wb_c(f, '"');
    wb_s(f, key);
    wb_s(f, "\": ");
    json_str(f, s, n);
    if (utf8_ok((const unsigned char *)s, n)) return;
    wb_s(f, ", \"");
    wb_s(f, key);
    wb_s(f, "_b64\": \"");
    base64(f, (const unsigned char *)s, n);
    wb_c(f, '"');
}

/* 8 bytes at a time: bytes below 0x20, above 0x7E, equal to 0x5C each set a high bit; the last
 * word ends at the string's end, overlapping the one before. */
static inline uint64_t odd_bytes(const unsigned char *u) {
    const uint64_t ones = UINT64_C(0x0101010101010101);
    uint64_t w, b;
    memcpy(&w, u, 8); /* byte order does not matter: each byte is tested on its own */
    b = w ^ (ones * 0x5C);
    return ((w - ones * 0x20) & ~w) | (w + ones * 0x01) | w | ((b - ones) & ~b);
}

int plain_ascii(const unsigned char *u, size_t n) {
    if (n < 8) {
        unsigned odd = 0;
        for (size_t i = 0; i < n; i++) odd |= (unsigned)(u[i] - 0x20u > 0x5Eu) | (unsigned)(u[i] == 0x5C);
        return !odd;
    }
    uint64_t any = odd_bytes(u + n - 8);
    for (size_t i = 0; i + 8 < n; i += 8) any |= odd_bytes(u + i);
    return !(any & UINT64_C(0x8080808080808080));
}

/* Bytes as text (text.h): printable ASCII and UTF-8 pass; a hidden character, a byte that is
 * not UTF-8 and each character of `also` are escapes. */
static void text_of(wbuf *f, const char *s, size_t n, const char *also) {
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t run = i; /* printable ASCII goes out in one piece */
        while (run < n && u[run] >= 0x20 && u[run] < 0x7F && !strchr(also, u[run])) run++;
        if (run > i) {
            wb_put(f, u + i, run - i);
            i = run;
            continue;
        }
        size_t adv;
        char *o = wb_room(f, NPZS_TEXT_UNIT_MAX);
        wb_done(f, o + npzs_text_unit(o, u, i, n, also, &adv));
        i += adv;
    }
}

/* Raw bytes for a terminal (a name, a file's name): text_of's, a backslash escaped too, so that
 * the text reads back as exactly one string of bytes. */
void safe_str(wbuf *f, const char *s, size_t n) {
    if (plain_ascii((const unsigned char *)s, n)) wb_put(f, s, n);
    else text_of(f, s, n, "\\");
}

/* The library's words (a message, a detail, a hint): whole UTF-8 in which any name is escaped
 * already (src/policy/); text_of's all the same, its backslashes left as they are. */
void safe_words(wbuf *f, const char *s, size_t n) { text_of(f, s, n, ""); }
