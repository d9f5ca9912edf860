/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The BPF programs' settings (settings.c): every one decided in one place.
 */
#ifndef SCPROF_COLLECT_SETTINGS_H
#define SCPROF_COLLECT_SETTINGS_H

#include <stdbool.h>
#include <stdint.h>

#include "collect/facilities.h"
#include "collect/opts.h"
#include "sc_settings.h"

struct scprof_bpf;

/* What the BPF settings are decided from besides the plan's options and
 * the kernel's facilities: this process, the machine and the environment.
 */
struct settings_env {
	uint32_t self_tgid; /* scprof's own */
	uint32_t ncpus;	    /* possible CPUs; 0: unknown */
	uint64_t pid_max;   /* the kernel's pid_max */
	uint64_t cgroup_id; /* --cgroup's (its directory's inode); 0: none */
	bool fast_paths;    /* SCPROF_FAST_PATHS is not 0 */
	/* SCPROF_TEST_MAP_FAIL (tests only): the map whose every update
	 * fails (enum sc_map; SC_MAP_COUNT: none), with this errno
	 */
	uint32_t inject_map;
	int32_t inject_errno;
};

/* Read them; cgroup_fd: --cgroup's directory, or -1. */
void settings_env_read(struct settings_env *e, int cgroup_fd);
/* Every BPF setting, decided from the plan's options o, the kernel's
 * facilities k and e.
 */
void settings_fill(struct sc_settings *s, const struct collector_opts *o,
		   const struct kernel_facilities *k,
		   const struct settings_env *e);
/* Before load: s into the skeleton's rodata, and the tables beside it
 * (each syscall's flags, -e trace=SET's bitmaps, from o).
 */
void settings_write(struct scprof_bpf *skel, const struct sc_settings *s,
		    const struct collector_opts *o);

#endif
