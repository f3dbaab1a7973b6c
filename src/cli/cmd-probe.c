/* ward probe [--json] [--quick]: what this kernel offers and the tier that
 * results. The full probe (the default here) tries each namespace and an
 * overlay mount in throwaway children and loads ward's seccomp filter in
 * one; `ward run` uses the quick probe. */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "cli/cli-options.h"
#include "cli/commands.h"
#include "common/cleanup.h"
#include "vm/vm-image.h"
#include "common/log.h"
#include "linux/landlock.h"
#include "policy/ceiling.h"
#include "probe/probe.h"
#include "probe/tiers.h"
#include "ward/ward.h"

static void usage(FILE *f)
{
	fprintf(f, "Usage: ward probe [--json] [--quick] [--tier N] [--table] [--ready]\n\n"
		   "Show what this kernel offers to ward (user, mount, pid, net, ipc and uts\n"
		   "namespaces; overlayfs in a user namespace; the Landlock ABI and its features;\n"
		   "seccomp and whether ward's filter is in force; cgroup v2 delegation) and the\n"
		   "tier that results. Exits 0 when tier 2 is available, 125 otherwise.\n\n"
		   "  --json    print one JSON object instead of the table\n"
		   "  --quick   read sysctls and /proc only, as 'ward run' does; do not try\n"
		   "            namespaces in test children\n"
		   "  --tier N  list what tier N (0, 1, 2 or 3) holds here instead of the tier\n"
		   "            this host gets\n"
		   "  --table   print the table of every tier's guarantees (docs/tiers.md)\n"
		   "            and exit\n"
		   "  --ready   a readiness probe: exit 0 when the tier a run gets by\n"
		   "            default (2, or the managed ceiling's first allowed tier,\n"
		   "            /etc/ward/managed.json) is available here, else 125;\n"
		   "            one line either way\n"
		   "  -h, --help  show this help\n");
}

static const char *yn(bool b)
{
	return b ? "yes" : "no";
}

static void print_table(const WardFeatures *f, int tier)
{
	const char *const *ll;
	size_t n;
	char feats[128] = "";

	ll = probe_landlock_features(f->landlock_abi, &n);
	for (size_t i = 0; i < n; i++) {
		strncat(feats, i ? ", " : "", sizeof(feats) - strlen(feats) - 1);
		strncat(feats, ll[i], sizeof(feats) - strlen(feats) - 1);
	}

	printf("%-24s %s%s\n", "user namespace", yn(f->userns),
	       f->userns ? "" : (f->userns_reason[0] ? " (see below)" : ""));
	printf("%-24s %s\n", "mount namespace", yn(f->mountns));
	printf("%-24s %s\n", "pid namespace", yn(f->pidns));
	printf("%-24s %s\n", "net namespace", yn(f->netns));
	printf("%-24s %s\n", "ipc namespace", yn(f->ipcns));
	printf("%-24s %s\n", "uts namespace", yn(f->utsns));
	printf("%-24s %s\n", "overlayfs in userns", yn(f->overlay_userns));
	if (f->full && f->userns)
		printf("%-24s %s%s%s%s%s\n", "tier-2 first steps",
		       f->t2_steps ? "work (tried in a test child)" : "fail at ",
		       f->t2_steps ? "" : f->t2_step, f->t2_steps ? "" : ": ",
		       f->t2_steps ? "" : strerror(f->t2_errno),
		       f->clone3_enosys ? "; clone3 gives ENOSYS, clone is used"
		       : f->hostname_blocked ? "; sethostname is blocked (cosmetic: skipped)"
					     : "");
	if (f->landlock_abi > 0)
		printf("%-24s ABI %d (%s)\n", "landlock", f->landlock_abi, feats);
	else
		printf("%-24s no (%s)\n", "landlock",
		       f->landlock_errno == ENOSYS ? "not built in" : "not enabled");
	if (!f->seccomp)
		printf("%-24s no\n", "seccomp filter");
	else
		printf("%-24s yes; ward's filter: %s (%u BPF instructions)\n", "seccomp filter",
		       f->seccomp_filter ? (f->full ? "in force (tested)" : "in force") : "not built",
		       f->seccomp_filter_len);
	if (f->cgroup_delegated)
		printf("%-24s yes (%s)\n", "cgroup v2 delegation", f->cgroup_path);
	else
		printf("%-24s no (%s; limits use %s)\n", "cgroup v2 delegation", f->cgroup_reason,
		       f->cgroup_v1 ? "the cgroup v1 hierarchies, as root" : "rlimits");
	printf("%-24s %s\n", "memory limit",
	       strcmp(f->memory_limit, "rlimit") == 0
		       ? "rlimit only: degraded (counts no shared memory; --strict refuses memory_mb)"
	       : strcmp(f->memory_limit, "cgroup-v1") == 0
		       ? "cgroup v1, as root (counts shared memory)"
		       : "cgroup v2 (counts shared memory)");
	printf("%-24s %s\n", "cpu limit",
	       strcmp(f->cpu_limit, "none") == 0 ? "none: degraded (--strict refuses cpu_percent)"
	       : strcmp(f->cpu_limit, "cgroup-v1") == 0 ? "cgroup v1, as root"
							: "cgroup v2");
	printf("%-24s %s\n", "io weight",
	       strcmp(f->io_limit, "none") == 0 ? "none: degraded (--strict refuses io_weight)"
	       : strcmp(f->io_limit, "cgroup-v1") == 0 ? "cgroup v1, as root (BFQ devices only)"
						       : "cgroup v2 (BFQ or io.cost devices only)");
	printf("%-24s %s\n", "per-user shares",
	       f->user_shares ? "yes (inotify, fanotify, namespaces in the sandbox's user namespace; "
				"signals, message queues, processes by rlimit)"
			      : "rlimits only (/proc/sys is read-only: inotify is shared)");
	VmStatus vm;
	vm_status(&vm, f->full);
	printf("%-24s %s\n", "tier 3 (micro-VM)", vm.line);
	printf("%-24s T%d%s\n", "tier", tier, f->full ? "" : " (quick probe)");
}

/* What @tier holds on this host (its Landlock ABI), one line each. */
static void print_facts(const WardFeatures *f, int tier)
{
	const char *const *ll;
	size_t n;

	printf("\nWhat tier %d holds here (docs/tiers.md):\n", tier);
	for (size_t i = 0; i < tier_guarantees(); i++) {
		TierFact t;

		if (tier_fact(tier, f->landlock_abi, i, &t) < 0)
			continue;
		printf("  %-36s %-9s %s\n", t.name, tier_hold_to_string(t.hold), t.how);
	}
	if (f->landlock_abi > 0 && f->landlock_abi < 10) {
		ll = probe_landlock_features(10, &n);
		printf("\nLandlock ABI %d lacks:\n", f->landlock_abi);
		for (int a = f->landlock_abi + 1; a <= 10 && (size_t)a <= n; a++) {
			const char *why = a == 8 ? "thread sync: not needed, ward's child is single-threaded"
					  : a == 9 ? landlock_missing_reason("landlock-unix-path")
					  : a == 10 ? landlock_missing_reason("landlock-udp")
						    : NULL;
			printf("  ABI %-2d %-10s %s\n", a, ll[a - 1], why ? why : "");
		}
	}
}

static int print_json(const WardFeatures *f, int tier)
{
	_cleanup_free_ char *text = NULL;
	cJSON *o = cJSON_CreateObject(), *ns, *ll, *feats, *sc, *cg;
	const char *const *names;
	size_t n;

	if (!o)
		return -ENOMEM;
	ns = cJSON_AddObjectToObject(o, "namespaces");
	ll = cJSON_AddObjectToObject(o, "landlock");
	sc = cJSON_AddObjectToObject(o, "seccomp");
	cg = cJSON_AddObjectToObject(o, "cgroup");
	if (!ns || !ll || !sc || !cg)
		goto oom;
	cJSON_AddBoolToObject(ns, "user", f->userns);
	cJSON_AddBoolToObject(ns, "mount", f->mountns);
	cJSON_AddBoolToObject(ns, "pid", f->pidns);
	cJSON_AddBoolToObject(ns, "net", f->netns);
	cJSON_AddBoolToObject(ns, "ipc", f->ipcns);
	cJSON_AddBoolToObject(ns, "uts", f->utsns);
	if (f->userns_reason[0])
		cJSON_AddStringToObject(ns, "user_reason", f->userns_reason);
	cJSON_AddBoolToObject(o, "overlay_userns", f->overlay_userns);
	if (f->full) {
		cJSON *st = cJSON_AddObjectToObject(o, "t2_steps");
		cJSON_AddBoolToObject(st, "ok", f->t2_steps);
		if (!f->t2_steps && f->t2_step[0]) {
			cJSON_AddStringToObject(st, "step", f->t2_step);
			cJSON_AddStringToObject(st, "error", strerror(f->t2_errno));
		}
		cJSON_AddBoolToObject(st, "clone3_enosys", f->clone3_enosys);
		cJSON_AddBoolToObject(st, "hostname_blocked", f->hostname_blocked);
	}
	cJSON_AddNumberToObject(ll, "abi", f->landlock_abi);
	if (f->landlock_abi == 0)
		cJSON_AddStringToObject(ll, "error",
					f->landlock_errno == ENOSYS ? "ENOSYS" : "EOPNOTSUPP");
	feats = cJSON_AddArrayToObject(ll, "features");
	if (!feats)
		goto oom;
	names = probe_landlock_features(f->landlock_abi, &n);
	for (size_t i = 0; i < n; i++)
		cJSON_AddItemToArray(feats, cJSON_CreateString(names[i]));
	cJSON_AddBoolToObject(sc, "available", f->seccomp);
	cJSON_AddBoolToObject(sc, "filter", f->seccomp_filter);
	cJSON_AddNumberToObject(sc, "instructions", f->seccomp_filter_len);
	cJSON_AddBoolToObject(cg, "delegated", f->cgroup_delegated);
	if (f->cgroup_delegated)
		cJSON_AddStringToObject(cg, "path", f->cgroup_path);
	else
		cJSON_AddStringToObject(cg, "reason", f->cgroup_reason);
	cJSON_AddBoolToObject(cg, "v1_fallback", f->cgroup_v1);
	cJSON_AddStringToObject(cg, "memory", f->memory_limit);
	cJSON_AddStringToObject(cg, "cpu", f->cpu_limit);
	cJSON_AddStringToObject(cg, "io", f->io_limit);
	cJSON_AddBoolToObject(o, "user_shares", f->user_shares);
	cJSON_AddBoolToObject(o, "full", f->full);
	cJSON_AddNumberToObject(o, "tier", tier);
	VmStatus vm;
	vm_status(&vm, f->full);
	cJSON *t3 = cJSON_AddObjectToObject(o, "tier3");
	if (t3) {
		cJSON_AddBoolToObject(t3, "ready", vm.qemu && vm.image);
		cJSON_AddBoolToObject(t3, "qemu", vm.qemu);
		cJSON_AddBoolToObject(t3, "image", vm.image);
		if (vm.image)
			cJSON_AddStringToObject(t3, "image_dir", vm.image_dir);
		cJSON_AddStringToObject(t3, "engine", vm.engine);
		cJSON_AddStringToObject(t3, "engine_reason", vm.engine_why);
		if (vm.kernel[0])
			cJSON_AddStringToObject(t3, "kernel", vm.kernel);
		cJSON_AddStringToObject(t3, "status", vm.line);
	}
	cJSON *g = cJSON_AddArrayToObject(o, "guarantees");
	for (size_t i = 0; g && i < tier_guarantees(); i++) {
		TierFact t;
		cJSON *e;

		if (tier_fact(tier, f->landlock_abi, i, &t) < 0 || !(e = cJSON_CreateObject()))
			continue;
		cJSON_AddStringToObject(e, "id", t.id);
		cJSON_AddStringToObject(e, "hold", tier_hold_to_string(t.hold));
		cJSON_AddStringToObject(e, "how", t.how);
		cJSON_AddItemToArray(g, e);
	}
	cJSON *miss = cJSON_AddArrayToObject(ll, "missing");
	static const char *const newer[] = { "landlock-unix-path", "landlock-udp" };
	for (int a = 9; miss && a <= 10; a++)
		if (f->landlock_abi > 0 && f->landlock_abi < a) {
			cJSON *e = cJSON_CreateObject();
			cJSON_AddNumberToObject(e, "abi", a);
			cJSON_AddStringToObject(e, "feature", newer[a - 9]);
			cJSON_AddStringToObject(e, "why", landlock_missing_reason(newer[a - 9]));
			cJSON_AddItemToArray(miss, e);
		}

	text = cJSON_PrintUnformatted(o);
	cJSON_Delete(o);
	if (!text)
		return -ENOMEM;
	printf("%s\n", text);
	return 0;
oom:
	cJSON_Delete(o);
	return -ENOMEM;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Ceiling *, ceiling_free)

/* --ready (a readiness probe): is the tier a run gets by default here (2,
 * or the managed ceiling's first allowed tier when 2 is not allowed)
 * available on this host, which gets @tier? One line either way. */
static int ready(int tier)
{
	_cleanup_(ceiling_freep) Ceiling *c = NULL;
	PolicyError e = {};
	char line[1400];
	int want;

	if (ceiling_load_system(&c, &e) < 0) {
		policy_error_format(&e, line, sizeof(line));
		printf("not ready: the managed policy is refused: %s\n", line);
		return WARD_EXIT_SETUP;
	}
	want = ceiling_default_tier(c);
	if (want > tier) {
		printf("not ready: runs need tier %d%s, this host gets tier %d (ward probe says why)\n",
		       want, c ? " (the managed ceiling's allowed_tiers)" : "", tier);
		return WARD_EXIT_SETUP;
	}
	printf("ready: runs get tier %d%s%s\n", want, c ? " within the managed ceiling " : "",
	       c ? ceiling_file(c) : "");
	return 0;
}

int cmd_probe(int argc, char **argv)
{
	enum { OPT_JSON = 1, OPT_QUICK, OPT_TIER, OPT_TABLE, OPT_READY, OPT_HELP };
	static const CliOption opts[] = {
		{ "ready", 0, CLI_ARG_NONE, OPT_READY },
		{ "json", 0, CLI_ARG_NONE, OPT_JSON },
		{ "quick", 0, CLI_ARG_NONE, OPT_QUICK },
		{ "tier", 0, CLI_ARG_REQUIRED, OPT_TIER },
		{ "table", 0, CLI_ARG_NONE, OPT_TABLE },
		{ "help", 'h', CLI_ARG_NONE, OPT_HELP },
		{},
	};
	_cleanup_(cli_parsed_done) CliParsed a = {};
	_cleanup_free_ char *err = NULL;
	bool json = false, quick = false, want_ready = false;
	WardFeatures f;
	int r, tier, show_tier = -1;

	r = cli_parse_options(opts, CLI_PARSE_INTERLEAVED, argc, argv, &a, &err);
	if (r == -ENOMEM)
		return log_error_errno(r, "Out of memory: %m"), WARD_EXIT_SETUP;
	if (r < 0) {
		log_error("probe: %s", err ? err : "bad option");
		usage(stderr);
		return WARD_EXIT_USAGE;
	}
	for (size_t i = 0; i < a.n_opts; i++)
		switch (a.opts[i].id) {
		case OPT_JSON:
			json = true;
			break;
		case OPT_QUICK:
			quick = true;
			break;
		case OPT_READY:
			want_ready = true;
			break;
		case OPT_TIER:
			if (strlen(a.opts[i].value) != 1 || a.opts[i].value[0] < '0' ||
			    a.opts[i].value[0] > '3') {
				log_error("probe: --tier: expected 0, 1, 2 or 3, got '%s'", a.opts[i].value);
				return WARD_EXIT_USAGE;
			}
			show_tier = a.opts[i].value[0] - '0';
			break;
		case OPT_TABLE: {
			_cleanup_free_ char *t = tier_table_markdown(),
					    *w = tier_windows_table_markdown();
			if (!t || !w)
				return log_error("Out of memory"), WARD_EXIT_SETUP;
			/* Linux's tiers, then ward.exe's (docs/tiers.md has both). */
			printf("%s\n%s", t, w);
			return 0;
		}
		case OPT_HELP:
			usage(stdout);
			return 0;
		}
	if (a.pos) {
		log_error("Unexpected argument '%s'.", a.pos[0]);
		usage(stderr);
		return WARD_EXIT_USAGE;
	}

	r = probe_features(&f, !quick);
	if (r < 0)
		return log_error_errno(r, "Failed to probe the kernel: %m"), WARD_EXIT_SETUP;
	tier = probe_best_tier(&f);
	if (want_ready)
		return ready(tier);
	if (json)
		r = print_json(&f, show_tier >= 0 ? show_tier : tier);
	else {
		print_table(&f, tier);
		print_facts(&f, show_tier >= 0 ? show_tier : tier);
	}
	if (r < 0)
		return log_error_errno(r, "Failed to format the result: %m"), WARD_EXIT_SETUP;
	if (!json && (tier < 2 || f.landlock_abi == 0 || !f.seccomp_filter))
		probe_explain_missing(&f);
	return tier == 2 ? 0 : WARD_EXIT_SETUP;
}
