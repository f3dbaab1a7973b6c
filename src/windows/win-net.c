/* The network class of a Windows run and the loopback exemption list. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "windows/win-net.h"
#include "windows/win-path.h"

static const char *const class_names[_WIN_NET_CLASS_MAX] = {
	[WIN_NET_NONE] = "none",
	[WIN_NET_PROXY] = "proxy",
	[WIN_NET_COMMAND] = "command",
};

const char *win_net_class_name(WinNetClass c)
{
	return c >= 0 && c < _WIN_NET_CLASS_MAX ? class_names[c] : "?";
}

static bool bare_name(const char *s)
{
	if (!s || !*s || strcmp(s, ".") == 0 || strcmp(s, "..") == 0)
		return false;
	for (; *s; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		      (*s >= '0' && *s <= '9') || strchr("._+-", *s)))
			return false;
	return true;
}

/* Whether the last component of @app, less a .exe or .com, is @name. */
static bool program_is(const char *app, const char *name)
{
	const char *base = strrchr(app, '\\');
	size_t n;

	base = base ? base + 1 : app;
	n = strlen(base);
	if (n > 4 && (strcasecmp(base + n - 4, ".exe") == 0 || strcasecmp(base + n - 4, ".com") == 0))
		n -= 4;
	return strlen(name) == n && strncasecmp(base, name, n) == 0;
}

int win_net_decide(const WinNetInput *in, WinNetDecision *ret, char *why, size_t n_why)
{
	memset(ret, 0, sizeof(*ret));
	ret->wfp = true;
	for (char *const *c = in->commands; c && *c; c++)
		if (!bare_name(*c)) {
			snprintf(why, n_why,
				 "network.commands: '%s' is not a bare program name (letters, digits, "
				 "'.', '_', '+', '-')",
				 *c);
			return -EINVAL;
		}
	if (!in->proxy) {
		ret->cls = WIN_NET_NONE;
		if (in->commands && in->commands[0])
			snprintf(ret->note, sizeof(ret->note),
				 "network.commands ignored: network.mode is none");
		return 0;
	}
	if (in->proxy_port == 0) {
		snprintf(why, n_why, "network.mode proxy without a proxy port");
		return -EINVAL;
	}
	ret->cls = WIN_NET_PROXY;
	ret->proxy_port = in->proxy_port;
	ret->loopback_exempt = true;
	for (char *const *c = in->commands; c && *c && in->application; c++) {
		if (!program_is(in->application, *c))
			continue;
		for (char *const *w = in->writable; w && *w; w++)
			if (win_path_is_within(in->application, *w)) {
				snprintf(ret->note, sizeof(ret->note),
					 "%s is under the writable %s: it runs in the proxy class, not "
					 "as network.commands.%s",
					 in->application, *w, *c);
				return 0;
			}
		ret->cls = WIN_NET_COMMAND;
		ret->capability = "internetClient";
		ret->command = *c;
		return 0;
	}
	return 0;
}

int win_loopback_with(char *const *list, const char *sid, char ***ret)
{
	_cleanup_(strv_freep) char **l = NULL;
	bool present = false;

	for (char *const *s = list; s && *s; s++) {
		if (strcasecmp(*s, sid) == 0) {
			if (present)
				continue;
			present = true;
		}
		if (strv_extend(&l, *s) < 0)
			return -ENOMEM;
	}
	if (!present && strv_extend(&l, sid) < 0)
		return -ENOMEM;
	if (!l && !(l = calloc(1, sizeof(char *))))
		return -ENOMEM;
	*ret = l;
	l = NULL;
	return 0;
}

int win_loopback_without(char *const *list, char *const *sids, char ***ret)
{
	_cleanup_(strv_freep) char **l = calloc(1, sizeof(char *));

	if (!l)
		return -ENOMEM;
	for (char *const *s = list; s && *s; s++) {
		bool drop = false;

		for (char *const *d = sids; d && *d && !drop; d++)
			drop = strcasecmp(*s, *d) == 0;
		if (!drop && strv_extend(&l, *s) < 0)
			return -ENOMEM;
	}
	*ret = l;
	l = NULL;
	return 0;
}
