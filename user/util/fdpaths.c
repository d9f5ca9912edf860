// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Paths a process keeps opening, sampled from /proc/PID/fd. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fdpaths.h"

struct fd_seen {
	int fd;
	size_t path; /* index into paths */
};

static int kind_of(mode_t mode)
{
	if (S_ISREG(mode))
		return FD_PATH_FILE;
	if (S_ISDIR(mode))
		return FD_PATH_DIR;
	if (S_ISCHR(mode))
		return FD_PATH_CHR;
	if (S_ISBLK(mode))
		return FD_PATH_BLK;
	return 0;
}

/* The index of path of kind, added if new; -ENOSPC when full. */
static int path_index(struct fd_paths *fp, const char *path, int kind,
		      size_t *idx)
{
	struct fd_path *tmp;

	for (size_t i = 0; i < fp->npaths; i++) {
		if ((int)fp->paths[i].kind == kind &&
		    !strcmp(fp->paths[i].path, path)) {
			*idx = i;
			return 0;
		}
	}
	if (fp->npaths == FD_PATHS_MAX) {
		fp->full = true;
		return -ENOSPC;
	}
	if (!fp->npaths) {
		fp->paths = calloc(FD_PATHS_MAX, sizeof(*fp->paths));
		if (!fp->paths)
			return -ENOMEM;
	}
	tmp = &fp->paths[fp->npaths];
	tmp->path = strdup(path);
	if (!tmp->path)
		return -ENOMEM;
	tmp->seen = 0;
	tmp->kind = (enum fd_path_kind)kind;
	*idx = fp->npaths++;
	return 0;
}

static bool had(const struct fd_paths *fp, int fd, size_t idx)
{
	for (size_t i = 0; i < fp->nprev; i++)
		if (fp->prev[i].fd == fd)
			return fp->prev[i].path == idx;
	return false;
}

int fd_paths__observe(struct fd_paths *fp, int fd, const char *path,
		      mode_t mode)
{
	int kind = kind_of(mode), err;
	size_t idx;

	if (!kind || fp->ncur == FD_PATHS_MAX_FDS)
		return 0;
	err = path_index(fp, path, kind, &idx);
	if (err)
		return err == -ENOSPC ? 0 : err;
	if (!fp->cur)
		fp->cur = calloc(FD_PATHS_MAX_FDS, sizeof(*fp->cur));
	if (!fp->prev)
		fp->prev = calloc(FD_PATHS_MAX_FDS, sizeof(*fp->prev));
	if (!fp->cur || !fp->prev)
		return -ENOMEM;
	/* The first sample only tells what was open already. */
	if (fp->samples && !had(fp, fd, idx))
		fp->paths[idx].seen++;
	fp->cur[fp->ncur].fd = fd;
	fp->cur[fp->ncur].path = idx;
	fp->ncur++;
	return 0;
}

void fd_paths__end_sample(struct fd_paths *fp)
{
	struct fd_seen *t = fp->prev;

	fp->prev = fp->cur;
	fp->nprev = fp->ncur;
	fp->cur = t;
	fp->ncur = 0;
	fp->samples++;
}

int fd_paths__sample(struct fd_paths *fp, pid_t pid)
{
	char dir[64];
	struct dirent *e;
	int err = 0;
	DIR *d;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	d = opendir(dir);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while (!err && (e = readdir(d))) {
		char link[96], path[4096];
		struct stat st;
		ssize_t len;
		long fd;
		char *end;

		fd = strtol(e->d_name, &end, 10);
		if (*end || fd < 0 || e->d_name[0] == '\0')
			continue;
		snprintf(link, sizeof(link), "%s/%ld", dir, fd);
		len = readlink(link, path, sizeof(path) - 1);
		/* sockets, pipes, anon inodes: "socket:[123]" and the like */
		if (len <= 0 || path[0] != '/')
			continue;
		path[len] = '\0';
		if (stat(link, &st))
			continue; /* closed meanwhile */
		err = fd_paths__observe(fp, (int)fd, path, st.st_mode);
	}
	closedir(d);
	fd_paths__end_sample(fp);
	return err;
}

void fd_paths__free(struct fd_paths *fp)
{
	for (size_t i = 0; i < fp->npaths; i++)
		free(fp->paths[i].path);
	free(fp->paths);
	free(fp->prev);
	free(fp->cur);
	memset(fp, 0, sizeof(*fp));
}
