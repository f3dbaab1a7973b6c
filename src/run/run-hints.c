#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "run/run-hints.h"
#include "common/cleanup.h"
#include "common/path-real.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "net/proxy-report.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)

static bool beneath_any(const char *path, char *const *dirs)
{
	STRV_FOREACH(d, dirs)
	if (path_is_beneath(path, *d))
		return true;
	return false;
}

/* Executable in the sandbox's view: where the mount plan binds with exec
 * (read_exec, read_write, the workspace) and fs.deny does not hide. */
static bool visible_exec(const WardPolicy *p, const char *path, const char *workspace)
{
	if (beneath_any(path, p->fs_deny))
		return false;
	return path_is_beneath(path, workspace) || beneath_any(path, p->fs_read_exec) ||
	       beneath_any(path, p->fs_read_write);
}

/* A preset that would make @path visible, or NULL. */
static const char *preset_exposing(const WardPolicy *pol, const char *path, const char *home,
				   const char *workspace)
{
	const char *const *names = policy_preset_names();
	PolicyContext ctx = { .home = home, .workspace = workspace };

	for (size_t i = 0; names[i]; i++) {
		_cleanup_(policy_freep) WardPolicy *c = NULL;
		PolicyError e;

		if (strv_contains(pol->presets, names[i]))
			continue;
		c = policy_copy(pol);
		if (!c || policy_apply_preset(c, names[i], &e) < 0 ||
		    policy_finalize(c, &ctx, &e) < 0)
			continue;
		if (visible_exec(c, path, workspace))
			return names[i];
	}
	return NULL;
}

/* What to add to fs.read_exec: a version manager's whole tree (~/.pyenv,
 * ~/.nvm: its shims run code from there), else the entry itself. */
static void suggest_entry(const char *path, const char *home, char *buf, size_t n)
{
	if (path_is_beneath(path, home) && strcmp(path, home) != 0) {
		const char *rel = path + strlen(home) + (strcmp(home, "/") == 0 ? 0 : 1);
		size_t first = strcspn(rel, "/");
		if (rel[0] == '.' && strncmp(rel, ".local", first) != 0 &&
		    strncmp(rel, ".config", first) != 0 && strncmp(rel, ".cache", first) != 0) {
			snprintf(buf, n, "~/%.*s", (int)first, rel);
			return;
		}
		snprintf(buf, n, "~/%s", rel);
		return;
	}
	snprintf(buf, n, "%s", path);
}

cJSON *run_hints_path(const WardPolicy *pol, char *const *envp, const char *home,
		      const char *workspace)
{
	const char *path = NULL;
	_cleanup_free_ char *copy = NULL;
	_cleanup_strv_ char **seen = NULL;
	cJSON *hidden = NULL;

	STRV_FOREACH(e, envp)
	if (strncmp(*e, "PATH=", 5) == 0)
		path = *e + 5;
	if (!path || !(copy = strdup(path)))
		return NULL;
	for (char *save = NULL, *ent = strtok_r(copy, ":", &save); ent;
	     ent = strtok_r(NULL, ":", &save)) {
		_cleanup_free_ char *real = NULL;
		char fix[PATH_MAX + 64], sug[PATH_MAX];
		const char *preset;
		struct stat st;

		/* Relative entries follow the cwd; missing ones are missing on
		 * the host as well. */
		if (ent[0] != '/' || stat(ent, &st) < 0 || !S_ISDIR(st.st_mode))
			continue;
		real = path_real(ent);
		if (!real || visible_exec(pol, real, workspace) || strv_contains(seen, real))
			continue;
		if (strv_extend(&seen, real) < 0)
			break;
		preset = preset_exposing(pol, real, home, workspace);
		if (preset)
			snprintf(fix, sizeof(fix), "--preset %s", preset);
		else {
			suggest_entry(real, home, sug, sizeof(sug));
			snprintf(fix, sizeof(fix), "fs.read_exec: [\"%s\"]", sug);
		}
		if (!hidden)
			hidden = cJSON_CreateArray();
		cJSON *h = cJSON_CreateObject();
		cJSON_AddStringToObject(h, "path", ent);
		cJSON_AddStringToObject(h, "expose", fix);
		cJSON_AddItemToArray(hidden, h);
	}
	return hidden;
}

void run_hints_path_line(const cJSON *hidden, char *buf, size_t n)
{
	const cJSON *h;
	size_t o = 0;

	buf[0] = '\0';
	cJSON_ArrayForEach(h, hidden)
	{
		const char *path = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "path"));
		const char *fix = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(h, "expose"));
		int k;

		if (!path || !fix || o >= n)
			continue;
		k = snprintf(buf + o, n - o, "%s%s (%s)", o ? ", " : "", path, fix);
		o += k > 0 ? (size_t)k : 0;
	}
}

static void hint_refusals(int fd, const char *see, cJSON *ev, char ***lines)
{
	ProxyRefusal recs[PROXY_REPORT_DISTINCT + 1];
	char line[4096];
	cJSON *a;
	size_t n;

	if (fd < 0)
		return;
	n = proxy_refusals_read(fd, recs, ELEMENTSOF(recs));
	if (n == 0)
		return;
	(void)proxy_refusals_format(recs, n, see, line, sizeof(line));
	(void)strv_extend(lines, line);
	a = cJSON_AddArrayToObject(ev, "net_refused");
	for (size_t i = 0; i < n; i++) {
		if (recs[i].overflow) {
			cJSON_AddBoolToObject(ev, "net_refused_more", true);
			continue;
		}
		cJSON *r = cJSON_CreateObject();
		cJSON_AddStringToObject(r, "host", recs[i].host);
		cJSON_AddNumberToObject(r, "port", recs[i].port);
		cJSON_AddStringToObject(r, "reason", recs[i].rule);
		cJSON_AddItemToArray(a, r);
	}
}

static void hint_network(const WardPolicy *pol, const BackendResult *res, cJSON *ev,
			 char ***lines)
{
	const BackendNetCounters *c = &res->net;
	char what[256] = "";
	size_t o = 0;

	if (!c->valid)
		return;
	if (c->no_route || c->udp_no_port || c->tcp_refused) {
		cJSON *n = cJSON_AddObjectToObject(ev, "net_attempts");
		cJSON_AddNumberToObject(n, "no_route", (double)c->no_route);
		cJSON_AddNumberToObject(n, "udp_no_port", (double)c->udp_no_port);
		cJSON_AddNumberToObject(n, "tcp_refused", (double)c->tcp_refused);
	}
	if (res->setup_failed || res->exit_code == 0)
		return;
	if (c->no_route)
		o += (size_t)snprintf(what + o, sizeof(what) - o, "%llu connect%s or send%s with no route",
				      (unsigned long long)c->no_route, c->no_route == 1 ? "" : "s",
				      c->no_route == 1 ? "" : "s");
	if (c->udp_no_port && o < sizeof(what))
		o += (size_t)snprintf(what + o, sizeof(what) - o,
				      "%s%llu datagram%s to a loopback port nobody listens on (DNS?)",
				      o ? ", " : "", (unsigned long long)c->udp_no_port,
				      c->udp_no_port == 1 ? "" : "s");
	if (what[0] && pol->net_mode == NET_MODE_NONE)
		(void)strv_extendf(lines,
				   "Hint: the command tried to resolve or connect (%s), but this run "
				   "has no network (--net none): allow hosts with --allow-domain HOST "
				   "(through the proxy), or a host's loopback service with "
				   "--allow-host-port PORT",
				   what);
	else if (what[0])
		(void)strv_extendf(lines,
				   "Hint: the command tried to resolve or connect directly (%s): only "
				   "the proxy reaches out (HTTP_PROXY, ALL_PROXY); a client that "
				   "ignores the proxy variables cannot connect",
				   what);
	if (c->tcp_refused && pol->net_mode == NET_MODE_PROXY && !pol->net_no_capture)
		/* Every address is the namespace's own with capture: a refused
		 * connect was to a port that is neither captured nor listened
		 * on inside. */
		(void)strv_extendf(lines,
				   "Hint: %llu connection%s refused inside the sandbox: only the ports "
				   "in network.capture_ports of other hosts are captured (others go "
				   "through HTTP_PROXY / ALL_PROXY), and localhost is the sandbox's own: "
				   "a service on the host's 127.0.0.1:PORT needs --allow-host-port PORT",
				   (unsigned long long)c->tcp_refused, c->tcp_refused == 1 ? "" : "s");
	else if (c->tcp_refused)
		(void)strv_extendf(lines,
				   "Hint: %llu connection%s to a loopback port where nothing listened "
				   "inside the sandbox; localhost is the sandbox's own: a service on the "
				   "host's 127.0.0.1:PORT needs --allow-host-port PORT",
				   (unsigned long long)c->tcp_refused, c->tcp_refused == 1 ? "" : "s");
}

void run_hints_after(const WardPolicy *pol, const BackendResult *res, int report_rd,
		     const char *see, cJSON *exit_event, char ***ret_lines)
{
	hint_refusals(report_rd, see, exit_event, ret_lines);
	hint_network(pol, res, exit_event, ret_lines);
}
