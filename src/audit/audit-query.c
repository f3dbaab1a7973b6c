/* ward log's pure half: times, filters and table rows. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "audit/audit-query.h"
#include "common/macro.h"
#include "common/utf8.h"

/* clang-format off */
static const char *const known_events[] = {
	"start", "exit", "net", "error", "quarantine", "apply", "undo", "discard", "recover",
};
/* clang-format on */

const char audit_event_names[] = "start, exit, net, error, quarantine, apply, undo, discard, recover";

const char audit_table_header[] = "TIME                     SESSION          EVENT      DETAILS";

bool audit_event_known(const char *name)
{
	for (size_t i = 0; i < ELEMENTSOF(known_events); i++)
		if (strcmp(name, known_events[i]) == 0)
			return true;
	return false;
}

/* Exactly @n digits at *@p, advancing it. */
static bool digits(const char **p, int n, int *ret)
{
	int v = 0;

	for (int i = 0; i < n; i++) {
		char c = (*p)[i];
		if (c < '0' || c > '9')
			return false;
		v = v * 10 + (c - '0');
	}
	*p += n;
	*ret = v;
	return true;
}

static int days_in_month(int y, int m)
{
	static const int d[] = { 31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31 };
	bool leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return m == 2 && leap ? 29 : d[m - 1];
}

/* Days from 1970-01-01 to @y-@m-@d (proleptic Gregorian), without timegm's
 * dependence on the process's time zone state. */
static int64_t days_from_civil(int64_t y, int m, int d)
{
	y -= m <= 2;
	int64_t era = (y >= 0 ? y : y - 399) / 400;
	int64_t yoe = y - era * 400;
	int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;

	return era * 146097 + doe - 719468;
}

int audit_parse_rfc3339(const char *s, int64_t *ret_ms)
{
	const char *p = s;
	int y, mo, d, h = 0, mi = 0, sec = 0, ms = 0, off = 0;

	if (!s || !digits(&p, 4, &y) || *p++ != '-' || !digits(&p, 2, &mo) || *p++ != '-' ||
	    !digits(&p, 2, &d))
		return -EINVAL;
	if (mo < 1 || mo > 12 || d < 1 || d > days_in_month(y, mo))
		return -EINVAL;
	if (*p) {
		if (*p != 'T' && *p != 't' && *p != ' ')
			return -EINVAL;
		p++;
		if (!digits(&p, 2, &h) || *p++ != ':' || !digits(&p, 2, &mi) || *p++ != ':' ||
		    !digits(&p, 2, &sec))
			return -EINVAL;
		/* 60: a leap second, counted as the next second's start. */
		if (h > 23 || mi > 59 || sec > 60)
			return -EINVAL;
		if (*p == '.') {
			int n = 0, scale = 100;
			p++;
			while (*p >= '0' && *p <= '9') {
				ms += (*p - '0') * scale;
				scale /= 10;
				p++;
				n++;
			}
			if (n == 0)
				return -EINVAL;
		}
		if (*p == 'Z' || *p == 'z')
			p++;
		else if (*p == '+' || *p == '-') {
			int sign = *p == '-' ? -1 : 1, oh, om;
			p++;
			if (!digits(&p, 2, &oh) || *p++ != ':' || !digits(&p, 2, &om) || oh > 23 ||
			    om > 59)
				return -EINVAL;
			off = sign * (oh * 60 + om);
		} else
			return -EINVAL;
		if (*p)
			return -EINVAL;
	}
	int64_t secs = days_from_civil(y, mo, d) * 86400 + h * 3600 + mi * 60 + sec - off * 60;
	*ret_ms = secs * 1000 + ms;
	return 0;
}

int audit_parse_since(const char *s, int64_t now_ms, int64_t *ret_ms)
{
	const char *p = s;
	int64_t v = 0, unit;

	if (!s || !*s)
		return -EINVAL;
	if (audit_parse_rfc3339(s, ret_ms) == 0)
		return 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (v > 100000000)
			return -ERANGE;
		v = v * 10 + (*p - '0');
	}
	if (p == s || p[0] == '\0' || p[1] != '\0')
		return -EINVAL;
	switch (*p) {
	case 's':
		unit = 1000;
		break;
	case 'm':
		unit = 60 * 1000;
		break;
	case 'h':
		unit = 3600 * 1000;
		break;
	case 'd':
		unit = 86400 * 1000;
		break;
	case 'w':
		unit = 7 * 86400 * 1000LL;
		break;
	default:
		return -EINVAL;
	}
	*ret_ms = now_ms - v * unit;
	return 0;
}

static const char *str_field(const cJSON *o, const char *name)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	return cJSON_IsString(it) ? it->valuestring : NULL;
}

bool audit_filter_match(const AuditFilter *f, const cJSON *event)
{
	const char *name = str_field(event, "event");

	if (!cJSON_IsObject(event))
		return false;
	if (f->session) {
		const char *sid = str_field(event, "session");
		if (!sid || strncmp(sid, f->session, strlen(f->session)) != 0)
			return false;
	}
	if (f->events) {
		bool any = false;
		for (char **e = f->events; *e && !any; e++)
			any = name && strcmp(name, *e) == 0;
		if (!any)
			return false;
	}
	if (f->has_since) {
		const char *ts = str_field(event, "ts");
		int64_t t;
		if (!ts || audit_parse_rfc3339(ts, &t) < 0 || t < f->since_ms)
			return false;
	}
	return true;
}

/* @s with every control character, C1 control, bidirectional override and
 * invalid UTF-8 byte written as an escape: text from the log (a command's
 * argv, a host name) must not drive the reader's terminal. */
static void put_safe(FILE *f, const char *s)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t left = strlen(s);

	while (left > 0) {
		uint32_t cp;
		size_t n = utf8_decode(p, left, &cp);

		if (n == 0) {
			fprintf(f, "\\x%02x", p[0]);
			p++;
			left--;
			continue;
		}
		if (cp == '\n')
			fputs("\\n", f);
		else if (cp == '\t')
			fputs("\\t", f);
		else if (cp == '\r')
			fputs("\\r", f);
		else if (cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp < 0xa0))
			fprintf(f, "\\x%02x", (unsigned)cp);
		else if ((cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069) ||
			 cp == 0x200e || cp == 0x200f || cp == 0x061c)
			fprintf(f, "\\u%04x", (unsigned)cp);
		else
			fwrite(p, 1, n, f);
		p += n;
		left -= n;
	}
}

/* An argument as a shell would need it: bare when it is plain. */
static void put_arg(FILE *f, const char *a)
{
	if (a[0] && strspn(a, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
			      "-_./=:,+@%") == strlen(a)) {
		put_safe(f, a);
		return;
	}
	fputc('\'', f);
	for (const char *c = a; *c; c++) {
		if (*c == '\'') {
			fputs("'\\''", f);
			continue;
		}
		char one[2] = { *c, 0 };
		/* Whole UTF-8 sequences go through put_safe together. */
		if ((unsigned char)*c >= 0x80) {
			size_t n = 1;
			while (c[n] && ((unsigned char)c[n] & 0xc0) == 0x80)
				n++;
			char seq[8] = { 0 };
			memcpy(seq, c, n < 7 ? n : 7);
			put_safe(f, seq);
			c += n - 1;
			continue;
		}
		put_safe(f, one);
	}
	fputc('\'', f);
}

/* "@before<number>@after" when @name is a number. */
static void put_num(FILE *f, const cJSON *o, const char *name, const char *before,
		    const char *after)
{
	const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, name);

	if (cJSON_IsNumber(it))
		fprintf(f, "%s%.0f%s", before, it->valuedouble, after);
}

static void put_str(FILE *f, const cJSON *o, const char *name, const char *before)
{
	const char *v = str_field(o, name);

	if (v) {
		fputs(before, f);
		put_safe(f, v);
	}
}

static bool is_true(const cJSON *o, const char *name)
{
	return cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, name));
}

static void details_start(FILE *f, const cJSON *e)
{
	const cJSON *argv = cJSON_GetObjectItemCaseSensitive(e, "argv"), *a;
	const cJSON *deg = cJSON_GetObjectItemCaseSensitive(e, "degraded");

	put_num(f, e, "tier", "tier ", "");
	put_str(f, e, "network", ", net ");
	if (is_true(e, "cow"))
		fputs(", cow", f);
	if (cJSON_GetArraySize(deg) > 0)
		fprintf(f, ", %d degraded", cJSON_GetArraySize(deg));
	put_str(f, e, "workspace", ", in ");
	fputs(":", f);
	cJSON_ArrayForEach(a, argv)
	{
		fputc(' ', f);
		if (cJSON_IsString(a))
			put_arg(f, a->valuestring);
	}
}

static void details_exit(FILE *f, const cJSON *e)
{
	const cJSON *status = cJSON_GetObjectItemCaseSensitive(e, "status");
	const cJSON *sig = cJSON_GetObjectItemCaseSensitive(e, "signal");
	const cJSON *refused = cJSON_GetObjectItemCaseSensitive(e, "net_refused");

	put_num(f, e, "exit_code", "exit ", "");
	if (cJSON_IsNumber(sig))
		fprintf(f, " (signal %.0f)", sig->valuedouble);
	else if (cJSON_IsNumber(status))
		fprintf(f, " (status %.0f)", status->valuedouble);
	put_num(f, e, "duration_ms", " in ", " ms");
	if (is_true(e, "timed_out"))
		fputs(", timed out", f);
	if (is_true(e, "oom_killed"))
		fputs(", out of memory", f);
	if (is_true(e, "parent_died"))
		fputs(", parent died", f);
	put_str(f, e, "setup_step", ", setup failed: ");
	if (cJSON_GetArraySize(refused) > 0)
		fprintf(f, ", %d refused host(s)", cJSON_GetArraySize(refused));
	put_num(f, e, "quarantined", ", ", " quarantined");
	put_num(f, e, "events_lost", ", ", " event(s) lost");
}

static void details_net(FILE *f, const cJSON *e)
{
	const char *v = str_field(e, "verdict");

	put_safe(f, v ? v : "?");
	put_str(f, e, "host", " ");
	put_num(f, e, "port", ":", "");
	put_str(f, e, "kind", " (");
	if (str_field(e, "kind"))
		fputc(')', f);
	put_str(f, e, "rule", " rule ");
	put_str(f, e, "list", " in ");
	put_str(f, e, "program", ", program ");
}

static void details_review(FILE *f, const cJSON *e)
{
	put_str(f, e, "result", "");
	put_num(f, e, "changed", ", ", " changed");
	put_num(f, e, "refused", ", ", " refused");
	put_num(f, e, "failed", ", ", " failed");
	put_num(f, e, "dropped", ", ", " dropped");
	put_str(f, e, "recovered", "recovered: ");
	put_str(f, e, "workspace", ", in ");
}

/* @s escaped, padded to @width, and the space between columns. */
static void column(FILE *f, const char *s, size_t width)
{
	size_t n = strlen(s);

	put_safe(f, s);
	fprintf(f, "%*s ", n < width ? (int)(width - n) : 0, "");
}

char *audit_format_row(const cJSON *event)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	const char *ts = str_field(event, "ts"), *sid = str_field(event, "session");
	const char *name = str_field(event, "event");

	if (!f)
		return NULL;
	column(f, ts ? ts : "-", 24);
	column(f, sid ? sid : "-", 16);
	column(f, name ? name : "?", 10);
	if (!name)
		;
	else if (strcmp(name, "start") == 0)
		details_start(f, event);
	else if (strcmp(name, "exit") == 0)
		details_exit(f, event);
	else if (strcmp(name, "net") == 0)
		details_net(f, event);
	else if (strcmp(name, "error") == 0) {
		put_str(f, event, "step", "");
		put_str(f, event, "error", ": ");
	} else if (strcmp(name, "quarantine") == 0) {
		put_str(f, event, "action", "");
		put_str(f, event, "path", " ");
		put_str(f, event, "reason", " (");
		if (str_field(event, "reason"))
			fputc(')', f);
		put_str(f, event, "to", " to ");
	} else if (strcmp(name, "apply") == 0 || strcmp(name, "undo") == 0 ||
		   strcmp(name, "discard") == 0 || strcmp(name, "recover") == 0)
		details_review(f, event);
	else {
		/* An event this ward does not know: its fields as JSON. */
		cJSON *copy = cJSON_Duplicate(event, true);
		char *text = NULL;
		const char *env[] = { "v", "ts", "event", "session" };
		for (size_t i = 0; copy && i < ELEMENTSOF(env); i++)
			cJSON_DeleteItemFromObjectCaseSensitive(copy, env[i]);
		text = copy ? cJSON_PrintUnformatted(copy) : NULL;
		if (text)
			put_safe(f, text);
		free(text);
		cJSON_Delete(copy);
	}
	if (fclose(f) != 0) {
		free(buf);
		return NULL;
	}
	/* No trailing blanks on a row without details. */
	while (size > 0 && buf[size - 1] == ' ')
		buf[--size] = '\0';
	return buf;
}
