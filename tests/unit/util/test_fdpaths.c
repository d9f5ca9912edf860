// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* user/util/fdpaths.c: paths a process keeps opening, from /proc samples. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "unit.h"
#include "util/fdpaths.h"

static const struct fd_path *path(const struct fd_paths *fp, const char *p)
{
	for (size_t i = 0; i < fp->npaths; i++)
		if (!strcmp(fp->paths[i].path, p))
			return &fp->paths[i];
	return NULL;
}

/*
 * A log held open counts nothing; a file opened and closed between samples
 * counts each time it is seen again; the first sample counts nothing.
 */
static void test_counts_opens_seen(void **state)
{
	struct fd_paths fp = {};

	(void)state;
	for (int s = 0; s < 6; s++) {
		assert_int_equal(fd_paths__observe(&fp, 2, "/var/log/x.log",
						   S_IFREG | 0644),
				 0);
		/* open in samples 0, 1, 3, 5: new in 3 and 5 */
		if (s != 2 && s != 4)
			assert_int_equal(fd_paths__observe(&fp, 7,
							   "/dev/urandom",
							   S_IFCHR | 0666),
					 0);
		/* a socket or pipe is never a path */
		assert_int_equal(fd_paths__observe(&fp, 8, "/run/x.sock",
						   S_IFSOCK | 0666),
				 0);
		fd_paths__end_sample(&fp);
	}
	assert_int_equal(fp.npaths, 2);
	assert_int_equal(path(&fp, "/var/log/x.log")->seen, 0);
	assert_int_equal(path(&fp, "/var/log/x.log")->kind, FD_PATH_FILE);
	assert_int_equal(path(&fp, "/dev/urandom")->seen, 2);
	assert_int_equal(path(&fp, "/dev/urandom")->kind, FD_PATH_CHR);
	assert_null(path(&fp, "/run/x.sock"));
	fd_paths__free(&fp);
}

/* The same fd now on another file is an open seen. */
static void test_fd_reused(void **state)
{
	struct fd_paths fp = {};

	(void)state;
	fd_paths__observe(&fp, 5, "/a", S_IFREG);
	fd_paths__end_sample(&fp);
	fd_paths__observe(&fp, 5, "/b", S_IFDIR);
	fd_paths__end_sample(&fp);
	fd_paths__observe(&fp, 5, "/a", S_IFREG);
	fd_paths__end_sample(&fp);
	assert_int_equal(path(&fp, "/a")->seen, 1);
	assert_int_equal(path(&fp, "/b")->seen, 1);
	assert_int_equal(path(&fp, "/b")->kind, FD_PATH_DIR);
	fd_paths__free(&fp);
}

/* Paths past FD_PATHS_MAX are not kept, and that is said. */
static void test_full(void **state)
{
	struct fd_paths fp = {};
	char p[32];

	(void)state;
	for (int i = 0; i < FD_PATHS_MAX + 5; i++) {
		snprintf(p, sizeof(p), "/f%d", i);
		assert_int_equal(fd_paths__observe(&fp, i, p, S_IFREG), 0);
	}
	assert_int_equal(fp.npaths, FD_PATHS_MAX);
	assert_true(fp.full);
	fd_paths__free(&fp);
}

/* Our own /proc/self/fd: a file we open between samples is seen. */
static void test_sample_self(void **state)
{
	struct fd_paths fp = {};
	int fd;

	(void)state;
	assert_int_equal(fd_paths__sample(&fp, getpid()), 0);
	fd = open("/dev/null", O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(fd_paths__sample(&fp, getpid()), 0);
	close(fd);
	assert_non_null(path(&fp, "/dev/null"));
	assert_true(path(&fp, "/dev/null")->seen >= 1);
	assert_int_equal(path(&fp, "/dev/null")->kind, FD_PATH_CHR);
	assert_int_equal(fd_paths__sample(&fp, 0x7ffffff0), -ESRCH);
	fd_paths__free(&fp);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_counts_opens_seen),
		cmocka_unit_test(test_fd_reused),
		cmocka_unit_test(test_full),
		cmocka_unit_test(test_sample_self),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
