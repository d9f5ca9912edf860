// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof daemon's command line: listen addresses and defaults. */
#include "unit.h"

#include <errno.h>
#include <arpa/inet.h>
#include <netinet/in.h>

#include "cmd/cmd_daemon.h"

static void test_listen_addresses(void **state)
{
	struct sockaddr_storage ss;
	socklen_t len;
	const struct sockaddr_in *a4 = (const void *)&ss;
	const struct sockaddr_in6 *a6 = (const void *)&ss;
	static const char *const bad[] = {
		"",
		"9733",
		":9733",
		"127.0.0.1",
		"127.0.0.1:",
		"127.0.0.1:65536",
		"127.0.0.1:-1",
		"127.0.0.1:+1",
		"127.0.0.1: 1",
		"127.0.0.1:1x",
		"1.2.3:80",
		"0x7f.0.0.1:80",
		"[::1]80",
		"[::1:80",
		"[]:80",
		"::1:80",
		"example.com:80",
		"[127.0.0.1]:80",
	};

	(void)state;
	assert_int_equal(daemon_parse_listen("127.0.0.1:9733", &ss, &len), 0);
	CHECK(ss.ss_family == AF_INET && ntohs(a4->sin_port) == 9733 &&
		      a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		      len == sizeof(*a4),
	      "IPv4 loopback");
	assert_int_equal(daemon_parse_listen("localhost:0", &ss, &len), 0);
	CHECK(a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) && !a4->sin_port,
	      "localhost is 127.0.0.1, port 0 allowed");
	assert_int_equal(daemon_parse_listen("[::1]:65535", &ss, &len), 0);
	CHECK(ss.ss_family == AF_INET6 && ntohs(a6->sin6_port) == 65535 &&
		      IN6_IS_ADDR_LOOPBACK(&a6->sin6_addr),
	      "IPv6 loopback");
	assert_int_equal(daemon_parse_listen("0.0.0.0:80", &ss, &len), 0);
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(daemon_parse_listen(bad[i], &ss, &len) == -EINVAL,
		      "'%s' accepted", bad[i]);
}

static void test_defaults(void **state)
{
	char *argv[] = { "daemon", NULL };
	struct daemon_opts o;
	const struct sockaddr_in *a4 = (const void *)&o.addr;

	(void)state;
	assert_int_equal(daemon_parse_args(1, argv, &o), 0);
	CHECK(o.target.kind == TARGET_ALL, "the whole system by default");
	CHECK(o.addr.ss_family == AF_INET &&
		      a4->sin_addr.s_addr == htonl(INADDR_LOOPBACK) &&
		      ntohs(a4->sin_port) == 9733,
	      "loopback by default");
	CHECK(o.comm_series == 10 && o.fold_s == 5 && o.http_timeout_s == 10,
	      "defaults");
	CHECK(o.series_ttl_ns == 600000000000ULL, "series live 10 min idle");
	daemon_free_opts(&o);
}

/* --series-ttl: a duration with its unit from 1 s, or 0 for never. */
static void test_series_ttl(void **state)
{
	static const struct {
		const char *arg;
		uint64_t ns;
	} good[] = {
		{ "0", 0 },
		{ "1s", 1000000000ULL },
		{ "90s", 90000000000ULL },
		{ "10m", 600000000000ULL },
		{ "1440m", 86400000000000ULL },
	};
	static const char *const bad[] = { "",	  "10",	 "0s", "500ms",
					   "-1s", "10x", "1h", "1e3" };
	struct daemon_opts o;

	(void)state;
	for (size_t i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		char *argv[] = { "daemon", "--series-ttl", (char *)good[i].arg,
				 NULL };

		assert_int_equal(daemon_parse_args(3, argv, &o), 0);
		CHECK(o.series_ttl_ns == good[i].ns, "--series-ttl %s: %llu",
		      good[i].arg, (unsigned long long)o.series_ttl_ns);
		daemon_free_opts(&o);
	}
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = { "daemon", "--series-ttl", (char *)bad[i],
				 NULL };
		int err = daemon_parse_args(3, argv, &o);

		CHECK(err == EXIT_USAGE, "--series-ttl '%s' accepted", bad[i]);
		daemon_free_opts(&o);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_listen_addresses),
		cmocka_unit_test(test_defaults),
		cmocka_unit_test(test_series_ttl),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
