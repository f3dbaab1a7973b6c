/* After a run that wrote the real workspace: whatever now sits under a
 * protected name (or is a git dir) and was not there, as the very same
 * inode, before the run was made during it — by the command — and host
 * tools (git, editors, agents) would trust it. It is moved out of the
 * workspace into <state>/quarantine/<run id>/, said on stderr and in the
 * audit log. Not for copy-on-write runs: their upper layer is never
 * trusted, and apply refuses protected paths.
 *
 * The check runs in a guard process forked when the sandbox starts, so it
 * happens even when ward itself is killed with SIGKILL: the guard waits for
 * the sandbox's init to be gone (and with it every process of the run),
 * then checks, then exits. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

#include "audit/audit.h"
#include "linux/workspace-scan.h"

typedef struct QuarantineInput {
	const char *workspace;          /* canonical */
	const char *state_dir;
	const char *run_id;             /* the quarantine's directory name */
	char *const *protected;         /* fs.protected */
	const WorkspaceScan *before;    /* the walk before the run */
	AuditLog *audit;                /* may be NULL */
} QuarantineInput;

/* Check and move; logs each move on stderr and in the audit log. Returns
 * the number of paths moved, or -errno when the workspace could not be
 * checked (said on stderr too: the caller must not pretend it was). */
int quarantine_check(const QuarantineInput *in);

/* A guard killed before its check leaves its record (the walk before its
 * run) in <state>/pending/: check each one left for @in->workspace now,
 * against that walk, and drop the record. Call before a run (@in->before
 * and @in->run_id are ignored). Returns the number of paths moved. */
int quarantine_recover(const QuarantineInput *in);

/* Fork the guard: it waits until @init_pidfd (the sandbox's init) has
 * exited, runs quarantine_check() and writes its result (an int) to the
 * pipe whose read end is returned in @ret_fd. It leaves ward's session and
 * blocks every signal a harness sends to a process group, so that killing
 * ward's group does not skip the check. */
int quarantine_guard_start(const QuarantineInput *in, int init_pidfd, pid_t *ret_pid, int *ret_fd);

/* Wait for the guard; returns what quarantine_check() returned, or -EPROTO
 * when the guard died without saying. */
int quarantine_guard_wait(pid_t pid, int fd);
