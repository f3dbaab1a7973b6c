/* The contract between the egress proxy and the command it serves: where
 * the proxy listens inside the sandbox and the environment variables that
 * tell programs so. One owner: the sandbox binds these ports (linux/), the
 * run module puts these variables in the command's environment (run/),
 * docs/network.md documents both. */
#pragma once

/* Fixed ports inside the sandbox: its network namespace is brand new, so
 * they are always free, and the environment can be computed before clone. */
#define WARD_PROXY_HTTP_PORT 3128
#define WARD_PROXY_SOCKS_PORT 1080

/* Hosts the command reaches without the proxy: its own loopback. */
#define WARD_PROXY_NO_PROXY "localhost,127.0.0.1,::1"

/* Append the proxy variables (HTTP_PROXY, HTTPS_PROXY, ALL_PROXY, NO_PROXY,
 * each also in lower case) to the environment @envp, replacing any the
 * filtered environment still has. 0 or -ENOMEM. */
int proxy_contract_env(char ***envp);
