/* Where a live session's control socket lives: <state>/live/<id>/, a
 * directory of mode 0700 owned by the user, in ward's state dir (hidden
 * from every sandbox, docs/sessions.md): "ctl" (the socket), "log" (the
 * supervisor's messages), "pid" (the supervisor's pid, for people). */
#pragma once

#include <stdbool.h>
#include <stddef.h>

/* 16 lowercase hex digits, as cow_session_create() and audit make them. */
bool session_id_valid(const char *id);
/* <state>/live/<id>/<name> (@name may be NULL: the directory) into @buf.
 * -ENAMETOOLONG when it does not fit (a socket path has 108 bytes). */
int session_live_path(const char *state_dir, const char *id, const char *name, char *buf,
		      size_t n);
