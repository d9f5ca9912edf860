// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "log.h"
#include "output.h"

int output_open(struct output *o, const char *path, FILE *stream)
{
	mode_t mask;
	int fd, err;

	memset(o, 0, sizeof(*o));
	if (!path) {
		o->f = stream;
		return 0;
	}
	o->path = strdup(path);
	if (!o->path || asprintf(&o->tmp, "%s.XXXXXX", path) < 0) {
		o->tmp = NULL;
		err = -ENOMEM;
		goto err;
	}
	fd = mkstemp(o->tmp);
	if (fd < 0) {
		err = -errno;
		pr_err("cannot write '%s': %s", path, strerror(errno));
		free(o->tmp);
		o->tmp = NULL;
		goto err;
	}
	/* mkstemp makes 0600; give the file the mode open(2) would. */
	mask = umask(0);
	umask(mask);
	if (fchmod(fd, 0666 & ~mask)) {
		/* not fatal: the report stays readable by its owner */
	}
	o->f = fdopen(fd, "w");
	if (!o->f) {
		err = -errno;
		close(fd);
		pr_err("cannot write '%s': %s", path, strerror(-err));
		goto err;
	}
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
	if (fflush(o->f) || ferror(o->f) || fsync(fileno(o->f)))
		err = errno ? -errno : -EIO;
	if (fclose(o->f) && !err)
		err = -errno;
	o->f = NULL;
	if (!err && rename(o->tmp, o->path))
		err = -errno;
	if (err) {
		pr_err("cannot write '%s': %s", o->path, strerror(-err));
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
