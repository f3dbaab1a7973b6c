/* NULL-terminated string vectors (char **). Every function that grows a
 * vector returns -ENOMEM on allocation failure and leaves it unchanged. */
#pragma once

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

#include "common/macro.h"

void strv_free(char **l);
size_t strv_length(char *const *l);
/* Append a copy of @s. */
int strv_extend(char ***l, const char *s);
/* Append @s, taking ownership of it (freed on failure). */
int strv_consume(char ***l, char *s);
/* Append a string formatted as printf(3) would. */
_printf_(2, 3) int strv_extendf(char ***l, const char *fmt, ...);
_printf_(2, 0) int strv_extendfv(char ***l, const char *fmt, va_list ap);
/* Append copies of all of @other. */
int strv_extend_strv(char ***l, char *const *other);
/* Append a copy of @s only if not already present. */
int strv_extend_unique(char ***l, const char *s);
bool strv_contains(char *const *l, const char *s);
/* Remove every element equal to @s; returns the number removed. */
size_t strv_remove(char **l, const char *s);
char **strv_copy(char *const *l);

#define STRV_FOREACH(s, l) for (char *const *s = (l); s && *s; s++)
