/* Name <-> index: an array by index, and an open-addressing hash table
 * (linear probing, doubled at half full) by name. */
#include <errno.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "net/synth-map.h"

struct SynthMap {
	char **names;    /* [index], index 0 unused */
	size_t n, cap, max;
	uint32_t *slots; /* hash table of indexes, 0 = empty */
	size_t n_slots;
};

static uint64_t hash(const char *s)
{
	uint64_t h = 1469598103934665603ULL; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ULL;
	return h;
}

SynthMap *synth_map_new(size_t max)
{
	SynthMap *m = calloc(1, sizeof(*m));

	if (!m)
		return NULL;
	m->max = max == 0 || max > SYNTH_MAX ? SYNTH_MAX : max;
	m->n_slots = 256;
	m->slots = calloc(m->n_slots, sizeof(*m->slots));
	if (!m->slots) {
		free(m);
		return NULL;
	}
	return m;
}

SynthMap *synth_map_free(SynthMap *m)
{
	if (!m)
		return NULL;
	for (size_t i = 1; i <= m->n; i++)
		free(m->names[i]);
	free(m->names);
	free(m->slots);
	free(m);
	return NULL;
}

static uint32_t *find_slot(const SynthMap *m, const char *name, bool *found)
{
	size_t mask = m->n_slots - 1, i = hash(name) & mask;

	for (;; i = (i + 1) & mask) {
		uint32_t *s = &m->slots[i];
		if (*s == 0) {
			*found = false;
			return s;
		}
		if (strcmp(m->names[*s], name) == 0) {
			*found = true;
			return s;
		}
	}
}

static int grow_slots(SynthMap *m)
{
	size_t ns = m->n_slots * 2;
	uint32_t *old = m->slots;
	size_t old_n = m->n_slots;

	m->slots = calloc(ns, sizeof(*m->slots));
	if (!m->slots) {
		m->slots = old;
		return -ENOMEM;
	}
	m->n_slots = ns;
	for (size_t i = 0; i < old_n; i++) {
		bool found;
		if (old[i])
			*find_slot(m, m->names[old[i]], &found) = old[i];
	}
	free(old);
	return 0;
}

int synth_map_get(SynthMap *m, const char *name, uint32_t *ret_index)
{
	bool found;
	uint32_t *slot = find_slot(m, name, &found);
	char *copy;

	if (found) {
		*ret_index = *slot;
		return 0;
	}
	if (m->n >= m->max)
		return -ENOSPC;
	if (m->n + 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		char **nn = realloc(m->names, nc * sizeof(*nn));
		if (!nn)
			return -ENOMEM;
		m->names = nn;
		m->cap = nc;
	}
	if ((m->n + 1) * 2 > m->n_slots) {
		if (grow_slots(m) < 0)
			return -ENOMEM;
		slot = find_slot(m, name, &found);
	}
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	m->names[++m->n] = copy;
	*slot = (uint32_t)m->n;
	*ret_index = (uint32_t)m->n;
	return 0;
}

const char *synth_map_name(const SynthMap *m, uint32_t index)
{
	return index >= 1 && index <= m->n ? m->names[index] : NULL;
}

size_t synth_map_size(const SynthMap *m)
{
	return m->n;
}

void synth_addr_v4(uint32_t index, uint8_t ret[4])
{
	uint32_t a = (198U << 24 | 18U << 16) + index;

	ret[0] = (uint8_t)(a >> 24);
	ret[1] = (uint8_t)(a >> 16);
	ret[2] = (uint8_t)(a >> 8);
	ret[3] = (uint8_t)a;
}

void synth_addr_v6(uint32_t index, uint8_t ret[16])
{
	static const uint8_t prefix[6] = { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 };

	memset(ret, 0, 16);
	memcpy(ret, prefix, sizeof(prefix));
	ret[13] = (uint8_t)(index >> 16);
	ret[14] = (uint8_t)(index >> 8);
	ret[15] = (uint8_t)index;
}

static int v4_index(const uint8_t *b, uint32_t *ret)
{
	uint32_t a = (uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3];

	if ((a & 0xfffe0000U) != (198U << 24 | 18U << 16))
		return 0;
	*ret = a & 0x1ffffU;
	return 1;
}

int synth_addr_index(const struct sockaddr *sa, uint32_t *ret_index)
{
	static const uint8_t mapped[12] = { 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff };
	static const uint8_t prefix[6] = { 0x20, 0x01, 0x00, 0x02, 0x00, 0x00 };
	const uint8_t *b;
	uint32_t hi;

	if (sa->sa_family == AF_INET)
		return v4_index((const uint8_t *)&((const struct sockaddr_in *)sa)->sin_addr, ret_index);
	if (sa->sa_family != AF_INET6)
		return 0;
	b = ((const struct sockaddr_in6 *)sa)->sin6_addr.s6_addr;
	if (memcmp(b, mapped, 12) == 0)
		return v4_index(b + 12, ret_index);
	if (memcmp(b, prefix, 6) != 0)
		return 0;
	/* 2001:2::/48: anything in it is synthetic; only the low 24 bits
	 * under a zero middle can be an index handed out. */
	hi = 0;
	for (int i = 6; i < 13; i++)
		hi |= b[i];
	*ret_index = hi ? 0 : ((uint32_t)b[13] << 16 | (uint32_t)b[14] << 8 | b[15]);
	return 1;
}
