/* share-hog MODE [SYNC_DIR]: take as much of a per-user kernel counter as
 * the kernel gives, print how much ("held N ERRNO_NAME"), and, with
 * SYNC_DIR, hold it until the test says so: write the line to
 * SYNC_DIR/ready (a FIFO the host reads), then wait for EOF on
 * SYNC_DIR/go (a FIFO the host opens and closes). No timing involved.
 *   inotify     inotify_init1() until it fails
 *   sigpending  queue blocked real-time signals to itself until it fails
 * share-hog one-inotify: create one inotify instance; exit 0 if it could,
 * 1 (printing the error) if not. The host side of the test runs this. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/inotify.h>
#include <unistd.h>

const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

static long hog_inotify(int *err)
{
	long n = 0;

	for (;;) {
		if (inotify_init1(IN_CLOEXEC) < 0) {
			*err = errno;
			return n;
		}
		n++;
	}
}

static long hog_sigpending(int *err)
{
	union sigval v = { 0 };
	sigset_t set;
	long n = 0;

	sigemptyset(&set);
	sigaddset(&set, SIGRTMIN);
	sigprocmask(SIG_BLOCK, &set, NULL);
	for (;;) {
		if (sigqueue(getpid(), SIGRTMIN, v) < 0) {
			*err = errno;
			return n;
		}
		n++;
	}
}

static void hold(const char *dir, const char *line)
{
	char path[4096], buf[64];
	int fd;

	snprintf(path, sizeof(path), "%s/ready", dir);
	fd = open(path, O_WRONLY | O_CLOEXEC);
	if (fd < 0 || write(fd, line, strlen(line)) < 0)
		exit(3);
	close(fd);
	snprintf(path, sizeof(path), "%s/go", dir);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		exit(3);
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
}

int main(int argc, char **argv)
{
	char line[128];
	int err = 0;
	long n;

	if (argc < 2)
		return 2;
	if (strcmp(argv[1], "one-inotify") == 0) {
		if (inotify_init1(IN_CLOEXEC) >= 0)
			return 0;
		printf("%s\n", strerrorname_np(errno));
		return 1;
	}
	if (strcmp(argv[1], "inotify") == 0)
		n = hog_inotify(&err);
	else if (strcmp(argv[1], "sigpending") == 0)
		n = hog_sigpending(&err);
	else
		return 2;
	snprintf(line, sizeof(line), "held %ld %s\n", n, err ? strerrorname_np(err) : "-");
	fputs(line, stdout);
	fflush(stdout);
	if (argc > 2)
		hold(argv[2], line);
	return 0;
}
