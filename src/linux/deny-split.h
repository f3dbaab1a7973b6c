/* Deny as a Landlock rule set: Landlock only grants, per hierarchy, so a
 * rule on an allowed directory covers every denied path beneath it, and the
 * mount masks would be the only wall. deny_split() turns one grant into a
 * grant on each entry of the directory except the denied ones, recursively
 * down to them, so that Landlock alone refuses a denied file whichever way
 * it is reached. Supervisor side (reads directories); not the mount plan. */
#pragma once

#include <stdbool.h>

#include "linux/landlock.h"

/* Called once per rule to add: @view in the sandbox's view, @cls its class,
 * @type what the directory listing said it is (LANDLOCK_PATH_UNKNOWN for the
 * grant itself and where the file system does not say). */
typedef int (*DenySplitEmit)(void *userdata, const char *view, LandlockClass cls,
			     LandlockPathType type);

/* Emit the rules that grant @cls on @view (whose host path is @real,
 * canonical) minus every path in @hidden (canonical host paths) beneath it.
 * A directory on the way to a denied path keeps only the right to list it
 * (LANDLOCK_CLASS_LIST); symlinks get no rule of their own (their targets
 * are governed by their own rules). A writable class is not split: a
 * directory without write rights would refuse new files in it, so the
 * grant stays whole and *ret_unsplit is set (the caller reports it).
 * Returns 0 or -errno. */
int deny_split(const char *view, const char *real, LandlockClass cls, char *const *hidden,
	       DenySplitEmit emit, void *userdata, bool *ret_unsplit);
