// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff: two runs compared, each change judged against noise. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"

/* The standard error of b.v - a.v: both runs' spreads and what reruns
 * add.
 */
static double noise(struct diff_est a, struct diff_est b)
{
	return sqrt(a.se * a.se + a.rerun * a.rerun + b.se * b.se +
		    b.rerun * b.rerun);
}

enum diff_state diff_judge(struct diff_est a, struct diff_est b,
			   double min_change_pct, bool *judged, double *pct)
{
	double d = b.v - a.v;
	bool big;

	*pct = a.v != 0 ? d / fabs(a.v) * 100.0 : NAN;
	*judged = !isnan(a.se) && !isnan(b.se);
	if (d == 0)
		return DIFF_SAME;
	/* from 0: any change is big enough */
	big = isnan(*pct) || fabs(*pct) >= min_change_pct;
	if (!*judged)
		return big ? DIFF_CHANGED : DIFF_SAME;
	return big && fabs(d) > DIFF_SIGMAS * noise(a, b) ? DIFF_CHANGED :
							    DIFF_SAME;
}

double diff_threshold_pct(struct diff_est a, struct diff_est b,
			  double min_change_pct)
{
	double t;

	if (isnan(a.se) || isnan(b.se) || a.v == 0 || isnan(a.v))
		return NAN;
	t = DIFF_SIGMAS * noise(a, b) / fabs(a.v) * 100.0;
	return t > min_change_pct ? t : min_change_pct;
}

/* ---- one side --------------------------------------------------------- */

static int cmp_double(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a < b ? -1 : a > b;
}

/* How much of a run is judged, and over how long. 0 or -ENOMEM. */
static int side_prep(const struct diff_run *r, struct diff_side *sd)
{
	double *d = malloc(r->nint * sizeof(*d)), med;

	if (!d)
		return -ENOMEM;
	memcpy(d, r->dur_s, r->nint * sizeof(*d));
	qsort(d, r->nint, sizeof(*d), cmp_double);
	med = r->nint % 2 ? d[r->nint / 2] :
			    (d[r->nint / 2 - 1] + d[r->nint / 2]) / 2;
	free(d);
	sd->path = strdup(r->path);
	if (!sd->path)
		return -ENOMEM;
	sd->intervals = r->intervals;
	sd->nintervals = r->nint;
	sd->nused = r->nint;
	sd->interval_s = med;
	sd->count_only = r->count_only;
	sd->dropped = r->dropped;
	/* a short last interval (the run ended in it) is noise */
	if (r->intervals && r->nint >= 2 &&
	    r->dur_s[r->nint - 1] < DIFF_SHORT_LAST * med) {
		sd->nused--;
		sd->last_s = r->dur_s[r->nint - 1];
	}
	for (size_t i = 0; i < sd->nused; i++)
		sd->seconds += r->dur_s[i];
	return 0;
}

static bool has_spread(const struct diff_side *sd)
{
	return sd->intervals && sd->nused >= DIFF_MIN_INTERVALS;
}

static double cell_value(const struct diff_cell *c, enum diff_fig f)
{
	switch (f) {
	case DIFF_CALLS:
		return c->calls;
	case DIFF_ERRORS:
		return c->errors;
	case DIFF_MEAN:
		return c->avg_ns;
	case DIFF_P50:
		return c->p50_ns;
	case DIFF_P99:
		return c->p99_ns;
	case DIFF_TIME:
		return c->total_ns;
	default:
		return 0;
	}
}

/* The spread (sample standard deviation) of n values (n >= 2). */
static double spread(const double *x, size_t n)
{
	double mean = 0, ss = 0;

	for (size_t i = 0; i < n; i++)
		mean += x[i];
	mean /= (double)n;
	for (size_t i = 0; i < n; i++)
		ss += (x[i] - mean) * (x[i] - mean);
	return sqrt(ss / (double)(n - 1));
}

/* A figure's noise from the spread of its n interval values: the
 * standard error of their mean, and for a time figure what a rerun adds.
 */
static void set_noise(struct diff_est *e, enum diff_fig f, const double *x,
		      size_t n)
{
	double sd = spread(x, n);

	e->se = sd / sqrt((double)n);
	e->rerun = diff_fig_is_time(f) ? DIFF_RUN_SPREAD * sd : 0;
}

/* Did the syscall make calls in the intervals judged? */
static bool present(const struct diff_side *sd, const struct diff_series *s)
{
	/* (a call in flight has time but is no call yet) */
	for (size_t i = 0; s && i < s->n && s->cells[i].iv < sd->nused; i++)
		if (s->cells[i].calls > 0 || s->cells[i].total_ns > 0)
			return true;
	return false;
}

/* A side's figure f of series s (NULL: the syscall made no call). x is
 * scratch room for sd->nused values.
 */
static struct diff_est estimate(const struct diff_run *r,
				const struct diff_side *sd,
				const struct diff_series *s, enum diff_fig f,
				double *x)
{
	struct diff_est e = { NAN, NAN, 0 };
	double sum = 0, weight = 0;
	size_t n = 0;

	if (sd->count_only && diff_fig_is_time(f))
		return e;
	if (!diff_fig_is_latency(f)) {
		memset(x, 0, sd->nused * sizeof(*x));
		for (size_t i = 0; s && i < s->n; i++) {
			const struct diff_cell *c = &s->cells[i];

			if (c->iv >= sd->nused)
				break;
			x[c->iv] = cell_value(c, f) / r->dur_s[c->iv];
			sum += cell_value(c, f);
		}
		e.v = sum / sd->seconds;
		if (has_spread(sd))
			set_noise(&e, f, x, sd->nused);
		return e;
	}
	/* latencies: the intervals with timed calls, weighted by calls */
	for (size_t i = 0; s && i < s->n; i++) {
		const struct diff_cell *c = &s->cells[i];
		double v = cell_value(c, f);

		if (c->iv >= sd->nused)
			break;
		if (c->calls <= 0 || v <= 0)
			continue;
		x[n++] = v;
		sum += v * c->calls;
		weight += c->calls;
	}
	if (!n)
		return e;
	e.v = sum / weight;
	if (sd->intervals && n >= DIFF_MIN_INTERVALS)
		set_noise(&e, f, x, n);
	if (f == DIFF_P99 && weight * 0.01 < DIFF_TAIL_CALLS)
		e.rerun = hypot(e.rerun, DIFF_TAIL_RES * e.v);
	return e;
}

/* A side without a spread for a figure borrows the other's, relative to
 * the value; the within-run part scaled by the square root of the runs'
 * lengths (the standard error of a mean over time T goes as 1/sqrt(T)),
 * the rerun part as it is (a longer run does not make it smaller).
 */
static void borrow_noise(struct diff_est *x, double tx,
			 const struct diff_est *k, double tk)
{
	if (!isnan(x->se) || isnan(k->se) || isnan(x->v) || isnan(k->v) ||
	    k->v == 0 || tx <= 0)
		return;
	x->se = fabs(x->v) * k->se / fabs(k->v) * sqrt(tk / tx);
	x->rerun = fabs(x->v) * k->rerun / fabs(k->v);
}

/* ---- rows --------------------------------------------------------------- */

/* A run's series by group: those of group g (-1: the totals) are
 * idx[start[g + 1] .. start[g + 2]).
 */
struct by_group {
	size_t *idx, *start;
};

struct builder {
	struct diff_result *res;
	const struct diff_run *ra, *rb;
	struct by_group ga, gb;
	double *xa, *xb; /* scratch */
	size_t cap;
};

/* A counting sort of r's series by group. 0 or -ENOMEM. */
static int group_series(const struct diff_run *r, struct by_group *bg)
{
	size_t *fill;

	bg->idx = calloc(r->ns + 1, sizeof(*bg->idx));
	bg->start = calloc(r->ngroups + 3, sizeof(*bg->start));
	fill = calloc(r->ngroups + 2, sizeof(*fill));
	if (!bg->idx || !bg->start || !fill) {
		free(fill);
		return -ENOMEM;
	}
	for (size_t i = 0; i < r->ns; i++)
		bg->start[r->s[i].group + 2]++;
	for (size_t g = 1; g < r->ngroups + 3; g++)
		bg->start[g] += bg->start[g - 1];
	for (size_t i = 0; i < r->ns; i++) {
		size_t g = (size_t)(r->s[i].group + 1);

		bg->idx[bg->start[g] + fill[g]++] = i;
	}
	free(fill);
	return 0;
}

/* A row's figures on both sides and how they were judged. */
struct judged_fig {
	enum diff_fig f;
	double a, b, pct, threshold_pct;
	enum diff_state st;
	bool judged;
};

static int push_row(struct builder *bd, const struct diff_series *s, int group,
		    const struct judged_fig *j)
{
	struct diff_result *res = bd->res;
	struct diff_row *row;

	if (res->nrows == bd->cap) {
		size_t cap = bd->cap ? bd->cap * 2 : 64;

		row = realloc(res->rows, cap * sizeof(*row));
		if (!row)
			return -ENOMEM;
		res->rows = row;
		bd->cap = cap;
	}
	row = &res->rows[res->nrows++];
	memset(row, 0, sizeof(*row));
	row->group = group;
	row->fig = j->f;
	row->a = j->a;
	row->b = j->b;
	row->change_pct = j->pct;
	row->threshold_pct = j->threshold_pct;
	row->state = j->st;
	row->judged = j->judged;
	row->syscall = strdup(s->name);
	row->abi = strdup(s->abi);
	row->fd_type = s->fd_type ? strdup(s->fd_type) : NULL;
	if (!row->syscall || !row->abi || (s->fd_type && !row->fd_type))
		return -ENOMEM;
	if (j->st != DIFF_SAME &&
	    (j->judged || res->noise == DIFF_NOISE_NONE) &&
	    (j->f == DIFF_CALLS || (j->st != DIFF_NEW && j->st != DIFF_GONE)))
		res->changed++;
	return 0;
}

/* The rows of one syscall: sa in A and sb in B (either may be NULL). */
static int series_rows(struct builder *bd, const struct diff_series *sa,
		       const struct diff_series *sb, int group, double min_pct)
{
	const struct diff_side *da = &bd->res->a, *db = &bd->res->b;
	bool in_a = present(da, sa), in_b = present(db, sb);
	const struct diff_series *s = sa ? sa : sb;
	enum diff_state whole = DIFF_SAME;
	bool whole_judged = false;
	int err = 0;

	if (!in_a && !in_b)
		return 0;
	for (int f = 0; !err && f < DIFF_FIGS; f++) {
		struct diff_est a = estimate(bd->ra, da, in_a ? sa : NULL, f,
					     bd->xa),
				b = estimate(bd->rb, db, in_b ? sb : NULL, f,
					     bd->xb);
		struct judged_fig j = { .f = f, .a = a.v, .b = b.v };
		enum diff_state st;
		double pct;

		borrow_noise(&a, da->seconds, &b, db->seconds);
		borrow_noise(&b, db->seconds, &a, da->seconds);
		if (in_a && in_b) {
			/* a figure one side lacks (untimed, --count-only)
			 * or that is 0 on both is not compared
			 */
			if (isnan(a.v) || isnan(b.v) || (!a.v && !b.v))
				continue;
			j.st = diff_judge(a, b, min_pct, &j.judged, &j.pct);
			j.threshold_pct = diff_threshold_pct(a, b, min_pct);
			err = push_row(bd, s, group, &j);
			continue;
		}
		/* new or gone: judged by its calls, the figure listed first */
		if (f == DIFF_CALLS) {
			st = diff_judge(a, b, min_pct, &whole_judged, &pct);
			whole = st == DIFF_SAME ? DIFF_SAME :
				in_b		? DIFF_NEW :
						  DIFF_GONE;
		}
		if (isnan(in_a ? a.v : b.v) || !(in_a ? a.v : b.v))
			continue;
		j.pct = in_a && !isnan(b.v) ? -100.0 : NAN;
		j.threshold_pct = NAN;
		j.st = whole;
		j.judged = whole_judged;
		err = push_row(bd, s, group, &j);
	}
	return err;
}

/* The groups of both runs: A's, then B's that A does not have. */
static int union_groups(struct builder *bd, int **b_to_union)
{
	const struct diff_run *ra = bd->ra, *rb = bd->rb;
	struct diff_result *res = bd->res;
	size_t n = ra->ngroups;
	int *map = calloc(rb->ngroups + 1, sizeof(*map));

	res->groups =
		calloc(ra->ngroups + rb->ngroups + 1, sizeof(*res->groups));
	if (!map || !res->groups) {
		free(map);
		return -ENOMEM;
	}
	*b_to_union = map;
	for (size_t i = 0; i < rb->ngroups; i++) {
		int k = diff_run_find_group(ra, &rb->groups[i]);

		map[i] = k >= 0 ? k : (int)n++;
	}
	for (size_t i = 0; i < n; i++) {
		const struct diff_group *from = NULL;
		struct diff_group *g = &res->groups[i];

		if (i < ra->ngroups)
			from = &ra->groups[i];
		for (size_t j = 0; !from && j < rb->ngroups; j++)
			if (map[j] == (int)i)
				from = &rb->groups[j];
		g->keys = calloc(from->n + 1, sizeof(*g->keys));
		g->vals = calloc(from->n + 1, sizeof(*g->vals));
		res->ngroups++;
		if (!g->keys || !g->vals)
			return -ENOMEM;
		for (size_t k = 0; k < from->n; k++, g->n++) {
			g->keys[k] = strdup(from->keys[k]);
			g->vals[k] = strdup(from->vals[k]);
			if (!g->keys[k] || !g->vals[k]) {
				g->n++;
				return -ENOMEM;
			}
		}
	}
	return 0;
}

/* The rows of one section (group, or -1 for the totals): A's syscalls,
 * then those only B has.
 */
static int section_rows(struct builder *bd, int group, int group_a, int group_b,
			double min_pct)
{
	const struct diff_run *ra = bd->ra, *rb = bd->rb;
	int err = 0;

	/* group -2: none in that run */
	for (size_t k = group_a >= -1 ? bd->ga.start[group_a + 1] : 0;
	     !err && group_a >= -1 && k < bd->ga.start[group_a + 2]; k++) {
		const struct diff_series *sa = &ra->s[bd->ga.idx[k]];
		long j = group_b >= -1 ? diff_run_find(rb, group_b, sa->name,
						       sa->fd_type, sa->abi) :
					 -1;

		err = series_rows(bd, sa, j >= 0 ? &rb->s[j] : NULL, group,
				  min_pct);
	}
	for (size_t k = group_b >= -1 ? bd->gb.start[group_b + 1] : 0;
	     !err && group_b >= -1 && k < bd->gb.start[group_b + 2]; k++) {
		const struct diff_series *sb = &rb->s[bd->gb.idx[k]];

		if (group_a >= -1 && diff_run_find(ra, group_a, sb->name,
						   sb->fd_type, sb->abi) >= 0)
			continue;
		err = series_rows(bd, NULL, sb, group, min_pct);
	}
	return err;
}

/* Changes first (judged, then not judged), the biggest first. */
static int row_rank(const struct diff_row *r)
{
	if (r->state == DIFF_SAME)
		return 2;
	return r->judged ? 0 : 1;
}

static double row_size(const struct diff_row *r)
{
	if (r->state == DIFF_SAME)
		return 0; /* in the order of names */
	if (r->state == DIFF_NEW || r->state == DIFF_GONE ||
	    isnan(r->change_pct))
		return INFINITY;
	return fabs(r->change_pct);
}

static int row_cmp(const void *pa, const void *pb)
{
	const struct diff_row *a = pa, *b = pb;
	double sa = row_size(a), sb = row_size(b);
	int c;

	if (a->group != b->group)
		return a->group < b->group ? -1 : 1;
	if (row_rank(a) != row_rank(b))
		return row_rank(a) - row_rank(b);
	if (sa != sb)
		return sa > sb ? -1 : 1;
	c = strcmp(a->syscall, b->syscall);
	if (c)
		return c;
	c = strcmp(a->fd_type ? a->fd_type : "", b->fd_type ? b->fd_type : "");
	if (c)
		return c;
	c = strcmp(a->abi, b->abi);
	return c ? c : (int)a->fig - (int)b->fig;
}

static int by_of(const struct diff_run *r, char **out)
{
	*out = strdup(!r->by ? "" : r->by_keys ? r->by_keys : "?");
	return *out ? 0 : -ENOMEM;
}

int diff_compare(const struct diff_run *a, const struct diff_run *b,
		 const struct diff_opts *o, struct diff_result **out)
{
	struct diff_result *res = calloc(1, sizeof(*res));
	struct builder bd = { .res = res, .ra = a, .rb = b };
	int *b_to_union = NULL, *union_to_b = NULL, err;

	*out = NULL;
	if (!res)
		return -ENOMEM;
	res->min_change_pct = o->min_change_pct;
	err = side_prep(a, &res->a) ?: side_prep(b, &res->b);
	if (err)
		goto out;
	res->noise =
		has_spread(&res->a) ?
			(has_spread(&res->b) ? DIFF_NOISE_BOTH : DIFF_NOISE_A) :
		has_spread(&res->b) ? DIFF_NOISE_B :
				      DIFF_NOISE_NONE;
	bd.xa = calloc(res->a.nused + 1, sizeof(*bd.xa));
	bd.xb = calloc(res->b.nused + 1, sizeof(*bd.xb));
	err = bd.xa && bd.xb ? 0 : -ENOMEM;
	err = err ?: group_series(a, &bd.ga) ?: group_series(b, &bd.gb);
	if (err)
		goto out;
	/* Groups compare when both runs have the same keys (a run whose
	 * groups are all empty has none to disagree with).
	 */
	res->grouped =
		a->by && b->by &&
		(!a->by_keys || !b->by_keys || !strcmp(a->by_keys, b->by_keys));
	if (!res->grouped && (a->by || b->by))
		err = by_of(a, &res->by_a) ?: by_of(b, &res->by_b);
	err = err ?: section_rows(&bd, -1, -1, -1, o->min_change_pct);
	if (!err && res->grouped)
		err = union_groups(&bd, &b_to_union);
	if (!err && res->grouped) {
		union_to_b = malloc((res->ngroups + 1) * sizeof(*union_to_b));
		if (!union_to_b)
			err = -ENOMEM;
		for (size_t g = 0; !err && g < res->ngroups; g++)
			union_to_b[g] = -2; /* none in B */
		for (size_t j = 0; !err && j < b->ngroups; j++)
			union_to_b[b_to_union[j]] = (int)j;
	}
	for (size_t g = 0; !err && res->grouped && g < res->ngroups; g++)
		err = section_rows(&bd, (int)g, g < a->ngroups ? (int)g : -2,
				   union_to_b[g], o->min_change_pct);
	if (!err && res->nrows)
		qsort(res->rows, res->nrows, sizeof(*res->rows), row_cmp);
out:
	free(b_to_union);
	free(union_to_b);
	free(bd.ga.idx);
	free(bd.ga.start);
	free(bd.gb.idx);
	free(bd.gb.start);
	free(bd.xa);
	free(bd.xb);
	if (err)
		diff_result_free(res);
	else
		*out = res;
	return err;
}
