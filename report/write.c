/* write.c -- the buffered writer, and bytes spelled as JSON strings and as text (write.h). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <stdarg.h>

#include "write.h"
/* the characters text never shows raw: one table with the library's words (src/policy.c) */
#include "../src/text.h"

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
    else { memcpy(w->b, s, n); w->n = n; }
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
 * already (src/policy.c); text_of's all the same, its backslashes left as they are. */
void safe_words(wbuf *f, const char *s, size_t n) { text_of(f, s, n, ""); }
