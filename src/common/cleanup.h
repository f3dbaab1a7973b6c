/* Scope-bound cleanup helpers. This is the only file that uses
 * __attribute__((cleanup)); everything else spells _cleanup_free_ and friends.
 * Not a general resource manager: each helper frees exactly one kind of thing. */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((cleanup(f)))

#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)                                                    \
	static inline void func##p(type *p)                                                        \
	{                                                                                          \
		if (*p)                                                                            \
			func(*p);                                                                  \
	}

static inline void freep(void *p)
{
	free(*(void **)p);
}

static inline void closep(int *fd)
{
	if (*fd >= 0) {
		int saved = errno;
		(void)close(*fd);
		errno = saved;
	}
}

DEFINE_TRIVIAL_CLEANUP_FUNC(FILE *, fclose)
DEFINE_TRIVIAL_CLEANUP_FUNC(DIR *, closedir)

void strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free)

#define _cleanup_free_ _cleanup_(freep)
#define _cleanup_close_ _cleanup_(closep)
#define _cleanup_fclose_ _cleanup_(fclosep)
#define _cleanup_closedir_ _cleanup_(closedirp)
#define _cleanup_strv_ _cleanup_(strv_freep)

/* Declared here so that the helper works whether or not <cjson/cJSON.h>
 * came first; the prototype matches cJSON's own. */
struct cJSON;
void cJSON_Delete(struct cJSON *item);
static inline void cjson_deletep(struct cJSON **p)
{
	if (*p)
		cJSON_Delete(*p);
}
#define _cleanup_cjson_ _cleanup_(cjson_deletep)

#define TAKE_PTR(p)                                                                                \
	({                                                                                         \
		__typeof__(p) _tp = (p);                                                           \
		(p) = NULL;                                                                        \
		_tp;                                                                               \
	})

#define TAKE_FD(fd)                                                                                \
	({                                                                                         \
		int _tf = (fd);                                                                    \
		(fd) = -EBADF;                                                                     \
		_tf;                                                                               \
	})
