/* Making and removing a live session's directory <state>/live/<id>/
 * (session-paths.h): shared by `ward session new --live` (cmd-session.c)
 * and libward's ward_live_open (lib-live.c), which both start a
 * supervisor (session-server.h). */
#pragma once

/* Make <state>/live/<id>/ (0700) and its control socket "ctl", bound
 * with umask 0077, listening, non-blocking, close-on-exec, in *@ret. */
int session_live_listen(const char *state_dir, const char *id, int *ret);
/* Remove what a live session leaves there ("ctl", "log", "pid", the
 * directory). */
void session_live_remove(const char *state_dir, const char *id);
/* In the supervisor's process: a process session of its own, stdin on
 * /dev/null, stdout and stderr into the session's "log", its pid in
 * "pid". -EIO when /dev/null or the log cannot be opened. */
int session_live_detach(const char *state_dir, const char *id);
