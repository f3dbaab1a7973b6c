/* The effective policy as JSON (reloadable by policy_merge_json) and its
 * SHA-256, which the audit log records for every run. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/json-util.h"
#include "policy/policy-internal.h"
#include "windows/win-sha256.h"

/* Add @item to @obj under @key, taking ownership; false on OOM. */
static bool add(cJSON *obj, const char *key, cJSON *item)
{
	if (!item)
		return false;
	if (!cJSON_AddItemToObject(obj, key, item)) {
		cJSON_Delete(item);
		return false;
	}
	return true;
}

static bool add_limit(cJSON *obj, const char *key, uint64_t v)
{
	/* 0 means "not set"; writing it would not reload (limits are >= 1). */
	if (v == 0)
		return true;
	return add(obj, key, cJSON_CreateNumber((double)v));
}

static cJSON *ports_array(const uint16_t *ports, size_t n)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < n; i++) {
		cJSON *v = cJSON_CreateNumber(ports[i]);
		if (!v || !cJSON_AddItemToArray(a, v)) {
			cJSON_Delete(v);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}

/* network.credentials / network.requests: stored as canonical JSON text. */
static cJSON *json_objects_array(char *const *l)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && l && l[i]; i++) {
		cJSON *o = cJSON_Parse(l[i]);
		if (!o) {
			cJSON_Delete(a);
			return NULL;
		}
		cJSON_AddItemToArray(a, o);
	}
	return a;
}

static cJSON *build(const WardPolicy *p)
{
	_cleanup_cjson_ cJSON *root = cJSON_CreateObject();
	cJSON *fs, *net, *env, *limits, *sandbox, *cmds, *hosts, *set;

	if (!root || !add(root, "version", cJSON_CreateNumber(1)))
		return NULL;

	if (!add(root, "fs", fs = cJSON_CreateObject()) ||
	    !add(fs, "read", json_strv_array(p->fs_read)) ||
	    !add(fs, "read_exec", json_strv_array(p->fs_read_exec)) ||
	    !add(fs, "read_write", json_strv_array(p->fs_read_write)) ||
	    !add(fs, "cache", json_strv_array(p->fs_cache)) ||
	    !add(fs, "sanitize", json_strv_array(p->fs_sanitize)) ||
	    !add(fs, "deny", json_strv_array(p->fs_deny)) ||
	    !add(fs, "protected", json_strv_array(p->fs_protected)))
		return NULL;

	if (!add(root, "network", net = cJSON_CreateObject()) ||
	    !add(net, "mode", cJSON_CreateString(net_mode_to_string(p->net_mode) ?: "none")) ||
	    !add(net, "allow", json_strv_array(p->net_allow)) ||
	    !add(net, "deny", json_strv_array(p->net_deny)) ||
	    !add(net, "commands", cmds = cJSON_CreateObject()))
		return NULL;
	for (size_t i = 0; i < p->n_net_commands; i++)
		if (!add(cmds, p->net_commands[i].name, json_strv_array(p->net_commands[i].allow)))
			return NULL;
	if (!add(net, "hosts", hosts = cJSON_CreateObject()))
		return NULL;
	for (size_t i = 0; i < p->n_net_hosts; i++)
		if (!add(hosts, p->net_hosts[i].name, cJSON_CreateString(p->net_hosts[i].address)))
			return NULL;
	if (!add(net, "local_ports", ports_array(p->net_local_ports, p->n_net_local_ports)) ||
	    !add(net, "host_ports", ports_array(p->net_host_ports, p->n_net_host_ports)))
		return NULL;
	if (!add_limit(net, "max_connections", p->max_connections))
		return NULL;
	if (!add(net, "capture", cJSON_CreateBool(!p->net_no_capture)) ||
	    !add(net, "capture_ports", ports_array(p->net_capture_ports, p->n_net_capture_ports)) ||
	    !add(net, "inspect", json_strv_array(p->net_inspect)) ||
	    !add(net, "upstream_ca", json_strv_array(p->net_upstream_ca)) ||
	    !add(net, "credentials", json_objects_array(p->net_credentials)) ||
	    !add(net, "requests", json_objects_array(p->net_requests)))
		return NULL;

	if (!add(root, "env", env = cJSON_CreateObject()) ||
	    !add(env, "pass", json_strv_array(p->env_pass)) ||
	    !add(env, "set", set = cJSON_CreateObject()))
		return NULL;
	for (size_t i = 0; p->env_set && p->env_set[i]; i++) {
		const char *eq = strchr(p->env_set[i], '=');
		_cleanup_free_ char *name = NULL;

		if (!eq)
			continue;
		name = strndup(p->env_set[i], (size_t)(eq - p->env_set[i]));
		if (!name || !add(set, name, cJSON_CreateString(eq + 1)))
			return NULL;
	}
	if (!add(env, "strip", json_strv_array(p->env_strip)))
		return NULL;

	if (!add(root, "limits", limits = cJSON_CreateObject()) ||
	    !add_limit(limits, "timeout_s", p->timeout_s) ||
	    !add_limit(limits, "memory_mb", p->memory_mb) || !add_limit(limits, "pids", p->pids) ||
	    !add_limit(limits, "tmp_mb", p->tmp_mb) || !add_limit(limits, "nofile", p->nofile) ||
	    !add_limit(limits, "shm_mb", p->shm_mb) ||
	    !add_limit(limits, "inotify_instances", p->inotify_instances) ||
	    !add_limit(limits, "inotify_watches", p->inotify_watches) ||
	    !add_limit(limits, "sigpending", p->sigpending) ||
	    !add_limit(limits, "msgqueue_kb", p->msgqueue_kb) ||
	    !add_limit(limits, "memlock_kb", p->memlock_kb) ||
	    !add_limit(limits, "session_idle_s", p->session_idle_s) ||
	    !add_limit(limits, "cpu_percent", p->cpu_percent) ||
	    !add_limit(limits, "io_weight", p->io_weight))
		return NULL;

	if (!add(root, "sandbox", sandbox = cJSON_CreateObject()) ||
	    !add(sandbox, "allow_nested_sandbox", cJSON_CreateBool(p->allow_nested_sandbox)) ||
	    !add(sandbox, "allow_ptrace", cJSON_CreateBool(p->allow_ptrace)))
		return NULL;

	/* Only when set: the hash of every policy without it stays the same. */
	if (p->has_tier && !add(root, "tier", cJSON_CreateNumber(p->tier)))
		return NULL;
	if (!add(root, "git", cJSON_CreateString(git_mode_to_string(p->git_mode) ?: "read-only")))
		return NULL;

	/* Last: presets apply where they appear, and after the lists they add
	 * nothing new on reload, so the lists keep their order. */
	if (!add(root, "presets", json_strv_array(p->presets)))
		return NULL;

	return TAKE_PTR(root);
}

char *policy_to_json(const WardPolicy *p)
{
	_cleanup_cjson_ cJSON *root = build(p);

	if (!root)
		return NULL;
	/* Formatted: `ward policy show` prints it as is, and cJSON's formatting
	 * is deterministic, so the hash is stable. */
	return cJSON_Print(root);
}

int policy_hash(const WardPolicy *p, char ret[65])
{
	_cleanup_free_ char *json = policy_to_json(p);
	uint8_t md[32];

	if (!json)
		return -ENOMEM;
	/* The plan layer's own SHA-256 (portable, no library to load). */
	win_sha256(json, strlen(json), md);
	for (unsigned i = 0; i < sizeof(md); i++)
		snprintf(ret + 2 * i, 3, "%02x", md[i]);
	ret[64] = '\0';
	return 0;
}
