/* The environment the sandboxed command sees: only env.pass names pass,
 * anything matching env.strip is removed even if passed, env.set and --env
 * add. Pure: no getenv, the caller hands in the environment. */
#pragma once

#include "policy/policy.h"

/* Build the filtered environment from @envp under @p. @extra are
 * "NAME=VALUE" (set) or "NAME" (pass this one from @envp) from --env,
 * applied last and not subject to env.strip (the user asked explicitly).
 * Returns a new strv (caller frees) or NULL on OOM. */
char **env_filter(const WardPolicy *p, char *const *envp, char *const *extra);
/* Does @name match the glob @pattern ('*' only)? */
bool env_name_matches(const char *pattern, const char *name);
/* The absolute paths the certificate variables (SSL_CERT_FILE,
 * SSL_CERT_DIR, NODE_EXTRA_CA_CERTS, REQUESTS_CA_BUNDLE, CURL_CA_BUNDLE,
 * GIT_SSL_CAINFO) in @envp name; SSL_CERT_DIR split at ':'. A new strv in
 * @ret (caller frees); -ENOMEM. */
int env_ca_paths(char *const *envp, char ***ret);
