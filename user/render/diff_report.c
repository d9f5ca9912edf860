// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* scprof diff's table, JSON and two-count folded stacks. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "render/callsites.h"
#include "render/diff_report.h"
#include "render/jsonw.h"
#include "util/escape.h"

/* Names in the list of unchanged syscalls, then "and N more". */
#define UNCHANGED_NAMES 40
#define LINE_WIDTH 78

static char *esc(const char *s)
{
	return esc_text(s, strlen(s));
}

/* "read (socket) [32]", escaped: the syscall, its fd kind and a
 * non-native ABI. NULL on ENOMEM.
 */
static char *row_label(const struct diff_row *r)
{
	char *n = esc(r->syscall), *k = r->fd_type ? esc(r->fd_type) : NULL,
	     *a = esc(r->abi), *out = NULL;
	bool native = a && !strcmp(a, "64");

	if (n && a && (k || !r->fd_type) &&
	    asprintf(&out, "%s%s%s%s%s%s%s", n, k ? " (" : "", k ? k : "",
		     k ? ")" : "", native ? "" : " [", native ? "" : a,
		     native ? "" : "]") < 0)
		out = NULL;
	free(n);
	free(k);
	free(a);
	return out;
}

/* "comm=nginx,unit=x.service", escaped; "all" for the totals. */
static char *group_label(const struct diff_result *r, int group)
{
	const struct diff_group *g;
	size_t len = 1;
	char *out;

	if (group < 0 || (size_t)group >= r->ngroups)
		return strdup("all");
	g = &r->groups[group];
	for (size_t i = 0; i < g->n; i++)
		len += (strlen(g->keys[i]) + strlen(g->vals[i])) * 4 + 2;
	out = calloc(1, len);
	for (size_t i = 0; out && i < g->n; i++) {
		char *k = esc(g->keys[i]), *v = esc(g->vals[i]);

		if (k && v)
			sprintf(out + strlen(out), "%s%s=%s", i ? "," : "", k,
				v);
		free(k);
		free(v);
		if (!k || !v) {
			free(out);
			return NULL;
		}
	}
	return out;
}

/* A duration in ns as "363 ns", "12.3 us", "4.56 ms", "1.23 s". */
static void fmt_ns(char *buf, size_t len, double ns, const char *suffix)
{
	if (ns < 1e3)
		snprintf(buf, len, "%.0f ns%s", ns, suffix);
	else if (ns < 1e6)
		snprintf(buf, len, "%.1f us%s", ns / 1e3, suffix);
	else if (ns < 1e9)
		snprintf(buf, len, "%.1f ms%s", ns / 1e6, suffix);
	else
		snprintf(buf, len, "%.2f s%s", ns / 1e9, suffix);
}

static void fmt_value(char *buf, size_t len, enum diff_fig f, double v)
{
	if (isnan(v))
		snprintf(buf, len, "-");
	else if (diff_fig_is_latency(f))
		fmt_ns(buf, len, v, "");
	else if (f == DIFF_TIME)
		fmt_ns(buf, len, v, "/s");
	else if (v == 0 || v >= 100)
		snprintf(buf, len, "%.0f", v);
	else if (v >= 1)
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "%.3g", v);
}

/* Does the comparison count this row's change (judged, or no noise is
 * known at all)?
 */
static bool counts(const struct diff_result *r, const struct diff_row *row)
{
	return row->state != DIFF_SAME &&
	       (row->judged || r->noise == DIFF_NOISE_NONE);
}

static void fmt_change(char *buf, size_t len, const struct diff_result *r,
		       const struct diff_row *row)
{
	const char *mark = counts(r, row) || row->state == DIFF_SAME ? "" : "?";

	if (row->state == DIFF_SAME)
		snprintf(buf, len, "~");
	else if (row->state == DIFF_NEW)
		snprintf(buf, len, "new%s", mark);
	else if (row->state == DIFF_GONE)
		snprintf(buf, len, "gone%s", mark);
	else if (isnan(row->change_pct))
		snprintf(buf, len, "from 0%s", mark);
	else
		snprintf(buf, len, "%+.1f%%%s", row->change_pct, mark);
}

static void side_line(FILE *f, const char *which, const struct diff_side *s)
{
	char *p = esc(s->path);

	fprintf(f, "%s: %s: ", which, p ? p : "?");
	free(p);
	if (!s->intervals) {
		fprintf(f, "one report of %.2f s\n", s->seconds);
		return;
	}
	fprintf(f, "%zu interval%s of %.2f s (%.2f s)", s->nused,
		s->nused == 1 ? "" : "s", s->interval_s, s->seconds);
	if (s->nused < s->nintervals)
		fprintf(f, "; a last one of %.2f s left out", s->last_s);
	fputc('\n', f);
}

void diff_write_notes(FILE *f, const struct diff_result *r)
{
	static const char *const which[] = { "A", "B" };
	const struct diff_side *sides[] = { &r->a, &r->b };

	side_line(f, "A", &r->a);
	side_line(f, "B", &r->b);
	switch (r->noise) {
	case DIFF_NOISE_BOTH:
		fprintf(f,
			"Judged against the spread between intervals: a change "
			"counts beyond %.0f standard errors and %.0f%%.\n",
			DIFF_SIGMAS, r->min_change_pct);
		break;
	case DIFF_NOISE_A:
	case DIFF_NOISE_B:
		fprintf(f,
			"Only %s has intervals: %s's spread is taken from it, "
			"relative to each figure; a change counts beyond %.0f "
			"standard errors and %.0f%%.\n",
			r->noise == DIFF_NOISE_A ? "A" : "B",
			r->noise == DIFF_NOISE_A ? "B" : "A", DIFF_SIGMAS,
			r->min_change_pct);
		break;
	default:
		fprintf(f,
			"Noise unknown: neither run has intervals, so changes "
			"of %.0f%% or more are listed unjudged; record both "
			"runs with -i SECS --format json to judge them.\n",
			r->min_change_pct);
		break;
	}
	if (r->noise != DIFF_NOISE_NONE &&
	    !(r->a.count_only && r->b.count_only))
		fprintf(f,
			"A time figure (mean, p50, p99, time/s) differs "
			"between reruns of the same work\nbeyond what one "
			"run's intervals show: its standard error adds %.1f "
			"times\nthe spread of its intervals (a p99 with "
			"fewer than %.0f calls beyond it also\n%.1f%% of "
			"itself: half its histogram bucket).\n",
			DIFF_RUN_SPREAD, DIFF_TAIL_CALLS, 100 * DIFF_TAIL_RES);
	for (int i = 0; i < 2; i++) {
		if (sides[i]->count_only)
			fprintf(f,
				"%s was recorded with --count-only: no latency "
				"or time to compare.\n",
				which[i]);
		if (sides[i]->dropped)
			fprintf(f,
				"%s lost %" PRIu64
				" calls (its \"dropped\"): its figures are "
				"low.\n",
				which[i], sides[i]->dropped);
	}
	if (r->by_a && r->by_b) {
		char *a = esc(r->by_a), *b = esc(r->by_b);

		if (a && b && *a && *b)
			fprintf(f,
				"A's groups are by %s and B's by %s: comparing "
				"the totals only.\n",
				a, b);
		else if (a && b)
			fprintf(f,
				"%s was made with --by %s and %s without: "
				"comparing the totals only.\n",
				*a ? "A" : "B", *a ? a : b, *a ? "B" : "A");
		free(a);
		free(b);
	}
}

/* The cells of one shown row. */
struct cells {
	char *group, *label;
	char fig[16], a[32], b[32], change[32];
};

static bool shown(const struct diff_result *r, const struct diff_row *row,
		  const struct diff_report_opts *o)
{
	if (o->verbose)
		return true;
	/* a new or gone syscall: its calls say it */
	if ((row->state == DIFF_NEW || row->state == DIFF_GONE) &&
	    row->fig != DIFF_CALLS)
		return false;
	return counts(r, row);
}

static size_t max_z(size_t a, size_t b)
{
	return a > b ? a : b;
}

static void put_cols(FILE *f, const size_t *w, const char *const *v,
		     bool grouped)
{
	/* text left, numbers right, the change last and unpadded */
	if (grouped)
		fprintf(f, "%-*s ", (int)w[0], v[0]);
	fprintf(f, "%-*s %-*s %*s %*s %s\n", (int)w[1], v[1], (int)w[2], v[2],
		(int)w[3], v[3], (int)w[4], v[4], v[5]);
}

/* One section: the totals (group -1) or the groups' rows, [from, to). */
static int section(FILE *f, const struct diff_result *r, size_t from, size_t to,
		   bool grouped, const struct diff_report_opts *o)
{
	const char *head[] = {
		"group", "syscall", "figure", "A", "B", "change"
	};
	struct cells *c = calloc(to - from + 1, sizeof(*c));
	size_t w[6] = {}, n = 0;
	int err = c ? 0 : -ENOMEM;

	for (size_t i = 0; i < 6; i++)
		w[i] = strlen(head[i]);
	for (size_t i = from; !err && i < to; i++) {
		const struct diff_row *row = &r->rows[i];
		struct cells *x = &c[n];

		if (!shown(r, row, o))
			continue;
		n++;
		x->group = group_label(r, row->group);
		x->label = row_label(row);
		if (!x->group || !x->label) {
			err = -ENOMEM;
			break;
		}
		snprintf(x->fig, sizeof(x->fig), "%s", diff_fig_name(row->fig));
		fmt_value(x->a, sizeof(x->a), row->fig, row->a);
		fmt_value(x->b, sizeof(x->b), row->fig, row->b);
		fmt_change(x->change, sizeof(x->change), r, row);
		w[0] = max_z(w[0], strlen(x->group));
		w[1] = max_z(w[1], strlen(x->label));
		w[2] = max_z(w[2], strlen(x->fig));
		w[3] = max_z(w[3], strlen(x->a));
		w[4] = max_z(w[4], strlen(x->b));
	}
	if (!err && n) {
		put_cols(f, w, head, grouped);
		for (size_t i = 0; i < n; i++) {
			const char *v[] = {
				c[i].group, c[i].label, c[i].fig,
				c[i].a,	    c[i].b,	c[i].change
			};

			put_cols(f, w, v, grouped);
		}
	}
	for (size_t i = 0; c && i < n; i++) {
		free(c[i].group);
		free(c[i].label);
	}
	free(c);
	return err;
}

/* Do two rows belong to the same syscall (and group)? */
static bool same_series(const struct diff_row *a, const struct diff_row *b)
{
	return a->group == b->group && !strcmp(a->syscall, b->syscall) &&
	       !strcmp(a->abi, b->abi) &&
	       !strcmp(a->fd_type ? a->fd_type : "",
		       b->fd_type ? b->fd_type : "");
}

/* Is any row of row i's syscall shown? *first: is i its first row? */
static bool series_shown(const struct diff_result *r, size_t i, size_t to,
			 const struct diff_report_opts *o, bool *first)
{
	*first = true;
	for (size_t j = 0; j < to; j++) {
		if (!same_series(&r->rows[i], &r->rows[j]))
			continue;
		if (shown(r, &r->rows[j], o))
			return true;
		*first &= j >= i;
	}
	return false;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* "17 syscalls with no change beyond noise: access, brk, ...", the
 * totals' syscalls none of whose figures is listed, by name; and how
 * many differences were not judged.
 */
static int unchanged_line(FILE *f, const struct diff_result *r, size_t to,
			  const struct diff_report_opts *o)
{
	char **names = calloc(to + 1, sizeof(*names));
	size_t n = 0, col = 0, unjudged = 0;
	bool listed_any = false, first;
	int err = names ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < to; i++) {
		listed_any |= shown(r, &r->rows[i], o);
		if (r->rows[i].state != DIFF_SAME && !counts(r, &r->rows[i]))
			unjudged++;
		if (series_shown(r, i, to, o, &first) || !first)
			continue;
		names[n] = row_label(&r->rows[i]);
		if (!names[n++])
			err = -ENOMEM;
	}
	if (!err && n) {
		qsort(names, n, sizeof(*names), cmp_str);
		fprintf(f, "%s%zu syscall%s with no change%s:",
			listed_any ? "\n" : "", n, n == 1 ? "" : "s",
			r->noise == DIFF_NOISE_NONE ? "" : " beyond noise");
		col = 40;
	}
	for (size_t k = 0; !err && k < n; k++) {
		if (k == UNCHANGED_NAMES) {
			fprintf(f, " and %zu more", n - k);
			break;
		}
		if (col + strlen(names[k]) + 2 > LINE_WIDTH) {
			fputs(k ? ",\n  " : "\n  ", f);
			col = 2;
		} else {
			fputs(k ? ", " : " ", f);
			col += k ? 2 : 1;
		}
		fputs(names[k], f);
		col += strlen(names[k]);
	}
	if (!err && n)
		fputc('\n', f);
	if (!err && unjudged && !o->verbose)
		fprintf(f,
			"%zu difference%s not judged: their figures were "
			"seen in fewer than %d\nintervals in both runs (-v "
			"lists them, with ?).\n",
			unjudged, unjudged == 1 ? "" : "s", DIFF_MIN_INTERVALS);
	for (size_t k = 0; names && k < n; k++)
		free(names[k]);
	free(names);
	return err;
}

int diff_write_table(FILE *f, const struct diff_result *r,
		     const struct diff_report_opts *o)
{
	size_t totals = 0, changed = 0;
	int err;

	while (totals < r->nrows && r->rows[totals].group < 0)
		totals++;
	for (size_t i = 0; i < r->nrows; i++)
		changed += shown(r, &r->rows[i], o);
	diff_write_notes(f, r);
	fputc('\n', f);
	if (!changed && !o->verbose)
		fputs("No change.\n", f);
	err = section(f, r, 0, totals, false, o);
	err = err ?: unchanged_line(f, r, totals, o);
	if (!err && r->grouped && totals < r->nrows) {
		size_t shown_groups = 0;

		for (size_t i = totals; i < r->nrows; i++)
			shown_groups += shown(r, &r->rows[i], o);
		if (shown_groups) {
			fputs("\nBy group:\n", f);
			err = section(f, r, totals, r->nrows, true, o);
		} else {
			fputs("\nNo group changed.\n", f);
		}
	}
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}

static const char *state_name(enum diff_state s)
{
	switch (s) {
	case DIFF_CHANGED:
		return "changed";
	case DIFF_NEW:
		return "new";
	case DIFF_GONE:
		return "gone";
	default:
		return "same";
	}
}

static struct json_object *group_obj(const struct diff_group *g)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < g->n; i++)
		err = jw_add_str(o, g->keys[i], g->vals[i]);
	return jw_done(o, err);
}

static struct json_object *row_obj(const struct diff_result *r,
				   const struct diff_row *row)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err ?: jw_add_str(o, "syscall", row->syscall);
	if (row->fd_type)
		err = err ?: jw_add_str(o, "fd_type", row->fd_type);
	if (strcmp(row->abi, "64"))
		err = err ?: jw_add_str(o, "abi", row->abi);
	if (row->group >= 0 && (size_t)row->group < r->ngroups)
		err = err   ?:
			      jw_add(o, "group",
				     group_obj(&r->groups[row->group]));
	err = err ?: jw_add_str(o, "figure", diff_fig_key(row->fig));
	err = err ?: jw_add_num(o, "a", row->a, -7);
	err = err ?: jw_add_num(o, "b", row->b, -7);
	err = err ?: jw_add_num(o, "change_pct", row->change_pct, 2);
	err = err ?: jw_add_num(o, "threshold_pct", row->threshold_pct, 2);
	if (row->judged)
		err = err   ?:
			      jw_add_bool(o, "significant",
					  row->state != DIFF_SAME);
	else
		err = err ?: jw_add_null(o, "significant");
	err = err ?: jw_add_str(o, "state", state_name(row->state));
	return jw_done(o, err);
}

int diff_write_json(FILE *f, const struct diff_result *r)
{
	struct json_object *arr = json_object_new_array();
	int err = arr ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < r->nrows; i++)
		err = jw_push(arr, row_obj(r, &r->rows[i]));
	return jw_write(f, arr, err);
}

int diff_write_folded(FILE *f, const struct stack_diff *d)
{
	int err = 0;

	for (size_t i = 0; !err && i < d->n; i++) {
		const struct stack_diff_line *l = &d->v[i];

		for (size_t k = 0; !err && k < l->nframes; k++) {
			char *e = callsites_esc_folded(l->frames[k]);

			if (!e) {
				err = -ENOMEM;
				break;
			}
			fprintf(f, "%s%s", k ? ";" : "", e);
			free(e);
		}
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", l->a, l->b);
	}
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}
