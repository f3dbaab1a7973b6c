/* Fuzz target: a live session's control-socket request parser
 * (session/session-proto.h), fed what a client could send. A request that
 * parses re-encodes to the very same bytes (nothing is lost or invented). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "session/session-proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	SessionRequest rq;
	char err[160], *copy, *enc = NULL;
	size_t len = 0;

	if (size > sizeof(SessionReqHead) + SESSION_REQ_MAX + 16)
		return 0;
	copy = malloc(size ? size : 1);
	if (!copy)
		return 0;
	memcpy(copy, data, size);
	if (session_request_parse(copy, size, &rq, err, sizeof(err)) < 0) {
		assert(err[0]);
		free(copy);
		return 0;
	}
	assert(rq.kind >= SESSION_REQ_EXEC && rq.kind < _SESSION_REQ_MAX);
	if (rq.kind == SESSION_REQ_EXEC)
		assert(rq.argv && rq.argv[0] && rq.argv[0][0]);
	if (session_request_encode(&rq, &enc, &len) == 0) {
		/* An empty cwd and an absent one encode alike. */
		assert(len == size && memcmp(enc, data, size) == 0);
		free(enc);
	}
	session_request_done(&rq);
	free(copy);
	return 0;
}
