/* Tier 1's file system policy as Landlock rules on the host's own paths:
 * no mount namespace, so no view to build, only grants. What T2 does with
 * masks and read-only binds, T1 must do with grants alone:
 *  - deny: every read grant is split around the denied paths (deny-split.h);
 *    a denied path beneath a writable grant cannot be cut out, and the run
 *    is refused (-EPERM, the path in reterr_path) rather than pretend;
 *  - protected paths in the workspace: the workspace is granted entry by
 *    entry, each protected path read-only, and each directory on the way
 *    to one readable but not writable (Landlock grants per hierarchy: a
 *    right to create in a directory is a right to create anywhere beneath
 *    it). The cost, documented in docs/tiers.md: no new entry directly in
 *    such a directory (usually the workspace root, which holds .git);
 *  - /tmp: a private directory of the run (the caller makes it);
 *  - a few device nodes, /proc and /sys read-only.
 * Supervisor side: reads directories, changes nothing. */
#pragma once

#include <stddef.h>

#include "linux/landlock.h"
#include "linux/workspace-scan.h"
#include "policy/policy.h"

typedef struct Tier1RulesInput {
	const WardPolicy *policy;  /* finalized */
	const char *workspace;     /* canonical */
	const char *home;
	const char *state_dir;
	const char *config_dir;
	char *const *policy_files;
	const char *tmpdir;        /* the run's private TMPDIR, canonical; NULL: added later
	                            * with tier1_rules_add() */
	const WorkspaceScan *protected_scan;
	/* Test switch (WARD_TEST_BREAK_WALL): "read" grants the state dir
	 * read, "write" read-write, so the wall check must catch it. */
	const char *test_break;
} Tier1RulesInput;

typedef struct Tier1Rules {
	LandlockPathRule *rules;   /* paths owned */
	size_t n, cap;
} Tier1Rules;

int tier1_rules_build(const Tier1RulesInput *in, Tier1Rules *ret, char **reterr_path);
/* One more rule (the TMPDIR once it exists). */
int tier1_rules_add(Tier1Rules *r, const char *path, LandlockClass cls);
void tier1_rules_done(Tier1Rules *r);
