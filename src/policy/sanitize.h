/* A toolchain configuration file without its credentials: the view of
 * ~/.npmrc, pip.conf, cargo's config.toml, .gitconfig or go's env file that
 * a preset shows inside. Line-based and format-agnostic (INI, npmrc, TOML,
 * gitconfig, KEY=VALUE): a line whose key, or whose section, names a
 * credential is dropped; a URL's user information is cut out of any line
 * that is kept. Pure text in, text out; not a parser of any of the formats. */
#pragma once

#include <stddef.h>

/* The largest file sanitize_config() takes (a larger one is left out). */
#define SANITIZE_MAX (256 * 1024)

/* Sanitize @n bytes of @text into a new NUL-terminated string @ret (caller
 * frees) and the number of lines dropped or changed into @ret_changed.
 * -EINVAL for text with NUL bytes or longer than SANITIZE_MAX, -ENOMEM. */
int sanitize_config(const char *text, size_t n, char **ret, size_t *ret_changed);
