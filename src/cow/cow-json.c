/* The change list (`ward diff --json`) and the result of an apply, undo or
 * discard as JSON for harnesses: exact, not escaped for a terminal. JSON strings are UTF-8, so a path that is not
 * valid UTF-8 goes out C-quoted, marked "quoted", with its bytes in hex. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "cow/cow-review.h"

bool cow_json_add_path(cJSON *o, const char *key, const char *path)
{
	_cleanup_free_ char *q = NULL, *hex = NULL, *hkey = NULL;

	if (cow_utf8_valid(path, strlen(path)))
		return cJSON_AddStringToObject(o, key, path) != NULL;
	q = cow_quote_path(path);
	hex = cow_hex_encode(path);
	if (!q || !hex || asprintf(&hkey, "%s_hex", key) < 0)
		return false;
	if (!cJSON_AddStringToObject(o, key, q))
		return false;
	/* "quoted" belongs to a change's or a refusal's "path"; any other key
	 * is known to be quoted by its "<key>_hex" beside it. */
	if (strcmp(key, "path") == 0 && !cJSON_AddTrueToObject(o, "quoted"))
		return false;
	return cJSON_AddStringToObject(o, hkey, hex) != NULL;
}

static bool add_mode(cJSON *o, const char *key, mode_t m)
{
	char buf[16];

	snprintf(buf, sizeof(buf), "%04o", (unsigned)m);
	return cJSON_AddStringToObject(o, key, buf) != NULL;
}

static const char *type_word(mode_t m)
{
	return S_ISDIR(m) ? "directory" : S_ISLNK(m) ? "symlink" : S_ISREG(m) ? "file" : "special file";
}

int cow_changes_to_json(const CowChangeList *l, const bool *selected, cJSON **ret)
{
	_cleanup_cjson_ cJSON *arr = cJSON_CreateArray();

	if (!arr)
		return -ENOMEM;
	for (size_t i = 0; i < l->n; i++) {
		const CowChange *ch = &l->items[i];
		cJSON *o;
		if (selected && !selected[i])
			continue;
		o = cJSON_CreateObject();
		if (!o)
			return -ENOMEM;
		cJSON_AddItemToArray(arr, o);
		if (!cow_json_add_path(o, "path", ch->path) ||
		    !cJSON_AddStringToObject(o, "kind", cow_kind_to_string(ch->kind)) ||
		    !cJSON_AddStringToObject(o, "type",
					     type_word(ch->upper_mode ? ch->upper_mode
								      : ch->lower_mode)))
			return -ENOMEM;
		if (ch->lower_mode && !add_mode(o, "old_mode", ch->lower_mode & 07777))
			return -ENOMEM;
		if (ch->upper_mode && !add_mode(o, "new_mode", cow_effective_mode(ch->upper_mode)))
			return -ENOMEM;
		if (ch->upper_mode && S_ISREG(ch->upper_mode) &&
		    !cJSON_AddNumberToObject(o, "size", (double)ch->upper_size))
			return -ENOMEM;
		if (ch->refused != COW_REFUSE_NONE &&
		    !cJSON_AddStringToObject(o, "refused", cow_refusal_to_string(ch->refused)))
			return -ENOMEM;
		if ((ch->flags & COW_F_SETUID_STRIPPED) && !cJSON_AddTrueToObject(o, "setuid_stripped"))
			return -ENOMEM;
		if ((ch->flags & COW_F_HARDLINK) && !cJSON_AddTrueToObject(o, "hardlink"))
			return -ENOMEM;
	}
	*ret = TAKE_PTR(arr);
	return 0;
}

static cJSON *path_array(char *const *l)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; l && l[i]; i++) {
		/* Exact when valid UTF-8 (JSON escapes the controls), C-quoted
		 * otherwise. */
		_cleanup_free_ char *q = cow_utf8_valid(l[i], strlen(l[i])) ? strdup(l[i]) :
									    cow_quote_path(l[i]);
		cJSON_AddItemToArray(a, cJSON_CreateString(q ? q : "?"));
	}
	return a;
}

cJSON *cow_result_to_json(CowSession *s, const CowResult *r, char *const *requested, bool force)
{
	cJSON *o = cJSON_CreateObject();

	cow_json_add_path(o, "workspace", cow_session_workspace(s));
	if (requested)
		cJSON_AddItemToObject(o, "requested", path_array(requested));
	cJSON_AddStringToObject(o, "result", r->failed ? "failed" : r->refused ? "partial" : "ok");
	cJSON_AddNumberToObject(o, "seq", r->seq);
	cJSON_AddNumberToObject(o, "changed", (double)strv_length(r->done));
	cJSON_AddNumberToObject(o, "removed", (double)strv_length(r->removed));
	cJSON_AddNumberToObject(o, "refused", (double)strv_length(r->refused));
	cJSON_AddNumberToObject(o, "failed", (double)strv_length(r->failed));
	cJSON_AddItemToObject(o, "paths", path_array(r->done));
	cJSON_AddItemToObject(o, "removed_paths", path_array(r->removed));
	cJSON *ref = cJSON_AddArrayToObject(o, "refused_paths");
	for (size_t i = 0; r->refused && r->refused[i]; i++) {
		cJSON *e = cJSON_CreateObject();
		cow_json_add_path(e, "path", r->refused[i]);
		cJSON_AddStringToObject(e, "reason", r->refused_why[i]);
		cJSON_AddItemToArray(ref, e);
	}
	cJSON *fail = cJSON_AddArrayToObject(o, "failed_paths");
	for (size_t i = 0; r->failed && r->failed[i]; i++) {
		cJSON *e = cJSON_CreateObject();
		cow_json_add_path(e, "path", r->failed[i]);
		cJSON_AddStringToObject(e, "error", r->failed_why[i]);
		cJSON_AddItemToArray(fail, e);
	}
	cJSON_AddBoolToObject(o, "force", force);
	return o;
}
