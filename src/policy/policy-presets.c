/* The built-in defaults and the toolchain presets, as data. Paths under "~"
 * stay unexpanded until policy_finalize(). */
#include <errno.h>
#include <string.h>

#include "common/strv.h"
#include "policy/policy-internal.h"

typedef struct Preset {
	const char *name;
	const char *const *read;
	const char *const *read_exec;
	const char *const *read_write;
	const char *const *cache;
	const char *const *sanitize;
	const char *const *deny;
	const char *const *env_pass;
} Preset;

#define LIST(...) ((const char *const[]){ __VA_ARGS__, NULL })

/* clang-format off */
static const Preset defaults = {
	.name = "<defaults>",
	.read_exec = LIST("/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/libx32", "/opt"),
	.read = LIST("/etc"),
	/* Host secrets under /etc that no sandboxed command needs. A root user
	 * keeps uid 0 inside the sandbox, so file modes alone do not hide them. */
	.deny = LIST("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-",
		     "/etc/sudoers", "/etc/sudoers.d",
		     "/etc/ssh/ssh_host_rsa_key", "/etc/ssh/ssh_host_ecdsa_key",
		     "/etc/ssh/ssh_host_ed25519_key", "/etc/ssh/ssh_host_dsa_key",
		     "/etc/security/opasswd", "/etc/ssl/private", "/etc/pki/tls/private",
		     "/etc/letsencrypt", "/etc/krb5.keytab", "/etc/wireguard",
		     "/etc/NetworkManager/system-connections", "/etc/ipsec.secrets",
		     "/etc/ppp/chap-secrets", "/etc/ppp/pap-secrets", "/etc/mysql/debian.cnf"),
	.env_pass = LIST("PATH", "HOME", "USER", "LOGNAME", "SHELL", "LANG", "LANGUAGE", "LC_*",
			 "TERM", "COLORTERM", "TZ", "NO_COLOR", "FORCE_COLOR", "CLICOLOR",
			 "CLICOLOR_FORCE", "COLUMNS", "LINES", "EDITOR", "VISUAL", "PAGER",
			 "MANPAGER", "LESS",
			 /* Certificate settings (their files are made readable:
			  * env_ca_paths()). */
			 "SSL_CERT_FILE", "SSL_CERT_DIR", "NODE_EXTRA_CA_CERTS",
			 "REQUESTS_CA_BUNDLE", "CURL_CA_BUNDLE", "GIT_SSL_CAINFO"),
};

/* The one list of what is protected by default: names match at any depth
 * (protected.h). Each is configuration that a host tool reads and that can
 * make it run a command, without the user choosing to run the project's
 * code; docs/policy.md ("Protected by default") says which tool and how.
 * A policy adds to it (fs.protected); it cannot remove from it. */
static const char *const default_protected[] = {
	/* git: config, hooks, modules, worktree pointers; submodule URLs */
	".git", ".gitmodules",
	/* hooks that git runs through core.hooksPath or a pre-commit hook */
	".husky", ".pre-commit-config.yaml",
	/* harnesses and ward itself */
	".ward", ".harness", ".codex", ".agents",
	/* coding agents: hooks, MCP servers, commands they run */
	".claude", ".mcp.json", ".gemini", ".cursor", ".continue", ".kiro", ".roo", ".amazonq",
	".opencode", "opencode.json", "opencode.jsonc", ".aider.conf.yml",
	/* editors: tasks, run configurations, language servers, host commands */
	".vscode", ".idea", ".zed", ".devcontainer", ".devcontainer.json",
	NULL
};

static const char *const default_strip[] = {
	"*_TOKEN", "*_TOKEN_*", "*_KEY", "*_KEY_*", "*_APIKEY*", "*API_KEY*", "*SECRET*",
	"*PASSWORD*", "*PASSWD*", "*CREDENTIAL*", "*_AUTH", "*_COOKIE*", "AWS_*", "AZURE_*",
	"OPENAI_*", "ANTHROPIC_*", "GITHUB_TOKEN", "GH_TOKEN", "GITLAB_TOKEN", "NPM_TOKEN",
	"DATABASE_URL", "SSH_AUTH_SOCK", "GPG_AGENT_INFO", NULL
};

/* What each preset opens, and why none of it lets the command run code on
 * the host later (docs/policy.md, "Presets", says the same per preset):
 *  - configuration is read-only, named file by file (a directory would show
 *    whatever else sits in it), and credential lines are cut out of it
 *    (.sanitize, sanitize.c); credential stores are not shown;
 *  - toolchains are read-only (read_exec);
 *  - caches are copy-on-write (.cache): npx and pnpm dlx run packages from
 *    their caches, cargo builds the sources extracted under
 *    ~/.cargo/registry/src, go links objects from its build cache, pip
 *    installs wheels from its cache, all without checking them again; so
 *    the command sees the host's cache and writes a private copy that ends
 *    with the run;
 *  - no preset makes anything writable on the host: no global bin or home
 *    directory of a package manager (~/.local/share/pnpm is PNPM_HOME, first
 *    on the user's PATH), no shim, no shell startup file. */
static const Preset presets[] = {
	{
		.name = "git",
		/* Files, not ~/.config/git: a directory shows whatever else
		 * sits there (git-credential-store's XDG file, backups). */
		.read = LIST("~/.gitconfig", "~/.config/git/config", "~/.config/git/ignore",
			     "~/.config/git/attributes"),
		.sanitize = LIST("~/.gitconfig", "~/.config/git/config"),
		.deny = LIST("~/.config/git/credentials"),
		.env_pass = LIST("GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_COMMITTER_NAME",
				 "GIT_COMMITTER_EMAIL"),
	},
	{
		.name = "node",
		.read = LIST("~/.npmrc"),
		.sanitize = LIST("~/.npmrc"),
		.read_exec = LIST("/usr/local/lib/node_modules"),
		.cache = LIST("~/.npm", "~/.cache/yarn", "~/.pnpm-store", "~/.cache/pnpm",
			      "~/.local/share/pnpm/store"),
		.env_pass = LIST("NODE_ENV", "NODE_PATH"),
	},
	{
		.name = "python",
		.read = LIST("~/.config/pip/pip.conf", "~/.pip/pip.conf"),
		.sanitize = LIST("~/.config/pip/pip.conf", "~/.pip/pip.conf"),
		.cache = LIST("~/.cache/pip", "~/.cache/pypoetry", "~/.cache/uv"),
		.env_pass = LIST("VIRTUAL_ENV", "PYTHONPATH", "PYTHONDONTWRITEBYTECODE",
				 "PYTHONUNBUFFERED", "PYTHONIOENCODING"),
	},
	{
		.name = "rust",
		.read = LIST("~/.cargo/config.toml", "~/.cargo/config"),
		.sanitize = LIST("~/.cargo/config.toml", "~/.cargo/config"),
		/* Toolchains and installed tools run from here. */
		.read_exec = LIST("~/.rustup", "~/.cargo/bin"),
		.cache = LIST("~/.cargo/registry", "~/.cargo/git"),
		.env_pass = LIST("CARGO_HOME", "RUSTUP_HOME", "RUSTUP_TOOLCHAIN", "RUST_BACKTRACE",
				 "RUST_LOG", "CARGO_TARGET_DIR"),
	},
	{
		.name = "go",
		.read = LIST("~/.config/go/env"),
		.sanitize = LIST("~/.config/go/env"),
		.read_exec = LIST("/usr/local/go"),
		.cache = LIST("~/.cache/go-build", "~/go/pkg/mod"),
		.env_pass = LIST("GOPATH", "GOROOT", "GOFLAGS", "GOOS", "GOARCH", "CGO_ENABLED",
				 "GOTOOLCHAIN", "GOPRIVATE", "GONOSUMDB", "GONOPROXY", "GOCACHE",
				 "GOMODCACHE"),
	},
};

static const char *const preset_names[] = { "git", "node", "python", "rust", "go", NULL };
/* clang-format on */

const char *const *policy_preset_names(void)
{
	return preset_names;
}

static int add_list(char ***l, const char *const *items)
{
	for (size_t i = 0; items && items[i]; i++) {
		int r = policy_add_unique(l, items[i]);
		if (r < 0)
			return r;
	}
	return 0;
}

static int apply(WardPolicy *p, const Preset *ps)
{
	int r;

	if ((r = add_list(&p->fs_read, ps->read)) < 0 ||
	    (r = add_list(&p->fs_read_exec, ps->read_exec)) < 0 ||
	    (r = add_list(&p->fs_read_write, ps->read_write)) < 0 ||
	    (r = add_list(&p->fs_cache, ps->cache)) < 0 ||
	    (r = add_list(&p->fs_sanitize, ps->sanitize)) < 0 ||
	    (r = add_list(&p->fs_deny, ps->deny)) < 0 ||
	    (r = add_list(&p->env_pass, ps->env_pass)) < 0)
		return r;
	return 0;
}

WardPolicy *policy_new_defaults(void)
{
	WardPolicy *p = policy_new_empty();

	if (!p)
		return NULL;
	if (apply(p, &defaults) < 0 || add_list(&p->fs_protected, default_protected) < 0 ||
	    add_list(&p->env_strip, default_strip) < 0)
		return policy_free(p);
	p->net_mode = NET_MODE_NONE;
	p->pids = 4096;
	p->tmp_mb = 1024;
	p->nofile = 8192;
	/* Docker's /dev/shm default. */
	p->shm_mb = 64;
	/* Shares of per-user counters: a quarter of the kernel's defaults
	 * (128 inotify instances, 800 KiB of message queues); and at most half
	 * of the caller's own limit, whatever is asked (src/linux/limits.c). */
	p->inotify_instances = 32;
	p->inotify_watches = 65536;
	p->sigpending = 1024;
	p->msgqueue_kb = 200;
	p->memlock_kb = 4096; /* half of the usual 8 MiB */
	p->memory_mb = 0;
	p->timeout_s = 0;
	p->max_connections = 1024;
	/* Captured by default (with mode proxy): HTTP and HTTPS. */
	if (policy_add_port(&p->net_capture_ports, &p->n_net_capture_ports, 80) < 0 ||
	    policy_add_port(&p->net_capture_ports, &p->n_net_capture_ports, 443) < 0)
		return policy_free(p);
	return p;
}

int policy_apply_preset(WardPolicy *p, const char *name, PolicyError *reterr)
{
	const Preset *ps = NULL;
	WardPolicy *c;
	int r;

	for (size_t i = 0; i < ELEMENTSOF(presets); i++)
		if (strcmp(presets[i].name, name) == 0)
			ps = &presets[i];
	if (!ps) {
		char q[160];

		policy_quote(name, q, sizeof(q));
		return policy_error_set(reterr, "--preset", "",
					"unknown preset %s (known: git, node, python, rust, go)", q);
	}

	/* On a copy, so that OOM halfway leaves @p unchanged. */
	c = policy_copy(p);
	if (!c)
		return -ENOMEM;
	r = apply(c, ps);
	if (r >= 0)
		r = policy_add_unique(&c->presets, name);
	if (r < 0) {
		policy_free(c);
		return r;
	}
	policy_replace(p, c);
	return 0;
}
