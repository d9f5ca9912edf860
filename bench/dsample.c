// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * dsample HZ SLICE_MS FUNCTION...: how much of the CPUs' time is spent in
 * some kernel functions, sampled. A cpu-clock event on each online CPU
 * fires HZ times a second of that CPU's time (busy time: an idle CPU's
 * event is not counting); a BPF program counts the samples whose address
 * is inside one of the FUNCTIONs (their extent from /proc/kallsyms: up to
 * the next symbol).
 * Prints "attached" once sampling runs, then every SLICE_MS one line
 *
 *   slice END IN ALL F1 F2...
 *
 * END the slice's end in seconds of CLOCK_MONOTONIC, IN the samples in
 * the functions, ALL every sample and F1... those in each function found,
 * in the order of the "dsample: NAME START SIZE" lines that name them on
 * stderr, over all CPUs, during the slice; until SIGINT or SIGTERM. Each
 * sample stands for 1/HZ s of a CPU. A function not found is said on
 * stderr and skipped. Exit status 1 with one line on error
 * (none found, addresses hidden, no perf event), 2 on bad usage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "dsample.skel.h"

#define DSAMPLE_RANGES 16

struct ksym {
	unsigned long long addr;
	char *name;
};

static int by_addr(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* The kernel's text symbols, by address; NULL on error (said). */
static struct ksym *read_kallsyms(size_t *n)
{
	FILE *f = fopen("/proc/kallsyms", "r");
	struct ksym *v = NULL;
	size_t cap = 0;
	char line[512], name[256], type;
	unsigned long long addr;

	*n = 0;
	if (!f) {
		fprintf(stderr, "dsample: /proc/kallsyms: %s\n",
			strerror(errno));
		return NULL;
	}
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%llx %c %255s", &addr, &type, name) != 3 ||
		    (type != 't' && type != 'T'))
			continue;
		if (*n == cap) {
			struct ksym *w;

			cap = cap ? 2 * cap : 65536;
			w = realloc(v, cap * sizeof(*v));
			if (!w)
				goto oom;
			v = w;
		}
		v[*n].addr = addr;
		v[*n].name = strdup(name);
		if (!v[*n].name)
			goto oom;
		(*n)++;
	}
	fclose(f);
	qsort(v, *n, sizeof(*v), by_addr);
	return v;
oom:
	fclose(f);
	fprintf(stderr, "dsample: out of memory\n");
	return NULL;
}

static double mono_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* out[i]: samples in function i, out[DSAMPLE_RANGES]: all of them */
static int sums(struct dsample_bpf *skel,
		unsigned long long out[DSAMPLE_RANGES + 1])
{
	int ncpu = libbpf_num_possible_cpus();
	unsigned long long v[ncpu > 0 ? ncpu : 1];

	if (ncpu <= 0)
		return -1;
	for (__u32 k = 0; k <= DSAMPLE_RANGES; k++) {
		out[k] = 0;
		if (bpf_map_lookup_elem(bpf_map__fd(skel->maps.hits), &k, v))
			return -1;
		for (int i = 0; i < ncpu; i++)
			out[k] += v[i];
	}
	return 0;
}

int main(int argc, char **argv)
{
	struct dsample_bpf *skel = NULL;
	struct ksym *ks;
	size_t nks = 0;
	long hz, slice_ms, ncpu;
	int found = 0, attached = 0, status = 1;
	unsigned long long last[DSAMPLE_RANGES + 1], now[DSAMPLE_RANGES + 1];
	struct timespec slice;
	sigset_t mask;
	char *end;

	if (argc < 4 || (hz = strtol(argv[1], &end, 10)) <= 0 || *end ||
	    hz > 100000 || (slice_ms = strtol(argv[2], &end, 10)) <= 0 ||
	    *end || argc - 3 > DSAMPLE_RANGES) {
		fprintf(stderr,
			"usage: dsample HZ SLICE_MS FUNCTION... "
			"(at most %d)\n",
			DSAMPLE_RANGES);
		return 2;
	}
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	ks = read_kallsyms(&nks);
	if (!ks)
		return 1;
	skel = dsample_bpf__open_and_load();
	if (!skel) {
		fprintf(stderr, "dsample: cannot load: %s\n", strerror(errno));
		return 1;
	}
	for (int a = 3; a < argc; a++) {
		size_t i = 0, j;

		while (i < nks && strcmp(ks[i].name, argv[a]))
			i++;
		if (i == nks) {
			fprintf(stderr, "dsample: %s: not in /proc/kallsyms\n",
				argv[a]);
			continue;
		}
		if (!ks[i].addr) {
			fprintf(stderr, "dsample: /proc/kallsyms hides the "
					"addresses (kptr_restrict)\n");
			goto out;
		}
		for (j = i + 1; j < nks && ks[j].addr == ks[i].addr; j++)
			;
		if (j == nks) {
			fprintf(stderr,
				"dsample: %s: no end (the last symbol)\n",
				argv[a]);
			continue;
		}
		skel->bss->lo[found] = ks[i].addr;
		skel->bss->hi[found] = ks[j].addr;
		fprintf(stderr, "dsample: %s %#llx %llu\n", argv[a], ks[i].addr,
			ks[j].addr - ks[i].addr);
		found++;
	}
	if (!found) {
		fprintf(stderr, "dsample: none of the functions found\n");
		goto out;
	}
	ncpu = sysconf(_SC_NPROCESSORS_CONF);
	for (long c = 0; c < ncpu; c++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.sample_period = 1000000000ULL / (unsigned long long)hz,
		};
		int fd = (int)syscall(SYS_perf_event_open, &attr, -1, (int)c,
				      -1, PERF_FLAG_FD_CLOEXEC);

		if (fd < 0 && errno == ENODEV)
			continue; /* offline */
		if (fd < 0 ||
		    !bpf_program__attach_perf_event(skel->progs.dsample, fd)) {
			fprintf(stderr, "dsample: cpu %ld: %s\n", c,
				strerror(errno));
			goto out;
		}
		attached++;
	}
	if (!attached || sums(skel, last)) {
		fprintf(stderr, "dsample: no CPU sampled\n");
		goto out;
	}
	printf("attached\n");
	fflush(stdout);
	slice.tv_sec = slice_ms / 1000;
	slice.tv_nsec = (slice_ms % 1000) * 1000000L;
	for (;;) {
		int sig = sigtimedwait(&mask, NULL, &slice);
		unsigned long long in = 0;

		if (sig == SIGINT || sig == SIGTERM)
			break;
		if (sums(skel, now)) {
			fprintf(stderr, "dsample: cannot read the counts\n");
			goto out;
		}
		for (int i = 0; i < found; i++)
			in += now[i] - last[i];
		printf("slice %.6f %llu %llu", mono_s(), in,
		       now[DSAMPLE_RANGES] - last[DSAMPLE_RANGES]);
		for (int i = 0; i < found; i++)
			printf(" %llu", now[i] - last[i]);
		printf("\n");
		fflush(stdout);
		memcpy(last, now, sizeof(last));
	}
	status = 0;
out:
	/* (the links and perf events go with the process) */
	dsample_bpf__destroy(skel);
	return status;
}
