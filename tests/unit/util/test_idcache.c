// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/idcache.c: the bounded id -> string map of cgroup names. */
#include "unit.h"
#include "util/idcache.h"

static void test_get_set(void **state)
{
	struct idcache *c = idcache_new(4);
	const char *v = "x";

	(void)state;
	CHECK(c, "made");
	CHECK(!idcache_get(c, 7, &v) && !strcmp(v, "x"), "empty: not found");
	CHECK(idcache_set(c, 7, "/a") == 0, "set");
	CHECK(idcache_get(c, 7, &v), "found");
	CHECK_STR(v, "/a", "its string");
	CHECK(idcache_set(c, 8, NULL) == 0 && idcache_get(c, 8, &v) && !v,
	      "set to none: found, NULL");
	CHECK(idcache_set(c, 8, "/b") == 0 && idcache_get(c, 8, &v),
	      "replaced");
	CHECK_STR(v, "/b", "the new string");
	CHECK(idcache_len(c) == 2 && idcache_evicted(c) == 0,
	      "two entries, none evicted: %zu", idcache_len(c));
	idcache_free(c);
}

static void test_least_recently_used_goes(void **state)
{
	struct idcache *c = idcache_new(3);
	const char *v;

	(void)state;
	CHECK(!idcache_set(c, 1, "/1") && !idcache_set(c, 2, "/2") &&
		      !idcache_set(c, 3, "/3"),
	      "full");
	CHECK(idcache_get(c, 1, &v), "1 used: 2 is now the oldest");
	CHECK(idcache_set(c, 4, "/4") == 0, "a fourth");
	CHECK(!idcache_get(c, 2, &v), "2 went");
	CHECK(idcache_get(c, 1, &v) && idcache_get(c, 3, &v) &&
		      idcache_get(c, 4, &v),
	      "the others stay");
	CHECK(idcache_len(c) == 3 && idcache_evicted(c) == 1,
	      "3 entries, 1 evicted");
	/* setting an id already there makes no room */
	CHECK(idcache_set(c, 1, "/one") == 0 && idcache_evicted(c) == 1,
	      "a replacement evicts nothing");
	idcache_free(c);
}

/* Many ids, colliding and evicted, against a plain array. */
static void test_matches_a_reference(void **state)
{
	enum { CAP = 64, IDS = 300, OPS = 20000 };
	static uint64_t last[IDS]; /* tick of its last use, 0: absent */
	struct idcache *c = idcache_new(CAP);
	uint64_t tick = 0, seed = 12345;
	char buf[32];

	(void)state;
	memset(last, 0, sizeof(last));
	for (int op = 0; op < OPS; op++) {
		const char *v;
		size_t n = 0;
		int id;

		seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
		id = (int)((seed >> 33) % IDS);
		if ((seed >> 20) & 1) {
			bool in = idcache_get(c, (uint64_t)id << 32, &v);

			CHECK(in == (last[id] != 0), "op %d id %d", op, id);
			if (in) {
				snprintf(buf, sizeof(buf), "/%d", id);
				CHECK_STR(v, buf, "its string");
				last[id] = ++tick;
			}
			continue;
		}
		for (int i = 0; i < IDS; i++)
			n += last[i] != 0;
		if (!last[id] && n == CAP) { /* the oldest goes */
			int old = -1;

			for (int i = 0; i < IDS; i++)
				if (last[i] && (old < 0 || last[i] < last[old]))
					old = i;
			last[old] = 0;
		}
		snprintf(buf, sizeof(buf), "/%d", id);
		CHECK(idcache_set(c, (uint64_t)id << 32, buf) == 0, "set");
		last[id] = ++tick;
	}
	CHECK(idcache_len(c) == CAP, "full: %zu", idcache_len(c));
	CHECK(idcache_evicted(c) > 0, "some evicted");
	idcache_free(c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_get_set),
		cmocka_unit_test(test_least_recently_used_goes),
		cmocka_unit_test(test_matches_a_reference),
	};

	unit_init();
	return cmocka_run_group_tests_name("idcache", tests, NULL, NULL);
}
