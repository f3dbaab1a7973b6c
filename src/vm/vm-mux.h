/* The frames of a warm tier-3 session (docs/t3.md, "Warm sessions"): one
 * virtio-serial port, "ward.mux", between the session's supervisor (host,
 * vm-warm.c) and the guest init (guest-init.c), which takes one command at
 * a time. Shared by both; no dependency but the C library.
 *
 * A frame: a 9-byte head (type, the exec's id as 4 bytes little endian,
 * the payload's length as 4 bytes little endian), then the payload.
 *
 * Host to guest: HELLO (once, after connecting), REQUEST (the command:
 * vm-request.h records a, e, c), STDIN (bytes), STDIN_EOF, SIGNAL (one
 * byte: the signal), KILL (end the command: --timeout, a client gone).
 * Guest to host: READY (once, answers HELLO), STDOUT, STDERR, ACK (4 bytes:
 * how many stdin bytes the guest took), EXIT ("status N\n" or "signal N\n").
 *
 * The host sends at most VM_MUX_WINDOW stdin bytes the guest has not
 * acknowledged, so the guest's buffer is bounded. The host parses every
 * guest frame strictly (vm-warm.c): an unknown type, a length over
 * VM_MUX_MAX, another exec's id, or a malformed EXIT ends the session's
 * VM (the exec fails with 125). The command's output reaches the port
 * only framed as STDOUT/STDERR by the guest init: it cannot forge EXIT. */
#pragma once

#include <stdint.h>

#define VM_MUX_PORT "ward.mux"
#define VM_MUX_SOCKET "mux.sock" /* in the run dir: QEMU listens, the supervisor connects */
#define VM_MUX_HEAD 9
#define VM_MUX_MAX (256u * 1024)  /* a frame's payload, at most */
#define VM_MUX_CHUNK (32u * 1024) /* what one STDIN/STDOUT/STDERR frame carries, at most */
#define VM_MUX_WINDOW (64u * 1024)

enum {
	VM_MUX_HELLO = 'H',
	VM_MUX_REQUEST = 'R',
	VM_MUX_STDIN = 'I',
	VM_MUX_STDIN_EOF = 'E',
	VM_MUX_SIGNAL = 'S',
	VM_MUX_KILL = 'K',
	VM_MUX_READY = 'Y',
	VM_MUX_STDOUT = 'O',
	VM_MUX_STDERR = 'D',
	VM_MUX_ACK = 'A',
	VM_MUX_EXIT = 'X',
};

static inline void vm_mux_head(unsigned char h[VM_MUX_HEAD], char type, uint32_t id, uint32_t len)
{
	h[0] = (unsigned char)type;
	for (int i = 0; i < 4; i++) {
		h[1 + i] = (unsigned char)(id >> (8 * i));
		h[5 + i] = (unsigned char)(len >> (8 * i));
	}
}

static inline uint32_t vm_mux_u32(const unsigned char *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
