// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Where the calls' time went, as the table shows it (why_table.h). */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "model/names.h"
#include "render/why_table.h"
#include "util/escape.h"

/* A row's time off a CPU (its calls that returned). */
static uint64_t off_cpu(const struct sc_row *r)
{
	return r->st.wait_ns + r->st.blocked_ns;
}

static int by_off_cpu(const void *a, const void *b)
{
	const struct sc_row *x = *(const struct sc_row *const *)a;
	const struct sc_row *y = *(const struct sc_row *const *)b;

	if (off_cpu(x) != off_cpu(y))
		return off_cpu(x) < off_cpu(y) ? 1 : -1;
	return x->nr < y->nr ? -1 : x->nr > y->nr;
}

static double pct(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0;
}

/* One estimate's name, escaped: a function, a task, an interrupt. */
static char *why_name(const struct sc_why *e)
{
	char *name = esc_text(e->name, esc_strnlen(e->name, SC_WHY_NAME_LEN)),
	     *out = NULL;
	int n = 0;

	if (!name)
		return NULL;
	if (e->kind == SC_WHY_WOKEN_BY && e->waker != SC_WAKER_TASK)
		n = asprintf(&out, "%s", why_waker_name(e->waker));
	else if (e->kind == SC_WHY_WOKEN_BY)
		n = asprintf(&out, "%s [%u/%u]", name, e->opid, e->otid);
	else if (e->kind == SC_WHY_RAN_INSTEAD && !e->opid && !*e->name)
		n = asprintf(&out, "(none: it waited after a wake-up)");
	else if (e->kind == SC_WHY_RAN_INSTEAD)
		n = asprintf(&out, "%s [%u]", name, e->opid);
	else
		n = asprintf(&out, "%s%s", name, e->lock ? " (a lock)" : "");
	free(name);
	return n < 0 ? NULL : out;
}

/* "      slept in: anon_pipe_read 97%, pipe_write 3%" */
static int entries_line(FILE *f, const struct sc_model *m,
			const struct sc_row *r, enum sc_why_kind kind,
			const char *what)
{
	uint64_t total = kind == SC_WHY_RAN_INSTEAD ? r->st.wait_ns :
						      r->st.blocked_ns;
	size_t n;
	struct sc_why *v = whys_of_row(&m->why, r->abi, r->nr, r->fd_type, kind,
				       total, &n);

	if (n == SIZE_MAX)
		return -ENOMEM;
	if (!n)
		return 0;
	fprintf(f, "      %s:", what);
	for (size_t i = 0; i < n && i < WHY_TABLE_ENTRIES; i++) {
		char *name = why_name(&v[i]);

		if (!name) {
			free(v);
			return -ENOMEM;
		}
		fprintf(f, "%s %s %.0f%%", i ? "," : "", name,
			pct(v[i].ns, total));
		free(name);
	}
	if (n > WHY_TABLE_ENTRIES)
		fprintf(f, ", %zu more", n - WHY_TABLE_ENTRIES);
	fputc('\n', f);
	free(v);
	return 0;
}

int why_table(FILE *f, const struct sc_model *m)
{
	const struct sc_row **rows;
	uint64_t all = 0;
	size_t n = 0;
	int err = 0;

	if (!m->meta.split || m->meta.count_only || !m->ntotal)
		return 0;
	rows = calloc(m->ntotal, sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	for (size_t i = 0; i < m->ntotal; i++) {
		all += m->total[i].st.total_ns;
		if (off_cpu(&m->total[i]))
			rows[n++] = &m->total[i];
	}
	qsort(rows, n, sizeof(*rows), by_off_cpu);
	/* rows whose time off a CPU is 1% of all the calls' time or more */
	while (n && pct(off_cpu(rows[n - 1]), all) < 1.0)
		n--;
	if (n)
		fputs("\nwhere the calls' time went (of each syscall's calls "
		      "that returned):\n",
		      f);
	for (size_t i = 0; i < n && i < WHY_TABLE_ROWS && !err; i++) {
		const struct sc_row *r = rows[i];
		uint64_t t = r->st.total_ns -
			     (uint64_t)(r->flight_ns > 0 ? r->flight_ns : 0);
		uint64_t on = t > off_cpu(r) ? t - off_cpu(r) : 0;
		char nbuf[SC_NAME_LEN], buf[SC_NAME_LEN + 16];
		const char *kind = names_fd_type(r->fd_type);
		const char *name =
			names_syscall_fmt(r->abi, r->nr, nbuf, sizeof(nbuf));

		snprintf(buf, sizeof(buf), kind ? "%s (%s)" : "%s", name, kind);
		fprintf(f,
			"  %-16s %10.6f s: %3.0f%% on a CPU, %3.0f%% waiting "
			"for a CPU, %3.0f%% blocked",
			buf, (double)t / 1e9, pct(on, t), pct(r->st.wait_ns, t),
			pct(r->st.blocked_ns, t));
		if (pct(r->st.iowait_ns, t) >= 0.5)
			fprintf(f, " (%.0f%% in I/O wait)",
				pct(r->st.iowait_ns, t));
		fputc('\n', f);
		err = entries_line(f, m, r, SC_WHY_SLEPT_IN, "slept in");
		err = err ?: entries_line(f, m, r, SC_WHY_WOKEN_BY, "woken by");
		err = err   ?:
			      entries_line(f, m, r, SC_WHY_RAN_INSTEAD,
					   "preempted by");
	}
	if (n && m->meta.split_lost)
		fprintf(f,
			"  (%" PRIu64 " samples of where and who were lost: "
			"the shares above may be off)\n",
			m->meta.split_lost);
	free(rows);
	return err;
}
