/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * --slow: a slow call from its event (struct sc_stack_event flagged
 * SC_STACK_F_SLOW), in the slow calls' model (model/slowlog.h).
 */
#ifndef SCPROF_SLOW_EVENT_H
#define SCPROF_SLOW_EVENT_H

#include "model/slowlog.h"
#include "sc_stack.h"

struct ksyms;

/* The slow call of e, all but its stack (its call site is the
 * unwinder's): its fd described, its split, where it slept (named by
 * ksyms; NULL: unnamed). NULL: out of memory.
 */
struct sc_slow_call *slow_event_call(const struct ksyms *ksyms,
				     const struct sc_stack_event *e);

#endif
