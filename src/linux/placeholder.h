/* Host placeholders for protected paths that did not exist when a run
 * started (.git in a fresh directory): created empty so that a read-only
 * mount can sit on them, and removed after the run. Each run records its
 * placeholders under <state>/placeholders/ before creating them, so the
 * next run removes what a run killed with SIGKILL left behind. */
#pragma once

/* Open a record for this process; returns the fd (paths are appended to it). */
int placeholder_record_open(const char *state_dir, char **ret_path);
/* Remove the recorded (empty) directories, deepest first, and the record. */
int placeholder_record_finish(const char *record_path);
