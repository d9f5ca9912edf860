// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A target's CPU quota throttling over a run (throttle.h). */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>

#include "collect/cgroups.h"
#include "collect/throttle.h"
#include "util/procfs.h"

struct throttle {
	pid_t pid;	    /* whose cgroup it is (0: dir given) */
	char cg[PATH_MAX];  /* its cgroup as /proc/PID/cgroup says */
	char dir[PATH_MAX]; /* the directory of the one with the quota */
	bool v1;	    /* cgroup v1's cpu controller */
	bool found;
	struct timespec start;	 /* the run's, on the wall clock */
	struct sc_throttle base; /* cpu.stat when watching began */
};

/* cpu.stat's counters: v2's throttled_usec, v1's throttled_time (ns). */
static bool read_stat(const struct throttle *t, struct sc_throttle *out)
{
	char path[PATH_MAX + 16], key[64];
	unsigned long long v;
	bool any = false;
	FILE *f;

	snprintf(path, sizeof(path), "%s/cpu.stat", t->dir);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fscanf(f, "%63s %llu", key, &v) == 2) {
		if (!strcmp(key, "nr_periods")) {
			out->nr_periods = v;
		} else if (!strcmp(key, "nr_throttled")) {
			out->nr_throttled = v;
			any = true;
		} else if (!strcmp(key, "throttled_usec")) {
			out->throttled_ns = v * 1000;
		} else if (!strcmp(key, "throttled_time")) {
			out->throttled_ns = v;
		}
	}
	fclose(f);
	return any; /* (v2 without the cpu controller: no nr_throttled) */
}

/* The quota of the cgroup at dir: v2 "max 100000" or "10000 100000",
 * v1 cfs_quota_us -1 or a number. false: unreadable.
 */
static bool read_quota(const char *dir, bool v1, int64_t *quota,
		       uint64_t *period)
{
	char path[PATH_MAX + 32], *line, *q;
	bool ok = false;

	*quota = -1;
	*period = 0;
	if (!v1) {
		snprintf(path, sizeof(path), "%s/cpu.max", dir);
		line = procfs_read_line(path);
		if (!line)
			return false;
		q = strchr(line, ' ');
		if (q) {
			*period = strtoull(q + 1, NULL, 10);
			*quota = strncmp(line, "max", 3) ?
					 strtoll(line, NULL, 10) :
					 -1;
			ok = true;
		}
		free(line);
		return ok;
	}
	snprintf(path, sizeof(path), "%s/cpu.cfs_quota_us", dir);
	line = procfs_read_line(path);
	if (!line)
		return false;
	*quota = strtoll(line, NULL, 10);
	free(line);
	snprintf(path, sizeof(path), "%s/cpu.cfs_period_us", dir);
	line = procfs_read_line(path);
	if (!line)
		return false;
	*period = strtoull(line, NULL, 10);
	free(line);
	return true;
}

/* Where cgroup v1's cpu controller is mounted, into out. */
static bool v1_cpu_mount(char *out, size_t len)
{
	char line[4096];
	FILE *f = fopen("/proc/self/mountinfo", "re");
	bool found = false;

	while (f && !found && fgets(line, sizeof(line), f)) {
		char mnt[PATH_MAX], *sep = strstr(line, " - cgroup "), *opts;

		if (!sep || sscanf(line, "%*s %*s %*s %*s %4095s", mnt) != 1)
			continue;
		/* "- cgroup cgroup rw,cpu,cpuacct": the super options */
		opts = strrchr(sep, ' ');
		if (opts && (strstr(opts, ",cpu,") || strstr(opts, ",cpu\n") ||
			     strstr(opts, ",cpu "))) {
			snprintf(out, len, "%s", mnt);
			found = true;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* pid's cgroup for the cpu controller: its directory, and whether v1. */
static bool pid_cgroup(pid_t pid, char *dir, size_t len, bool *v1, char *cg,
		       size_t cglen)
{
	char path[64], line[4096], root[PATH_MAX], v2path[PATH_MAX] = "",
						   v1path[PATH_MAX] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return false;
	while (fgets(line, sizeof(line), f)) {
		char *ctl = strchr(line, ':'), *p;

		if (!ctl || !(p = strchr(ctl + 1, ':')))
			continue;
		*p++ = '\0';
		p[strcspn(p, "\n")] = '\0';
		if (!strcmp(ctl + 1, ""))
			snprintf(v2path, sizeof(v2path), "%s", p);
		else if (strstr(ctl + 1, "cpu") &&
			 (!strcmp(ctl + 1, "cpu") ||
			  !strncmp(ctl + 1, "cpu,", 4) ||
			  strstr(ctl + 1, ",cpu,") ||
			  (strlen(ctl + 1) > 4 &&
			   !strcmp(ctl + 1 + strlen(ctl + 1) - 4, ",cpu"))))
			snprintf(v1path, sizeof(v1path), "%s", p);
	}
	fclose(f);
	*v1 = v1path[0] != '\0';
	snprintf(cg, cglen, "%s%s", *v1 ? "v1:" : "", *v1 ? v1path : v2path);
	if (*v1)
		return v1_cpu_mount(root, sizeof(root)) &&
		       snprintf(dir, len, "%s%s", root, v1path) < (int)len;
	return v2path[0] && !cgroups_v2_mount(root, sizeof(root)) &&
	       snprintf(dir, len, "%s%s", root, v2path) < (int)len;
}

/* A cgroup made after the run began counted everything since (cpu.stat
 * starts at zero): its directory is newer than the run.
 */
static bool made_since(const char *dir, const struct timespec *since)
{
	struct stat st;

	return !stat(dir, &st) && (st.st_ctim.tv_sec > since->tv_sec ||
				   (st.st_ctim.tv_sec == since->tv_sec &&
				    st.st_ctim.tv_nsec >= since->tv_nsec));
}

/* Watch the cgroup at t->dir (the target's): the nearest one holding a
 * quota, up to the controller's root, and its counters now.
 */
static bool watch(struct throttle *t)
{
	char top[PATH_MAX];
	int64_t quota;
	uint64_t period;

	snprintf(top, sizeof(top), "%s", t->dir);
	for (;;) {
		char *slash;

		if (read_quota(t->dir, t->v1, &quota, &period) && quota >= 0)
			break;
		slash = strrchr(t->dir, '/');
		if (!slash || slash == t->dir)
			break;
		*slash = '\0';
		if (!read_quota(t->dir, t->v1, &quota, &period)) {
			/* above the controller's root: none has one */
			snprintf(t->dir, sizeof(t->dir), "%s", top);
			break;
		}
	}
	if (!read_quota(t->dir, t->v1, &quota, &period) || quota < 0)
		snprintf(t->dir, sizeof(t->dir), "%s", top);
	memset(&t->base, 0, sizeof(t->base));
	if (!made_since(t->dir, &t->start) && !read_stat(t, &t->base))
		return false;
	t->found = true;
	return true;
}

/* The target moved to another cgroup (a command that puts itself in
 * one, runc): watch that one.
 */
static void follow(struct throttle *t)
{
	char dir[PATH_MAX], cg[PATH_MAX];
	struct proc_stat ps;
	bool v1;

	/* (a process that has exited shows the root cgroup: not a move) */
	if (!t->pid || procfs_read_stat(t->pid, &ps) || ps.state == 'Z' ||
	    ps.state == 'X' ||
	    !pid_cgroup(t->pid, dir, sizeof(dir), &v1, cg, sizeof(cg)) ||
	    (t->found && !strcmp(cg, t->cg)))
		return;
	/* (cgroup v1 puts an exiting task back in the root before it is a
	 * zombie: a move to the root, once watching another, is that)
	 */
	if (t->found && (!strcmp(cg, "/") || !strcmp(cg, "v1:/")))
		return;
	snprintf(t->cg, sizeof(t->cg), "%s", cg);
	snprintf(t->dir, sizeof(t->dir), "%s", dir);
	t->v1 = v1;
	t->found = false;
	watch(t);
}

struct throttle *throttle_start(pid_t pid, const char *dir)
{
	struct throttle *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	clock_gettime(CLOCK_REALTIME, &t->start);
	t->pid = pid;
	if (pid > 0) {
		follow(t);
	} else if (dir && snprintf(t->dir, sizeof(t->dir), "%s", dir) <
				  (int)sizeof(t->dir)) {
		watch(t);
	}
	if (!t->found && !t->pid) {
		free(t);
		return NULL;
	}
	return t;
}

void throttle_poll(struct throttle *t)
{
	if (t)
		follow(t);
}

void throttle_read(struct throttle *t, struct sc_throttle *out)
{
	struct sc_throttle now = { 0 };

	memset(out, 0, sizeof(*out));
	throttle_poll(t);
	if (!t || !t->found || !read_stat(t, &now))
		return;
	out->known = true;
	snprintf(out->cgroup, sizeof(out->cgroup), "%s", t->dir);
	out->v1 = t->v1;
	read_quota(t->dir, t->v1, &out->quota_us, &out->period_us);
	out->throttled_ns = now.throttled_ns - t->base.throttled_ns;
	out->nr_throttled = now.nr_throttled - t->base.nr_throttled;
	out->nr_periods = now.nr_periods - t->base.nr_periods;
}

void throttle_free(struct throttle *t)
{
	free(t);
}
