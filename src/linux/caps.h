/* Drop every capability for good: the bounding and ambient sets, the
 * securebits that would give root its capabilities back on execve, then
 * the effective, permitted and inheritable sets. Child side, no allocation. */
#pragma once

#include <stdint.h>

int caps_drop_all(void);
/* Keep only the capabilities of the mask @keep (bit N: capability N) in
 * the bounding, effective and permitted sets; none inheritable or
 * ambient. A live session's pid 1 (sandbox-serve.c). */
int caps_keep_only(uint64_t keep);
