/* The path classifier and name quoting. Pure functions on bytes: every name
 * here came from a directory the sandbox wrote, so nothing is assumed about
 * it (newlines, non-UTF-8, "..", huge lengths). */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include <sys/stat.h>

#include "common/macro.h"
#include "common/strv.h"
#include "common/utf8.h"
#include "cow/cow-internal.h"
#include "policy/protected.h"

static const char *const kind_table[_COW_KIND_MAX] = {
	[COW_ADDED] = "added",
	[COW_MODIFIED] = "modified",
	[COW_DELETED] = "deleted",
	[COW_TYPE_CHANGED] = "type-changed",
	[COW_MODE_CHANGED] = "mode-changed",
	[COW_SYMLINK_CHANGED] = "symlink-changed",
	[COW_DIR_REPLACED] = "dir-replaced",
};

const char *cow_kind_to_string(CowKind k)
{
	if (k < 0 || k >= _COW_KIND_MAX)
		return NULL;
	return kind_table[k];
}

static const char *const refusal_table[_COW_REFUSE_MAX] = {
	[COW_REFUSE_NONE] = "none",
	[COW_REFUSE_PROTECTED] = "protected",
	[COW_REFUSE_ESCAPE] = "escape",
	[COW_REFUSE_SPECIAL] = "special-file",
	[COW_REFUSE_TOO_DEEP] = "too-deep",
	[COW_REFUSE_CONFLICT] = "conflict",
	[COW_REFUSE_PARENT] = "parent-refused",
	[COW_REFUSE_UNREADABLE] = "unreadable",
};

const char *cow_refusal_to_string(CowRefusal r)
{
	if (r < 0 || r >= _COW_REFUSE_MAX)
		return NULL;
	return refusal_table[r];
}

mode_t cow_effective_mode(mode_t m)
{
	if (S_ISDIR(m))
		return m & 01777;
	return m & 0777;
}

bool cow_path_has_prefix(const char *path, const char *prefix)
{
	size_t n = strlen(prefix);

	/* A trailing slash on the prefix ("dir/") means the same as "dir". */
	while (n > 1 && prefix[n - 1] == '/')
		n--;
	if (strncmp(path, prefix, n) != 0)
		return false;
	return path[n] == '\0' || path[n] == '/';
}

/* Repository metadata, protected in review whatever the policy says: git
 * run later on the host reads configuration (core.fsmonitor, hooks,
 * filters) from a git dir or a gitfile's target at any depth, and
 * .gitmodules names where submodules live. */
static char *const repo_metadata[] = { ".git", ".gitmodules", NULL };

/* A component git may take for ".git" or ".gitmodules" on a file system
 * that folds case or keeps NTFS short names (git's is_ntfs_dotgit): the
 * names in any case, and "git~1" / "gitmod~1". */
static const char *repo_metadata_folded(const char *c, size_t n)
{
	if ((n == 4 && strncasecmp(c, ".git", 4) == 0) || (n == 5 && strncasecmp(c, "git~1", 5) == 0))
		return repo_metadata[0];
	if ((n == 11 && strncasecmp(c, ".gitmodules", 11) == 0) ||
	    (n == 8 && strncasecmp(c, "gitmod~1", 8) == 0))
		return repo_metadata[1];
	return NULL;
}

const char *cow_protected_entry(const char *path, size_t len, char *const *protected_paths)
{
	const char *e = protected_match(repo_metadata, path, len);
	size_t start = 0;

	if (e)
		return e;
	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		if ((e = repo_metadata_folded(path + start, i - start)))
			return e;
		start = i + 1;
	}
	return protected_match(protected_paths, path, len);
}

CowPathClass cow_classify_path(const char *path, size_t len, char *const *protected_paths)
{
	size_t start = 0;

	if (len == 0 || len >= PATH_MAX || path[0] == '/')
		return COW_PATH_ESCAPE;
	if (memchr(path, '\0', len))
		return COW_PATH_ESCAPE;
	/* Each component must be a real name: no "", ".", "..", nothing longer
	 * than NAME_MAX. The scanner only produces names from readdir(), so this
	 * catches bugs and hostile command-line arguments alike. */
	for (size_t i = 0; i <= len; i++) {
		if (i < len && path[i] != '/')
			continue;
		size_t c = i - start;
		if (c == 0 || c > NAME_MAX)
			return COW_PATH_ESCAPE;
		if (c == 1 && path[start] == '.')
			return COW_PATH_ESCAPE;
		if (c == 2 && path[start] == '.' && path[start + 1] == '.')
			return COW_PATH_ESCAPE;
		start = i + 1;
	}
	return cow_protected_entry(path, len, protected_paths) ? COW_PATH_PROTECTED : COW_PATH_OK;
}

bool cow_path_is_protected_exact(const char *path, char *const *protected_paths)
{
	const char *slash = strrchr(path, '/');
	size_t len = strlen(path);

	/* Protected, and its parent is not: the protected name is the last
	 * component ("a/.git", not "a/.git/config"). */
	if (!cow_protected_entry(path, len, protected_paths))
		return false;
	return !slash || !cow_protected_entry(path, (size_t)(slash - path), protected_paths);
}

bool cow_path_is_protected_ancestor(const char *path, char *const *protected_paths)
{
	STRV_FOREACH(p, protected_paths)
		if (!protected_entry_is_name(*p) && !cow_path_has_prefix(path, *p) &&
		    cow_path_has_prefix(*p, path))
			return true;
	return false;
}

bool cow_codepoint_is_deceptive(uint32_t cp)
{
	/* C1 controls (a terminal may act on them: 0x9b is CSI), and the
	 * characters that reorder or hide text on screen ("Trojan Source",
	 * CVE-2021-42574): bidi embeddings, overrides, isolates and marks,
	 * zero-width characters, line and paragraph separators, the BOM. */
	return (cp >= 0x80 && cp < 0xa0) || cp == 0x061c || (cp >= 0x200b && cp <= 0x200f) ||
	       (cp >= 0x2028 && cp <= 0x202e) || (cp >= 0x2060 && cp <= 0x2069) || cp == 0xfeff;
}

/* Length of the valid UTF-8 sequence at @s (1..4), or 0 if invalid or if
 * it encodes a character that hides or reorders text on screen. */
static size_t utf8_len(const unsigned char *s, size_t left)
{
	uint32_t cp = 0;
	size_t n = utf8_decode(s, left, &cp);

	if (n == 0 || cow_codepoint_is_deceptive(cp))
		return 0;
	return n;
}

bool cow_name_is_odd(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;

	if (len > 0 && (s[0] == ' ' || s[len - 1] == ' '))
		return true;
	for (size_t i = 0; i < len;) {
		if (s[i] < 0x20 || s[i] == 0x7f || s[i] == '"' || s[i] == '\\')
			return true;
		size_t n = utf8_len(s + i, len - i);
		if (n == 0)
			return true;
		i += n;
	}
	return false;
}

char *cow_quote_path(const char *str)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t len = strlen(str);
	char *out, *o;

	if (!cow_name_is_odd(str, len))
		return strdup(str);
	out = malloc(len * 4 + 3);
	if (!out)
		return NULL;
	o = out;
	*o++ = '"';
	for (size_t i = 0; i < len;) {
		size_t n = s[i] >= 0x20 && s[i] != 0x7f ? utf8_len(s + i, len - i) : 0;
		switch (s[i]) {
		case '\n': *o++ = '\\', *o++ = 'n'; i++; continue;
		case '\t': *o++ = '\\', *o++ = 't'; i++; continue;
		case '\r': *o++ = '\\', *o++ = 'r'; i++; continue;
		case '"': *o++ = '\\', *o++ = '"'; i++; continue;
		case '\\': *o++ = '\\', *o++ = '\\'; i++; continue;
		default: break;
		}
		if (n == 0) {
			o += sprintf(o, "\\%03o", s[i]);
			i++;
			continue;
		}
		memcpy(o, s + i, n);
		o += n;
		i += n;
	}
	*o++ = '"';
	*o = '\0';
	return out;
}

char *cow_hex_encode(const char *s)
{
	size_t n = strlen(s);
	char *out = malloc(n * 2 + 1);

	if (!out)
		return NULL;
	for (size_t i = 0; i < n; i++)
		sprintf(out + 2 * i, "%02x", (unsigned char)s[i]);
	out[n * 2] = '\0';
	return out;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1;
}

char *cow_hex_decode(const char *hex)
{
	size_t n = strlen(hex);
	char *out;

	if (n % 2)
		return NULL;
	out = malloc(n / 2 + 1);
	if (!out)
		return NULL;
	for (size_t i = 0; i < n / 2; i++) {
		int a = hexval(hex[2 * i]), b = hexval(hex[2 * i + 1]);
		if (a < 0 || b < 0 || (a == 0 && b == 0)) {
			free(out);
			return NULL;
		}
		out[i] = (char)(a << 4 | b);
	}
	out[n / 2] = '\0';
	return out;
}
