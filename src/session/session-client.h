/* The client side of a live session's control socket (session-proto.h):
 * `ward exec`, `ward session ps|stop`, libward. Small on purpose: a
 * `ward exec` does this and nothing else (no policy, no probe, no audit). */
#pragma once

#include <stddef.h>

#include "session/session-proto.h"

/* Connect to the session @id's control socket under @state_dir.
 * -ENOENT or -ECONNREFUSED: the session has no live sandbox. */
int session_client_connect(const char *state_dir, const char *id, int *ret_fd);
/* Send @rq with @nfd descriptors. */
int session_client_send(int fd, const SessionRequest *rq, const int *fds, size_t nfd);
/* Wait for one reply: *@ret_text (caller frees) is NUL-terminated.
 * -EPIPE when the session closed the connection without one. */
int session_client_reply(int fd, SessionReplyHead *ret, char **ret_text);
/* The same, with the descriptor a SESSION_REP_PTY reply carries in
 * *@ret_fd (caller closes; -EBADF when none came). */
int session_client_reply_fd(int fd, SessionReplyHead *ret, char **ret_text, int *ret_fd);
