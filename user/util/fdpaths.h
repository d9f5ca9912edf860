/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Which files a process keeps opening: /proc/PID/fd read again and again,
 * counting, for each path of a regular file, directory or device, how
 * often it was seen open on an fd that did not have it in the sample
 * before (an open seen happening). Files held open the whole time count
 * nothing after the first sample, which counts nothing; files opened and
 * closed between two samples are missed: a sample, not a count of opens.
 */
#ifndef SCPROF_FDPATHS_H
#define SCPROF_FDPATHS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Distinct paths kept; later new ones are not counted (fd_paths.full). */
#define FD_PATHS_MAX 256
/* Fds looked at per sample; more are not (a process with thousands of
 * open fds is read in part).
 */
#define FD_PATHS_MAX_FDS 1024

enum fd_path_kind {
	FD_PATH_FILE = 1,
	FD_PATH_DIR,
	FD_PATH_CHR,
	FD_PATH_BLK,
};

struct fd_path {
	char *path;    /* raw bytes from the kernel: escape to print */
	uint64_t seen; /* opens seen happening */
	enum fd_path_kind kind;
};

struct fd_paths {
	struct fd_path *paths;
	size_t npaths;
	struct fd_seen *prev, *cur; /* (fd, path) of the last sample, this */
	size_t nprev, ncur;
	size_t samples;
	bool full; /* a path was not counted: FD_PATHS_MAX reached */
};

/* Within one sample: fd had path (a kind of mode's st_mode) open. */
int fd_paths__observe(struct fd_paths *fp, int fd, const char *path,
		      mode_t mode);
/* The sample is complete. */
void fd_paths__end_sample(struct fd_paths *fp);
/* One sample of /proc/PID/fd. 0, -ESRCH or -ENOMEM. */
int fd_paths__sample(struct fd_paths *fp, pid_t pid);
void fd_paths__free(struct fd_paths *fp);

#endif
