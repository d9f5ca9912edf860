// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <stdlib.h>

#include "model/diff.h"

static const struct {
	const char *name, *key;
	bool latency;
} figs[DIFF_FIGS] = {
	[DIFF_CALLS] = { "calls/s", "calls_per_s", false },
	[DIFF_ERRORS] = { "errors/s", "errors_per_s", false },
	[DIFF_MEAN] = { "mean", "mean_ns", true },
	[DIFF_P50] = { "p50", "p50_ns", true },
	[DIFF_P99] = { "p99", "p99_ns", true },
	[DIFF_TIME] = { "time/s", "time_ns_per_s", false },
};

const char *diff_fig_name(enum diff_fig f)
{
	return f < DIFF_FIGS ? figs[f].name : "?";
}

const char *diff_fig_key(enum diff_fig f)
{
	return f < DIFF_FIGS ? figs[f].key : "?";
}

bool diff_fig_is_latency(enum diff_fig f)
{
	return f < DIFF_FIGS && figs[f].latency;
}

bool diff_fig_is_time(enum diff_fig f)
{
	return diff_fig_is_latency(f) || f == DIFF_TIME;
}

static void side_free(struct diff_side *s)
{
	free(s->path);
}

void diff_groups_free(struct diff_group *g, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		for (size_t k = 0; k < g[i].n; k++) {
			free(g[i].keys[k]);
			free(g[i].vals[k]);
		}
		free(g[i].keys);
		free(g[i].vals);
	}
	free(g);
}

void diff_result_free(struct diff_result *r)
{
	if (!r)
		return;
	side_free(&r->a);
	side_free(&r->b);
	free(r->by_a);
	free(r->by_b);
	diff_groups_free(r->groups, r->ngroups);
	for (size_t i = 0; i < r->nrows; i++) {
		free(r->rows[i].syscall);
		free(r->rows[i].fd_type);
		free(r->rows[i].abi);
	}
	free(r->rows);
	free(r);
}

void stack_diff_free(struct stack_diff *d)
{
	if (!d)
		return;
	for (size_t i = 0; i < d->n; i++) {
		for (size_t k = 0; k < d->v[i].nframes; k++)
			free(d->v[i].frames[k]);
		free(d->v[i].frames);
	}
	free(d->v);
	free(d);
}
