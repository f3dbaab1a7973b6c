/* Windows paths as the plan layer sees them: one canonical absolute form
 * ("C:\dir\file" or "\\server\share\dir") for every spelling the Win32 API
 * accepts, containment tests on that form, and refusal of the spellings
 * that would let a rule and the object it names drift apart (device
 * names, alternate data streams, the device namespace). Pure string work:
 * it never touches a file system, so 8.3 short names can only be flagged,
 * not resolved (the executor refuses to plan through them). */
#pragma once

#include <stdbool.h>

/* Flags win_path_normalize() reports. */
enum {
	WIN_PATH_SHORT_NAME = 1 << 0, /* a component looks like an 8.3 alias ("PROGRA~1") */
};

/* Normalize @in into a new string in @ret (caller frees):
 *  - '/' becomes '\'; repeated separators collapse; "." goes; ".." pops,
 *    and a ".." above the root is -EINVAL;
 *  - "\\?\C:\x" becomes "C:\x", "\\?\UNC\s\sh\x" becomes "\\s\sh\x"; the
 *    drive letter is upper-cased;
 *  - trailing dots and spaces of each component are stripped, as Win32
 *    does ("C:\ws\.git. " names "C:\ws\.git"); under "\\?\", where Win32
 *    keeps them, such a component is -EINVAL;
 *  - -EINVAL for: relative, drive-relative ("C:x") and rooted ("\x")
 *    paths; "\\.\" and "\??\" (device namespace); UNC without a share;
 *    a ':' after the drive (alternate data streams, "file::$DATA"); the
 *    characters <>"|?* and controls; reserved device names in any
 *    component (CON, PRN, AUX, NUL, COM0-9, LPT0-9 with superscript
 *    digits too, CONIN$, CONOUT$, also with an extension: "nul.txt").
 * @ret_flags (may be NULL) gets WIN_PATH_* flags. */
int win_path_normalize(const char *in, char **ret, unsigned *ret_flags);

/* Whether normalized @path is @root or below it, comparing ASCII letters
 * case-insensitively (NTFS's default; non-ASCII letters compare exactly,
 * which can only make a containment test answer "no"). */
bool win_path_is_within(const char *path, const char *root);
/* Case-insensitive (ASCII) equality of normalized paths. */
bool win_path_equal(const char *a, const char *b);
/* "@root\@rel" for a relative @rel made of normal components (no "..",
 * no drive, no root); normalized, new string in @ret. -EINVAL otherwise. */
int win_path_join(const char *root, const char *rel, char **ret);
/* The extension of the last component including the dot (".exe"), or "". */
const char *win_path_extension(const char *path);
