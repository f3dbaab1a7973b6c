/* The managed ceiling (docs/policy.md, "The managed ceiling"): a root-owned
 * system file, /etc/ward/managed.json, in the policy format plus a few keys
 * of its own, that bounds every run. Every other source (presets, the
 * user's file, -p, flags, libward and MCP callers, session requests) may
 * only narrow within it; a widening is refused, naming the managed rule and
 * the source that asked for more. Never a silent clamp: the ceiling
 * narrows only ward's own built-in defaults (and says so in `policy show`).
 *
 * Lifecycle: ceiling_load_system() -> policy_load_bounded() (which binds
 * it to the run's home and workspace, narrows the defaults and checks each
 * source as it is merged) -> ceiling_check_run() (tier, copy-on-write,
 * workspace) -> ceiling_free(). */
#pragma once

#include <stdbool.h>

#include <cjson/cJSON.h>

#include "policy/policy.h"

/* The system path. Test builds (-Dtest_hooks) read WARD_TEST_MANAGED_FILE
 * instead when it is set; release builds have no way to move it. */
#define CEILING_SYSTEM_PATH "/etc/ward/managed.json"

typedef struct Ceiling Ceiling;

/* Parse a managed file's text. @name is used in errors. -EINVAL with @e. */
int ceiling_parse(const char *name, const char *text, Ceiling **ret, PolicyError *e);
/* Read and parse @path, refusing a file that is not a regular file owned by
 * root and writable by nobody else, or that sits below a directory (any
 * ancestor, and any directory a symlink on the way lives in) that anyone
 * but root may write. -ENOENT (nothing set in @e) when there is no file. */
int ceiling_load(const char *path, Ceiling **ret, PolicyError *e);
/* ceiling_load() of the system path; 0 and *ret = NULL when it does not exist. */
int ceiling_load_system(Ceiling **ret, PolicyError *e);
Ceiling *ceiling_free(Ceiling *c);

const char *ceiling_file(const Ceiling *c);
/* "audit": {"stream": DEST}: where every run also sends its audit lines
 * (docs/audit.md, "Shipping the audit log"); NULL: not set. */
const char *ceiling_audit_stream(const Ceiling *c);
/* DEST: "stdout", "stderr" or an absolute path. */
bool audit_stream_valid(const char *s);
/* SHA-256 of the file's bytes, lowercase hex. */
const char *ceiling_digest(const Ceiling *c);

/* Resolve the ceiling's paths against @ctx (~ and symlinks). Needed once
 * before the calls below; policy_load_bounded() does it. */
int ceiling_bind(Ceiling *c, const PolicyContext *ctx, PolicyError *e);

/* Narrow the built-in defaults @p (not finalized) to the ceiling: entries
 * outside it are replaced by the ceiling's entries below them, its deny,
 * protected and env.strip entries are added, unset or larger limits become
 * its maxima, git and the sandbox switches are lowered. Each change is
 * remembered for ceiling_marks(). */
int ceiling_narrow_defaults(Ceiling *c, WardPolicy *p);

/* Is the finalized @p within the ceiling? 0, or -EPERM with @e: file =
 * @source, path = the rule asked for, msg naming the managed rule. */
int ceiling_check(const Ceiling *c, const WardPolicy *p, const char *source, PolicyError *e);

/* The run's own facts: the tier (asked by @tier_source), whether it
 * writes to a copy-on-write session, and the workspace (writable). */
int ceiling_check_run(const Ceiling *c, int tier, const char *tier_source, bool cow,
		      const char *workspace, PolicyError *e);
/* A request without a policy of its own (`ward session new`): the system
 * ceiling, if any, loaded and checked for @cow and @workspace, with @home
 * for "~". 0, or -EPERM / -errno with @e. */
int ceiling_check_request(bool cow, const char *workspace, const char *home, PolicyError *e);
/* The tier a run gets when nothing asks for one: 2, or the ceiling's first
 * allowed tier when 2 is not allowed. */
int ceiling_default_tier(const Ceiling *c);

/* For `ward policy show`: {"file", "sha256", "bounds": the file's document,
 * "from_ceiling": [what the ceiling put into the effective policy]}. */
cJSON *ceiling_marks(const Ceiling *c);

/* The standard load order (policy_load()) with the ceiling @c (may be
 * NULL: no ceiling): defaults narrowed to it, then each preset, the user's
 * file and @overrides (flags as a policy document, named @overrides_source
 * in errors; may be NULL) merged and checked in turn, then finalized
 * against @ctx. The first source that widens the ceiling is refused with
 * -EPERM. This is the one function the run boundary calls. */
int policy_load_bounded(Ceiling *c, const char *file_or_null, char *const *flag_presets,
			const char *overrides, const char *overrides_source,
			const PolicyContext *ctx, WardPolicy **ret, PolicyError *e);
