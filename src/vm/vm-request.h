/* The request a tier-3 run hands its guest (src/vm/guest-init.c): a file
 * "request" in the read-only 9p share "wardreq". Records: one type byte,
 * the value, a NUL. The host writes it (vm-plan.c); the guest parses it
 * strictly and refuses anything else. */
#pragma once

#define VM_TAG_REQUEST "wardreq"
#define VM_REQUEST_FILE "request"
#define VM_REQUEST_MAX (4u << 20)
/* A warm session's share whose whole tree is read-only in the view is
 * exported under its tag plus this suffix (backend-t3.c's WARM_WRAP): the
 * guest keeps its cache across commands; every other share of a warm
 * session is mounted uncached, so that the host's changes between two
 * commands are seen (docs/t3.md, "Coherence"). */
#define VM_TAG_RO_SUFFIX "ro"

enum {
	VM_REC_ARG = 'a',   /* one argv element, in order */
	VM_REC_ENV = 'e',   /* NAME=VALUE */
	VM_REC_CWD = 'c',   /* the working directory */
	VM_REC_UID = 'u',   /* decimal */
	VM_REC_GID = 'g',   /* decimal */
	VM_REC_UMASK = 'm', /* octal */
	VM_REC_SHARE = 's', /* "TAG PATH": mount 9p share TAG at PATH */
	VM_REC_LINK = 'l',  /* "PATH TARGET": a symlink at the root */
	VM_REC_NET = 'n',   /* "ADDR GATEWAY": eth0 up at ADDR/24 (network "proxy") */
	/* A warm session's boot request: no command; the guest init then
	 * takes one command at a time on the port ward.mux (vm-mux.h), each
	 * a REQUEST frame of a, e and c records. */
	VM_REC_WARM = 'W',
	/* Test builds only (WARD_TEST_VM_HOSTILE): the init misbehaves on the
	 * control port as a hostile guest would: "garbage", "double" (a forged
	 * "status 0" before the real one), "flood", "silent" (no status). */
	VM_REC_TEST_HOSTILE = 'T',
};
