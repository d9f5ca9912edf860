// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* What scprof's own process holds in memory (selfmem.h). */
#include <errno.h>
#include <malloc.h>
#include <stdio.h>
#include <string.h>

#include "util/log.h"
#include "util/procfs.h"
#include "util/selfmem.h"

/* smaps: each mapping's header line, then its fields; the Rss of those
 * named after a BPF map and of those backed by a file.
 */
static void read_smaps(struct selfmem *m, FILE *f)
{
	char line[4096];
	int kind = 0; /* 1 BPF map, 2 file, 0 other */

	while (fgets(line, sizeof(line), f)) {
		unsigned long long kb;
		char name[4096];

		if (strchr(line, '-') &&
		    strchr(line, '-') < strchr(line, ' ')) {
			name[0] = '\0';
			/* addresses perms offset dev inode [name] */
			if (sscanf(line, "%*s %*s %*s %*s %*s %4095[^\n]",
				   name) < 1)
				name[0] = '\0';
			kind = strstr(name, "bpf-map") ? 1 :
			       name[0] == '/'	       ? 2 :
							 0;
		} else if (!strncmp(line, "Rss:", 4) &&
			   sscanf(line + 4, "%llu", &kb) == 1) {
			if (kind == 1)
				m->bpf_kb += kb;
			else if (kind == 2)
				m->file_kb += kb;
		}
	}
}

int selfmem_read(struct selfmem *m)
{
	struct mallinfo2 mi = mallinfo2();
	FILE *f;

	memset(m, 0, sizeof(*m));
	m->peak_kb = procfs_self_peak_rss_bytes() / 1024;
	m->rss_kb = procfs_self_rss_bytes() / 1024;
	if (!m->peak_kb || !m->rss_kb)
		return -ENOENT;
	f = fopen("/proc/self/smaps", "re");
	if (f) {
		read_smaps(m, f);
		fclose(f);
	}
	m->heap_used_kb = (mi.uordblks + mi.hblkhd) / 1024;
	m->heap_held_kb = (mi.arena + mi.hblkhd) / 1024;
	return 0;
}

void selfmem_report(const char *what)
{
	struct selfmem m;

	if (log_ctx()->level < LOG_INFO || selfmem_read(&m))
		return;
	pr_info("memory %s: %.1f MB resident at most; now %.1f MB (heap %.1f "
		"MB in use of %.1f MB held, BPF maps %.1f MB, mapped files %.1f "
		"MB)",
		what, m.peak_kb / 1024.0, m.rss_kb / 1024.0,
		m.heap_used_kb / 1024.0, m.heap_held_kb / 1024.0,
		m.bpf_kb / 1024.0, m.file_kb / 1024.0);
}
