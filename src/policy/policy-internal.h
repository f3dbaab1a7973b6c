/* Helpers shared by the policy_*.c files, not part of the module's contract:
 * error reporting, list adders that deduplicate, and the value validators
 * the parser and policy_finalize() both use. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"
#include "policy/policy.h"

/* Fill @e (if not NULL) and return -EINVAL. */
int policy_error_set(PolicyError *e, const char *file, const char *path, const char *fmt, ...)
	_printf_(4, 5);

/* policy_merge_json(), but record @source (may be NULL) in p->sources
 * while errors name @filename. */
int policy_merge_json_as(WardPolicy *p, const char *filename, const char *source,
			 const char *text, PolicyError *reterr);

/* The host's side (policy-host.c; on Windows src/windows/win-policy-host.c):
 * is @s an absolute path of this host's file system; read a policy file
 * into *@ret (NUL-terminated), refusing what its owner alone could not
 * have written (@is_default: -ENOENT, no error set, when absent). */
bool policy_host_absolute(const char *s);
int policy_read_file(const char *path, bool is_default, char **ret, PolicyError *e);

/* Replace the contents of @dst with those of @src and free @src. */
void policy_replace(WardPolicy *dst, WardPolicy *src);

/* Adders: 0, or -ENOMEM leaving the policy valid (possibly half-updated,
 * which is why the parser works on a copy). */
int policy_add_unique(char ***l, const char *s);
int policy_set_env(WardPolicy *p, const char *name, const char *value);
int policy_add_command_host(WardPolicy *p, const char *cmd, const char *pattern);
int policy_set_host(WardPolicy *p, const char *name, const char *address);
int policy_add_local_port(WardPolicy *p, uint16_t port);
/* network.host_ports: each is a listener and a relay; a few are plenty. */
#define POLICY_HOST_PORTS_MAX 32
#define POLICY_CAPTURE_PORTS_MAX 16
/* Append @port to the list (@l, @n) unless present. */
int policy_add_port(uint16_t **l, size_t *n, uint16_t port);


/* Validators: true if valid, else false with a reason (without the value)
 * in @why. */
bool policy_valid_fs_path(const char *s, char *why, size_t n);
bool policy_valid_protected(const char *s, char *why, size_t n);
bool policy_valid_host_pattern(const char *s, char *why, size_t n);
bool policy_valid_hostname(const char *s, bool allow_wildcard);
bool policy_valid_ip_literal(const char *s);
bool policy_valid_env_name(const char *s);
bool policy_valid_env_pattern(const char *s, bool star_anywhere);
bool policy_valid_command_name(const char *s);

/* Limit ranges, by key name ("timeout_s", ..., "max_connections"). */
typedef struct PolicyLimitRange {
	const char *name;
	uint64_t min;
	uint64_t max;
} PolicyLimitRange;
const PolicyLimitRange *policy_limit_range(const char *name);

/* A printable, quoted, truncated form of @s for messages. */
void policy_quote(const char *s, char *buf, size_t n);
