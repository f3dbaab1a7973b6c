/* Reading policy files and the standard load order: defaults, --preset
 * flags, then the user's file. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "policy/policy-internal.h"

/* Policies are small; a bigger file is a mistake (or an attack on the parser). */
#define POLICY_MAX_SIZE (1024 * 1024)

static int read_file(const char *path, char **ret, PolicyError *e)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	struct stat st;
	size_t n = 0;

	/* O_NONBLOCK: a FIFO given as the policy must fail the S_ISREG check
	 * below, not hang in open(); it does not affect regular files. */
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
	if (fd < 0) {
		int r = -errno;
		return policy_error_set(e, path, "", "cannot open: %s", strerror(-r)), r;
	}
	if (fstat(fd, &st) < 0) {
		int r = -errno;
		return policy_error_set(e, path, "", "cannot stat: %s", strerror(-r)), r;
	}
	if (!S_ISREG(st.st_mode))
		return policy_error_set(e, path, "", "not a regular file");
	if (st.st_size > POLICY_MAX_SIZE)
		return policy_error_set(e, path, "", "larger than %d bytes", POLICY_MAX_SIZE);

	buf = malloc(POLICY_MAX_SIZE + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + n, POLICY_MAX_SIZE + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			int r = -errno;
			return policy_error_set(e, path, "", "cannot read: %s", strerror(-r)), r;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > POLICY_MAX_SIZE)
			return policy_error_set(e, path, "", "larger than %d bytes",
						POLICY_MAX_SIZE);
	}
	buf[n] = '\0';
	if (strlen(buf) != n)
		return policy_error_set(e, path, "", "contains a NUL byte");
	*ret = TAKE_PTR(buf);
	return 0;
}

int policy_merge_file(WardPolicy *p, const char *path, PolicyError *reterr)
{
	_cleanup_free_ char *text = NULL, *real = NULL;
	int r;

	r = read_file(path, &text, reterr);
	if (r < 0)
		return r;
	/* Record the canonical path: the sandbox hides every policy file. */
	real = realpath(path, NULL);
	return policy_merge_json_as(p, path, real ? real : path, text, reterr);
}

int policy_load(const char *file_or_null, char *const *flag_presets, WardPolicy **ret,
		PolicyError *reterr)
{
	_cleanup_free_ char *dir = NULL, *def = NULL;
	WardPolicy *p;
	const char *file = file_or_null;
	int r;

	p = policy_new_defaults();
	if (!p)
		return policy_error_set(reterr, "<defaults>", "", "out of memory"), -ENOMEM;

	for (size_t i = 0; flag_presets && flag_presets[i]; i++) {
		r = policy_apply_preset(p, flag_presets[i], reterr);
		if (r < 0)
			goto fail;
	}

	if (!file) {
		r = ward_config_dir(&dir);
		if (r >= 0) {
			if (asprintf(&def, "%s/policy.json", dir) < 0) {
				r = -ENOMEM;
				goto fail;
			}
			/* The default file is optional; an explicit one is not. */
			if (access(def, F_OK) == 0)
				file = def;
			else if (errno != ENOENT) {
				r = -errno;
				policy_error_set(reterr, def, "", "cannot access: %s", strerror(-r));
				goto fail;
			}
		}
		/* No home and no XDG_CONFIG_HOME: there is no default file. */
	}
	if (file) {
		r = policy_merge_file(p, file, reterr);
		if (r < 0)
			goto fail;
	}
	*ret = p;
	return 0;
fail:
	policy_free(p);
	return r;
}
