/* Fuzz target "cow": the upper-dir scanner and the path classifier. The
 * input is both a raw path (classified, quoted, hex-decoded) and a little
 * program that builds a hostile upper dir over a lower dir in a temp dir:
 * records of [op][len][name bytes], names taken byte for byte (except '/'
 * and NUL, which no directory entry can hold). */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <sys/xattr.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "cow/cow-fsops.h"
#include "cow/cow-review.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *root;

static void build(int ufd0, int lfd0, const uint8_t *data, size_t size)
{
	int ustack[33], lstack[33], depth = 0;
	size_t ops = 0;

	ustack[0] = ufd0;
	lstack[0] = lfd0;
	for (size_t i = 0; i + 2 <= size && ops < 256; ops++) {
		uint8_t op = data[i] % 10, len = data[i + 1] % 64;
		mode_t mode = (mode_t)(data[i + 1] << 4) & 07777;
		char name[80];
		i += 2;
		if (len > size - i)
			len = (uint8_t)(size - i);
		memcpy(name, data + i, len);
		name[len] = '\0';
		i += len;
		for (size_t k = 0; k < len; k++)
			if (name[k] == '/' || name[k] == '\0')
				name[k] = '_';
		if (op != 7 && (len == 0 || strcmp(name, ".") == 0 || strcmp(name, "..") == 0))
			continue;
		int u = ustack[depth], l = lstack[depth];
		switch (op) {
		case 0: /* upper dir, descend */
			(void)mkdirat(u, name, 0755);
			(void)mkdirat(l, name, 0755);
			if (depth < 32) {
				int nu = openat(u, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				int nl = openat(l, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
				if (nu >= 0 && nl >= 0) {
					depth++;
					ustack[depth] = nu;
					lstack[depth] = nl;
				} else {
					if (nu >= 0)
						close(nu);
					if (nl >= 0)
						close(nl);
				}
			}
			break;
		case 1: { /* upper file, content = name */
			int fd = openat(u, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC,
					mode | 0600);
			if (fd >= 0) {
				(void)!write(fd, name, len);
				close(fd);
			}
			break;
		}
		case 2: /* upper symlink */
			(void)symlinkat(name, u, name);
			break;
		case 3: /* whiteout, both encodings */
			if (mknodat(u, name, S_IFCHR, makedev(0, 0)) < 0) {
				int fd = openat(u, name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
				if (fd >= 0) {
					(void)fsetxattr(fd, "user.overlay.whiteout", "", 0, 0);
					close(fd);
				}
			}
			break;
		case 4: /* mark the current upper dir opaque */
			(void)fsetxattr(u, "user.overlay.opaque", len & 1 ? "y" : "x", 1, 0);
			break;
		case 5: { /* lower file */
			int fd = openat(l, name, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
			if (fd >= 0) {
				(void)!write(fd, name, len / 2);
				close(fd);
			}
			break;
		}
		case 6: /* lower dir only */
			(void)mkdirat(l, name, 0755);
			break;
		case 7: /* back up one level */
			if (depth > 0) {
				close(ustack[depth]);
				close(lstack[depth]);
				depth--;
			}
			break;
		case 8: /* lower symlink (pointing out) */
			(void)symlinkat("/", l, name);
			break;
		default: /* fifo: refused by the scanner */
			(void)mkfifoat(u, name, 0644);
			break;
		}
	}
	while (depth > 0) {
		close(ustack[depth]);
		close(lstack[depth]);
		depth--;
	}
}

static void remove_root(void)
{
	(void)rmdir(root);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *prot[] = { ".git", ".ward", "a/b", NULL };
	_cleanup_free_ char *str = NULL;
	CowChangeList l = {};
	int rfd, ufd, lfd;

	if (size > 64 * 1024)
		return 0;
	str = strndup((const char *)data, size);
	if (!str)
		return 0;
	/* The classifier and quoting on the raw bytes. */
	(void)cow_classify_path((const char *)data, size, prot);
	free(cow_quote_path(str));
	free(cow_hex_decode(str));
	(void)cow_path_is_protected_ancestor(str, prot);
	/* What the diff prints of contents is valid UTF-8 with no control
	 * byte but tab, whatever the input. */
	{
		char *out = NULL;
		size_t olen = 0;
		FILE *m = open_memstream(&out, &olen);
		if (m) {
			(void)cow_put_escaped(m, (const char *)data, size, "", "");
			fclose(m);
			if (!cow_utf8_valid(out, olen))
				abort();
			for (size_t i = 0; i < olen; i++)
				if (((unsigned char)out[i] < 0x20 && out[i] != '\t') || out[i] == 0x7f)
					abort();
			free(out);
		}
	}

	if (!root) {
		root = strdup("/tmp/ward-fuzz-cow.XXXXXX");
		if (!root || !mkdtemp(root))
			abort();
		atexit(remove_root);
	}
	rfd = open(root, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (rfd < 0)
		abort();
	(void)cow_rm_rf_at(rfd, "u", 0);
	(void)cow_rm_rf_at(rfd, "l", 0);
	if (mkdirat(rfd, "u", 0755) < 0 || mkdirat(rfd, "l", 0755) < 0)
		abort();
	ufd = openat(rfd, "u", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	lfd = openat(rfd, "l", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (ufd < 0 || lfd < 0)
		abort();
	build(ufd, lfd, data, size);
	if (cow_scan(ufd, lfd, prot, &l) >= 0) {
		cJSON *j = NULL;
		bool *sel = calloc(l.n + 1, sizeof(bool));
		char *sub[] = { str, NULL };
		for (size_t i = 0; i < l.n; i++) {
			const CowChange *c = &l.items[i];
			/* Every path the scanner reports is a clean relative path. */
			if (cow_classify_path(c->path, strlen(c->path), NULL) == COW_PATH_ESCAPE)
				abort();
			if (!cow_kind_to_string(c->kind) || !cow_refusal_to_string(c->refused))
				abort();
			free(cow_quote_path(c->path));
		}
		if (sel && cow_select(&l, sub, sel, NULL) >= 0 && cow_changes_to_json(&l, sel, &j) >= 0)
			cJSON_Delete(j);
		free(sel);
		cow_change_list_done(&l);
	}
	close(ufd);
	close(lfd);
	(void)cow_rm_rf_at(rfd, "u", 0);
	(void)cow_rm_rf_at(rfd, "l", 0);
	close(rfd);
	return 0;
}
