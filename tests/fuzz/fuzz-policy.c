/* Fuzz the policy parser: any input either fails cleanly with an error
 * that names a file, or yields a policy that finalizes (or fails cleanly)
 * and whose JSON reloads to the same JSON. Inputs are capped at 64 KiB. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "policy/policy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const PolicyContext ctx = { .home = "/home/fuzz", .workspace = "/home/fuzz/ws" };
	PolicyError e = { 0 };
	char line[1400];
	WardPolicy *p, *q;
	char *text, *j1, *j2;

	if (size > 64 * 1024)
		return 0;
	text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';

	p = policy_new_defaults();
	if (!p) {
		free(text);
		return 0;
	}
	if (policy_merge_json(p, "fuzz.json", text, &e) < 0) {
		policy_error_format(&e, line, sizeof(line));
		if (strncmp(line, "fuzz.json: ", 11) != 0)
			abort();
		goto out;
	}
	if (policy_finalize(p, &ctx, &e) < 0)
		goto out;

	/* The effective policy must reload to itself. */
	j1 = policy_to_json(p);
	q = policy_new_defaults();
	if (!j1 || !q)
		abort();
	if (policy_merge_json(q, "reload.json", j1, &e) < 0 || policy_finalize(q, &ctx, &e) < 0) {
		fprintf(stderr, "reload failed: %s: %s: %s\n", e.file, e.path, e.msg);
		abort();
	}
	j2 = policy_to_json(q);
	if (!j2 || strcmp(j1, j2) != 0)
		abort();
	free(j1);
	free(j2);
	policy_free(q);
out:
	policy_free(p);
	free(text);
	return 0;
}
