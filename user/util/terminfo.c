// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "util/terminfo.h"

/* Where ncurses looks when TERMINFO and TERMINFO_DIRS are not set. */
static bool have_database(void)
{
	static const char *const dirs[] = { "/etc/terminfo", "/lib/terminfo",
					    "/usr/share/terminfo" };
	struct stat st;

	if (getenv("TERMINFO") || getenv("TERMINFO_DIRS"))
		return true;
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++)
		if (!stat(dirs[i], &st) && S_ISDIR(st.st_mode))
			return true;
	return false;
}

static const struct terminfo_builtin *builtin(const char *name)
{
	for (const struct terminfo_builtin *b = terminfo_builtins; b->name; b++)
		if (!strcmp(b->name, name))
			return b;
	return NULL;
}

/* mkdtemp in the first place that takes it. */
static int private_dir(char *dir, size_t len)
{
	const char *bases[] = { getenv("TMPDIR"), "/tmp", "/dev/shm", "" };

	for (size_t i = 0; i < sizeof(bases) / sizeof(bases[0]); i++) {
		if (!bases[i] || strlen(bases[i]) > 32)
			continue;
		snprintf(dir, len, "%s/.scprof-terminfo-XXXXXX", bases[i]);
		if (mkdtemp(dir))
			return 0;
	}
	return -errno;
}

static int write_entry(const char *path, const struct terminfo_builtin *b)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	ssize_t n;

	if (fd < 0)
		return -errno;
	n = write(fd, b->data, b->len);
	if (n != (ssize_t)b->len) {
		int err = n < 0 ? -errno : -EIO;

		close(fd);
		return err;
	}
	return close(fd) ? -errno : 0;
}

int terminfo_fallback(const char *term, struct terminfo_fallback *f,
		      const char **why)
{
	const struct terminfo_builtin *b = builtin(term);
	char sub[sizeof(f->dir) + 4];
	const char *old;
	int err;

	memset(f, 0, sizeof(*f));
	if (!b && have_database())
		return -ENOENT; /* a name terminfo does not know */
	if (!b)
		b = builtin(strncmp(term, "xterm", 5) ? "vt100" : "xterm");
	f->name = b->name;
	*why = "no writable directory ($TMPDIR, /tmp, /dev/shm or /) to "
	       "unpack it in";
	err = private_dir(f->dir, sizeof(f->dir));
	if (err)
		return err;
	*why = "cannot write it";
	snprintf(sub, sizeof(sub), "%s/%c", f->dir, b->name[0]);
	snprintf(f->path, sizeof(f->path), "%s/%s", sub, b->name);
	if (mkdir(sub, 0700)) {
		err = -errno;
		rmdir(f->dir);
		return err;
	}
	err = write_entry(f->path, b);
	if (err) {
		terminfo_fallback_cleanup(f);
		return err;
	}
	old = getenv("TERMINFO");
	f->had_old = old != NULL;
	f->old = old ? strdup(old) : NULL;
	if (setenv("TERMINFO", f->dir, 1)) {
		err = -errno;
		terminfo_fallback_cleanup(f);
		return err;
	}
	return 0;
}

void terminfo_fallback_cleanup(struct terminfo_fallback *f)
{
	char sub[sizeof(f->dir) + 4];

	if (!f->dir[0])
		return;
	if (f->path[0])
		unlink(f->path);
	snprintf(sub, sizeof(sub), "%s/%c", f->dir, f->name[0]);
	rmdir(sub);
	rmdir(f->dir);
	if (f->had_old)
		setenv("TERMINFO", f->old, 1);
	else
		unsetenv("TERMINFO");
	free(f->old);
	f->old = NULL;
	f->dir[0] = 0;
}
