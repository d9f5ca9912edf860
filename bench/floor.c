// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Load the empty floor programs and hold them attached until SIGINT or
 * SIGTERM: `floor` attaches to sys_enter only, `floor --exit` to sys_exit
 * only and `floor --both` to both. Prints "attached" once they are.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

int main(int argc, char **argv)
{
	bool enter = true, exit_ = false;
	struct floor_bpf *skel;
	sigset_t mask;
	int sig, err;

	if (argc == 2 && !strcmp(argv[1], "--exit")) {
		enter = false;
		exit_ = true;
	} else if (argc == 2 && !strcmp(argv[1], "--both")) {
		exit_ = true;
	} else if (argc != 1) {
		fprintf(stderr, "usage: floor [--exit|--both]\n");
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.floor_enter, enter);
	bpf_program__set_autoload(skel->progs.floor_exit, exit_);
	err = floor_bpf__load(skel);
	if (!err)
		err = floor_bpf__attach(skel);
	if (err) {
		fprintf(stderr, "floor: cannot load or attach: %s\n",
			strerror(-err));
		floor_bpf__destroy(skel);
		return 1;
	}
	printf("attached\n");
	fflush(stdout);
	sigwait(&mask, &sig);
	floor_bpf__destroy(skel);
	return 0;
}
