/* The policy model (schema version 1) and its lifecycle: defaults, presets,
 * the user's file, flags, merged in that order into one WardPolicy. Pure data
 * and parsing: no sandbox, no mounts. See docs/policy.md for the format.
 *
 * Lifecycle: policy_load() (= policy_new_defaults() -> policy_apply_preset()
 * for each --preset -> policy_merge_file() of the user's file) -> flags
 * (policy_merge_json() of a flags document, or fields set directly) ->
 * policy_finalize() (expands ~ and relative paths, normalizes, validates)
 * -> use -> policy_free(). */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum NetMode {
	NET_MODE_NONE,
	NET_MODE_PROXY,
	_NET_MODE_MAX,
	_NET_MODE_INVALID = -22,
} NetMode;

const char *net_mode_to_string(NetMode m);
NetMode net_mode_from_string(const char *s);

/* "git": what the command may do to the repository's metadata (the git
 * dirs of the workspace's repository, wherever they are). */
typedef enum GitMode {
	GIT_MODE_READ_ONLY, /* git dirs the layout needs are visible, read-only (default) */
	GIT_MODE_COMMIT,    /* objects, refs, index and logs writable; config, hooks,
	                     * info and every other file git reads settings or
	                     * commands from stay read-only */
	GIT_MODE_OFF,       /* ward adds nothing outside the workspace for git */
	_GIT_MODE_MAX,
	_GIT_MODE_INVALID = -22,
} GitMode;

const char *git_mode_to_string(GitMode m);
GitMode git_mode_from_string(const char *s);

/* network.commands: program base name -> its own allow list. */
typedef struct NetCommand {
	char *name;
	char **allow;
} NetCommand;

/* network.hosts: name -> address pin. */
typedef struct NetHost {
	char *name;
	char *address;
} NetHost;

#define POLICY_SESSION_IDLE_DEFAULT_S 1800

typedef struct WardPolicy {
	/* fs.*: after policy_finalize() every entry is an absolute, normalized path
	 * ("~" expanded against home, relative ones against the workspace), except
	 * fs_protected, whose entries stay relative to the workspace. */
	char **fs_read;
	char **fs_read_exec;
	char **fs_read_write;
	char **fs_cache;    /* visible and writable, copy-on-write: writes never reach the host */
	char **fs_sanitize; /* files shown with credential lines removed (sanitize.c) */
	char **fs_deny;
	char **fs_protected;

	NetMode net_mode;
	char **net_allow;   /* "host", "*.domain", "host:port", IP literals; lowercased */
	char **net_deny;
	NetCommand *net_commands;
	size_t n_net_commands;
	NetHost *net_hosts;
	size_t n_net_hosts;
	/* network.local_ports: empty (the default) lets the command bind and
	 * connect to any port of its own loopback (the network namespace
	 * isolates it); a list narrows bind and connect to those ports with
	 * Landlock (0: an ephemeral bind). docs/network.md */
	uint16_t *net_local_ports;
	size_t n_net_local_ports;
	/* network.host_ports: TCP ports (1..65535) of the host's loopback that
	 * 127.0.0.1:PORT inside reaches, relayed by ward. */
	uint16_t *net_host_ports;
	size_t n_net_host_ports;
	uint64_t max_connections; /* network.max_connections, for the proxy */
	/* network.capture (default true; stored negated so that every way of
	 * making a policy starts with it on) and network.capture_ports: with
	 * mode proxy, connections to these ports of any address are captured
	 * and a DNS stub answers inside. docs/network.md */
	bool net_no_capture;
	uint16_t *net_capture_ports;
	size_t n_net_capture_ports;
	/* network.inspect: host patterns whose TLS the proxy intercepts with
	 * the run's own CA (docs/network.md "TLS inspection"); hosts named by
	 * network.credentials and network.requests are inspected as well.
	 * network.upstream_ca: PEM files trusted, besides the host's store,
	 * for the upstream side of inspected connections. */
	char **net_inspect;
	char **net_upstream_ca;
	/* network.credentials and network.requests: one canonical JSON object
	 * per entry, validated by the parser (net/net-rules.h reads them). */
	char **net_credentials;
	char **net_requests;

	char **env_pass;    /* names or trailing-* patterns (LC_*) */
	char **env_strip;   /* glob patterns (*_TOKEN, *SECRET*) */
	char **env_set;     /* "NAME=VALUE" */

	/* limits.*: 0 means "not set". */
	uint64_t timeout_s;
	uint64_t memory_mb;
	uint64_t pids;
	uint64_t tmp_mb;
	uint64_t nofile;
	uint64_t shm_mb;            /* /dev/shm's size */
	/* Shares of the per-user kernel counters (docs/policy.md). */
	uint64_t inotify_instances; /* also fanotify groups */
	uint64_t inotify_watches;   /* also fanotify marks */
	uint64_t sigpending;
	uint64_t msgqueue_kb;
	uint64_t memlock_kb;
	/* A live session (docs/sessions.md) stops after this long without a
	 * command; POLICY_SESSION_IDLE_DEFAULT_S when not set. */
	uint64_t session_idle_s;
	/* cgroup-only limits: reported degraded where no cgroup holds them. */
	uint64_t cpu_percent;       /* 100 = one CPU */
	uint64_t io_weight;         /* 1..10000, proportional */

	GitMode git_mode;   /* "git" */

	/* "tier": 0, 1 or 2; --tier wins over it. Unset: the default (2). */
	bool has_tier;
	int tier;

	/* sandbox.* switches */
	bool allow_nested_sandbox; /* clone/unshare with CLONE_NEWUSER */
	bool allow_ptrace;         /* ptrace, process_vm_readv/writev */

	char **presets;     /* names applied, in order */
	char **sources;     /* files merged, in order, canonical paths where they
	                     * resolve (for `policy show`, audit, and hiding them) */
} WardPolicy;

/* Where an error happened and what was expected. Filled only on failure. */
typedef struct PolicyError {
	char file[512];  /* "<defaults>", "<flags>", "<preset git>" or a file path */
	char path[256];  /* JSON path: "fs.read[2]", "" for the document itself */
	char msg[512];   /* "expected an absolute path, got \"foo\"" */
} PolicyError;

/* Context for ~ and relative path expansion. */
typedef struct PolicyContext {
	const char *home;       /* absolute */
	const char *workspace;  /* absolute, canonical */
} PolicyContext;

WardPolicy *policy_new_defaults(void);
/* Everything empty or unset (no defaults); mostly for tests and reloading. */
WardPolicy *policy_new_empty(void);
/* A deep copy, or NULL on OOM. */
WardPolicy *policy_copy(const WardPolicy *p);
WardPolicy *policy_free(WardPolicy *p);

/* Parse JSON text (from @filename, used in errors and recorded in p->sources
 * unless it starts with '<', like "<command line>") and merge it into @p.
 * Lists are appended (deduplicated), scalars replace, "presets" are applied
 * at the point they appear. On failure @p is unchanged, -EINVAL and @reterr. */
int policy_merge_json(WardPolicy *p, const char *filename, const char *text, PolicyError *reterr);
/* Read @path and call policy_merge_json. -ENOENT etc. are reported in @reterr too. */
int policy_merge_file(WardPolicy *p, const char *path, PolicyError *reterr);
/* Apply a built-in preset by name; unknown name -> -EINVAL with reterr. */
int policy_apply_preset(WardPolicy *p, const char *name, PolicyError *reterr);
/* The names of the built-in presets, NULL-terminated. */
const char *const *policy_preset_names(void);

/* Expand ~ and relative paths, normalize, validate cross-field rules
 * (e.g. wildcards, protected paths escaping the workspace). */
int policy_finalize(WardPolicy *p, const PolicyContext *ctx, PolicyError *reterr);

/* The effective policy as JSON text (schema version 1, reloadable). Caller frees. */
char *policy_to_json(const WardPolicy *p);
/* SHA-256 of policy_to_json(), lowercase hex, into @ret (65 bytes). */
int policy_hash(const WardPolicy *p, char ret[65]);

/* Built-in defaults, then each of @flag_presets (the --preset flags, may be
 * NULL), then the user's file: @file_or_null, or else
 * $XDG_CONFIG_HOME/ward/policy.json (~/.config/ward/policy.json) when it
 * exists. A missing explicit file is an error; a missing default file is not.
 * The caller then applies other flags and calls policy_finalize().
 * Returns 0 and a new policy in @ret, or -errno with @reterr. */
int policy_load(const char *file_or_null, char *const *flag_presets, WardPolicy **ret,
		PolicyError *reterr);

/* policy_load(), calling @fn (may be NULL) after each step: the defaults
 * (@is_defaults; @fn may change them), each preset ("--preset NAME") and
 * the user's file (its path), with the policy so far, not finalized. A
 * negative return from @fn stops the load with it. */
typedef int (*PolicyStageFn)(WardPolicy *p, bool is_defaults, const char *source, void *userdata,
			     PolicyError *reterr);
int policy_load_staged(const char *file_or_null, char *const *flag_presets, PolicyStageFn fn,
		       void *userdata, WardPolicy **ret, PolicyError *reterr);

/* Whether host pattern @pattern (a name, "name:port", an address or
 * "[v6]:port") names loopback: localhost and names below .localhost,
 * 127.0.0.0/8, ::1. Returns what it is ("localhost", "a loopback
 * address"), else NULL. Inside the sandbox these are the sandbox's own. */
const char *policy_loopback_pattern(const char *pattern);

/* One line: "FILE: PATH: MSG" ("FILE: MSG" when PATH is empty). */
void policy_error_format(const PolicyError *e, char *buf, size_t n);
