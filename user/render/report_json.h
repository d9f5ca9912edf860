/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* The JSON report: one object with the rows, processes and drops. */
#ifndef SCPROF_REPORT_JSON_H
#define SCPROF_REPORT_JSON_H

#include <stdint.h>
#include <stdio.h>
#include <json-c/json.h>

#include "render/view.h"

int report_json(FILE *f, const struct sc_model *m, const struct report_opts *o,
		const struct report_meta *meta);
/* The calls in flight as an array of {pid, tid, comm, syscall, abi,
 * seconds, before_attach}; NULL when out of memory.
 */
struct json_object *report_json_flights(const struct sc_flight_call *fl,
					size_t n);
/* root's "in_flight": that array, or null when the calls in flight are not
 * known (known false). err passes through: nothing is added after one.
 */
int report_json_add_flights(struct json_object *root, int err,
			    const struct sc_flight_call *fl, size_t n,
			    bool known);
/* A target's CPU quota throttling over the run: {cgroup, throttled_ns,
 * nr_throttled, nr_periods, quota_us (null: none), period_us}; NULL when
 * it is not known (or out of memory).
 */
struct json_object *report_json_throttle(const struct sc_throttle *t);

#endif
