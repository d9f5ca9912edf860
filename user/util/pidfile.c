// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>

#include "util/pidfile.h"
#include "util/log.h"

/* Lock fd; when another process holds it, say which (the pid it wrote). */
static int lock(int fd, const char *path)
{
	char buf[32];
	int err, n;

	if (!flock(fd, LOCK_EX | LOCK_NB))
		return 0;
	err = errno == EWOULDBLOCK ? -EBUSY : -errno;
	n = (int)read(fd, buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	if (err == -EBUSY)
		pr_err("pidfile '%s' is locked by a running daemon (pid %s)",
		       path, *buf ? buf : "?");
	else
		pr_err("cannot lock pidfile '%s': %s", path, strerror(-err));
	return err;
}

static int write_pid(int fd)
{
	char buf[32];
	int n = snprintf(buf, sizeof(buf), "%d\n", (int)getpid());
	ssize_t w;

	if (ftruncate(fd, 0))
		return -errno;
	w = pwrite(fd, buf, (size_t)n, 0);
	return w < 0 ? -errno : w != n ? -EIO : 0; /* short: no errno */
}

int pidfile_open(const char *path)
{
	int fd, err;

	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot open pidfile '%s': %s", path, strerror(-err));
		return err;
	}
	err = lock(fd, path);
	if (err) {
		close(fd);
		return err;
	}
	err = write_pid(fd);
	if (err) {
		pr_err("cannot write pidfile '%s': %s", path, strerror(-err));
		unlink(path);
		close(fd);
		return err;
	}
	return fd;
}

void pidfile_close(int fd, const char *path)
{
	if (fd < 0)
		return;
	if (unlink(path) && errno != ENOENT)
		pr_warn("cannot remove pidfile '%s': %s", path,
			strerror(errno));
	close(fd);
}
