/* The managed ceiling (src/policy/ceiling.h, a root-owned
 * /etc/ward/managed.json on Linux) has no Windows side yet: ward.exe runs
 * have none, and run.c records none. What run.c asks of it, answered for
 * "no ceiling". Windows-only. */
#include <stddef.h>

#include "policy/ceiling.h"

Ceiling *ceiling_free(Ceiling *c)
{
	return NULL;
}

const char *ceiling_file(const Ceiling *c)
{
	return NULL;
}

const char *ceiling_digest(const Ceiling *c)
{
	return NULL;
}
