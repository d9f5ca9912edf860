// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rendering a verdict: a short report with its evidence, or JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/verdict_report.h"
#include "render/verdict_advice.h"
#include "render/jsonw.h"
#include "render/report_json.h"
#include "render/report_table.h"
#include "util/escape.h"

/* 12345678 -> "12,345,678" */
static const char *grouped(uint64_t n, char *buf, size_t len)
{
	char tmp[32];
	size_t l, o = 0;

	snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)n);
	l = strlen(tmp);
	for (size_t i = 0; i < l && o + 2 < len; i++) {
		if (i && (l - i) % 3 == 0)
			buf[o++] = ',';
		buf[o++] = tmp[i];
	}
	buf[o] = '\0';
	return buf;
}

static void print_head(FILE *f, const struct verdict *v,
		       const struct verdict_meta *m)
{
	char *comm = esc_text(m->comm ? m->comm : "",
			      strlen(m->comm ? m->comm : ""));
	char ans[VERDICT_ANSWER_LEN];

	fprintf(f, "scprof verdict: pid %d (%s), %s %.1f s, %llu thread%s\n\n",
		(int)m->pid, comm ? comm : "",
		m->exited ? "exited after" : "profiled", v->wall_s,
		(unsigned long long)m->threads, m->threads == 1 ? "" : "s");
	free(comm);
	verdict_answer(v, ans, sizeof(ans));
	fprintf(f, "Is it the syscalls? %s\n\n", ans);
}

/* Of the calls' time (those that returned), the share on a CPU. */
static double split_on_cpu(const struct verdict *v)
{
	double on = v->split_s - v->wait_s - v->split_blocked_s;

	return v->split_s > 0 && on > 0 ? on / v->split_s : 0;
}

/* Its cgroup's CPU quota and throttling, when it has a quota. */
static void print_quota(FILE *f, const struct verdict *v)
{
	const struct sc_throttle *t = &v->throttle;
	char q[VERDICT_ADVICE_LEN / 2], a[32], b[32];

	if (!t->known || (t->quota_us < 0 && !t->throttled_ns))
		return;
	verdict_quota_name(t, q, sizeof(q));
	fprintf(f, "  %-15s throttled %.2f s, in %llu of %llu periods, by %s",
		"cpu quota", (double)t->throttled_ns / 1e9,
		(unsigned long long)t->nr_throttled,
		(unsigned long long)t->nr_periods, q);
	if (t->quota_us >= 0)
		fprintf(f, ": %s every %s",
			verdict_dur_text((double)t->quota_us * 1e3, a,
					 sizeof(a)),
			verdict_dur_text((double)t->period_us * 1e3, b,
					 sizeof(b)));
	fputc('\n', f);
}

static void print_figures(FILE *f, const struct verdict *v,
			  const struct verdict_meta *m)
{
	const struct calibration *cal = m->cal;
	char a[32], b[32];
	long long age = m->now - (cal ? cal->created : m->now);

	fprintf(f,
		"  %-15s %.0f%% of its threads' wall time was inside "
		"syscalls (%.0f%% asleep in them)\n",
		"syscall_share", 100 * v->syscall_share,
		100 * v->blocked_share);
	if (v->split && v->split_s > 0)
		fprintf(f,
			"  %-15s of the calls' time (those that returned): "
			"%.0f%% on a CPU, %.0f%% waiting\n"
			"  %-15s for a CPU, %.0f%% asleep\n",
			"split", 100 * split_on_cpu(v), 100 * v->wait_share, "",
			100 * v->split_blocked_s / v->split_s);
	if (v->cpu_measured)
		fprintf(f,
			"  %-15s %s: %.0f%% of its CPU time was inside "
			"syscalls (rule: >= 50%%, with\n  %-15s >= 0.1 CPU "
			"busy)\n",
			"syscall_bound", v->syscall_bound ? "yes" : "no",
			100 * v->cpu_syscall_share, "");
	else
		fprintf(f, "  %-15s no: %s\n", "syscall_bound",
			v->idle ? "it used no CPU time" :
				  "its CPU time was too small to measure "
				  "(/proc counts clock ticks)");
	fprintf(f,
		"  %-15s %.2f s, %.2f CPUs (/proc: %.2f s user, %.2f s "
		"system, scprof's share taken off);\n"
		"  %-15s %.2f s waiting for a CPU\n",
		"CPU time", v->cpu_s, v->cpus, v->user_s, v->system_s, "",
		v->runq_s);
	fprintf(f, "  %-15s %s calls, %s per second\n", "syscalls",
		grouped(v->calls, a, sizeof(a)),
		grouped((uint64_t)(v->calls_per_s + 0.5), b, sizeof(b)));
	if (v->cpu_measured)
		fprintf(f,
			"  %-15s %.0f%% of its CPU time: %s calls x %.0f ns "
			"(the floor) = %.3f s\n",
			"crossing cost", 100 * v->crossing_share,
			grouped(v->calls, a, sizeof(a)), v->floor_ns,
			v->crossing_s);
	else if (v->idle)
		fprintf(f, "  %-15s none: no calls\n", "crossing cost");
	else
		fprintf(f,
			"  %-15s %s calls x %.0f ns (the floor) = %.3f s; no "
			"share of a CPU time\n  %-15s too small to measure\n",
			"crossing cost", grouped(v->calls, a, sizeof(a)),
			v->floor_ns, v->crossing_s, "");
	if (v->corrected)
		fprintf(f,
			"  %-15s taken off: %.0f ns of CPU per call (%.3f s "
			"in all); latencies rebased\n"
			"  %-15s on the floor call's, which scprof reports "
			"as %.0f ns\n",
			"probe effect", cal ? cal->probe.overhead_ns : 0,
			v->probe_s, "", cal ? cal->probe.reported_ns : 0);
	else
		fprintf(f, "  %-15s not corrected (not measured)\n",
			"probe effect");
	print_quota(f, v);
	if (cal)
		fprintf(f, "  %-15s %s, %s run, %lld min old\n", "calibration",
			m->cal_saved ? "saved for this boot" : "measured now",
			cal->quick ? "quick" : "full", age > 0 ? age / 60 : 0);
}

/* "close (socket)" for a row split by fd kind, escaped; free it. */
static char *labelled(const char *name, uint32_t fd_type)
{
	const char *kind = names_fd_type(fd_type);
	char buf[SC_NAME_LEN + 16];

	if (kind)
		snprintf(buf, sizeof(buf), "%s (%s)", name, kind);
	else
		snprintf(buf, sizeof(buf), "%s", name);
	return esc_text(buf, strlen(buf));
}

static void print_findings(FILE *f, const struct verdict *v)
{
	char calls[32], advice[VERDICT_ADVICE_LEN];

	if (!v->nfindings) {
		fputs("\nFindings: none.\n", f);
		return;
	}
	fputs("\nFindings (share: of its threads' time):\n", f);
	for (size_t i = 0; i < v->nfindings; i++) {
		const struct verdict_finding *x = &v->findings[i];
		char *name = labelled(x->syscall, x->row_fd_type);

		if (x->kind == VERDICT_CPU_QUOTA) {
			fprintf(f,
				"  %-17s %-16s throttled %.2f s, share %.0f%%\n",
				verdict_kind_name(x->kind), "(its cgroup)",
				x->part_s, 100 * x->share);
		} else {
			fprintf(f, "  %-17s %-16s %s calls",
				verdict_kind_name(x->kind), name ? name : "",
				grouped(x->calls, calls, sizeof(calls)));
			if (x->avg_bytes >= 0)
				fprintf(f, ", %.1f B avg", x->avg_bytes);
			fprintf(f, ", share %.0f%%\n", 100 * x->share);
		}
		verdict_advice(v, x, advice, sizeof(advice));
		fprintf(f, "      %s\n", advice);
		if (*x->callsite) {
			char *site = esc_text(x->callsite, strlen(x->callsite));

			fprintf(f, "      called from: %.0f%% %s\n",
				100 * x->callsite_share, site ? site : "?");
			free(site);
		}
		free(name);
	}
}

/* The rows with the split: a call's price on a CPU beside its round
 * trip, and the shares of the calls' time waiting and asleep.
 */
static void print_split_rows(FILE *f, const struct verdict *v, size_t n)
{
	fputs("\nLargest syscalls (ns/call: a call's round trip on a CPU, "
	      "probe effect removed;\nwall: with its waits; wait, asleep: "
	      "of the calls' time):\n",
	      f);
	fprintf(f, "  %-20s %10s %12s %12s %7s %5s %6s %10s\n", "syscall",
		"calls", "ns/call", "wall ns/call", "share", "wait", "asleep",
		"avg bytes");
	for (size_t i = 0; i < n; i++) {
		const struct verdict_row *r = &v->rows[i];
		char *name = labelled(r->name, r->fd_type);
		char bytes[32], wait[16] = "-", slept[16] = "-";

		if (r->avg_bytes >= 0)
			snprintf(bytes, sizeof(bytes), "%.1f", r->avg_bytes);
		else
			snprintf(bytes, sizeof(bytes), "-");
		if (r->split) {
			snprintf(wait, sizeof(wait), "%.0f%%",
				 100 * r->wait_s / r->returned_s);
			snprintf(slept, sizeof(slept), "%.0f%%",
				 100 * r->blocked_s / r->returned_s);
		}
		fprintf(f,
			"  %-20s %10llu %12.1f %12.1f %6.1f%% %5s %6s %10s\n",
			name ? name : "", (unsigned long long)r->calls,
			r->on_cpu_ns, r->round_trip_ns, 100 * r->share, wait,
			slept, bytes);
		free(name);
	}
	if (v->nrows > n)
		fprintf(f, "  (%zu more)\n", v->nrows - n);
}

static void print_rows(FILE *f, const struct verdict *v)
{
	size_t n = v->nrows < VERDICT_TOP_ROWS ? v->nrows : VERDICT_TOP_ROWS;

	if (!n)
		return;
	if (v->split) {
		print_split_rows(f, v, n);
		return;
	}
	fputs("\nLargest syscalls (ns/call: round trip, probe effect "
	      "removed):\n",
	      f);
	fprintf(f, "  %-20s %12s %12s %7s %10s\n", "syscall", "calls",
		"ns/call", "share", "avg bytes");
	for (size_t i = 0; i < n; i++) {
		const struct verdict_row *r = &v->rows[i];
		char *name = labelled(r->name, r->fd_type);
		char bytes[32];

		if (r->avg_bytes >= 0)
			snprintf(bytes, sizeof(bytes), "%.1f", r->avg_bytes);
		else
			snprintf(bytes, sizeof(bytes), "-");
		fprintf(f, "  %-20s %12llu %12.1f %6.1f%% %10s\n",
			name ? name : "", (unsigned long long)r->calls,
			r->round_trip_ns, 100 * r->share, bytes);
		free(name);
	}
	if (v->nrows > n)
		fprintf(f, "  (%zu more)\n", v->nrows - n);
}

int verdict_write_table(FILE *f, const struct verdict *v,
			const struct verdict_meta *meta)
{
	print_head(f, v, meta);
	print_figures(f, v, meta);
	print_findings(f, v);
	print_rows(f, v);
	if (meta->nflights) {
		fputc('\n', f);
		if (report_table_flights(f, meta->flights, meta->nflights,
					 "stop"))
			return -ENOMEM;
	}
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------ */

/* One estimate as the profile's JSON has it: {function, lock}, {kind,
 * comm?, pid?, tid?} or {comm, pid}, with its share.
 */
static struct json_object *why_obj(const struct verdict_why *w,
				   enum sc_why_kind kind)
{
	struct json_object *o = json_object_new_object();
	char name[SC_WHY_NAME_LEN + 1] = "";
	int err = o ? 0 : -ENOMEM;

	memcpy(name, w->name, esc_strnlen(w->name, SC_WHY_NAME_LEN));
	if (kind == SC_WHY_SLEPT_IN) {
		err = err ?: jw_add_str(o, "function", name);
		err = err ?: jw_add_bool(o, "lock", w->lock);
	} else if (kind == SC_WHY_WOKEN_BY) {
		err = err ?: jw_add_str(o, "kind", why_waker_name(w->waker));
		if (w->waker == SC_WAKER_TASK) {
			err = err ?: jw_add_str(o, "comm", name);
			err = err ?: jw_add_u64(o, "pid", w->pid);
			err = err ?: jw_add_u64(o, "tid", w->tid);
		}
	} else {
		err = err ?: jw_add_str(o, "comm", name);
		err = err ?: jw_add_u64(o, "pid", w->pid);
	}
	err = err ?: jw_add_num(o, "share", w->share, 4);
	return jw_done(o, err);
}

static int add_whys(struct json_object *o, int err, const char *key,
		    const struct verdict_why *w, size_t n,
		    enum sc_why_kind kind)
{
	struct json_object *arr = NULL;

	err = err ?: jw_add_array(o, key, &arr);
	for (size_t i = 0; !err && i < n; i++)
		err = jw_push(arr, why_obj(&w[i], kind));
	return err;
}

/* A split finding's figures and evidence. */
static int split_finding(struct json_object *o, int err,
			 const struct verdict *v,
			 const struct verdict_finding *x)
{
	err = err ?: jw_add_num(o, "part_s", x->part_s, 6);
	err = err ?: jw_add_num(o, "part_share", x->part_share, 4);
	switch (x->kind) {
	case VERDICT_CPU_WAIT:
		err = add_whys(o, err, "ran_instead", x->ran_instead,
			       x->nran_instead, SC_WHY_RAN_INSTEAD);
		if (v->throttle.known && v->throttle.throttled_ns)
			err = err   ?:
				      jw_add(o, "cpu_throttling",
					     report_json_throttle(
						     &v->throttle));
		break;
	case VERDICT_IO_WAIT:
		err = add_whys(o, err, "blocked_in", x->slept_in, x->nslept_in,
			       SC_WHY_SLEPT_IN);
		break;
	default: /* lock-wait, blocking */
		err = add_whys(o, err, "blocked_in", x->slept_in, x->nslept_in,
			       SC_WHY_SLEPT_IN);
		err = add_whys(o, err, "woken_by", x->woken_by, x->nwoken_by,
			       SC_WHY_WOKEN_BY);
		break;
	}
	return err;
}

/* cpu-quota: no syscall; the throttling. */
static struct json_object *quota_obj(const struct verdict *v,
				     const struct verdict_finding *x)
{
	struct json_object *o = json_object_new_object();
	char advice[VERDICT_ADVICE_LEN];
	int err = o ? 0 : -ENOMEM;

	verdict_advice(v, x, advice, sizeof(advice));
	err = err ?: jw_add_str(o, "kind", verdict_kind_name(x->kind));
	err = err ?: jw_add_null(o, "syscall");
	err = err ?: jw_add_u64(o, "calls", 0);
	err = err ?: jw_add_num(o, "share", x->share, 4);
	err = err ?: jw_add_str(o, "advice", advice);
	err = err ?: jw_add_num(o, "part_s", x->part_s, 6);
	err = err   ?:
		      jw_add(o, "cpu_throttling",
			     report_json_throttle(&v->throttle));
	return jw_done(o, err);
}

static struct json_object *finding_obj(const struct verdict *v,
				       const struct verdict_finding *x)
{
	struct json_object *o = json_object_new_object();
	char advice[VERDICT_ADVICE_LEN];
	int err = o ? 0 : -ENOMEM;

	if (x->kind == VERDICT_CPU_QUOTA) {
		json_object_put(o);
		return quota_obj(v, x);
	}
	verdict_advice(v, x, advice, sizeof(advice));
	err = err ?: jw_add_str(o, "kind", verdict_kind_name(x->kind));
	err = err ?: jw_add_str(o, "syscall", x->syscall);
	err = err ?: jw_add_u64(o, "calls", x->calls);
	if (x->avg_bytes >= 0)
		err = err ?: jw_add_num(o, "avg_bytes", x->avg_bytes, 1);
	err = err ?: jw_add_num(o, "share", x->share, 4);
	err = err ?: jw_add_str(o, "advice", advice);
	if (*x->callsite) {
		err = err ?: jw_add_str(o, "call_site", x->callsite);
		err = err   ?:
			      jw_add_num(o, "call_site_share",
					 x->callsite_share, 4);
	}
	err = err ?: jw_add_num(o, "round_trip_ns", x->round_trip_ns, 1);
	err = err ?: jw_add_num(o, "round_trip_on_cpu_ns", x->on_cpu_ns, 1);
	err = err ?: jw_add_num(o, "per_s", x->per_s, 1);
	if (x->kind == VERDICT_BLOCKING) {
		err = err ?: jw_add_u64(o, "in_flight", x->in_flight);
		err = err ?: jw_add_num(o, "flight_s", x->flight_s, 6);
	}
	if (x->split)
		err = split_finding(o, err, v, x);
	if (x->kind == VERDICT_SMALL_IO)
		err = err ?: jw_add_u64(o, "saved_calls", x->saved_calls);
	if (names_fd_type(x->row_fd_type))
		err = err   ?:
			      jw_add_str(o, "fd_type",
					 names_fd_type(x->row_fd_type));
	if (x->kind == VERDICT_OPEN_CLOSE_CHURN ||
	    x->kind == VERDICT_SHORT_CONNECTIONS) {
		struct json_object *paths = NULL;

		err = err ?: jw_add_u64(o, "closes", x->closes);
		if (names_fd_type(x->fd_type))
			err = err   ?:
				      jw_add_str(o, "closed_fd_type",
						 names_fd_type(x->fd_type));
		else
			err = err ?: jw_add_null(o, "closed_fd_type");
		if (x->kind == VERDICT_OPEN_CLOSE_CHURN)
			err = err ?: jw_add_array(o, "paths", &paths);
		for (size_t i = 0; !err && paths && i < x->npaths; i++) {
			/* raw bytes from /proc: valid UTF-8 first */
			char *u = esc_utf8(x->paths[i], strlen(x->paths[i]));

			err = jw_push(paths,
				      u ? json_object_new_string(u) : NULL);
			free(u);
		}
	}
	return jw_done(o, err);
}

static struct json_object *row_obj(const struct verdict_row *r)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err ?: jw_add_str(o, "name", r->name);
	err = err ?: jw_add_u64(o, "calls", r->calls);
	err = err ?: jw_add_num(o, "round_trip_ns", r->round_trip_ns, 1);
	err = err ?: jw_add_num(o, "round_trip_on_cpu_ns", r->on_cpu_ns, 1);
	err = err ?: jw_add_num(o, "time_s", r->time_s, 6);
	err = err ?: jw_add_num(o, "share", r->share, 4);
	if (r->split) {
		err = err ?: jw_add_num(o, "on_cpu_s", r->on_cpu_s, 6);
		err = err ?: jw_add_num(o, "cpu_wait_s", r->wait_s, 6);
		err = err ?: jw_add_num(o, "blocked_s", r->blocked_s, 6);
		err = err ?: jw_add_num(o, "io_wait_s", r->iowait_s, 6);
		err = err ?: jw_add_num(o, "lock_wait_s", r->lock_s, 6);
	}
	if (r->avg_bytes >= 0)
		err = err ?: jw_add_num(o, "avg_bytes", r->avg_bytes, 1);
	if (names_fd_type(r->fd_type))
		err = err   ?:
			      jw_add_str(o, "fd_type",
					 names_fd_type(r->fd_type));
	return jw_done(o, err);
}

static struct json_object *calib_obj(const struct verdict_meta *m)
{
	const struct calibration *c = m->cal;
	const struct cal_loop_result *vd = calibration__loop(c, CAL_VDSO_LOOP);
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err   ?:
		      jw_add_str(o, "source",
				 m->cal_saved ? "saved" : "measured");
	err = err ?: jw_add_bool(o, "quick", c->quick);
	err = err ?: jw_add_int(o, "created", c->created);
	if (vd)
		err = err ?: jw_add_num(o, "vdso_ns", vd->ns_per_call, 2);
	if (c->probe.measured) {
		err = err   ?:
			      jw_add_num(o, "probe_overhead_ns",
					 c->probe.overhead_ns, 2);
		err = err   ?:
			      jw_add_num(o, "probe_reported_ns",
					 c->probe.reported_ns, 2);
	} else {
		err = err ?: jw_add_null(o, "probe_overhead_ns");
		err = err ?: jw_add_null(o, "probe_reported_ns");
	}
	return jw_done(o, err);
}

int verdict_write_json(FILE *f, const struct verdict *v,
		       const struct verdict_meta *m)
{
	struct json_object *root = json_object_new_object(), *arr = NULL;
	char ans[VERDICT_ANSWER_LEN];
	int err = root ? 0 : -ENOMEM;

	verdict_answer(v, ans, sizeof(ans));
	err = err ?: jw_add_str(root, "version", SCPROF_VERSION);
	err = err ?: jw_add_int(root, "pid", m->pid);
	err = err ?: jw_add_str(root, "comm", m->comm ? m->comm : "");
	err = err ?: jw_add_bool(root, "exited", m->exited);
	err = err ?: jw_add_num(root, "duration_s", v->wall_s, 3);
	err = err ?: jw_add_u64(root, "threads", m->threads);
	err = err ?: jw_add_num(root, "syscall_share", v->syscall_share, 4);
	err = err ?: jw_add_bool(root, "syscall_bound", v->syscall_bound);
	err = err ?: jw_add_str(root, "answer", ans);
	err = err ?: jw_add_bool(root, "idle", v->idle);
	if (v->cpu_measured)
		err = err   ?:
			      jw_add_num(root, "cpu_syscall_share",
					 v->cpu_syscall_share, 4);
	else
		err = err ?: jw_add_null(root, "cpu_syscall_share");
	err = err ?: jw_add_num(root, "blocked_share", v->blocked_share, 4);
	err = err ?: jw_add_num(root, "thread_s", v->thread_s, 6);
	err = err ?: jw_add_num(root, "syscall_s", v->syscall_s, 6);
	err = err ?: jw_add_num(root, "cpu_s", v->cpu_s, 6);
	err = err ?: jw_add_num(root, "user_s", v->user_s, 3);
	err = err ?: jw_add_num(root, "system_s", v->system_s, 3);
	err = err ?: jw_add_num(root, "syscall_cpu_s", v->syscall_cpu_s, 6);
	err = err ?: jw_add_num(root, "runq_s", v->runq_s, 6);
	err = err ?: jw_add_bool(root, "split", v->split);
	if (v->split) {
		err = err ?: jw_add_num(root, "cpu_wait_s", v->wait_s, 6);
		err = err   ?:
			      jw_add_num(root, "cpu_wait_share", v->wait_share,
					 4);
	}
	if (v->throttle.known)
		err = err   ?:
			      jw_add(root, "cpu_throttling",
				     report_json_throttle(&v->throttle));
	else
		err = err ?: jw_add_null(root, "cpu_throttling");
	err = err ?: jw_add_u64(root, "calls", v->calls);
	err = err ?: jw_add_num(root, "calls_per_s", v->calls_per_s, 1);
	err = err ?: jw_add_num(root, "floor_ns", v->floor_ns, 2);
	err = err ?: jw_add_num(root, "crossing_s", v->crossing_s, 6);
	if (v->cpu_measured)
		err = err   ?:
			      jw_add_num(root, "crossing_share",
					 v->crossing_share, 4);
	else
		err = err ?: jw_add_null(root, "crossing_share");
	err = err ?: jw_add_bool(root, "probe_corrected", v->corrected);
	err = err ?: jw_add_num(root, "probe_s", v->probe_s, 6);
	if (m->cal)
		err = err ?: jw_add(root, "calibration", calib_obj(m));
	else
		err = err ?: jw_add_null(root, "calibration");
	err = err ?: jw_add_array(root, "findings", &arr);
	for (size_t i = 0; !err && i < v->nfindings; i++)
		err = jw_push(arr, finding_obj(v, &v->findings[i]));
	err = err ?: jw_add_array(root, "syscalls", &arr);
	for (size_t i = 0; !err && i < v->nrows; i++)
		err = jw_push(arr, row_obj(&v->rows[i]));
	err = report_json_add_flights(root, err, m->flights, m->nflights,
				      m->flights_known);
	return jw_write(f, root, err);
}
