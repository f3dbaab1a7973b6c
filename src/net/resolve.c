/* c-ares driven by an external epoll loop: c-ares tells us which sockets it
 * wants watched (ARES_OPT_SOCK_STATE_CB), the loop hands readiness back with
 * ares_process_fd(), and ares_timeout() bounds the loop's wait. */
#include <ares.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>

#include "net/resolve.h"

typedef struct ResolverWatch {
	int kind; /* PROXY_WATCH_RESOLVER; first member, see resolve.h */
	int fd;
	bool dead;
	struct ResolverWatch *next;
} ResolverWatch;

struct Resolver {
	ares_channel ch;
	int epfd;
	ResolverWatch *watches;
};

struct ResolveQuery {
	ResolveCallback cb;
	void *userdata;
	bool cancelled;
};

static void sock_state_cb(void *data, ares_socket_t fd, int readable, int writable)
{
	Resolver *r = data;
	ResolverWatch *w;
	struct epoll_event ev = { 0 };

	for (w = r->watches; w; w = w->next)
		if (w->fd == fd && !w->dead)
			break;
	if (!readable && !writable) {
		if (w) {
			(void)epoll_ctl(r->epfd, EPOLL_CTL_DEL, fd, NULL);
			/* Freed in resolver_collect(): an event for it may still sit
			 * in the batch the loop is working through. */
			w->dead = true;
		}
		return;
	}
	ev.events = (readable ? EPOLLIN : 0) | (writable ? EPOLLOUT : 0);
	if (w) {
		ev.data.ptr = w;
		(void)epoll_ctl(r->epfd, EPOLL_CTL_MOD, fd, &ev);
		return;
	}
	w = calloc(1, sizeof(*w));
	if (!w)
		return; /* the query times out instead */
	*w = (ResolverWatch){ .kind = PROXY_WATCH_RESOLVER, .fd = fd, .next = r->watches };
	ev.data.ptr = w;
	if (epoll_ctl(r->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
		free(w);
		return;
	}
	r->watches = w;
}

static int configure_socket(ares_socket_t fd, int type, void *data)
{
	/* c-ares 1.18 opens its sockets without SOCK_CLOEXEC. */
	return fcntl(fd, F_SETFD, FD_CLOEXEC) < 0 ? -1 : 0;
}

int resolver_new(int epfd, Resolver **ret)
{
	static bool lib_done;
	struct ares_options opts = { 0 };
	Resolver *r;
	int s;

	if (!lib_done) {
		if (ares_library_init(ARES_LIB_INIT_ALL) != ARES_SUCCESS)
			return -EIO;
		lib_done = true;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return -ENOMEM;
	r->epfd = epfd;
	opts.sock_state_cb = sock_state_cb;
	opts.sock_state_cb_data = r;
	opts.timeout = 3000;
	opts.tries = 2;
	s = ares_init_options(&r->ch, &opts, ARES_OPT_SOCK_STATE_CB | ARES_OPT_TIMEOUTMS | ARES_OPT_TRIES);
	if (s != ARES_SUCCESS) {
		free(r);
		return s == ARES_ENOMEM ? -ENOMEM : -EIO;
	}
	ares_set_socket_configure_callback(r->ch, configure_socket, NULL);
	*ret = r;
	return 0;
}

void resolver_collect(Resolver *r)
{
	ResolverWatch **p = &r->watches;

	while (*p) {
		ResolverWatch *w = *p;
		if (w->dead) {
			*p = w->next;
			free(w);
		} else {
			p = &w->next;
		}
	}
}

Resolver *resolver_free(Resolver *r)
{
	if (!r)
		return NULL;
	/* Runs every pending callback with ARES_EDESTRUCTION, which frees the
	 * queries without calling the users' callbacks. */
	ares_destroy(r->ch);
	for (ResolverWatch *w = r->watches; w; w = w->next)
		w->dead = true;
	resolver_collect(r);
	free(r);
	return NULL;
}

static void addrinfo_cb(void *arg, int status, int timeouts, struct ares_addrinfo *res)
{
	ResolveQuery *q = arg;
	struct sockaddr_storage addrs[RESOLVE_MAX_ADDRS];
	size_t n = 0;

	if (status == ARES_EDESTRUCTION || q->cancelled)
		goto done;
	if (status == ARES_SUCCESS && res) {
		for (struct ares_addrinfo_node *ai = res->nodes; ai && n < RESOLVE_MAX_ADDRS; ai = ai->ai_next) {
			if ((ai->ai_family != AF_INET && ai->ai_family != AF_INET6) ||
			    ai->ai_addrlen > sizeof(addrs[0]))
				continue;
			memset(&addrs[n], 0, sizeof(addrs[n]));
			memcpy(&addrs[n], ai->ai_addr, ai->ai_addrlen);
			n++;
		}
	}
	if (n > 0)
		q->cb(q->userdata, 0, addrs, n, NULL);
	else if (status == ARES_SUCCESS || status == ARES_ENOTFOUND || status == ARES_ENODATA ||
		 status == ARES_ENONAME)
		q->cb(q->userdata, -ENOENT, NULL, 0, "no address for the name");
	else if (status == ARES_ETIMEOUT)
		q->cb(q->userdata, -ETIMEDOUT, NULL, 0, "name lookup timed out");
	else
		q->cb(q->userdata, -EIO, NULL, 0, ares_strerror(status));
done:
	if (res)
		ares_freeaddrinfo(res);
	free(q);
}

int resolver_query(Resolver *r, const char *name, ResolveCallback cb, void *userdata,
		   ResolveQuery **ret_q)
{
	struct ares_addrinfo_hints hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	ResolveQuery *q = calloc(1, sizeof(*q));

	if (!q)
		return -ENOMEM;
	q->cb = cb;
	q->userdata = userdata;
	*ret_q = q;
	ares_getaddrinfo(r->ch, name, NULL, &hints, addrinfo_cb, q);
	return 0;
}

void resolver_cancel(ResolveQuery *q)
{
	if (q)
		q->cancelled = true;
}

void resolver_handle_event(Resolver *r, void *watch, uint32_t events)
{
	ResolverWatch *w = watch;
	ares_socket_t rfd = ARES_SOCKET_BAD, wfd = ARES_SOCKET_BAD;

	if (w->dead)
		return;
	if (events & (EPOLLIN | EPOLLERR | EPOLLHUP))
		rfd = w->fd;
	if (events & (EPOLLOUT | EPOLLERR | EPOLLHUP))
		wfd = w->fd;
	ares_process_fd(r->ch, rfd, wfd);
}

int resolver_timeout_ms(Resolver *r)
{
	struct timeval tv, *tvp = ares_timeout(r->ch, NULL, &tv);

	if (!tvp)
		return -1;
	return (int)(tvp->tv_sec * 1000 + (tvp->tv_usec + 999) / 1000);
}

void resolver_process_timeouts(Resolver *r)
{
	ares_process_fd(r->ch, ARES_SOCKET_BAD, ARES_SOCKET_BAD);
}
