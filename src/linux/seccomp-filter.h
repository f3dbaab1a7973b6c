/* The seccomp filter, compiled with libseccomp in the parent and loaded in
 * the child as the very last step before execve. docs/seccomp.md lists every
 * entry and why it is there. */
#pragma once

#include <stdbool.h>

typedef struct SeccompProgram SeccompProgram;

typedef struct SeccompOptions {
	bool allow_nested_userns;   /* policy sandbox.allow_nested_sandbox */
	bool allow_ptrace;          /* policy sandbox.allow_ptrace */
} SeccompOptions;

/* Compile the filter to BPF (in memory). */
int seccomp_program_new(const SeccompOptions *opt, SeccompProgram **ret);
SeccompProgram *seccomp_program_free(SeccompProgram *p);
/* Child side: install with SECCOMP_SET_MODE_FILTER (needs no_new_privs).
 * No allocation. */
int seccomp_program_load(const SeccompProgram *p);
