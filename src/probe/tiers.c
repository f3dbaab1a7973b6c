/* The tier table. See tiers.h. Keep docs/tiers.md in step: the test
 * test-probe-cli compares it with `ward probe --table`. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "common/macro.h"
#include "probe/tiers.h"

/* One cell. For T1, a cell may depend on the Landlock ABI: from @abi on,
 * the first answer; below it, the second. */
typedef struct Cell {
	TierHold hold;
	const char *how;
	int abi;               /* 0: no dependence */
	TierHold hold_below;
	const char *how_below;
} Cell;

typedef struct Row {
	const char *id;
	const char *name;
	Cell t[4];
} Row;

/* clang-format off */
static const Row rows[] = {
	{ "reads", "reads confined", {
		{ TIER_NOT_HELD, "the command reads what the user can read" },
		{ TIER_PARTLY, "Landlock grants only the policy's paths; deny is split out of every grant. Landlock does not cover stat, readlink or xattr reads: a hidden file's existence, size and times show, not its content" },
		{ TIER_HELD, "a constructed root view shows only the policy's paths; Landlock again" },
		{ TIER_HELD, "QEMU, inside the T2 sandbox, exports over 9p the T2 view it sees: what T2 hides does not exist for the guest" } } },
	{ "writes", "writes confined", {
		{ TIER_NOT_HELD, "the command writes what the user can write" },
		{ TIER_HELD, "Landlock: the workspace, read_write paths and a private TMPDIR", 3,
		  TIER_PARTLY, "Landlock before ABI 3 cannot refuse truncating a readable file" },
		{ TIER_HELD, "read-only binds outside the writable set; Landlock again" },
		{ TIER_HELD, "the exporter is QEMU under T2's read-only binds and Landlock: the host kernel refuses the rest, whatever the guest mounts" } } },
	{ "exec", "exec confined", {
		{ TIER_NOT_HELD, "anything on the host runs" },
		{ TIER_HELD, "Landlock: only read_exec paths are executable" },
		{ TIER_HELD, "noexec binds and Landlock: only read_exec paths" },
		{ TIER_NOT_HELD, "the guest's kernel runs whatever the view lets it read (T2's noexec binds do not cross 9p); nothing runs on the host" } } },
	{ "protected", "protected paths read-only", {
		{ TIER_NOT_HELD, "nothing protects .git or .ward" },
		{ TIER_HELD, "granted read-only; a directory holding one (the workspace root) takes no new entries at T1" },
		{ TIER_HELD, "read-only binds, whether or not they exist yet" },
		{ TIER_HELD, "T2's read-only binds, on the exporter" } } },
	{ "network", "network confined to allowed domains", {
		{ TIER_NOT_HELD, "the host's network, unfiltered" },
		{ TIER_HELD, "Landlock TCP rules allow connect only to this run's proxy port on the host loopback; seccomp refuses UDP and raw sockets", 4,
		  TIER_NOT_HELD, "Landlock before ABI 4 has no TCP rules" },
		{ TIER_HELD, "a network namespace with only lo; the proxy is the one way out" },
		{ TIER_HELD, "none: no NIC; proxy: QEMU's user network inside T2's network namespace, where only ward's proxy listens" } } },
	{ "processes-invisible", "host processes invisible", {
		{ TIER_NOT_HELD, "the host's /proc" },
		{ TIER_NOT_HELD, "/proc lists every host process and its command line; their memory, environment and fds stay out of reach (Landlock's ptrace rule)" },
		{ TIER_HELD, "a pid namespace and a fresh /proc" },
		{ TIER_HELD, "the guest's own kernel and /proc; QEMU in a pid namespace" } } },
	{ "processes-unsignallable", "host processes unsignallable", {
		{ TIER_NOT_HELD, "the user's processes can be signalled" },
		{ TIER_HELD, "Landlock signal scope; seccomp keeps setpriority, prlimit, sched_set* and ioprio_set to the command itself", 6,
		  TIER_NOT_HELD, "Landlock before ABI 6 has no signal scope" },
		{ TIER_HELD, "a pid namespace" },
		{ TIER_HELD, "the guest's kernel knows no host process" } } },
	{ "unix-abstract", "abstract unix sockets", {
		{ TIER_NOT_HELD, "every abstract socket on the host is reachable" },
		{ TIER_HELD, "Landlock's abstract-socket scope (ABI 6, implied by 9); before ABI 9 seccomp refuses socket(AF_UNIX) altogether" },
		{ TIER_HELD, "a network namespace (abstract sockets are per namespace) and Landlock's scope" },
		{ TIER_HELD, "the guest's own kernel; QEMU in T2's network namespace" } } },
	{ "unix-pathname", "pathname unix sockets", {
		{ TIER_NOT_HELD, "every socket the user can reach" },
		{ TIER_HELD, "Landlock: connect only to sockets in the private TMPDIR", 9,
		  TIER_HELD, "seccomp refuses socket(AF_UNIX), so programs that use UNIX sockets fail (socketpair works)" },
		{ TIER_HELD, "only sockets in the view; Landlock allows connect only in the private /tmp", 9,
		  TIER_PARTLY, "a host process listening on a socket inside the workspace is reachable (Landlock ABI 9 closes it)" },
		{ TIER_HELD, "a host socket in a 9p share is a plain inode to the guest's kernel: connect reaches no host listener" } } },
	{ "sysv-ipc", "SysV IPC", {
		{ TIER_NOT_HELD, "the host's IPC objects" },
		{ TIER_HELD, "seccomp refuses SysV IPC and POSIX message queues" },
		{ TIER_HELD, "an IPC namespace" },
		{ TIER_HELD, "the guest kernel's own IPC" } } },
	{ "leftovers-killed", "leftover processes killed", {
		{ TIER_PARTLY, "a subreaper kills the tree at the end; if ward itself is SIGKILLed, daemons survive" },
		{ TIER_PARTLY, "a subreaper and the run's cgroup where one is available kill the tree; without a cgroup, a SIGKILL of ward leaves daemons running" },
		{ TIER_HELD, "the pid namespace dies with its init" },
		{ TIER_HELD, "the guest init kills every process when the command ends and the VM stops; QEMU's pid namespace dies with its init" } } },
	{ "tiocsti", "TIOCSTI", {
		{ TIER_NOT_HELD, "the command can push input into the terminal" },
		{ TIER_HELD, "seccomp refuses TIOCSTI and TIOCLINUX" },
		{ TIER_HELD, "seccomp refuses TIOCSTI and TIOCLINUX" },
		{ TIER_HELD, "the command's stdio are virtio-serial ports: no terminal of the host reaches the guest" } } },
	{ "limits", "resource limits", {
		{ TIER_PARTLY, "only the timeout" },
		{ TIER_PARTLY, "as at T2 (the run's cgroup or rlimits), but no tmpfs: limits.tmp_mb and shm_mb do not apply; no user namespace: the inotify limits are not held" },
		{ TIER_HELD, "a cgroup where one is delegated (else rlimits, reported degraded); sized tmpfs" },
		{ TIER_PARTLY, "the timeout, memory_mb and cpu_percent hold QEMU and the guest together (T2's cgroup); pids counts QEMU's threads, not the guest's processes" } } },
};
/* clang-format on */

const char *tier_hold_to_string(TierHold h)
{
	static const char *const names[_TIER_HOLD_MAX] = {
		[TIER_HELD] = "held", [TIER_PARTLY] = "partly", [TIER_NOT_HELD] = "not held"
	};
	return h >= 0 && h < _TIER_HOLD_MAX ? names[h] : NULL;
}

size_t tier_guarantees(void)
{
	return ELEMENTSOF(rows);
}

int tier_fact(int tier, int abi, size_t i, TierFact *ret)
{
	const Cell *c;

	if (i >= ELEMENTSOF(rows) || tier < 0 || tier > 3)
		return -EINVAL;
	c = &rows[i].t[tier];
	ret->id = rows[i].id;
	ret->name = rows[i].name;
	if (c->abi && abi < c->abi) {
		ret->hold = c->hold_below;
		ret->how = c->how_below;
	} else {
		ret->hold = c->hold;
		ret->how = c->how;
	}
	return 0;
}

static int cell_markdown(const Cell *c, char *buf, size_t n)
{
	int r;

	if (!c->abi)
		r = snprintf(buf, n, "%s: %s", tier_hold_to_string(c->hold), c->how);
	else
		r = snprintf(buf, n, "Landlock ABI %d+: %s: %s; before: %s: %s", c->abi,
			     tier_hold_to_string(c->hold), c->how, tier_hold_to_string(c->hold_below),
			     c->how_below);
	return r < 0 || (size_t)r >= n ? -ENOBUFS : 0;
}

/* Appends to a growing string (no open_memstream: ward.exe builds this
 * file too). -ENOMEM leaves *@buf freed. */
_printf_(2, 3) static int append(char **buf, const char *fmt, ...)
{
	char *more = NULL, *joined;
	va_list ap;
	int r;

	va_start(ap, fmt);
	r = vasprintf(&more, fmt, ap);
	va_end(ap);
	if (r < 0 || asprintf(&joined, "%s%s", *buf ? *buf : "", more) < 0) {
		if (r >= 0)
			free(more);
		free(*buf);
		*buf = NULL;
		return -ENOMEM;
	}
	free(more);
	free(*buf);
	*buf = joined;
	return 0;
}

char *tier_table_markdown(void)
{
	char *buf = NULL;

	if (append(&buf, "| guarantee | T0 | T1 | T2 | T3 |\n|---|---|---|---|---|\n") < 0)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(rows); i++) {
		if (append(&buf, "| %s |", rows[i].name) < 0)
			return NULL;
		for (int t = 0; t < 4; t++) {
			char cell[512];

			if (cell_markdown(&rows[i].t[t], cell, sizeof(cell)) < 0) {
				free(buf);
				return NULL;
			}
			if (append(&buf, " %s |", cell) < 0)
				return NULL;
		}
		if (append(&buf, "\n") < 0)
			return NULL;
	}
	return buf;
}

cJSON *tier_gaps_json(int tier, int abi, TierHold which)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < ELEMENTSOF(rows); i++) {
		TierFact f;

		if (tier_fact(tier, abi, i, &f) == 0 && f.hold == which)
			cJSON_AddItemToArray(a, cJSON_CreateString(f.id));
	}
	return a;
}

/* ward.exe's tiers (docs/windows.md), in the order W0, W1, W1-write, W2,
 * sandbox-user (ward-setup.exe's offline or online user through ward-runner.exe).
 * Each row also says what of it is verified: ward.exe is built and tested
 * on Linux, under Wine, which enforces none of these mechanisms. */
static const char *const win_tiers[] = { "W0", "W1", "W1-write", "W2", "sandbox-user" };

typedef struct WinRow {
	const char *id;
	const char *name;
	struct {
		TierHold hold;
		const char *how;
	} w[5];
	const char *verified;
} WinRow;

#define NOT_ON_REAL_WINDOWS \
	"the plan and the refusals: unit tests (Linux and Wine); enforcement: not verified until a real Windows machine runs it"

/* clang-format off */
static const WinRow win_rows[] = {
	{ "reads", "reads confined", {
		{ TIER_NOT_HELD, "the command reads what the user can read" },
		{ TIER_NOT_HELD, "low integrity still reads medium-integrity files (reported degraded)" },
		{ TIER_NOT_HELD, "a write-restricted token restricts writes only (reported degraded)" },
		{ TIER_HELD, "AppContainer: only paths with an ACE for the run's package SID (the workspace, fs.read*, the run's TEMP); fs.deny and ward's dirs denied" },
		{ TIER_PARTLY, "fs.deny and ward's config dir denied to the sandbox user; otherwise it reads what it may, and ward-setup.exe granted it read on the profile, Windows, Program Files and ProgramData (reported degraded)" } },
	  NOT_ON_REAL_WINDOWS },
	{ "writes", "writes confined", {
		{ TIER_NOT_HELD, "the command writes what the user can write" },
		{ TIER_HELD, "low integrity writes only where the plan labelled low (the workspace, fs.read_write, TEMP)" },
		{ TIER_HELD, "only where the run's sandbox-write SID (or Everyone, or the logon SID) may write" },
		{ TIER_HELD, "only where the package SID holds a modify ACE" },
		{ TIER_HELD, "only where both the sandbox user and the synthetic SID hold a write ACE (the workspace, fs.read_write, TEMP)" } },
	  NOT_ON_REAL_WINDOWS },
	{ "exec", "exec confined", {
		{ TIER_NOT_HELD, "anything the user can run" },
		{ TIER_NOT_HELD, "low integrity runs what it can read" },
		{ TIER_NOT_HELD, "writes only are restricted" },
		{ TIER_PARTLY, "fs.read_exec paths, and what Windows lets every AppContainer run (the system directories)" },
		{ TIER_NOT_HELD, "writes only are restricted" } },
	  NOT_ON_REAL_WINDOWS },
	{ "protected", "protected paths read-only", {
		{ TIER_PARTLY, "writable during the run; one the run created is moved out of the workspace afterwards" },
		{ TIER_HELD, "medium labels on protected paths inside the writable roots; created ones moved out afterwards" },
		{ TIER_HELD, "deny-write ACEs for the sandbox-write SID; created ones moved out afterwards" },
		{ TIER_HELD, "no write ACE for the package SID; created ones moved out afterwards" },
		{ TIER_HELD, "deny-write ACEs for the synthetic SID and the sandbox user; created ones moved out afterwards" } },
	  "the plan and the quarantine after the run: unit tests and Wine; read-only: not verified until a real Windows machine runs it" },
	{ "network", "network confined to allowed domains", {
		{ TIER_NOT_HELD, "the host's network, unfiltered" },
		{ TIER_NOT_HELD, "the network is open (reported degraded)" },
		{ TIER_NOT_HELD, "the network is open (reported degraded)" },
		{ TIER_HELD, "no internetClient capability: no network at all; WFP filters on the package SID block every connect, accept and raw socket (when they cannot be put up: reported degraded, the row partly held, --strict refuses); network.mode proxy: the same walls with a permit to ward.exe's proxy port only, the package SID exempted from the AppContainer loopback block, the proxy's allow and deny lists (a network.commands program holds internetClient and is refused when the walls cannot be put up)" },
		{ TIER_HELD, "network.mode none, the offline user: ward-setup.exe's persistent WFP filters block every connect, accept and raw socket; network.mode proxy, the online user: the same filters with a permit to TCP 127.0.0.1/::1 port 47329 only, where ward.exe's proxy (its allow and deny lists, audited) holds the port exclusively for the run; the filters read back before each run (missing or different: refused, never degraded)" } },
	  NOT_ON_REAL_WINDOWS },
	{ "leftovers-killed", "leftover processes killed", {
		{ TIER_HELD, "a kill-on-close job object: everything the command started dies with ward" },
		{ TIER_HELD, "a kill-on-close job object" },
		{ TIER_HELD, "a kill-on-close job object" },
		{ TIER_HELD, "a kill-on-close job object" },
		{ TIER_HELD, "a kill-on-close job holding the runner and the command" } },
	  "verified under Wine at W0 (a grandchild dies with the job); the job is read back at every tier" },
	{ "limits", "resource limits", {
		{ TIER_PARTLY, "the timeout, limits.pids (active processes) and limits.memory_mb (job memory); the others are reported degraded" },
		{ TIER_PARTLY, "as at W0" },
		{ TIER_PARTLY, "as at W0" },
		{ TIER_PARTLY, "as at W0" },
		{ TIER_PARTLY, "as at W0; the runner counts as one of limits.pids" } },
	  "the job's limits are read back (unit tests); enforcement: not verified until a real Windows machine runs it" },
};
/* clang-format on */

static int win_tier_index(const char *tier)
{
	for (size_t i = 0; tier && i < ELEMENTSOF(win_tiers); i++)
		if (strcmp(tier, win_tiers[i]) == 0)
			return (int)i;
	return -EINVAL;
}

size_t tier_windows_guarantees(void)
{
	return ELEMENTSOF(win_rows);
}

int tier_windows_fact(const char *tier, size_t i, TierFact *ret, const char **ret_verified)
{
	int t = win_tier_index(tier);

	if (t < 0 || i >= ELEMENTSOF(win_rows))
		return -EINVAL;
	*ret = (TierFact){ .id = win_rows[i].id, .name = win_rows[i].name,
			   .hold = win_rows[i].w[t].hold, .how = win_rows[i].w[t].how };
	if (ret_verified)
		*ret_verified = win_rows[i].verified;
	return 0;
}

char *tier_windows_table_markdown(void)
{
	char *buf = NULL;

	if (append(&buf, "| guarantee (Windows) | W0 | W1 | W1-write | W2 | sandbox-user | verified |\n"
			 "|---|---|---|---|---|---|---|\n") < 0)
		return NULL;
	for (size_t i = 0; i < ELEMENTSOF(win_rows); i++) {
		if (append(&buf, "| %s |", win_rows[i].name) < 0)
			return NULL;
		for (size_t t = 0; t < ELEMENTSOF(win_tiers); t++)
			if (append(&buf, " %s: %s |", tier_hold_to_string(win_rows[i].w[t].hold),
				   win_rows[i].w[t].how) < 0)
				return NULL;
		if (append(&buf, " %s |\n", win_rows[i].verified) < 0)
			return NULL;
	}
	return buf;
}

cJSON *tier_windows_gaps_json(const char *tier, TierHold which)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && i < ELEMENTSOF(win_rows); i++) {
		TierFact f;

		if (tier_windows_fact(tier, i, &f, NULL) == 0 && f.hold == which)
			cJSON_AddItemToArray(a, cJSON_CreateString(f.id));
	}
	return a;
}
