/* Tier 0: no isolation, only when asked for (--tier 0). The command runs in
 * the workspace with the filtered environment, in ward's own process group,
 * under a supervisor that is a child subreaper: when the timeout expires,
 * when the command ends and when ward's parent dies, everything it started
 * (double-forked grandchildren included) is killed. It is not a
 * sandbox: nothing here limits what the command reads, writes or reaches. */
#pragma once

#include <stdbool.h>

#include "linux/sandbox-step.h"
#include "run/backend.h"

/* Run @in->argv (PATH lookup with @in->envp) in @in->workspace, with
 * @in->stdio on fds 0..2 where given; @in->timeout_s 0 for none;
 * @in->parent_pid: the process whose death ends the run (0: not watched).
 * Returns 0 and fills @ret when the command ran or failed to start with an
 * exit code (125 for stdio or chdir, 126/127); < 0 only when the supervisor
 * itself failed (fork). */
int tier0_run(const BackendInput *in, BackendResult *ret);

/* tier0_run with a hook: @c->confine runs in the child after the stdio
 * move and chdir, right before execve (tier 1 applies Landlock, seccomp and
 * its wall check there). It must not allocate; on failure it returns
 * -errno and names its step (and optionally a detail), which come back in
 * ret->error (step: the SandboxStep's name) with exit code 125. */
typedef struct Tier0Confine {
	/* @in_cgroup: the child was born in @cgroup_fd's cgroup (clone3
	 * CLONE_INTO_CGROUP); false when there is none or clone3 answered
	 * ENOSYS (a plain fork: the hook joins it itself). */
	int (*confine)(void *data, bool in_cgroup, SandboxStep *ret_step, const char **ret_detail);
	void *data;
	bool has_cgroup;
	int cgroup_fd; /* a cgroup v2 directory, when has_cgroup */
	/* A seccomp listener to serve while the tree runs (tier 1's metadata
	 * guard, meta-guard.h): the hook sends it on @notify_sock (SCM_RIGHTS)
	 * before execve; each notification goes to @serve. */
	bool has_notify;
	int notify_sock;
	int (*serve)(void *data, int listener);
} Tier0Confine;
int tier0_supervise(const BackendInput *in, const Tier0Confine *c, BackendResult *ret);

/* The tier-0 entry of the backend table. */
extern const Backend backend_tier0;
