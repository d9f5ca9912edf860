// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* A machine's description: built by collect/sysinfo, or from JSON. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "model/machine.h"

int machine_add_mitigation(struct machine_info *m, const char *name,
			   const char *state)
{
	char *n = strdup(name), *st = strdup(state);
	struct mitigation *tmp = NULL;
	size_t i;

	if (n && st)
		tmp = realloc(m->mitigations,
			      (m->nmitigations + 1) * sizeof(*tmp));
	if (!tmp) {
		free(n);
		free(st);
		return -ENOMEM;
	}
	m->mitigations = tmp;
	/* Keep them sorted: a stable order for tables and JSON. */
	for (i = m->nmitigations; i > 0; i--) {
		if (strcmp(tmp[i - 1].name, n) <= 0)
			break;
		tmp[i] = tmp[i - 1];
	}
	tmp[i].name = n;
	tmp[i].state = st;
	m->nmitigations++;
	return 0;
}

void machine_free(struct machine_info *m)
{
	for (size_t i = 0; i < m->nmitigations; i++) {
		free(m->mitigations[i].name);
		free(m->mitigations[i].state);
	}
	free(m->mitigations);
	free(m->cpu_model);
	free(m->kernel);
	free(m->arch);
	free(m->clocksource);
	memset(m, 0, sizeof(*m));
}

int machine_mitigation_inactive(const char *state)
{
	return !strcmp(state, "Not affected");
}
