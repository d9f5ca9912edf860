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

/* What the answer adds from the split: the calls' waits for a CPU, the
 * cgroup's throttling. "" when neither is worth saying.
 */
static void answer_split(const struct verdict *v, char *buf, size_t len)
{
	double throttled = (double)v->throttle.throttled_ns / 1e9;
	size_t o = 0;

	buf[0] = '\0';
	if (v->split && v->wait_share >= VERDICT_PART_SHARE)
		o += (size_t)snprintf(buf, len,
				      " Its calls spent %.0f%% of their time "
				      "waiting for a CPU: contention, not "
				      "their cost.",
				      100 * v->wait_share);
	if (o < len && v->throttle.known && throttled > 0 &&
	    throttled >= VERDICT_THROTTLED_SHARE * v->wall_s)
		snprintf(buf + o, len - o,
			 " Its cgroup's CPU quota held it back for %.2f s of "
			 "the %.1f s.",
			 throttled, v->wall_s);
}

void verdict_answer(const struct verdict *v, char *buf, size_t len)
{
	char more[VERDICT_ANSWER_LEN / 2];

	answer_split(v, more, sizeof(more));
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
			"into the crossings alone: fewer calls would help.%s",
			100 * v->cpu_syscall_share, 100 * v->crossing_share,
			more);
	else if (v->syscall_bound)
		snprintf(buf, len,
			 "YES: %.0f%% of its CPU time goes into syscalls, but "
			 "only %.0f%% into the crossings: the time is the work "
			 "the calls do.%s",
			 100 * v->cpu_syscall_share, 100 * v->crossing_share,
			 more);
	else if (v->cpus < VERDICT_MIN_CPUS && v->blocked_share >= 0.5)
		snprintf(buf, len,
			 "NO: it barely runs (%.2f CPUs); its threads spend "
			 "%.0f%% of their time waiting inside syscalls, and "
			 "waiting is not syscall overhead.%s",
			 v->cpus, 100 * v->blocked_share, more);
	else if (v->cpus < VERDICT_MIN_CPUS)
		snprintf(buf, len, "NO: it barely runs (%.2f CPUs).%s", v->cpus,
			 more);
	else
		snprintf(buf, len,
			 "NO: only %.0f%% of its CPU time goes into syscalls; "
			 "the rest is its own code.%s",
			 100 * v->cpu_syscall_share, more);
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
		 f->per_s, f->on_cpu_ns, 100 * f->cpu_share, f->syscall, how);
}

/* 950 -> "950 ns", 1671879.3 -> "1671.9 us", 25e6 -> "25.00 ms" */
static const char *dur_ns(double ns, char *buf, size_t len)
{
	if (ns < 1e4)
		snprintf(buf, len, "%.0f ns", ns);
	else if (ns < 1e7)
		snprintf(buf, len, "%.1f us", ns / 1e3);
	else
		snprintf(buf, len, "%.2f ms", ns / 1e6);
	return buf;
}

/* One estimate as the advice names it, escaped: a function, a task with its ids ([pid/tid] for a waker, [pid] for what ran
 * instead, the process's own threads said so), an interrupt or a timer.
 */
static void why_text(const struct verdict *v, const struct verdict_why *w,
		     enum sc_why_kind kind, char *buf, size_t len)
{
	char *name = esc_text(w->name, esc_strnlen(w->name, SC_WHY_NAME_LEN));

	if (kind == SC_WHY_WOKEN_BY && w->waker == SC_WAKER_TIMER)
		snprintf(buf, len, "a timer");
	else if (kind == SC_WHY_WOKEN_BY && w->waker == SC_WAKER_INTERRUPT)
		snprintf(buf, len, "an interrupt");
	else if (kind == SC_WHY_WOKEN_BY)
		snprintf(buf, len, "%s [%u/%u]", name ? name : "?", w->pid,
			 w->tid);
	else if (kind == SC_WHY_RAN_INSTEAD)
		snprintf(buf, len, "%s [%u%s]", name ? name : "?", w->pid,
			 v->pid && w->pid == v->pid ? ", its own thread" : "");
	else
		snprintf(buf, len, "%s", name ? name : "?");
	free(name);
}

/* The first estimates, "lead a 97%, b 2%"; "" when there are none. */
static void whys_text(const struct verdict *v, const struct verdict_why *w,
		      size_t n, enum sc_why_kind kind, const char *lead,
		      char *buf, size_t len)
{
	size_t o = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < VERDICT_ADVICE_WHYS && o < len; i++) {
		char who[SC_WHY_NAME_LEN * 4 + 48];

		why_text(v, &w[i], kind, who, sizeof(who));
		o += (size_t)snprintf(buf + o, len - o, "%s%s %.0f%%",
				      i ? ", " : lead, who, 100 * w[i].share);
	}
}

/* "the CFS quota of /a/b" (cgroup v1) or "cpu.max of /a/b", escaped. */
static void quota_name(const struct sc_throttle *t, char *buf, size_t len)
{
	char *path =
		esc_text(t->cgroup, esc_strnlen(t->cgroup, sizeof(t->cgroup)));

	snprintf(buf, len, "%s of %s", t->v1 ? "the CFS quota" : "cpu.max",
		 path ? path : "?");
	free(path);
}

/* The throttled time, for a finding about waits: "" when none. */
static void throttled_text(const struct verdict *v, char *buf, size_t len)
{
	char q[VERDICT_ADVICE_LEN / 4];

	buf[0] = '\0';
	if (!v->throttle.known || !v->throttle.throttled_ns)
		return;
	quota_name(&v->throttle, q, sizeof(q));
	snprintf(buf, len, " (%.2f s throttled by %s)",
		 (double)v->throttle.throttled_ns / 1e9, q);
}

static void cpu_wait_advice(const struct verdict *v,
			    const struct verdict_finding *f, char *buf,
			    size_t len)
{
	char ran[VERDICT_ADVICE_LEN / 3], th[VERDICT_ADVICE_LEN / 3];
	char on[32], rt[32];
	bool throttled = v->throttle.known && v->throttle.throttled_ns;

	whys_text(v, f->ran_instead, f->nran_instead, SC_WHY_RAN_INSTEAD,
		  ", while these ran instead: ", ran, sizeof(ran));
	throttled_text(v, th, sizeof(th));
	snprintf(buf, len,
		 "Your calls wait for a CPU: contention or throttling, not "
		 "syscall cost. %.0f%% of %s's time (%.2f s) went waiting "
		 "for a CPU inside the calls%s%s. On a CPU a call takes %s, "
		 "%s with the waits. Fewer or cheaper calls would not remove "
		 "the waits: give it CPU time (move the competing work to "
		 "other CPUs, raise its priority%s).",
		 100 * f->part_share, f->syscall, f->part_s, ran, th,
		 dur_ns(f->on_cpu_ns, on, sizeof(on)),
		 dur_ns(f->round_trip_ns, rt, sizeof(rt)),
		 throttled ? ", or raise the quota" : "");
}

static void io_wait_advice(const struct verdict *v,
			   const struct verdict_finding *f, char *buf,
			   size_t len)
{
	char in[VERDICT_ADVICE_LEN / 3], rt[32];

	whys_text(v, f->slept_in, f->nslept_in, SC_WHY_SLEPT_IN, ", in ", in,
		  sizeof(in));
	snprintf(buf, len,
		 "Blocked in I/O wait on the disk: %.0f%% of %s's time "
		 "(%.2f s, %s a call) was spent asleep waiting for I/O%s. "
		 "That is the device's time, not syscall cost: fewer "
		 "crossings would not help; fewer, larger or asynchronous "
		 "requests, the page cache (reading ahead, no O_DIRECT) or a "
		 "faster device would.",
		 100 * f->part_share, f->syscall, f->part_s,
		 dur_ns(f->round_trip_ns, rt, sizeof(rt)), in);
}

/* " held by thread T (comm)" from the first task that woke the calls
 * (" of process P" when it is another's), escaped; "" when none did.
 */
static void holder_text(const struct verdict *v,
			const struct verdict_finding *f, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; i < f->nwoken_by; i++) {
		const struct verdict_why *w = &f->woken_by[i];
		char *name;
		char of[48] = "";

		if (w->waker != SC_WAKER_TASK)
			continue;
		name = esc_text(w->name, esc_strnlen(w->name, SC_WHY_NAME_LEN));
		if (v->pid && w->pid != v->pid)
			snprintf(of, sizeof(of), " of process %u", w->pid);
		snprintf(buf, len, " held by thread %u (%s)%s", w->tid,
			 name ? name : "?", of);
		free(name);
		return;
	}
}

static void lock_wait_advice(const struct verdict *v,
			     const struct verdict_finding *f, char *buf,
			     size_t len)
{
	char holder[SC_WHY_NAME_LEN * 4 + 80];
	char in[VERDICT_ADVICE_LEN / 4], by[VERDICT_ADVICE_LEN / 3];

	holder_text(v, f, holder, sizeof(holder));
	whys_text(v, f->slept_in, f->nslept_in, SC_WHY_SLEPT_IN, ", in ", in,
		  sizeof(in));
	whys_text(v, f->woken_by, f->nwoken_by, SC_WHY_WOKEN_BY, "; woken by ",
		  by, sizeof(by));
	snprintf(buf, len,
		 "Blocked on a lock%s: %.0f%% of %s's time (%.2f s) was spent "
		 "asleep waiting for it%s%s%s. That is contention, not "
		 "syscall cost: hold the lock for less time (no sleeping or "
		 "I/O while holding it), split it, or give the waiting thread "
		 "other work.",
		 holder, 100 * f->part_share, f->syscall, f->part_s,
		 !strncmp(f->syscall, "futex", 5) ?
			 " (a futex: a mutex, or a condition variable another "
			 "thread signals)" :
			 "",
		 in, by);
}

static const char *blocking_why(const struct verdict_finding *f)
{
	return f->call == VERDICT_CALL_SLEEP ?
		       "It sleeps on purpose: that is not syscall overhead, "
		       "and fewer or cheaper calls would not make it "
		       "faster." :
		       "That is waiting, not syscall overhead: fewer or "
		       "cheaper calls would not help; what it waits for (a "
		       "peer, a lock, a timer, the disk) decides its speed.";
}

static void blocking_advice(const struct verdict *v,
			    const struct verdict_finding *f, char *buf,
			    size_t len)
{
	char in[VERDICT_ADVICE_LEN / 4], by[VERDICT_ADVICE_LEN / 3];
	char flight[128] = "", rt[32];
	const char *calls = f->in_flight == 1 ? "call" : "calls";

	if (f->in_flight && (f->split ? f->part_share <= 0 : !f->calls)) {
		snprintf(buf, len,
			 "%.0f%% of its threads' time is spent in %llu %s %s "
			 "still in flight at the end (%.2f s so far; what %s "
			 "for shows once %s). %s",
			 100 * f->share, (unsigned long long)f->in_flight,
			 f->syscall, calls, f->flight_s,
			 f->in_flight == 1 ? "it waits" : "they wait",
			 f->in_flight == 1 ? "it returns" : "they return",
			 blocking_why(f));
		return;
	}
	if (!f->split) {
		snprintf(buf, len,
			 "%.0f%% of its threads' time is spent waiting in %s "
			 "(%.1f us per call). %s",
			 100 * f->share, f->syscall, f->round_trip_ns / 1000,
			 blocking_why(f));
		return;
	}
	whys_text(v, f->slept_in, f->nslept_in, SC_WHY_SLEPT_IN, ", in ", in,
		  sizeof(in));
	whys_text(v, f->woken_by, f->nwoken_by, SC_WHY_WOKEN_BY, "; woken by ",
		  by, sizeof(by));
	if (f->in_flight)
		snprintf(flight, sizeof(flight),
			 "; with %llu %s still in flight at the end (%.2f s "
			 "so far)",
			 (unsigned long long)f->in_flight, calls, f->flight_s);
	snprintf(buf, len,
		 "%.0f%% of its threads' time is spent asleep in %s (%s per "
		 "call)%s%s%s. %s",
		 100 * f->share, f->syscall,
		 dur_ns(f->round_trip_ns, rt, sizeof(rt)), in, by, flight,
		 blocking_why(f));
}

static void cpu_quota_advice(const struct verdict *v, char *buf, size_t len)
{
	const struct sc_throttle *t = &v->throttle;
	char q[VERDICT_ADVICE_LEN / 2], rate[64] = "", a[32], b[32];

	quota_name(t, q, sizeof(q));
	if (t->quota_us >= 0)
		snprintf(rate, sizeof(rate), ": %s of CPU every %s",
			 dur_ns((double)t->quota_us * 1e3, a, sizeof(a)),
			 dur_ns((double)t->period_us * 1e3, b, sizeof(b)));
	snprintf(buf, len,
		 "Its cgroup was throttled for %.2f s of the %.1f s profiled "
		 "(in %llu of %llu periods) by %s%s. That holds it back "
		 "whatever its syscalls cost: raise the quota, or use less "
		 "CPU.",
		 (double)t->throttled_ns / 1e9, v->wall_s,
		 (unsigned long long)t->nr_throttled,
		 (unsigned long long)t->nr_periods, q, rate);
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
	case VERDICT_CPU_WAIT:
		cpu_wait_advice(v, f, buf, len);
		break;
	case VERDICT_IO_WAIT:
		io_wait_advice(v, f, buf, len);
		break;
	case VERDICT_LOCK_WAIT:
		lock_wait_advice(v, f, buf, len);
		break;
	case VERDICT_CPU_QUOTA:
		cpu_quota_advice(v, buf, len);
		break;
	default:
		blocking_advice(v, f, buf, len);
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
	quota_name(t, q, sizeof(q));
	fprintf(f, "  %-15s throttled %.2f s, in %llu of %llu periods, by %s",
		"cpu quota", (double)t->throttled_ns / 1e9,
		(unsigned long long)t->nr_throttled,
		(unsigned long long)t->nr_periods, q);
	if (t->quota_us >= 0)
		fprintf(f, ": %s every %s",
			dur_ns((double)t->quota_us * 1e3, a, sizeof(a)),
			dur_ns((double)t->period_us * 1e3, b, sizeof(b)));
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
