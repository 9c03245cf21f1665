/* prove/include/zlib.h -- what the analysed sources take from zlib, with ACSL specifications
 * instead of zlib's code (the proof is about npzstream's glue, not about zlib): the types the
 * parser's layout names, crc32() and crc32_combine().  The specifications are assumptions,
 * listed in SECURITY.md ("What is proven"): crc32 reads exactly its len bytes and returns a
 * 32-bit value, crc32_combine reads nothing but its arguments and returns a 32-bit value. */
#ifndef NPZS_PROVE_ZLIB_H
#define NPZS_PROVE_ZLIB_H

typedef unsigned char Byte;
typedef Byte Bytef;
typedef unsigned int uInt;
typedef unsigned long uLong;
typedef long z_off_t;

/* the parser keeps one (internal.h); the analysed sources never look inside it */
typedef struct z_stream_s {
    const Bytef *next_in;
    uInt avail_in;
    uLong total_in;
    Bytef *next_out;
    uInt avail_out;
    uLong total_out;
    const char *msg;
    void *state;
    void *zalloc, *zfree, *opaque;
    int data_type;
    uLong adler, reserved;
} z_stream;

/*@ requires buf_valid: len == 0 || \valid_read(buf + (0 .. len - 1));
    requires buf_init: len == 0 || \initialized(buf + (0 .. len - 1));
    assigns \result \from crc, buf[0 .. len - 1], len;
    ensures crc32_range: \result <= 0xFFFFFFFF;
*/
extern uLong crc32(uLong crc, const Bytef *buf, uInt len);

/*@ requires len_nonneg: len2 >= 0;
    assigns \result \from crc1, crc2, len2;
    ensures combine_range: \result <= 0xFFFFFFFF;
*/
extern uLong crc32_combine(uLong crc1, uLong crc2, z_off_t len2);

#endif
