/* Internals shared by the cow-*.c files: the change list the scanner builds
 * from an upper dir, the path classifier, and the session layout. Not used
 * outside src/cow/ except by the unit tests and the fuzz target. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <limits.h>
#include <sys/types.h>
#include <time.h>

#include "cow/cow.h"

/* -Isrc makes <linux/limits.h> resolve to src/linux/limits.h, so glibc's
 * <limits.h> cannot pull in the kernel's values. */
#ifndef PATH_MAX
#define PATH_MAX 4096
#endif
#ifndef NAME_MAX
#define NAME_MAX 255
#endif

typedef enum CowKind {
	COW_ADDED,
	COW_MODIFIED,        /* content differs (maybe mode too) */
	COW_DELETED,         /* whiteout over a lower entry */
	COW_TYPE_CHANGED,    /* e.g. dir -> file, file -> symlink */
	COW_MODE_CHANGED,    /* same content, other permission bits */
	COW_SYMLINK_CHANGED, /* symlink with another target */
	COW_DIR_REPLACED,    /* opaque upper dir over a lower dir */
	_COW_KIND_MAX,
	_COW_KIND_INVALID = -22,
} CowKind;

const char *cow_kind_to_string(CowKind k);

typedef enum CowRefusal {
	COW_REFUSE_NONE,
	COW_REFUSE_PROTECTED, /* in or under a protected path */
	COW_REFUSE_ESCAPE,    /* would land outside the workspace */
	COW_REFUSE_SPECIAL,   /* fifo, device, socket */
	COW_REFUSE_TOO_DEEP,  /* nesting beyond COW_MAX_DEPTH */
	COW_REFUSE_CONFLICT,  /* the workspace copy changed during the session */
	COW_REFUSE_PARENT,    /* a parent's change was refused */
	COW_REFUSE_UNREADABLE,/* the upper entry cannot be read */
	_COW_REFUSE_MAX,
	_COW_REFUSE_INVALID = -22,
} CowRefusal;

const char *cow_refusal_to_string(CowRefusal r);

enum {
	COW_F_SETUID_STRIPPED = 1 << 0, /* upper had setuid/setgid/sticky bits; dropped */
	COW_F_HARDLINK = 1 << 1,        /* upper file had other links; becomes a copy */
	COW_F_ODD_NAME = 1 << 2,        /* needs quoting to be shown */
	COW_F_MODE = 1 << 3,            /* permission bits differ (also with MODIFIED) */
};

#define COW_MAX_DEPTH 256

typedef struct CowChange {
	char *path;        /* relative to the workspace, raw bytes, no leading "/" */
	CowKind kind;
	mode_t upper_mode; /* full st_mode of the upper entry; 0 for DELETED */
	mode_t lower_mode; /* full st_mode of the lower entry; 0 when absent */
	off_t upper_size;
	off_t lower_size;
	struct timespec upper_atime, upper_mtime; /* what apply gives the entry */
	unsigned flags;    /* COW_F_* */
	CowRefusal refused;
} CowChange;

typedef struct CowChangeList {
	CowChange *items;
	size_t n;
	size_t allocated;
} CowChangeList;

void cow_change_list_done(CowChangeList *l);

/* The mode apply writes: permission bits only, setuid/setgid dropped (and
 * sticky too, except on directories). */
mode_t cow_effective_mode(mode_t upper_mode);

/* Walk @upper_fd (an upper dir), compare against @lower_fd (the real
 * workspace) and append every change to @ret in pre-order, sorted by name
 * within a directory. Never follows a symlink in either tree. Changes in or
 * under protected paths (cow_classify_path) or in a directory git would
 * take for a git dir are refused, and so is removing a directory whose
 * real tree holds a protected path. Neither fd is consumed. */
int cow_scan(int upper_fd, int lower_fd, char *const *protected_paths, CowChangeList *ret);

/* Path classifier. */
typedef enum CowPathClass {
	COW_PATH_OK,
	COW_PATH_ESCAPE,    /* empty, absolute, ".", ".." or empty components, too long */
	COW_PATH_PROTECTED, /* equal to or under a protected path */
	_COW_PATH_CLASS_MAX,
	_COW_PATH_CLASS_INVALID = -22,
} CowPathClass;

/* Classify @path (@len bytes, may hold any byte but NUL counts as escape).
 * Protected: covered by an entry of @protected_paths (policy/protected.h:
 * a name at any depth, or an anchored path), or repository metadata
 * (".git", ".gitmodules" at any depth), whatever the list says. */
CowPathClass cow_classify_path(const char *path, size_t len, char *const *protected_paths);
/* The protected entry covering the first @len bytes of @path (repository
 * metadata first), or NULL. */
const char *cow_protected_entry(const char *path, size_t len, char *const *protected_paths);
/* True when @path is one of the protected paths itself. */
bool cow_path_is_protected_exact(const char *path, char *const *protected_paths);
/* True when @path is a strict ancestor of some anchored protected path
 * (name entries lie below every directory; the scanner looks at the real
 * tree for those). */
bool cow_path_is_protected_ancestor(const char *path, char *const *protected_paths);
/* True when @name needs quoting for display: control chars, '"', '\\',
 * bytes >= 0x80 that are not valid UTF-8, leading/trailing space. */
bool cow_name_is_odd(const char *s, size_t len);
/* True for code points that can disguise text on a terminal: C1 controls,
 * bidirectional embeddings/overrides/isolates/marks, zero-width characters,
 * line/paragraph separators, the BOM. */
bool cow_codepoint_is_deceptive(uint32_t cp);
/* Quote like git's core.quotePath=false: "..." with C escapes (\n, \t, \",
 * \\, \ooo for other bytes) when odd, else a plain copy. Caller frees. */
char *cow_quote_path(const char *s);
/* True when @path equals @prefix or lies under it ("a" selects "a/b"). */
bool cow_path_has_prefix(const char *path, const char *prefix);

/* Session internals used by the review code. */
int cow_session_dir_fd(const CowSession *s);
const char *cow_session_dir(const CowSession *s);
int64_t cow_session_start_ns(const CowSession *s);
int cow_session_runs(const CowSession *s);
const char *cow_session_created(const CowSession *s);

/* Hex helpers for journal paths (names may be any bytes). */
char *cow_hex_encode(const char *s);
char *cow_hex_decode(const char *hex);
