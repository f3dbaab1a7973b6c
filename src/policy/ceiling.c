/* Reading the managed ceiling: where it is, who may have written it, its
 * digest and its keys. The narrowing rules are in ceiling-check.c. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/json-util.h"
#include "windows/win-sha256.h"
#include "common/strv.h"
#include "config.h"
#include "policy/ceiling-internal.h"
#include "policy/policy-internal.h"

#define CEILING_MAX_SIZE (1024 * 1024)

Ceiling *ceiling_free(Ceiling *c)
{
	if (!c)
		return NULL;
	free(c->file);
	free(c->audit_stream);
	cJSON_Delete(c->doc);
	policy_free(c->pol);
	policy_free(c->bound);
	strv_free(c->rd);
	strv_free(c->rx);
	strv_free(c->rw);
	strv_free(c->presets);
	strv_free(c->applied);
	free(c);
	return NULL;
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Ceiling *, ceiling_free)

const char *ceiling_file(const Ceiling *c)
{
	return c ? c->file : NULL;
}

const char *ceiling_digest(const Ceiling *c)
{
	return c ? c->digest : NULL;
}

static bool has(const cJSON *doc, const char *section, const char *key)
{
	const cJSON *s = section ? cJSON_GetObjectItemCaseSensitive(doc, section) : doc;

	return s && cJSON_GetObjectItemCaseSensitive(s, key);
}

/* Keys of the policy format that are no bound: a ceiling names what may
 * be allowed, and these only say what to do. */
static const struct {
	const char *section, *key, *why;
} not_bounds[] = {
	{ NULL, "tier", "name the tiers a run may use with \"allowed_tiers\"" },
	{ NULL, "presets", "name the presets a run may use with \"allowed_presets\"" },
	{ "fs", "cache", "not a bound: copy-on-write caches are readable paths (fs.read)" },
	{ "fs", "sanitize", "not a bound: sanitized files are readable paths (fs.read)" },
	{ "env", "pass", "not a bound" },
	{ "env", "set", "not a bound" },
	{ "network", "credentials", "not a bound" },
	{ "network", "requests", "not a bound" },
	{ "network", "inspect", "not a bound" },
	{ "network", "capture", "not a bound" },
	{ "network", "capture_ports", "not a bound" },
	{ "network", "local_ports", "not a bound" },
};

/* fs lists of a ceiling have no workspace to be relative to. */
static int check_fs_paths(const char *name, const cJSON *doc, PolicyError *e)
{
	static const char *const keys[] = { "read", "read_exec", "read_write", "deny" };
	const cJSON *fs = cJSON_GetObjectItemCaseSensitive(doc, "fs");

	for (size_t k = 0; fs && k < ELEMENTSOF(keys); k++) {
		const cJSON *l = cJSON_GetObjectItemCaseSensitive(fs, keys[k]), *it;
		int i = 0;

		cJSON_ArrayForEach(it, l)
		{
			char p[64];

			snprintf(p, sizeof(p), "fs.%s[%d]", keys[k], i++);
			if (cJSON_IsString(it) && it->valuestring[0] != '/' &&
			    strncmp(it->valuestring, "~/", 2) != 0 && strcmp(it->valuestring, "~") != 0)
				return policy_error_set(e, name, p,
							"expected an absolute path or one starting "
							"with \"~/\" (a ceiling has no workspace)");
		}
	}
	return 0;
}

static int take_tiers(Ceiling *c, const char *name, cJSON *v, PolicyError *e)
{
	const cJSON *it;

	if (!cJSON_IsArray(v))
		return policy_error_set(e, name, "allowed_tiers", "expected an array of tiers (0, 1, 2)");
	cJSON_ArrayForEach(it, v)
	{
		if (!cJSON_IsNumber(it) || (it->valuedouble != 0 && it->valuedouble != 1 &&
					    it->valuedouble != 2 && it->valuedouble != 3))
			return policy_error_set(e, name, "allowed_tiers",
						"expected an array of tiers (0, 1, 2, 3)");
		if (c->n_tiers < ELEMENTSOF(c->tiers))
			c->tiers[c->n_tiers++] = (int)it->valuedouble;
	}
	if (c->n_tiers == 0)
		return policy_error_set(e, name, "allowed_tiers", "no tier allowed: every run would be refused");
	c->has_tiers = true;
	return 0;
}

static int take_presets(Ceiling *c, const char *name, cJSON *v, PolicyError *e)
{
	const cJSON *it;

	if (!cJSON_IsArray(v))
		return policy_error_set(e, name, "allowed_presets", "expected an array of preset names");
	cJSON_ArrayForEach(it, v)
	{
		bool known = false;

		if (!cJSON_IsString(it))
			return policy_error_set(e, name, "allowed_presets", "expected an array of preset names");
		for (const char *const *n = policy_preset_names(); *n; n++)
			known = known || strcmp(*n, it->valuestring) == 0;
		if (!known)
			return policy_error_set(e, name, "allowed_presets", "unknown preset \"%.64s\"",
						it->valuestring);
		if (strv_extend(&c->presets, it->valuestring) < 0)
			return -ENOMEM;
	}
	c->has_presets = true;
	return 0;
}

bool audit_stream_valid(const char *s)
{
	return s && (strcmp(s, "stdout") == 0 || strcmp(s, "stderr") == 0 || s[0] == '/');
}

const char *ceiling_audit_stream(const Ceiling *c)
{
	return c ? c->audit_stream : NULL;
}

int ceiling_parse(const char *name, const char *text, Ceiling **ret, PolicyError *e)
{
	_cleanup_(ceiling_freep) Ceiling *c = calloc(1, sizeof(Ceiling));
	_cleanup_cjson_ cJSON *rest = NULL;
	_cleanup_free_ char *rest_text = NULL;
	cJSON *v;
	int r;

	if (!c || !(c->file = strdup(name)))
		return -ENOMEM;
	c->doc = cJSON_Parse(text);
	if (!c->doc || !cJSON_IsObject(c->doc))
		return policy_error_set(e, name, "", "not a JSON object");
	for (size_t i = 0; i < ELEMENTSOF(not_bounds); i++)
		if (has(c->doc, not_bounds[i].section, not_bounds[i].key))
			return policy_error_set(e, name, "", "%s%s%s: %s",
						not_bounds[i].section ? not_bounds[i].section : "",
						not_bounds[i].section ? "." : "", not_bounds[i].key,
						not_bounds[i].why);
	if ((r = check_fs_paths(name, c->doc, e)) < 0)
		return r;

	/* The ceiling's own keys come out; the rest is the policy format. */
	rest = cJSON_Duplicate(c->doc, true);
	if (!rest)
		return -ENOMEM;
	if ((v = cJSON_GetObjectItemCaseSensitive(rest, "allowed_tiers")) &&
	    (r = take_tiers(c, name, v, e)) < 0)
		return r;
	if ((v = cJSON_GetObjectItemCaseSensitive(rest, "allowed_presets")) &&
	    (r = take_presets(c, name, v, e)) < 0)
		return r;
	if ((v = cJSON_GetObjectItemCaseSensitive(rest, "require_cow"))) {
		if (!cJSON_IsBool(v))
			return policy_error_set(e, name, "require_cow", "expected true or false");
		c->require_cow = cJSON_IsTrue(v);
	}
	if ((v = cJSON_GetObjectItemCaseSensitive(rest, "audit"))) {
		const cJSON *s = cJSON_GetObjectItemCaseSensitive(v, "stream");

		if (!cJSON_IsObject(v) || !cJSON_IsString(s) || cJSON_GetArraySize(v) != 1 ||
		    !audit_stream_valid(s->valuestring))
			return policy_error_set(e, name, "audit",
						"expected {\"stream\": \"stdout\", \"stderr\" or an "
						"absolute path}");
		if (!(c->audit_stream = strdup(s->valuestring)))
			return -ENOMEM;
	}
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "audit");
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "allowed_tiers");
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "allowed_presets");
	cJSON_DeleteItemFromObjectCaseSensitive(rest, "require_cow");
	rest_text = cJSON_PrintUnformatted(rest);
	c->pol = policy_new_empty();
	if (!rest_text || !c->pol)
		return -ENOMEM;
	if ((r = policy_merge_json_as(c->pol, name, NULL, rest_text, e)) < 0)
		return r;

	c->has_read = has(c->doc, "fs", "read");
	c->has_read_exec = has(c->doc, "fs", "read_exec");
	c->has_read_write = has(c->doc, "fs", "read_write");
	c->has_net_mode = has(c->doc, "network", "mode");
	c->has_net_allow = has(c->doc, "network", "allow") || has(c->doc, "network", "commands");
	c->has_host_ports = has(c->doc, "network", "host_ports");
	c->has_hosts = has(c->doc, "network", "hosts");
	c->has_upstream_ca = has(c->doc, "network", "upstream_ca");
	c->has_git = has(c->doc, NULL, "git");
	c->has_nested = has(c->doc, "sandbox", "allow_nested_sandbox");
	c->has_ptrace = has(c->doc, "sandbox", "allow_ptrace");
	*ret = TAKE_PTR(c);
	return 0;
}

/* Is @uid outside this process's user namespace (no line of
 * /proc/self/uid_map maps it)? A file shows the overflow uid (65534) when
 * its owner is not mapped here: the host's root as a pod with hostUsers:
 * false sees it, or the real root in a namespace of `unshare -U`. No
 * process in this namespace can be that owner. Where 65534 is mapped (no
 * user namespace: the identity map) it is the user nobody, and refused. */
static bool uid_unmapped(uid_t uid)
{
	_cleanup_fclose_ FILE *f = fopen("/proc/self/uid_map", "re");
	unsigned long inside, outside, count;

	if (!f)
		return false;
	while (fscanf(f, "%lu %lu %lu", &inside, &outside, &count) == 3)
		if (uid >= inside && uid - inside < count)
			return false;
	return true;
}

/* Only root (or an owner outside this user namespace) may have written
 * @st (a directory on the way, or the file). */
static int root_only(const char *file, const char *what, const char *path, const struct stat *st,
		     PolicyError *e)
{
	if (st->st_uid != 0 && !uid_unmapped(st->st_uid))
		return policy_error_set(e, file, "",
					"refusing the managed policy: %s '%s' is owned by uid %u, "
					"not root",
					what, path, (unsigned)st->st_uid);
	if ((st->st_mode & 0022) && !S_ISLNK(st->st_mode))
		return policy_error_set(e, file, "",
					"refusing the managed policy: %s '%s' is writable by %s "
					"(mode %04o)",
					what, path, (st->st_mode & 0020) ? "its group" : "others",
					(unsigned)(st->st_mode & 07777));
	return 0;
}

/* Walk @path from "/" with O_PATH|O_NOFOLLOW, checking each directory and
 * following a symlink (Kubernetes mounts a ConfigMap through two) only
 * after its own directory passed; returns an fd of the file, opened for
 * reading. Every directory a name is looked up in is root's alone, so
 * nobody else could have put anything on the way. */
static int open_root_only(const char *file, PolicyError *e)
{
	_cleanup_free_ char *todo = NULL;
	_cleanup_close_ int dir = -EBADF;
	char cur[PATH_MAX] = "";
	unsigned links = 0;
	struct stat st;
	int r;

	if (file[0] != '/')
		return policy_error_set(e, file, "", "the managed policy must be an absolute path");
	todo = strdup(file + 1);
	if (!todo)
		return -ENOMEM;
	dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (dir < 0)
		return -errno;
	for (;;) {
		_cleanup_free_ char *rest = NULL;
		char *slash, *name = todo;
		int fd;

		if (fstat(dir, &st) < 0)
			return -errno;
		if ((r = root_only(file, "the directory", cur[0] ? cur : "/", &st, e)) < 0)
			return -EPERM;
		while (*name == '/')
			name++;
		slash = strchr(name, '/');
		if (slash) {
			*slash = '\0';
			if (!(rest = strdup(slash + 1)))
				return -ENOMEM;
		}
		if (!*name) { /* a trailing slash */
			return policy_error_set(e, file, "", "not a regular file");
		}
		if (strcmp(name, "..") == 0 || strcmp(name, ".") == 0)
			return policy_error_set(e, file, "", "'.' and '..' are not allowed in its path");
		fd = openat(dir, name, O_PATH | O_NOFOLLOW | O_CLOEXEC);
		/* No file: no ceiling. But a symlink root made that leads
		 * nowhere (a ConfigMap being replaced, a removed target) is a
		 * ceiling that should be there: refused, not ignored. */
		if (fd < 0 && errno == ENOENT && links > 0)
			return policy_error_set(e, file, "",
						"refusing to run: the managed policy is a symlink to "
						"'%s', which does not exist",
						name);
		if (fd < 0)
			return -errno;
		if (fstat(fd, &st) < 0) {
			r = -errno;
			(void)close(fd);
			return r;
		}
		if (S_ISLNK(st.st_mode)) {
			char target[PATH_MAX];
			ssize_t n = readlinkat(fd, "", target, sizeof(target) - 1);
			_cleanup_free_ char *next = NULL;

			(void)close(fd);
			if (n < 0 || ++links > 32)
				return policy_error_set(e, file, "", "too many symlinks on its path");
			target[n] = '\0';
			if (asprintf(&next, "%s%s%s", target, rest ? "/" : "", rest ? rest : "") < 0)
				return -ENOMEM;
			if (target[0] == '/') {
				(void)close(dir);
				dir = open("/", O_PATH | O_DIRECTORY | O_CLOEXEC);
				if (dir < 0)
					return -errno;
				cur[0] = '\0';
			}
			free(todo);
			todo = TAKE_PTR(next);
			continue;
		}
		snprintf(cur + strlen(cur), sizeof(cur) - strlen(cur), "/%s", name);
		if (!rest) {
			_cleanup_close_ int pfd = fd;
			char proc[64];

			if (!S_ISREG(st.st_mode))
				return policy_error_set(e, file, "", "not a regular file");
			if ((r = root_only(file, "the file", cur, &st, e)) < 0)
				return -EPERM;
			snprintf(proc, sizeof(proc), "/proc/self/fd/%d", pfd);
			r = open(proc, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
			return r < 0 ? -errno : r;
		}
		(void)close(dir);
		dir = fd;
		free(todo);
		todo = TAKE_PTR(rest);
	}
}

int ceiling_load(const char *path, Ceiling **ret, PolicyError *e)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	uint8_t md[32];
	Ceiling *c = NULL;
	size_t n = 0;
	int r;

	fd = open_root_only(path, e);
	if (fd == -ENOENT)
		return -ENOENT;
	if (fd == -EPERM || fd == -EINVAL)
		return -EPERM;
	if (fd < 0)
		return policy_error_set(e, path, "", "cannot open the managed policy: %s",
					strerror(-fd)),
		       -EPERM;
	buf = malloc(CEILING_MAX_SIZE + 1);
	if (!buf)
		return -ENOMEM;
	for (;;) {
		ssize_t k = read(fd, buf + n, CEILING_MAX_SIZE + 1 - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return policy_error_set(e, path, "", "cannot read: %s", strerror(errno)), -EPERM;
		if (k == 0)
			break;
		n += (size_t)k;
		if (n > CEILING_MAX_SIZE)
			return policy_error_set(e, path, "", "larger than %d bytes", CEILING_MAX_SIZE),
			       -EPERM;
	}
	buf[n] = '\0';
	if (strlen(buf) != n)
		return policy_error_set(e, path, "", "contains a NUL byte"), -EPERM;
	win_sha256(buf, n, md);
	r = ceiling_parse(path, buf, &c, e);
	if (r < 0)
		return r == -ENOMEM ? r : -EPERM;
	for (unsigned i = 0; i < sizeof(md); i++)
		snprintf(c->digest + 2 * i, 3, "%02x", md[i]);
	*ret = c;
	return 0;
}

int ceiling_load_system(Ceiling **ret, PolicyError *e)
{
	const char *path = CEILING_SYSTEM_PATH;
	int r;

#if WARD_TEST_HOOKS
	if (getenv("WARD_TEST_MANAGED_FILE"))
		path = getenv("WARD_TEST_MANAGED_FILE");
#endif
	*ret = NULL;
	r = ceiling_load(path, ret, e);
	return r == -ENOENT ? 0 : r;
}

cJSON *ceiling_marks(const Ceiling *c)
{
	cJSON *o = cJSON_CreateObject();

	if (!o)
		return NULL;
	cJSON_AddStringToObject(o, "file", c->file);
	cJSON_AddStringToObject(o, "sha256", c->digest);
	cJSON_AddItemToObject(o, "bounds", cJSON_Duplicate(c->doc, true));
	cJSON_AddItemToObject(o, "from_ceiling", json_strv_array(c->applied));
	return o;
}
