/* A bounded capture of what a child writes on one stream: the first and the
 * last max/2 bytes, and how many bytes there were, so that a command that
 * prints gigabytes costs ward a fixed amount of memory and the model still
 * sees how the output began and how it ended. Pure. */
#pragma once

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct McpCapture {
	size_t max;       /* bytes kept in all */
	char *head;       /* the first max - max/2 bytes */
	size_t head_len;
	char *tail;       /* a ring of the last max/2 bytes */
	size_t tail_len, tail_pos;
	uint64_t total;   /* bytes seen */
} McpCapture;

/* 0 or -ENOMEM. @max >= 2. */
int mcp_capture_init(McpCapture *c, size_t max);
void mcp_capture_add(McpCapture *c, const char *data, size_t n);
/* Was anything dropped? */
bool mcp_capture_truncated(const McpCapture *c);
/* The text: valid UTF-8 (an invalid byte becomes U+FFFD, a sequence cut by
 * the limit is dropped), with, when bytes were dropped, the marker
 * "\n[ward: N bytes of output omitted; M bytes in all]\n" between head and
 * tail. Caller frees; NULL on OOM. */
char *mcp_capture_text(const McpCapture *c);
void mcp_capture_done(McpCapture *c);
