/* Copy-on-write sessions: the sandbox mounts the workspace as overlayfs with
 * the real workspace as the read-only lower layer and this session's upper
 * and work directories (in ward's state dir, invisible to the sandbox) on
 * top. This header is the part the sandbox and `ward run` need; review
 * (diff/apply/undo/discard) is in cow-review.h. */
#pragma once

#include <stdbool.h>
#include <cjson/cJSON.h>

typedef struct CowSession CowSession;

/* Create a new session for @workspace (absolute, canonical) under
 * <state_dir>/sessions/<id>/. @cow false makes a plain (non-CoW) session
 * record, which `ward run --session` then runs without an overlay. */
int cow_session_create(const char *state_dir, const char *workspace, bool cow, CowSession **ret);
/* Open an existing session; finishes or rolls back an interrupted
 * apply/undo first (the journal). -ENOENT for an unknown id.
 * Both create and open hold the session's flock until cow_session_free(),
 * so another run, apply, undo or discard of the same session waits; the
 * lock fd is O_CLOEXEC, so the sandboxed command does not inherit it. */
int cow_session_open(const char *state_dir, const char *id, CowSession **ret);
CowSession *cow_session_free(CowSession *s);

const char *cow_session_id(const CowSession *s);
const char *cow_session_workspace(const CowSession *s);
bool cow_session_is_cow(const CowSession *s);
/* Holds a command back until changes from now on are stamped after the
 * session's start (at most a tick of the coarse clock). Every path that
 * starts a session's command calls it first: conflict detection at apply
 * relies on it. */
void cow_session_settle(const CowSession *s);
const char *cow_session_upper_dir(const CowSession *s);  /* absolute */
const char *cow_session_work_dir(const CowSession *s);   /* absolute */

/* Open the session's workspace for reading or writing: the path walked
 * without following any symlink (-ELOOP for one, -ENOTDIR/-ENOENT when
 * it is gone), and it must be the very directory the session was created
 * for (same device and inode, else -ESTALE). Returns an O_RDONLY directory
 * fd (caller closes). */
int cow_session_open_workspace(const CowSession *s);
/* Note one more run (for `ward sessions`). */
int cow_session_note_run(CowSession *s);
/* Record the run's protected paths (relative to the workspace) in the
 * session, so that diff/apply refuse them even when they run with another
 * policy. Merged with what earlier runs recorded. */
int cow_session_note_protected(CowSession *s, char *const *protected_paths);
/* The protected paths recorded so far (NULL-terminated, may be empty). */
char *const *cow_session_protected(const CowSession *s);
/* Count pending changes: {"added":N,"modified":N,"deleted":N,...} */
int cow_session_count_changes(CowSession *s, char *const *protected_paths, cJSON **ret);
