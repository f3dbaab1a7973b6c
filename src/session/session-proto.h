/* The messages on a live session's control socket (docs/sessions.md):
 * `ward exec`, `ward session ps|stop` -> the session's supervisor, one
 * SOCK_SEQPACKET message each way per request (a `ward exec` may send
 * signal requests after its exec). Pure: the parser is a fuzz target
 * (tests/fuzz/fuzz-session.c); nothing here does I/O.
 *
 * A request: SessionReqHead, then `len` bytes of NUL-terminated strings:
 * cwd ("" for the default), n_argv argv strings, n_env environment strings
 * (NAME=VALUE), n_extra --env strings (NAME=VALUE). An exec's three
 * descriptors (its stdin, stdout, stderr) travel with it (SCM_RIGHTS).
 * A reply: SessionReplyHead, then `len` bytes of text. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SESSION_PROTO_MAGIC 0x31727377u /* "wsr1" */
#define SESSION_REPLY_MAGIC 0x31707377u /* "wsp1" */
/* Below the kernel's default socket buffer (a SOCK_SEQPACKET message is
 * sent whole) and what pid 1 takes (SANDBOX_EXEC_MAX). */
#define SESSION_REQ_MAX (112 * 1024)
#define SESSION_REQ_STRINGS_MAX 4000
#define SESSION_REPLY_MAX (192 * 1024)

typedef enum SessionReqKind {
	SESSION_REQ_EXEC = 1,
	SESSION_REQ_PS = 2,
	SESSION_REQ_STOP = 3,
	SESSION_REQ_SIGNAL = 4, /* after an exec, on its connection: value = the signal */
	_SESSION_REQ_MAX,
} SessionReqKind;

typedef enum SessionReqFlags {
	SESSION_EXEC_BACKGROUND = 1 << 0, /* outlives the `ward exec` that started it */
	SESSION_EXEC_RESULT = 1 << 1,     /* the reply carries the result object */
	SESSION_SIGNAL_GROUP = 1 << 2,    /* to the command's foreground group, as a terminal */
	SESSION_PS_JSON = 1 << 3,
	SESSION_EXEC_PTY = 1 << 4,        /* a terminal on stdio: a pty, relayed by the client */
	_SESSION_REQ_FLAGS_ALL = (1 << 5) - 1,
} SessionReqFlags;

typedef struct SessionReqHead {
	uint32_t magic;
	uint32_t kind;
	uint32_t flags;
	uint32_t value;   /* exec: timeout in seconds (0: the session's); signal: the signal */
	uint32_t n_argv, n_env, n_extra;
	uint32_t len;
} SessionReqHead;

typedef struct SessionRequest {
	SessionReqKind kind;
	uint32_t flags;
	uint32_t value;
	const char *cwd;    /* NULL: the default */
	char **argv;        /* NULL-terminated; pointers into the parsed buffer */
	char **env;
	char **extra;
} SessionRequest;

typedef enum SessionReplyKind {
	SESSION_REP_EXIT = 1,    /* code: the exit code; text: the result object or "" */
	SESSION_REP_STARTED = 2, /* a background command runs; code: its id */
	SESSION_REP_ERROR = 3,   /* code: the exit code; text: why */
	SESSION_REP_OK = 4,      /* text: the answer (ps) */
	SESSION_REP_PTY = 5,     /* the command's pty master is passed (SESSION_EXEC_PTY) */
	SESSION_REP_STOPPED = 6, /* code: the signal that stopped the command (job control) */
	SESSION_REP_NOTE = 7,    /* text: a line for the client's stderr (a cold run's hint) */
} SessionReplyKind;

typedef struct SessionReplyHead {
	uint32_t magic;
	uint32_t kind;
	int32_t code;
	uint32_t len;
} SessionReplyHead;

/* Parse @n bytes at @buf (a request as received). 0, or -EBADMSG with
 * a reason in @err. The strings point into @buf, which must outlive
 * @ret; free @ret with session_request_done(). */
int session_request_parse(const char *buf, size_t n, SessionRequest *ret, char *err, size_t errlen);
void session_request_done(SessionRequest *r);

/* Encode @r (cwd may be NULL); *@ret_buf is the caller's to free.
 * -E2BIG when it does not fit in one message. */
int session_request_encode(const SessionRequest *r, char **ret_buf, size_t *ret_len);

/* A signal a `ward exec` may pass on (the ones a terminal or a harness
 * sends to end or interrupt a command, and SIGCONT for one that stopped). */
bool session_signal_allowed(int sig);
