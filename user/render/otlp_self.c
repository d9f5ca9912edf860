// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * scprof's own figures in the OTLP payload (otlp_self.h), as
 * report_prom.c's self metrics: what was dropped, the BPF side's cost and
 * maps, the latency windows, the slow calls, the OTLP exports, the
 * daemon's scrapes, CPU and memory.
 */
#include <stdio.h>

#include "model/names.h"
#include "render/drops.h"
#include "render/otlp_self.h"

static void latency(struct otlp_msg *b, const struct prom_self *s)
{
	Metric *m =
		otlp_metric(b, OTLP_SUM, "scprof.bpf.run", "s",
			    "CPU time of scprof's syscall programs, and of the "
			    "split's scheduler programs, as they measure it "
			    "themselves.");

	otlp_set_double(otlp_point(b, m, "program", "sys_enter", NULL, NULL),
			s->enter_s);
	otlp_set_double(otlp_point(b, m, "program", "sys_exit", NULL, NULL),
			s->exit_s);
	if (s->split) {
		otlp_set_double(otlp_point(b, m, "program", "sched_switch",
					   NULL, NULL),
				s->switch_s);
		otlp_set_double(otlp_point(b, m, "program", "sched_waking",
					   NULL, NULL),
				s->waking_s);
	}
	m = otlp_metric(b, OTLP_SUM, "scprof.bpf.cost", "s",
			"The same CPU time by part: count and latency.");
	otlp_set_double(otlp_point(b, m, "part", "count", NULL, NULL),
			s->count_s);
	otlp_set_double(otlp_point(b, m, "part", "latency", NULL, NULL),
			s->latency_s);
	otlp_single_double(b, OTLP_SUM, "scprof.latency.cost", "s",
			   "CPU time the latency windows cost (--max-overhead "
			   "holds this).",
			   s->latency_cost_s);
	if (s->dispatch_known)
		otlp_single_double(
			b, OTLP_GAUGE, "scprof.latency.dispatch", "s",
			"The tracepoint's dispatch, per call, as last "
			"measured.",
			s->dispatch_ns / 1e9);
	otlp_single_double(b, OTLP_GAUGE, "scprof.latency.sample", "1",
			   "Share of time that calls were timed, over the last "
			   "period.",
			   s->sample_ratio);
	otlp_single_double(
		b, OTLP_GAUGE, "scprof.latency.duty", "1",
		"Share of the current period planned for timing calls.",
		s->duty_ratio);
	if (s->budgeted)
		otlp_single_double(
			b, OTLP_GAUGE, "scprof.latency.budget", "1",
			"CPU the latency part may use, as a fraction of "
			"one CPU (--max-overhead).",
			s->budget);
	otlp_single_int(b, OTLP_SUM, "scprof.latency.windows", "{window}",
			"Latency windows opened.", s->windows);
	otlp_single_int(
		b, OTLP_SUM, "scprof.latency.windows.closed_early", "{window}",
		"Latency windows closed early because the period's budget "
		"was spent.",
		s->windows_closed_early);
	if (s->cost_windows)
		otlp_single_double(b, OTLP_SUM, "scprof.bpf.cost_window", "s",
				   "Time in cost windows.", s->cost_window_s);
}

void otlp_self_metrics(struct otlp_msg *b, const struct prom_self *s,
		       const struct sc_model *m, bool with_comms)
{
	Metric *x =
		otlp_metric(b, OTLP_SUM, "scprof.dropped", "{event}",
			    "What the BPF side could not keep, by reason (see "
			    "scprof daemon's /metrics).");

	for (int r = 0; r < DROP_REASONS; r++)
		otlp_set_int(otlp_point(b, x, "reason", drop_key(r), NULL,
					NULL),
			     drop_count(&m->meta, r));
	x = otlp_metric(
		b, OTLP_SUM, "scprof.map.update_failures", "{failure}",
		"Failed updates of scprof's BPF maps, by map and errno.");
	for (uint32_t i = 0; i < m->meta.nfails && !b->err; i++) {
		const struct sc_map_fail *f = &m->meta.fails[i];
		const char *name = names_errno((int)f->err);
		char *num;

		if (!name) {
			num = otlp_alloc(b, 16);
			if (!num)
				return;
			snprintf(num, 16, "%u", f->err);
			name = num;
		}
		otlp_set_int(otlp_point(b, x, "map", drop_map_name(f->map),
					"errno", name),
			     f->count);
	}
	otlp_single_int(b, OTLP_GAUGE, "scprof.bpf.programs_attached",
			"{program}", "BPF programs attached (links held).",
			s->progs_attached);
	x = otlp_metric(b, OTLP_GAUGE, "scprof.bpf.map.entries", "{entry}",
			"Entries in the BPF maps that hold live processes.");
	otlp_set_int(otlp_point(b, x, "map", "stats", NULL, NULL),
		     s->stats_entries);
	otlp_set_int(otlp_point(b, x, "map", "procs", NULL, NULL),
		     s->procs_entries);
	x = otlp_metric(b, OTLP_GAUGE, "scprof.bpf.map.max_entries", "{entry}",
			"Capacity of those BPF maps.");
	otlp_set_int(otlp_point(b, x, "map", "stats", NULL, NULL),
		     s->stats_max);
	otlp_set_int(otlp_point(b, x, "map", "procs", NULL, NULL),
		     s->procs_max);
	otlp_single_int(b, OTLP_GAUGE, "scprof.bpf.map.memory", "By",
			"Kernel memory of scprof's BPF maps.", s->map_bytes);
	otlp_single_int(b, OTLP_SUM, "scprof.processes.folded", "{process}",
			"Exited processes folded out of the BPF maps.",
			s->procs_folded);
	if (with_comms) {
		otlp_single_int(
			b, OTLP_SUM, "scprof.group.series.folded", "{series}",
			"Names whose figures went to the other series for "
			"want of a series.",
			s->comm_folded);
		otlp_single_int(b, OTLP_SUM, "scprof.group.series.evicted",
				"{series}", "Series dropped after being idle.",
				s->comm_evicted);
	}
	if (s->sampled)
		latency(b, s);
	if (s->slow) {
		otlp_single_int(b, OTLP_SUM, "scprof.slow.calls", "{call}",
				"Calls that took --slow's threshold or longer.",
				s->slow_calls);
		otlp_single_int(b, OTLP_SUM, "scprof.slow.calls.lost", "{call}",
				"Slow calls that could not be logged.",
				s->slow_lost);
	}
	if (s->otlp) {
		otlp_single_int(b, OTLP_SUM, "scprof.otlp.exports.sent",
				"{export}",
				"OTLP exports the receiver accepted.",
				s->otlp_sent);
		otlp_single_int(b, OTLP_SUM, "scprof.otlp.exports.failed",
				"{export}",
				"OTLP exports given up: refused for good, or "
				"still failing after every retry.",
				s->otlp_failed);
		otlp_single_int(
			b, OTLP_SUM, "scprof.otlp.exports.dropped", "{export}",
			"OTLP exports dropped unsent: the queue was full.",
			s->otlp_dropped);
		otlp_single_int(b, OTLP_SUM, "scprof.otlp.retries", "{attempt}",
				"OTLP export attempts repeated (429, 502, 503, "
				"504, connection errors).",
				s->otlp_retries);
		otlp_single_int(
			b, OTLP_SUM, "scprof.otlp.points.rejected", "{point}",
			"Data points the receiver rejected in exports it "
			"accepted (partial success).",
			s->otlp_rejected);
		otlp_single_int(b, OTLP_GAUGE, "scprof.otlp.queued_exports",
				"{export}", "OTLP exports waiting to be sent.",
				s->otlp_queued);
	}
	otlp_single_int(b, OTLP_SUM, "scprof.scrapes", "{scrape}",
			"Scrapes of /metrics served.", s->scrapes);
	otlp_single_double(b, OTLP_GAUGE, "scprof.scrape.duration", "s",
			   "Time the last reading of the BPF maps took.",
			   otlp_seconds(s->scrape_ns));
	otlp_single_double(b, OTLP_SUM, "scprof.cpu", "s",
			   "CPU time used by the scprof daemon itself (user + "
			   "system).",
			   otlp_seconds(s->cpu_ns));
	otlp_single_int(b, OTLP_GAUGE, "scprof.resident_memory", "By",
			"Resident memory of the scprof daemon.", s->rss_bytes);
	otlp_set_int(otlp_point(b,
				otlp_metric(b, OTLP_GAUGE, "scprof.build_info",
					    "", "scprof's version."),
				"version", SCPROF_VERSION, NULL, NULL),
		     1);
}
