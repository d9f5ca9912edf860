// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * The calls in flight at a report: a task iterator (bpf/inflight.bpf.h)
 * writes one struct sc_inflight per target thread inside a syscall; each
 * goes to the model's list, and its time so far to its row (time, not a
 * call: calls are counted when they return).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "collect/collector_priv.h"
#include "util/clock.h"
#include "util/log.h"

int collector_inflight_attach(struct collector *c)
{
	struct bpf_program *prog = c->skel->progs.sc_inflight_iter;

	c->attach_ns = clock_mono_ns();
	if (c->inflight_link || !bpf_program__autoload(prog))
		return 0;
	c->inflight_link = bpf_program__attach_iter(prog, NULL);
	if (!c->inflight_link) {
		int err = -errno;

		pr_err("cannot attach the calls-in-flight iterator: %s",
		       strerror(-err));
		return err;
	}
	return 0;
}

static int add_one(struct collector *c, uint64_t now_ns, struct sc_model *m,
		   const struct sc_inflight *rec)
{
	struct sc_flight_call f = {
		.pid = rec->pid,
		.tid = rec->tid,
		.proc_start_ns = rec->proc_start_ns,
		.nr = rec->nr,
		.abi = rec->abi,
	};
	uint64_t start = rec->start_ns;
	struct sc_proc *p;

	if (!start || start < c->attach_ns) {
		f.before_attach = !start;
		start = c->attach_ns;
	}
	f.ns = now_ns > start ? now_ns - start : 0;
	memcpy(f.comm, rec->comm, sizeof(f.comm));
	p = model_proc(m, f.pid, f.proc_start_ns);
	if (!p || model_proc_add_flight(p, f.abi, f.nr, f.ns, 1) ||
	    model_flight_add(m, &f))
		return -ENOMEM;
	/* A process seen only blocked has no entry in procs: its name */
	if (!p->comm[0])
		memcpy(p->comm, rec->comm, sizeof(p->comm));
	return 0;
}

int collector_inflight_add(struct collector *c, uint64_t now_ns,
			   struct sc_model *m)
{
	struct sc_inflight rec;
	size_t have = 0;
	int fd, err = 0;
	ssize_t n;

	if (!c->inflight_link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(c->inflight_link));
	if (fd < 0) {
		err = -errno;
		pr_err("cannot read the calls in flight: %s", strerror(-err));
		return err;
	}
	/* Records are whole in the stream, but read() may cut them. */
	while ((n = read(fd, (char *)&rec + have, sizeof(rec) - have)) > 0) {
		have += (size_t)n;
		if (have < sizeof(rec))
			continue;
		have = 0;
		err = add_one(c, now_ns, m, &rec);
		if (err)
			break;
	}
	if (n < 0 && !err) {
		err = -errno;
		pr_err("cannot read the calls in flight: %s", strerror(-err));
	}
	close(fd);
	if (!err) {
		m->flights_known = true;
		model_flights_sort(m);
	}
	return err;
}
