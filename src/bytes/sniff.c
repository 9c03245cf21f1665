/*
 * sniff.c -- what a blob looks like (npzs_sniff), from its first NPZS_SNIFF_BYTES bytes: the
 * content machine sniffs a member that is not an array (content.c), a policy names the kinds it
 * allows (policy/).
 */
#include "npzstream.h"
#include "bytes.h"
#include "../base/base.h"

#ifdef NPZS_INTERNAL_H
#error "bytes/ is pure: it sees no parser (internal.h)"
#endif

static int ident_char(uint8_t b) {
    return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') || (b >= '0' && b <= '9') || b == '_' || b == '.';
}

/* "cmodule\nname\n" (GLOBAL) from byte i: an identifier ended by a newline in the window */
static int global_at(const uint8_t *b, size_t n, size_t i) {
    size_t j = i;
    while (j < n && ident_char(b[j])) j++;
    return j > i && j < n && b[j] == '\n';
}

/* The opening of a protocol 0 or 1 pickle (protocols 2 to 5 begin with PROTO, 0x80 and the version). */
static int pickle01(const uint8_t *b, size_t n, int ended) {
    if (b[0] == 'c') return global_at(b, n, 1);
    if (n < 2) return 0;
    if (b[0] == '(') {
        uint8_t k = b[1];
        if ((k == 'd' || k == 'l' || k == 't') && n >= 3 && b[2] == 'p') return 1; /* DICT, LIST, TUPLE; PUT */
        if ((k == 'I' || k == 'L' || k == 'F') && n >= 3 && ((b[2] >= '0' && b[2] <= '9') || b[2] == '-')) return 1;
        if (k == 'i' || k == 'c') return global_at(b, n, 2); /* INST, GLOBAL */
        return k == 'K' || k == 'J' || k == 'M' || k == 'X' || k == 'U' || k == 'q' || k == '}' || k == ']' || k == ')';
    }
    if (b[0] == ']' || b[0] == '}' || b[0] == ')')
        return b[1] == 'q' || b[1] == '(' || (b[1] == '.' && n == 2 && ended);
    return 0;
}

/* UTF-8 with no control character but tab, newline, carriage return and form feed (a character
 * cut by the window's end counts when the blob goes on). */
static int text(const uint8_t *b, size_t n, int ended) {
    for (size_t i = 0; i < n;) {
        uint8_t c = b[i];
        if (c < 0x80) {
            if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7F) return 0;
            i++;
            continue;
        }
        size_t j = i;
        while (j < n && b[j] >= 0x80) j++;
        size_t end = j;
        if (j == n && !ended) { /* the window may end inside a character: its first bytes are fine */
            size_t l = j;
            while (l > i && (b[l - 1] & 0xC0) == 0x80 && j - l < 3) l--;
            uint8_t lead = l > i ? b[l - 1] : 0;
            size_t need = lead >= 0xC2 && lead <= 0xDF   ? 2
                          : lead >= 0xE0 && lead <= 0xEF ? 3
                          : lead >= 0xF0 && lead <= 0xF4 ? 4
                                                         : 0;
            if (need && j - (l - 1) < need) end = l - 1;
        }
        if (!npzs__utf8_valid(b + i, end - i)) return 0;
        i = j;
    }
    return 1;
}

int npzs__sniff(const uint8_t *b, size_t n, int ended) {
    if (n == 0) return NPZS_SNIFF_EMPTY;
    if (n >= 2 && b[0] == 0x80 && b[1] >= 2 && b[1] <= 5) return NPZS_SNIFF_PICKLE;
    if (n >= 4 && b[0] == 'P' && b[1] == 'K' &&
        ((b[2] == 3 && b[3] == 4) || (b[2] == 5 && b[3] == 6) || (b[2] == 7 && b[3] == 8)))
        return NPZS_SNIFF_ZIP;
    if (n >= 2 && b[0] == 0x1F && b[1] == 0x8B) return NPZS_SNIFF_GZIP;
    if (pickle01(b, n, ended)) return NPZS_SNIFF_PICKLE;
    return text(b, n, ended) ? NPZS_SNIFF_TEXT : NPZS_SNIFF_BINARY;
}

NPZS__API int npzs_sniff_bytes(const void *data, size_t len, int ended) {
    if (!data) return NPZS_SNIFF_EMPTY;
    return npzs__sniff(data, len < 16 ? len : 16, ended && len <= 16);
}

NPZS__API const char *npzs_sniff_name(int sniff) {
    switch (sniff) {
#define X(id, num, name) \
    case num: return name;
        NPZS_SNIFF_MAP(X)
#undef X
    default: return "unknown";
    }
}
