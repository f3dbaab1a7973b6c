/* The live copy of the audit log for `ward run --events-fd`: each line the
 * log writes, sent to a harness's pipe, socket or file while the run goes
 * on. Internal to src/audit (audit.h is the interface). */
#pragma once

#include <stddef.h>

typedef struct EventStream EventStream;

/* A stream on a descriptor of its own for @fd (not taken). -EBADF when @fd
 * is not open for writing. */
int event_stream_new(int fd, EventStream **ret);
EventStream *event_stream_free(EventStream *s);
int event_stream_fd(const EventStream *s);
/* Send @line (@len bytes, one newline at the end) whole, or count it lost.
 * Bounded: waits at most EVENT_WAIT_MS for a reader that is behind (and not
 * at all while it stays behind), never raises SIGPIPE. */
void event_stream_write(EventStream *s, const char *line, size_t len);
unsigned event_stream_lost(const EventStream *s, int *ret_error);

/* How long a line may wait for a full pipe to drain before it is dropped,
 * and for the rest of a line already begun (after that the stream stops:
 * a reader cannot resynchronise on half a line). */
#define EVENT_WAIT_MS 500
#define EVENT_FINISH_MS 2000
