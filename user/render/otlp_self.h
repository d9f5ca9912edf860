/* SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause */
/* scprof's own figures in the OTLP payload, for render/otlp.c. */
#ifndef SCPROF_OTLP_SELF_H
#define SCPROF_OTLP_SELF_H

#include <stdbool.h>

#include "model/model.h"
#include "render/otlp_msg.h"
#include "render/report_prom.h"

/* The families of s (with_comms: the per-group series' too), and m's
 * drops and failed map updates, into b.
 */
void otlp_self_metrics(struct otlp_msg *b, const struct prom_self *s,
		       const struct sc_model *m, bool with_comms);

#endif
