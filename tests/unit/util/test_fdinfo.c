// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* util/fdinfo.c: what an fd of a process is, from /proc, same inode only. */
#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "unit.h"
#include "util/fdinfo.h"

static void test_target(void **state)
{
	char path[] = "/tmp/scprof-fdinfo-XXXXXX", buf[4096], small[8];
	struct stat st;
	int fd = mkstemp(path), p[2];

	(void)state;
	assert_true(fd >= 0);
	assert_int_equal(fstat(fd, &st), 0);
	CHECK(fdinfo_target(getpid(), fd, (uint64_t)st.st_ino, buf,
			    sizeof(buf)) == 0 &&
		      !strcmp(buf, path),
	      "the file's path: '%s'", buf);
	CHECK(fdinfo_target(getpid(), fd, 0, buf, sizeof(buf)) == 0,
	      "no inode to check");
	CHECK(fdinfo_target(getpid(), fd, (uint64_t)st.st_ino + 1, buf,
			    sizeof(buf)) == -ESTALE,
	      "another inode: the fd was reused");
	CHECK(fdinfo_target(getpid(), fd, 0, small, sizeof(small)) == 0 &&
		      strlen(small) == sizeof(small) - 1,
	      "cut to the buffer: '%s'", small);
	unlink(path);
	close(fd);
	CHECK(fdinfo_target(getpid(), fd, 0, buf, sizeof(buf)) == -ENOENT,
	      "a closed fd");
	assert_int_equal(pipe(p), 0);
	CHECK(fdinfo_target(getpid(), p[0], 0, buf, sizeof(buf)) == 0 &&
		      !strncmp(buf, "pipe:[", 6),
	      "a pipe: '%s'", buf);
	close(p[0]);
	close(p[1]);
	CHECK(fdinfo_target(4194305, 0, 0, buf, sizeof(buf)) == -ESRCH,
	      "no such process");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_target),
	};

	unit_init();
	return cmocka_run_group_tests_name("fdinfo", tests, NULL, NULL);
}
