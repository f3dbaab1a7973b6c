/* The relay of a warm tier-3 session (docs/t3.md, "Warm sessions"): one
 * process, forked from the session's supervisor once its VM answered,
 * that carries each command between the `ward exec` client's descriptors
 * and the port ward.mux (vm-mux.h), and parses everything the guest sends.
 * A guest that breaks the protocol can at worst end the relay, never the
 * supervisor, which then marks the VM dead (vm-warm.c).
 *
 * The supervisor talks to it on a SOCK_SEQPACKET pair, in vm-mux.h heads
 * with the types below: EXEC (with four descriptors: the client's stdin,
 * stdout and stderr, and the write end of the command's report pipe; the
 * request's payload follows in messages of at most VM_RELAY_CHUNK bytes),
 * SIGNAL (one byte), END (the command is to end: --timeout, a client
 * gone). SIGNAL and END for a command that is not the running one are
 * stale and dropped. The report is one line, "status N", "signal N" or
 * "error WHY", and the pipe's close: a relay that died leaves only the
 * close. After an error the relay exits. */
#pragma once

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum {
	VM_RELAY_EXEC = 'x',
	VM_RELAY_SIGNAL = 's',
	VM_RELAY_END = 'e',
};

#define VM_RELAY_CHUNK (64u * 1024)

/* Forks the relay for the connected port @mux; *@ret_ctl is the
 * supervisor's end of the control pair. The relay's pid, or -errno. */
pid_t vm_relay_start(int mux, int *ret_ctl);

/* The supervisor's side: command @id with @fds (stdin, stdout, stderr,
 * the report pipe's write end) and its request frame's payload. 0, or
 * -errno (-EPIPE: the relay is gone). */
int vm_relay_exec(int ctl, uint32_t id, const int fds[4], const char *req, size_t len);

/* Signal @sig to command @id's process group in the guest; 0: end it. */
void vm_relay_signal(int ctl, uint32_t id, int sig);

/* One frame (vm-mux.h) to the port, whole. 0 or -errno. */
int vm_mux_send(int mux, char type, uint32_t id, const void *data, size_t n);
