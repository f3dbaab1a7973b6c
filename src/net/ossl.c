/* OpenSSL loaded at run time (ossl.h). */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

#include "config.h"
#define OSSL_NO_REDIRECT
#include "net/ossl.h"

struct OsslFns ossl_fns;

static pthread_once_t once = PTHREAD_ONCE_INIT;
static int load_r = -ENOPKG;
static char load_err[256];

static void load(void)
{
	const char *soname = OSSL_SONAME_SSL;
	struct OsslFns f = { 0 };
	void *h;

#if WARD_TEST_HOOKS
	/* Test switch: a library that is not there, to show the refusal. */
	if (getenv("WARD_TEST_OSSL_SONAME"))
		soname = getenv("WARD_TEST_OSSL_SONAME");
#endif
	/* Never unloaded: the pointers live as long as the process. */
	h = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snprintf(load_err, sizeof(load_err),
			 "network.inspect, network.credentials and network.requests need OpenSSL 3: "
			 "cannot load %s (Debian's libssl3): %s",
			 soname, dlerror());
		return;
	}
#define OSSL_FN_LOAD(n)                                                                         \
	if (!(f.n = (__typeof__(f.n))dlsym(h, #n))) {                                           \
		snprintf(load_err, sizeof(load_err), "%s has no %s: not OpenSSL 3", soname, #n);         \
		return;                                                                         \
	}
	OSSL_FUNCTIONS(OSSL_FN_LOAD)
#undef OSSL_FN_LOAD
	ossl_fns = f;
	load_r = 0;
}

int ossl_load(char *err, size_t errsz)
{
	(void)pthread_once(&once, load);
	if (load_r < 0 && err && errsz)
		snprintf(err, errsz, "%s", load_err);
	return load_r;
}
