/* Small cJSON helpers shared by modules that build JSON. */
#pragma once

#include <cjson/cJSON.h>

/* A JSON array of the strings in @l (NULL is an empty array); NULL on OOM. */
cJSON *json_strv_array(char *const *l);
