/* The live events stream (src/audit/audit-events.h) on Windows: not built
 * yet. ward.exe has no --events-fd; a stream asked for is refused, never
 * half-delivered. Windows-only. */
#include <errno.h>

#include "audit/audit-events.h"

int event_stream_new(int fd, EventStream **ret)
{
	return -EOPNOTSUPP;
}

EventStream *event_stream_free(EventStream *s)
{
	return NULL;
}

int event_stream_fd(const EventStream *s)
{
	return -EBADF;
}

void event_stream_write(EventStream *s, const char *line, size_t len)
{
}

unsigned event_stream_lost(const EventStream *s, int *ret_error)
{
	return 0;
}
