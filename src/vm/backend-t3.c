/* The tier-3 entry of the backend table (run/backend.h): the command runs
 * in a QEMU micro-VM with its own kernel, and QEMU itself runs inside
 * ward's T2 sandbox (docs/t3.md).
 *
 * An adaptor over the T2 backend: the T2 sandbox is planned for the same
 * policy, with QEMU as its command, plus two paths: the guest image (read
 * only) and this run's directory (the request the guest reads, and the
 * files QEMU writes: the control port's "status" and the console). QEMU
 * exports the view it sees, inside T2, over 9p, one share per top-level
 * directory of the view but /proc, /sys and /dev (the guest has its own;
 * /tmp is the sandbox's private one, as at T2): what T2 hides is absent, what T2 makes read-only is refused by the
 * host kernel to QEMU itself, whatever the guest mounts.
 *
 * The status comes on a virtio-serial port the command's output never
 * reaches (guest-init.c). A VM that ends without a well-formed status,
 * or QEMU failing, is a failed run: 125 and the console's last lines. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cleanup.h"
#include "config.h"
#include "common/dirs.h"
#include "common/log.h"
#include "common/macro.h"
#include "common/strv.h"
#include "net/proxy-contract.h"
#include "run/backend.h"
#include "vm/vm-engine.h"
#include "vm/vm-image.h"
#include "vm/vm-mux.h"
#include "vm/vm-request.h"
#include "vm/vm-warm.h"
#include "linux/sandbox.h"

extern const Backend backend_linux_t2;
extern const Backend backend_vm_t3;

#define VM_MAX_SHARES 20
#define VM_FIFO_OUT "/tmp/.ward-vm-stdout"
#define VM_FIFO_ERR "/tmp/.ward-vm-stderr"
#define VM_FIFO_IN "/tmp/.ward-vm-stdin"
#define VM_FIFO_SIG "/tmp/.ward-vm-signal"
#define VM_FIFO_CON "/tmp/.ward-vm-console"
#define VM_CONSOLE_MAX "65536"
/* Guest memory without limits.memory_mb: 256 MB, one-shot or warm. A
 * one-shot 128 MB guest boots about 10 ms sooner of 800 under TCG (the
 * kernel initialises the page structures of all of it at each boot), too
 * little to be worth a compiler or a package manager running out of
 * memory (docs/t3.md "Resources"). */
#define VM_DEFAULT_MEM_MB 256
/* QEMU's own share of limits.memory_mb beside the guest's RAM: its code,
 * the kernel image it loads, the translation cache (capped), thread
 * stacks, 9p buffers. Where the limit is RLIMIT_DATA (no memory cgroup)
 * all of it counts: measured here, 192 MB was too little. */
#define VM_QEMU_SHARE_MB 384
#define VM_MIN_GUEST_MB 128 /* the stock kernel does not boot in 64 */
#define VM_EXIT_SIGNAL_BASE 200 /* SHELL_WRAP ended the VM on a second signal */
#define STR_(x) #x
#define STR(x) STR_(x)

/* Runs in the T2 sandbox: "$@" is QEMU's command line,
 * then "--ward-shares" and TAG PATH pairs; each PATH the view has becomes
 * a 9p export. The guest's stdio ports go through FIFOs in the sandbox's
 * private /tmp (QEMU cannot reopen the sandbox's fds: /proc/self/fd/N is
 * refused for a pipe or file of another user, and fails for a socket):
 * cat relays stdout and stderr out, and the caller's stdin in (saved on
 * fd 5 first: an async list's stdin is /dev/null); QEMU's stdio chardev
 * reads that FIFO, and its EOF is the guest's EOF.
 *
 * QEMU runs in a session of its own (setsid), so a signal for the
 * command's group (^C) reaches this shell and not QEMU: the first
 * INT/TERM/HUP/QUIT goes to the guest on ward.sig (guest-init signals the
 * command's group); a second one ends the VM, and the shell exits with
 * VM_EXIT_SIGNAL_BASE + N (QEMU itself exits 0 or 1, or 128+N when
 * killed: the guest cannot make this shell exit so). The relays ignore
 * them. After QEMU, each output FIFO is
 * opened read-write once, so that a relay still waiting for QEMU to open
 * it ends; the stdin relay is killed (the command may not have read it
 * all); the shell exits with QEMU's status. The console goes through a
 * third FIFO to tail, which keeps its last VM_CONSOLE_MAX bytes in
 * $WARD_VM_CONSOLE (the run dir): a guest flooding it fills no disk. */
#define SHELL_WRAP                                                                                 \
	"s=0; x=; for a; do shift; "                                                               \
	"if [ $s = 0 ]; then if [ \"$a\" = --ward-shares ]; then s=1; else set -- \"$@\" \"$a\"; fi; " \
	"elif [ $s = 1 ]; then t=$a; s=2; "                                                         \
	"else [ -d \"$a\" ] && set -- \"$@\" -fsdev "                                             \
	"\"local,id=$t,path=$a,security_model=none,multidevs=remap\" "                             \
	"-device \"virtio-9p-device,fsdev=$t,mount_tag=$t\"; s=1; fi; done; "                     \
	"mkfifo -m 600 " VM_FIFO_OUT " " VM_FIFO_ERR " " VM_FIFO_IN " " VM_FIFO_SIG " " VM_FIFO_CON \
	" || exit 125; "                                                                            \
	"trap '' INT TERM HUP QUIT; "                                                               \
	"tail -c " VM_CONSOLE_MAX " " VM_FIFO_CON " >\"$WARD_VM_CONSOLE\" & c=$!; "                  \
	"cat " VM_FIFO_OUT " & o=$!; cat " VM_FIFO_ERR " >&2 & e=$!; "                              \
	"exec 5<&0; cat <&5 >" VM_FIFO_IN " & i=$!; exec 5<&- 6<>" VM_FIFO_SIG "; "                 \
	"setsid -w \"$@\" <" VM_FIFO_IN " >/dev/null 6>&- & q=$!; n=0; "                            \
	"fwd() { n=$((n+1)); if [ $n -gt 1 ]; then x=$1; "                                         \
	"kill -KILL $q; else echo $1 >&6; fi; }; "                                                  \
	"trap 'fwd 2' INT; trap 'fwd 15' TERM; trap 'fwd 1' HUP; trap 'fwd 3' QUIT; "               \
	"while :; do wait $q 2>/dev/null; r=$?; kill -0 $q 2>/dev/null || break; done; "            \
	"kill $i 2>/dev/null; "                                                                     \
	"exec 3<>" VM_FIFO_OUT " 4<>" VM_FIFO_ERR " 7<>" VM_FIFO_CON "; exec 3>&- 4>&- 7>&-; "      \
	"wait $o $e $c; "                                                                           \
	"[ -z \"$x\" ] || r=$((" STR(VM_EXIT_SIGNAL_BASE) "+x)); exit $r"

/* A warm session's QEMU (vm-warm.h): the shares as above, except that a
 * share whose whole tree is read-only in the view (no writable mount at
 * or below its path, and the mount that holds it read-only: its own, or
 * the view's root; from the sandbox's /proc/self/mountinfo) is tagged
 * TAG + VM_TAG_RO_SUFFIX: the guest keeps its cache across commands and
 * mounts the others afresh after each one (docs/t3.md, "Coherence"). The
 * console through a FIFO to tail, QEMU's own messages in
 * $WARD_VM_QEMU_ERR, and no stdio: each command's goes over the port
 * ward.mux, whose socket QEMU makes in the run dir for the supervisor. */
#define WARM_WRAP                                                                                  \
	"rw=' '; ro=' '; while read -r _ _ _ _ m o _; do case $o in rw*) rw=\"$rw$m \";; "         \
	"*) ro=\"$ro$m \";; esac; done </proc/self/mountinfo; "                                    \
	"s=0; for a; do shift; "                                                                   \
	"if [ $s = 0 ]; then if [ \"$a\" = --ward-shares ]; then s=1; else set -- \"$@\" \"$a\"; fi; " \
	"elif [ $s = 1 ]; then t=$a; s=2; "                                                         \
	"else [ -d \"$a\" ] && { g=${t}" VM_TAG_RO_SUFFIX "; case $rw in *\" $a \"*|*\" $a/\"*) g=$t;; " \
	"*) case $ro in *\" $a \"*) ;; *) case $rw in *' / '*) g=$t;; esac;; esac;; esac; "         \
	"set -- \"$@\" -fsdev "                                                                     \
	"\"local,id=$t,path=$a,security_model=none,multidevs=remap\" "                             \
	"-device \"virtio-9p-device,fsdev=$t,mount_tag=$g\"; }; s=1; fi; done; "                  \
	"mkfifo -m 600 " VM_FIFO_CON " || exit 125; "                                               \
	"tail -c " VM_CONSOLE_MAX " " VM_FIFO_CON " >\"$WARD_VM_CONSOLE\" & "                      \
	"exec \"$@\" 2>\"$WARD_VM_QEMU_ERR\""

/* The guest's side of network "proxy": QEMU's user network (slirp) runs
 * in the T2 sandbox's network namespace, where 127.0.0.1 (the guest's
 * 10.0.2.2) holds ward's proxy listeners and nothing else reaches out. */
#define VM_NET_GUEST "10.0.2.15"
#define VM_NET_HOST "10.0.2.2"

struct BackendPlan {
	const BackendInput *in;
	BackendInput in2;    /* the T2 sandbox's input: QEMU as the command */
	WardPolicy pol2;     /* the policy plus the image and the run dir */
	BackendPlan *t2;
	char *image_dir;
	char *run_dir;
	char *qemu;
	char **argv;         /* QEMU's */
	char **envp;         /* QEMU's */
	char **read;         /* pol2.fs_read */
	char **read_write;   /* pol2.fs_read_write */
	unsigned mem_mb;
	VmEngine engine;     /* KVM or TCG, and why (vm-engine.h) */
	bool test_hostile;   /* WARD_TEST_VM_HOSTILE (test builds) */
	bool warm_mode;      /* a warm session (in->serve): QEMU stays up */
	VmWarm warm;         /* its VM, for the session's supervisor */
	SandboxServe serve;  /* t3_serve around in->serve */
	char **degraded;     /* the session's: the sandbox's and the VM's */
};

static const char *const VM_SKIP[] = { "proc", "sys", "dev", "lost+found", NULL };

static bool skipped(const char *name)
{
	for (size_t i = 0; VM_SKIP[i]; i++)
		if (strcmp(name, VM_SKIP[i]) == 0)
			return true;
	return name[0] == '.';
}

static int t3_probe(WardError *reterr)
{
	_cleanup_free_ char *q = NULL, *img = NULL;
	int r;

	if (vm_qemu_path(&q) < 0)
		return ward_error_set(reterr, "tier", EOPNOTSUPP,
				      "Tier 3 needs qemu-system-x86_64 (Debian: apt-get install "
				      "qemu-system-x86); refusing to run");
	if (vm_image_find(&img) < 0)
		return ward_error_set(reterr, "tier", EOPNOTSUPP,
				      "Tier 3 has no guest image here: run 'ward setup vm' once "
				      "(it assembles the guest kernel and init from Debian packages)");
	r = backend_linux_t2.probe(reterr);
	if (r < 0)
		log_hint("tier 3 runs QEMU inside the tier-2 sandbox: it needs tier 2 too.");
	return r;
}

static int t3_plan(const BackendInput *in, BackendPlan **ret, WardError *reterr)
{
	BackendPlan *p;
	int r;

	if ((r = backend_check_stdio(in, reterr)) < 0)
		return r;
	if (in->policy->net_mode != NET_MODE_NONE && in->policy->net_mode != NET_MODE_PROXY)
		return ward_error_set(reterr, "tier", EOPNOTSUPP,
				      "Tier 3 knows network modes \"none\" and \"proxy\" only; "
				      "refusing to run");
	if (in->policy->memory_mb && in->policy->memory_mb < VM_QEMU_SHARE_MB + VM_MIN_GUEST_MB)
		return ward_error_set(reterr, "limits", EINVAL,
				      "limits.memory_mb %llu is below what tier 3 needs: %d MB "
				      "(QEMU's own %d MB beside a guest of at least %d MB)",
				      (unsigned long long)in->policy->memory_mb,
				      VM_QEMU_SHARE_MB + VM_MIN_GUEST_MB, VM_QEMU_SHARE_MB,
				      VM_MIN_GUEST_MB);
	p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->in = in;
	*ret = p;
	return 0;
}

#define GUEST_HTTP "http://" VM_NET_HOST ":" STR(WARD_PROXY_HTTP_PORT)
#define GUEST_SOCKS "socks5h://" VM_NET_HOST ":" STR(WARD_PROXY_SOCKS_PORT)

static const char *const guest_proxy_vars[][2] = {
	{ "HTTP_PROXY", GUEST_HTTP },  { "http_proxy", GUEST_HTTP },
	{ "HTTPS_PROXY", GUEST_HTTP }, { "https_proxy", GUEST_HTTP },
	{ "ALL_PROXY", GUEST_SOCKS },  { "all_proxy", GUEST_SOCKS },
	{ "NO_PROXY", WARD_PROXY_NO_PROXY }, { "no_proxy", WARD_PROXY_NO_PROXY },
};

static bool is_proxy_var(const char *kv)
{
	for (size_t i = 0; i < ELEMENTSOF(guest_proxy_vars); i++) {
		size_t n = strlen(guest_proxy_vars[i][0]);
		if (strncmp(kv, guest_proxy_vars[i][0], n) == 0 && kv[n] == '=')
			return true;
	}
	return false;
}

/* Appends one record (vm-request.h) to @f. */
static int rec(FILE *f, char type, const char *val)
{
	if (fputc(type, f) == EOF || fputs(val, f) == EOF || fputc(0, f) == EOF)
		return -EIO;
	return 0;
}

int vm_request_env(FILE *f, char *const *envp, bool proxy)
{
	int r = 0;

	STRV_FOREACH(e, envp)
	if (r >= 0 && !(proxy && is_proxy_var(*e)))
		r = rec(f, VM_REC_ENV, *e);
	/* The proxy variables name the guest's way to ward's proxy. */
	for (size_t i = 0; proxy && r >= 0 && i < ELEMENTSOF(guest_proxy_vars); i++) {
		char kv[128];
		snprintf(kv, sizeof(kv), "%s=%s", guest_proxy_vars[i][0], guest_proxy_vars[i][1]);
		r = rec(f, VM_REC_ENV, kv);
	}
	return r;
}

static int rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st;
	(void)ftw;
	return (flag == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* The request, and the shares and links of the view's root. */
static int write_request(BackendPlan *p, char ***shares)
{
	const BackendInput *in = p->in;
	_cleanup_free_ char *path = NULL, *cwd = NULL;
	_cleanup_closedir_ DIR *root = NULL;
	struct dirent *de;
	bool proxy = in->policy->net_mode == NET_MODE_PROXY;
	FILE *f;
	int r = 0, n = 0;

	if (asprintf(&path, "%s/" VM_REQUEST_FILE, p->run_dir) < 0)
		return -ENOMEM;
	cwd = getcwd(NULL, 0);
	f = fopen(path, "wxe");
	if (!f)
		return -errno;
	STRV_FOREACH(a, in->argv)
	if (r >= 0 && !p->warm_mode)
		r = rec(f, VM_REC_ARG, *a);
	if (p->warm_mode) {
		/* A warm session: each command comes on ward.mux (vm-warm.c). */
		if (r >= 0)
			r = rec(f, VM_REC_WARM, "1");
	} else if (r >= 0)
		r = vm_request_env(f, in->envp, proxy);
	if (proxy && r >= 0)
		r = rec(f, VM_REC_NET, VM_NET_GUEST " " VM_NET_HOST);
	char num[32];
	if (r >= 0)
		r = rec(f, VM_REC_CWD, cwd ? cwd : in->workspace);
	snprintf(num, sizeof(num), "%u", (unsigned)getuid());
	if (r >= 0)
		r = rec(f, VM_REC_UID, num);
	snprintf(num, sizeof(num), "%u", (unsigned)getgid());
	if (r >= 0)
		r = rec(f, VM_REC_GID, num);
#if WARD_TEST_HOOKS
	const char *hostile = getenv("WARD_TEST_VM_HOSTILE");
	if (hostile && r >= 0) {
		log_warning("WARD_TEST_VM_HOSTILE=%s is set: the guest init misbehaves on the "
			    "control port on purpose (a test-only switch)",
			    hostile);
		p->test_hostile = true;
		r = rec(f, VM_REC_TEST_HOSTILE, hostile);
	}
#endif
	mode_t m = umask(022);
	umask(m);
	snprintf(num, sizeof(num), "%o", (unsigned)m);
	if (r >= 0)
		r = rec(f, VM_REC_UMASK, num);

	root = opendir("/");
	if (!root)
		r = -errno;
	while (r >= 0 && (de = readdir(root))) {
		struct stat st;
		char buf[4096], abs[300], line[4400];
		if (skipped(de->d_name) || strlen(de->d_name) > 200 || strpbrk(de->d_name, " ,=\"\\"))
			continue;
		snprintf(abs, sizeof(abs), "/%s", de->d_name);
		if (lstat(abs, &st) < 0)
			continue;
		if (S_ISLNK(st.st_mode)) {
			ssize_t k = readlink(abs, buf, sizeof(buf) - 1);
			if (k <= 0)
				continue;
			buf[k] = 0;
			if (strchr(buf, ' '))
				continue;
			snprintf(line, sizeof(line), "%s %s", abs, buf);
			r = rec(f, VM_REC_LINK, line);
		} else if (S_ISDIR(st.st_mode)) {
			if (++n > VM_MAX_SHARES) {
				r = -E2BIG;
				break;
			}
			snprintf(buf, sizeof(buf), "v%d %s", n, abs);
			r = rec(f, VM_REC_SHARE, buf);
			if (r >= 0)
				r = strv_extend(shares, buf);
		}
	}
	if (fclose(f) != 0 && r >= 0)
		r = -errno;
	return r;
}

static unsigned guest_mem_mb(const WardPolicy *pol)
{
	if (!pol->memory_mb)
		return VM_DEFAULT_MEM_MB;
	return (unsigned)(pol->memory_mb - VM_QEMU_SHARE_MB);
}

static int build_argv(BackendPlan *p, char *const *shares)
{
	char ***a = &p->argv;
	int r = 0;

	r |= strv_extend(a, "/bin/sh");
	r |= strv_extend(a, "-c");
	r |= strv_extend(a, p->warm_mode ? WARM_WRAP : SHELL_WRAP);
	r |= strv_extend(a, "ward-t3");
	r |= strv_extend(a, p->qemu);
	VmMachine m = { .image_dir = p->image_dir, .console = "file:" VM_FIFO_CON,
			.mem_mb = p->mem_mb, .kvm = p->engine.kvm };
	r |= vm_machine_args(a, &m);
	if (p->warm_mode) {
		/* Named after the session: `pgrep -f ward-session-ID` finds it. */
		if (p->in->session_id) {
			r |= strv_extend(a, "-name");
			r |= strv_extendf(a, "ward-session-%s", p->in->session_id);
		}
		r |= strv_extend(a, "-device");
		r |= strv_extend(a, "virtio-serial-device,max_ports=3");
		r |= strv_extend(a, "-chardev");
		r |= strv_extendf(a, "socket,id=mux,path=%s/" VM_MUX_SOCKET ",server=on,wait=off",
				  p->run_dir);
		r |= strv_extend(a, "-device");
		r |= strv_extend(a, "virtserialport,chardev=mux,name=" VM_MUX_PORT);
		goto net;
	}
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtio-serial-device,max_ports=6");
	r |= strv_extend(a, "-chardev");
	r |= strv_extend(a, "file,id=out,path=" VM_FIFO_OUT ",append=on");
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtserialport,chardev=out,name=ward.out");
	r |= strv_extend(a, "-chardev");
	r |= strv_extend(a, "file,id=err,path=" VM_FIFO_ERR ",append=on");
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtserialport,chardev=err,name=ward.err");
	/* stdin: QEMU's own stdin, the FIFO SHELL_WRAP relays the caller's
	 * stdin into (not a terminal: QEMU changes no modes). */
	r |= strv_extend(a, "-chardev");
	r |= strv_extend(a, "stdio,id=in,signal=off");
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtserialport,chardev=in,name=ward.in");
	/* Signals, host to guest (a FIFO SHELL_WRAP holds open). */
	r |= strv_extend(a, "-chardev");
	r |= strv_extend(a, "pipe,id=sig,path=" VM_FIFO_SIG);
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtserialport,chardev=sig,name=ward.sig");
net:
	if (p->in->policy->net_mode == NET_MODE_PROXY) {
		/* User networking, in the T2 sandbox's network namespace: the
		 * guest's 10.0.2.2 is that namespace's 127.0.0.1, where ward's
		 * proxy listens; every other connect is QEMU's, from inside
		 * the namespace (docs/t3.md). No DHCP, TFTP or SMB. */
		r |= strv_extend(a, "-netdev");
		r |= strv_extend(a, "user,id=net0,net=10.0.2.0/24,host=" VM_NET_HOST
				    ",ipv6=off,restrict=off");
		r |= strv_extend(a, "-device");
		r |= strv_extend(a, "virtio-net-device,netdev=net0");
	}
	/* Warm too: a failure before the guest init serves is reported there. */
	r |= strv_extend(a, "-chardev");
	r |= strv_extendf(a, "file,id=ctl,path=%s/status", p->run_dir);
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtserialport,chardev=ctl,name=ward.ctl");
	r |= strv_extend(a, "-fsdev");
	r |= strv_extendf(a, "local,id=req,path=%s,security_model=none,readonly=on", p->run_dir);
	r |= strv_extend(a, "-device");
	r |= strv_extend(a, "virtio-9p-device,fsdev=req,mount_tag=" VM_TAG_REQUEST);
	/* The shares: only the directories the view has, which only the view
	 * knows: SHELL_WRAP, in the sandbox, adds those that exist. */
	r |= strv_extend(a, "--ward-shares");
	STRV_FOREACH(s, shares) {
		const char *sp = strchr(*s, ' ');
		r |= strv_extendf(a, "%.*s", (int)(sp - *s), *s);
		r |= strv_extend(a, sp + 1);
	}
	return r < 0 ? -ENOMEM : 0;
}

/* A warm session's loop (SandboxServe): the caller's (session-server.c),
 * told of the VM, whose degraded protections are the session's too. */
static int t3_serve(void *userdata, const SandboxSession *s)
{
	BackendPlan *p = userdata;
	SandboxSession s2 = *s;

	strv_free(p->degraded);
	p->degraded = NULL;
	for (size_t i = 0; s->degraded && s->degraded[i]; i++)
		if (strv_extend(&p->degraded, s->degraded[i]) < 0)
			return 0;
	if ((!p->engine.kvm && strv_extend(&p->degraded, "vm-engine-tcg") < 0) ||
	    (p->engine.test_no_kvm && strv_extend(&p->degraded, "test-switch-vm-no-kvm") < 0) ||
	    (p->test_hostile && strv_extend(&p->degraded, "test-switch-vm-hostile") < 0))
		return 0;
	p->warm.degraded = p->degraded;
	s2.degraded = p->degraded;
	s2.guest = &p->warm;
	return p->in->serve->loop(p->in->serve->userdata, &s2);
}

static int t3_acquire(BackendPlan *p, WardError *reterr)
{
	const BackendInput *in = p->in;
	_cleanup_free_ char *base = NULL;
	_cleanup_strv_ char **shares = NULL;
	int r;

	if ((r = vm_qemu_path(&p->qemu)) < 0)
		return ward_error_set(reterr, "vm", -r, "qemu-system-x86_64 not found");
	if ((r = vm_image_find(&p->image_dir)) < 0)
		return ward_error_set(reterr, "vm", -r,
				      "no guest image: run 'ward setup vm' once");
	/* The run's dir: beside the default image dir (outside the state dir,
	 * which every sandbox hides, and outside /tmp, which is its own). */
	if ((r = vm_image_default_dir(&base)) < 0)
		return ward_error_set(reterr, "vm", -r, "ward's data directory");
	{
		_cleanup_free_ char *runs = NULL, *tmpl = NULL;
		if (asprintf(&runs, "%s-runs", base) < 0 || asprintf(&tmpl, "%s/XXXXXX", runs) < 0)
			return -ENOMEM;
		if ((r = mkdir_p(runs, 0700)) < 0)
			return ward_error_set(reterr, "vm", -r, "cannot make %s", runs);
		if (!mkdtemp(tmpl))
			return ward_error_set(reterr, "vm", errno, "cannot make a run dir in %s", runs);
		p->run_dir = TAKE_PTR(tmpl);
	}
	p->warm_mode = in->serve != NULL;
	if ((r = write_request(p, &shares)) < 0)
		return ward_error_set(reterr, "vm", -r, "cannot write the guest's request in %s%s",
				      p->run_dir, r == -E2BIG ? " (too many top-level directories)" : "");
	p->mem_mb = guest_mem_mb(in->policy);
	vm_engine_choose(p->qemu, p->image_dir, true, &p->engine);
	if ((r = build_argv(p, shares)) < 0)
		return r;
	if (strv_extend(&p->envp, "PATH=/usr/bin:/bin") < 0 ||
	    strv_extendf(&p->envp, "WARD_VM_CONSOLE=%s/console", p->run_dir) < 0 ||
	    strv_extendf(&p->envp, "WARD_VM_QEMU_ERR=%s/qemu.err", p->run_dir) < 0)
		return -ENOMEM;

	/* The T2 sandbox QEMU runs in: the same policy, plus the image (read)
	 * and the run dir (read-write: QEMU writes the status and console). */
	p->pol2 = *in->policy;
	p->read = strv_copy(in->policy->fs_read);
	p->read_write = strv_copy(in->policy->fs_read_write);
	if ((in->policy->fs_read && !p->read) || (in->policy->fs_read_write && !p->read_write) ||
	    strv_extend(&p->read, p->image_dir) < 0 || strv_extend(&p->read_write, p->run_dir) < 0)
		return -ENOMEM;
	p->pol2.fs_read = p->read;
	p->pol2.fs_read_write = p->read_write;
	p->in2 = *in;
	p->in2.policy = &p->pol2;
	p->in2.argv = p->argv;
	p->in2.envp = p->envp;
	p->in2.dev_kvm = p->engine.kvm;
	if (p->warm_mode) {
		p->warm = (VmWarm){ .argv = p->argv, .envp = p->envp, .run_dir = p->run_dir,
				    .proxy = in->policy->net_mode == NET_MODE_PROXY, .mux = -1,
				    .qemu_pidfd = -1, .relay = -1 };
		p->serve = (SandboxServe){ .loop = t3_serve, .userdata = p };
		p->in2.serve = &p->serve;
	}
	if ((r = backend_linux_t2.plan(&p->in2, &p->t2, reterr)) < 0)
		return r;
	return backend_linux_t2.acquire(p->t2, reterr);
}

static cJSON *t3_describe(const BackendPlan *p)
{
	cJSON *d = p->t2 ? backend_linux_t2.describe(p->t2) : cJSON_CreateObject();
	cJSON *vm, *deg;

	if (!d)
		return NULL;
	vm = cJSON_AddObjectToObject(d, "vm");
	if (vm) {
		cJSON_AddStringToObject(vm, "engine", p->engine.kvm ? "kvm" : "tcg");
		cJSON_AddStringToObject(vm, "cost", vm_engine_cost(&p->engine));
		cJSON_AddStringToObject(vm, "engine_reason", p->engine.why);
		if (p->engine.probed_now || p->engine.cached)
			cJSON_AddNumberToObject(vm, "kvm_probe_ms", p->engine.probe_ms);
		cJSON_AddNumberToObject(vm, "memory_mb", p->mem_mb);
		if (p->image_dir)
			cJSON_AddStringToObject(vm, "image", p->image_dir);
	}
	/* TCG: no hardware virtualization; --strict refuses it. */
	deg = cJSON_GetObjectItem(d, "degraded");
	if (!deg)
		deg = cJSON_AddArrayToObject(d, "degraded");
	if (deg && !p->engine.kvm)
		cJSON_AddItemToArray(deg, cJSON_CreateString("vm-engine-tcg"));
	if (deg && p->engine.test_no_kvm)
		cJSON_AddItemToArray(deg, cJSON_CreateString("test-switch-vm-no-kvm"));
	if (deg && p->test_hostile)
		cJSON_AddItemToArray(deg, cJSON_CreateString("test-switch-vm-hostile"));
	return d;
}

static char *const *t3_protected(const BackendPlan *p)
{
	return p->t2 ? backend_linux_t2.protected_paths(p->t2) : NULL;
}

static void console_tail(const BackendPlan *p, char *buf, size_t n)
{
	vm_console_tail(p->run_dir, buf, n);
}

/* The control port's file: exactly one "status N\n" or "signal N\n" (or
 * the guest init's "setup STEP ERRNO\n"). Anything else, nothing, or
 * more: -EBADMSG. */
static int read_status(const BackendPlan *p, int *status, int *sig, char *setup, size_t n)
{
	_cleanup_free_ char *path = NULL;
	_cleanup_close_ int fd = -1;
	char buf[128], word[16], extra;
	ssize_t k;
	int v, e;

	if (asprintf(&path, "%s/status", p->run_dir) < 0)
		return -ENOMEM;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return -errno;
	k = read(fd, buf, sizeof(buf) - 1);
	if (k <= 0 || k == (ssize_t)sizeof(buf) - 1 || buf[k - 1] != '\n' ||
	    memchr(buf, 0, (size_t)k))
		return -EBADMSG;
	buf[k] = 0;
	if (strchr(buf, '\n') != buf + k - 1)
		return -EBADMSG;
	if (sscanf(buf, "setup %63s %d%c", setup, &e, &extra) == 3 && extra == '\n') {
		(void)n;
		return -EPROTO;
	}
	if (sscanf(buf, "%15s %d%c", word, &v, &extra) != 3 || extra != '\n')
		return -EBADMSG;
	if (strcmp(word, "status") == 0 && v >= 0 && v <= 255) {
		*status = v;
		*sig = 0;
		return 0;
	}
	if (strcmp(word, "signal") == 0 && v > 0 && v < 65) {
		*status = -1;
		*sig = v;
		return 0;
	}
	return -EBADMSG;
}

static int t3_run(BackendPlan *p, BackendResult *ret, WardError *reterr)
{
	char tail[1024], setup[64] = "";
	int r, status = 0, sig = 0;

	if (!p->t2)
		return ward_error_set(reterr, "plan", EINVAL, "the VM was not acquired");
	r = backend_linux_t2.run(p->t2, ret, reterr);
	if (r < 0 || p->warm_mode)
		return r;
	/* The sandbox's own outcomes (timeout, memory, setup) stand as they are. */
	if (ret->timed_out || ret->oom_killed || ret->parent_died)
		return 0;
	if (ret->setup_failed) {
		log_error("tier 3: QEMU could not start in the sandbox");
		return 0;
	}
	/* A well-formed status is the guest's report, whatever the wrapper's
	 * exit (a signal may have interrupted its wait). */
	r = read_status(p, &status, &sig, setup, sizeof(setup));
	if (r < 0 && r != -EPROTO && ret->signal == 0 && ret->status > VM_EXIT_SIGNAL_BASE &&
	    ret->status < VM_EXIT_SIGNAL_BASE + 32) {
		/* A second signal ended the VM before the command did. */
		sig = ret->status - VM_EXIT_SIGNAL_BASE;
		log_warning("tier 3: a second signal %d ended the VM", sig);
		ret->status = -1;
		ret->signal = sig;
		ret->exit_code = 128 + sig;
		return 0;
	}
	if (r < 0 && r != -EPROTO && ret->status != 0)
		r = -ECHILD;
	if (r >= 0) {
		ret->status = status;
		ret->signal = sig;
		ret->exit_code = sig ? 128 + sig : status;
		return 0;
	}
	console_tail(p, tail, sizeof(tail));
	ret->exit_code = 125;
	ret->setup_failed = true;
	if (r == -ECHILD)
		(void)ward_error_set(&ret->error, "vm", EIO,
				     "QEMU failed (exit status %d, signal %d)", ret->status,
				     ret->signal);
	else if (r == -EPROTO)
		(void)ward_error_set(&ret->error, "vm", EIO, "the guest init failed at %s", setup);
	else
		(void)ward_error_set(&ret->error, "vm", EBADMSG,
				     "the VM stopped without a valid exit status");
	ret->status = -1;
	ret->signal = 0;
	log_error("tier 3: %s", ret->error.detail);
	if (tail[0])
		log_error("tier 3: the guest console's last lines:\n%s", tail);
	return 0;
}

static int t3_finish(BackendPlan *p, const BackendResult *res, char ***ret_lines)
{
	return p->t2 ? backend_linux_t2.finish(p->t2, res, ret_lines) : 0;
}

static BackendPlan *t3_free(BackendPlan *p)
{
	if (!p)
		return NULL;
	backend_linux_t2.free(p->t2);
	if (p->warm.mux >= 0 && p->warm_mode)
		close(p->warm.mux);
	if (p->warm.qemu_pidfd >= 0 && p->warm_mode)
		close(p->warm.qemu_pidfd);
	strv_free(p->degraded);
	if (p->run_dir)
		(void)nftw(p->run_dir, rm_one, 8, FTW_DEPTH | FTW_PHYS);
	free(p->run_dir);
	free(p->image_dir);
	free(p->qemu);
	strv_free(p->argv);
	strv_free(p->envp);
	strv_free(p->read);
	strv_free(p->read_write);
	free(p);
	return NULL;
}

const Backend backend_vm_t3 = {
	.tier = 3,
	.name = "linux-t3-qemu",
	.flags = BACKEND_ISOLATED | BACKEND_SESSION,
	.probe = t3_probe,
	.plan = t3_plan,
	.acquire = t3_acquire,
	.describe = t3_describe,
	.protected_paths = t3_protected,
	.notes = NULL,
	.run = t3_run,
	.finish = t3_finish,
	.free = t3_free,
};
