/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* Sampling a process's /proc figures during a run (scprof verdict). */
#ifndef SCPROF_PROC_SAMPLER_H
#define SCPROF_PROC_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "util/fdpaths.h"
#include "util/procfs.h"

/* The process as /proc shows it over the run. */
struct proc_sampler {
	pid_t pid;
	struct proc_stat first, last;
	uint64_t t_first, t_last; /* when they were read */
	double thread_s;	  /* threads x time, integrated */
	struct task_wait *waits0, *waits1;
	size_t nwaits0, nwaits1;
	bool have_waits;
	bool gone;
	struct fd_paths paths; /* the files it keeps opening */
	bool paths_off;	       /* /proc/PID/fd could not be read */
};

/*
 * Read /proc/PID/stat of a live process: -ESRCH when there is none, it is
 * a zombie, or (start_ticks not 0) its pid now belongs to a process
 * started at another time.
 */
int proc_sampler_read_live(pid_t pid, uint64_t start_ticks,
			   struct proc_stat *st);
/* Begin with the process pid that started at start_ticks. 0 or -errno. */
int proc_sampler__start(struct proc_sampler *s, pid_t pid,
			uint64_t start_ticks);
/* Read again, integrating the thread count; gone once the process is. */
void proc_sampler__tick(struct proc_sampler *s);
/* The last reading, with the run-queue waits at the end. */
void proc_sampler__end(struct proc_sampler *s);
void proc_sampler__free(struct proc_sampler *s);

#endif
