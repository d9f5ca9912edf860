// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/terminfo.c: top's built-in terminfo entries. */
#include <errno.h>
#include <sys/stat.h>

#include "unit.h"
#include "util/terminfo.h"

static const struct terminfo_builtin *find(const char *name)
{
	for (const struct terminfo_builtin *b = terminfo_builtins; b->name; b++)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/* xterm and vt100 are always built in, as compiled entries (magic 0432
 * or the extended-number format's 01036).
 */
static void test_builtins(void **state)
{
	(void)state;
	for (const char *const *n =
		     (const char *const[]){ "xterm", "vt100", NULL };
	     *n; n++) {
		const struct terminfo_builtin *b = find(*n);
		unsigned int magic;

		CHECK(b && b->len > 12, "%s is built in", *n);
		magic = b->data[0] | (unsigned int)b->data[1] << 8;
		CHECK(magic == 0432 || magic == 01036, "%s magic %o", *n,
		      magic);
	}
}

/* Where the host has a database, a name terminfo does not know stays
 * unknown (and the error message is the old one).
 */
static void test_unknown_name_with_a_database(void **state)
{
	struct terminfo_fallback f;
	const char *why = NULL;
	struct stat st;

	(void)state;
	if (stat("/lib/terminfo", &st) && stat("/usr/share/terminfo", &st))
		skip();
	CHECK(terminfo_fallback("no-such-terminal", &f, &why) == -ENOENT,
	      "unknown TERM");
}

/* A built-in entry is written in a private directory in TMPDIR, TERMINFO
 * points there, and both go again with TERMINFO restored.
 */
static void test_fallback_writes_reads_and_removes(void **state)
{
	char tmp[] = "/tmp/scprof-unit-XXXXXX";
	struct terminfo_fallback f;
	const char *why = NULL;
	char dir[sizeof(f.dir)];
	unsigned char buf[8192];
	struct stat st;
	size_t got;
	FILE *fp;
	int err;

	(void)state;
	CHECK(mkdtemp(tmp), "mkdtemp");
	setenv("TMPDIR", tmp, 1);
	setenv("TERMINFO", "/old-value", 1);
	err = terminfo_fallback("vt100", &f, &why);
	CHECK(err == 0, "fallback: %d %s", err, why ? why : "");
	CHECK_STR(f.name, "vt100", "entry");
	CHECK(!strncmp(f.dir, tmp, strlen(tmp)), "in TMPDIR: %s", f.dir);
	CHECK_STR(getenv("TERMINFO"), f.dir, "TERMINFO");
	CHECK(!stat(f.path, &st) && st.st_size == (off_t)find("vt100")->len,
	      "%s written", f.path);
	/* byte for byte the built-in entry (that ncurses reads it is
	 * tests/pkg/test_static.py's: top in a root with no database)
	 */
	fp = fopen(f.path, "rb");
	CHECK(fp, "open %s", f.path);
	got = fread(buf, 1, sizeof(buf), fp);
	fclose(fp);
	CHECK(got == find("vt100")->len &&
		      !memcmp(buf, find("vt100")->data, got),
	      "%s holds the entry", f.path);
	snprintf(dir, sizeof(dir), "%s", f.dir);
	terminfo_fallback_cleanup(&f);
	CHECK(stat(dir, &st) && errno == ENOENT, "%s removed", dir);
	CHECK_STR(getenv("TERMINFO"), "/old-value", "TERMINFO restored");
	unsetenv("TERMINFO");
	unsetenv("TMPDIR");
	CHECK(rmdir(tmp) == 0, "TMPDIR left empty");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_builtins),
		cmocka_unit_test(test_unknown_name_with_a_database),
		cmocka_unit_test(test_fallback_writes_reads_and_removes),
	};

	unit_init();
	return cmocka_run_group_tests_name("terminfo", tests, NULL, NULL);
}
