/* Policy parser, merger and presets (finalize, JSON, hash and load are in
 * test-policy-finalize.c). Every
 * tests/data/policies/invalid-*.json has an entry in invalid_cases[] with the
 * JSON path and message it must produce; a file without one fails. */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "policy/policy.h"

#define POLICIES TEST_DATA_DIR "/policies"

static const PolicyContext ctx = { .home = "/home/u", .workspace = "/home/u/proj" };

typedef struct InvalidCase {
	const char *file;
	const char *path;
	const char *msg; /* substring of PolicyError.msg */
} InvalidCase;

/* clang-format off */
static const InvalidCase invalid_cases[] = {
	{ "invalid-relative-read.json", "fs.read[2]",
	  "expected an absolute path or one starting with \"~/\", got \"foo\"" },
	{ "invalid-unknown-key.json", "fs.reed", "unknown key (expected one of: read, read_exec" },
	{ "invalid-unknown-top.json", "filesystem", "unknown key" },
	{ "invalid-list-type.json", "fs.read", "expected an array of strings, got \"/etc\"" },
	{ "invalid-elem-type.json", "fs.read_write[1]", "expected a string, got 3" },
	{ "invalid-wildcard.json", "fs.deny[1]",
	  "wildcard patterns are not supported yet because they cannot be enforced for files "
	  "created during the run, got \"~/**/.env\"" },
	{ "invalid-wildcard-question.json", "fs.read_exec[0]", "wildcard patterns are not supported" },
	{ "invalid-wildcard-bracket.json", "fs.protected[1]", "wildcard patterns are not supported" },
	{ "invalid-protected-absolute.json", "fs.protected[0]",
	  "expected a path relative to the workspace, got \"/work/.git\"" },
	{ "invalid-protected-escape.json", "fs.protected[0]", "expected a path inside the workspace" },
	{ "invalid-protected-dot.json", "fs.protected[0]", "not the workspace itself" },
	{ "invalid-tilde-user.json", "fs.read[0]", "expected an absolute path or one starting with \"~/\"" },
	{ "invalid-empty-path.json", "fs.deny[0]", "got \"\"" },
	{ "invalid-preset.json", "presets[1]",
	  "unknown preset \"ruby\" (known: git, node, python, rust, go)" },
	{ "invalid-presets-type.json", "presets", "expected an array of strings" },
	{ "invalid-version.json", "version", "unsupported version 2" },
	{ "invalid-version-type.json", "version", "expected the number 1, got \"1\"" },
	{ "invalid-net-mode.json", "network.mode", "expected \"none\" or \"proxy\", got \"open\"" },
	{ "invalid-host-url.json", "network.allow[1]", "expected a host pattern" },
	{ "invalid-host-ipv6-bare.json", "network.deny[0]", "must be written in brackets" },
	{ "invalid-host-port.json", "network.allow[0]", "port must be a number from 1 to 65535" },
	{ "invalid-host-wildcard-middle.json", "network.allow[0]", "\"*\" is allowed only as a whole first label" },
	{ "invalid-host-ipv4.json", "network.allow[0]", "not a valid IPv4 address" },
	{ "invalid-host-ipv6-bracket.json", "network.allow[0]", "not an IPv6 address" },
	{ "invalid-command-host.json", "network.commands.git[1]", "got \"*\"" },
	{ "invalid-command-name.json", "network.commands./usr/bin/git", "expected a program name" },
	{ "invalid-command-type.json", "network.commands.git", "expected an array of host patterns" },
	{ "invalid-hosts-address.json", "network.hosts.example.com", "expected an IP address" },
	{ "invalid-hosts-name.json", "network.hosts.*.example.com", "expected a host name" },
	{ "invalid-local-port.json", "network.local_ports[1]", "expected an integer from 0 to 65535, got -1" },
	{ "invalid-host-ports.json", "network.host_ports[1]", "expected an integer from 1 to 65535, got 0" },
	{ "invalid-allow-localhost.json", "network.allow[1]", "use network.host_ports (--allow-host-port PORT)" },
	{ "invalid-allow-scheme.json", "network.allow[0]", "a URL scheme (\"http://\", \"https://\") is not allowed" },
	{ "invalid-command-loopback.json", "network.commands.psql[0]", "a loopback address, which inside the sandbox is the sandbox's own" },
	{ "invalid-local-port-big.json", "network.local_ports[0]", "got 65536" },
	{ "invalid-max-connections.json", "network.max_connections", "expected an integer from 1 to 65536" },
	{ "invalid-env-set-type.json", "env.set.FOO", "expected a string, got 1" },
	{ "invalid-env-set-name.json", "env.set.BAD-NAME", "expected a variable name" },
	{ "invalid-env-pass.json", "env.pass[1]", "or a prefix ending in \"*\"" },
	{ "invalid-env-strip.json", "env.strip[0]", "expected a variable name pattern" },
	{ "invalid-limit-zero.json", "limits.pids", "expected an integer from 1 to 4194304, got 0" },
	{ "invalid-limit-negative.json", "limits.timeout_s", "got -5" },
	{ "invalid-limit-fraction.json", "limits.memory_mb", "got 1.5" },
	{ "invalid-limit-absurd.json", "limits.timeout_s", "expected an integer from 1 to 2592000" },
	{ "invalid-limit-type.json", "limits.tmp_mb", "got \"1024\"" },
	{ "invalid-nofile-low.json", "limits.nofile", "from 16 to" },
	{ "invalid-limit-cpu.json", "limits.cpu_percent", "expected an integer from 1 to 102400, got 0" },
	{ "invalid-limit-io.json", "limits.io_weight", "expected an integer from 1 to 10000, got 10001" },
	{ "invalid-limit-inotify.json", "limits.inotify_instances", "got \"32\"" },
	{ "invalid-sandbox-type.json", "sandbox.allow_ptrace", "expected true or false, got \"yes\"" },
	{ "invalid-git-mode.json", "git", "expected \"read-only\", \"commit\" or \"off\", got \"write\"" },
	{ "invalid-git-type.json", "git", "got true" },
	{ "invalid-duplicate-key.json", "fs.read", "duplicate key" },
	{ "invalid-syntax.json", "", "invalid JSON at line 3, column 19" },
	{ "invalid-not-object.json", "", "expected a JSON object, got an array" },
	{ "invalid-trailing.json", "", "invalid JSON at line 1, column 4" },
	{ "invalid-empty.json", "", "invalid JSON at line 1, column 1" },
	{ "invalid-fs-type.json", "fs", "expected an object, got an array" },
};
/* clang-format on */

static WardPolicy *load_file(const char *name)
{
	char path[1024];
	PolicyError e = { 0 };
	WardPolicy *p = policy_new_defaults();

	assert_non_null(p);
	snprintf(path, sizeof(path), "%s/%s", POLICIES, name);
	if (policy_merge_file(p, path, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
	return p;
}

static WardPolicy *merge_text(WardPolicy *p, const char *text)
{
	PolicyError e = { 0 };

	if (policy_merge_json(p, "t.json", text, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
	return p;
}

static void finalize_ok(WardPolicy *p)
{
	PolicyError e = { 0 };

	if (policy_finalize(p, &ctx, &e) < 0)
		fail_msg("%s: %s: %s", e.file, e.path, e.msg);
}

static void test_policy_invalid_files(void **state)
{
	for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++) {
		const InvalidCase *c = &invalid_cases[i];
		char path[1024];
		PolicyError e = { 0 };
		WardPolicy *p = policy_new_defaults();
		_cleanup_free_ char *before = policy_to_json(p), *after = NULL;

		snprintf(path, sizeof(path), "%s/%s", POLICIES, c->file);
		if (policy_merge_file(p, path, &e) != -EINVAL)
			fail_msg("%s: accepted", c->file);
		if (strcmp(e.file, path) != 0 || strcmp(e.path, c->path) != 0 ||
		    !strstr(e.msg, c->msg))
			fail_msg("%s: got %s: '%s': %s; want path '%s' and '%s'", c->file, e.file,
				 e.path, e.msg, c->path, c->msg);
		/* On error the policy is unchanged. */
		after = policy_to_json(p);
		assert_string_equal(before, after);
		policy_free(p);
	}
}

/* Every invalid-*.json has an expectation; every valid-*.json loads. */
static void test_policy_data_dir_complete(void **state)
{
	_cleanup_closedir_ DIR *d = opendir(POLICIES);
	struct dirent *de;
	int n_valid = 0, n_invalid = 0;

	assert_non_null(d);
	while ((de = readdir(d))) {
		if (strncmp(de->d_name, "invalid-", 8) == 0) {
			bool found = false;
			for (size_t i = 0; i < sizeof(invalid_cases) / sizeof(invalid_cases[0]); i++)
				if (strcmp(invalid_cases[i].file, de->d_name) == 0)
					found = true;
			if (!found)
				fail_msg("%s has no expected error in invalid_cases[]", de->d_name);
			n_invalid++;
		} else if (strncmp(de->d_name, "valid-", 6) == 0) {
			WardPolicy *p = load_file(de->d_name);
			finalize_ok(p);
			policy_free(p);
			n_valid++;
		}
	}
	assert_true(n_valid >= 5);
	assert_int_equal((size_t)n_invalid, sizeof(invalid_cases) / sizeof(invalid_cases[0]));
}

static void test_policy_error_format(void **state)
{
	PolicyError e = { .file = "/path/p.json", .path = "fs.read[2]",
			  .msg = "expected an absolute path or one starting with \"~/\", got \"foo\"" };
	char buf[1400];

	policy_error_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "/path/p.json: fs.read[2]: expected an absolute path or one "
				 "starting with \"~/\", got \"foo\"");
	e.path[0] = '\0';
	policy_error_format(&e, buf, sizeof(buf));
	assert_string_equal(buf, "/path/p.json: expected an absolute path or one starting with "
				 "\"~/\", got \"foo\"");
}

static void test_policy_defaults(void **state)
{
	WardPolicy *p = policy_new_defaults();

	assert_true(strv_contains(p->fs_read_exec, "/usr"));
	assert_true(strv_contains(p->fs_read_exec, "/lib64"));
	assert_true(strv_contains(p->fs_read_exec, "/opt"));
	assert_true(strv_contains(p->fs_read, "/etc"));
	assert_false(strv_contains(p->fs_read_exec, "/etc"));
	assert_true(strv_contains(p->fs_deny, "/etc/shadow"));
	assert_true(strv_contains(p->fs_deny, "/etc/gshadow"));
	assert_true(strv_contains(p->fs_deny, "/etc/sudoers.d"));
	assert_true(strv_contains(p->fs_deny, "/etc/ssh/ssh_host_ed25519_key"));
	assert_true(strv_contains(p->fs_deny, "/etc/ssh/ssh_host_rsa_key"));
	assert_false(strv_contains(p->fs_deny, "/etc/ssh"));
	assert_true(strv_contains(p->fs_protected, ".git"));
	assert_true(strv_contains(p->fs_protected, ".agents"));
	/* The agent and editor configurations that run commands (issue 19). */
	assert_true(strv_contains(p->fs_protected, ".claude"));
	assert_true(strv_contains(p->fs_protected, ".mcp.json"));
	assert_true(strv_contains(p->fs_protected, ".gemini"));
	assert_true(strv_contains(p->fs_protected, ".vscode"));
	assert_true(strv_contains(p->fs_protected, ".gitmodules"));
	assert_int_equal(strv_length(p->fs_protected), 25);
	assert_int_equal(p->net_mode, NET_MODE_NONE);
	assert_true(strv_contains(p->env_pass, "LC_*"));
	assert_true(strv_contains(p->env_pass, "PATH"));
	assert_true(strv_contains(p->env_strip, "*_TOKEN"));
	assert_true(strv_contains(p->env_strip, "SSH_AUTH_SOCK"));
	assert_true(strv_contains(p->env_strip, "AWS_*"));
	assert_int_equal(p->pids, 4096);
	assert_int_equal(p->tmp_mb, 1024);
	assert_int_equal(p->nofile, 8192);
	assert_int_equal(p->memory_mb, 0);
	assert_int_equal(p->timeout_s, 0);
	assert_int_equal(p->max_connections, 1024);
	assert_int_equal(p->n_net_local_ports, 0);
	assert_false(p->allow_ptrace);
	assert_false(p->allow_nested_sandbox);
	policy_free(p);
}

static void test_policy_parse_full(void **state)
{
	WardPolicy *p = load_file("valid-full.json");

	assert_true(strv_contains(p->presets, "git"));
	assert_true(strv_contains(p->presets, "node"));
	assert_true(strv_contains(p->fs_read, "~/.config/mytool"));
	assert_true(strv_contains(p->fs_read, "~/.gitconfig"));
	assert_true(strv_contains(p->fs_cache, "~/.npm")); /* node's caches: copy-on-write */
	assert_true(strv_contains(p->fs_sanitize, "~/.npmrc"));
	assert_true(strv_contains(p->fs_protected, "secrets/keys"));
	assert_true(strv_contains(p->fs_protected, ".env")); /* normalized */
	assert_true(strv_contains(p->net_allow, "registry.example.org:443"));
	assert_int_equal(p->n_net_commands, 1);
	assert_string_equal(p->net_commands[0].name, "git");
	assert_string_equal(p->net_commands[0].allow[0], "github.com");
	assert_true(strv_contains(p->env_set, "CI=1"));
	assert_true(strv_contains(p->env_set, "MY_TOOL_MODE=sandboxed"));
	assert_true(strv_contains(p->env_strip, "INTERNAL_*"));
	assert_int_equal(p->timeout_s, 600);
	assert_int_equal(p->memory_mb, 4096);
	assert_int_equal(p->pids, 2048);
	assert_int_equal(p->tmp_mb, 512);
	assert_int_equal(p->nofile, 4096);
	assert_int_equal(p->shm_mb, 32);
	assert_int_equal(p->inotify_instances, 16);
	assert_int_equal(p->inotify_watches, 1000);
	assert_int_equal(p->sigpending, 100);
	assert_int_equal(p->msgqueue_kb, 64);
	assert_int_equal(p->cpu_percent, 150);
	assert_int_equal(p->io_weight, 50);
	assert_true(p->allow_ptrace);
	assert_int_equal(p->git_mode, GIT_MODE_COMMIT);
	assert_int_equal(strv_length(p->sources), 1);
	assert_non_null(strstr(p->sources[0], "/valid-full.json"));
	assert_true(p->sources[0][0] == '/');
	policy_free(p);
}

static void test_policy_parse_network(void **state)
{
	WardPolicy *p = load_file("valid-network-proxy.json");

	assert_int_equal(p->net_mode, NET_MODE_PROXY);
	assert_true(strv_contains(p->net_allow, "github.com")); /* lowercased */
	assert_false(strv_contains(p->net_allow, "GitHub.com"));
	assert_true(strv_contains(p->net_allow, "[2001:db8::2]:443"));
	assert_true(strv_contains(p->net_deny, "169.254.169.254"));
	assert_int_equal(p->n_net_commands, 2);
	assert_string_equal(p->net_commands[1].name, "curl");
	assert_int_equal(strv_length(p->net_commands[1].allow), 0);
	assert_int_equal(strv_length(p->net_commands[0].allow), 2);
	assert_int_equal(p->n_net_hosts, 2);
	assert_string_equal(p->net_hosts[0].name, "internal.example");
	assert_string_equal(p->net_hosts[0].address, "10.0.0.5");
	assert_int_equal(p->n_net_local_ports, 3); /* 3000 deduplicated */
	assert_int_equal(p->net_local_ports[0], 3000);
	assert_int_equal(p->net_local_ports[1], 8080);
	assert_int_equal(p->net_local_ports[2], 0); /* an ephemeral bind */
	assert_int_equal(p->n_net_host_ports, 2);
	assert_int_equal(p->net_host_ports[0], 5432);
	assert_int_equal(p->net_host_ports[1], 6379);
	assert_int_equal(p->max_connections, 64);
	policy_free(p);
}

static void test_policy_merge_order_dedupe(void **state)
{
	WardPolicy *p = policy_new_defaults();
	size_t n = strv_length(p->fs_read);

	merge_text(p, "{\"fs\":{\"read\":[\"/a\",\"/etc\",\"/a\"]},\"limits\":{\"pids\":10}}");
	merge_text(p, "{\"fs\":{\"read\":[\"/b\",\"/a\"]},\"limits\":{\"pids\":20}}");
	assert_int_equal(strv_length(p->fs_read), n + 2);
	assert_string_equal(p->fs_read[n], "/a");
	assert_string_equal(p->fs_read[n + 1], "/b");
	assert_int_equal(p->pids, 20); /* scalars replace */
	assert_int_equal(p->tmp_mb, 1024); /* untouched */
	assert_int_equal(strv_length(p->sources), 1); /* same name twice */
	/* Pseudo-names are not files: not recorded as sources. */
	merge_text(p, "{}");
	{
		PolicyError e = { 0 };
		assert_int_equal(policy_merge_json(p, "<command line>", "{}", &e), 0);
	}
	assert_int_equal(strv_length(p->sources), 1);
	assert_string_equal(p->sources[0], "t.json");
	policy_free(p);
}

static void test_policy_merge_objects_by_key(void **state)
{
	WardPolicy *p = policy_new_empty();

	merge_text(p, "{\"env\":{\"set\":{\"A\":\"1\",\"B\":\"2\"}},"
		      "\"network\":{\"commands\":{\"git\":[\"github.com\"]},"
		      "\"hosts\":{\"x.example\":\"10.0.0.1\"}}}");
	merge_text(p, "{\"env\":{\"set\":{\"A\":\"3\"}},"
		      "\"network\":{\"commands\":{\"git\":[\"gitlab.com\",\"github.com\"],"
		      "\"npm\":[\"registry.npmjs.org\"]},\"hosts\":{\"x.example\":\"10.0.0.2\"}}}");
	assert_int_equal(strv_length(p->env_set), 2);
	assert_string_equal(p->env_set[0], "A=3");
	assert_string_equal(p->env_set[1], "B=2");
	assert_int_equal(p->n_net_commands, 2);
	assert_int_equal(strv_length(p->net_commands[0].allow), 2);
	assert_string_equal(p->net_commands[0].allow[1], "gitlab.com");
	assert_int_equal(p->n_net_hosts, 1);
	assert_string_equal(p->net_hosts[0].address, "10.0.0.2");
	policy_free(p);
}

static void test_policy_presets_at_their_place(void **state)
{
	WardPolicy *p = policy_new_empty();

	merge_text(p, "{\"fs\":{\"read\":[\"/x\"]},\"presets\":[\"git\"],"
		      "\"network\":{\"mode\":\"proxy\"}}");
	assert_string_equal(p->fs_read[0], "/x");
	assert_string_equal(p->fs_read[1], "~/.gitconfig");
	assert_int_equal(p->net_mode, NET_MODE_PROXY);
	policy_free(p);
}

static void test_policy_presets_paths(void **state)
{
	static const struct {
		const char *preset;
		int list; /* 0 read, 1 read_exec, 2 cache, 3 deny, 4 env_pass, 5 sanitize */
		const char *entry;
	} want[] = {
		{ "git", 0, "~/.gitconfig" },	      { "git", 0, "~/.config/git/config" },
		{ "git", 3, "~/.config/git/credentials" },
		{ "git", 5, "~/.gitconfig" },	      { "git", 5, "~/.config/git/config" },
		{ "node", 0, "~/.npmrc" },	      { "node", 2, "~/.npm" },
		{ "node", 5, "~/.npmrc" },
		{ "node", 2, "~/.cache/yarn" },	      { "node", 2, "~/.pnpm-store" },
		{ "node", 2, "~/.cache/pnpm" },	      { "node", 2, "~/.local/share/pnpm/store" },
		{ "node", 1, "/usr/local/lib/node_modules" },
		{ "python", 0, "~/.config/pip/pip.conf" }, { "python", 0, "~/.pip/pip.conf" },
		{ "python", 5, "~/.config/pip/pip.conf" }, { "python", 5, "~/.pip/pip.conf" },
		{ "python", 2, "~/.cache/pip" },      { "python", 2, "~/.cache/pypoetry" },
		{ "python", 2, "~/.cache/uv" },	      { "rust", 0, "~/.cargo/config.toml" },
		{ "rust", 0, "~/.cargo/config" },     { "rust", 1, "~/.rustup" },
		{ "rust", 5, "~/.cargo/config.toml" }, { "rust", 5, "~/.cargo/config" },
		{ "rust", 1, "~/.cargo/bin" },	      { "rust", 2, "~/.cargo/registry" },
		{ "rust", 2, "~/.cargo/git" },	      { "rust", 4, "CARGO_HOME" },
		{ "go", 0, "~/.config/go/env" },	      { "go", 2, "~/.cache/go-build" },
		{ "go", 5, "~/.config/go/env" },
		{ "go", 2, "~/go/pkg/mod" },	      { "go", 4, "GOPATH" },
	};
	const char *const *names = policy_preset_names();
	size_t n = 0;

	while (names[n])
		n++;
	assert_int_equal(n, 5);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		WardPolicy *p = policy_new_empty();
		PolicyError e = { 0 };
		char **lists[6];

		assert_int_equal(policy_apply_preset(p, want[i].preset, &e), 0);
		lists[0] = p->fs_read;
		lists[1] = p->fs_read_exec;
		lists[2] = p->fs_cache;
		lists[3] = p->fs_deny;
		lists[4] = p->env_pass;
		lists[5] = p->fs_sanitize;
		/* No preset makes a host path writable (issue 19): caches are
		 * copy-on-write, and PNPM_HOME is not opened at all. */
		assert_null(p->fs_read_write);
		STRV_FOREACH(c, p->fs_cache)
			assert_string_not_equal(*c, "~/.local/share/pnpm");
		if (!strv_contains(lists[want[i].list], want[i].entry))
			fail_msg("preset %s lacks %s", want[i].preset, want[i].entry);
		assert_true(strv_contains(p->presets, want[i].preset));
		/* No preset opens $HOME itself or reads credentials. */
		for (int l = 0; l < 3; l++)
			STRV_FOREACH(s, lists[l]) {
				assert_string_not_equal(*s, "~");
				assert_null(strstr(*s, "credentials"));
			}
		policy_free(p);
	}
}

static void test_policy_preset_unknown(void **state)
{
	WardPolicy *p = policy_new_defaults();
	_cleanup_free_ char *before = policy_to_json(p), *after = NULL;
	PolicyError e = { 0 };

	assert_int_equal(policy_apply_preset(p, "ruby", &e), -EINVAL);
	assert_string_equal(e.file, "--preset");
	assert_non_null(strstr(e.msg, "unknown preset \"ruby\""));
	after = policy_to_json(p);
	assert_string_equal(before, after);
	policy_free(p);

	char *flags[] = { "git", "nope", NULL };
	assert_int_equal(policy_load("/nonexistent", flags, &p, &e), -EINVAL);
	assert_non_null(strstr(e.msg, "\"nope\""));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_policy_invalid_files),
		cmocka_unit_test(test_policy_data_dir_complete),
		cmocka_unit_test(test_policy_error_format),
		cmocka_unit_test(test_policy_defaults),
		cmocka_unit_test(test_policy_parse_full),
		cmocka_unit_test(test_policy_parse_network),
		cmocka_unit_test(test_policy_merge_order_dedupe),
		cmocka_unit_test(test_policy_merge_objects_by_key),
		cmocka_unit_test(test_policy_presets_at_their_place),
		cmocka_unit_test(test_policy_presets_paths),
		cmocka_unit_test(test_policy_preset_unknown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
