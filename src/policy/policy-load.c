/* Reading policy files and the standard load order: defaults, --preset
 * flags, then the user's file. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "policy/policy-internal.h"

static int merge_file(WardPolicy *p, const char *path, bool is_default, PolicyError *reterr)
{
	_cleanup_free_ char *text = NULL, *real = NULL;
	int r;

	r = policy_read_file(path, is_default, &text, reterr);
	if (r == -ENOENT && is_default)
		return 0; /* the default file is optional */
	if (r < 0)
		return r;
	/* Record the canonical path: the sandbox hides every policy file. */
	real = realpath(path, NULL);
	return policy_merge_json_as(p, path, real ? real : path, text, reterr);
}

int policy_merge_file(WardPolicy *p, const char *path, PolicyError *reterr)
{
	return merge_file(p, path, false, reterr);
}

int policy_load_staged(const char *file_or_null, char *const *flag_presets, PolicyStageFn fn,
		       void *userdata, WardPolicy **ret, PolicyError *reterr)
{
	_cleanup_free_ char *dir = NULL, *def = NULL;
	WardPolicy *p;
	const char *file = file_or_null;
	int r;

	p = policy_new_defaults();
	if (!p)
		return policy_error_set(reterr, "<defaults>", "", "out of memory"), -ENOMEM;
	if (fn && (r = fn(p, true, "<defaults>", userdata, reterr)) < 0)
		goto fail;

	for (size_t i = 0; flag_presets && flag_presets[i]; i++) {
		_cleanup_free_ char *label = NULL;

		r = policy_apply_preset(p, flag_presets[i], reterr);
		if (r < 0)
			goto fail;
		if (fn && asprintf(&label, "--preset %s", flag_presets[i]) < 0) {
			r = -ENOMEM;
			goto fail;
		}
		if (fn && (r = fn(p, false, label, userdata, reterr)) < 0)
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
			size_t n_sources = strv_length(p->sources);
			r = merge_file(p, def, true, reterr);
			if (r < 0)
				goto fail;
			/* A stage only where there was a file. */
			if (fn && strv_length(p->sources) > n_sources &&
			    (r = fn(p, false, def, userdata, reterr)) < 0)
				goto fail;
		}
		/* No home and no XDG_CONFIG_HOME: there is no default file. */
	}
	if (file) {
		r = policy_merge_file(p, file, reterr);
		if (r < 0)
			goto fail;
		if (fn && (r = fn(p, false, file, userdata, reterr)) < 0)
			goto fail;
	}
	*ret = p;
	return 0;
fail:
	policy_free(p);
	return r;
}

int policy_load(const char *file_or_null, char *const *flag_presets, WardPolicy **ret,
		PolicyError *reterr)
{
	return policy_load_staged(file_or_null, flag_presets, NULL, NULL, ret, reterr);
}
