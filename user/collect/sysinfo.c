// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/utsname.h>
#include <bpf/bpf.h>

#include "collect/sysinfo.h"
#include "util/procfs.h"

#define VULN_DIR "/sys/devices/system/cpu/vulnerabilities"

/* "model name : X" (x86), else other architectures' names for it. */
static char *cpu_model(void)
{
	static const char *const keys[] = { "model name", "Model", "cpu model",
					    "Hardware",	  "cpu",   NULL };
	char line[512], *best = NULL;
	int rank = 99;
	FILE *f = fopen("/proc/cpuinfo", "re");

	if (!f)
		return NULL;
	while (fgets(line, sizeof(line), f) && rank) {
		char *colon = strchr(line, ':'), *v;
		size_t klen;

		if (!colon)
			continue;
		klen = (size_t)(colon - line);
		while (klen &&
		       (line[klen - 1] == ' ' || line[klen - 1] == '\t'))
			klen--;
		for (int i = 0; keys[i] && i < rank; i++) {
			if (strlen(keys[i]) != klen ||
			    strncmp(line, keys[i], klen))
				continue;
			v = colon + 1;
			v += strspn(v, " \t");
			v[strcspn(v, "\n")] = '\0';
			if (!*v)
				break;
			free(best);
			best = strdup(v);
			rank = i;
			break;
		}
	}
	fclose(f);
	return best;
}

static int read_mitigations(struct machine_info *m)
{
	DIR *d = opendir(VULN_DIR);
	struct dirent *e;
	int err = 0;

	if (!d)
		return 0; /* old kernel or no sysfs: nothing to say */
	while (!err && (e = readdir(d))) {
		char path[512], *state;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), VULN_DIR "/%s", e->d_name);
		state = procfs_read_line(path);
		if (!state)
			continue;
		err = machine_add_mitigation(m, e->d_name, state);
		free(state);
	}
	closedir(d);
	return err;
}

int machine_syscall_tracers(void)
{
	__u32 id = 0;
	int n = 0;

	while (!bpf_link_get_next_id(id, &id)) {
		struct bpf_link_info info;
		__u32 len = sizeof(info);
		char tp[64] = "";
		int fd = bpf_link_get_fd_by_id(id);

		if (fd < 0)
			continue; /* gone meanwhile */
		/* The type first: other types read the union differently. */
		memset(&info, 0, sizeof(info));
		if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
		    info.type == BPF_LINK_TYPE_RAW_TRACEPOINT) {
			memset(&info, 0, sizeof(info));
			len = sizeof(info);
			info.raw_tracepoint.tp_name = (__u64)(unsigned long)tp;
			info.raw_tracepoint.tp_name_len = sizeof(tp);
			if (!bpf_obj_get_info_by_fd(fd, &info, &len) &&
			    (!strcmp(tp, "sys_enter") ||
			     !strcmp(tp, "sys_exit")))
				n++;
		}
		close(fd);
	}
	if (errno != ENOENT)
		return -errno;
	return n;
}

int machine_read(struct machine_info *m)
{
	struct utsname u;
	long n;

	memset(m, 0, sizeof(*m));
	if (!uname(&u)) {
		m->kernel = strdup(u.release);
		m->arch = strdup(u.machine);
		if (!m->kernel || !m->arch)
			return -ENOMEM;
	}
	m->cpu_model = cpu_model();
	if (!m->cpu_model && m->arch)
		m->cpu_model = strdup(m->arch);
	m->clocksource = procfs_read_line(
		"/sys/devices/system/clocksource/clocksource0/current_clocksource");
	n = sysconf(_SC_NPROCESSORS_ONLN);
	m->cpus = n > 0 ? (int)n : 0;
	if (procfs_boot_id(m->boot_id, sizeof(m->boot_id)))
		m->boot_id[0] = '\0';
	m->syscall_tracers = machine_syscall_tracers();
	if (m->syscall_tracers < 0)
		m->syscall_tracers = -1;
	return read_mitigations(m);
}
