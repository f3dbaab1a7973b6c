/* The ceiling's representation, shared by ceiling.c (reading the file)
 * and ceiling-check.c (the narrowing rules). Not part of the contract. */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "policy/ceiling.h"

struct Ceiling {
	char *file;
	char digest[65];
	cJSON *doc;        /* the file's document, as written */
	WardPolicy *pol;   /* its policy-format part, parsed (not finalized) */
	WardPolicy *bound; /* pol finalized against the run (ceiling_bind) */
	char **rd, **rx, **rw; /* bound fs lists, symlinks resolved */

	/* Which keys the file names: a key it does not name is not bounded. */
	bool has_read, has_read_exec, has_read_write;
	bool has_net_mode, has_net_allow, has_host_ports, has_hosts, has_upstream_ca;
	bool has_git, has_nested, has_ptrace;
	bool has_tiers, has_presets;

	int tiers[4];
	size_t n_tiers;
	char **presets;    /* allowed_presets */
	bool require_cow;
	char *audit_stream; /* "audit": {"stream": ...}, NULL: none */

	char **applied;    /* what ceiling_narrow_defaults() changed */
};

/* Lexical coverage rules, exported for the unit tests. */
/* Is the host pattern @e (network.allow syntax) within @c? */
bool ceiling_host_covers(const char *c, const char *e);
/* @path with the longest existing prefix resolved (realpath), the rest
 * appended; caller frees. NULL on OOM. */
char *ceiling_resolve_path(const char *path);
