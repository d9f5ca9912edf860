// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A verdict in words: its answer, and each finding's advice
 * (verdict_advice.h).
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "render/verdict_advice.h"
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

const char *verdict_dur_text(double ns, char *buf, size_t len)
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

void verdict_quota_name(const struct sc_throttle *t, char *buf, size_t len)
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
	verdict_quota_name(&v->throttle, q, sizeof(q));
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
		 verdict_dur_text(f->on_cpu_ns, on, sizeof(on)),
		 verdict_dur_text(f->round_trip_ns, rt, sizeof(rt)),
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
		 verdict_dur_text(f->round_trip_ns, rt, sizeof(rt)), in);
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
		 verdict_dur_text(f->round_trip_ns, rt, sizeof(rt)), in, by,
		 flight, blocking_why(f));
}

static void cpu_quota_advice(const struct verdict *v, char *buf, size_t len)
{
	const struct sc_throttle *t = &v->throttle;
	char q[VERDICT_ADVICE_LEN / 2], rate[64] = "", a[32], b[32];

	verdict_quota_name(t, q, sizeof(q));
	if (t->quota_us >= 0)
		snprintf(rate, sizeof(rate), ": %s of CPU every %s",
			 verdict_dur_text((double)t->quota_us * 1e3, a,
					  sizeof(a)),
			 verdict_dur_text((double)t->period_us * 1e3, b,
					  sizeof(b)));
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
