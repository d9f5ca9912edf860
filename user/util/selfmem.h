/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* What scprof's own process holds in memory, said with -v. */
#ifndef SCPROF_SELFMEM_H
#define SCPROF_SELFMEM_H

struct selfmem {
	unsigned long long peak_kb;	 /* VmHWM: the most ever resident */
	unsigned long long rss_kb;	 /* VmRSS now */
	unsigned long long heap_used_kb; /* malloc'd, not freed */
	unsigned long long heap_held_kb; /* what malloc holds from the kernel */
	unsigned long long bpf_kb;	 /* resident in mapped BPF maps (ring
					 * buffers, arrays) */
	unsigned long long file_kb;	 /* resident in mapped files (ELF and
					 * debug files read for symbols) */
};

/* Reads /proc/self (status, statm, smaps) and malloc's figures; 0, or
 * -ENOENT when the resident sizes could not be read.
 */
int selfmem_read(struct selfmem *m);
/* With -v: one line of them, after what. */
void selfmem_report(const char *what);

#endif
