// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * rcumark PID: print "TID NEED_QS" for each thread of process PID, where
 * NEED_QS is the thread's RCU Tasks Trace need_qs state (0: never caught
 * running by a grace period; 2: caught, and from then on each syscall
 * tracepoint call of the thread, while any probe is on one, takes the
 * slow path of rcu_read_unlock_trace(); -1: this kernel has no such state).
 * The benchmark puts every loop of a section in the same state with it
 * (bench/probes.py mark_running()). Exit status 1 on error.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "rcumark.skel.h"

int main(int argc, char **argv)
{
	struct rcumark_bpf *skel;
	struct bpf_link *link;
	char buf[4096], *end;
	ssize_t n;
	long pid;
	int fd, err = 0;

	if (argc != 2 || (pid = strtol(argv[1], &end, 10)) <= 0 || *end) {
		fprintf(stderr, "usage: rcumark PID\n");
		return 2;
	}
	skel = rcumark_bpf__open();
	if (!skel) {
		fprintf(stderr, "rcumark: cannot open: %s\n", strerror(errno));
		return 1;
	}
	skel->rodata->tgid = (int)pid;
	if (rcumark_bpf__load(skel)) {
		fprintf(stderr, "rcumark: cannot load: %s\n", strerror(errno));
		rcumark_bpf__destroy(skel);
		return 1;
	}
	link = bpf_program__attach_iter(skel->progs.rcumark, NULL);
	fd = link ? bpf_iter_create(bpf_link__fd(link)) : -1;
	if (fd < 0) {
		fprintf(stderr, "rcumark: no task iterator: %s\n",
			strerror(errno));
		err = 1;
	}
	while (fd >= 0 && (n = read(fd, buf, sizeof(buf))) > 0)
		fwrite(buf, 1, (size_t)n, stdout);
	if (fd >= 0 && n < 0) {
		fprintf(stderr, "rcumark: read: %s\n", strerror(errno));
		err = 1;
	}
	if (fd >= 0)
		close(fd);
	bpf_link__destroy(link);
	rcumark_bpf__destroy(skel);
	return err;
}
