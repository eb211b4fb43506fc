/* om_crc.h: the CRC-32 of an .om section (om_crc.c). */
#ifndef DV_OM_CRC_H
#define DV_OM_CRC_H

#include <stdint.h>

/* zlib's crc32 of n bytes (crc32_z(0, p, n)), the same bits on every host. */
uint32_t om_crc32(const uint8_t *p, uint64_t n);

#endif
