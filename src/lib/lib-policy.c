/* ward_policy: the sources of a run's policy (presets, one file, JSON
 * fragments and setters), kept as `ward run` would be given them, plus a
 * merged preview so that each call is checked when it is made. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/path-util.h"
#include "common/strv.h"
#include "lib/lib-internal.h"

DEFINE_TRIVIAL_CLEANUP_FUNC(WardPolicy *, policy_free)

#define SOURCE_NAME "<libward>"

static int policy_fail(ward_policy *p, int r, const PolicyError *e)
{
	char buf[1400];

	policy_error_format(e, buf, sizeof(buf));
	return lib_error(p->error, r, "Invalid policy: %s", buf);
}

/* Build the preview from scratch: defaults, presets, the file, overrides. */
static int rebuild(ward_policy *p)
{
	_cleanup_(policy_freep) WardPolicy *n = NULL;
	_cleanup_free_ char *text = NULL;
	PolicyError e = {};
	int r;

	r = policy_load(p->file, p->presets, &n, &e);
	if (r >= 0 && p->overrides->child) {
		text = cJSON_PrintUnformatted(p->overrides);
		if (!text)
			return lib_error(p->error, -ENOMEM, "Out of memory");
		r = policy_merge_json(n, SOURCE_NAME, text, &e);
	}
	if (r < 0)
		return policy_fail(p, r, &e);
	policy_free(p->preview);
	p->preview = TAKE_PTR(n);
	return 0;
}

static int ready(ward_policy *p)
{
	if (!p)
		return -EINVAL;
	if (p->load_error < 0) {
		/* The message of the failed load is still in p->error unless a
		 * later call failed too; say it again either way. */
		int r = p->load_error;
		if (rebuild(p) >= 0) {
			p->load_error = 0;
			return 0;
		}
		return r;
	}
	return 0;
}

WARD_PUBLIC ward_policy *ward_policy_new(void)
{
	ward_policy *p = calloc(1, sizeof(*p));

	if (!p)
		return NULL;
	p->overrides = cJSON_CreateObject();
	if (!p->overrides) {
		free(p);
		return NULL;
	}
	/* An invalid user file is not an error yet: ward_policy_load_file
	 * may replace it. Every other call reports it. */
	p->load_error = rebuild(p);
	if (p->load_error == -ENOMEM)
		return ward_policy_free(p);
	return p;
}

WARD_PUBLIC ward_policy *ward_policy_free(ward_policy *p)
{
	if (!p)
		return NULL;
	free(p->file);
	strv_free(p->presets);
	cJSON_Delete(p->overrides);
	policy_free(p->preview);
	free(p);
	return NULL;
}

WARD_PUBLIC const char *ward_policy_last_error(const ward_policy *p)
{
	return p ? p->error : "";
}

WARD_PUBLIC int ward_policy_load_file(ward_policy *p, const char *path)
{
	_cleanup_free_ char *abs = NULL, *cwd = NULL;
	int r;

	if (!p || !path || !path[0])
		return p ? lib_error(p->error, -EINVAL, "No policy file given") : -EINVAL;
	if (p->file)
		return lib_error(p->error, -EBUSY,
				 "The policy already has its file '%s'; merge more with "
				 "ward_policy_merge_json",
				 p->file);
	/* Absolute now: the run may start after the caller changed directory. */
	if (path[0] != '/') {
		cwd = getcwd(NULL, 0);
		if (!cwd)
			return lib_error(p->error, -errno, "Failed to get the current directory: %m");
		if (path_join(cwd, path, &abs) < 0)
			return lib_error(p->error, -ENOMEM, "Out of memory");
	} else if (!(abs = strdup(path)))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	p->file = TAKE_PTR(abs);
	r = rebuild(p);
	if (r < 0) {
		free(p->file);
		p->file = NULL;
		return r;
	}
	p->load_error = 0;
	return 0;
}

WARD_PUBLIC int ward_policy_add_preset(ward_policy *p, const char *name)
{
	bool known = false;
	int r;

	if (!p || !name)
		return -EINVAL;
	for (const char *const *n = policy_preset_names(); *n; n++)
		known = known || strcmp(*n, name) == 0;
	if (!known)
		return lib_error(p->error, -EINVAL, "Unknown preset '%s'", name);
	if (strv_contains(p->presets, name))
		return 0;
	if (strv_extend(&p->presets, name) < 0)
		return lib_error(p->error, -ENOMEM, "Out of memory");
	r = rebuild(p);
	if (r < 0) {
		strv_remove(p->presets, name);
		return r;
	}
	p->load_error = 0;
	return 0;
}

int lib_policy_merge_doc(ward_policy *p, const cJSON *doc)
{
	_cleanup_free_ char *text = NULL;
	PolicyError e = {};
	int r;

	if ((r = ready(p)) < 0)
		return r;
	text = cJSON_PrintUnformatted(doc);
	if (!text)
		return lib_error(p->error, -ENOMEM, "Out of memory");
	/* The preview is unchanged when the merge fails. */
	r = policy_merge_json(p->preview, SOURCE_NAME, text, &e);
	if (r < 0)
		return policy_fail(p, r, &e);
	if (lib_json_merge(p->overrides, doc) < 0)
		return lib_error(p->error, -ENOMEM, "Out of memory");
	return 0;
}

WARD_PUBLIC int ward_policy_merge_json(ward_policy *p, const char *json)
{
	_cleanup_cjson_ cJSON *doc = NULL;
	PolicyError e = {};
	int r;

	if (!p || !json)
		return -EINVAL;
	if ((r = ready(p)) < 0)
		return r;
	/* The policy parser's messages (line, JSON path) first; then ours. */
	_cleanup_(policy_freep) WardPolicy *probe = policy_copy(p->preview);
	if (!probe)
		return lib_error(p->error, -ENOMEM, "Out of memory");
	r = policy_merge_json(probe, SOURCE_NAME, json, &e);
	if (r < 0)
		return policy_fail(p, r, &e);
	doc = cJSON_Parse(json);
	if (!cJSON_IsObject(doc))
		return lib_error(p->error, -EINVAL, "Invalid policy: %s: expected a JSON object",
				 SOURCE_NAME);
	return lib_policy_merge_doc(p, doc);
}

static cJSON *doc_with(const char *section, cJSON **ret_section)
{
	cJSON *doc = cJSON_CreateObject();

	if (!doc)
		return NULL;
	*ret_section = cJSON_AddObjectToObject(doc, section);
	if (!*ret_section) {
		cJSON_Delete(doc);
		return NULL;
	}
	return doc;
}

WARD_PUBLIC int ward_policy_add_path(ward_policy *p, ward_fs_access access, const char *path)
{
	static const char *const keys[] = {
		[WARD_FS_READ] = "read",	     [WARD_FS_READ_EXEC] = "read_exec",
		[WARD_FS_READ_WRITE] = "read_write", [WARD_FS_DENY] = "deny",
		[WARD_FS_PROTECTED] = "protected",
	};
	_cleanup_cjson_ cJSON *doc = NULL;
	cJSON *fs = NULL, *a = NULL;

	if (!p)
		return -EINVAL;
	if ((unsigned)access >= ELEMENTSOF(keys) || !path)
		return lib_error(p->error, -EINVAL, "Unknown fs access %d or no path", (int)access);
	if (!(doc = doc_with("fs", &fs)) || !(a = cJSON_AddArrayToObject(fs, keys[access])))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	cJSON_AddItemToArray(a, cJSON_CreateString(path));
	return lib_policy_merge_doc(p, doc);
}

WARD_PUBLIC int ward_policy_set_network(ward_policy *p, const char *mode)
{
	_cleanup_cjson_ cJSON *doc = NULL;
	cJSON *net = NULL;

	if (!p)
		return -EINVAL;
	if (!mode || net_mode_from_string(mode) < 0)
		return lib_error(p->error, -EINVAL, "Unknown network mode '%s' (none or proxy)",
				 mode ? mode : "(null)");
	if (!(doc = doc_with("network", &net)) || !cJSON_AddStringToObject(net, "mode", mode))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	return lib_policy_merge_doc(p, doc);
}

WARD_PUBLIC int ward_policy_allow_host(ward_policy *p, const char *host)
{
	_cleanup_cjson_ cJSON *doc = NULL;
	cJSON *net = NULL, *a = NULL;

	if (!p)
		return -EINVAL;
	if (!host)
		return lib_error(p->error, -EINVAL, "No host given");
	if (!(doc = doc_with("network", &net)) || !cJSON_AddStringToObject(net, "mode", "proxy") ||
	    !(a = cJSON_AddArrayToObject(net, "allow")))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	cJSON_AddItemToArray(a, cJSON_CreateString(host));
	return lib_policy_merge_doc(p, doc);
}

WARD_PUBLIC int ward_policy_set_limit(ward_policy *p, const char *name, uint64_t value)
{
	_cleanup_cjson_ cJSON *doc = NULL;
	cJSON *lim = NULL;

	if (!p)
		return -EINVAL;
	if (!name)
		return lib_error(p->error, -EINVAL, "No limit named");
	/* JSON numbers are doubles: beyond 2^53 they would change. */
	if (value > (UINT64_C(1) << 53))
		return lib_error(p->error, -ERANGE, "limits.%s: %llu is out of range", name,
				 (unsigned long long)value);
	if (!(doc = doc_with("limits", &lim)) ||
	    !cJSON_AddNumberToObject(lim, name, (double)value))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	return lib_policy_merge_doc(p, doc);
}

/* The preview finalized for @workspace, as a run there would see it. */
static int finalized(ward_policy *p, const char *workspace, WardPolicy **ret)
{
	_cleanup_(policy_freep) WardPolicy *c = NULL;
	_cleanup_free_ char *home = NULL, *ws = NULL;
	PolicyError e = {};
	int r;

	if ((r = ready(p)) < 0)
		return r;
	if ((r = ward_home_dir(&home)) < 0)
		return lib_error(p->error, r, "Failed to find the home directory: %m");
	ws = realpath(workspace ? workspace : ".", NULL);
	if (!ws)
		return lib_error(p->error, -errno, "Failed to resolve the workspace '%s': %m",
				 workspace ? workspace : ".");
	if (!(c = policy_copy(p->preview)))
		return lib_error(p->error, -ENOMEM, "Out of memory");
	PolicyContext ctx = { .home = home, .workspace = ws };
	r = policy_finalize(c, &ctx, &e);
	if (r < 0)
		return policy_fail(p, r, &e);
	*ret = TAKE_PTR(c);
	return 0;
}

WARD_PUBLIC int ward_policy_check(ward_policy *p, const char *workspace)
{
	_cleanup_(policy_freep) WardPolicy *c = NULL;

	if (!p)
		return -EINVAL;
	return finalized(p, workspace, &c);
}

WARD_PUBLIC int ward_policy_to_json(ward_policy *p, const char *workspace, char **ret)
{
	_cleanup_(policy_freep) WardPolicy *c = NULL;
	int r;

	if (!p || !ret)
		return -EINVAL;
	if ((r = finalized(p, workspace, &c)) < 0)
		return r;
	*ret = policy_to_json(c);
	return *ret ? 0 : lib_error(p->error, -ENOMEM, "Out of memory");
}

int lib_policy_copy_sources(const ward_policy *p, char **ret_file, char ***ret_presets,
			    cJSON **ret_overrides)
{
	_cleanup_free_ char *file = NULL;
	_cleanup_strv_ char **presets = NULL;

	if (p && p->file && !(file = strdup(p->file)))
		return -ENOMEM;
	if (p && p->presets && !(presets = strv_copy(p->presets)))
		return -ENOMEM;
	cJSON *o = p ? cJSON_Duplicate(p->overrides, true) : cJSON_CreateObject();
	if (!o)
		return -ENOMEM;
	*ret_file = TAKE_PTR(file);
	*ret_presets = TAKE_PTR(presets);
	*ret_overrides = o;
	return 0;
}
