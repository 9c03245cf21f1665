/* prove/include/isa-l/crc.h -- ISA-L's CRC-32 as src/bytes/crc.c uses it, by its specification (the
 * proof is about the glue, not ISA-L): it reads exactly its len bytes and returns 32 bits. */
#ifndef NPZS_PROVE_ISAL_CRC_H
#define NPZS_PROVE_ISAL_CRC_H
#include <stdint.h>

/*@ requires buf_valid: len == 0 || \valid_read(buf + (0 .. len - 1));
    requires buf_init: len == 0 || \initialized(buf + (0 .. len - 1));
    assigns \result \from init_crc, buf[0 .. len - 1], len;
*/
extern uint32_t crc32_gzip_refl(uint32_t init_crc, const unsigned char *buf, uint64_t len);

#endif
