/* Fuzz target: the credential filter for toolchain configuration files.
 * The output is never longer than the input, has no NUL byte, and is a
 * fixed point: sanitizing it again changes nothing. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "policy/sanitize.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *out = NULL, *again = NULL;
	size_t changed = 0, n;

	if (size > 64 * 1024)
		return 0;
	if (sanitize_config((const char *)data, size, &out, &changed) < 0)
		return 0;
	n = strlen(out);
	assert(n <= size);
	assert(sanitize_config(out, n, &again, &changed) == 0);
	assert(strcmp(out, again) == 0);
	free(out);
	free(again);
	return 0;
}
