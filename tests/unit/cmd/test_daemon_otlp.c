// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --otlp-header and --otlp-headers-file: "Name: value" checked (the name
 * an HTTP token, no control byte in the value) and trimmed; the file's
 * comments and blank lines skipped, a bad line named by its number.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "cmd/daemon_otlp.h"

static void test_header_checked_and_trimmed(void **state)
{
	struct otlp_opts o = {};
	const char *why = NULL;

	(void)state;
	assert_int_equal(otlp_opts_add_header(&o, "Authorization:  Bearer x \t",
					      &why),
			 0);
	assert_int_equal(otlp_opts_add_header(&o, "X-A:b", &why), 0);
	assert_int_equal(o.nheaders, 2);
	assert_string_equal(o.headers[0], "Authorization: Bearer x");
	assert_string_equal(o.headers[1], "X-A: b");
	assert_int_equal(otlp_opts_add_header(&o, "Bad Name: x", &why),
			 -EINVAL);
	assert_string_equal(why, "the name is not an HTTP token");
	assert_int_equal(otlp_opts_add_header(&o, ": x", &why), -EINVAL);
	assert_int_equal(otlp_opts_add_header(&o, "nocolon", &why), -EINVAL);
	assert_string_equal(why, "expected 'Name: value'");
	/* no header injection through a value */
	assert_int_equal(otlp_opts_add_header(&o, "X: a\r\nEvil: b", &why),
			 -EINVAL);
	assert_string_equal(why, "the value has a control character");
	assert_int_equal(o.nheaders, 2);
	otlp_opts_free(&o);
	assert_int_equal(o.nheaders, 0);
}

static void test_headers_file(void **state)
{
	char path[] = "/tmp/scprof-otlp-headers-XXXXXX";
	int fd = mkstemp(path);
	struct otlp_opts o = {};
	const char *why = NULL;
	unsigned int line = 0;
	FILE *f;

	(void)state;
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	fputs("# a comment\n\n  X-Tenant: blue\r\nAuthorization: Bearer t\n",
	      f);
	fclose(f);
	assert_int_equal(otlp_opts_headers_file(&o, path, &line, &why), 0);
	assert_int_equal(o.nheaders, 2);
	assert_string_equal(o.headers[0], "X-Tenant: blue");
	assert_string_equal(o.headers[1], "Authorization: Bearer t");
	otlp_opts_free(&o);

	f = fopen(path, "w");
	fputs("A: 1\n# ok\nsecret-without-colon\n", f);
	fclose(f);
	assert_int_equal(otlp_opts_headers_file(&o, path, &line, &why),
			 -EINVAL);
	assert_int_equal(line, 3);
	otlp_opts_free(&o);
	unlink(path);
	assert_int_equal(otlp_opts_headers_file(&o, path, &line, &why),
			 -ENOENT);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_header_checked_and_trimmed),
		cmocka_unit_test(test_headers_file),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
