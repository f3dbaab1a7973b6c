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
} SeccompOptions;

/* Compile the filter to BPF (in memory). -EOPNOTSUPP when built without
 * libseccomp (-Dseccomp=disabled). */
int seccomp_program_new(const SeccompOptions *opt, SeccompProgram **ret);
/* Number of BPF instructions (for `ward probe` and the tests). */
size_t seccomp_program_len(const SeccompProgram *p);
/* Write the filter as libseccomp pseudo-code (PFC) to @fd, for debugging
 * and docs/seccomp.md. */
int seccomp_program_dump(const SeccompOptions *opt, int fd);
SeccompProgram *seccomp_program_free(SeccompProgram *p);
/* Child side: install with SECCOMP_SET_MODE_FILTER (needs no_new_privs).
 * No allocation. */
int seccomp_program_load(const SeccompProgram *p);
