/* What a policy may not open because host tools trust it later, and the
 * certificate files the passed CA variables need (policy-hostexec.c). */
#pragma once

#include "policy/policy.h"

/* Refuse (-EPERM, @reterr says which) an fs.read_write entry of the
 * finalized @p that is, holds or sits in a directory of @path_env (the
 * caller's PATH), or holds or is a shell startup file under @home. */
int policy_check_host_exec(const WardPolicy *p, const char *path_env, const char *home,
			   PolicyError *reterr);
/* Add to fs.read the files and directories that the certificate variables
 * in the filtered @envp name (env_ca_paths), where they exist: a regular
 * file, or a directory that is not "/" and does not hold @home. fs.deny
 * still wins. -ENOMEM only. */
int policy_add_ca_reads(WardPolicy *p, char *const *envp, const char *home);
