// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rendering a verdict: a short report with its evidence, or JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/verdict_report.h"
#include "render/jsonw.h"
#include "render/report_json.h"
#include "render/report_table.h"
#include "util/escape.h"

void verdict_answer(const struct verdict *v, char *buf, size_t len)
{
	if (v->idle)
		snprintf(buf, len,
			 "NO: it was idle: no syscalls and no CPU time in "
			 "the %.1f s profiled, so there is no cost to weigh.",
			 v->wall_s);
	else if (v->syscall_bound &&
		 v->crossing_share >= 0.5 * v->cpu_syscall_share)
		snprintf(
			buf, len,
			"YES: %.0f%% of its CPU time goes into syscalls, %.0f%% "
			"into the crossings alone: fewer calls would help.",
			100 * v->cpu_syscall_share, 100 * v->crossing_share);
	else if (v->syscall_bound)
		snprintf(buf, len,
			 "YES: %.0f%% of its CPU time goes into syscalls, but "
			 "only %.0f%% into the crossings: the time is the work "
			 "the calls do.",
			 100 * v->cpu_syscall_share, 100 * v->crossing_share);
	else if (v->cpus < VERDICT_MIN_CPUS && v->blocked_share >= 0.5)
		snprintf(buf, len,
			 "NO: it barely runs (%.2f CPUs); its threads spend "
			 "%.0f%% of their time waiting inside syscalls, and "
			 "waiting is not syscall overhead.",
			 v->cpus, 100 * v->blocked_share);
	else if (v->cpus < VERDICT_MIN_CPUS)
		snprintf(buf, len, "NO: it barely runs (%.2f CPUs).", v->cpus);
	else
		snprintf(buf, len,
			 "NO: only %.0f%% of its CPU time goes into syscalls; "
			 "the rest is its own code.",
			 100 * v->cpu_syscall_share);
}

static const char *plural(double n, const char *one, const char *many)
{
	return n >= 0.5 && n < 1.5 ? one : many;
}

static void small_io_advice(const struct verdict *v,
			    const struct verdict_finding *f, char *buf,
			    size_t len)
{
	/* buffered + saved: the calls that moved data */
	uint64_t calls = f->buffered_calls + f->saved_calls;

	snprintf(buf, len,
		 "%s moves %.*f %s per call on average. %s 64 KiB per call "
		 "would need %llu %s instead of %llu: %llu fewer crossings, "
		 "about %.0f%% of its CPU time at %.0f ns each.",
		 f->syscall, f->avg_bytes == floor(f->avg_bytes) ? 0 : 1,
		 f->avg_bytes, plural(f->avg_bytes, "byte", "bytes"),
		 f->call == VERDICT_CALL_READ ?
			 "Reading through a buffer (a larger read size, or "
			 "stdio with setvbuf) of" :
			 "Collecting the output in a buffer (or writev) and "
			 "writing",
		 (unsigned long long)f->buffered_calls,
		 plural((double)f->buffered_calls, "call", "calls"),
		 (unsigned long long)calls, (unsigned long long)f->saved_calls,
		 100 * f->cpu_share, v->floor_ns);
}

/* " (e.g. /a, /b)", escaped; "" without paths. */
static void churn_paths(const struct verdict_finding *f, char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < f->npaths && o < len; i++) {
		char *p = esc_text(f->paths[i], strlen(f->paths[i]));

		o += snprintf(buf + o, len - o, "%s%s", i ? ", " : " (e.g. ",
			      p ? p : "?");
		free(p);
	}
	if (f->npaths && o < len)
		snprintf(buf + o, len - o, ")");
}

/* What to do about it, by what was opened. */
static const char *churn_fix(const struct verdict_finding *f)
{
	switch (f->fd_type) {
	case SC_FD_FILE:
		return "Open the file once and keep the descriptor (or FILE *) "
		       "between uses, or keep its contents in memory (a "
		       "server's open-file cache).";
	case SC_FD_DIR:
		return "Open the directory once and keep the descriptor "
		       "(openat relative to it, rewinddir to list it again), "
		       "or keep what it lists.";
	case SC_FD_CHR:
		if (f->random_device)
			return "Open the device once and keep the descriptor; "
			       "for random bytes, getrandom(2) needs no file "
			       "at all.";
		if (f->npaths)
			return "Open the device once and keep the descriptor "
			       "between uses.";
		return "Open the device once and keep the descriptor between "
		       "uses; if it is read for random bytes (/dev/urandom), "
		       "getrandom(2) needs no file at all.";
	case SC_FD_BLK:
		return "Open the device once and keep the descriptor between "
		       "uses.";
	default:
		return "Open it once and keep the descriptor (or FILE *) "
		       "between uses.";
	}
}

static const char *churn_noun(uint32_t fd_type)
{
	switch (fd_type) {
	case SC_FD_FILE:
		return " of files";
	case SC_FD_DIR:
		return " of directories";
	case SC_FD_CHR:
		return " of character devices";
	case SC_FD_BLK:
		return " of block devices";
	default:
		return "";
	}
}

static void churn_advice(const struct verdict_finding *f, char *buf, size_t len)
{
	char paths[VERDICT_ADVICE_LEN / 2];

	churn_paths(f, paths, sizeof(paths));
	snprintf(buf, len,
		 "%llu opens and %llu closes%s%s (%.0f per second). Each open "
		 "comes with %.1f read or write %s moving %.0f bytes%s%s; the "
		 "whole cycle takes %.0f%% of its CPU time. %s",
		 (unsigned long long)f->calls, (unsigned long long)f->closes,
		 churn_noun(f->fd_type), paths, f->per_s, f->io_per_open,
		 plural(f->io_per_open, "call", "calls"), f->bytes_per_open,
		 *f->companions ? " and one call each of " : "", f->companions,
		 100 * f->cpu_share, churn_fix(f));
}

static void short_connections_advice(const struct verdict_finding *f, char *buf,
				     size_t len)
{
	snprintf(
		buf, len,
		"%llu connections accepted and %llu sockets closed (%.0f per "
		"second): one connection per request. Setting up and tearing "
		"down each (%s, close%s%s) takes %.0f%% of its CPU time in "
		"those calls alone. Keep connections open across requests: HTTP keep-alive (persistent connections) on the "
		"server, connection reuse or pooling in the clients.",
		(unsigned long long)f->calls, (unsigned long long)f->closes,
		f->per_s, f->syscall,
		*f->companions ? " and one call each of " : "", f->companions,
		100 * f->cpu_share);
}

static void high_rate_advice(const struct verdict *v,
			     const struct verdict_finding *f, char *buf,
			     size_t len)
{
	char how[320];

	if (f->call == VERDICT_CALL_ID)
		snprintf(how, sizeof(how),
			 "the answer does not change between calls (or only "
			 "when the process changes it itself): ask once and "
			 "keep it.");
	else if (f->call == VERDICT_CALL_CLOCK && v->vdso_ns > 0)
		snprintf(how, sizeof(how),
			 "the C library answers it in user space through the "
			 "vDSO (%.0f ns here): calls that reach the kernel "
			 "bypass it (a raw syscall(), a static or old C "
			 "library, or a clock the vDSO cannot read). Call it "
			 "through the C library, or read the clock less "
			 "often.",
			 v->vdso_ns);
	else if (f->call == VERDICT_CALL_CLOCK)
		snprintf(how, sizeof(how),
			 "the C library answers it in user space through the "
			 "vDSO: calls that reach the kernel bypass it. Call it "
			 "through the C library, or read the clock less "
			 "often.");
	else if (f->call == VERDICT_CALL_YIELD)
		snprintf(how, sizeof(how),
			 "spinning on sched_yield pays a crossing per turn: "
			 "block on a futex, a condition variable or an eventfd "
			 "instead.");
	else
		snprintf(how, sizeof(how),
			 "each call is little more than the crossing: make "
			 "fewer (keep the answer, batch the requests, or check "
			 "that every call is needed).");
	snprintf(buf, len,
		 "%.0f calls per second at %.0f ns each: the crossings alone "
		 "take %.0f%% of its CPU time. For %s, %s",
		 f->per_s, f->round_trip_ns, 100 * f->cpu_share, f->syscall,
		 how);
}

static void blocking_advice(const struct verdict_finding *f, char *buf,
			    size_t len)
{
	snprintf(buf, len,
		 "%.0f%% of its threads' time is spent waiting in %s (%.1f us "
		 "per call). %s",
		 100 * f->share, f->syscall, f->round_trip_ns / 1000,
		 f->call == VERDICT_CALL_SLEEP ?
			 "It sleeps on purpose: that is not syscall overhead, "
			 "and fewer or cheaper calls would not make it "
			 "faster." :
			 "That is waiting, not syscall overhead: fewer or "
			 "cheaper calls would not help; what it waits for (a "
			 "peer, a lock, a timer, the disk) decides its speed.");
}

void verdict_advice(const struct verdict *v, const struct verdict_finding *f,
		    char *buf, size_t len)
{
	switch (f->kind) {
	case VERDICT_SMALL_IO:
		small_io_advice(v, f, buf, len);
		break;
	case VERDICT_OPEN_CLOSE_CHURN:
		churn_advice(f, buf, len);
		break;
	case VERDICT_HIGH_RATE:
		high_rate_advice(v, f, buf, len);
		break;
	case VERDICT_SHORT_CONNECTIONS:
		short_connections_advice(f, buf, len);
		break;
	default:
		blocking_advice(f, buf, len);
		break;
	}
}

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
	char ans[256];

	fprintf(f, "scprof verdict: pid %d (%s), %s %.1f s, %llu thread%s\n\n",
		(int)m->pid, comm ? comm : "",
		m->exited ? "exited after" : "profiled", v->wall_s,
		(unsigned long long)m->threads, m->threads == 1 ? "" : "s");
	free(comm);
	verdict_answer(v, ans, sizeof(ans));
	fprintf(f, "Is it the syscalls? %s\n\n", ans);
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

		fprintf(f, "  %-17s %-16s %s calls", verdict_kind_name(x->kind),
			name ? name : "",
			grouped(x->calls, calls, sizeof(calls)));
		if (x->avg_bytes >= 0)
			fprintf(f, ", %.1f B avg", x->avg_bytes);
		fprintf(f, ", share %.0f%%\n", 100 * x->share);
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

static void print_rows(FILE *f, const struct verdict *v)
{
	size_t n = v->nrows < VERDICT_TOP_ROWS ? v->nrows : VERDICT_TOP_ROWS;

	if (!n)
		return;
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

static struct json_object *finding_obj(const struct verdict *v,
				       const struct verdict_finding *x)
{
	struct json_object *o = json_object_new_object();
	char advice[VERDICT_ADVICE_LEN];
	int err = o ? 0 : -ENOMEM;

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
	err = err ?: jw_add_num(o, "per_s", x->per_s, 1);
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
	err = err ?: jw_add_num(o, "time_s", r->time_s, 6);
	err = err ?: jw_add_num(o, "share", r->share, 4);
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
	char ans[256];
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
