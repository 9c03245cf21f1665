/* text.h -- names as text: the one table of the characters no text output prints as they are,
 * their escapes, and cuts at character boundaries.  Used by the library's words (the details of a
 * policy violation, the policy compiler's paths and messages: policy/) and by the command line's
 * output (cli/output.c, compiled into the WebAssembly build too), so both spell a name alike.
 *
 * Where names come from: a member's name is ASCII, or UTF-8 when its flag says so (zrec.c
 * refuses any other name, CP437 included; a rejected archive's name may still be any bytes); a
 * policy's keys are strict UTF-8 (json.c); a field name of a .npy header is decoded from the
 * header's Python string, whose escapes may write a surrogate ('\ud800', as NumPy writes a field
 * named so): npyhdr.c encodes it as UTF-8 encodes any code point (ED A0 80), which strict UTF-8
 * refuses and Python's "surrogatepass" decodes back to the same string. */
#ifndef NPZS_TEXT_H
#define NPZS_TEXT_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* The sequence at s[i] (i < n): its length, 1 to 4, and *cp its code point; 0 where the bytes are
 * not one (a stray continuation byte, an overlong form, above U+10FFFF, cut short).  A surrogate
 * (U+D800..U+DFFF) is decoded like any code point: npzs_text_hidden() says it is not text. */
static inline size_t npzs_text_seq(const uint8_t *s, size_t i, size_t n, uint32_t *cp) {
    uint8_t c = s[i];
    if (c < 0x80) {
        *cp = c;
        return 1;
    }
    size_t k = c >= 0xC2 && c <= 0xDF ? 2 : c >= 0xE0 && c <= 0xEF ? 3 : c >= 0xF0 && c <= 0xF4 ? 4 : 0;
    if (!k || k > n - i) return 0;
    uint32_t v = c & (0x7Fu >> k);
    for (size_t j = 1; j < k; j++) {
        if ((s[i + j] & 0xC0) != 0x80) return 0;
        v = v << 6 | (s[i + j] & 0x3Fu);
    }
    if ((k == 3 && v < 0x800) || (k == 4 && (v < 0x10000 || v > 0x10FFFF))) return 0;
    *cp = v;
    return k;
}

/* The code points no text output prints as they are (each is written as an escape): what a
 * reader cannot see, or what changes how the rest of a line shows (a forged log line, a name
 * that reads backwards):
 *   C0 controls and DEL (a newline, a terminal's ESC), C1 controls U+0080..U+009F (U+009B is a
 *   terminal's CSI); the bidirectional controls U+061C, U+200E, U+200F, U+202A..U+202E,
 *   U+2066..U+2069; the line and paragraph separators U+2028, U+2029; surrogates U+D800..U+DFFF
 *   (no character: a field name may hold one). */
static inline int npzs_text_hidden(uint32_t cp) {
    return cp < 0x20 || (cp >= 0x7F && cp <= 0x9F) || cp == 0x061C || cp == 0x200E || cp == 0x200F ||
           (cp >= 0x2028 && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069) || (cp >= 0xD800 && cp <= 0xDFFF);
}

/* The most bytes one unit of escaped text takes (\uHHHH). */
#define NPZS_TEXT_UNIT_MAX 6

/* The unit at s[i] (i < n) as text, at o: a character as it is; a hidden one (above) as \xHH
 * when it is below 0x80, else \uHHHH; a byte that is not part of a UTF-8 sequence as \xHH; a
 * character of `also` (ASCII: the backslash, a quote) as a backslash and itself.  Returns the
 * bytes written (at most NPZS_TEXT_UNIT_MAX), *adv the bytes of s taken. */
static inline size_t npzs_text_unit(char *o, const uint8_t *s, size_t i, size_t n, const char *also, size_t *adv) {
    static const char hex[] = "0123456789abcdef";
    uint32_t cp = 0;
    size_t k = npzs_text_seq(s, i, n, &cp);
    if (!k || (npzs_text_hidden(cp) && cp < 0x80)) {
        *adv = 1;
        o[0] = '\\';
        o[1] = 'x';
        o[2] = hex[s[i] >> 4];
        o[3] = hex[s[i] & 15];
        return 4;
    }
    *adv = k;
    if (npzs_text_hidden(cp)) {
        o[0] = '\\';
        o[1] = 'u';
        for (int d = 0; d < 4; d++) o[2 + d] = hex[(cp >> (12 - 4 * d)) & 15];
        return 6;
    }
    if (cp < 0x80) {
        for (const char *a = also; *a; a++)
            if ((uint8_t)*a == cp) {
                o[0] = '\\';
                o[1] = (char)cp;
                return 2;
            }
    }
    for (size_t j = 0; j < k; j++) o[j] = (char)s[i + j];
    return k;
}

/* The longest prefix of the n bytes at s that is at most max bytes and does not end inside a
 * UTF-8 sequence (s is text this library wrote: whole sequences). */
static inline size_t npzs_text_cut(const uint8_t *s, size_t n, size_t max) {
    if (n <= max) return n;
    size_t k = max;
    while (k > 0 && (s[k] & 0xC0) == 0x80) k--;
    return k;
}

/* A name as words (a policy's detail or path; the Python package's paths of a policy written
 * from a dict, through the extension): its text, at most NPZS_TEXT_NAME bytes, then "..." when
 * there is more. */
#define NPZS_TEXT_NAME 64
#define NPZS_TEXT_NAME_CAP (NPZS_TEXT_NAME + 6) /* two quotes, "...", NUL */

/* The name's text into b (cap bytes, at least 6), between single quotes when q (a quote in it is
 * escaped); at most NPZS_TEXT_NAME bytes of text, or what cap leaves room for.  Returns its
 * length (b is NUL-terminated). */
static inline size_t npzs_text_name(char *b, size_t cap, const void *name, size_t n, int q) {
    const uint8_t *s = (const uint8_t *)name;
    size_t room = cap - (q ? 2 : 0) - 4, k = 0, i = 0;
    if (room > NPZS_TEXT_NAME) room = NPZS_TEXT_NAME;
    if (q) b[k++] = '\'';
    size_t start = k;
    while (i < n) {
        char u[NPZS_TEXT_UNIT_MAX];
        size_t adv, w = npzs_text_unit(u, s, i, n, q ? "\\'" : "\\", &adv);
        if (k - start + w > room) break;
        for (size_t j = 0; j < w; j++) b[k + j] = u[j];
        k += w;
        i += adv;
    }
    if (i < n) {
        b[k++] = '.';
        b[k++] = '.';
        b[k++] = '.';
    }
    if (q) b[k++] = '\'';
    b[k] = 0;
    return k;
}

/* ---- words: what a policy fault or violation says (policy/) -----------------------------------
 * A name or key in words is its text (npzs_text_name: a hidden character, a byte that is not
 * UTF-8 and a backslash are escapes), at most NPZS_TEXT_NAME bytes of it, then "..." when there
 * is more; a formatted text too long for its buffer is cut at a character's end and ends in
 * "...".  So the words are always whole UTF-8 and safe to print, whatever bytes the names hold. */

/* A field's (or title's) name in words: npzs_text_name between quotes, in a buffer of the caller's. */
static inline const char *npzs_text_quoted(char b[NPZS_TEXT_NAME_CAP], const char *name, size_t n) {
    npzs_text_name(b, NPZS_TEXT_NAME_CAP, name, n, 1);
    return b;
}

/* vsnprintf into b (cap > 4 bytes) that never cuts inside a UTF-8 sequence: a text too long
 * ends in "..." after the last whole character that fits. */
static inline void npzs_text_vformat(char *b, size_t cap, const char *fmt, va_list ap) {
    int w = vsnprintf(b, cap, fmt, ap);
    if (w < 0) {
        b[0] = 0;
    } else if ((size_t)w >= cap) {
        size_t k = npzs_text_cut((const uint8_t *)b, cap - 1, cap - 4);
        memcpy(b + k, "...", 4);
    }
}

#endif
