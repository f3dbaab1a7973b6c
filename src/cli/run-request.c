#include <errno.h>
#include <stdlib.h>

#include <cjson/cJSON.h>

#include "cli/run-request.h"
#include "common/cleanup.h"
#include "common/json-util.h"
#include "common/strv.h"
#include "policy/policy.h"

static char *flags_document(const RunOptions *o)
{
	_cleanup_cjson_ cJSON *doc = cJSON_CreateObject();
	cJSON *net;

	if (!doc)
		return NULL;
	if (o->timeout_s) {
		cJSON *lim = cJSON_AddObjectToObject(doc, "limits");
		cJSON_AddNumberToObject(lim, "timeout_s", (double)o->timeout_s);
	}
	if (o->net_mode >= 0 || o->allow_domains || o->n_host_ports) {
		net = cJSON_AddObjectToObject(doc, "network");
		if (o->net_mode >= 0 || o->allow_domains)
			cJSON_AddStringToObject(net, "mode",
						net_mode_to_string(o->allow_domains
									   ? NET_MODE_PROXY
									   : (NetMode)o->net_mode));
		if (o->allow_domains) {
			cJSON *a = cJSON_AddArrayToObject(net, "allow");
			STRV_FOREACH(d, o->allow_domains)
			cJSON_AddItemToArray(a, cJSON_CreateString(*d));
		}
		if (o->n_host_ports) {
			cJSON *a = cJSON_AddArrayToObject(net, "host_ports");
			for (size_t i = 0; i < o->n_host_ports; i++)
				cJSON_AddItemToArray(a, cJSON_CreateNumber(o->host_ports[i]));
		}
	}
	if (o->git_mode >= 0)
		cJSON_AddStringToObject(doc, "git", git_mode_to_string((GitMode)o->git_mode));
	return cJSON_PrintUnformatted(doc);
}

int cli_run_request(const RunOptions *o, pid_t parent, RunRequest *req, char **ret_overrides)
{
	char *doc = flags_document(o);

	if (!doc)
		return -ENOMEM;
	*req = (RunRequest)RUN_REQUEST_INIT;
	req->argv = o->argv;
	req->workspace = o->workspace;
	req->policy_file = o->policy_file;
	req->presets = o->presets;
	req->policy_overrides = doc;
	req->env_extra = o->env_extra;
	req->tier = o->tier;
	req->strict = o->strict;
	req->cow = o->cow;
	req->session = o->session;
	req->allow_unsafe_workspace = o->allow_unsafe_workspace;
	req->parent_pid = parent;
	req->result_file = o->result_file;
	req->result_fd = o->result_fd;
	req->events_fd = o->events_fd;
	*ret_overrides = doc;
	return 0;
}
