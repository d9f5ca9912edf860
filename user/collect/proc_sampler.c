// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A process as /proc shows it over a run: CPU times, threads, run-queue
 * waits and the files it opens (verdict's sampler).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "collect/proc_sampler.h"
#include "util/clock.h"
#include "util/log.h"

int proc_sampler_read_live(pid_t pid, uint64_t start_ticks,
			   struct proc_stat *st)
{
	int err = procfs_read_stat(pid, st);

	if (err)
		return err;
	if (st->state == 'Z' || st->state == 'X' ||
	    (start_ticks && st->starttime_ticks != start_ticks))
		return -ESRCH;
	return 0;
}

/* Another sample of the paths it has open; on an error, no more. */
static void sample_paths(struct proc_sampler *s)
{
	int err;

	if (s->paths_off)
		return;
	err = fd_paths__sample(&s->paths, s->pid);
	if (err && err != -ESRCH) {
		pr_warn("cannot read /proc/%d/fd: %s; the files it opens are "
			"not named",
			(int)s->pid, strerror(-err));
		s->paths_off = true;
	}
}

/* Read again, integrating the thread count; gone once the process is. */
void proc_sampler__tick(struct proc_sampler *s)
{
	struct proc_stat st;
	uint64_t t;

	if (s->gone)
		return;
	if (proc_sampler_read_live(s->pid, s->first.starttime_ticks, &st)) {
		s->gone = true;
		return;
	}
	t = clock_mono_ns();
	s->thread_s += (double)(t - s->t_last) / 1e9 *
		       (double)(s->last.num_threads + st.num_threads) / 2;
	s->last = st;
	s->t_last = t;
	sample_paths(s);
}

/* Begin with the process pid that started at start_ticks. */
int proc_sampler__start(struct proc_sampler *s, pid_t pid, uint64_t start_ticks)
{
	int err;

	s->pid = pid;
	err = proc_sampler_read_live(pid, start_ticks, &s->first);
	if (err)
		return err;
	s->have_waits = !procfs_task_waits(pid, &s->waits0, &s->nwaits0);
	s->last = s->first;
	s->t_first = s->t_last = clock_mono_ns();
	sample_paths(s);
	return 0;
}

void proc_sampler__end(struct proc_sampler *s)
{
	proc_sampler__tick(s);
	if (s->gone || !s->have_waits ||
	    procfs_task_waits(s->pid, &s->waits1, &s->nwaits1))
		s->have_waits = false;
}

void proc_sampler__free(struct proc_sampler *s)
{
	free(s->waits0);
	free(s->waits1);
	fd_paths__free(&s->paths);
}
