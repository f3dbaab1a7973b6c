/* Windows path normalization and containment, after the rules of
 * RtlGetFullPathName_U as documented ("Naming Files, Paths, and
 * Namespaces"), restricted to absolute paths. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/macro.h"
#include "windows/win-path.h"

static bool is_sep(char c)
{
	return c == '\\' || c == '/';
}

static char fold(char c)
{
	return c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') : c;
}

/* Reserved device names, matched on the part before the first '.' with
 * trailing spaces removed; COM and LPT also with ¹²³ (UTF-8 C2 B9/B2/B3). */
static bool is_device_name(const char *c, size_t n)
{
	static const char *const names[] = { "CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$" };
	size_t base = 0;

	while (base < n && c[base] != '.')
		base++;
	while (base > 0 && c[base - 1] == ' ')
		base--;
	for (size_t i = 0; i < ELEMENTSOF(names); i++)
		if (base == strlen(names[i]) && strncasecmp(c, names[i], base) == 0)
			return true;
	if (base >= 4 && (strncasecmp(c, "COM", 3) == 0 || strncasecmp(c, "LPT", 3) == 0)) {
		if (base == 4 && c[3] >= '0' && c[3] <= '9')
			return true;
		if (base == 5 && (unsigned char)c[3] == 0xC2 &&
		    ((unsigned char)c[4] == 0xB9 || (unsigned char)c[4] == 0xB2 ||
		     (unsigned char)c[4] == 0xB3))
			return true;
	}
	return false;
}

/* "PROGRA~1", "GIT~1.CON": up to 8 characters with '~' and a digit,
 * optionally a dot and up to 3 more. */
static bool looks_short(const char *c, size_t n)
{
	size_t dot = n;

	for (size_t i = 0; i < n; i++)
		if (c[i] == '.') {
			dot = i;
			break;
		}
	if (dot > 8 || (dot < n && n - dot - 1 > 3))
		return false;
	for (size_t i = 0; i + 1 < dot; i++)
		if (c[i] == '~' && c[i + 1] >= '0' && c[i + 1] <= '9')
			return true;
	return false;
}

static int check_component(const char *c, size_t n, unsigned *flags)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char ch = (unsigned char)c[i];

		if (ch < 0x20 || ch == 0x7f || strchr("<>\"|?*:", ch))
			return -EINVAL;
	}
	if (is_device_name(c, n))
		return -EINVAL;
	if (looks_short(c, n))
		*flags |= WIN_PATH_SHORT_NAME;
	return 0;
}

int win_path_normalize(const char *in, char **ret, unsigned *ret_flags)
{
	_cleanup_free_ char *out = NULL;
	const char *p = in;
	size_t len = 0, root_len;
	unsigned flags = 0;
	bool verbatim = false;

	if (!in || !*in)
		return -EINVAL;
	out = malloc(strlen(in) + 4);
	if (!out)
		return -ENOMEM;

	if (is_sep(p[0]) && is_sep(p[1]) && p[2] == '?' && is_sep(p[3])) {
		verbatim = true;
		p += 4;
		if (strncasecmp(p, "UNC", 3) == 0 && is_sep(p[3])) {
			p += 4;
			goto unc;
		}
	} else if (is_sep(p[0]) && is_sep(p[1])) {
		if ((p[2] == '.' || p[2] == '?') && (is_sep(p[3]) || !p[3]))
			return -EINVAL; /* \\.\ and \\?\ without a drive: device namespace */
		p += 2;
		goto unc;
	} else if (is_sep(p[0]))
		return -EINVAL; /* rooted on the current drive, or \??\ */

	/* A drive: "C:\". */
	if (!((p[0] >= 'A' && p[0] <= 'Z') || (p[0] >= 'a' && p[0] <= 'z')) || p[1] != ':' ||
	    !(is_sep(p[2]) || (p[2] == '\0' && !verbatim)))
		return -EINVAL;
	if (p[2] == '\0')
		return -EINVAL; /* "C:" is drive-relative */
	out[0] = fold(p[0]);
	out[1] = ':';
	out[2] = '\\';
	len = root_len = 3;
	p += 3;
	goto components;

unc:
	/* \\server\share: both required, neither "." nor "..". */
	out[0] = out[1] = '\\';
	len = 2;
	for (int part = 0; part < 2; part++) {
		size_t n = 0;

		while (p[n] && !is_sep(p[n]))
			n++;
		if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		if (check_component(p, n, &flags) < 0)
			return -EINVAL;
		memcpy(out + len, p, n);
		len += n;
		out[len++] = '\\';
		p += n;
		/* One separator between server and share; any after the share. */
		if (part == 0 && is_sep(*p))
			p++;
		else
			while (is_sep(*p))
				p++;
	}
	root_len = len;

components:
	while (*p) {
		size_t n = 0, keep;

		while (is_sep(*p))
			p++;
		if (!*p)
			break;
		while (p[n] && !is_sep(p[n]))
			n++;
		if ((n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.')) {
			if (n == 2) {
				/* Pop the last component; never above the root. */
				if (len == root_len)
					return -EINVAL;
				len--; /* the separator after it */
				while (len > root_len && out[len - 1] != '\\')
					len--;
			}
			p += n;
			continue;
		}
		keep = n;
		while (keep > 0 && (p[keep - 1] == '.' || p[keep - 1] == ' '))
			keep--;
		if (keep != n && verbatim)
			return -EINVAL;
		if (keep == 0)
			return -EINVAL; /* "..." or " " names nothing a rule can hold */
		if (check_component(p, keep, &flags) < 0)
			return -EINVAL;
		memcpy(out + len, p, keep);
		len += keep;
		out[len++] = '\\';
		p += n;
	}
	/* No trailing separator except on a drive's root ("C:\\"). */
	if (len > root_len || out[1] == '\\')
		len--;
	out[len] = '\0';
	if (ret_flags)
		*ret_flags = flags;
	*ret = TAKE_PTR(out);
	return 0;
}

bool win_path_equal(const char *a, const char *b)
{
	for (; *a && *b; a++, b++)
		if (fold(*a) != fold(*b))
			return false;
	return *a == *b;
}

bool win_path_is_within(const char *path, const char *root)
{
	size_t n = strlen(root);

	for (size_t i = 0; i < n; i++)
		if (!path[i] || fold(path[i]) != fold(root[i]))
			return false;
	return path[n] == '\0' || path[n] == '\\' || (n > 0 && root[n - 1] == '\\');
}

int win_path_join(const char *root, const char *rel, char **ret)
{
	_cleanup_free_ char *joined = NULL;
	size_t n = strlen(root);
	const char *p = rel;

	if (!*rel || is_sep(rel[0]) || strchr(rel, ':'))
		return -EINVAL;
	/* Refuse "..", "." and empty components: a protected path must name a
	 * place below the root, not steer out of it. */
	while (*p) {
		size_t c = 0;

		while (p[c] && !is_sep(p[c]))
			c++;
		if (c == 0 || (c == 1 && p[0] == '.') || (c == 2 && p[0] == '.' && p[1] == '.'))
			return -EINVAL;
		p += c;
		if (*p)
			p++;
	}
	joined = malloc(n + strlen(rel) + 2);
	if (!joined)
		return -ENOMEM;
	strcpy(joined, root);
	if (n == 0 || root[n - 1] != '\\')
		strcat(joined, "\\");
	strcat(joined, rel);
	return win_path_normalize(joined, ret, NULL);
}

const char *win_path_extension(const char *path)
{
	const char *base = strrchr(path, '\\');
	const char *dot;

	base = base ? base + 1 : path;
	dot = strrchr(base, '.');
	return dot ? dot : "";
}
