/* The relay of an established connection: recv() into a per-direction
 * buffer, send() it on, with half-close passed on (shutdown(SHUT_WR) once a
 * side's EOF is flushed).
 *
 * Why not splice(): measured on loopback (bench/proxy.sh, kernel 6.18),
 * socket -> pipe -> socket splicing reached 0.40-0.47 of direct throughput
 * and a 1-4 MiB copy buffer 0.55-0.66; the per-page work of splicing TCP
 * skbs costs more than one copy of the bytes. Buffers start small and grow
 * only for flows that fill them, within a budget for the whole proxy, so a
 * thousand idle tunnels cost little memory. */
#include <errno.h>
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

void flow_done(Conn *c, Flow *f)
{
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

/* Send [*off, len) of @b to @dst. 1 when all sent, 0 to wait, -errno. */
static int send_some(Endpoint *dst, const char *b, size_t len, size_t *off, uint64_t *count)
{
	while (*off < len) {
		ssize_t n;
		if (!dst->can_write)
			return 0;
		n = send(dst->fd, b + *off, len - *off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				dst->can_write = false;
				return 0;
			}
			return -errno;
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
		if (src->eof)
			break;
		if (!src->can_read)
			return 0;
		if (budget == 0) {
			*more = true;
			return 0;
		}
		n = recv(src->fd, f->buf, f->buf_cap, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				src->can_read = false;
				return 0;
			}
			return -errno;
		}
		if (n == 0) {
			src->eof = true;
			continue;
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
