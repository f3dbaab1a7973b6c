/* The wall check before execve. See walls.h. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "linux/walls.h"

int walls_plan_init(WallsPlan *w, const char *state_dir, bool net_confined,
		    const uint16_t *allowed, size_t n_allowed)
{
	/* Ports nothing legitimate listens on, tried in order until one is
	 * not among the allowed ones. */
	static const uint16_t candidates[] = { 9, 1, 7, 65535 };

	*w = (WallsPlan){};
	if (state_dir) {
		int n = snprintf(w->read_path, sizeof(w->read_path), "%s/audit.jsonl", state_dir);
		int m = snprintf(w->write_path, sizeof(w->write_path), "%s/.ward-wall-check",
				 state_dir);

		if (n < 0 || (size_t)n >= sizeof(w->read_path) || m < 0 ||
		    (size_t)m >= sizeof(w->write_path))
			return -ENAMETOOLONG;
	}
	if (!net_confined)
		return 0;
	for (size_t c = 0; c < sizeof(candidates) / sizeof(candidates[0]); c++) {
		bool taken = false;

		for (size_t i = 0; i < n_allowed; i++)
			taken = taken || allowed[i] == candidates[c];
		if (!taken) {
			w->connect = true;
			w->connect_port = candidates[c];
			return 0;
		}
	}
	return 0;
}

int walls_check(const WallsPlan *w, SandboxStep *ret_wall, const char **ret_detail)
{
	int fd;

	if (w->write_path[0]) {
		fd = open(w->write_path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
		if (fd >= 0) {
			(void)close(fd);
			(void)unlink(w->write_path);
			*ret_wall = SANDBOX_STEP_WALL_WRITE;
			*ret_detail = w->write_path;
			return -EPERM;
		}
	}
	if (w->read_path[0]) {
		fd = open(w->read_path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
		if (fd >= 0) {
			(void)close(fd);
			*ret_wall = SANDBOX_STEP_WALL_READ;
			*ret_detail = w->read_path;
			return -EPERM;
		}
	}
	if (w->connect) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons(w->connect_port) };
		int r;

		sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
		if (fd >= 0) {
			/* Held: the kernel refuses the connect itself (Landlock:
			 * EACCES; seccomp or an LSM: EPERM). Any other answer
			 * (refused, in progress, connected) means it went out. */
			r = connect(fd, (struct sockaddr *)&sa, sizeof(sa));
			r = r < 0 ? errno : 0;
			(void)close(fd);
			if (r != EACCES && r != EPERM) {
				*ret_wall = SANDBOX_STEP_WALL_CONNECT;
				*ret_detail = "127.0.0.1";
				return -EPERM;
			}
		}
	}
	return 0;
}
