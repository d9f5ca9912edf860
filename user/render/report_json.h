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

#endif
