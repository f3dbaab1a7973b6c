/* The /proc/sys masks, kept while provably the same (root-masks-cache.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/strv.h"
#include "linux/mount-plan.h"
#include "linux/root-masks-cache.h"
#include "windows/win-sha256.h"

#define CACHE_DIR "/run/ward"
#define CACHE_FILE CACHE_DIR "/proc-sys-masks"
#define CACHE_MAGIC "ward-proc-sys-masks 1 "
#define CACHE_MAX (1 << 20)
#define PREFIX MP_NEWROOT "/proc/sys/"

/* The whole of a small file, NUL-terminated; NULL when absent or on error. */
static char *read_small(const char *path, size_t max)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	char *buf;
	size_t n = 0;

	if (fd < 0 || !(buf = malloc(max + 1)))
		return NULL;
	for (;;) {
		ssize_t k = read(fd, buf + n, max - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0) {
			free(buf);
			return NULL;
		}
		if (k == 0)
			break;
		n += (size_t)k;
		if (n == max) { /* larger than we accept */
			free(buf);
			return NULL;
		}
	}
	buf[n] = '\0';
	return buf;
}

char *root_masks_cache_key(const char *scope)
{
	_cleanup_free_ char *boot = read_small("/proc/sys/kernel/random/boot_id", 64);
	_cleanup_free_ char *mods = read_small("/proc/modules", 1 << 20);
	_cleanup_free_ char *text = NULL;
	struct utsname u;
	uint8_t md[32];
	char *key;
	size_t cap, len;

	if (!boot || uname(&u) < 0)
		return NULL;
	/* Each module's name and state (not its use count, which moves). */
	cap = strlen(scope) + strlen(boot) + sizeof(u.release) + sizeof(u.version) +
	      (mods ? strlen(mods) : 0) + 16;
	text = malloc(cap);
	if (!text)
		return NULL;
	len = (size_t)snprintf(text, cap, "%s|%s|%s|%s|", scope, boot, u.release, u.version);
	for (char *line = mods, *next; line && *line; line = next) {
		char name[128], size[32], refs[32], deps[4096], state[32];

		next = strchr(line, '\n');
		if (next)
			*next++ = '\0';
		if (sscanf(line, "%127s %31s %31s %4095s %31s", name, size, refs, deps, state) != 5 ||
		    strcmp(state, "Live") != 0)
			return NULL; /* loading, unloading or unknown: do not cache */
		len += (size_t)snprintf(text + len, cap - len, "%s,", name);
		if (len >= cap)
			return NULL;
	}
	win_sha256(text, len, md);
	key = malloc(65);
	if (!key)
		return NULL;
	for (unsigned i = 0; i < sizeof(md); i++)
		snprintf(key + 2 * i, 3, "%02x", md[i]);
	return key;
}

/* /run/ward: a directory of root's that no one else may write. */
static bool dir_ok(void)
{
	struct stat st;

	return lstat(CACHE_DIR, &st) == 0 && S_ISDIR(st.st_mode) && st.st_uid == 0 &&
	       !(st.st_mode & (S_IWGRP | S_IWOTH));
}

int root_masks_cache_load(const char *key, char ***files, char ***dirs)
{
	_cleanup_close_ int fd = -EBADF;
	_cleanup_free_ char *buf = NULL;
	_cleanup_strv_ char **f = NULL, **d = NULL;
	struct stat st;
	size_t n;
	char *p;
	int r;

	if (!dir_ok())
		return 0;
	fd = open(CACHE_FILE, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_uid != 0 ||
	    (st.st_mode & (S_IWGRP | S_IWOTH)) || st.st_size >= CACHE_MAX)
		return 0;
	buf = malloc((size_t)st.st_size + 1);
	if (!buf)
		return -ENOMEM;
	n = 0;
	while (n < (size_t)st.st_size) {
		ssize_t k = read(fd, buf + n, (size_t)st.st_size - n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return 0;
		n += (size_t)k;
	}
	buf[n] = '\0';
	if (strncmp(buf, CACHE_MAGIC, strlen(CACHE_MAGIC)) != 0)
		return 0;
	p = buf + strlen(CACHE_MAGIC);
	if (strncmp(p, key, strlen(key)) != 0 || p[strlen(key)] != '\n')
		return 0;
	p += strlen(key) + 1;
	/* "F path" or "D path" per line, each under /proc/sys, no "..". */
	for (char *next; *p; p = next) {
		next = strchr(p, '\n');
		if (!next)
			return 0; /* truncated */
		*next++ = '\0';
		if ((p[0] != 'F' && p[0] != 'D') || p[1] != ' ' ||
		    strncmp(p + 2, PREFIX, strlen(PREFIX)) != 0 || strstr(p, "/..") || strstr(p, "//"))
			return 0;
		if ((r = strv_extend(p[0] == 'F' ? &f : &d, p + 2)) < 0)
			return r;
	}
	if ((r = strv_extend_strv(files, f)) < 0 || (r = strv_extend_strv(dirs, d)) < 0)
		return r;
	return 1;
}

void root_masks_cache_store(const char *key, char *const *files, char *const *dirs)
{
	char tmp[] = CACHE_DIR "/.proc-sys-masks.XXXXXX";
	_cleanup_fclose_ FILE *out = NULL;
	int fd;

	if ((mkdir(CACHE_DIR, 0700) < 0 && errno != EEXIST) || !dir_ok())
		return;
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0)
		return;
	out = fdopen(fd, "w");
	if (!out) {
		close(fd);
		unlink(tmp);
		return;
	}
	fprintf(out, CACHE_MAGIC "%s\n", key);
	STRV_FOREACH(p, files)
	fprintf(out, "F %s\n", *p);
	STRV_FOREACH(p, dirs)
	fprintf(out, "D %s\n", *p);
	if (fflush(out) != 0 || ferror(out) || fchmod(fileno(out), 0600) < 0 ||
	    rename(tmp, CACHE_FILE) < 0)
		unlink(tmp);
}
