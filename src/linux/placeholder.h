/* Legacy cleanup: ward versions before the after-run quarantine
 * (quarantine.h) created empty placeholders for missing protected paths in
 * the workspace and recorded them under <state>/placeholders/. This removes
 * what their runs, killed with SIGKILL, left behind: only empty files and
 * empty directories a record names, never following a symlink. ward no
 * longer creates any. */
#pragma once

/* Remove the recorded (empty) placeholders, deepest first, and the record. */
int placeholder_record_finish(const char *record_path);
