/* The Windows defaults over policy_new_defaults(). */
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

WardPolicy *win_policy_defaults(void)
{
	WardPolicy *p = policy_new_defaults();

	if (!p)
		return NULL;
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
			return policy_free(p);
	return p;
}
