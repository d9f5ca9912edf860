/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The clock that intervals, deadlines and scrape times are measured on. */
#ifndef SCPROF_CLOCK_H
#define SCPROF_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns: never jumps with the wall clock. */
uint64_t clock_mono_ns(void);
/* CLOCK_REALTIME in ns since the epoch: for timestamps in outputs. */
uint64_t clock_real_ns(void);
/* The calling thread's CPU time in ns: what it ran, not what it waited. */
uint64_t clock_thread_ns(void);

#endif
