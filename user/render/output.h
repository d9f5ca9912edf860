/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Where a report goes: a stream, or a file written to a temporary name in
 * the same directory and renamed into place on success, so that a failed
 * or interrupted run never leaves a partial file behind. A path naming
 * something else than a regular file (/dev/null, a FIFO, /dev/stdout) is
 * written in place: renaming over it would replace it with a file.
 * "-" is standard output, as for curl, tar and perf (./- names a file
 * called -).
 */
#ifndef SCPROF_OUTPUT_H
#define SCPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

struct output {
	FILE *f;
	char *path; /* NULL: writing to a stream we do not own */
	char *tmp;  /* NULL with a path: writing in place */
};

/* Does path name standard output ("-")? */
bool output_is_stdout(const char *path);
/* path NULL: use stream; "-": stdout. 0 or -errno, reported in one line. */
int output_open(struct output *o, const char *path, FILE *stream);
/* Flush and, for a file, move it into place. 0 or -errno, reported. */
int output_commit(struct output *o);
/* Drop a file that was not committed. Safe after commit. */
void output_abort(struct output *o);

#endif
