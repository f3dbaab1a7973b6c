/* The capture's synthetic addresses: the DNS stub hands each allowed name
 * one index for the run, shown as 198.18.0.0/15 + index (IPv4, RFC 2544's
 * benchmarking range, never routed) and 2001:2::/48 + index (IPv6, RFC
 * 5180's benchmarking range); the proxy maps a captured connection's
 * destination back to the name. Names are never forgotten during a run, so
 * an address a client cached stays valid. Pure data structure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* Indexes 1 .. SYNTH_MAX (198.18.0.1 .. 198.19.255.254). */
#define SYNTH_MAX 131070U
/* TTL of the stub's answers: short, the mapping never changes anyway. */
#define SYNTH_TTL 60

typedef struct SynthMap SynthMap;

/* At most @max names (0: SYNTH_MAX). NULL on OOM. */
SynthMap *synth_map_new(size_t max);
SynthMap *synth_map_free(SynthMap *m);

/* The index of normalized @name, assigning the next one for a new name.
 * -ENOSPC when the map is full, -ENOMEM. */
int synth_map_get(SynthMap *m, const char *name, uint32_t *ret_index);
/* The name for @index, NULL when none was handed out. */
const char *synth_map_name(const SynthMap *m, uint32_t index);
size_t synth_map_size(const SynthMap *m);

void synth_addr_v4(uint32_t index, uint8_t ret[4]);
void synth_addr_v6(uint32_t index, uint8_t ret[16]);
/* Is @sa (AF_INET, AF_INET6, IPv4-mapped IPv6 too) in a synthetic range?
 * Then 1 and its index (0 or past SYNTH_MAX for addresses never handed
 * out); else 0. */
int synth_addr_index(const struct sockaddr *sa, uint32_t *ret_index);
