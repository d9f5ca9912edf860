// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>
#include <sys/resource.h>

#include "util/procfs.h"

/* Next space-separated unsigned field of a stat line. 0 or -EINVAL. */
static int next_u64(const char **p, uint64_t *out)
{
	const char *s = *p;
	char *end;

	while (*s == ' ')
		s++;
	if (*s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	*out = strtoull(s, &end, 10);
	if (errno || (*end != ' ' && *end != '\n' && *end != '\0'))
		return -EINVAL;
	*p = end;
	return 0;
}

/* Skip a space-separated field, whatever it holds (some are signed). */
static int skip_field(const char **p)
{
	const char *s = *p;

	while (*s == ' ')
		s++;
	if (!*s || *s == '\n')
		return -EINVAL;
	while (*s && *s != ' ' && *s != '\n')
		s++;
	*p = s;
	return 0;
}

int procfs_parse_stat(const char *text, struct proc_stat *out)
{
	const char *open = strchr(text, '('), *close = strrchr(text, ')');
	const char *p;
	uint64_t v;
	size_t len;
	char *end;
	long pid;

	memset(out, 0, sizeof(*out));
	if (!open || !close || close < open)
		return -EINVAL;
	errno = 0;
	pid = strtol(text, &end, 10);
	if (errno || end == text || pid <= 0 || *end != ' ' || end + 1 != open)
		return -EINVAL;
	out->pid = (pid_t)pid;
	len = (size_t)(close - open - 1);
	if (len >= sizeof(out->comm))
		len = sizeof(out->comm) - 1;
	memcpy(out->comm, open + 1, len);

	/* Field 3 onwards, numbered as in proc(5). */
	p = close + 1;
	if (p[0] != ' ' || !p[1] || p[2] != ' ')
		return -EINVAL;
	out->state = p[1];
	p += 2;
	for (int field = 4; field <= 22; field++) {
		switch (field) {
		case 4:
		case 14:
		case 15:
		case 20:
		case 22:
			if (next_u64(&p, &v))
				return -EINVAL;
			break;
		default:
			if (skip_field(&p))
				return -EINVAL;
			continue;
		}
		if (field == 4)
			out->ppid = (pid_t)v;
		else if (field == 14)
			out->utime_ticks = v;
		else if (field == 15)
			out->stime_ticks = v;
		else if (field == 20)
			out->num_threads = v;
		else
			out->starttime_ticks = v;
	}
	return 0;
}

int procfs_read_stat(pid_t pid, struct proc_stat *out)
{
	char path[64], buf[1024];
	ssize_t n;
	int fd, err;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return errno == ENOENT ? -ESRCH : -errno;
	n = read(fd, buf, sizeof(buf) - 1);
	err = n < 0 ? -errno : 0;
	close(fd);
	if (err)
		return err;
	if (n == 0) /* a zombie being reaped */
		return -ESRCH;
	buf[n] = '\0';
	return procfs_parse_stat(buf, out);
}

/*
 * The number after "<field>:" in a status file (/proc/PID/status), as a
 * long long: -ENOENT if the file has no such field, -errno if it cannot be
 * opened.
 */
static int status_field(const char *path, const char *field, long long *out)
{
	size_t len = strlen(field);
	char line[256];
	int err = -ENOENT;
	FILE *f = fopen(path, "re");

	if (!f)
		return -errno;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, field, len) || line[len] != ':')
			continue;
		err = sscanf(line + len + 1, "%lld", out) == 1 ? 0 : -EINVAL;
		break;
	}
	fclose(f);
	return err;
}

int procfs_tgid(pid_t pid)
{
	char path[64];
	long long tgid;
	int err;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	err = status_field(path, "Tgid", &tgid);
	if (err == -ENOENT)
		return -ESRCH;
	if (err)
		return err == -EINVAL ? -ESRCH : err;
	return tgid > 0 ? (int)tgid : -ESRCH;
}

long procfs_ticks_per_s(void)
{
	long t = sysconf(_SC_CLK_TCK);

	return t > 0 ? t : 100;
}

int procfs_parse_schedstat(const char *text, uint64_t *run_ns,
			   uint64_t *wait_ns)
{
	const char *p = text;

	if (next_u64(&p, run_ns) || next_u64(&p, wait_ns))
		return -EINVAL;
	return 0;
}

int procfs_task_waits(pid_t pid, struct task_wait **out, size_t *n)
{
	char path[64];
	struct task_wait *arr = NULL;
	size_t cap = 0, cnt = 0;
	struct dirent *e;
	int err = 0;
	DIR *d;

	*out = NULL;
	*n = 0;
	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((e = readdir(d))) {
		char file[96], buf[128];
		uint64_t run, wait;
		ssize_t len;
		long tid;
		char *end;
		int fd;

		tid = strtol(e->d_name, &end, 10);
		if (*end || tid <= 0)
			continue;
		snprintf(file, sizeof(file), "/proc/%d/task/%ld/schedstat",
			 (int)pid, tid);
		fd = open(file, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			if (errno == ENOENT &&
			    access("/proc/self/schedstat", F_OK)) {
				err = -ENOENT; /* no schedstat in this kernel */
				break;
			}
			continue; /* the thread is gone */
		}
		len = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (len <= 0)
			continue;
		buf[len] = '\0';
		if (procfs_parse_schedstat(buf, &run, &wait))
			continue;
		if (cnt == cap) {
			size_t ncap = cap ? cap * 2 : 16;
			struct task_wait *tmp =
				realloc(arr, ncap * sizeof(*tmp));

			if (!tmp) {
				err = -ENOMEM;
				break;
			}
			arr = tmp;
			cap = ncap;
		}
		arr[cnt].tid = (pid_t)tid;
		arr[cnt].wait_ns = wait;
		cnt++;
	}
	closedir(d);
	if (err) {
		free(arr);
		return err;
	}
	*out = arr;
	*n = cnt;
	return 0;
}

uint64_t procfs_waits_delta(const struct task_wait *a, size_t na,
			    const struct task_wait *b, size_t nb)
{
	uint64_t sum = 0;

	for (size_t i = 0; i < nb; i++) {
		uint64_t before = 0;

		for (size_t j = 0; j < na; j++) {
			if (a[j].tid == b[i].tid) {
				before = a[j].wait_ns;
				break;
			}
		}
		if (b[i].wait_ns > before)
			sum += b[i].wait_ns - before;
	}
	return sum;
}

char *procfs_read_line(const char *path)
{
	char buf[512];
	FILE *f = fopen(path, "re");
	char *s = NULL;

	if (!f)
		return NULL;
	if (fgets(buf, sizeof(buf), f)) {
		buf[strcspn(buf, "\n")] = '\0';
		s = strdup(buf);
	}
	fclose(f);
	return s;
}

int procfs_boot_id(char *buf, size_t len)
{
	char *id = procfs_read_line("/proc/sys/kernel/random/boot_id");

	if (!id)
		return -errno ? -errno : -EIO;
	if (strlen(id) >= len) {
		free(id);
		return -ERANGE;
	}
	strcpy(buf, id);
	free(id);
	return 0;
}

uint64_t procfs_self_cpu_ns(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru))
		return 0;
	return (uint64_t)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) *
		       1000000000ULL +
	       (uint64_t)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1000ULL;
}

uint64_t procfs_self_rss_bytes(void)
{
	unsigned long long size, rss = 0;
	FILE *f = fopen("/proc/self/statm", "re");

	if (!f)
		return 0;
	if (fscanf(f, "%llu %llu", &size, &rss) != 2)
		rss = 0;
	fclose(f);
	return rss * (uint64_t)sysconf(_SC_PAGESIZE);
}

uint64_t procfs_self_peak_rss_bytes(void)
{
	long long kb;

	if (status_field("/proc/self/status", "VmHWM", &kb) || kb < 0)
		return 0;
	return (uint64_t)kb * 1024;
}
