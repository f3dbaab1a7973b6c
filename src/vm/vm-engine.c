/* Tier 3's engine: the KVM probe and its cache, and the machine part of
 * QEMU's command line (vm-engine.h, docs/t3.md).
 *
 * The probe boots the guest image once with -accel kvm, outside the T2
 * sandbox but under QEMU's own seccomp sandbox, with no share but its own
 * read-only request (run "/ward-kvm-probe", which does not exist) and no
 * NIC: it is the image ward itself assembled, asked for nothing. KVM is
 * usable when the guest init reports "status 127" on the control port
 * within VM_PROBE_MS; a guest that hangs (the PVM host this was built on
 * hangs stock kernels), dies ("emulation failure") or reports anything
 * else means TCG. */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <linux/kvm.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "common/dirs.h"
#include "common/strv.h"
#include "config.h"
#include "vm/vm-engine.h"
#include "vm/vm-image.h"
#include "vm/vm-request.h"

#define VM_PROBE_MEM_MB 128
/* TCG's translation cache. Uncapped it grew past 600 MB; at 32 MB a real
 * compile thrashes it (gcc -O2 of a 200-function file: 112-132 s in the
 * guest against 17-20 s at 64 MB). At 48 the same compile, Python and git
 * ran as fast as at 64 (medians 22.3 against 25.5 s for the compile, six
 * and four runs, interleaved sessions) and a warm session's QEMU holds
 * 16 MB less, its index too (docs/t3.md "Resources"). */
#define VM_TB_SIZE_MB 48
#define VM_CACHE_VERSION "v1"
/* Used when an image has no cmdline file (built before there was one). */
#define VM_DEFAULT_CMDLINE                                                                          \
	"console=ttyS0 quiet loglevel=3 reboot=t panic=-1 cryptomgr.notests mitigations=off "      \
	"8250.nr_uarts=1 tsc_early_khz=2000000 no_timer_check rdinit=/init"

static long long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The image's kernel arguments: its cmdline file, printable ASCII only. */
static void image_cmdline(const char *image_dir, char *buf, size_t n)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	ssize_t k = -1;

	if (asprintf(&path, "%s/cmdline", image_dir) >= 0 &&
	    (fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)) >= 0)
		k = read(fd, buf, n - 1);
	if (k <= 0) {
		snprintf(buf, n, "%s", VM_DEFAULT_CMDLINE);
		return;
	}
	buf[k] = 0;
	buf[strcspn(buf, "\n")] = 0;
	for (char *c = buf; *c; c++)
		if (*c < 32 || *c > 126) {
			snprintf(buf, n, "%s", VM_DEFAULT_CMDLINE);
			return;
		}
}

int vm_machine_args(char ***a, const VmMachine *m)
{
	char cmdline[1024], out[1100] = "";
	int r = 0;

	image_cmdline(m->image_dir, cmdline, sizeof(cmdline));
	/* Under KVM the guest has kvm-clock and the TSC-deadline timer: a
	 * fixed early TSC rate and local APIC timer period (what spare TCG
	 * the calibrations) would only be wrong there. */
	for (char *save = NULL, *t = strtok_r(cmdline, " ", &save); t; t = strtok_r(NULL, " ", &save)) {
		if (m->kvm && (strncmp(t, "tsc_early_khz=", 14) == 0 ||
			       strncmp(t, "lapic_timer_period=", 19) == 0))
			continue;
		if (out[0])
			strcat(out, " ");
		strcat(out, t);
	}
	r |= strv_extend(a, "-M");
	r |= strv_extend(a, "microvm,rtc=on,pit=on,pic=on,isa-serial=on");
	r |= strv_extend(a, "-cpu");
	r |= strv_extend(a, m->kvm ? "host" : "qemu64");
	r |= strv_extend(a, "-m");
	r |= strv_extendf(a, "%u", m->mem_mb);
	r |= strv_extend(a, "-smp");
	r |= strv_extend(a, "1");
	r |= strv_extend(a, "-accel");
	if (m->kvm)
		r |= strv_extend(a, "kvm");
	else
		r |= strv_extendf(a, "tcg,tb-size=%d", VM_TB_SIZE_MB);
	r |= strv_extend(a, "-nodefaults");
	r |= strv_extend(a, "-no-user-config");
	r |= strv_extend(a, "-display");
	r |= strv_extend(a, "none");
	r |= strv_extend(a, "-no-reboot");
	/* QEMU's own seccomp filter (inside ward's, for a run). */
	r |= strv_extend(a, "-sandbox");
	r |= strv_extend(a, "on,obsolete=deny,elevateprivileges=deny,spawn=deny,resourcecontrol=deny");
	r |= strv_extend(a, "-kernel");
	r |= strv_extendf(a, "%s/vmlinux", m->image_dir);
	r |= strv_extend(a, "-initrd");
	r |= strv_extendf(a, "%s/initrd.img", m->image_dir);
	r |= strv_extend(a, "-append");
	r |= strv_extend(a, out);
	r |= strv_extend(a, "-serial");
	r |= strv_extend(a, m->console);
	return r < 0 ? -ENOMEM : 0;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

static int read_small(const char *path, char *buf, size_t n)
{
	_cleanup_close_ int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	ssize_t k;

	if (fd < 0)
		return -errno;
	k = read(fd, buf, n - 1);
	if (k < 0)
		return -errno;
	buf[k] = 0;
	return (int)k;
}

/* The probe's request: run a program that does not exist, as root. */
static int write_probe_request(const char *dir)
{
	static const char req[] = "a/ward-kvm-probe\0c/\0u0\0g0\0m22\0";
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;

	if (asprintf(&path, "%s/" VM_REQUEST_FILE, dir) < 0)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		return -errno;
	if (write(fd, req, sizeof(req) - 1) != (ssize_t)sizeof(req) - 1)
		return -EIO;
	return 0;
}

/* Boots the probe guest with KVM in @dir; true when it reported in time. */
static bool boot_probe(const char *qemu, const char *image_dir, const char *dir, VmEngine *e)
{
	_cleanup_strv_ char **argv = NULL;
	_cleanup_free_ char *console = NULL, *errpath = NULL, *status = NULL;
	char buf[256];
	long long start, deadline;
	int r = 0, st = 0;
	bool done = false;
	pid_t pid, w = 0;

	if (asprintf(&console, "file:%s/console", dir) < 0 || asprintf(&errpath, "%s/qemu.err", dir) < 0 ||
	    asprintf(&status, "%s/status", dir) < 0)
		return snprintf(e->why, sizeof(e->why), "out of memory"), false;
	if ((r = write_probe_request(dir)) < 0)
		return snprintf(e->why, sizeof(e->why), "cannot write the probe's request: %s",
				strerror(-r)), false;
	VmMachine m = { .image_dir = image_dir, .console = console, .mem_mb = VM_PROBE_MEM_MB, .kvm = true };
	r |= strv_extend(&argv, qemu);
	r |= vm_machine_args(&argv, &m);
	r |= strv_extend(&argv, "-device");
	r |= strv_extend(&argv, "virtio-serial-device,max_ports=4");
	r |= strv_extend(&argv, "-chardev");
	r |= strv_extend(&argv, "null,id=out");
	r |= strv_extend(&argv, "-device");
	r |= strv_extend(&argv, "virtserialport,chardev=out,name=ward.out");
	r |= strv_extend(&argv, "-chardev");
	r |= strv_extend(&argv, "null,id=err");
	r |= strv_extend(&argv, "-device");
	r |= strv_extend(&argv, "virtserialport,chardev=err,name=ward.err");
	r |= strv_extend(&argv, "-chardev");
	r |= strv_extendf(&argv, "file,id=ctl,path=%s", status);
	r |= strv_extend(&argv, "-device");
	r |= strv_extend(&argv, "virtserialport,chardev=ctl,name=ward.ctl");
	r |= strv_extend(&argv, "-fsdev");
	r |= strv_extendf(&argv, "local,id=req,path=%s,security_model=none,readonly=on", dir);
	r |= strv_extend(&argv, "-device");
	r |= strv_extend(&argv, "virtio-9p-device,fsdev=req,mount_tag=" VM_TAG_REQUEST);
	if (r < 0)
		return snprintf(e->why, sizeof(e->why), "out of memory"), false;

	start = now_ms();
	pid = fork();
	if (pid < 0)
		return snprintf(e->why, sizeof(e->why), "fork: %s", strerror(errno)), false;
	if (pid == 0) {
		int nul = open("/dev/null", O_RDWR | O_CLOEXEC);
		int errfd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
		/* A ward killed mid-probe takes the (maybe hung) guest with it. */
		(void)prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (nul < 0 || errfd < 0 || dup2(nul, 0) < 0 || dup2(nul, 1) < 0 || dup2(errfd, 2) < 0)
			_exit(127);
		execv(qemu, argv);
		_exit(127);
	}
	deadline = start + VM_PROBE_MS;
	while (!done) {
		w = waitpid(pid, &st, WNOHANG);
		if (w == pid || (w < 0 && errno != EINTR))
			break;
		/* The status is written before the guest resets: enough. */
		if (read_small(status, buf, sizeof(buf)) > 0 && strchr(buf, '\n'))
			done = true;
		else if (now_ms() >= deadline)
			break;
		else
			usleep(10000);
	}
	e->probe_ms = (unsigned)(now_ms() - start);
	if (w != pid) {
		(void)kill(pid, SIGKILL);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
	}
	if (read_small(status, buf, sizeof(buf)) > 0 && strcmp(buf, "status 127\n") == 0) {
		snprintf(e->why, sizeof(e->why), "the probe guest booted with KVM in %u ms",
			 e->probe_ms);
		return true;
	}
	if (w != pid)
		snprintf(e->why, sizeof(e->why),
			 "/dev/kvm opens, but the probe guest did not reach init with KVM within %d ms",
			 VM_PROBE_MS);
	else {
		char qerr[120] = "";
		(void)read_small(errpath, qerr, sizeof(qerr));
		qerr[strcspn(qerr, "\n")] = 0;
		snprintf(e->why, sizeof(e->why), "/dev/kvm opens, but QEMU with KVM failed (%s %d%s%s)",
			 WIFEXITED(st) ? "exit status" : "signal",
			 WIFEXITED(st) ? WEXITSTATUS(st) : WTERMSIG(st), qerr[0] ? ": " : "", qerr);
	}
	return false;
}

/* The cache line's key: "v1 BOOTID QEMU IMAGE_DIR". */
static int cache_key(const char *qemu, const char *image_dir, char **ret)
{
	char boot[64] = "";

	if (read_small("/proc/sys/kernel/random/boot_id", boot, sizeof(boot)) <= 0)
		return -ENOENT;
	boot[strcspn(boot, "\n")] = 0;
	return asprintf(ret, VM_CACHE_VERSION " %s %s %s", boot, qemu, image_dir) < 0 ? -ENOMEM : 0;
}

static int cache_path(char **ret)
{
	_cleanup_free_ char *base = NULL;
	int r = vm_image_default_dir(&base);

	if (r < 0)
		return r;
	return asprintf(ret, "%s-engine", base) < 0 ? -ENOMEM : 0;
}

/* The cached answer for @key: "KEY kvm|tcg MS WHY". */
static bool cache_read(const char *key, VmEngine *e)
{
	_cleanup_free_ char *path = NULL;
	char buf[1024], eng[8];
	size_t kl = strlen(key);
	unsigned ms;
	int n;

	if (cache_path(&path) < 0 || read_small(path, buf, sizeof(buf)) <= 0)
		return false;
	buf[strcspn(buf, "\n")] = 0;
	if (strncmp(buf, key, kl) != 0 || buf[kl] != ' ')
		return false;
	if (sscanf(buf + kl + 1, "%7s %u %n", eng, &ms, &n) < 2 || !buf[kl + 1 + n])
		return false;
	if (strcmp(eng, "kvm") != 0 && strcmp(eng, "tcg") != 0)
		return false;
	e->kvm = strcmp(eng, "kvm") == 0;
	e->probe_ms = ms;
	e->cached = true;
	snprintf(e->why, sizeof(e->why), "%s", buf + kl + 1 + n);
	return true;
}

static void cache_write(const char *key, const VmEngine *e)
{
	_cleanup_free_ char *path = NULL, *tmp = NULL, *dir = NULL;
	FILE *f;

	if (cache_path(&path) < 0 || !(dir = strdup(path)))
		return;
	*strrchr(dir, '/') = 0;
	if (mkdir_p(dir, 0700) < 0 || asprintf(&tmp, "%s.XXXXXX", path) < 0)
		return;
	int fd = mkstemp(tmp);
	if (fd < 0)
		return;
	f = fdopen(fd, "w");
	if (!f) {
		close(fd);
		(void)unlink(tmp);
		return;
	}
	fprintf(f, "%s %s %u %s\n", key, e->kvm ? "kvm" : "tcg", e->probe_ms, e->why);
	if (fclose(f) != 0 || rename(tmp, path) < 0)
		(void)unlink(tmp);
}

void vm_engine_choose(const char *qemu, const char *image_dir, bool may_boot, VmEngine *e)
{
	_cleanup_free_ char *key = NULL, *runs = NULL, *tmpl = NULL;
	_cleanup_close_ int kvm = -1;
	int v;

	*e = (VmEngine){};
#if WARD_TEST_HOOKS
	if (getenv("WARD_TEST_VM_NO_KVM")) {
		e->test_no_kvm = true;
		snprintf(e->why, sizeof(e->why), "KVM refused by the test switch WARD_TEST_VM_NO_KVM");
		return;
	}
#endif
	kvm = open("/dev/kvm", O_RDWR | O_CLOEXEC);
	if (kvm < 0) {
		snprintf(e->why, sizeof(e->why), "no usable /dev/kvm (%s)", strerror(errno));
		return;
	}
	v = ioctl(kvm, KVM_GET_API_VERSION, 0);
	if (v != KVM_API_VERSION) {
		snprintf(e->why, sizeof(e->why), "/dev/kvm answers API version %d, not %d", v,
			 KVM_API_VERSION);
		return;
	}
	if (cache_key(qemu, image_dir, &key) < 0) {
		snprintf(e->why, sizeof(e->why), "no boot id to key the KVM probe's answer by");
		return;
	}
	if (cache_read(key, e))
		return;
	if (!may_boot) {
		snprintf(e->why, sizeof(e->why),
			 "/dev/kvm opens but is not probed yet (the next --tier 3 run or 'ward probe' "
			 "boots a probe guest)");
		return;
	}
	/* The probe's dir: in the runs' dir (vm-runs, beside the image dir). */
	if (vm_image_default_dir(&tmpl) < 0 || asprintf(&runs, "%s-runs/probe.XXXXXX", tmpl) < 0) {
		runs = NULL;
		return (void)snprintf(e->why, sizeof(e->why), "out of memory");
	}
	*strrchr(runs, '/') = 0;
	if (mkdir_p(runs, 0700) < 0)
		return (void)snprintf(e->why, sizeof(e->why), "cannot make the KVM probe's directory");
	runs[strlen(runs)] = '/';
	if (!mkdtemp(runs))
		return (void)snprintf(e->why, sizeof(e->why), "cannot make the KVM probe's directory");
	e->probed_now = true;
	e->kvm = boot_probe(qemu, image_dir, runs, e);
	(void)nftw(runs, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	cache_write(key, e);
}

const char *vm_engine_cost(const VmEngine *e)
{
	return e->kvm ? "hardware virtualization (KVM): a cold run pays the guest's boot, "
			"a fraction of a second"
		      : "software emulation (TCG): about half a second per cold run with the minimal "
			"kernel, several with the stock one; dynamically linked tools are slow";
}
