#include <stdio.h>
#include <string.h>

#include "net/net-event.h"

const char *net_refusal_reason(const NetDecision *d, const char *host, uint16_t port, char *buf,
			       size_t bufsz)
{
	if (d->rule)
		snprintf(buf, bufsz, "%s in network.deny", d->rule);
	else if (policy_loopback_pattern(host))
		/* NO_PROXY sends localhost past the proxy; a client that asks
		 * the proxy for it wants the host's. */
		snprintf(buf, bufsz,
			 "not in %s; localhost inside the sandbox is the sandbox's own: for the "
			 "host's 127.0.0.1:%u use --allow-host-port %u (network.host_ports)",
			 d->list, port, port);
	else
		snprintf(buf, bufsz, "not in %s", d->list);
	return buf;
}

cJSON *net_event_object(const NetEvent *e)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "kind", e->kind);
	cJSON_AddStringToObject(o, "host", e->host);
	cJSON_AddNumberToObject(o, "port", e->port);
	cJSON_AddStringToObject(o, "address", e->address ? e->address : "");
	cJSON_AddStringToObject(o, "verdict", net_verdict_to_string(e->verdict));
	cJSON_AddStringToObject(o, "rule", e->rule ? e->rule : "");
	if (e->decision && e->decision->rule && e->rule && strcmp(e->rule, e->decision->rule) == 0)
		cJSON_AddStringToObject(o, "list", e->decision->list);
	if (e->destination)
		cJSON_AddStringToObject(o, "destination", e->destination);
	if (e->protocol)
		cJSON_AddStringToObject(o, "protocol", e->protocol);
	cJSON_AddNumberToObject(o, "bytes_up", (double)e->bytes_up);
	cJSON_AddNumberToObject(o, "bytes_down", (double)e->bytes_down);
	cJSON_AddNumberToObject(o, "duration_ms", (double)e->duration_ms);
	if (e->program)
		cJSON_AddStringToObject(o, "program", e->program);
	return o;
}
