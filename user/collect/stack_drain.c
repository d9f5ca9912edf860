// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --stacks: the stack_events ring buffer, drained on the run loop's timer
 * (the BPF side does not wake us up), each sample unwound as it comes
 * (unwind.c) while its process's mappings can still be read.
 */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "collect/collector.h"
#include "collect/collector_priv.h"
#include "collect/unwind.h"
#include "model/stacks.h"
#include "util/log.h"

static int on_stack_event(void *ctx, void *data, size_t size)
{
	struct collector *c = ctx;
	int err;

	if (size < sizeof(struct sc_stack_event))
		return 0;
	err = unwinder_add(c->unwinder, data, c->stacks);
	if (err)
		c->stacks_err = err;
	return 0;
}

void collector_stacks_configure(struct collector *c)
{
	struct scprof_bpf *skel = c->skel;

	skel->rodata->stack_period = c->opts.stack_period;
	if (!c->opts.stack_period) /* the smallest ring buffer: a page */
		bpf_map__set_max_entries(skel->maps.stack_events,
					 (__u32)sysconf(_SC_PAGESIZE));
}

int collector_stacks_setup(struct collector *c)
{
	int err;

	if (!c->opts.stack_period)
		return 0;
	c->stacks = stacks_new(c->opts.stack_period);
	c->unwinder = unwinder_new();
	if (!c->stacks || !c->unwinder)
		return -ENOMEM;
	c->stack_rb = ring_buffer__new(bpf_map__fd(c->skel->maps.stack_events),
				       on_stack_event, c, NULL);
	if (!c->stack_rb) {
		err = -errno;
		pr_err("cannot open the stack ring buffer: %s", strerror(-err));
		return err;
	}
	return 0;
}

int collector__stacks_poll(struct collector *c)
{
	int n;

	if (!c->stack_rb)
		return 0;
	n = ring_buffer__consume(c->stack_rb);
	if (n < 0)
		return n;
	if (c->stacks_err) {
		pr_err("cannot unwind the sampled stacks: %s",
		       strerror(-c->stacks_err));
		return c->stacks_err;
	}
	return 0;
}

int collector_stacks_add(struct collector *c, struct sc_model *m)
{
	int err;

	if (!c->stack_rb)
		return 0;
	err = collector__stacks_poll(c);
	if (err)
		return err;
	m->stacks = stacks_clone(c->stacks);
	if (!m->stacks)
		return -ENOMEM;
	for (int nr = 0; nr < SC_NR_MAX; nr++) {
		uint64_t lost = __atomic_load_n(&c->skel->bss->stack_lost[nr],
						__ATOMIC_RELAXED);

		m->stacks->lost[nr] = lost;
		m->stacks->lost_total += lost;
	}
	stacks_sort(m->stacks);
	return 0;
}

void collector_stacks_free(struct collector *c)
{
	ring_buffer__free(c->stack_rb);
	unwinder_free(c->unwinder);
	stacks_free(c->stacks);
}

void collector__unwind_stats(const struct collector *c, uint64_t *samples,
			     uint64_t *frames)
{
	struct unwinder_stats st = {};

	if (c->unwinder)
		unwinder_stats(c->unwinder, &st);
	*samples = st.samples;
	*frames = st.frames;
}
