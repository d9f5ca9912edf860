// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * `scprof daemon`: open the listener and the pidfile, attach, then one loop
 * (latency windows, folds, slow calls, OTLP exports, HTTP) until SIGTERM,
 * and teardown. Its command line is daemon_args.c, the HTTP server
 * daemon_http.c, a scrape daemon_metrics.c.
 */
#include <errno.h>
#include <malloc.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/signalfd.h>
#include <sys/utsname.h>
#include <bpf/libbpf.h>
#include <microhttpd.h>

#include "cmd/cmd_daemon.h"
#include "cmd/commands.h"
#include "cmd/daemon_http.h"
#include "cmd/daemon_metrics.h"
#include "cmd/daemon_otlp.h"
#include "cmd/daemon_priv.h"
#include "cmd/plan.h"
#include "cmd/run.h"
#include "collect/cgroups.h"
#include "collect/collector.h"
#include "collect/duty.h"
#include "collect/target.h"
#include "model/comm_series.h"
#include "model/series_ttl.h"
#include "model/split_hold.h"
#include "render/otlp.h"
#include "render/slowcalls.h"
#include "util/caps.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/pidfile.h"
#include "util/web_config.h"

/* ---- setup ----------------------------------------------------------- */

static int open_pidfile(struct daemon *d)
{
	int fd = pidfile_open(d->o->pidfile);

	if (fd < 0)
		return fd;
	d->pidfile_fd = fd;
	return 0;
}

static void close_pidfile(struct daemon *d)
{
	pidfile_close(d->pidfile_fd, d->o->pidfile);
	d->pidfile_fd = -1;
}

/*
 * Once attached, keep only what reading and folding the maps needs: no
 * capability at all where the kernel allows using open maps without one
 * (collector__maps_need_no_caps), else CAP_BPF and CAP_PERFMON. Not in the
 * bounding set either, so nothing exec'd later could get more back.
 */
static int drop_capabilities(bool keep_bpf)
{
	return caps_drop(keep_bpf);
}

/* ---- the loop -------------------------------------------------------- */

#define TRIM_EVERY_NS 60000000000ULL

static int fold_exited(struct daemon *d)
{
	struct sc_model *exited = NULL;
	int err;

	/* The per-name series need the exited processes' final figures. */
	if (d->comms) {
		exited = model_new();
		if (!exited)
			return -ENOMEM;
	}
	err = collector__harvest_exited(d->col, exited);
	if (!err && exited)
		comm_series__fold(d->comms, exited);
	model_free(exited);
	/* Models are transient: give their memory back, so the daemon's
	 * footprint is its steady state, not its largest fold; once a
	 * minute at most (under process churn a fold is every poll, and
	 * each trim's memory comes back as page faults)
	 */
	if (clock_mono_ns() - d->trimmed_ns >= TRIM_EVERY_NS) {
		malloc_trim(0);
		d->trimmed_ns = clock_mono_ns();
	}
	if (!err && d->o->target.kind == TARGET_PIDS && !d->targets_gone &&
	    collector__live_targets(d->col) <= 0) {
		d->targets_gone = true;
		pr_warn("every target process has exited: serving their final "
			"figures");
	}
	return err;
}

/* --slow: log the slow calls seen since the last look, one line each. */
static int slow_log(struct daemon *d)
{
	struct sc_slowlog got;
	int err;

	if (!d->o->slow_ns)
		return 0;
	slowlog_init(&got, SIZE_MAX);
	err = collector__slow_take(d->col, &got, &d->slow_lost);
	for (size_t i = 0; !err && i < got.n; i++) {
		char *line = slowcall_text(&got.v[i]);

		if (!line) {
			err = -ENOMEM;
			break;
		}
		pr_warn("slow call: %s", line);
		free(line);
		d->slow_logged++;
	}
	slowlog_clear(&got);
	if (err)
		pr_err("cannot log the slow calls: %s", strerror(-err));
	return err;
}

/* --otlp-endpoint: the figures of now, queued for the exporter's thread
 * (which never holds the loop up).
 */
static int otlp_export(struct daemon *d)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	int err = daemon_otlp_payload(d, &buf, &len);

	if (err) {
		pr_err("cannot make the OTLP export: %s", strerror(-err));
		return err;
	}
	otlp_exporter__push(d->otlp, buf, len);
	return 0;
}

/* How often the loop wakes up at least, to fold early when a map is a
 * quarter full and to free dead threads' slots (reads of BPF globals).
 * Each wake-up costs tens of us (poll, the HTTP server's and the duty's
 * ticks): at 20 a second they were a third of the daemon's CPU under
 * process churn. A budgeted window is looked at every 50 ms by the duty's
 * own ticks (duty.c); a map fills from a quarter to full in seconds even
 * at 2,000 processes a second; a thread that starts on a dead one's slot
 * counts in its procs entry until the slot is freed.
 */
#define FULL_POLL_MS 250

static int run(struct daemon *d, int sigfd)
{
	const union MHD_DaemonInfo *info =
		MHD_get_daemon_info(d->http, MHD_DAEMON_INFO_EPOLL_FD);
	uint64_t fold_ns = (uint64_t)(d->o->fold_s * 1e9);
	uint64_t next_fold = clock_mono_ns() + fold_ns;
	struct pollfd pfd[2] = {
		{ .fd = sigfd, .events = POLLIN },
		{ .fd = info ? info->epoll_fd : -1, .events = POLLIN },
	};

	if (!info) {
		pr_err("cannot drive the HTTP server (no epoll descriptor)");
		return -EIO;
	}
	for (;;) {
		MHD_UNSIGNED_LONG_LONG mhd_ms;
		uint64_t now = clock_mono_ns(), next_duty, next_fold_or_duty;
		int timeout_ms, err;

		err = duty__tick(d->duty, now, &next_duty);
		err = err ?: slow_log(d);
		if (err)
			return err;
		/* dead threads' slots, for the new threads on their stacks */
		err = collector__tslots_free(d->col);
		if (err) {
			pr_err("cannot free the slots of exited threads: %s",
			       strerror(-err));
			return err;
		}
		if (now >= next_fold || collector__harvest_due(d->col)) {
			err = fold_exited(d);
			if (err) {
				pr_err("cannot fold exited processes: %s",
				       strerror(-err));
				return err;
			}
			next_fold = now + fold_ns;
		}
		if (d->otlp && now >= d->otlp_next_ns) {
			err = otlp_export(d);
			if (err)
				return err;
			d->otlp_next_ns +=
				(uint64_t)(d->o->otlp.interval_s * 1e9);
			/* behind (a stopped daemon): from now on */
			if (d->otlp_next_ns <= now)
				d->otlp_next_ns =
					now +
					(uint64_t)(d->o->otlp.interval_s * 1e9);
		}
		if (next_duty < next_fold)
			next_fold_or_duty = next_duty;
		else
			next_fold_or_duty = next_fold;
		if (d->otlp && d->otlp_next_ns < next_fold_or_duty)
			next_fold_or_duty = d->otlp_next_ns;
		timeout_ms =
			(int)((next_fold_or_duty - now + 999999) / 1000000);
		/* How full the maps are is looked at this often. */
		if (timeout_ms > FULL_POLL_MS)
			timeout_ms = FULL_POLL_MS;
		/* a profile's end (--pprof-endpoint) */
		if (d->profile.running && d->profile.end_ns > now &&
		    (d->profile.end_ns - now + 999999) / 1000000 <
			    (uint64_t)timeout_ms)
			timeout_ms = (int)((d->profile.end_ns - now + 999999) /
					   1000000);
		if (MHD_get_timeout(d->http, &mhd_ms) == MHD_YES &&
		    mhd_ms < (MHD_UNSIGNED_LONG_LONG)timeout_ms)
			timeout_ms = (int)mhd_ms;
		if (poll(pfd, 2, timeout_ms) < 0 && errno != EINTR) {
			err = -errno;
			pr_err("poll failed: %s", strerror(errno));
			return err;
		}
		if (pfd[0].revents & POLLIN) {
			struct signalfd_siginfo si;

			if (read(sigfd, &si, sizeof(si)) == sizeof(si) &&
			    (si.ssi_signo == SIGTERM ||
			     si.ssi_signo == SIGINT)) {
				pr_info("%s received: stopping",
					strsignal((int)si.ssi_signo));
				return 0;
			}
		}
		/* (before MHD_run, which then answers a profile that ended) */
		daemon_http_tick(d, clock_mono_ns(), &next_duty);
		MHD_run(d->http);
	}
}

static int daemon_parse(void *ctx, int argc, char **argv, int *verbosity)
{
	struct daemon *d = ctx;
	int err = daemon_parse_args(argc, argv, d->o);

	if (err)
		daemon_free_opts(d->o);
	*verbosity = d->o->verbosity;
	return err;
}

/* Attach, then keep only the capabilities reading the maps needs. */
static int attach(struct daemon *d)
{
	/* Calls are summed per syscall in the kernel, and per process for
	 * the per-name series (per thread, no per-process cells).
	 */
	struct collector_opts copts;
	struct duty_opts dopts = {
		.ratio = d->o->latency_duty,
		.budget = d->o->max_overhead,
		.period_s = d->o->latency_period_s,
		.price = true, /* scprof_latency_cost_seconds_total */
	};
	bool keep_bpf;
	int err;

	daemon_plan(d->o, &d->found, &copts);
	err = target_attach(&d->found, &copts, &d->col);
	if (err)
		return err;
	if (d->o->slow_ns && d->o->latency_duty < 1)
		pr_warn("--slow with --latency-duty %g: only the calls timed in "
			"latency windows are seen",
			d->o->latency_duty);
	/* The first latency window opens now, before capabilities go. */
	err = duty__new(&d->duty, d->col, &dopts, clock_mono_ns());
	if (err)
		return err;
	err = collector__maps_need_no_caps(d->col);
	if (err < 0)
		pr_warn("cannot tell whether the maps need capabilities: %s",
			strerror(-err));
	keep_bpf = err != 1;
	err = drop_capabilities(keep_bpf);
	if (err)
		pr_warn("cannot drop capabilities: %s", strerror(-err));
	else
		pr_info("attached; capabilities kept: %s",
			keep_bpf ? "CAP_BPF, CAP_PERFMON" : "none");
	return 0;
}

/* The address the HTTP server really listens on (port 0: the kernel's). */
static void served_addr(struct daemon *d, char *where, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	const union MHD_DaemonInfo *li =
		MHD_get_daemon_info(d->http, MHD_DAEMON_INFO_LISTEN_FD);

	if (li && !getsockname(li->listen_fd, (struct sockaddr *)&ss, &sl))
		addr_str(&ss, where, len);
	else
		snprintf(where, len, "%s", d->o->listen);
}

/* service.instance.id: a random UUID (version 4), new each run. */
static void new_instance_id(char *out, size_t len)
{
	uint8_t u[16] = {};
	size_t got = 0;

	while (got < sizeof(u)) {
		ssize_t n = getrandom(u + got, sizeof(u) - got, 0);

		if (n <= 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(u)) /* no getrandom: still unique enough a run */
		for (size_t i = 0; i < sizeof(u); i++)
			u[i] ^= (uint8_t)(clock_real_ns() >> (i % 8 * 8)) ^
				(uint8_t)getpid();
	u[6] = (u[6] & 0x0f) | 0x40;
	u[8] = (u[8] & 0x3f) | 0x80;
	snprintf(out, len,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
		 "%02x%02x%02x%02x%02x%02x",
		 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
		 u[10], u[11], u[12], u[13], u[14], u[15]);
}

/* --otlp-endpoint: who sends (the resource), and the exporter's thread. */
static int start_otlp(struct daemon *d)
{
	struct utsname un;
	int err;

	if (!d->o->otlp.endpoint)
		return 0;
	if (gethostname(d->host_name, sizeof(d->host_name) - 1))
		snprintf(d->host_name, sizeof(d->host_name), "localhost");
	if (uname(&un))
		snprintf(un.machine, sizeof(un.machine), "unknown");
	snprintf(d->host_arch, sizeof(d->host_arch), "%s",
		 otlp_host_arch(un.machine));
	new_instance_id(d->instance_id, sizeof(d->instance_id));
	err = otlp_exporter__new(&d->otlp, &d->o->otlp);
	if (err)
		return err;
	/* the first export at once: figures from the start */
	d->otlp_next_ns = clock_mono_ns();
	return 0;
}

/* The socket first, so a second daemon fails quickly; then the pidfile,
 * the series, the programs and the HTTP server.
 */
static int daemon_start(void *ctx, struct cmd_env *env)
{
	struct daemon *d = ctx;
	struct daemon_opts *o = d->o;
	struct comm_series_opts so = {
		.max_series = o->comm_series,
		.idle_ns = o->series_ttl_ns,
		.labels = &o->labels,
	};
	char where[4096];

	(void)env;
	signal(SIGPIPE, SIG_IGN); /* a scraper that hangs up is no reason */
	/* A fold's models come and go at every poll under process churn:
	 * malloc keeps their memory between polls rather than giving it back
	 * at each free (and taking it again as page faults); the trims once
	 * a minute and after each scrape give it back. (Under 1,400 /bin/true
	 * a second a fold's rows are some 40 MB a second: at 4 MiB and 1 MiB
	 * the page faults were 45% of the daemon's time, 15.1 us of CPU a
	 * process started, 9.3 at these.)
	 */
	mallopt(M_TRIM_THRESHOLD, 64 << 20);
	mallopt(M_MMAP_THRESHOLD, 32 << 20);

	if (target_find(&o->target, false, &d->found))
		return EXIT_FAIL;
	if (open_listener(d) || (o->pidfile && open_pidfile(d)))
		return EXIT_FAIL;
	if (group_needs_cgroups(&o->labels) &&
	    cgroups_v2_mount(where, sizeof(where)) == -ENOENT) {
		pr_err("--labels unit, cgroup, container, pod and qos need cgroup v2, "
		       "and no cgroup2 file system is mounted here");
		return EXIT_FAIL;
	}
	d->hold = split_hold__new();
	d->ttl = series_ttl__new(o->series_ttl_ns);
	if (!d->hold || !d->ttl ||
	    (o->comm_series && comm_series__new(&d->comms, &so))) {
		pr_err("out of memory");
		return EXIT_FAIL;
	}
	d->start_unix_ns = clock_real_ns();
	d->start_mono_ns = clock_mono_ns();
	if (attach(d) || start_http(d) || start_otlp(d))
		return EXIT_FAIL;
	served_addr(d, where, sizeof(where));
	pr_warn("serving metrics at %s://%s/metrics (pid %d)",
		web_config_cert_pem(o->web) ? "https" : "http", where,
		(int)getpid());
	if (d->otlp)
		pr_warn("pushing metrics to %s every %gs (OTLP/HTTP; "
			"service.instance.id %s)",
			otlp_exporter__url(d->otlp), o->otlp.interval_s,
			d->instance_id);
	return 0;
}

static int daemon_loop(void *ctx, struct cmd_env *env)
{
	return run(ctx, env->sigfd);
}

static void daemon_teardown(void *ctx, int status)
{
	struct daemon *d = ctx;

	stop_http(d);
	if (d->listen_fd >= 0)
		close(d->listen_fd);
	/* the final figures, tried once, before the programs go */
	if (d->otlp && status == EXIT_OK)
		otlp_export(d);
	otlp_exporter__free(d->otlp);
	/* Detaches every BPF program: nothing is left in the kernel. */
	duty__free(d->duty);
	collector__report_folded(d->col);
	collector__destroy(d->col);
	comm_series__free(d->comms);
	split_hold__free(d->hold);
	series_ttl__free(d->ttl);
	close_pidfile(d);
	if (status == EXIT_OK)
		pr_warn("stopped: BPF programs detached");
	target_found_free(&d->found);
	daemon_free_opts(d->o);
}

static const struct cmd_ops daemon_ops = {
	.prog = "scprof daemon",
	.signals = CMD_SIGNALS_FD,
	.parse = daemon_parse,
	.start = daemon_start,
	.loop = daemon_loop,
	.teardown = daemon_teardown,
};

int cmd_daemon(int argc, char **argv)
{
	struct daemon_opts o;
	struct daemon d = { .o = &o, .listen_fd = -1, .pidfile_fd = -1 };

	return cmd_run(&daemon_ops, &d, argc, argv);
}
