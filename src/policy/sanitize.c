/* Credentials out of toolchain configuration files (sanitize.h).
 *
 * A line is dropped when its key names a credential (npm's _authToken,
 * _auth, _password; cargo's token; git's http.extraHeader; anything with
 * auth, token, passw, secret, credential, cookie or api key in its name),
 * when it sits in a section whose name does ([credential], [credential
 * "https://host"]), or when it is a comment that would be one of those
 * (a commented-out token is still a token). A kept line loses the user
 * information of every URL in it ("https://user:token@host/" becomes
 * "https://host/"): pip's index-url, npm's registry, git's url.<base>
 * sections and GOPROXY carry credentials that way. A line dropped for its
 * key takes its backslash continuation lines with it (gitconfig). */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "policy/sanitize.h"

static const char *const credential_words[] = {
	"auth", "token", "passw", "secret", "credential", "extraheader",
	"apikey", "api_key", "api-key", "cookie",
};

/* Does @s (length @n) contain one of the words, case-insensitively? */
static bool names_credential(const char *s, size_t n)
{
	for (size_t w = 0; w < ELEMENTSOF(credential_words); w++) {
		size_t k = strlen(credential_words[w]);
		for (size_t i = 0; i + k <= n; i++)
			if (strncasecmp(s + i, credential_words[w], k) == 0)
				return true;
	}
	return false;
}

/* The key of "key = value", "key: value" or npm's "//host/:key=value":
 * up to the first '=', unless a ':' followed by a blank comes first. */
static size_t key_length(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '=')
			return i;
		if (s[i] == ':' && (i + 1 == n || s[i + 1] == ' ' || s[i + 1] == '\t'))
			return i;
	}
	return n;
}

/* Copy @n bytes of @line to @out without the user information of its URLs.
 * Returns whether anything was cut. */
static bool strip_userinfo(const char *line, size_t n, char *out, size_t *ret_len)
{
	size_t o = 0;
	bool cut = false;

	for (size_t i = 0; i < n;) {
		if (i + 3 <= n && memcmp(line + i, "://", 3) == 0) {
			size_t a = i + 3, end = a, at = 0;
			bool has_at = false;

			memcpy(out + o, "://", 3);
			o += 3;
			/* The authority ends at the path, query, fragment, a blank
			 * or a quote. */
			while (end < n && !strchr("/?#\"' \t\r", line[end])) {
				if (line[end] == '@') {
					at = end;
					has_at = true;
				}
				end++;
			}
			if (has_at) {
				a = at + 1;
				cut = true;
			}
			memcpy(out + o, line + a, end - a);
			o += end - a;
			i = end;
			continue;
		}
		out[o++] = line[i++];
	}
	*ret_len = o;
	return cut;
}

int sanitize_config(const char *text, size_t n, char **ret, size_t *ret_changed)
{
	char *out;
	size_t o = 0, changed = 0;
	bool secret_section = false, continuation = false;

	if (!text || !ret || n > SANITIZE_MAX || memchr(text, '\0', n))
		return -EINVAL;
	out = malloc(n + 1);
	if (!out)
		return -ENOMEM;

	for (size_t i = 0; i < n;) {
		const char *line = text + i, *nl = memchr(line, '\n', n - i);
		size_t len = nl ? (size_t)(nl - line) : n - i; /* without the newline */
		size_t full = nl ? len + 1 : len;
		const char *s = line, *end = line + len;
		bool comment = false, drop = false, cont;

		i += full;
		cont = len > 0 && line[len - 1 - (len > 1 && line[len - 1] == '\r')] == '\\';
		if (continuation) {
			/* The rest of a dropped line. */
			continuation = cont;
			changed++;
			continue;
		}
		while (s < end && (*s == ' ' || *s == '\t'))
			s++;
		if (s < end && (*s == '#' || *s == ';')) {
			comment = true;
			while (s < end && (*s == '#' || *s == ';' || *s == ' ' || *s == '\t'))
				s++;
		}
		size_t rest = (size_t)(end - s);

		if (rest > 0 && *s == '[') {
			/* The section's kind, before a quoted subsection
			 * (git's [url "https://user:token@host/"] is a url
			 * section; its user information is cut below). */
			size_t name_len = 0;
			while (name_len < rest && !strchr("]\" \t", s[name_len]))
				name_len++;
			if (comment)
				drop = names_credential(s, name_len);
			else
				secret_section = names_credential(s, name_len);
		} else if (rest > 0 && *s != '\r') {
			drop = names_credential(s, key_length(s, rest)) ||
			       (secret_section && !comment);
		}
		if (drop) {
			continuation = cont;
			changed++;
			continue;
		}

		size_t kept;
		if (strip_userinfo(line, len, out + o, &kept)) {
			const char *k = out + o + (s - line);
			size_t krest = kept > (size_t)(s - line) ? kept - (size_t)(s - line) : 0;

			changed++;
			/* A commented-out credential URL goes; so does a line whose
			 * key, once the user information is cut ('=' can sit in
			 * it), names a credential. */
			if (comment || (krest > 0 && *k != '[' &&
					names_credential(k, key_length(k, krest)))) {
				continuation = cont && !comment;
				continue;
			}
		}
		o += kept;
		if (nl)
			out[o++] = '\n';
	}
	out[o] = '\0';
	*ret = out;
	if (ret_changed)
		*ret_changed = changed;
	return 0;
}
