#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/macro.h"
#include "common/strv.h"
#include "net/proxy-contract.h"

#define STR_(x) #x
#define STR(x) STR_(x)
#define HTTP_URL "http://127.0.0.1:" STR(WARD_PROXY_HTTP_PORT)
#define SOCKS_URL "socks5h://127.0.0.1:" STR(WARD_PROXY_SOCKS_PORT)

static const char *const proxy_vars[][2] = {
	{ "HTTP_PROXY", HTTP_URL },  { "http_proxy", HTTP_URL },
	{ "HTTPS_PROXY", HTTP_URL }, { "https_proxy", HTTP_URL },
	{ "ALL_PROXY", SOCKS_URL },  { "all_proxy", SOCKS_URL },
	{ "NO_PROXY", WARD_PROXY_NO_PROXY }, { "no_proxy", WARD_PROXY_NO_PROXY },
};

/* Drop NAME=... from @l. */
static void drop_var(char **l, const char *name)
{
	size_t n = strlen(name), j = 0;

	for (size_t i = 0; l && l[i]; i++) {
		if (strncmp(l[i], name, n) == 0 && l[i][n] == '=')
			free(l[i]);
		else
			l[j++] = l[i];
	}
	if (l)
		l[j] = NULL;
}

int proxy_contract_env(char ***envp)
{
	for (size_t i = 0; i < ELEMENTSOF(proxy_vars); i++) {
		char *kv = NULL;

		drop_var(*envp, proxy_vars[i][0]);
		if (asprintf(&kv, "%s=%s", proxy_vars[i][0], proxy_vars[i][1]) < 0)
			return -ENOMEM;
		if (strv_consume(envp, kv) < 0)
			return -ENOMEM;
	}
	return 0;
}
