/* The seccomp filter, compiled with libseccomp in the parent and loaded in
 * the child as the very last step before execve. docs/seccomp.md lists every
 * entry and why it is there. */
#pragma once

#include <stdbool.h>
#include <stddef.h>

typedef struct SeccompProgram SeccompProgram;

typedef struct SeccompOptions {
	bool allow_nested_userns;   /* policy sandbox.allow_nested_sandbox */
	bool allow_ptrace;          /* policy sandbox.allow_ptrace */
	/* Tier 1 (no network or IPC namespace): UDP and raw IPv4/IPv6
	 * sockets, SysV IPC and POSIX message queues are refused, since
	 * nothing else keeps them from the host's network and IPC objects. */
	bool tier1;
	/* Tier 1 without Landlock ABI 9: socket(AF_UNIX) is refused, since
	 * nothing else keeps a pathname socket's connect() from reaching any
	 * host service the user can reach (socketpair stays allowed). */
	bool deny_unix_socket;
} SeccompOptions;

/* How many option combinations there are, and the index of @opt among them
 * (the prebuilt table's order). */
#define SECCOMP_OPTION_COMBINATIONS 16
unsigned seccomp_options_index(const SeccompOptions *opt);
void seccomp_options_from_index(unsigned i, SeccompOptions *ret);

/* The filter for @opt. Compiled at build time (seccomp-gen.c runs
 * seccomp_program_compile for every option combination), so a run does
 * not pay libseccomp's ~1.3 ms; falls back to compiling. */
int seccomp_program_new(const SeccompOptions *opt, SeccompProgram **ret);
/* Compile the filter to BPF with libseccomp, now. -EOPNOTSUPP when built
 * without libseccomp (-Dseccomp=disabled). */
int seccomp_program_compile(const SeccompOptions *opt, SeccompProgram **ret);
/* A program from @len struct sock_filter instructions (copied). */
int seccomp_program_from_insns(const void *insns, size_t len, SeccompProgram **ret);
/* The instructions (struct sock_filter[seccomp_program_len()]). */
const void *seccomp_program_insns(const SeccompProgram *p);
/* Number of BPF instructions (for `ward probe` and the tests). */
size_t seccomp_program_len(const SeccompProgram *p);
/* Write the filter as libseccomp pseudo-code (PFC) to @fd, for debugging
 * and docs/seccomp.md. */
int seccomp_program_dump(const SeccompOptions *opt, int fd);
SeccompProgram *seccomp_program_free(SeccompProgram *p);
/* Child side: install with SECCOMP_SET_MODE_FILTER (needs no_new_privs).
 * No allocation. */
int seccomp_program_load(const SeccompProgram *p);
