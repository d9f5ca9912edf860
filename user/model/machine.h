/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The machine a calibration was measured on: CPU model, kernel, clock
 * source, boot id and the speculative-execution mitigations in force
 * (/sys/devices/system/cpu/vulnerabilities/), which change what a kernel
 * crossing costs.
 */
#ifndef SCPROF_MACHINE_H
#define SCPROF_MACHINE_H

#include <stddef.h>

#define MACHINE_BOOT_ID_LEN 40

struct mitigation {
	char *name;  /* file name: "spectre_v2" */
	char *state; /* its one line: "Mitigation: Retpolines; ..." */
};

struct machine_info {
	char *cpu_model;   /* "AMD EPYC 7B13", or the architecture */
	char *kernel;	   /* uname release */
	char *arch;	   /* uname machine */
	char *clocksource; /* current clock source, NULL if unknown */
	int cpus;	   /* online CPUs */
	char boot_id[MACHINE_BOOT_ID_LEN]; /* "" if unknown */
	/* BPF programs attached to the raw syscall tracepoints by others
	 * (another profiler): each adds to every syscall. -1: unknown.
	 */
	int syscall_tracers;
	struct mitigation *mitigations; /* sorted by name */
	size_t nmitigations;
};

/* Add one mitigation (takes copies). 0 or -ENOMEM. */
int machine_add_mitigation(struct machine_info *m, const char *name,
			   const char *state);
void machine_free(struct machine_info *m);
/* Is a mitigation state one that costs nothing ("Not affected")? */
int machine_mitigation_inactive(const char *state);

#endif
