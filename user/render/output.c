// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "render/output.h"
#include "util/log.h"

/* Say that path cannot be written; returns err (-errno). */
static int cannot_write(const char *path, int err)
{
	pr_err("cannot write '%s': %s", path, strerror(-err));
	return err;
}

/* The stream of o over fd, which it then owns. 0 or -errno, reported. */
static int open_stream(struct output *o, int fd, const char *path)
{
	int err;

	o->f = fdopen(fd, "w");
	if (o->f)
		return 0;
	err = -errno;
	close(fd);
	return cannot_write(path, err);
}

/* A device, FIFO or directory: opened as it is, no temporary file. */
static int open_in_place(struct output *o, const char *path)
{
	int fd, err;

	o->path = strdup(path);
	if (!o->path)
		return -ENOMEM;
	fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
	if (fd < 0)
		err = cannot_write(path, -errno);
	else
		err = open_stream(o, fd, path);
	if (err)
		output_abort(o);
	return err;
}

bool output_is_stdout(const char *path)
{
	return path && !strcmp(path, "-");
}

int output_open(struct output *o, const char *path, FILE *stream)
{
	struct stat st;
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!path || output_is_stdout(path)) {
		o->f = path ? stdout : stream;
		return 0;
	}
	if (!stat(path, &st)) {
		if (!S_ISREG(st.st_mode))
			return open_in_place(o, path);
		/* Through a symlink: replace the file, not the link. */
		if (!lstat(path, &st) && S_ISLNK(st.st_mode))
			o->path = realpath(path, NULL);
	}
	if (!o->path)
		o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.XXXXXX", o->path) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto err;
	}
	fd = mkostemp(o->tmp, O_CLOEXEC);
	if (fd < 0) {
		err = cannot_write(path, -errno);
		free(o->tmp);
		o->tmp = NULL;
		goto err;
	}
	/* mkostemp makes 0600; give the file the mode open(2) would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask)) {
		/* not fatal: the report stays readable by its owner */
	}
	err = open_stream(o, fd, path);
	if (err)
		goto err;
	return 0;
err:
	output_abort(o);
	return err;
}

int output_commit(struct output *o)
{
	int err = 0;

	if (!o->path) {
		if (fflush(o->f) || ferror(o->f))
			err = -EIO;
		return err;
	}
	errno = 0;
	if (fflush(o->f) || ferror(o->f) || (o->tmp && fsync(fileno(o->f))))
		err = errno ? -errno : -EIO;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!err && o->tmp && rename(o->tmp, o->path))
		err = -errno;
	if (err) {
		cannot_write(o->path, err);
		output_abort(o);
		return err;
	}
	free(o->tmp);
	free(o->path);
	o->tmp = o->path = NULL;
	return 0;
}

void output_abort(struct output *o)
{
	if (o->path && o->f)
		fclose(o->f);
	if (o->tmp)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	memset(o, 0, sizeof(*o));
}
