/* A warm tier-3 session (docs/t3.md, "Warm sessions"): the session's T2
 * sandbox runs QEMU as its one long-lived command, and each `ward exec`
 * runs in the guest over the port ward.mux (vm-mux.h). The T3 backend
 * (backend-t3.c) fills a VmWarm and hands it to the session's supervisor
 * (session-server.c) in SandboxSession.guest. */
#pragma once

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "common/error.h"

struct SandboxSession;

/* The exec id QEMU itself runs under in the sandbox (commands count from 1). */
#define VM_WARM_QEMU_ID 0xfffffff0u
/* A guest that has not answered within this after QEMU started is a
 * session that did not start (TCG on a loaded machine boots in seconds). */
#define VM_WARM_BOOT_MS 120000
/* A guest that does not end a command it was told to end (KILL) within
 * this is dead. */
#define VM_WARM_KILL_MS 10000

typedef struct VmWarm {
	char *const *argv;     /* QEMU's, run in the sandbox */
	char *const *envp;
	const char *run_dir;   /* VM_MUX_SOCKET and the console are there */
	bool proxy;            /* network "proxy": the guest's proxy variables */
	char *const *degraded; /* the session's: the sandbox's and the VM's */
	int mux;               /* connected to the guest init, once started */
	int qemu_pidfd;        /* QEMU's command in the sandbox (its pid 1) */
	int relay;             /* the control pair's end of the relay (vm-relay.h) */
} VmWarm;

/* Once the sandbox is ready: start QEMU in it, connect to the guest and
 * wait for its init to answer. 0, or < 0 with @err (the console's last
 * lines logged). */
int vm_warm_start(VmWarm *w, const struct SandboxSession *s, WardError *err);

/* Run one command in the guest: the session's relay (vm-relay.h) carries
 * @fds (the client's stdin, stdout, stderr) and reports on *@ret_res, a
 * pipe that is readable once the command ended. 0, or -errno (-EPIPE:
 * the relay is gone, and with it the VM). */
int vm_warm_exec(VmWarm *w, uint32_t id, char *const *argv, char *const *env, const char *cwd,
		 const int fds[3], int *ret_res);

/* Signal @sig to command @id's process group in the guest (SIGINT,
 * SIGTERM, SIGHUP, SIGQUIT, as `ward exec` got them); 0: end the command
 * (--timeout, a client gone). Nothing for a command that has ended. */
void vm_warm_signal(const VmWarm *w, uint32_t id, int sig);

/* Once @res (vm_warm_exec) is readable: the relay's report. 0 with the
 * command's wait status, or -EIO with @err: the guest broke the protocol
 * or stopped, and the session's VM is not to be used again. */
int vm_warm_result(int res, int *ret_wstatus, WardError *err);

/* The environment records (vm-request.h) of @envp for the guest: with the
 * proxy, its variables name the guest's way to it (backend-t3.c). */
int vm_request_env(FILE *f, char *const *envp, bool proxy);

/* The console's last lines, for a VM that failed. */
void vm_console_tail(const char *run_dir, char *buf, size_t n);
