/* SPDX-License-Identifier: BSD-3-Clause
 * HT3 retry-mode per-packet CRC (CRC-32, poly 0x04C11DB7, MSB-first, init
 * all ones, 34 input bits per dword with LCTL/HCTL; transmitted value is the
 * complement). See docs/ht-model.md.
 */
#ifndef HT_CRC_H
#define HT_CRC_H

#include <stddef.h>
#include <stdint.h>

/* CRC register after feeding `len` bytes (whole dwords), the first
 * `ctl_len` bytes with CTL=1 and the rest with CTL=0; init 0xFFFFFFFF. */
uint32_t ht_crc_register(const uint8_t *pkt, size_t len, size_t ctl_len);

/* The value transmitted after the packet: ~ht_crc_register(). */
uint32_t ht_crc_tx(const uint8_t *pkt, size_t len, size_t ctl_len);

enum ht_crc_verdict { HT_CRC_GOOD = 0, HT_CRC_STOMPED = 1, HT_CRC_BAD = 2 };

/* Receiver check: GOOD if rx == ~crc, STOMPED if rx == crc (drop, no retry),
 * BAD otherwise (start a retry). */
enum ht_crc_verdict ht_crc_check(const uint8_t *pkt, size_t len, size_t ctl_len, uint32_t rx);

/* Convenience for a whole encoded packet: the control length is derived from
 * its Cmd (ht_peek-style). Returns 0 and sets *tx_crc to ~crc, or a negative
 * enum ht_err (never 0) if the bytes are not exactly one valid packet
 * (HT_E_TRAILING if bytes follow it). */
int ht_crc_of_packet(const uint8_t *pkt, size_t len, uint32_t *tx_crc);

#endif
