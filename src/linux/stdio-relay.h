/* The standard descriptors the harness hands to `ward run`, made safe to
 * pass into the sandbox. An open file description carries more than the
 * harness may mean to give: a directory on fd 0 is a way into the host tree
 * around every mount mask (`openat(0, "etc/shadow")`, /proc/self/fd/0/...),
 * and a log file on fd 1 opened O_APPEND can still be truncated
 * (ftruncate, a reopen with O_TRUNC) or overwritten (F_SETFL clears
 * O_APPEND, then pwrite). So, per descriptor:
 *   - a directory or an O_PATH descriptor: replaced by /dev/null;
 *   - a writable regular file on fd 1 or 2: the command gets a pipe and a
 *     small copier process outside the sandbox appends what arrives to the
 *     harness's descriptor (one pipe when fds 1 and 2 are the same open
 *     file, so their order is kept);
 *   - a regular file on fd 0 open for writing: reopened read-only;
 *   - pipes, sockets, devices, read-only files: passed as they are.
 * Terminals are not this module's concern. Not a general I/O multiplexer. */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

typedef struct StdioRelay {
	int src[3];       /* where fd n comes from: n itself, or a descriptor the
	                   * caller passed (RunRequest.stdio), >= 3 */
	int child_fd[3];  /* what init puts on fd 0..2; -EBADF: keep the inherited one */
	int pipe_r[2];    /* copier side: [0] carries fd 1 (or 1 and 2), [1] fd 2 */
	int pipe_w[2];    /* sandbox side, closed in the supervisor after clone */
	int out_fd[2];    /* the harness's descriptor each pipe is copied to */
	int null_fd;
	int stdin_ro;     /* fd 0 reopened read-only */
	unsigned replaced; /* bit n: fd n was a directory or O_PATH, now /dev/null */
	pid_t copier;
} StdioRelay;

#define STDIO_RELAY_INIT                                                                           \
	{ .src = { 0, 1, 2 }, .child_fd = { -EBADF, -EBADF, -EBADF }, .pipe_r = { -EBADF, -EBADF },                   \
	  .pipe_w = { -EBADF, -EBADF }, .out_fd = { -EBADF, -EBADF }, .null_fd = -EBADF,                \
	  .stdin_ro = -EBADF }

/* Supervisor, before clone: look at fds 0-2 (or src[]) and make the
 * replacements (pipes, /dev/null, a read-only reopen); a passed descriptor
 * that is not open is -EBADF. -errno on failure; @r is then
 * released with stdio_relay_done(). */
int stdio_relay_prepare(StdioRelay *r);
/* init, first step: put the replacements on fds 0-2. Syscalls only. */
int stdio_relay_apply_child(const StdioRelay *r);
/* Supervisor, after clone: close the sandbox's pipe ends and start the
 * copier (a forked process; no threads). -errno when it cannot start. */
int stdio_relay_start(StdioRelay *r);
/* Supervisor, after the sandbox ended: wait until the copier has written
 * everything (the pipes reach EOF once the last process inside is gone),
 * then release the rest. Safe on a relay that never started. */
void stdio_relay_done(StdioRelay *r);
