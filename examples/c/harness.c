/* A minimal harness on libward: run one command in the sandbox, print what
 * happened and, with --cow, the changes it left in its copy-on-write
 * session (which it then discards, or applies with --apply).
 *
 *   cc -o harness harness.c $(pkg-config --cflags --libs ward)
 *   ./harness [--cow [--apply]] [--workspace DIR] [--allow HOST] -- CMD [ARG]...
 *
 * Exit status: the command's, as `ward run` gives it. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <ward/ward.h>

static void on_log(void *userdata, int level, const char *message)
{
	(void)userdata;
	fprintf(stderr, "harness: ward says (%d): %s\n", level, message);
}

static int review(const char *id, int apply)
{
	ward_session *s = ward_session_new();
	char *text = NULL;
	int r;

	if (!s)
		return -1;
	r = ward_session_open(s, id);
	if (r >= 0)
		r = ward_session_diff(s, WARD_DIFF_TEXT, &text);
	if (r < 0) {
		fprintf(stderr, "harness: %s\n", ward_session_last_error(s));
		ward_session_free(s);
		return r;
	}
	printf("--- changes in session %s ---\n%s", id, text);
	free(text);
	if (apply) {
		char *json = NULL;
		r = ward_session_apply(s, NULL, 0, &json);
		printf("--- apply: %s ---\n%s\n", r == 0 ? "ok" : ward_session_last_error(s),
		       json ? json : "");
		free(json);
	} else {
		r = ward_session_discard(s);
		printf("--- discarded: %s ---\n", r == 0 ? "yes" : ward_session_last_error(s));
	}
	ward_session_free(s);
	return r;
}

int main(int argc, char **argv)
{
	const char *workspace = NULL, *allow = NULL;
	int cow = 0, apply = 0, i, code;

	for (i = 1; i < argc && strcmp(argv[i], "--") != 0; i++) {
		if (strcmp(argv[i], "--cow") == 0)
			cow = 1;
		else if (strcmp(argv[i], "--apply") == 0)
			apply = 1;
		else if (strcmp(argv[i], "--workspace") == 0 && i + 1 < argc)
			workspace = argv[++i];
		else if (strcmp(argv[i], "--allow") == 0 && i + 1 < argc)
			allow = argv[++i];
		else {
			fprintf(stderr, "usage: %s [--cow [--apply]] [--workspace DIR] [--allow HOST] -- CMD...\n",
				argv[0]);
			return 2;
		}
	}
	if (i + 1 >= argc) {
		fprintf(stderr, "harness: no command\n");
		return 2;
	}

	ward_policy *p = ward_policy_new();
	if (!p || (allow && ward_policy_allow_host(p, allow) < 0)) {
		fprintf(stderr, "harness: %s\n", p ? ward_policy_last_error(p) : "out of memory");
		return 125;
	}
	ward_run *r = ward_run_new(p);
	ward_policy_free(p);
	if (!r)
		return 125;
	ward_run_set_log(r, on_log, NULL, WARD_LOG_WARNING);
	if ((workspace && ward_run_set_workspace(r, workspace) < 0) ||
	    (cow && ward_run_set_cow(r, true) < 0)) {
		fprintf(stderr, "harness: %s\n", ward_run_last_error(r));
		ward_run_free(r);
		return 125;
	}

	code = ward_run_exec(r, (const char *const *)argv + i + 1);
	if (code < 0) {
		fprintf(stderr, "harness: libward could not run it: %s\n", ward_run_last_error(r));
		ward_run_free(r);
		return 125;
	}
	printf("exit code:    %d\n", code);
	printf("status:       %d\n", ward_run_status(r));
	printf("signal:       %d\n", ward_run_signal(r));
	printf("started:      %s\n", ward_run_started(r) ? "yes" : "no");
	printf("timed out:    %s\n", ward_run_timed_out(r) ? "yes" : "no");
	printf("duration:     %llu ms\n", (unsigned long long)ward_run_duration_ms(r));
	printf("net refused:  %u\n", ward_run_net_refused(r));
	printf("cow changes:  %u\n", ward_run_cow_changes(r));
	printf("degraded:    ");
	for (const char *const *d = ward_run_degraded(r); *d; d++)
		printf(" %s", *d);
	printf("\n");
	if (ward_run_last_error(r)[0])
		printf("error:        %s\n", ward_run_last_error(r));
	printf("result:       %s\n", ward_run_result_json(r) ? ward_run_result_json(r) : "null");
	if (cow && ward_run_session_id(r))
		(void)review(ward_run_session_id(r), apply);
	ward_run_free(r);
	return code;
}
