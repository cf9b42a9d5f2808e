/*
 * fuzz_main.c — a fuzz target without libFuzzer: feeds every file named
 * on the command line (a directory: every regular file in it, in name
 * order) once through LLVMFuzzerTestOneInput, after LLVMFuzzerInitialize.
 * The unit tests unit/fuzz_<target>_corpus run each target's seed corpus
 * this way; a broken invariant aborts, so the test fails.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	size_t cap = 1 << 16, len = 0, n;
	uint8_t *buf = malloc(cap);
	while (buf && (n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap)
			buf = realloc(buf, cap *= 2);
	}
	fclose(f);
	if (!buf)
		return 1;
	/* a copy of exactly len bytes, as libFuzzer gives: ASan sees overreads */
	uint8_t *data = malloc(len ? len : 1);
	memcpy(data, buf, len);
	free(buf);
	LLVMFuzzerTestOneInput(data, len);
	free(data);
	return 0;
}

static int by_name(const struct dirent **a, const struct dirent **b) { return strcmp((*a)->d_name, (*b)->d_name); }

int main(int argc, char **argv)
{
	int bad = 0, inputs = 0;
	LLVMFuzzerInitialize(&argc, &argv);
	for (int i = 1; i < argc; i++) {
		struct stat st;
		if (stat(argv[i], &st) != 0) {
			perror(argv[i]);
			return 2;
		}
		if (!S_ISDIR(st.st_mode)) {
			bad |= run_file(argv[i]);
			inputs++;
			continue;
		}
		struct dirent **names = NULL;
		int n = scandir(argv[i], &names, NULL, by_name);
		for (int k = 0; k < n; k++) {
			char *p = NULL;
			if (names[k]->d_name[0] != '.' && asprintf(&p, "%s/%s", argv[i], names[k]->d_name) >= 0 &&
			    stat(p, &st) == 0 && S_ISREG(st.st_mode)) {
				bad |= run_file(p);
				inputs++;
			}
			free(p);
			free(names[k]);
		}
		free(names);
	}
	if (inputs == 0) {
		fprintf(stderr, "%s: no inputs\n", argv[0]);
		return 2;
	}
	fprintf(stderr, "%s: %d inputs passed\n", argv[0], inputs);
	return bad;
}
