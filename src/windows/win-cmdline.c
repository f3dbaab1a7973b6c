/* Quoting for the C runtime's argument splitting ("Parsing C++
 * command-line arguments" in the Microsoft documentation) and cmd.exe. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-cmdline.h"

typedef struct Buf {
	char *s;
	size_t n, cap;
} Buf;

static int put(Buf *b, char c)
{
	if (b->n + 2 > b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 64;
		char *s = realloc(b->s, cap);

		if (!s)
			return -ENOMEM;
		b->s = s;
		b->cap = cap;
	}
	b->s[b->n++] = c;
	b->s[b->n] = '\0';
	return 0;
}

static int puts_(Buf *b, const char *s)
{
	for (; *s; s++)
		if (put(b, *s) < 0)
			return -ENOMEM;
	return 0;
}

static int quote_arg(Buf *b, const char *a)
{
	if (*a && !strpbrk(a, " \t\n\v\""))
		return puts_(b, a);
	if (put(b, '"') < 0)
		return -ENOMEM;
	for (const char *p = a;; p++) {
		size_t bs = 0;

		while (*p == '\\')
			p++, bs++;
		/* Backslashes double only before a quote (theirs or ours). */
		if (!*p || *p == '"')
			bs = bs * 2 + (*p == '"');
		for (size_t i = 0; i < bs; i++)
			if (put(b, '\\') < 0)
				return -ENOMEM;
		if (!*p)
			break;
		if (put(b, *p) < 0)
			return -ENOMEM;
	}
	return put(b, '"');
}

int win_cmdline_quote(char *const *argv, char **ret)
{
	Buf b = { 0 };

	if (!argv || !argv[0] || !*argv[0] || strchr(argv[0], '"'))
		return -EINVAL;
	if (put(&b, '"') < 0 || puts_(&b, argv[0]) < 0 || put(&b, '"') < 0)
		goto oom;
	for (size_t i = 1; argv[i]; i++)
		if (put(&b, ' ') < 0 || quote_arg(&b, argv[i]) < 0)
			goto oom;
	*ret = b.s;
	return 0;
oom:
	free(b.s);
	return -ENOMEM;
}

int win_cmdline_split(const char *p, char ***ret)
{
	_cleanup_strv_ char **l = calloc(1, sizeof(char *));
	Buf b = { 0 };

	if (!l)
		return -ENOMEM;
	/* The program name: no escapes at all. */
	if (put(&b, '\0') < 0)
		return -ENOMEM;
	b.n = 0;
	if (*p == '"') {
		for (p++; *p && *p != '"'; p++)
			if (put(&b, *p) < 0)
				goto oom;
		if (*p)
			p++;
	} else
		for (; *p && *p != ' ' && *p != '\t'; p++)
			if (put(&b, *p) < 0)
				goto oom;
	if (strv_consume(&l, b.s) < 0)
		return -ENOMEM;

	for (;;) {
		bool inq = false;

		while (*p == ' ' || *p == '\t')
			p++;
		if (!*p)
			break;
		b = (Buf){ 0 };
		if (put(&b, '\0') < 0)
			return -ENOMEM;
		b.n = 0;
		for (; *p; p++) {
			size_t bs = 0;

			while (*p == '\\')
				p++, bs++;
			if (*p == '"') {
				for (size_t i = 0; i < bs / 2; i++)
					if (put(&b, '\\') < 0)
						goto oom;
				if (bs % 2) {
					if (put(&b, '"') < 0)
						goto oom;
				} else if (inq && p[1] == '"') {
					if (put(&b, '"') < 0)
						goto oom;
					p++;
				} else
					inq = !inq;
				continue;
			}
			for (size_t i = 0; i < bs; i++)
				if (put(&b, '\\') < 0)
					goto oom;
			if (!*p)
				break;
			if (!inq && (*p == ' ' || *p == '\t'))
				break;
			if (put(&b, *p) < 0)
				goto oom;
		}
		if (strv_consume(&l, b.s) < 0)
			return -ENOMEM;
		if (!*p)
			break;
	}
	*ret = TAKE_PTR(l);
	return 0;
oom:
	free(b.s);
	return -ENOMEM;
}

static const char *batch_bad(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if (*p == '"')
			return "a '\"'";
		if (*p == '%')
			return "a '%'";
		if (*p == '!')
			return "a '!'";
		if (*p < 0x20 || *p == 0x7f)
			return "a control character";
	}
	return NULL;
}

int win_cmdline_batch(const char *comspec, const char *script, char *const *args, char **ret,
		      char *why, size_t n_why)
{
	Buf b = { 0 };
	const char *bad;

	if ((bad = batch_bad(script))) {
		snprintf(why, n_why, "the batch file's path holds %s, which cmd.exe interprets", bad);
		return -EINVAL;
	}
	for (size_t i = 0; args && args[i]; i++)
		if ((bad = batch_bad(args[i]))) {
			snprintf(why, n_why,
				 "argument %zu holds %s, which cmd.exe would interpret in a batch file's "
				 "arguments whatever the quoting",
				 i + 1, bad);
			return -EINVAL;
		}
	if (strchr(comspec, '"'))
		return -EINVAL;
	/* /d: no AutoRun commands from the registry; /v:off: no !delayed!
	 * expansion; /s: strip exactly the outer quotes of what follows /c. */
	if (put(&b, '"') < 0 || puts_(&b, comspec) < 0 ||
	    puts_(&b, "\" /d /e:on /v:off /s /c \"\"") < 0 || puts_(&b, script) < 0 ||
	    put(&b, '"') < 0)
		goto oom;
	for (size_t i = 0; args && args[i]; i++) {
		/* Inside quotes cmd.exe reads & | < > ( ) ^ literally; a trailing
		 * backslash cannot escape the closing quote for cmd.exe. */
		if (puts_(&b, " \"") < 0 || puts_(&b, args[i]) < 0 || put(&b, '"') < 0)
			goto oom;
	}
	if (put(&b, '"') < 0)
		goto oom;
	*ret = b.s;
	return 0;
oom:
	free(b.s);
	return -ENOMEM;
}
