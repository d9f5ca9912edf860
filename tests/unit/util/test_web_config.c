// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/web_config.c: the --web-config file and basic-auth checks. */
#include <crypt.h>
#include <errno.h>

#include "unit.h"
#include "util/web_config.h"

static char path[64];

/* text into a temporary file, whose name is in path. */
static void put(const char *text)
{
	int fd;

	strcpy(path, "/tmp/scprof-webcfg-XXXXXX");
	fd = mkstemp(path);
	CHECK(fd >= 0, "mkstemp: %s", strerror(errno));
	CHECK(write(fd, text, strlen(text)) == (ssize_t)strlen(text), "write");
	close(fd);
}

/* A bcrypt hash of pw made by libcrypt itself, cost 4 (the fastest). */
static void hash(const char *pw, char *out, size_t size)
{
	struct crypt_data cd;
	char salt[CRYPT_GENSALT_OUTPUT_SIZE];

	memset(&cd, 0, sizeof(cd));
	CHECK(crypt_gensalt_rn("$2b$", 4, NULL, 0, salt, sizeof(salt)),
	      "crypt_gensalt_rn");
	snprintf(out, size, "%s", crypt_r(pw, salt, &cd));
	CHECK(strlen(out) == 60, "bcrypt hash: %s", out);
}

static void test_errors_name_their_line(void **state)
{
	static const struct {
		const char *text, *want;
	} cases[] = {
		{ "foo: 1\n", ":1: unknown key 'foo'" },
		{ "basic_auth_users:\n  a: x\n",
		  ":2: basic_auth_users: the password of 'a' is not a bcrypt" },
		{ "basic_auth_users:\n  a: [1\n", ":3: invalid YAML: " },
		{ "tls_server_config:\n  cert_file: a\n  bogus: 2\n",
		  ":3: unknown key 'bogus' in tls_server_config" },
		{ "tls_server_config:\n  min_version: TLS13\n",
		  ":2: tls_server_config: min_version is not supported" },
		{ "tls_server_config:\n  key_file: k\n",
		  ":2: tls_server_config: key_file without cert_file" },
		{ "tls_server_config:\n  cert_file: /nonexistent/c\n"
		  "  key_file: /nonexistent/k\n",
		  ":2: cannot read /nonexistent/c: No such file" },
		{ "tls_server_config: 3\n",
		  ":1: tls_server_config must be a mapping" },
		{ "a: 1\n---\nb: 2\n", ":2: more than one YAML document" },
		{ "http_server_config:\n  http2: false\n",
		  ":1: http_server_config is not supported" },
	};
	char err[512];
	struct web_config *c;

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		put(cases[i].text);
		CHECK(web_config_load(path, &c, err, sizeof(err)) == -EINVAL,
		      "%s", cases[i].text);
		CHECK(!c, "no config after an error");
		CHECK(!strncmp(err, path, strlen(path)) &&
			      !strncmp(err + strlen(path), cases[i].want,
				       strlen(cases[i].want)),
		      "got '%s', want '%s'", err, cases[i].want);
		unlink(path);
	}
}

static void test_empty_file_is_plain_http(void **state)
{
	struct web_config *c;
	char err[256];

	(void)state;
	put("");
	CHECK(!web_config_load(path, &c, err, sizeof(err)), "%s", err);
	CHECK(!web_config_cert_pem(c) && !web_config_auth_required(c),
	      "no TLS, no auth");
	web_config_free(c);
	unlink(path);
}

static void test_users_and_passwords(void **state)
{
	char ha[64], hb[64], text[256], err[256];
	struct web_config *c;

	(void)state;
	hash("alpha pw", ha, sizeof(ha));
	hash("beta:pw", hb, sizeof(hb));
	snprintf(text, sizeof(text), "basic_auth_users:\n  a: %s\n  b: '%s'\n",
		 ha, hb);
	put(text);
	CHECK(!web_config_load(path, &c, err, sizeof(err)), "%s", err);
	CHECK(web_config_auth_required(c) && !web_config_cert_pem(c),
	      "auth, no TLS");
	CHECK(web_config_check_user(c, "a", "alpha pw"), "a's password");
	CHECK(web_config_check_user(c, "b", "beta:pw"), "b's password");
	CHECK(!web_config_check_user(c, "a", "beta:pw"), "b's for a");
	CHECK(!web_config_check_user(c, "a", "alpha pw "), "one char more");
	CHECK(!web_config_check_user(c, "a", ""), "empty");
	CHECK(!web_config_check_user(c, "c", "alpha pw"), "unknown user");
	CHECK(!web_config_check_user(c, "A", "alpha pw"), "user case");
	web_config_free(c);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_errors_name_their_line),
		cmocka_unit_test(test_empty_file_is_plain_http),
		cmocka_unit_test(test_users_and_passwords),
	};

	unit_init();
	return cmocka_run_group_tests_name("web_config", tests, NULL, NULL);
}
