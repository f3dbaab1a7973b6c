#include "common/json-util.h"

cJSON *json_strv_array(char *const *l)
{
	cJSON *a = cJSON_CreateArray();

	for (size_t i = 0; a && l && l[i]; i++) {
		cJSON *s = cJSON_CreateString(l[i]);
		if (!s || !cJSON_AddItemToArray(a, s)) {
			cJSON_Delete(s);
			cJSON_Delete(a);
			return NULL;
		}
	}
	return a;
}
