/* Writable paths that host shells run from are refused; the certificate
 * variables' paths are found and become read rules. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "common/strv.h"
#include "policy/env-filter.h"
#include "policy/policy-hostexec.h"
#include "policy/policy.h"

static int check_rw(const char *rw, const char *path_env)
{
	WardPolicy *p = policy_new_empty();
	PolicyError pe = {};
	int r;

	assert_non_null(p);
	assert_int_equal(strv_extend(&p->fs_read_write, rw), 0);
	r = policy_check_host_exec(p, path_env, "/home/u", &pe);
	policy_free(p);
	return r;
}

static void test_hostexec_path_and_startup_files(void **state)
{
	const char *path = "/home/u/.local/bin:/usr/local/bin:/usr/bin:.:bin";

	assert_int_equal(check_rw("/home/u/.local", path), -EPERM);     /* holds a PATH dir */
	assert_int_equal(check_rw("/home/u/.local/bin", path), -EPERM); /* is one */
	assert_int_equal(check_rw("/home/u/.local/bin/git", path), -EPERM); /* inside one */
	assert_int_equal(check_rw("/usr", path), -EPERM);
	assert_int_equal(check_rw("/home/u", path), -EPERM);            /* startup files */
	assert_int_equal(check_rw("/home/u/.bashrc", NULL), -EPERM);
	assert_int_equal(check_rw("/home/u/.config/fish/conf.d", NULL), -EPERM);
	assert_int_equal(check_rw("/home/u/.cache/pip", path), 0);
	assert_int_equal(check_rw("/home/u/.local/share/x", path), 0);
	assert_int_equal(check_rw("/home/u/.local/binx", path), 0);      /* a prefix only */
	assert_int_equal(check_rw("/home/u/.config", "/home/u/./.config/../bin2/"), -EPERM);
}

static void test_env_ca_paths(void **state)
{
	char *env[] = { "PATH=/usr/bin", "SSL_CERT_FILE=/etc/ca.pem",
			"SSL_CERT_DIR=/etc/certs:/opt/certs::rel", "CURL_CA_BUNDLE=relative.pem",
			"NODE_EXTRA_CA_CERTS=/etc/ca.pem", "SSL_CERT_FILEX=/nope", NULL };
	char **out = NULL;

	assert_int_equal(env_ca_paths(env, &out), 0);
	assert_int_equal(strv_length(out), 3);
	assert_string_equal(out[0], "/etc/ca.pem");
	assert_string_equal(out[1], "/etc/certs");
	assert_string_equal(out[2], "/opt/certs");
	strv_free(out);
}

static void test_ca_reads_never_open_home(void **state)
{
	char dir[] = "/tmp/ward-ca-XXXXXX", home[64], pem[96], e1[128], e2[128], e3[128];
	WardPolicy *p = policy_new_empty();
	FILE *f;

	assert_non_null(mkdtemp(dir));
	snprintf(home, sizeof(home), "%s/home", dir);
	snprintf(pem, sizeof(pem), "%s/ca.pem", home);
	assert_int_equal(mkdir(home, 0700), 0);
	f = fopen(pem, "w");
	assert_non_null(f);
	fclose(f);
	snprintf(e1, sizeof(e1), "SSL_CERT_FILE=%s", pem);
	snprintf(e2, sizeof(e2), "SSL_CERT_DIR=%s:/", dir); /* holds home; and / */
	snprintf(e3, sizeof(e3), "GIT_SSL_CAINFO=%s/missing.pem", dir);
	char *env[] = { e1, e2, e3, NULL };
	assert_int_equal(policy_add_ca_reads(p, env, home), 0);
	assert_int_equal(strv_length(p->fs_read), 1);
	assert_string_equal(p->fs_read[0], pem);
	policy_free(p);
	unlink(pem);
	rmdir(home);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hostexec_path_and_startup_files),
		cmocka_unit_test(test_env_ca_paths),
		cmocka_unit_test(test_ca_reads_never_open_home),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
