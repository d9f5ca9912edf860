// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The calibration loops' catalogue and a calibration's results. */
#include <stdlib.h>
#include <string.h>

#include "model/calibration.h"

#define KIB 1024U

static const struct cal_loop loops[CAL_NLOOPS] = {
	[CAL_LOOP_GETPPID] = { CAL_FLOOR_LOOP,
			       "syscall(SYS_getppid): the floor, one kernel crossing",
			       0, NULL },
	[CAL_LOOP_LIBC_GETPID] = { "libc-getpid",
				   "getpid() through the C library", 0, NULL },
	[CAL_LOOP_VDSO] = { CAL_VDSO_LOOP,
			    "clock_gettime(CLOCK_MONOTONIC): answered by the vDSO, no crossing",
			    0, NULL },
	[CAL_LOOP_READ_1B] = { "read-1B",
			       "pread of 1 byte from a file in the page cache",
			       1, NULL },
	[CAL_LOOP_READ_64KIB] = { "read-64KiB",
				  "pread of 64 KiB from a file in the page cache",
				  64 * KIB, "read-1B" },
	[CAL_LOOP_WRITE_DEVNULL] = { "write-1B-devnull",
				     "write of 1 byte to /dev/null", 1, NULL },
	[CAL_LOOP_READ_COPY_4KIB] = { "read-copy-4KiB",
				      "copy a warm file with pread, 4 KiB per call",
				      4 * KIB, NULL },
	[CAL_LOOP_MMAP_COPY_4KIB] = { "mmap-copy-4KiB",
				      "copy a warm file from an mmap of it, 4 KiB per block (mapped once per pass)",
				      4 * KIB, "read-copy-4KiB" },
	[CAL_LOOP_READ_COPY_8KIB] = { "read-copy-8KiB",
				      "copy a warm file with pread, 8 KiB per call",
				      8 * KIB, NULL },
	[CAL_LOOP_MMAP_COPY_8KIB] = { "mmap-copy-8KiB",
				      "copy a warm file from an mmap of it, 8 KiB per block",
				      8 * KIB, "read-copy-8KiB" },
	[CAL_LOOP_READ_COPY_16KIB] = { "read-copy-16KiB",
				       "copy a warm file with pread, 16 KiB per call",
				       16 * KIB, NULL },
	[CAL_LOOP_MMAP_COPY_16KIB] = { "mmap-copy-16KiB",
				       "copy a warm file from an mmap of it, 16 KiB per block",
				       16 * KIB, "read-copy-16KiB" },
	[CAL_LOOP_GETRANDOM] = { "getrandom-16B",
				 "getrandom of 16 bytes, one syscall per request",
				 16, NULL },
	[CAL_LOOP_GETRANDOM_BUFFERED] = { "getrandom-16B-buffered",
					  "16 bytes per request from a 4 KiB buffer refilled by getrandom",
					  16, "getrandom-16B" },
	[CAL_LOOP_FOPEN] = { "fopen-fread-fclose-16B",
			     "fopen, fread 16 bytes, fclose of /dev/urandom per request",
			     16, "getrandom-16B" },
};

const struct cal_loop *cal_loop(size_t i)
{
	return i < CAL_NLOOPS ? &loops[i] : NULL;
}

int cal_find_loop(const char *name)
{
	for (size_t i = 0; i < CAL_NLOOPS; i++) {
		if (!strcmp(loops[i].name, name))
			return (int)i;
	}
	return -1;
}

struct calibration *calibration__new(void)
{
	struct calibration *c = calloc(1, sizeof(*c));

	if (!c)
		return NULL;
	c->pinned_cpu = -1;
	c->version = strdup(SCPROF_VERSION);
	if (!c->version) {
		free(c);
		return NULL;
	}
	return c;
}

void calibration__free(struct calibration *c)
{
	if (!c)
		return;
	machine_free(&c->machine);
	free(c->loops);
	free(c->version);
	free(c);
}

const struct cal_loop_result *calibration__loop(const struct calibration *c,
						const char *name)
{
	for (size_t i = 0; i < c->nloops; i++) {
		if (!strcmp(c->loops[i].name, name))
			return &c->loops[i];
	}
	return NULL;
}

double cal_ns_per_byte(const struct cal_loop_result *r)
{
	return r->bytes_per_call ? r->ns_per_call / r->bytes_per_call : 0;
}

double cal_probe_in_latency(const struct cal_probe *p)
{
	return p->reported_ns < p->overhead_ns ? p->reported_ns :
						 p->overhead_ns;
}
