/* The table-driven option parser (cli-options.h). */
#include <errno.h>
#include <stdbool.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli-options.h"
#include "common/strv.h"

__attribute__((format(printf, 2, 3))) static int usage_error(char **reterr, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (vasprintf(reterr, fmt, ap) < 0)
		*reterr = NULL;
	va_end(ap);
	return -EINVAL;
}

static int push(CliParsed *p, int id, const char *value)
{
	CliOptionValue *n = realloc(p->opts, (p->n_opts + 1) * sizeof(*n));

	if (!n)
		return -ENOMEM;
	p->opts = n;
	p->opts[p->n_opts++] = (CliOptionValue){ .id = id, .value = value };
	return 0;
}

static const CliOption *find_long(const CliOption *t, const char *name, size_t len)
{
	for (; t->name; t++)
		if (strlen(t->name) == len && strncmp(t->name, name, len) == 0)
			return t;
	return NULL;
}

static const CliOption *find_short(const CliOption *t, char c)
{
	for (; t->name; t++)
		if (t->short_name && t->short_name == c)
			return t;
	return NULL;
}

/* "--name", "--name=value": returns how many argv entries it used. */
static int parse_long(const CliOption *t, unsigned flags, int argc, char **argv, int i,
		      CliParsed *p, char **reterr)
{
	bool lenient = flags & CLI_PARSE_LENIENT;
	const char *arg = argv[i] + 2, *eq = strchr(arg, '=');
	size_t len = eq ? (size_t)(eq - arg) : strlen(arg);
	const CliOption *o = find_long(t, arg, len);
	int r;

	if (!o)
		return lenient ? 1 : usage_error(reterr, "unknown option '--%.*s'", (int)len, arg);
	switch (o->arg) {
	case CLI_ARG_NONE:
		if (eq)
			return lenient ? 1 : usage_error(reterr, "option '--%s' takes no argument", o->name);
		r = push(p, o->id, NULL);
		return r < 0 ? r : 1;
	case CLI_ARG_OPTIONAL:
		r = push(p, o->id, eq ? eq + 1 : NULL);
		return r < 0 ? r : 1;
	case CLI_ARG_REQUIRED:
		if (eq) {
			r = push(p, o->id, eq + 1);
			return r < 0 ? r : 1;
		}
		if (i + 1 >= argc)
			return lenient ? 1 : usage_error(reterr, "option '--%s' needs an argument", o->name);
		r = push(p, o->id, argv[i + 1]);
		return r < 0 ? r : 2;
	}
	return -EINVAL;
}

/* "-x", "-xy" (flags), "-pFILE", "-p FILE". */
static int parse_short(const CliOption *t, unsigned flags, int argc, char **argv, int i,
		       CliParsed *p, char **reterr)
{
	bool lenient = flags & CLI_PARSE_LENIENT;

	for (const char *c = argv[i] + 1; *c; c++) {
		const CliOption *o = find_short(t, *c);
		int r;

		if (!o) /* lenient: the rest of this argument is not ours to read */
			return lenient ? 1 : usage_error(reterr, "unknown option '-%c'", *c);
		if (o->arg != CLI_ARG_REQUIRED) {
			r = push(p, o->id, NULL);
			if (r < 0)
				return r;
			continue;
		}
		if (c[1]) {
			r = push(p, o->id, c + 1);
			return r < 0 ? r : 1;
		}
		if (i + 1 >= argc)
			return lenient ? 1 : usage_error(reterr, "option '-%c' needs an argument", *c);
		r = push(p, o->id, argv[i + 1]);
		return r < 0 ? r : 2;
	}
	return 1;
}

int cli_parse_options(const CliOption *table, unsigned flags, int argc, char **argv,
		      CliParsed *ret, char **reterr)
{
	CliParsed p = {};
	int i = 1, r = 0;

	*reterr = NULL;
	while (i < argc) {
		const char *a = argv[i];

		if (strcmp(a, "--") == 0) {
			i++;
			break;
		}
		if (a[0] != '-' || a[1] == '\0') {
			if (flags & CLI_PARSE_STOP_AT_POSITIONAL)
				break;
			r = strv_extend(&p.pos, a);
			if (r < 0)
				goto fail;
			i++;
			continue;
		}
		r = a[1] == '-' ? parse_long(table, flags, argc, argv, i, &p, reterr)
				: parse_short(table, flags, argc, argv, i, &p, reterr);
		if (r < 0)
			goto fail;
		i += r;
	}
	for (; i < argc; i++)
		if ((r = strv_extend(&p.pos, argv[i])) < 0)
			goto fail;
	*ret = p;
	return 0;
fail:
	cli_parsed_done(&p);
	return r;
}

void cli_parsed_done(CliParsed *p)
{
	free(p->opts);
	strv_free(p->pos);
	*p = (CliParsed){};
}
