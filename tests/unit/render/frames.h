/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * Stacks for the renderers' tests (call sites, flame graph, pprof): a
 * program logging through stdio, innermost frame first, and one whose
 * frames are unnamed. Each test adds its own hostile names.
 */
#ifndef SCPROF_TEST_FRAMES_H
#define SCPROF_TEST_FRAMES_H

#include "model/stacks.h"

static const struct sc_frame logger[] = {
	{ .func = "__write",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x10 },
	{ .func = "_IO_fflush",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x11 },
	{ .func = "log_line",
	  .module = "app",
	  .offset = 0x20,
	  .file = "/src/app.c",
	  .line = 41 },
	{ .func = "run_logger", .module = "app", .offset = 0x28 },
	{ .func = "main", .module = "app", .offset = 0x30 },
	{ .func = "__libc_start_call_main",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x40 },
};

/* unnamed frames: one in a module, one in none */
static const struct sc_frame rawf[] = {
	{ .func = "__write",
	  .module = "libc.so.6",
	  .runtime = SC_RT_LIBC,
	  .offset = 0x10 },
	{ .module = "app", .offset = 0x1353 },
	{ .offset = 0x7fff1234 },
};

#endif /* SCPROF_TEST_FRAMES_H */
