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

struct inflight {
	struct bpf_program *prog; /* the task iterator */
	struct bpf_link *link;	  /* attached once, kept across detaches */
	enum sc_key_kind key_kind;
	/* When the programs were attached (CLOCK_MONOTONIC): the start of a
	 * call that was running then.
	 */
	uint64_t attach_ns;
	/* Calls running since before attach, seen in flight at the last
	 * snapshot; their exit is never recorded, so the time they were
	 * credited with is kept in pre_gone once they have ended, and
	 * cumulative snapshots do not go back.
	 */
	struct sc_flight_call *pre;
	size_t npre;
	uint64_t pre_ns; /* when pre was taken (CLOCK_MONOTONIC) */
	struct sc_model *pre_gone;
};

int inflight_new(struct inflight **out, struct scprof_bpf *skel,
		 enum sc_key_kind key_kind)
{
	struct inflight *f;

	*out = NULL;
	if (!bpf_program__autoload(skel->progs.sc_inflight_iter))
		return 0;
	f = calloc(1, sizeof(*f));
	if (!f)
		return -ENOMEM;
	f->prog = skel->progs.sc_inflight_iter;
	f->key_kind = key_kind;
	*out = f;
	return 0;
}

void inflight_free(struct inflight *f)
{
	if (!f)
		return;
	bpf_link__destroy(f->link);
	free(f->pre);
	model_free(f->pre_gone);
	free(f);
}

int inflight_attach(struct inflight *f)
{
	f->attach_ns = clock_mono_ns();
	if (f->link)
		return 0;
	f->link = bpf_program__attach_iter(f->prog, NULL);
	if (!f->link) {
		int err = -errno;

		pr_err("cannot attach the calls-in-flight iterator: %s",
		       strerror(-err));
		return err;
	}
	return 0;
}

/* The model's key of a call's process: its thread's with --by tid. */
static uint32_t key_pid(const struct inflight *in,
			const struct sc_flight_call *f)
{
	return in->key_kind == SC_KEY_THREAD ? f->tid : f->pid;
}

static int add_one(struct inflight *in, uint64_t now_ns, struct sc_model *m,
		   const struct sc_inflight *rec)
{
	struct sc_flight_call f = {
		.pid = rec->pid,
		.tid = rec->tid,
		.proc_start_ns = rec->proc_start_ns,
		.cgtag = rec->cgtag,
		.nr = rec->nr,
		.abi = rec->abi,
	};
	uint64_t start = rec->start_ns;
	struct sc_proc *p;

	if (!start || start < in->attach_ns) {
		f.before_attach = !start;
		start = in->attach_ns;
	}
	f.ns = now_ns > start ? now_ns - start : 0;
	memcpy(f.comm, rec->comm, sizeof(f.comm));
	p = model_proc(m, key_pid(in, &f), f.proc_start_ns, f.cgtag);
	if (!p || model_proc_add_flight(p, f.abi, f.nr, SC_FD_NONE, f.ns, 1) ||
	    model_flight_add(m, &f))
		return -ENOMEM;
	/* A process seen only blocked has no entry in procs: its name */
	if (!p->comm[0])
		memcpy(p->comm, rec->comm, sizeof(p->comm));
	if (!p->tgid)
		p->tgid = f.pid;
	if (!p->cgid)
		p->cgid = rec->cgid;
	return 0;
}

static bool same_call(const struct sc_flight_call *a,
		      const struct sc_flight_call *b)
{
	return a->tid == b->tid && a->pid == b->pid &&
	       a->proc_start_ns == b->proc_start_ns && a->cgtag == b->cgtag &&
	       a->nr == b->nr && a->abi == b->abi &&
	       a->before_attach == b->before_attach;
}

/*
 * How long a call running at attach lasted, now that it has ended: its end
 * is not recorded, but when its thread is in a new call, it ended before
 * that one began; otherwise it is given what the last snapshot saw.
 */
static uint64_t pre_attach_length(const struct inflight *in,
				  const struct sc_flight_call *f,
				  const struct sc_model *m, uint64_t now_ns)
{
	uint64_t upto = f->ns;

	for (size_t j = 0; j < m->nflights; j++) {
		const struct sc_flight_call *g = &m->flights[j];
		uint64_t next_start;

		if (g->tid != f->tid || g->pid != f->pid || g->before_attach ||
		    now_ns < g->ns)
			continue;
		next_start = now_ns - g->ns;
		if (next_start > in->pre_ns)
			upto = f->ns + (next_start - in->pre_ns);
	}
	return upto;
}

/*
 * A call that was running at attach and has ended since the last snapshot
 * keeps its time (pre_attach_length): move it to pre_gone. Then remember
 * the ones running now, and add pre_gone to m.
 */
static int keep_pre_attach(struct inflight *in, struct sc_model *m,
			   uint64_t now_ns)
{
	struct sc_flight_call *now = NULL;
	size_t n = 0;

	if (!in->pre_gone) {
		in->pre_gone = model_new();
		if (!in->pre_gone)
			return -ENOMEM;
	}
	for (size_t i = 0; i < in->npre; i++) {
		const struct sc_flight_call *f = &in->pre[i];
		struct sc_proc *p;
		bool running = false;

		for (size_t j = 0; j < m->nflights && !running; j++)
			running = same_call(f, &m->flights[j]);
		if (running)
			continue;
		p = model_proc(in->pre_gone, key_pid(in, f), f->proc_start_ns,
			       f->cgtag);
		if (!p || model_proc_add_flight(
				  p, f->abi, f->nr, SC_FD_NONE,
				  pre_attach_length(in, f, m, now_ns), 0))
			return -ENOMEM;
		memcpy(p->comm, f->comm, sizeof(p->comm));
	}
	for (size_t j = 0; j < m->nflights; j++)
		n += m->flights[j].before_attach;
	if (n) {
		now = malloc(n * sizeof(*now));
		if (!now)
			return -ENOMEM;
		n = 0;
		for (size_t j = 0; j < m->nflights; j++)
			if (m->flights[j].before_attach)
				now[n++] = m->flights[j];
	}
	free(in->pre);
	in->pre = now;
	in->npre = n;
	in->pre_ns = now_ns;
	for (size_t i = 0; i < in->pre_gone->nprocs; i++) {
		const struct sc_proc *g = &in->pre_gone->procs[i];
		struct sc_proc *p =
			model_proc(m, g->pid, g->start_ns, g->cgtag);

		if (!p || model_proc_merge(p, g))
			return -ENOMEM;
		if (!p->comm[0])
			memcpy(p->comm, g->comm, sizeof(p->comm));
	}
	return 0;
}

int inflight_add(struct inflight *in, uint64_t now_ns, struct sc_model *m)
{
	struct sc_inflight rec;
	size_t have = 0;
	int fd, err = 0;
	ssize_t n;

	if (!in->link)
		return 0;
	fd = bpf_iter_create(bpf_link__fd(in->link));
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
		err = add_one(in, now_ns, m, &rec);
		if (err)
			break;
	}
	if (n < 0 && !err) {
		err = -errno;
		pr_err("cannot read the calls in flight: %s", strerror(-err));
	}
	close(fd);
	if (!err) {
		m->meta.flights_known = true;
		model_flights_sort(m);
		err = keep_pre_attach(in, m, now_ns);
	}
	return err;
}
