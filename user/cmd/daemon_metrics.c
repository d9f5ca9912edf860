// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>

#include "cmd/daemon_metrics.h"
#include "cmd/daemon_otlp.h"
#include "collect/collector.h"
#include "collect/duty.h"
#include "model/comm_series.h"
#include "model/series_ttl.h"
#include "model/split_hold.h"
#include "render/otlp.h"
#include "render/report_prom.h"
#include "util/clock.h"
#include "util/procfs.h"

/*
 * One scrape: a cumulative snapshot of the maps (*m, which the caller
 * frees, its split held from going back, its rows idle for --series-ttl
 * left out), the per-name series brought up to date, and scprof's own
 * figures into *self; in then refers to all three.
 */
static int scrape(struct daemon *d, bool served, struct sc_model **m,
		  struct prom_self *self, struct prom_input *in)
{
	struct collector_info info;
	uint64_t t0 = clock_mono_ns();
	int err;

	err = collector__snapshot(d->col, m);
	if (!err)
		err = split_hold__apply(d->hold, *m);
	/* after the hold, which needs every row */
	if (!err)
		err = series_ttl__apply(d->ttl, *m, t0);
	if (!err && d->comms) {
		struct sc_model *totals = NULL;

		err = collector__proc_totals(d->col, &totals);
		if (!err)
			err = comm_series__update(d->comms, totals, t0);
		model_free(totals);
	}
	if (!err)
		err = collector__info(d->col, &info);
	if (err)
		return err;
	if (d->comms) {
		in->comms = comm_series__rows(d->comms, &in->ncomms);
		in->labels = &d->o->labels;
		self->comm_folded = comm_series__folded(d->comms);
		self->comm_evicted = comm_series__evicted(d->comms);
	}
	self->progs_attached = info.progs_attached;
	self->stats_entries = info.stats_entries;
	self->stats_max = info.stats_max;
	self->procs_entries = info.procs_entries;
	self->procs_max = info.procs_max;
	self->map_bytes = info.map_bytes;
	self->procs_folded = info.procs_folded;
	self->scrapes = served ? ++d->scrapes : d->scrapes;
	self->scrape_ns = clock_mono_ns() - t0;
	self->cpu_ns = procfs_self_cpu_ns();
	self->rss_bytes = procfs_self_rss_bytes();
	if (d->duty) {
		struct duty_info di;

		err = duty__info(d->duty, &di);
		if (err)
			return err;
		self->sampled = true;
		self->budgeted = di.budgeted;
		self->duty_ratio = di.ratio;
		self->sample_ratio = di.sample_ratio;
		self->budget = di.budget;
		self->enter_s = di.enter_s;
		self->exit_s = di.exit_s;
		self->split = (*m)->meta.split;
		self->switch_s = di.switch_s;
		self->waking_s = di.waking_s;
		self->latency_s = di.latency_s;
		self->latency_cost_s = di.latency_cost_s;
		self->dispatch_ns = di.dispatch_ns;
		self->dispatch_known = di.dispatch_known;
		self->count_s = di.count_s;
		self->windows = di.windows;
		self->windows_closed_early = di.closed_early;
		self->cost_windows = di.cost_windows;
		self->cost_window_s = di.cost_window_s;
	}
	self->slow = d->o->slow_ns != 0;
	self->slow_calls = d->slow_logged;
	self->slow_lost = d->slow_lost;
	if (d->otlp) {
		struct otlp_stats os;

		otlp_exporter__stats(d->otlp, &os);
		self->otlp = true;
		self->otlp_sent = os.sent;
		self->otlp_failed = os.failed;
		self->otlp_dropped = os.dropped;
		self->otlp_retries = os.retries;
		self->otlp_rejected = os.rejected;
		self->otlp_queued = os.queued;
	}
	in->model = *m;
	in->self = self;
	return 0;
}

/* The exposition of a scrape, into a malloc'ed buffer. */
static int render(const struct prom_input *in, char **buf, size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int err;

	if (!f)
		return -errno;
	err = report_prom(f, in);
	if (fclose(f) && !err)
		err = -EIO;
	if (err) {
		free(*buf);
		*buf = NULL;
	}
	return err;
}

int daemon_serve_metrics(struct daemon *d, char **buf, size_t *len)
{
	struct prom_input in = {};
	struct prom_self self = {};
	struct sc_model *m = NULL;
	int err;

	err = scrape(d, true, &m, &self, &in);
	if (!err)
		err = render(&in, buf, len);
	model_free(m);
	/* Models are transient: give their memory back. */
	malloc_trim(0);
	return err;
}

int daemon_otlp_payload(struct daemon *d, uint8_t **buf, size_t *len)
{
	struct prom_input in = {};
	struct prom_self self = {};
	struct sc_model *m = NULL;
	const struct otlp_resource res = {
		.host_name = d->host_name,
		.host_arch = d->host_arch,
		.instance_id = d->instance_id,
	};
	struct otlp_input oi = {
		.prom = &in,
		.res = &res,
		.start_unix_ns = d->start_unix_ns,
		.start_mono_ns = d->start_mono_ns,
	};
	int err;

	err = scrape(d, false, &m, &self, &in);
	oi.now_unix_ns = clock_real_ns();
	if (!err)
		err = otlp_render(&oi, buf, len);
	model_free(m);
	malloc_trim(0);
	return err;
}
