/* Copy-on-write caches (policy fs.cache): the command sees the host's cache
 * through an overlay whose upper and work dirs live in a per-run directory
 * of ward's state dir (invisible inside) and are removed after the run, so
 * nothing it writes there reaches the host's cache. */
#pragma once

#include <stddef.h>

/* A new per-run directory "<state>/cache-cow.<pid>.XXXXXX" (caller frees);
 * first removes those left by runs whose supervisor is gone (SIGKILL). */
int cache_cow_dir_new(const char *state_dir, char **ret);
/* "<dir>/<i>/upper" and "<dir>/<i>/work", created. Caller frees both. */
int cache_cow_layer_new(const char *dir, size_t i, char **ret_upper, char **ret_work);
/* Remove @dir and everything in it (best effort). */
void cache_cow_dir_remove(const char *dir);
