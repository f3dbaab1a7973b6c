/* Fuzz target: what ward log does with one line of the audit log (which a
 * reader may find torn, or written by anything that could reach the file)
 * and with a --since value. A row never carries a control byte (other than
 * none at all) to the terminal; the parsers never read past the input. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "audit/audit-query.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *s;
	int64_t t;
	cJSON *o;

	if (size > 64 * 1024)
		return 0;
	s = malloc(size + 1);
	if (!s)
		return 0;
	memcpy(s, data, size);
	s[size] = '\0';
	(void)audit_parse_since(s, 1796289011564LL, &t);
	(void)audit_parse_rfc3339(s, &t);
	o = cJSON_ParseWithLength(s, size);
	if (cJSON_IsObject(o)) {
		AuditFilter f = { .session = "9f1c", .has_since = true, .since_ms = 0 };
		char *row = audit_format_row(o);

		(void)audit_filter_match(&f, o);
		if (row) {
			for (const unsigned char *p = (const unsigned char *)row; *p; p++)
				assert(*p >= 0x20 && *p != 0x7f);
			free(row);
		}
	}
	cJSON_Delete(o);
	free(s);
	return 0;
}
