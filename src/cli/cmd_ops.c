/*
 * cmd_ops.c — the operator's commands over a whole directory:
 * `zcor import qq-memory DIR`, `zcor export qq-memory DIR` and
 * `zcor doctor [--json] [--rebuild]`.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

/* Exit statuses of doctor (and migrate): the seed's 0 / 2 / 3. Bad usage
 * is 3 here, not the usual 2, which for these two means "needs a person":
 * a script checking for 2 must not take a typo for a finding. */
#define DOCTOR_FINE 0
#define DOCTOR_NEEDS_PERSON 2
#define DOCTOR_FAILED 3

static void progress(void *ud, const char *path)
{
	long *n = ud;
	fprintf(stderr, "zcor import: [%ld] %s\n", ++*n, path);
}

/* The options of doctor and migrate: each of the two flags, once or not. */
static int two_flags(int argc, char **argv, int from, const char *f1, int *v1, const char *f2,
		     int *v2)
{
	*v1 = *v2 = 0;
	for (int i = from; i < argc; i++) {
		if (strcmp(argv[i], f1) == 0)
			*v1 = 1;
		else if (strcmp(argv[i], f2) == 0)
			*v2 = 1;
		else
			return -1;
	}
	return 0;
}

static void print_pretty(const json_t *r)
{
	char *s = json_dumps(r, JSON_INDENT(2));
	printf("%s\n", s);
	zc_free(s);
}

int cmd_import(struct cli *c, int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "qq-memory") != 0)
		return cli_usage(cli_find("import"));
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	long n = 0;
	char *out = NULL;
	int r = zcor_import_qq(z, argv[2], progress, &n, &out);
	int rc = r ? CLI_FAILED : CLI_OK;
	printf("%s\n", cli_answer(z, r, out));
	zcor_free(out);
	zcor_close(z);
	return rc;
}

int cmd_export(struct cli *c, int argc, char **argv)
{
	if (argc != 3 || strcmp(argv[1], "qq-memory") != 0)
		return cli_usage(cli_find("export"));
	zcor *z = cli_open(c);
	if (!z)
		return CLI_FAILED;
	char *out = NULL;
	int r = zcor_export_qq(z, argv[2], &out);
	int rc = r ? CLI_FAILED : CLI_OK;
	printf("%s\n", cli_answer(z, r, out));
	zcor_free(out);
	zcor_close(z);
	return rc;
}

int cmd_doctor(struct cli *c, int argc, char **argv)
{
	int json, rebuild;
	if (two_flags(argc, argv, 1, "--json", &json, "--rebuild", &rebuild)) {
		cli_usage(cli_find("doctor"));
		return DOCTOR_FAILED;
	}
	zcor *z = NULL;
	char *out = NULL;
	int rc = zcor_open(&z, c->dir);
	if (rc != ZCOR_OK) {
		/* a refused memory.db is a finding; anything else, a failure */
		if (zcor_doctor_unopened(NULL, c->dir, &out)) {
			fprintf(stderr, "zcor: cannot open memory directory '%s': %s\n", c->dir, zcor_errmsg(z));
			zcor_close(z);
			return DOCTOR_FAILED;
		}
	} else if ((rc = zcor_doctor(z, rebuild, &out))) {
		printf("%s\n", cli_answer(z, rc, out));
		zcor_free(out);
		zcor_close(z);
		return DOCTOR_FAILED;
	}
	json_t *r = json_loads(out, 0, NULL);
	zcor_free(out);
	int need = json_is_true(json_object_get(r, "needsAttention"));
	if (json) {
		print_pretty(r);
	} else {
		size_t i;
		json_t *f;
		json_array_foreach(json_object_get(r, "findings"), i, f) {
			const char *path = json_string_value(json_object_get(f, "path"));
			long long line = json_integer_value(json_object_get(f, "line"));
			printf("%-7s %s", json_string_value(json_object_get(f, "severity")),
			       json_string_value(json_object_get(f, "code")));
			if (path)
				printf(" %s", path);
			if (path && line)
				printf(":%lld", line);
			printf("\n        %s\n        → %s\n", json_string_value(json_object_get(f, "message")),
			       json_string_value(json_object_get(f, "fix")));
		}
		if (json_object_get(r, "rebuilt"))
			printf("rebuilt the derived data\n");
		printf(need ? "something needs a person (exit 2)\n" : "nothing needs a person\n");
	}
	json_decref(r);
	zcor_close(z);
	return need ? DOCTOR_NEEDS_PERSON : DOCTOR_FINE;
}

int cmd_migrate(struct cli *c, int argc, char **argv)
{
	int json, apply;
	if (argc < 2 || strcmp(argv[1], "cognition") != 0 ||
	    two_flags(argc, argv, 2, "--json", &json, "--apply", &apply)) {
		cli_usage(cli_find("migrate"));
		return DOCTOR_FAILED;
	}
	zcor *z = cli_open(c);
	if (!z)
		return DOCTOR_FAILED;
	char *out = NULL;
	int rc = zcor_migrate_cognition(z, apply, &out);
	if (rc) {
		if (json)
			printf("%s\n", cli_answer(z, rc, out));
		else
			fprintf(stderr, "zcor migrate cognition: %s\n", zcor_errmsg(z));
		zcor_free(out);
		zcor_close(z);
		return DOCTOR_FAILED;
	}
	json_t *r = json_loads(out, 0, NULL);
	zcor_free(out);
	long long unrec = json_integer_value(json_object_get(r, "unrecognised"));
	long long refused = json_integer_value(json_object_get(r, "refused"));
	if (json) {
		print_pretty(r);
	} else {
		size_t i;
		json_t *a;
		json_array_foreach(json_object_get(r, "actions"), i, a) {
			const char *what = json_string_value(json_object_get(a, "action"));
			printf("%s  %s\n", json_string_value(json_object_get(a, "line")),
			       !strcmp(what, "collect")	  ? "→ 收藏为 / collect as"
			       : !strcmp(what, "expired") ? "→ 未收藏（原图已过期）/ uncollected, picture expired"
			       : !strcmp(what, "refused") ? "→ 不迁移，需要人来改 / not moved, fix it by hand"
							  : "→ 已收藏的同一张图 / same as collected");
			const char *img = json_string_value(json_object_get(a, "image"));
			if (img)
				printf("    %s\n", img);
			if (!strcmp(what, "refused"))
				printf("    %s\n", json_string_value(json_object_get(a, "why")));
		}
		if (!json_array_size(json_object_get(r, "actions")))
			printf("nothing to migrate\n");
		else
			printf(json_is_true(json_object_get(r, "applied")) ? "applied (backups: see --json)\n"
									    : "dry run: nothing changed; --apply writes (after a backup)\n");
		if (unrec)
			printf("%lld entr%s could not be recognised: find the picture again (exit 2)\n", unrec,
			       unrec == 1 ? "y" : "ies");
		if (refused)
			printf("%lld entr%s left in COGNITION.md: a name or media path to fix by hand (exit 2)\n",
			       refused, refused == 1 ? "y" : "ies");
	}
	json_decref(r);
	zcor_close(z);
	return unrec || refused ? DOCTOR_NEEDS_PERSON : DOCTOR_FINE;
}
