/* Bounded capture of a stream (mcp-output.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cleanup.h"
#include "common/utf8.h"
#include "mcp/mcp-output.h"

int mcp_capture_init(McpCapture *c, size_t max)
{
	*c = (McpCapture){ .max = max < 2 ? 2 : max };
	c->head = malloc(c->max - c->max / 2);
	c->tail = malloc(c->max / 2);
	if (!c->head || !c->tail) {
		mcp_capture_done(c);
		return -ENOMEM;
	}
	return 0;
}

void mcp_capture_add(McpCapture *c, const char *data, size_t n)
{
	size_t head_max = c->max - c->max / 2, tail_max = c->max / 2;

	c->total += n;
	if (c->head_len < head_max) {
		size_t k = head_max - c->head_len < n ? head_max - c->head_len : n;
		memcpy(c->head + c->head_len, data, k);
		c->head_len += k;
		data += k;
		n -= k;
	}
	/* Only the last tail_max bytes of a big write matter. */
	if (n > tail_max) {
		data += n - tail_max;
		n = tail_max;
	}
	for (size_t i = 0; i < n; i++) {
		c->tail[c->tail_pos] = data[i];
		c->tail_pos = (c->tail_pos + 1) % tail_max;
		if (c->tail_len < tail_max)
			c->tail_len++;
	}
}

bool mcp_capture_truncated(const McpCapture *c)
{
	return c->total > c->head_len + c->tail_len;
}

/* Append @n bytes as valid UTF-8. @cut_start/@cut_end: the bytes begin or
 * end at a cut, where a partial sequence is dropped rather than shown as
 * U+FFFD (it was valid before the cut). */
static char *put_utf8(char *o, const unsigned char *s, size_t n, bool cut_start, bool cut_end)
{
	size_t i = 0;

	if (cut_start)
		while (i < n && i < 3 && (s[i] & 0xc0) == 0x80)
			i++;
	while (i < n) {
		uint32_t cp;
		/* NUL too: the text becomes a C string (and a JSON string). */
		size_t k = s[i] ? utf8_decode(s + i, n - i, &cp) : 0;
		if (k == 0 && cut_end && n - i < 4 && s[i] >= 0xc0) {
			/* A lead byte whose sequence runs past the cut. */
			bool partial = true;
			for (size_t j = i + 1; j < n; j++)
				partial &= (s[j] & 0xc0) == 0x80;
			if (partial)
				break;
		}
		if (k == 0) {
			memcpy(o, "\xef\xbf\xbd", 3);
			o += 3;
			i++;
			continue;
		}
		memcpy(o, s + i, k);
		o += k;
		i += k;
	}
	return o;
}

char *mcp_capture_text(const McpCapture *c)
{
	bool cut = mcp_capture_truncated(c);
	size_t tail_max = c->max / 2;
	_cleanup_free_ char *tail = malloc(c->tail_len + 1);
	char marker[128] = "";
	char *out, *o;

	if (!tail)
		return NULL;
	/* The ring in order: oldest byte first. */
	for (size_t i = 0; i < c->tail_len; i++) {
		size_t start = c->tail_len < tail_max ? 0 : c->tail_pos;
		tail[i] = c->tail[(start + i) % (tail_max ? tail_max : 1)];
	}
	if (cut)
		snprintf(marker, sizeof(marker),
			 "\n[ward: %" PRIu64 " bytes of output omitted; %" PRIu64 " bytes in all]\n",
			 c->total - c->head_len - c->tail_len, c->total);
	/* At most 3 bytes out per byte in (U+FFFD for each invalid one). */
	out = malloc((c->head_len + c->tail_len) * 3 + strlen(marker) + 1);
	if (!out)
		return NULL;
	if (!cut) {
		/* All of it: head and tail are one run of bytes, and a
		 * sequence may straddle them. */
		_cleanup_free_ char *all = malloc(c->head_len + c->tail_len + 1);
		if (!all) {
			free(out);
			return NULL;
		}
		memcpy(all, c->head, c->head_len);
		memcpy(all + c->head_len, tail, c->tail_len);
		o = put_utf8(out, (const unsigned char *)all, c->head_len + c->tail_len, false,
			     false);
	} else {
		o = put_utf8(out, (const unsigned char *)c->head, c->head_len, false, true);
		o = stpcpy(o, marker);
		o = put_utf8(o, (const unsigned char *)tail, c->tail_len, true, false);
	}
	*o = '\0';
	return out;
}

void mcp_capture_done(McpCapture *c)
{
	free(c->head);
	free(c->tail);
	*c = (McpCapture){};
}
