/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* `scprof features`: the kernel facilities, as a table or JSON. */
#ifndef SCPROF_FACILITY_REPORT_H
#define SCPROF_FACILITY_REPORT_H

#include <stdio.h>

#include "model/facility.h"
#include "render/view.h"

/* 0 or -errno. */
int facility_report(FILE *f, const struct sc_facilities *fs,
		    enum report_format format);

#endif
