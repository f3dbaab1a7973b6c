/* The WFP filter plan and its read-back check. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/macro.h"
#include "windows/win-wfp.h"

const uint16_t WIN_WFP_SUBLAYER_WEIGHT = 0xffff;

enum { IPPROTO_TCP_ = 6, IPPROTO_UDP_ = 17 };
#define LOOPBACK_V4 0x7f000001u

static const struct {
	const WinGuid *key;
	const char *name;
} layers[_WIN_WFP_LAYER_MAX] = {
	[WIN_WFP_CONNECT_V4] = { &WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V4, "ALE_AUTH_CONNECT_V4" },
	[WIN_WFP_CONNECT_V6] = { &WIN_FWPM_LAYER_ALE_AUTH_CONNECT_V6, "ALE_AUTH_CONNECT_V6" },
	[WIN_WFP_RECV_ACCEPT_V4] = { &WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V4,
				     "ALE_AUTH_RECV_ACCEPT_V4" },
	[WIN_WFP_RECV_ACCEPT_V6] = { &WIN_FWPM_LAYER_ALE_AUTH_RECV_ACCEPT_V6,
				     "ALE_AUTH_RECV_ACCEPT_V6" },
	[WIN_WFP_RESOURCE_V4] = { &WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V4,
				  "ALE_RESOURCE_ASSIGNMENT_V4" },
	[WIN_WFP_RESOURCE_V6] = { &WIN_FWPM_LAYER_ALE_RESOURCE_ASSIGNMENT_V6,
				  "ALE_RESOURCE_ASSIGNMENT_V6" },
};

const WinGuid *win_wfp_layer_key(WinWfpLayer l)
{
	return l >= 0 && l < _WIN_WFP_LAYER_MAX ? layers[l].key : NULL;
}

const char *win_wfp_layer_name(WinWfpLayer l)
{
	return l >= 0 && l < _WIN_WFP_LAYER_MAX ? layers[l].name : "?";
}

int win_wfp_user_sddl(const char *sid, char *ret, size_t n)
{
	/* The ALE_USER_ID condition matches when this descriptor grants the
	 * socket owner's token FWP_ACTRL_MATCH_FILTER (CC). */
	int r = snprintf(ret, n, "O:LSD:(A;;CC;;;%s)", sid);

	return r < 0 || (size_t)r >= n ? -ENAMETOOLONG : 0;
}

static WinWfpFilter *add(WinWfpPlan *p, const char *name, WinWfpLayer layer, bool permit,
			 uint8_t weight)
{
	WinWfpFilter *f = &p->filters[p->n++];
	char keyname[WIN_SID_STRING_MAX + WIN_WFP_NAME_MAX + 2];
	WinWfpCondition *c;

	memset(f, 0, sizeof(*f));
	snprintf(f->name, sizeof(f->name), "%s", name);
	snprintf(keyname, sizeof(keyname), "%s/%s", p->sid, name);
	win_guid_from_name("wfp-filter", keyname, &f->key);
	f->layer = layer;
	f->permit = permit;
	f->weight = weight;
	c = &f->cond[f->n_cond++];
	if (p->identity == WIN_WFP_PACKAGE) {
		c->field = WIN_WFP_F_PACKAGE;
		snprintf(c->text, sizeof(c->text), "%s", p->sid);
	} else {
		c->field = WIN_WFP_F_USER;
		(void)win_wfp_user_sddl(p->sid, c->text, sizeof(c->text));
	}
	return f;
}

static void cond_num(WinWfpFilter *f, WinWfpField field, uint32_t v)
{
	WinWfpCondition *c = &f->cond[f->n_cond++];

	c->field = field;
	c->num = v;
}

int win_wfp_plan(const WinWfpInput *in, WinWfpPlan *ret)
{
	char sid[WIN_SID_STRING_MAX];
	bool package;
	int r;

	if (!in->sid)
		return -EINVAL;
	r = win_sid_normalize(in->sid, sid);
	if (r < 0)
		return r;
	package = strncmp(sid, "S-1-15-2-", 9) == 0;
	if (in->identity == WIN_WFP_PACKAGE ? !package : strncmp(sid, "S-1-15-", 7) == 0)
		return -EINVAL;
	/* The capability-style "all packages" SID would wall every app. */
	if (strcmp(sid, WIN_SID_ALL_APP_PACKAGES) == 0)
		return -EINVAL;

	memset(ret, 0, sizeof(*ret));
	ret->identity = in->identity;
	snprintf(ret->sid, sizeof(ret->sid), "%s", sid);
	ret->proxy_port = in->proxy_port;
	ret->persistent = in->persistent;
	/* Persistent objects share ward's fixed provider and sublayer. A
	 * dynamic session gets its own, keyed by the SID: objects a session
	 * adds are deleted when it closes, so two runs must never share one
	 * (the first to end would take the other's sublayer with it). */
	if (in->persistent) {
		ret->provider = WIN_WARD_WFP_PROVIDER;
		ret->sublayer = WIN_WARD_WFP_SUBLAYER;
	} else {
		win_guid_from_name("wfp-provider", sid, &ret->provider);
		win_guid_from_name("wfp-sublayer", sid, &ret->sublayer);
	}
	ret->sublayer_weight = WIN_WFP_SUBLAYER_WEIGHT;

	if (in->proxy_port) {
		WinWfpFilter *f = add(ret, "proxy-v4", WIN_WFP_CONNECT_V4, true, 15);
		WinWfpCondition *c;

		c = &f->cond[f->n_cond++];
		c->field = WIN_WFP_F_REMOTE_V4;
		c->v4 = LOOPBACK_V4;
		cond_num(f, WIN_WFP_F_REMOTE_PORT, in->proxy_port);
		cond_num(f, WIN_WFP_F_PROTOCOL, IPPROTO_TCP_);

		f = add(ret, "proxy-v6", WIN_WFP_CONNECT_V6, true, 15);
		c = &f->cond[f->n_cond++];
		c->field = WIN_WFP_F_REMOTE_V6;
		c->v6[15] = 1;
		cond_num(f, WIN_WFP_F_REMOTE_PORT, in->proxy_port);
		cond_num(f, WIN_WFP_F_PROTOCOL, IPPROTO_TCP_);
	}
	add(ret, "connect-v4", WIN_WFP_CONNECT_V4, false, 0);
	add(ret, "connect-v6", WIN_WFP_CONNECT_V6, false, 0);
	add(ret, "accept-v4", WIN_WFP_RECV_ACCEPT_V4, false, 0);
	add(ret, "accept-v6", WIN_WFP_RECV_ACCEPT_V6, false, 0);
	cond_num(add(ret, "tcp-v4", WIN_WFP_RESOURCE_V4, true, 15), WIN_WFP_F_PROTOCOL,
		 IPPROTO_TCP_);
	cond_num(add(ret, "tcp-v6", WIN_WFP_RESOURCE_V6, true, 15), WIN_WFP_F_PROTOCOL,
		 IPPROTO_TCP_);
	cond_num(add(ret, "udp-v4", WIN_WFP_RESOURCE_V4, true, 15), WIN_WFP_F_PROTOCOL,
		 IPPROTO_UDP_);
	cond_num(add(ret, "udp-v6", WIN_WFP_RESOURCE_V6, true, 15), WIN_WFP_F_PROTOCOL,
		 IPPROTO_UDP_);
	add(ret, "raw-v4", WIN_WFP_RESOURCE_V4, false, 0);
	add(ret, "raw-v6", WIN_WFP_RESOURCE_V6, false, 0);
	return 0;
}

static bool cond_equal(const WinWfpCondition *a, const WinWfpCondition *b)
{
	if (a->field != b->field)
		return false;
	switch (a->field) {
	case WIN_WFP_F_PACKAGE:
	case WIN_WFP_F_USER:
		return strcmp(a->text, b->text) == 0;
	case WIN_WFP_F_REMOTE_V4:
		return a->v4 == b->v4;
	case WIN_WFP_F_REMOTE_V6:
		return memcmp(a->v6, b->v6, 16) == 0;
	case WIN_WFP_F_REMOTE_PORT:
	case WIN_WFP_F_PROTOCOL:
		return a->num == b->num;
	case _WIN_WFP_FIELD_MAX:
	default:
		return false;
	}
}

int win_wfp_filter_check(const WinWfpFilter *planned, const WinWfpFilter *seen, char *why,
			 size_t n_why)
{
	char k1[WIN_GUID_STRING_MAX], k2[WIN_GUID_STRING_MAX];

	win_guid_format(&planned->key, k1);
	win_guid_format(&seen->key, k2);
	if (!win_guid_equal(&planned->key, &seen->key)) {
		snprintf(why, n_why, "filter %s: read back key %s", k1, k2);
		return -EPERM;
	}
	if (planned->layer != seen->layer) {
		snprintf(why, n_why, "filter %s (%s): read back at layer %s, planned %s", planned->name,
			 k1, win_wfp_layer_name(seen->layer), win_wfp_layer_name(planned->layer));
		return -EPERM;
	}
	if (planned->permit != seen->permit || planned->weight != seen->weight) {
		snprintf(why, n_why, "filter %s (%s): read back %s weight %u, planned %s weight %u",
			 planned->name, k1, seen->permit ? "permit" : "block", seen->weight,
			 planned->permit ? "permit" : "block", planned->weight);
		return -EPERM;
	}
	/* The same set: each planned condition seen exactly once, nothing more. */
	if (planned->n_cond != seen->n_cond) {
		snprintf(why, n_why, "filter %s (%s): read back %zu conditions, planned %zu",
			 planned->name, k1, seen->n_cond, planned->n_cond);
		return -EPERM;
	}
	for (size_t i = 0; i < planned->n_cond; i++) {
		size_t hits = 0;

		for (size_t j = 0; j < seen->n_cond; j++)
			hits += cond_equal(&planned->cond[i], &seen->cond[j]);
		if (hits != 1) {
			snprintf(why, n_why, "filter %s (%s): condition %zu not read back as planned",
				 planned->name, k1, i);
			return -EPERM;
		}
	}
	return 0;
}
