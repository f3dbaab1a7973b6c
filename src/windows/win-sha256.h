/* SHA-256 (FIPS 180-4) for the plan layer: the AppContainer and capability
 * SID derivations hash names with it, and ward.exe has no libcrypto. Not a
 * general crypto API: one-shot digest of a small buffer. */
#pragma once

#include <stddef.h>
#include <stdint.h>

void win_sha256(const void *data, size_t n, uint8_t ret[32]);
