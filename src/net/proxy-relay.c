/* The relay of an established connection, with half-close passed on
 * (shutdown(SHUT_WR) once a side's EOF is flushed). A flow starts by
 * recv() into a small per-direction buffer and send() on; once it shows
 * itself a bulk flow (full reads, the buffer grown to BULK_AT), it moves
 * to splice(2): socket -> pipe -> socket, the payload's pages passed
 * along by reference instead of copied through user space.
 *
 * Measured with bench/proxy.sh (1 GiB over loopback, kernel 6.18, 2 vCPUs):
 * see docs/network.md "Performance" for the figures. Earlier kernels
 * (and 64 KiB pipes) made splicing slower than one copy; since 6.5 the
 * socket side of a splice takes the pages as they are (MSG_SPLICE_PAGES),
 * and a 1 MiB pipe amortizes the calls. ProxyConfig.relay_copy keeps the
 * copy path for comparison. Buffers and pipes exist only for flows that
 * need them, within a budget for the whole proxy, so a thousand idle
 * tunnels cost little memory and no pipe. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/proxy-internal.h"

#define BUF_MIN (64 * 1024)
#define BUF_MAX (2 * 1024 * 1024)
#define BUF_BUDGET (256 * 1024 * 1024) /* all relay buffers of one proxy */
/* Bytes a connection may move per direction before it yields to others. */
#define RELAY_BUDGET (4 * 1024 * 1024)
/* A flow whose buffer grew this far is bulk: splice from here on. */
#define BULK_AT (256 * 1024)
#define PIPE_SIZE (1024 * 1024)

static void pipe_close(Conn *c, Flow *f)
{
	if (f->pipe_r >= 0) {
		(void)close(f->pipe_r);
		(void)close(f->pipe_w);
		c->proxy->relay_bytes -= PIPE_SIZE;
		f->pipe_r = f->pipe_w = -1;
	}
}

void flow_done(Conn *c, Flow *f)
{
	pipe_close(c, f);
	free(f->pend);
	f->pend = NULL;
	f->pend_len = f->pend_off = 0;
	if (f->buf) {
		c->proxy->relay_bytes -= f->buf_cap;
		free(f->buf);
		f->buf = NULL;
		f->buf_cap = f->buf_len = f->buf_off = 0;
	}
}

static int flow_alloc(Conn *c, Flow *f, size_t cap)
{
	char *b = malloc(cap);

	if (!b)
		return -ENOMEM;
	free(f->buf);
	c->proxy->relay_bytes += cap - f->buf_cap;
	f->buf = b;
	f->buf_cap = cap;
	return 0;
}

int relay_start(Conn *c)
{
	int r = flow_alloc(c, &c->up, BUF_MIN);

	return r < 0 ? r : flow_alloc(c, &c->down, BUF_MIN);
}

/* What a write of @n bytes to @dst (send or splice) means: 1 bytes
 * went; 2 write again (EINTR); 0 wait, @dst would block; -errno. */
static int write_outcome(Endpoint *dst, ssize_t n)
{
	if (n >= 0)
		return 1;
	if (errno == EINTR)
		return 2;
	if (errno == EAGAIN) {
		dst->can_write = false;
		return 0;
	}
	return -errno;
}

/* Send [*off, len) of @b to @dst. 1 when all sent, 0 to wait, -errno. */
static int send_some(Endpoint *dst, const char *b, size_t len, size_t *off, uint64_t *count)
{
	int r;

	while (*off < len) {
		ssize_t n;
		if (!dst->can_write)
			return 0;
		n = send(dst->fd, b + *off, len - *off, MSG_NOSIGNAL);
		if ((r = write_outcome(dst, n)) != 1) {
			if (r == 2)
				continue;
			return r;
		}
		*off += (size_t)n;
		if (count)
			*count += (uint64_t)n;
	}
	return 1;
}

static int send_pending(Flow *f, Endpoint *dst)
{
	int r;

	if (!f->pend)
		return 1;
	r = send_some(dst, f->pend, f->pend_len, &f->pend_off, NULL);
	if (r <= 0)
		return r;
	free(f->pend);
	f->pend = NULL;
	f->pend_len = f->pend_off = 0;
	return 1;
}

int relay_flush_client(Conn *c)
{
	return send_pending(&c->down, &c->client);
}

/* What a read of @n bytes from @src (recv or splice) means for a pump:
 * 1 bytes arrived; 2 read again (EINTR, or the EOF now noted in @src);
 * 0 wait, @src would block; -errno. */
static int read_outcome(Endpoint *src, ssize_t n)
{
	if (n > 0)
		return 1;
	if (n == 0) {
		src->eof = true;
		return 2;
	}
	if (errno == EINTR)
		return 2;
	if (errno == EAGAIN) {
		src->can_read = false;
		return 0;
	}
	return -errno;
}

/* Turn @f into a spliced flow. 0, or -errno when no pipe could be had
 * (the copy path goes on then). */
static int pipe_open(Conn *c, Flow *f)
{
	int p[2];

	if (c->proxy->cfg.relay_copy || c->proxy->relay_bytes + PIPE_SIZE > BUF_BUDGET)
		return -ENOBUFS;
	if (pipe2(p, O_CLOEXEC | O_NONBLOCK) < 0)
		return -errno;
	/* A larger pipe means fewer calls per byte; the pages are the
	 * payload's own, held only while in flight. Where the limit for
	 * unprivileged pipes says no, the default size still works. */
	(void)fcntl(p[1], F_SETPIPE_SZ, PIPE_SIZE);
	f->pipe_r = p[0];
	f->pipe_w = p[1];
	f->pipe_len = 0;
	c->proxy->relay_bytes += PIPE_SIZE;
	return 0;
}

/* The spliced flow: empty the pipe into dst, then fill it from src. Same
 * contract as flow_pump. EAGAIN is the socket's: while the pipe holds
 * bytes, writing it out can only block on dst, and an empty pipe can
 * only leave src to block a read. */
static int splice_pump(Conn *c, Flow *f, Endpoint *src, Endpoint *dst, bool *more)
{
	size_t budget = RELAY_BUDGET;
	ssize_t n;
	int r;

	for (;;) {
		while (f->pipe_len > 0) {
			if (!dst->can_write)
				return 0;
			n = splice(f->pipe_r, NULL, dst->fd, NULL, f->pipe_len,
				   SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if ((r = write_outcome(dst, n)) != 1) {
				if (r == 2)
					continue;
				return r;
			}
			f->pipe_len -= (size_t)n;
			f->bytes += (uint64_t)n;
			c->active_ms = c->proxy->now_ms;
		}
		if (src->eof)
			return 1;
		if (!src->can_read)
			return 0;
		if (budget == 0) {
			*more = true;
			return 0;
		}
		n = splice(src->fd, NULL, f->pipe_w, NULL, PIPE_SIZE, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
		if ((r = read_outcome(src, n)) != 1) {
			if (r == 2)
				continue;
			return r;
		}
		f->pipe_len = (size_t)n;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
	}
}

/* Returns 1 when src's EOF has been passed on, 0 to wait, -errno. */
static int flow_pump(Conn *c, Flow *f, Endpoint *src, Endpoint *dst, bool *more)
{
	size_t budget = RELAY_BUDGET;
	ssize_t n;
	int r;

	for (;;) {
		r = send_pending(f, dst);
		if (r <= 0)
			return r;
		if (f->buf_off < f->buf_len) {
			r = send_some(dst, f->buf, f->buf_len, &f->buf_off, &f->bytes);
			if (r <= 0)
				return r;
			c->active_ms = c->proxy->now_ms;
		}
		/* The buffer is empty here: reading stops while the other side
		 * does not take what was read, which is the flow control. */
		f->buf_len = f->buf_off = 0;
		if (f->pipe_r >= 0 || (f->buf_cap >= BULK_AT && !src->eof && pipe_open(c, f) == 0)) {
			r = splice_pump(c, f, src, dst, more);
			if (r <= 0)
				return r;
			break;
		}
		if (src->eof)
			break;
		if (!src->can_read)
			return 0;
		if (budget == 0) {
			*more = true;
			return 0;
		}
		n = recv(src->fd, f->buf, f->buf_cap, 0);
		if ((r = read_outcome(src, n)) != 1) {
			if (r == 2)
				continue;
			return r;
		}
		f->buf_len = (size_t)n;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
		/* A full read means a bulk flow: grow (after sending) so that the
		 * next reads take more per call. */
		if ((size_t)n == f->buf_cap && f->buf_cap < BUF_MAX &&
		    c->proxy->relay_bytes + f->buf_cap <= BUF_BUDGET) {
			r = send_some(dst, f->buf, f->buf_len, &f->buf_off, &f->bytes);
			if (r < 0)
				return r;
			if (r == 1 && flow_alloc(c, f, f->buf_cap * 2) == 0)
				f->buf_len = f->buf_off = 0;
			c->active_ms = c->proxy->now_ms;
		}
	}
	if (!dst->shut_wr) {
		/* ENOTCONN: the peer is already gone; the other direction's
		 * errors close the connection. */
		(void)shutdown(dst->fd, SHUT_WR);
		dst->shut_wr = true;
	}
	return 1;
}

int relay_pump(Conn *c, bool *more)
{
	int up, down;

	up = flow_pump(c, &c->up, &c->client, &c->upstream, more);
	if (up < 0)
		return up;
	down = flow_pump(c, &c->down, &c->upstream, &c->client, more);
	if (down < 0)
		return down;
	return up == 1 && down == 1;
}
