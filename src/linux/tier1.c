/* Tier 1: Landlock, seccomp and no_new_privs around a supervised command,
 * without namespaces. See tier1.h; the supervision (timeout, signals,
 * killing the tree through a subreaper) is tier 0's (tier0.c). */
#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "common/cleanup.h"
#include "common/fd-pass.h"
#include "common/macro.h"
#include "common/strv.h"
#include "cow/cow-fsops.h"
#include "linux/caps.h"
#include "linux/landlock.h"
#include "linux/limits.h"
#include "linux/meta-guard.h"
#include "linux/quarantine.h"
#include "linux/run-tmpdir.h"
#include "linux/seccomp-filter.h"
#include "linux/tier0.h"
#include "linux/tier1-rules.h"
#include "linux/tier1.h"
#include "linux/walls.h"
#include "linux/workspace-scan.h"
#include "net/proxy.h"

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct Tier1Plan {
	const WardPolicy *policy;
	char *const *argv;
	char **envp;
	char *workspace;
	char *tmpdir;          /* the run's TMPDIR: tmp.path, borrowed */
	RunTmpdir tmp;         /* made at acquire, removed (or kept as the spare) by free */
	bool tree_gone;        /* the run's whole process tree was killed and reaped */
	char *program;         /* argv[0]'s base name, for network.commands */
	pid_t parent_pid;
	pid_t supervisor;      /* getpid() of the supervisor, for the child */
	AuditLog *audit;
	bool has_report;
	int report_fd;
	int http_fd, socks_fd; /* proxy listeners on 127.0.0.1, -EBADF when none */
	uint16_t http_port, socks_port;
	LandlockPlan *landlock;
	SeccompProgram *seccomp;
	LimitsPlan *limits;
	WallsPlan walls;
	WorkspaceScan protected_scan;
	QuarantineInput quarantine;
	char *state_dir;
	char *run_id;
	char **enforced;
	char **degraded;
	char **missing;        /* landlock's, and network-capture */
	char **notes;          /* lines for the user before the run */
	Tier1Options opt;      /* borrowed pointers: valid until free */
	Tier1Rules rules;      /* the file system grants; the TMPDIR's comes at acquire */
	MetaGuard *meta;       /* chmod, chown, utimes, xattrs: made at run (meta-guard.h) */
	int meta_sock[2];      /* the listener's way from the child to the supervisor */
	bool acquired;
};

static int close_fd(int fd)
{
	if (fd >= 0)
		(void)close(fd);
	return -EBADF;
}

static int listen_loopback(int *ret_fd, uint16_t *ret_port)
{
	struct sockaddr_in sa = { .sin_family = AF_INET };
	socklen_t len = sizeof(sa);
	_cleanup_close_ int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -errno;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	/* Port 0: the kernel picks a free ephemeral port, known only to this
	 * run (and to whoever scans loopback: docs/tiers.md). */
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
		return -errno;
	*ret_port = ntohs(sa.sin_port);
	*ret_fd = TAKE_FD(fd);
	return 0;
}

static bool env_is(const char *kv, const char *name)
{
	size_t n = strlen(name);

	return strncmp(kv, name, n) == 0 && kv[n] == '=';
}

/* The environment: the caller's filtered one, with TMPDIR the run's own
 * and the proxy variables pointing at this run's ports. */
static int build_env(Tier1Plan *p, char *const *envp)
{
	static const char *const replaced[] = { "TMPDIR",      "HTTP_PROXY", "http_proxy",
						"HTTPS_PROXY", "https_proxy", "ALL_PROXY",
						"all_proxy",   "NO_PROXY",   "no_proxy" };
	char *kv;

	STRV_FOREACH(e, envp)
	{
		bool drop = false;

		for (size_t i = 0; i < ELEMENTSOF(replaced); i++)
			drop = drop || env_is(*e, replaced[i]);
		if (!drop && strv_extend(&p->envp, *e) < 0)
			return -ENOMEM;
	}
	if (asprintf(&kv, "TMPDIR=%s", p->tmpdir) < 0 || strv_consume(&p->envp, kv) < 0)
		return -ENOMEM;
	if (p->http_fd >= 0) {
		char http[64], socks[64];

		snprintf(http, sizeof(http), "http://127.0.0.1:%u", p->http_port);
		snprintf(socks, sizeof(socks), "socks5h://127.0.0.1:%u", p->socks_port);
		const char *vars[][2] = { { "HTTP_PROXY", http },  { "http_proxy", http },
					  { "HTTPS_PROXY", http }, { "https_proxy", http },
					  { "ALL_PROXY", socks },  { "all_proxy", socks },
					  { "NO_PROXY", "localhost,127.0.0.1,::1" },
					  { "no_proxy", "localhost,127.0.0.1,::1" } };
		for (size_t i = 0; i < ELEMENTSOF(vars); i++)
			if (asprintf(&kv, "%s=%s", vars[i][0], vars[i][1]) < 0 ||
			    strv_consume(&p->envp, kv) < 0)
				return -ENOMEM;
	}
	/* An empty list is still a list (execvpe with NULL is not). */
	if (!p->envp && !(p->envp = calloc(1, sizeof(char *))))
		return -ENOMEM;
	return 0;
}

#define FAIL(r_, step_, ...)                                                                       \
	do {                                                                                       \
		snprintf(reterr->step, sizeof(reterr->step), "%s", step_);                         \
		snprintf(reterr->detail, sizeof(reterr->detail), __VA_ARGS__);                     \
		reterr->error = -(r_);                                                             \
		return (r_);                                                                       \
	} while (0)

/* <state>/tmp/<pid>-XXXXXX: in ward's own directory (no other user can
 * squat a name there), named after the ward that made it, so that one
 * killed before its cleanup (SIGKILL, SIGPIPE) leaves nothing for long:
 * each new run removes those whose ward is gone (run-tmpdir.h). */
static int make_tmpdir(Tier1Plan *p)
{
	int r = run_tmpdir_make(p->state_dir, &p->tmp);

	p->tmpdir = p->tmp.path;
	return r;
}

/* Pure: reads the policy and the host, changes nothing. */
static int plan_build(Tier1Plan *p, const Tier1Options *opt, SandboxError *reterr)
{
	const WardPolicy *pol = opt->policy;
	_cleanup_free_ char *errpath = NULL;
	int r;

	p->opt = *opt;
	p->http_fd = p->socks_fd = -EBADF;
	p->meta_sock[0] = p->meta_sock[1] = -EBADF;
	p->policy = pol;
	p->argv = opt->argv;
	p->parent_pid = opt->parent_pid;
	const char *base = strrchr(opt->argv[0], '/');
	p->program = strdup(base ? base + 1 : opt->argv[0]);
	p->workspace = strdup(opt->workspace);
	p->state_dir = strdup(opt->state_dir);
	if (!p->program || !p->workspace || !p->state_dir)
		FAIL(-ENOMEM, "plan", "out of memory");

	/* TLS inspection (and so credentials and request rules, which need
	 * it) puts the run's CA where the command trusts it: the view of a
	 * mount namespace, which tier 1 does not have. Refused, not run
	 * without them (docs/tiers.md). */
	if (pol->net_mode == NET_MODE_PROXY) {
		const char *field = pol->net_credentials && pol->net_credentials[0] ? "credentials"
				    : pol->net_requests && pol->net_requests[0]	   ? "requests"
				    : pol->net_inspect && pol->net_inspect[0]	   ? "inspect"
										   : NULL;
		if (field)
			FAIL(-EOPNOTSUPP, "network",
			     "network.%s needs TLS inspection, which needs tier 2 (the run's CA in "
			     "the sandbox's own view); tier 1 refuses to run without it: use tier 2, "
			     "or remove network.%s",
			     field, field);
	}
	r = landlock_abi_version();
	if (r < 1)
		FAIL(-ENOTSUP, "landlock",
		     "tier 1 needs Landlock, which this kernel %s; it would hold nothing",
		     r == -ENOSYS ? "does not have (CONFIG_SECURITY_LANDLOCK)"
				  : "has but does not enable (add landlock to lsm=)");
	{
		_cleanup_close_ int wfd =
			open(opt->workspace, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		_cleanup_free_ char *errrel = NULL;

		r = wfd < 0 ? -errno
			    : workspace_scan(wfd, pol->fs_protected, &p->protected_scan, &errrel);
		if (r < 0)
			FAIL(r, "protected", "scanning '%s%s%s' for protected paths", opt->workspace,
			     errrel ? "/" : "", errrel ? errrel : "");
	}

	Tier1RulesInput ri = {
		.policy = pol,
		.workspace = opt->workspace,
		.home = opt->home,
		.state_dir = opt->state_dir,
		.config_dir = opt->config_dir,
		.policy_files = opt->policy_files,
		.protected_scan = &p->protected_scan,
	};
	if (opt->test_break_wall && strcmp(opt->test_break_wall, "connect") != 0)
		ri.test_break = opt->test_break_wall;
	r = tier1_rules_build(&ri, &p->rules, &errpath);
	if (r == -EPERM)
		FAIL(r, "deny",
		     "a denied path %s: at tier 1 nothing can cut a denied path out of a writable "
		     "grant, so the run is refused; remove the overlap or use tier 2",
		     errpath ? errpath : "overlaps a writable one");
	if (r < 0)
		FAIL(r, "plan", "%s", errpath ? errpath : "building the Landlock rules");

	/* After the run, what the command made under a protected name
	 * (a nested repository's .git, a hook) is moved out. */
	p->quarantine = (QuarantineInput){
		.workspace = p->workspace,
		.state_dir = p->state_dir,
		.protected = pol->fs_protected,
		.before = &p->protected_scan,
	};
	return 0;
}

int tier1_plan_new(const Tier1Options *opt, Tier1Plan **ret, SandboxError *reterr)
{
	Tier1Plan *p = calloc(1, sizeof(*p));
	int r;

	if (!p)
		return -ENOMEM;
	r = plan_build(p, opt, reterr);
	if (r < 0) {
		tier1_plan_free(p);
		return r;
	}
	*ret = p;
	return 0;
}

int tier1_plan_acquire(Tier1Plan *p, const char *session_id, AuditLog *audit,
		       int proxy_report_fd, SandboxError *reterr)
{
	const Tier1Options *opt = &p->opt;
	const WardPolicy *pol = p->policy;
	int r;

	if (p->acquired)
		return 0;
	p->acquired = true;
	/* What the run made in its own acquire phase: the session id (names
	 * the cgroup and the quarantine) and the audit log. */
	p->audit = audit;
	p->has_report = proxy_report_fd >= 0;
	p->report_fd = proxy_report_fd;
	p->run_id = strdup(session_id ? session_id : "run");
	if (!p->run_id)
		FAIL(-ENOMEM, "plan", "out of memory");
	p->quarantine.run_id = p->run_id;
	p->quarantine.audit = audit;
	/* The run's /tmp: private, its own, removed by free. */
	r = make_tmpdir(p);
	if (r < 0)
		FAIL(r, "tmpdir", "creating the run's TMPDIR in '%s/tmp'", p->state_dir);
	if ((r = tier1_rules_add(&p->rules, p->tmpdir, LANDLOCK_CLASS_PRIVATE)) < 0)
		FAIL(r, "plan", "out of memory");

	if (pol->net_mode == NET_MODE_PROXY) {
		if ((r = listen_loopback(&p->http_fd, &p->http_port)) < 0 ||
		    (r = listen_loopback(&p->socks_fd, &p->socks_port)) < 0)
			FAIL(r, "proxy", "listening on 127.0.0.1 for the proxy");
	}
	/* TCP: connect only to the proxy, the host ports the policy names and
	 * the local ports it allows; bind only to those local ports. */
	uint16_t connect_ports[2 + 64 + 64], bind_ports[64];
	size_t n_connect = 0, n_bind = 0;
	if (p->http_fd >= 0) {
		connect_ports[n_connect++] = p->http_port;
		connect_ports[n_connect++] = p->socks_port;
	}
	for (size_t i = 0; i < pol->n_net_host_ports && i < 64; i++)
		connect_ports[n_connect++] = pol->net_host_ports[i];
	for (size_t i = 0; i < pol->n_net_local_ports && i < 64; i++) {
		bind_ports[n_bind++] = pol->net_local_ports[i];
		if (pol->net_local_ports[i] != 0)
			connect_ports[n_connect++] = pol->net_local_ports[i];
	}
	bool break_connect = opt->test_break_wall && strcmp(opt->test_break_wall, "connect") == 0;
	LandlockRequest req = {
		.rules = p->rules.rules,
		.n_rules = p->rules.n,
		.tcp_connect_ports = connect_ports,
		.n_tcp_connect_ports = n_connect,
		.tcp_bind_ports = bind_ports,
		.n_tcp_bind_ports = n_bind,
		.restrict_tcp = !break_connect,
		.restrict_udp = true,
	};
	r = landlock_plan_new(&req, &p->landlock);
	if (r < 0)
		FAIL(r, "landlock", "building the Landlock rules");
	int abi = landlock_plan_abi(p->landlock);

	SeccompOptions so = {
		.allow_nested_userns = pol->allow_nested_sandbox,
		.allow_ptrace = pol->allow_ptrace,
		.tier1 = true,
		/* Before ABI 9 nothing checks connect() to a pathname socket. */
		.deny_unix_socket = abi < 9,
	};
	r = seccomp_program_new(&so, &p->seccomp);
	if (r < 0)
		FAIL(r, "seccomp", "compiling the seccomp filter");

	/* The run's cgroup, as at T2 (named after the session id): the
	 * child joins it before execve (limits_apply_child_host). */
	r = limits_plan_new_host(pol, session_id, &p->limits);
	if (r >= 0)
		r = limits_acquire(p->limits);
	if (r < 0)
		FAIL(r, "limits", "setting up resource limits");

	/* The walls the check tries: the state dir (hidden, unwritable) and,
	 * with Landlock's TCP rules, a port outside the allowed ones. The
	 * test switch that breaks connect must leave its check in place. */
	r = walls_plan_init(&p->walls, opt->state_dir, abi >= 4 || break_connect, connect_ports,
			    n_connect);
	if (r < 0)
		FAIL(r, "walls", "'%s' is too long", opt->state_dir);
	if (opt->test_no_walls)
		p->walls = (WallsPlan){};

	if (build_env(p, opt->envp) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");

	static const char *const base_enforced[] = { "no-new-privs", "seccomp", "metadata-guard",
						     "protected-readonly", "protected-quarantine",
						     "private-tmp" };
	if (!opt->test_no_walls && strv_extend(&p->enforced, "walls-checked") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	for (size_t i = 0; i < ELEMENTSOF(base_enforced); i++)
		if (strv_extend(&p->enforced, base_enforced[i]) < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
	if (getuid() == 0 && strv_extend(&p->enforced, "caps-dropped") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	STRV_FOREACH(s, landlock_plan_enforced(p->landlock))
	if (strv_extend(&p->enforced, *s) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	if (strv_extend(&p->enforced, abi < 9 ? "seccomp-no-unix-socket" : "landlock-unix-path") < 0 ||
	    strv_extend(&p->enforced, "seccomp-no-udp-raw-ipc") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	/* Both lists exist, so the start event always has them. */
	if (!(p->degraded = calloc(1, sizeof(char *))) || !(p->missing = calloc(1, sizeof(char *))))
		FAIL(-ENOMEM, "plan", "out of memory");
	STRV_FOREACH(s, landlock_plan_missing(p->landlock))
	if (strv_extend(&p->missing, *s) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	/* Transparent capture needs the run's own network namespace. Without
	 * it a program that ignores the proxy variables is refused by
	 * Landlock (connect only to the proxy's ports), not captured: a
	 * feature missing, no wall (docs/network.md). */
	if (pol->net_mode == NET_MODE_PROXY && !pol->net_no_capture &&
	    (strv_extend(&p->missing, "network-capture") < 0 ||
	     strv_extend(&p->notes, "network.capture is on, but tier 1 has no network namespace "
				    "to capture in: a program that ignores the proxy variables is "
				    "refused, not captured (use tier 2, or set network.capture "
				    "to false)") < 0))
		FAIL(-ENOMEM, "plan", "out of memory");
	STRV_FOREACH(s, landlock_plan_degraded(p->landlock))
	if (strv_extend(&p->degraded, *s) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	STRV_FOREACH(s, limits_plan_degraded(p->limits))
	if (strv_extend(&p->degraded, *s) < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	if (opt->test_no_walls && strv_extend(&p->degraded, "test-switch-no-walls") < 0)
		FAIL(-ENOMEM, "plan", "out of memory");
	if (opt->test_break_wall) {
		char name[64];
		snprintf(name, sizeof(name), "test-switch-break-wall-%s", opt->test_break_wall);
		if (strv_extend(&p->degraded, name) < 0)
			FAIL(-ENOMEM, "plan", "out of memory");
	}
	p->supervisor = getpid();
	return 0;
}
#undef FAIL

Tier1Plan *tier1_plan_free(Tier1Plan *p)
{
	if (!p)
		return NULL;
	run_tmpdir_remove(&p->tmp, p->tree_gone);
	close_fd(p->http_fd);
	close_fd(p->socks_fd);
	close_fd(p->meta_sock[0]);
	close_fd(p->meta_sock[1]);
	meta_guard_free(p->meta);
	landlock_plan_free(p->landlock);
	seccomp_program_free(p->seccomp);
	limits_plan_free(p->limits);
	workspace_scan_done(&p->protected_scan);
	tier1_rules_done(&p->rules);
	strv_free(p->envp);
	strv_free(p->enforced);
	strv_free(p->degraded);
	strv_free(p->missing);
	strv_free(p->notes);
	free(p->workspace);
	free(p->program);
	free(p->state_dir);
	free(p->run_id);
	free(p);
	return NULL;
}

char *const *tier1_plan_notes(const Tier1Plan *plan)
{
	return plan ? plan->notes : NULL;
}

int tier1_plan_landlock_abi(const Tier1Plan *plan)
{
	return plan ? landlock_plan_abi(plan->landlock) : 0;
}

static cJSON *strv_json(char *const *l)
{
	cJSON *a = cJSON_CreateArray();

	STRV_FOREACH(s, l)
	cJSON_AddItemToArray(a, cJSON_CreateString(*s));
	return a;
}

cJSON *tier1_plan_describe(const Tier1Plan *p)
{
	cJSON *o = cJSON_CreateObject();

	cJSON_AddItemToObject(o, "enforced", strv_json(p->enforced));
	cJSON_AddItemToObject(o, "degraded", strv_json(p->degraded));
	cJSON_AddItemToObject(o, "missing", strv_json(p->missing));
	cJSON_AddNumberToObject(o, "landlock_abi", landlock_plan_abi(p->landlock));
	cJSON_AddStringToObject(o, "tmpdir", p->tmpdir);
	if (p->http_fd >= 0) {
		cJSON *px = cJSON_AddObjectToObject(o, "proxy");
		cJSON_AddNumberToObject(px, "http_port", p->http_port);
		cJSON_AddNumberToObject(px, "socks_port", p->socks_port);
	}
	cJSON *lim = limits_describe(p->limits);
	if (lim) {
		/* No tmpfs at T1: the sizes do not apply (docs/tiers.md). */
		cJSON_DeleteItemFromObject(lim, "tmp_mb");
		cJSON_DeleteItemFromObject(lim, "shm_mb");
		cJSON_AddItemToObject(o, "limits", lim);
	}
	return o;
}

/* Child side, after chdir, right before execve: no allocation. The order
 * is T2's: capabilities, no_new_privs (Landlock and seccomp need it),
 * Landlock, seccomp last (it forbids nothing used here, but it is the
 * last wall), then the walls are tried. */
static int confine(void *data, bool in_cgroup, SandboxStep *ret_step, const char **ret_detail)
{
	Tier1Plan *p = data;
	int r;

	*ret_step = SANDBOX_STEP_INIT;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) < 0)
		return -errno;
	if (getppid() != p->supervisor)
		return -ESRCH;
	/* Nothing the harness left open beyond stdio reaches the command. */
	*ret_step = SANDBOX_STEP_CLOSE_FDS;
	(void)syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC);
	*ret_step = SANDBOX_STEP_RLIMITS;
	if ((r = limits_apply_child_host(p->limits, in_cgroup)) < 0)
		return r;
	if (geteuid() == 0 || getuid() == 0) {
		*ret_step = SANDBOX_STEP_DROP_CAPS;
		if ((r = caps_drop_all()) < 0)
			return r;
	}
	*ret_step = SANDBOX_STEP_NO_NEW_PRIVS;
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	*ret_step = SANDBOX_STEP_LANDLOCK;
	if ((r = landlock_plan_apply(p->landlock)) < 0)
		return r;
	*ret_step = SANDBOX_STEP_SECCOMP;
	if ((r = seccomp_program_load(p->seccomp)) < 0)
		return r;
	/* The metadata guard: its listener goes to the supervisor, and no
	 * copy stays here (a command holding it could answer for itself). */
	int listener = meta_guard_install(p->meta);
	if (listener < 0)
		return listener;
	r = fd_pass_send(p->meta_sock[1], 'm', &listener, 1);
	(void)close(listener);
	if (r < 0)
		return r;
	*ret_step = SANDBOX_STEP_WALL_READ;
	return walls_check(&p->walls, ret_step, ret_detail);
}

/* The metadata guard over the run's read-write grants (Landlock's), and
 * the socket its listener travels on. */
static int meta_guard_start(Tier1Plan *p)
{
	_cleanup_free_ char **writable = calloc(p->rules.n + 1, sizeof(char *));
	size_t n = 0;
	int sv[2], r;

	if (!writable)
		return -ENOMEM;
	for (size_t i = 0; i < p->rules.n; i++)
		if (p->rules.rules[i].cls == LANDLOCK_CLASS_READ_WRITE ||
		    p->rules.rules[i].cls == LANDLOCK_CLASS_PRIVATE)
			writable[n++] = (char *)p->rules.rules[i].path;
	p->meta = meta_guard_free(p->meta);
	if ((r = meta_guard_new(writable, n, &p->meta)) < 0)
		return r;
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0)
		return -errno;
	close_fd(p->meta_sock[0]);
	close_fd(p->meta_sock[1]);
	p->meta_sock[0] = sv[0];
	p->meta_sock[1] = sv[1];
	return 0;
}

static int serve_meta(void *data, int listener)
{
	Tier1Plan *p = data;

	return meta_guard_serve(p->meta, listener);
}

int tier1_run(Tier1Plan *p, uint64_t timeout_s, BackendResult *ret, WardError *reterr)
{
	if (!p->acquired)
		return -EINVAL;
	pid_t proxy_pid = 0; /* reaped with the tree (see below) */
	int r;

	if ((r = meta_guard_start(p)) < 0)
		return ward_error_set(reterr, "seccomp", -r,
				      "preparing the guard of file metadata (chmod, chown, utimes)");
	if (p->http_fd >= 0) {
		ProxyConfig cfg = {
			.policy = p->policy,
			.program = p->program,
			.audit = p->audit,
			.has_report = p->has_report,
			.report_fd = p->report_fd,
		};
		r = proxy_spawn(&cfg, p->http_fd, p->socks_fd, &proxy_pid);
		if (r < 0)
			return ward_error_set(reterr, "proxy", -r, "starting the proxy");
		/* The proxy has its own copies: none stays in the command. */
		p->http_fd = close_fd(p->http_fd);
		p->socks_fd = close_fd(p->socks_fd);
	}
	BackendInput in = BACKEND_INPUT_INIT;
	in.argv = p->argv;
	in.envp = p->envp;
	in.workspace = p->workspace;
	in.timeout_s = timeout_s;
	in.parent_pid = p->parent_pid;
	for (int fd = 0; fd <= 2; fd++)
		in.stdio[fd] = p->opt.stdio[fd];
	Tier0Confine c = { .confine = confine,
			   .data = p,
			   .has_cgroup = limits_cgroup_fd(p->limits) >= 0,
			   .cgroup_fd = limits_cgroup_fd(p->limits),
			   .has_notify = true,
			   .notify_sock = p->meta_sock[0],
			   .serve = serve_meta };
	p->supervisor = getpid();
	/* The proxy is a child of this process like the command: the end of
	 * the run kills and reaps it with the rest of the tree (each of its
	 * audit records is one write, so none is cut in half). */
	r = tier0_supervise(&in, &c, ret);
	if (r < 0)
		return ward_error_set(reterr, "fork", -r, "starting '%s'", p->argv[0]);
	ret->oom_killed = limits_oom_killed(p->limits);
	/* Everything of the run is gone (the supervisor killed the tree). */
	p->tree_gone = true;
	r = quarantine_check(&p->quarantine);
	if (r > 0)
		ret->quarantined = r;
	else if (r < 0)
		ret->protected_check_failed = true;
	return 0;
}
