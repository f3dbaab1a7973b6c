/* The relay of an established connection: splice() socket -> pipe -> socket
 * each way, so the bytes never enter the proxy's memory, with half-close
 * passed on (shutdown(SHUT_WR) once a side's EOF is flushed). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/proxy-internal.h"

/* Bytes a connection may move per direction before it yields to others. */
#define RELAY_BUDGET (1024 * 1024)
#define SPLICE_CHUNK (1024 * 1024)

void flow_done(Flow *f)
{
	for (int i = 0; i < 2; i++)
		if (f->pipe[i] >= 0) {
			(void)close(f->pipe[i]);
			f->pipe[i] = -1;
		}
	free(f->pend);
	f->pend = NULL;
	f->pend_len = f->pend_off = 0;
}

int relay_start(Conn *c)
{
	Flow *flows[2] = { &c->up, &c->down };

	for (int i = 0; i < 2; i++) {
		if (pipe2(flows[i]->pipe, O_NONBLOCK | O_CLOEXEC) < 0) {
			flows[i]->pipe[0] = flows[i]->pipe[1] = -1;
			return -errno;
		}
		/* A larger pipe halves the syscalls of a bulk transfer. Best
		 * effort: past pipe-user-pages-soft the kernel refuses, and the
		 * default 64 KiB still works. */
		(void)fcntl(flows[i]->pipe[1], F_SETPIPE_SZ, 1024 * 1024);
	}
	return 0;
}

static int send_pending(Flow *f, Endpoint *dst)
{
	while (f->pend_off < f->pend_len) {
		ssize_t n;
		if (!dst->can_write)
			return 0;
		n = send(dst->fd, f->pend + f->pend_off, f->pend_len - f->pend_off, MSG_NOSIGNAL);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			if (errno == EAGAIN) {
				dst->can_write = false;
				return 0;
			}
			return -errno;
		}
		f->pend_off += (size_t)n;
	}
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
		if (f->in_pipe > 0) {
			if (!dst->can_write)
				return 0;
			n = splice(f->pipe[0], NULL, dst->fd, NULL, f->in_pipe, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
			if (n < 0) {
				if (errno == EINTR)
					continue;
				if (errno == EAGAIN) {
					dst->can_write = false;
					return 0;
				}
				return -errno;
			}
			f->in_pipe -= (size_t)n;
			f->bytes += (uint64_t)n;
			c->active_ms = c->proxy->now_ms;
			continue;
		}
		/* The pipe is empty here, so EAGAIN below can only mean the
		 * socket has nothing: no busy loop on a full pipe. */
		if (src->eof)
			break;
		if (!src->can_read)
			return 0;
		if (budget == 0) {
			*more = true;
			return 0;
		}
		n = splice(src->fd, NULL, f->pipe[1], NULL, SPLICE_CHUNK, SPLICE_F_MOVE | SPLICE_F_NONBLOCK);
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
		f->in_pipe += (size_t)n;
		budget = (size_t)n >= budget ? 0 : budget - (size_t)n;
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
