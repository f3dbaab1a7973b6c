/* A live session's supervisor loop (docs/sessions.md): the control socket
 * (SO_PEERCRED: the session's user only), `ward exec` requests checked and
 * narrowed against the session's policy and passed to the sandbox's pid 1
 * (linux/sandbox-serve.c), each command's result and audit records, the
 * background commands, the idle timeout, the owner's exit and
 * `ward session stop`. sandbox_run() calls it (SandboxServe.loop) once
 * the sandbox is started; when it returns the session ends. */
#pragma once

#include <stdbool.h>
#include <stdint.h>

#include "linux/sandbox.h"

typedef struct SessionServerConfig {
	int listen_fd;          /* the control socket, listening, non-blocking */
	int owner_pidfd;        /* the session stops when it exits; -1: none */
	int ready_fd;           /* gets "ok\n" once the sandbox is ready, then is closed; -1 */
	const char *session_id;
	int tier;
	bool cow;
	bool ready;             /* set by the loop once the sandbox was ready */
} SessionServerConfig;

/* SandboxServe.loop; @userdata is a SessionServerConfig. */
int session_server_loop(void *userdata, const SandboxSession *s);
