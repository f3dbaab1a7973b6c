/* The Windows defaults over policy_new_defaults(). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/strv.h"
#include "windows/win-defaults.h"

/* Without SystemRoot, Winsock and much of the C runtime fail to start;
 * the rest are the locations programs look up (all paths: no secrets). */
static const char *const win_pass[] = {
	"PATH", "PATHEXT", "SYSTEMROOT", "WINDIR", "SYSTEMDRIVE", "COMSPEC", "OS",
	"PROCESSOR_ARCHITECTURE", "PROCESSOR_IDENTIFIER", "NUMBER_OF_PROCESSORS",
	"USERNAME", "USERPROFILE", "HOMEDRIVE", "HOMEPATH", "APPDATA", "LOCALAPPDATA",
	"PROGRAMDATA", "PROGRAMFILES", "PROGRAMFILES(X86)", "PROGRAMW6432", "COMMONPROGRAMFILES",
	"COMMONPROGRAMFILES(X86)", "COMMONPROGRAMW6432", "PUBLIC", "ALLUSERSPROFILE",
	"LANG", "LC_*", "TERM", "TZ", NULL
};

/* policy_new_defaults() made ward.exe's: Linux's file lists and Linux-only
 * limits out, the Windows variables a program needs in. */
static int adapt_defaults(WardPolicy *p)
{
	/* Linux paths and Linux-only limits mean nothing here. */
	strv_free(p->fs_read);
	strv_free(p->fs_read_exec);
	strv_free(p->fs_read_write);
	strv_free(p->fs_cache);
	strv_free(p->fs_sanitize);
	strv_free(p->fs_deny);
	strv_free(p->env_pass);
	p->fs_read = p->fs_read_exec = p->fs_read_write = p->fs_cache = p->fs_sanitize = NULL;
	p->fs_deny = p->env_pass = NULL;
	p->tmp_mb = p->nofile = p->shm_mb = 0;
	p->inotify_instances = p->inotify_watches = p->sigpending = p->msgqueue_kb = 0;
	p->memlock_kb = p->cpu_percent = p->io_weight = 0;
	p->git_mode = GIT_MODE_OFF;
	for (size_t i = 0; win_pass[i]; i++)
		if (strv_extend(&p->env_pass, win_pass[i]) < 0)
			return -ENOMEM;
	return 0;
}

WardPolicy *win_policy_defaults(void)
{
	WardPolicy *p = policy_new_defaults();

	if (p && adapt_defaults(p) < 0)
		return policy_free(p);
	return p;
}

static int stage(WardPolicy *p, bool is_defaults, const char *source, void *userdata,
		 PolicyError *pe)
{
	if (is_defaults && adapt_defaults(p) < 0)
		return -ENOMEM;
	return 0;
}

/* "~" and "~/x" (or "~\\x"): the presets and the policies written for
 * both systems name the home that way. Everything else stays as written;
 * the plan refuses what is not an absolute Windows path. */
static int expand_home(char **l, const char *field, const char *home, PolicyError *pe)
{
	for (char **s = l; s && *s; s++) {
		char *e;

		if ((*s)[0] != '~' || ((*s)[1] && (*s)[1] != '/' && (*s)[1] != '\\'))
			continue;
		if (!home) {
			snprintf(pe->file, sizeof(pe->file), "<policy>");
			snprintf(pe->path, sizeof(pe->path), "%s", field);
			snprintf(pe->msg, sizeof(pe->msg),
				 "\"%s\" names the home directory, and USERPROFILE is not an "
				 "absolute path", *s);
			return -EINVAL;
		}
		if (asprintf(&e, "%s%s", home, *s + 1) < 0)
			return -ENOMEM;
		free(*s);
		*s = e;
	}
	return 0;
}

int win_policy_load(const char *file, char *const *presets, const char *overrides,
		    const char *home, WardPolicy **ret, PolicyError *pe)
{
	WardPolicy *p = NULL;
	int r;

	/* Linux's loader, ward.exe's defaults at its first stage. */
	r = policy_load_staged(file, presets, stage, NULL, &p, pe);
	if (r < 0)
		return r;
	if (overrides)
		r = policy_merge_json(p, "<command line>", overrides, pe);
	struct {
		char **l;
		const char *field;
	} lists[] = { { p->fs_read, "fs.read" }, { p->fs_read_exec, "fs.read_exec" },
		      { p->fs_read_write, "fs.read_write" }, { p->fs_cache, "fs.cache" },
		      { p->fs_sanitize, "fs.sanitize" }, { p->fs_deny, "fs.deny" } };
	for (size_t i = 0; r >= 0 && i < sizeof(lists) / sizeof(*lists); i++)
		r = expand_home(lists[i].l, lists[i].field, home, pe);
	if (r < 0) {
		policy_free(p);
		return r;
	}
	*ret = p;
	return 0;
}
