/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `scprof calibrate`, and the calibration run verdict shares with it. */
#ifndef SCPROF_CMD_CALIBRATE_H
#define SCPROF_CMD_CALIBRATE_H

#include "analyze/calibrate.h"

/*
 * Run a calibration with co (its progress fields are set here), showing
 * a progress line prefixed with prefix on a terminal unless verbosity is
 * below LOG_WARN. 0 or -errno, the reason reported.
 */
int cmd_calibrate_run(struct calibrate_opts *co, const char *prefix,
		      int verbosity, struct calibration **cal);

#endif
