// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The JSON report: one object, built with json-c. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <json-c/json.h>

#include "render/callsites.h"
#include "render/columns.h"
#include "render/drops.h"
#include "render/report_json.h"
#include "render/jsonw.h"
#include "util/escape.h"

static struct json_object *errnos_of(const struct sc_model *m,
				     const struct sc_row *r)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;
	char buf[32];

	for (size_t i = 0; !err && m && i < m->nerrnos; i++) {
		const struct sc_errno_row *e = &m->errnos[i];
		const char *name = names_errno((int)e->err);

		if (e->abi != r->abi || e->nr != r->nr ||
		    e->fd_type != r->fd_type)
			continue;
		if (!name) {
			snprintf(buf, sizeof(buf), "%u", e->err);
			name = buf;
		}
		err = jw_add_u64(o, name, e->count);
	}
	return jw_done(o, err);
}

/* Most of a row's estimates of one kind that a list names. */
#define WHY_LIST_MAX 8

/* One estimate: {function, lock} where it slept (lock: waiting for one); {kind[, comm, pid, tid]} who
 * woke it; {comm, pid} what ran instead; then its ns and share (rounded
 * down: a list's shares add up to 1 at most).
 */
static struct json_object *why_obj(const struct sc_why *e, uint64_t part)
{
	struct json_object *o = json_object_new_object();
	char name[SC_WHY_NAME_LEN + 1] = "";
	int err = o ? 0 : -ENOMEM;

	memcpy(name, e->name, esc_strnlen(e->name, SC_WHY_NAME_LEN));
	switch (e->kind) {
	case SC_WHY_SLEPT_IN:
		err = err ?: jw_add_str(o, "function", name);
		err = err ?: jw_add_bool(o, "lock", e->lock);
		break;
	case SC_WHY_WOKEN_BY:
		err = err ?: jw_add_str(o, "kind", why_waker_name(e->waker));
		if (e->waker != SC_WAKER_TASK)
			break;
		err = err ?: jw_add_str(o, "comm", name);
		err = err ?: jw_add_u64(o, "pid", e->opid);
		err = err ?: jw_add_u64(o, "tid", e->otid);
		break;
	default:
		err = err ?: jw_add_str(o, "comm", name);
		err = err ?: jw_add_u64(o, "pid", e->opid);
		break;
	}
	err = err ?: jw_add_u64(o, "ns", e->ns);
	err = err   ?:
		      jw_add_num(
			      o, "share",
			      part ? floor((double)e->ns / (double)part * 1e4) /
					      1e4 :
				     0,
			      4);
	return jw_done(o, err);
}

/* A row's estimates of one kind, largest first. */
static struct json_object *why_list(const struct sc_whys *why,
				    const struct sc_row *r,
				    enum sc_why_kind kind)
{
	struct json_object *arr = json_object_new_array();
	uint64_t part = kind == SC_WHY_RAN_INSTEAD ? r->st.wait_ns :
						     r->st.blocked_ns;
	size_t n;
	struct sc_why *v =
		whys_of_row(why, r->abi, r->nr, r->fd_type, kind, part, &n);
	int err = arr && n != SIZE_MAX ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n && i < WHY_LIST_MAX; i++)
		err = jw_push(arr, why_obj(&v[i], part));
	free(v);
	return jw_done(arr, err);
}

/* One syscall object; errno detail only for the aggregate (m != NULL);
 * fd_type (null for calls on no fd) with --fd-types; why (the split
 * measured): where its calls slept, who woke them, what ran instead.
 */
static struct json_object *syscall_obj(const struct row_view *v,
				       const struct sc_model *m, bool fd_types,
				       const struct sc_whys *why)
{
	const char *kind = names_fd_type(v->row->fd_type);
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;
	char buf[SC_NAME_LEN];

	err = err   ?:
		      jw_add_str(o, "name",
				 names_syscall_fmt(v->row->abi, v->row->nr, buf,
						   sizeof(buf)));
	if (fd_types && kind)
		err = err ?: jw_add_str(o, "fd_type", kind);
	else if (fd_types)
		err = err ?: jw_add_null(o, "fd_type");
	err = err ?: jw_add_u64(o, "nr", v->row->nr);
	err = err ?: jw_add_str(o, "abi", names_abi(v->row->abi));
	for (const enum report_col *c = column_figures; *c; c++) {
		const struct column *col = column_of(*c);

		/* bytes: null where a return value is not a byte count */
		if (column_present(*c, v))
			err = err ?: jw_add_u64(o, col->key, col->value(v));
		else
			err = err ?: jw_add_null(o, col->key);
	}
	if (m)
		err = err ?: jw_add(o, "errnos", errnos_of(m, v->row));
	if (why) {
		err = err   ?:
			      jw_add(o, "blocked_in",
				     why_list(why, v->row, SC_WHY_SLEPT_IN));
		err = err   ?:
			      jw_add(o, "woken_by",
				     why_list(why, v->row, SC_WHY_WOKEN_BY));
		err = err   ?:
			      jw_add(o, "ran_instead",
				     why_list(why, v->row, SC_WHY_RAN_INSTEAD));
	}
	return jw_done(o, err);
}

static struct json_object *syscall_list(const struct sc_row *rows, size_t n,
					const struct report_opts *o,
					const struct sc_model *m,
					const struct sc_whys *why)
{
	struct json_object *arr = json_object_new_array();
	struct row_view *v = view_rows(rows, n, o->sort);
	int err = arr && (!n || v) ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++)
		err = jw_push(arr, syscall_obj(&v[i], m, o->fd_types, why));
	free(v);
	return jw_done(arr, err);
}

static struct json_object *process_obj(const struct sc_model *m,
				       const struct sc_proc *p,
				       const struct report_opts *o)
{
	struct json_object *obj = json_object_new_object();
	char comm[SC_COMM_LEN + 1] = "";
	struct sc_whys why = { 0 };
	int err = obj ? 0 : -ENOMEM;

	if (m->meta.split && !err)
		err = whys_add_process(&why, &m->why, p->pid, p->start_ns,
				       p->cgtag);

	memcpy(comm, p->comm, esc_strnlen(p->comm, SC_COMM_LEN));
	err = err ?: jw_add_u64(obj, "pid", p->pid);
	err = err ?: jw_add_u64(obj, "ppid", p->ppid);
	err = err ?: jw_add_str(obj, "comm", comm);
	err = err ?: jw_add_bool(obj, "exited", p->exited);
	/* pid 0: the exited processes beyond --max-exited, merged */
	if (!p->pid)
		err = err ?: jw_add_u64(obj, "merged_processes", p->merged);
	err = err   ?:
		      jw_add(obj, "syscalls",
			     syscall_list(p->rows, p->nrows, o, NULL,
					  m->meta.split ? &why : NULL));
	whys_free(&why);
	return jw_done(obj, err);
}

/* --by: {by: {KEY: value...}, pid?, tid?, comm?, syscalls} */
static struct json_object *group_obj(const struct sc_model *m,
				     const struct sc_group *g,
				     const struct report_opts *o)
{
	struct json_object *obj = json_object_new_object(), *by = NULL;
	char comm[SC_COMM_LEN + 1] = "";
	int err = obj ? 0 : -ENOMEM;

	if (!err) {
		by = json_object_new_object();
		err = jw_add(obj, "by", by);
	}
	for (size_t i = 0; !err && i < o->by.n; i++)
		err = jw_add_str(by, group_key_name(o->by.keys[i]),
				 g->val[o->by.keys[i]]);
	if (g->has_ids) {
		memcpy(comm, g->comm, esc_strnlen(g->comm, SC_COMM_LEN));
		err = err ?: jw_add_u64(obj, "pid", g->pid);
		if (g->tid)
			err = err ?: jw_add_u64(obj, "tid", g->tid);
		err = err ?: jw_add_str(obj, "comm", comm);
	}
	err = err ?: jw_add_u64(obj, "members", g->members);
	err = err   ?:
		      jw_add(obj, "syscalls",
			     syscall_list(g->sum.rows, g->sum.nrows, o, NULL,
					  m->meta.split ? &g->why : NULL));
	return jw_done(obj, err);
}

static int add_groups(struct json_object *root, int err,
		      const struct sc_model *m, const struct report_opts *o)
{
	struct json_object *arr = NULL;
	struct sc_group *g = NULL;
	size_t n = 0;

	err = err ?: group_model(m, &o->by, o->by_threads, &g, &n);
	err = err ?: jw_add_array(root, "groups", &arr);
	for (size_t i = 0; !err && i < n; i++)
		err = jw_push(arr, group_obj(m, &g[i], o));
	group_free(g, n);
	return err;
}

struct json_object *report_json_throttle(const struct sc_throttle *t)
{
	struct json_object *o;
	char *path;
	int err;

	if (!t->known)
		return NULL;
	o = json_object_new_object();
	path = strndup(t->cgroup, esc_strnlen(t->cgroup, sizeof(t->cgroup)));
	err = o && path ? 0 : -ENOMEM;
	err = err ?: jw_add_str(o, "cgroup", path);
	err = err ?: jw_add_u64(o, "throttled_ns", t->throttled_ns);
	err = err ?: jw_add_u64(o, "nr_throttled", t->nr_throttled);
	err = err ?: jw_add_u64(o, "nr_periods", t->nr_periods);
	if (t->quota_us >= 0)
		err = err ?: jw_add_int(o, "quota_us", t->quota_us);
	else
		err = err ?: jw_add_null(o, "quota_us");
	err = err ?: jw_add_u64(o, "period_us", t->period_us);
	free(path);
	return jw_done(o, err);
}

/* {calls, untimed_calls, process_info, errno_detail, cgroup_moves,
 * unattributed_calls, cgroup_names, map_failures: [{map, errno, count}]}:
 * unattributed calls are counted, in pid 0, but not in their own process;
 * a failure's errno "E2BIG" is a map that was full.
 */
static struct json_object *dropped_obj(const struct sc_model *m)
{
	struct json_object *o = json_object_new_object(), *arr = NULL;
	int err = o ? 0 : -ENOMEM;

	for (int r = 0; r < DROP_REASONS; r++)
		err = err   ?:
			      jw_add_u64(o, drop_key(r),
					 drop_count(&m->meta, r));
	err = err ?: jw_add_array(o, "map_failures", &arr);
	for (uint32_t i = 0; !err && i < m->meta.nfails; i++) {
		const struct sc_map_fail *x = &m->meta.fails[i];
		struct json_object *f = json_object_new_object();
		const char *name = names_errno((int)x->err);
		char buf[16];

		if (!name) {
			snprintf(buf, sizeof(buf), "%u", x->err);
			name = buf;
		}
		err = f ? 0 : -ENOMEM;
		err = err ?: jw_add_str(f, "map", drop_map_name(x->map));
		err = err ?: jw_add_str(f, "errno", name);
		err = err ?: jw_add_u64(f, "count", x->count);
		err = jw_push(arr, jw_done(f, err)) ?: err;
	}
	return jw_done(o, err);
}

/* --slow: {threshold_ns, reported, lost}. */
static struct json_object *slow_obj(const struct sc_model_meta *meta)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err ?: jw_add_u64(o, "threshold_ns", meta->slow_ns);
	err = err ?: jw_add_u64(o, "reported", meta->slow_reported);
	err = err ?: jw_add_u64(o, "lost", meta->slow_lost);
	return jw_done(o, err);
}

struct json_object *report_json_flights(const struct sc_flight_call *fls,
					size_t n)
{
	struct json_object *arr = json_object_new_array();
	int err = arr ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < n; i++) {
		const struct sc_flight_call *fl = &fls[i];
		struct json_object *o = json_object_new_object();
		char comm[SC_COMM_LEN + 1] = "", buf[SC_NAME_LEN];

		memcpy(comm, fl->comm, esc_strnlen(fl->comm, SC_COMM_LEN));
		err = o ? 0 : -ENOMEM;
		err = err ?: jw_add_u64(o, "pid", fl->pid);
		err = err ?: jw_add_u64(o, "tid", fl->tid);
		err = err ?: jw_add_str(o, "comm", comm);
		err = err   ?:
			      jw_add_str(o, "syscall",
					 names_syscall_fmt(fl->abi, fl->nr, buf,
							   sizeof(buf)));
		err = err ?: jw_add_str(o, "abi", names_abi(fl->abi));
		err = err ?: jw_add_num(o, "seconds", (double)fl->ns / 1e9, 6);
		err = err ?: jw_add_bool(o, "before_attach", fl->before_attach);
		err = jw_push(arr, jw_done(o, err));
	}
	return jw_done(arr, err);
}

int report_json_add_flights(struct json_object *root, int err,
			    const struct sc_flight_call *fl, size_t n,
			    bool known)
{
	if (err)
		return err;
	if (!known)
		return jw_add_null(root, "in_flight");
	return jw_add(root, "in_flight", report_json_flights(fl, n));
}

int report_json(FILE *f, const struct sc_model *m, const struct report_opts *o,
		const struct report_meta *meta)
{
	struct json_object *root = json_object_new_object(), *procs = NULL;
	const struct sc_proc **by_pid = view_procs_by_pid(m);
	int err = root && (!m->nprocs || by_pid) ? 0 : -ENOMEM;

	err = err ?: jw_add_str(root, "version", SCPROF_VERSION);
	if (meta->interval_end) {
		err = err ?: jw_add_u64(root, "interval", meta->interval);
		err = err   ?:
			      jw_add_str(root, "interval_end",
					 meta->interval_end);
	}
	err = err ?: jw_add_str(root, "mode", meta->mode);
	err = err ?: jw_add_str(root, "target", meta->target);
	err = err ?: jw_add_u64(root, "duration_ns", meta->duration_ns);
	/* Only with --count-only: every time field below is 0, not
	 * measured.
	 */
	if (m->meta.count_only)
		err = err ?: jw_add_bool(root, "count_only", true);
	err = err ?: jw_add_bool(root, "targets_exited", meta->targets_exited);
	if (meta->exit_status >= 0)
		err = err ?: jw_add_int(root, "exit_status", meta->exit_status);
	err = err ?: jw_add(root, "dropped", dropped_obj(m));
	if (m->meta.split) {
		struct json_object *th =
			report_json_throttle(&m->meta.throttle);

		if (m->meta.throttle.known && !th)
			err = err ?: -ENOMEM;
		err = err   ?:
			      (th ? jw_add(root, "cpu_throttling", th) :
				    jw_add_null(root, "cpu_throttling"));
	}
	err = err   ?:
		      jw_add(root, "syscalls",
			     syscall_list(m->total, m->ntotal, o, m,
					  m->meta.split ? &m->why : NULL));
	if (o->by.n) {
		err = add_groups(root, err, m, o);
	} else {
		err = err ?: jw_add_array(root, "processes", &procs);
		for (size_t i = 0; !err && i < m->nprocs; i++)
			err = jw_push(procs, process_obj(m, by_pid[i], o));
	}
	err = report_json_add_flights(root, err, m->flights, m->nflights,
				      m->meta.flights_known);
	if (m->stacks)
		err = err ?: callsites_json_add(root, m->stacks);
	if (m->meta.slow_ns)
		err = err ?: jw_add(root, "slow_calls", slow_obj(&m->meta));
	free(by_pid);
	if (meta->interval_end) {
		err = err ?: jw_print_line(f, root);
		json_object_put(root);
		return err;
	}
	return jw_write(f, root, err);
}
