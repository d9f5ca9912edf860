/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * The kernel facilities scprof's BPF programs adapt to: what each is, the
 * first Linux release with it, how scprof tells, what it does without it,
 * and whether this kernel has it. Filled in by the collector's probes
 * (collector__facilities), printed by `scprof features`.
 */
#ifndef SCPROF_FACILITY_H
#define SCPROF_FACILITY_H

#include <stdbool.h>

struct sc_facility {
	const char *name;    /* SCPROF_WITHOUT's name: "task_btf" */
	const char *what;    /* "bpf_get_current_task_btf()" */
	const char *since;   /* "5.11" */
	const char *probe;   /* how scprof tells */
	const char *without; /* what scprof does on a kernel without it */
	bool present;	     /* this kernel has it (and SCPROF_WITHOUT
			      * does not name it)
			      */
	bool forced_off;     /* SCPROF_WITHOUT names it */
	bool optional;	     /* without it the default build runs still
			      * (a cheaper path is not taken)
			      */
};

/* The facilities, and which build of the BPF programs runs here. */
struct sc_facilities {
	struct sc_facility rows[8];
	unsigned int n;
	bool legacy;	  /* the legacy build (a facility is missing) */
	char kernel[128]; /* uname's release */
};

#endif
