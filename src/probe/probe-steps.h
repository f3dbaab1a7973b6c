/* Does tier 2 start here? The sysctls and a per-namespace unshare say yes
 * in places where a run then fails (a container's masked /proc, clone3
 * answered with ENOSYS, uid 0 without CAP_SETFCAP, an LSM that forbids
 * mount). This tries the steps a run takes, in a throwaway child: the same
 * clone (clone3, with the clone fallback a run uses), the uid and gid maps,
 * a private mount namespace with a tmpfs and a fresh /proc of the new pid
 * namespace, the hostname (best-effort, as in a run). Nothing touches the
 * host: every mount dies with the child's namespace. About a millisecond;
 * cached per boot and configuration (what could change the answer: the
 * kernel's boot id, ward's version, the uid, capabilities, seccomp state
 * and filter count, no_new_privs, the user and pid namespaces ward runs
 * in, the userns sysctls); under a seccomp filter, whose rules nothing can
 * read, only a positive answer is cached (a wrong one fails the run at the
 * refused step, as the probe would). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct ProbeSteps {
	bool ok;            /* every step a run needs worked */
	char step[32];      /* the first that failed: "clone", "uid-map", "setgroups",
	                     * "gid-map", "mount-private", "mount-tmpfs", "mount-proc" */
	int error;          /* its errno */
	bool clone3_enosys; /* clone3 said ENOSYS and clone worked (a run falls back too) */
	bool hostname_failed; /* sethostname failed (cosmetic: a run goes on) */
	bool cached;        /* the answer came from the cache */
} ProbeSteps;

/* Try now. 0 and @ret filled (ret->ok false when a step failed); -errno
 * when the probe itself could not run (pipe, fork). */
int probe_steps_run(ProbeSteps *ret);

/* The cached answer for this boot and configuration, kept in
 * @state_dir/probe-t2 (one line); tries it when there is none, and keeps
 * that answer in this process, unwritten (a run's prepare writes nothing):
 * probe_steps_store() writes it. */
int probe_steps_cached(const char *state_dir, ProbeSteps *ret);

/* Write the answer probe_steps_cached() found and kept, if any, into
 * @state_dir/probe-t2 (a run's acquire, once the state dir exists).
 * 0 when there was nothing to write; -errno when it could not be written
 * (the next process probes again: a millisecond, nothing else). */
int probe_steps_store(const char *state_dir);

/* The fix for a failed step, one sentence naming the step, its errno and
 * what to change (a container setting, a capability, a sysctl). */
const char *probe_steps_hint(const ProbeSteps *s);
