/*
 * limit.c -- the physical limits npzstream is measured against (bench/README.md).
 *
 *   limit MODE [FILE|-]
 *     read            read() 1 MiB at a time and discard (F_SETPIPE_SZ 1 MiB on a pipe, as the CLI)
 *     crc-zlib        the same, plus zlib's crc32() over every byte
 *     crc-fast        the same, plus the library's CRC-32 (npzs__crc32: ISA-L's where built in)
 *     crc-libdeflate  the same, plus libdeflate_crc32() (only when built with -DHAVE_LIBDEFLATE)
 *     inflate         walk the ZIP local headers, raw-inflate every deflated member into a 256 KiB
 *                     window (npzstream's default) and CRC the output with npzs__crc32; no checks
 *     inflate-isal    the same walk with ISA-L's streaming isal_inflate (built with ISA-L)
 *     inflate-fast    the same walk with the library's decoder (src/zip/fastinf.c, npzstream's default),
 *                     each member's compressed size taken from its local header
 *     crc-isal        read-discard plus ISA-L's crc32_gzip_refl (built with ISA-L)
 *
 * Prints a checksum so that nothing is optimised away.  Exit 2 on I/O errors.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "zip/fastinf.h"
#ifdef HAVE_LIBDEFLATE
#include <libdeflate.h>
#endif
#ifdef NPZS_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#define READ_SIZE (1u << 20)
#define WINDOW (256u << 10)

uint32_t npzs__crc32(uint32_t crc, const uint8_t *buf, size_t len);

static int fd;
static uint8_t *buf;
static size_t pos, len;
static int eof;

static ssize_t fill(uint8_t *dst, size_t cap) {
    for (;;) {
        ssize_t r = read(fd, dst, cap);
        if (r >= 0) return r;
        perror("read");
        exit(2);
    }
}

/* at least n (<= READ_SIZE) bytes at buf+pos; 0 at end of input */
static int need(size_t n) {
    if (len - pos >= n) return 1;
    memmove(buf, buf + pos, len - pos);
    len -= pos;
    pos = 0;
    while (len < n && !eof) {
        ssize_t r = fill(buf + len, READ_SIZE - len);
        if (r == 0) eof = 1;
        len += (size_t)r;
    }
    return len >= n;
}

static uint16_t le16(const uint8_t *b) { return (uint16_t)(b[0] | b[1] << 8); }
static uint32_t le32(const uint8_t *b) { return (uint32_t)le16(b) | (uint32_t)le16(b + 2) << 16; }
static uint64_t le64(const uint8_t *b) { return (uint64_t)le32(b) | (uint64_t)le32(b + 4) << 32; }

/* one deflated member's stream from buf+pos on, into win: its CRC-32 (zlib or ISA-L) */
static z_stream zs;
#ifdef NPZS_HAVE_ISAL
static struct inflate_state ist;
#endif
static uint32_t inflate_member(uint8_t *win, int isal) {
    uint32_t crc = 0;
#ifdef NPZS_HAVE_ISAL
    if (isal) {
        isal_inflate_init(&ist);
        ist.crc_flag = ISAL_DEFLATE;
        while (ist.block_state != ISAL_BLOCK_FINISH) {
            if (pos == len) {
                pos = len = 0;
                if (!need(1)) exit(2);
            }
            ist.next_in = buf + pos;
            ist.avail_in = (uint32_t)(len - pos);
            ist.next_out = win;
            ist.avail_out = WINDOW;
            if (isal_inflate(&ist) < 0) exit(1);
            pos = len - ist.avail_in;
            crc = npzs__crc32(crc, win, WINDOW - ist.avail_out);
        }
        pos -= (size_t)(ist.read_in_length / 8); /* bytes its bit buffer read past the stream */
        return crc;
    }
#else
    (void)isal;
#endif
    inflateReset(&zs);
    int zr = Z_OK;
    while (zr != Z_STREAM_END) {
        if (pos == len) {
            pos = len = 0;
            if (!need(1)) exit(2);
        }
        zs.next_in = buf + pos;
        zs.avail_in = (uInt)(len - pos);
        zs.next_out = win;
        zs.avail_out = WINDOW;
        zr = inflate(&zs, Z_NO_FLUSH);
        if (zr != Z_OK && zr != Z_STREAM_END) exit(1);
        pos = len - zs.avail_in;
        crc = npzs__crc32(crc, win, WINDOW - zs.avail_out);
    }
    return crc;
}

/* the same with the library's decoder, the member's csize compressed bytes */
static npzs__fastinf *fi;
static uint32_t inflate_member_fast(uint8_t *win, uint64_t csize) {
    uint32_t crc = 0;
    uint64_t left = csize;
    npzs__fi_reset(fi);
    for (;;) {
        if (left && pos == len) {
            pos = len = 0;
            if (!need(1)) exit(2);
        }
        size_t n = len - pos < left ? len - pos : (size_t)left, took, made, back;
        int rc = npzs__fi_run(fi, &zs, buf + pos, n, n == left, win, WINDOW, &took, &made, &back);
        pos += took;
        left -= took;
        crc = npzs__crc32(crc, win, made);
        if (rc == NPZS__FI_END) return crc;
        if (rc != NPZS__FI_OK || (!took && !made)) exit(1);
    }
}

static uint32_t walk_inflate(int isal) {
    uint8_t *win = malloc(WINDOW);
    memset(&zs, 0, sizeof zs);
    if (!win || inflateInit2(&zs, -15) != Z_OK) exit(2);
    if (isal == 2) { /* the decoder lends zs the blocks zlib decides: its window allocated */
        static const Bytef none[1] = {0};
        fi = malloc(npzs__fi_size());
        if (!fi || inflateSetDictionary(&zs, none, 0) != Z_OK) exit(2);
        npzs__fi_init(fi);
    }
    uint32_t all = 0, members = 0;
    while (need(30) && le32(buf + pos) == 0x04034b50u) {
        const uint8_t *h = buf + pos;
        unsigned flags = le16(h + 6), method = le16(h + 8), nl = le16(h + 26), el = le16(h + 28);
        uint64_t size = le32(h + 22), csize = le32(h + 18);
        if (!need(30u + nl + el)) exit(2);
        h = buf + pos;
        for (size_t i = 0; i + 4 <= el;) { /* ZIP64 sizes (uncompressed, then compressed) */
            const uint8_t *x = h + 30 + nl + i;
            if (le16(x) == 1 && le16(x + 2) >= 8 && size == 0xFFFFFFFFu) size = le64(x + 4);
            if (le16(x) == 1 && le16(x + 2) >= 16 && csize == 0xFFFFFFFFu) csize = le64(x + 12);
            i += 4u + le16(x + 2);
        }
        pos += 30u + nl + el;
        uint32_t crc = 0;
        if (method == 8 && isal == 2) {
            if (flags & 8) exit(2); /* its size unknown: not for this walk */
            crc = inflate_member_fast(win, csize);
        } else if (method == 8) {
            crc = inflate_member(win, isal);
        } else {
            while (size) {
                if (pos == len) {
                    pos = len = 0;
                    if (!need(1)) exit(2);
                }
                size_t n = len - pos < size ? len - pos : (size_t)size;
                crc = npzs__crc32(crc, buf + pos, n);
                pos += n;
                size -= n;
            }
        }
        if (flags & 8) { /* descriptor: signature, CRC, two 8-byte sizes (NumPy's ZIP64) */
            if (!need(24)) exit(2);
            pos += 24;
        }
        all ^= crc;
        members++;
    }
    inflateEnd(&zs);
    free(win);
    return all ^ members;
}

int main(int argc, char **argv) {
    if (argc < 2) {
        fprintf(
            stderr,
            "usage: limit read|crc-zlib|crc-fast|crc-libdeflate|crc-isal|inflate|inflate-isal|inflate-fast [FILE|-]\n");
        return 2;
    }
    const char *mode = argv[1];
    if (argc > 2 && strcmp(argv[2], "-") != 0) {
        fd = open(argv[2], O_RDONLY);
        if (fd < 0) {
            perror(argv[2]);
            return 2;
        }
    }
#ifdef F_SETPIPE_SZ
    (void)fcntl(fd, F_SETPIPE_SZ, (int)READ_SIZE);
#endif
    /* on a page boundary, as the command line's read buffer (cli/io.c): the kernel's copy runs up
     * to 4x slower into a buffer a few bytes past the file's offset within its page (malloc's
     * mapped block is 16 bytes past a page), and a floor must not be slowed by where it reads to */
    if (posix_memalign((void **)&buf, 4096, READ_SIZE) != 0) return 2;
    uint32_t crc = 0;
    uint64_t total = 0;
    int m = !strcmp(mode, "read")             ? 0
            : !strcmp(mode, "crc-zlib")       ? 1
            : !strcmp(mode, "crc-fast")       ? 2
            : !strcmp(mode, "crc-libdeflate") ? 3
            : !strcmp(mode, "inflate")        ? 4
            : !strcmp(mode, "inflate-isal")   ? 5
            : !strcmp(mode, "crc-isal")       ? 6
            : !strcmp(mode, "inflate-fast")   ? 7
                                              : -1;
#ifndef HAVE_LIBDEFLATE
    if (m == 3) m = -1;
#endif
#ifndef NPZS_HAVE_ISAL
    if (m == 5 || m == 6) m = -1;
#endif
    if (m < 0) {
        fprintf(stderr, "limit: unknown or unavailable mode %s\n", mode);
        return 2;
    }
    if (m == 4 || m == 5 || m == 7) {
        crc = walk_inflate(m == 7 ? 2 : m == 5);
    } else {
        for (;;) {
            ssize_t r = fill(buf, READ_SIZE);
            if (r == 0) break;
            size_t n = (size_t)r;
            total += n;
            if (m == 0) crc ^= buf[0];
            else if (m == 1) crc = (uint32_t)crc32(crc, buf, (uInt)n);
            else if (m == 2) crc = npzs__crc32(crc, buf, n);
#ifdef NPZS_HAVE_ISAL
            else if (m == 6) crc = crc32_gzip_refl(crc, buf, n);
#endif
#ifdef HAVE_LIBDEFLATE
            else crc = libdeflate_crc32(crc, buf, n);
#endif
        }
    }
    printf("%s %llu %08x\n", mode, (unsigned long long)total, crc);
    free(buf);
    return 0;
}
