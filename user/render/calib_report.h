/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/*
 * A calibration as a table (with the conclusions the figures support) or
 * as JSON, and back from JSON (the saved calibration is that JSON).
 */
#ifndef SCPROF_CALIB_REPORT_H
#define SCPROF_CALIB_REPORT_H

#include <stdbool.h>
#include <stdio.h>
#include <json-c/json.h>

#include "model/calibration.h"

/* How a loop compares with another in the same calibration. */
struct cal_compare {
	const char *versus; /* the other loop's name, NULL: nothing to say */
	double ratio;	    /* this / versus: > 1 is dearer */
	bool per_byte;	    /* ratio of ns per byte, not per call */
	bool is_floor;	    /* this loop is the floor */
};

/* Compare loop r with its partner (or the floor). */
void calib_compare(const struct calibration *c, const struct cal_loop_result *r,
		   struct cal_compare *out);

/* The progress line of a calibration: on a terminal only, on stderr,
 * rewritten in place; pass calib_progress_show as calibrate_opts.progress.
 */
struct calib_progress {
	const char *prefix; /* "scprof calibrate" */
	bool on;
	bool shown;
};

void calib_progress_show(void *ctx, size_t i, size_t n, const char *what);
/* Erase the line, if one is shown. */
void calib_progress_end(struct calib_progress *p);

int calib_write_table(FILE *f, const struct calibration *c);
int calib_write_json(FILE *f, const struct calibration *c);

/* NULL when out of memory. */
struct json_object *calib_to_json(const struct calibration *c);
/*
 * Rebuild a calibration from calib_to_json's output; loops of unknown
 * names are skipped. 0 or -EINVAL (not a calibration) or -ENOMEM.
 */
int calib_from_json(struct json_object *root, struct calibration **out);

#endif
