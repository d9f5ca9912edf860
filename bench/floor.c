// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * Load the empty floor programs and hold them attached until SIGINT or
 * SIGTERM: `floor` attaches to sys_enter only, `floor --exit` to sys_exit
 * only and `floor --both` to both. Prints "attached" once they are.
 *
 * `floor --toggle` loads the sys_enter one, prints "loaded" and then reads
 * lines from stdin: "on" attaches it, "off" detaches it, each answered
 * with the same word once done; it exits at EOF. A window opened and
 * closed this way costs what attaching and detaching cost, not what
 * starting a process and loading a program do.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "floor.skel.h"

static int toggle(void)
{
	struct bpf_link *link = NULL;
	struct floor_bpf *skel;
	char line[64];
	int err = 0;

	skel = floor_bpf__open();
	if (!skel) {
		fprintf(stderr, "floor: cannot open: %s\n", strerror(errno));
		return 1;
	}
	bpf_program__set_autoload(skel->progs.floor_exit, false);
	if (floor_bpf__load(skel)) {
		fprintf(stderr, "floor: cannot load: %s\n", strerror(errno));
		floor_bpf__destroy(skel);
		return 1;
	}
	printf("loaded\n");
	fflush(stdout);
	while (!err && fgets(line, sizeof(line), stdin)) {
		if (!strcmp(line, "on\n") && !link) {
			link = bpf_program__attach(skel->progs.floor_enter);
			if (!link) {
				fprintf(stderr, "floor: cannot attach: %s\n",
					strerror(errno));
				err = 1;
				break;
			}
		} else if (!strcmp(line, "off\n") && link) {
			bpf_link__destroy(link);
			link = NULL;
		} else {
			fprintf(stderr, "floor: unexpected: %s", line);
			err = 2;
			break;
		}
		fputs(line, stdout);
		fflush(stdout);
	}
	bpf_link__destroy(link);
	floor_bpf__destroy(skel);
	return err;
}

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
	} else if (argc == 2 && !strcmp(argv[1], "--toggle")) {
		return toggle();
	} else if (argc != 1) {
		fprintf(stderr, "usage: floor [--exit|--both|--toggle]\n");
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
