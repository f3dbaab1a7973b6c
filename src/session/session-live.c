/* A live session's directory (session-live.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "common/dirs.h"
#include "session/session-live.h"
#include "session/session-paths.h"

void session_live_remove(const char *state, const char *id)
{
	static const char *const names[] = { "ctl", "log", "pid" };
	char path[4096];

	for (size_t i = 0; i < 3; i++)
		if (session_live_path(state, id, names[i], path, sizeof(path)) == 0)
			(void)unlink(path);
	if (session_live_path(state, id, NULL, path, sizeof(path)) == 0)
		(void)rmdir(path);
}

int session_live_listen(const char *state, const char *id, int *ret)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	char dir[4096];
	int fd, r;

	/* 0700 directories the user owns: no one else can reach the socket
	 * (SO_PEERCRED checks every connection besides). */
	if ((r = session_live_path(state, id, NULL, dir, sizeof(dir))) < 0)
		return r;
	char *slash = strrchr(dir, '/');
	*slash = 0;
	if ((r = ward_dir_ensure(dir)) < 0)
		return r;
	*slash = '/';
	if (mkdir(dir, 0700) < 0)
		return -errno;
	if ((r = session_live_path(state, id, "ctl", sa.sun_path, sizeof(sa.sun_path))) < 0)
		return r;
	fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -errno;
	mode_t old = umask(0077);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ? -errno : 0;
	umask(old);
	if (r == 0 && listen(fd, 64) < 0)
		r = -errno;
	if (r < 0) {
		close(fd);
		return r;
	}
	*ret = fd;
	return 0;
}

int session_live_detach(const char *state, const char *id)
{
	char path[4096];
	int null, logfd = -1;

	(void)setsid();
	null = open("/dev/null", O_RDWR | O_CLOEXEC);
	if (session_live_path(state, id, "log", path, sizeof(path)) == 0)
		logfd = open(path, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | O_NOFOLLOW, 0600);
	if (null < 0 || logfd < 0)
		return -EIO;
	/* From here the starter's stdout and stderr are not held: a harness
	 * reading `$(ward session new --live)` gets its end of file. */
	(void)dup2(null, 0);
	(void)dup2(logfd, 1);
	(void)dup2(logfd, 2);
	if (session_live_path(state, id, "pid", path, sizeof(path)) == 0) {
		FILE *f = fopen(path, "we");
		if (f) {
			fprintf(f, "%d\n", (int)getpid());
			fclose(f);
		}
	}
	return 0;
}
