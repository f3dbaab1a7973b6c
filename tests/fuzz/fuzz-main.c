/* Replay driver: runs LLVMFuzzerTestOneInput over every file in the corpus
 * directories given on the command line, so that gcc builds (and CI) keep
 * the corpus (and every crash-* found by libFuzzer) as regression tests. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	uint8_t *buf;
	size_t n;

	if (!f) {
		perror(path);
		return -1;
	}
	buf = malloc(64 * 1024 + 1);
	if (!buf) {
		fclose(f);
		return -1;
	}
	n = fread(buf, 1, 64 * 1024, f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	free(buf);
	return 0;
}

int main(int argc, char **argv)
{
	int count = 0;

	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		struct dirent *de;

		if (!d) {
			if (run_file(argv[i]) < 0)
				return 1;
			count++;
			continue;
		}
		while ((de = readdir(d))) {
			char p[4096];
			struct stat st;

			if (de->d_name[0] == '.')
				continue;
			snprintf(p, sizeof(p), "%s/%s", argv[i], de->d_name);
			if (stat(p, &st) < 0 || !S_ISREG(st.st_mode))
				continue;
			if (run_file(p) < 0) {
				closedir(d);
				return 1;
			}
			count++;
		}
		closedir(d);
	}
	printf("replayed %d inputs\n", count);
	return count > 0 ? 0 : 1;
}
