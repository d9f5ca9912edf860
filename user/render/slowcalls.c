// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model/names.h"
#include "render/jsonw.h"
#include "render/slowcalls.h"
#include "util/escape.h"

/* The wall-clock time of t (ns since the epoch), local: "12:03:05.120431",
 * or with iso "2025-11-22T12:03:05.120431+0100".
 */
static void wall_time(uint64_t t, bool iso, char *buf, size_t len)
{
	time_t s = (time_t)(t / 1000000000ULL);
	struct tm tm;
	size_t n;

	localtime_r(&s, &tm);
	n = strftime(buf, len, iso ? "%Y-%m-%dT%H:%M:%S" : "%H:%M:%S", &tm);
	n += (size_t)snprintf(buf + n, len - n, ".%06u",
			      (unsigned int)(t % 1000000000ULL / 1000));
	if (iso && n < len)
		strftime(buf + n, len - n, "%z", &tm);
}

/* "read", "read@32" for another ABI than the native one. */
static void call_name(const struct sc_slow_call *c, char *buf, size_t len)
{
	char nb[SC_NAME_LEN];
	const char *name = names_syscall_fmt(c->abi, c->nr, nb, sizeof(nb));

	if (c->abi == SC_ABI_NATIVE)
		snprintf(buf, len, "%s", name);
	else
		snprintf(buf, len, "%s@%s", name, names_abi(c->abi));
}

/* A failed call's errno (ret is -errno), else 0. */
static int call_errno(const struct sc_slow_call *c)
{
	return c->ret < 0 && c->ret >= -4095 ? (int)-c->ret : 0;
}

static const char *fd_kind(const struct sc_slow_call *c)
{
	const char *k = names_fd_type(c->fd_type);

	return k ? k : "unknown";
}

/* Why the fd's file is not known (JSON "fd_state"); NULL: it is. */
static const char *fd_state(const struct sc_slow_call *c)
{
	switch (c->what) {
	case SC_SLOW_FD_CLOSED:
		return "closed";
	case SC_SLOW_FD_REUSED:
		return "reused";
	case SC_SLOW_FD_UNKNOWN:
		return "unknown";
	default:
		return NULL;
	}
}

/* What the fd is, as between <> after it: "/tmp/x",
 * "TCP:[127.0.0.1:40000->127.0.0.1:8080]", "UNIX:[/run/x.sock]",
 * "(closed)", "file (fd reused)". Escaped; a new string.
 */
static char *fd_text(const struct sc_slow_call *c)
{
	char *s = NULL, *e = NULL, *p = NULL;
	int n;

	switch (c->what) {
	case SC_SLOW_FD_PATH:
	case SC_SLOW_FD_SOCKET:
		return esc_text(c->desc, strlen(c->desc));
	case SC_SLOW_FD_INET:
		n = asprintf(&s, "%s:[%s->%s]", c->proto, c->local, c->peer);
		break;
	case SC_SLOW_FD_UNIX:
		/* "UNIX:[/a->/b]", "UNIX:[->/run/x.sock]"; unbound both:
		 * "UNIX:[INO]" as socket:[INO]
		 */
		if (!c->local && !c->peer) {
			n = asprintf(&s, "UNIX:%s",
				     c->desc + strcspn(c->desc, "["));
			break;
		}
		e = esc_text(c->local ? c->local : "",
			     c->local ? strlen(c->local) : 0);
		p = esc_text(c->peer ? c->peer : "",
			     c->peer ? strlen(c->peer) : 0);
		n = e && p ? asprintf(&s, "UNIX:[%s%s%s]", e,
				      c->peer ? "->" : "", p) :
			     -1;
		break;
	case SC_SLOW_FD_CLOSED:
		n = asprintf(&s, "(closed)");
		break;
	case SC_SLOW_FD_REUSED:
		n = asprintf(&s, "%s (fd reused)", fd_kind(c));
		break;
	default:
		n = asprintf(&s, "%s", fd_kind(c));
		break;
	}
	free(e);
	free(p);
	return n < 0 ? NULL : s;
}

/* "parse_header <- main (conf.c:41)", escaped; "" without a stack. */
static char *site_text(const struct sc_slow_call *c)
{
	size_t len = 1;
	char *s, *e;

	for (size_t i = 0; i < c->nframes; i++)
		len += strlen(c->frames[i]) + 4;
	if (c->source)
		len += strlen(c->source) + 3;
	s = calloc(1, len);
	if (!s)
		return NULL;
	for (size_t i = 0; i < c->nframes; i++) {
		if (i)
			strcat(s, " <- ");
		strcat(s, c->frames[i]);
	}
	if (c->source)
		sprintf(s + strlen(s), " (%s)", c->source);
	e = esc_text(s, strlen(s));
	free(s);
	return e;
}

/* "15.203 ms", "1.204 s". */
static void duration_text(uint64_t ns, char *buf, size_t len)
{
	if (ns < 1000000000ULL)
		snprintf(buf, len, "%.3f ms", (double)ns / 1e6);
	else
		snprintf(buf, len, "%.3f s", (double)ns / 1e9);
}

/* "interrupt", "timer", "COMM[PID/TID]" (escaped): who woke the call
 * from its longest sleep. A new string; NULL: no memory.
 */
static char *waker_text(const struct sc_slow_call *c)
{
	char *comm, *s;

	if (c->waker == SC_WAKER_INTERRUPT)
		return strdup("interrupt");
	if (c->waker == SC_WAKER_TIMER)
		return strdup("timer");
	comm = esc_text(c->waker_comm, esc_strnlen(c->waker_comm, SC_COMM_LEN));
	if (!comm ||
	    asprintf(&s, "%s[%u/%u]", comm, c->waker_pid, c->waker_tid) < 0)
		s = NULL;
	free(comm);
	return s;
}

/* " on-cpu 0.040 ms, cpu-wait 0.030 ms, blocked 30.050 ms (io-wait 0.000
 * ms); slept in anon_pipe_read, woken by writer[12/13]", escaped; ""
 * without the split. A new string; NULL: no memory.
 */
static char *split_text(const struct sc_slow_call *c)
{
	char cpu[32], wait[32], blocked[32], io[32];
	char *s = NULL, *where = NULL, *waker = NULL;
	int n;

	if (!c->has_split)
		return strdup("");
	duration_text(slow_call_on_cpu_ns(c), cpu, sizeof(cpu));
	duration_text(c->wait_ns, wait, sizeof(wait));
	duration_text(c->blocked_ns, blocked, sizeof(blocked));
	duration_text(c->iowait_ns, io, sizeof(io));
	if (c->sleep_ns) {
		where = c->slept_in ?
				esc_text(c->slept_in, strlen(c->slept_in)) :
				strdup("?");
		waker = waker_text(c);
		if (!where || !waker) {
			free(where);
			free(waker);
			return NULL;
		}
	}
	n = asprintf(&s,
		     " on-cpu %s, cpu-wait %s, blocked %s (io-wait %s)%s%s%s%s",
		     cpu, wait, blocked, io, where ? "; slept in " : "",
		     where ? where : "", waker ? ", woken by " : "",
		     waker ? waker : "");
	free(where);
	free(waker);
	return n < 0 ? NULL : s;
}

char *slowcall_text(const struct sc_slow_call *c)
{
	char when[32], name[SC_NAME_LEN + 8], dur[32], ret[64];
	char *comm = esc_text(c->comm, esc_strnlen(c->comm, SC_COMM_LEN));
	char *fd = c->fd >= 0 ? fd_text(c) : NULL;
	char *site = site_text(c), *split = split_text(c);
	char *s = NULL, args[48] = "";
	int err = call_errno(c);

	if (comm && site && split && (c->fd < 0 || fd)) {
		const char *en = names_errno(err);

		wall_time(c->time_ns, false, when, sizeof(when));
		call_name(c, name, sizeof(name));
		duration_text(c->dur_ns, dur, sizeof(dur));
		if (!err)
			snprintf(ret, sizeof(ret), "%" PRId64, c->ret);
		else if (en)
			snprintf(ret, sizeof(ret), "-1 %s", en);
		else
			snprintf(ret, sizeof(ret), "-1 errno %d", err);
		if (c->fd >= 0)
			snprintf(args, sizeof(args), "%d", c->fd);
		if (asprintf(&s, "%s %s[%u/%u] %s(%s%s%s%s) = %s <%s>%s%s%s",
			     when, comm, c->pid, c->tid, name, args,
			     fd ? "<" : "", fd ? fd : "", fd ? ">" : "", ret,
			     dur, split, *site ? "  " : "", site) < 0)
			s = NULL;
	}
	free(comm);
	free(fd);
	free(site);
	free(split);
	return s;
}

static const char *waker_kind(const struct sc_slow_call *c)
{
	return c->waker == SC_WAKER_INTERRUPT ? "interrupt" :
	       c->waker == SC_WAKER_TIMER     ? "timer" :
						"task";
}

/* The split (the column table's keys), then the longest sleep: sleep_ns,
 * slept_in (null: unnamed) and woken_by {kind, comm, pid, tid} (a task's
 * only: comm, pid, tid).
 */
static int add_split_fields(struct json_object *o, const struct sc_slow_call *c)
{
	struct json_object *w;
	char comm[SC_COMM_LEN + 1] = "";
	int err = 0;

	if (!c->has_split)
		return 0;
	err = err ?: jw_add_u64(o, "on_cpu_ns", slow_call_on_cpu_ns(c));
	err = err ?: jw_add_u64(o, "cpu_wait_ns", c->wait_ns);
	err = err ?: jw_add_u64(o, "blocked_ns", c->blocked_ns);
	err = err ?: jw_add_u64(o, "io_wait_ns", c->iowait_ns);
	if (err || !c->sleep_ns)
		return err;
	err = jw_add_u64(o, "sleep_ns", c->sleep_ns);
	err = err   ?:
		      (c->slept_in ? jw_add_str(o, "slept_in", c->slept_in) :
				     jw_add_null(o, "slept_in"));
	w = err ? NULL : json_object_new_object();
	err = err ?: (w ? 0 : -ENOMEM);
	err = err ?: jw_add_str(w, "kind", waker_kind(c));
	if (!err && c->waker == SC_WAKER_TASK) {
		memcpy(comm, c->waker_comm,
		       esc_strnlen(c->waker_comm, SC_COMM_LEN));
		err = jw_add_str(w, "comm", comm);
		err = err ?: jw_add_u64(w, "pid", c->waker_pid);
		err = err ?: jw_add_u64(w, "tid", c->waker_tid);
	}
	if (err)
		json_object_put(w);
	else
		err = jw_add(o, "woken_by", w);
	return err;
}

/* The fields of a call shared by its JSON line and its trace event's
 * args: its result, its fd, its call site and its split.
 */
static int add_call_fields(struct json_object *o, const struct sc_slow_call *c)
{
	int e = call_errno(c), err = 0;
	struct json_object *frames = NULL;

	if (!e) {
		err = jw_add_int(o, "ret", c->ret);
	} else {
		const char *en = names_errno(e);
		char buf[16];

		if (!en) {
			snprintf(buf, sizeof(buf), "%d", e);
			en = buf;
		}
		err = jw_add_str(o, "errno", en);
	}
	if (c->fd >= 0) {
		err = err ?: jw_add_int(o, "fd", c->fd);
		err = err ?: jw_add_str(o, "fd_type", fd_kind(c));
	}
	switch (c->what) {
	case SC_SLOW_FD_PATH:
	case SC_SLOW_FD_SOCKET:
		err = err ?: jw_add_str(o, "fd_path", c->desc);
		break;
	case SC_SLOW_FD_UNIX:
		err = err ?: jw_add_str(o, "protocol", "UNIX");
		if (c->local)
			err = err ?: jw_add_str(o, "local", c->local);
		if (c->peer)
			err = err ?: jw_add_str(o, "peer", c->peer);
		err = err ?: jw_add_str(o, "fd_path", c->desc);
		break;
	case SC_SLOW_FD_INET:
		err = err ?: jw_add_str(o, "protocol", c->proto);
		err = err ?: jw_add_str(o, "local", c->local);
		err = err ?: jw_add_str(o, "peer", c->peer);
		break;
	default:
		if (fd_state(c))
			err = err ?: jw_add_str(o, "fd_state", fd_state(c));
		break;
	}
	err = err ?: jw_add_array(o, "frames", &frames);
	for (size_t i = 0; !err && i < c->nframes; i++)
		err = jw_push(frames, jw_str(c->frames[i]));
	if (c->source)
		err = err ?: jw_add_str(o, "source", c->source);
	if (c->via && *c->via)
		err = err ?: jw_add_str(o, "via", c->via);
	return err ?: add_split_fields(o, c);
}

int slowcall_print(FILE *f, const struct sc_slow_call *c, bool json)
{
	struct json_object *o;
	char when[48], name[SC_NAME_LEN + 8], comm[SC_COMM_LEN + 1] = "";
	int err;

	if (!json) {
		char *s = slowcall_text(c);

		if (!s)
			return -ENOMEM;
		fprintf(f, "%s\n", s);
		free(s);
		return fflush(f) || ferror(f) ? -EIO : 0;
	}
	o = json_object_new_object();
	err = o ? 0 : -ENOMEM;
	wall_time(c->time_ns, true, when, sizeof(when));
	call_name(c, name, sizeof(name));
	memcpy(comm, c->comm, esc_strnlen(c->comm, SC_COMM_LEN));
	err = err ?: jw_add_str(o, "time", when);
	err = err ?: jw_add_u64(o, "pid", c->pid);
	err = err ?: jw_add_u64(o, "tid", c->tid);
	err = err ?: jw_add_str(o, "comm", comm);
	err = err   ?:
		      jw_add_str(o, "syscall",
				 names_syscall_fmt(c->abi, c->nr, name,
						   sizeof(name)));
	err = err ?: jw_add_str(o, "abi", names_abi(c->abi));
	err = err ?: jw_add_u64(o, "duration_ns", c->dur_ns);
	err = err ?: add_call_fields(o, c);
	if (!err)
		err = jw_print_line(f, o);
	json_object_put(o);
	return err ?: (fflush(f) || ferror(f) ? -EIO : 0);
}

/* A metadata event naming a process or a thread. */
static struct json_object *name_event(const char *what, uint32_t pid,
				      uint32_t tid, const char *comm)
{
	struct json_object *ev = json_object_new_object(), *args = NULL;
	int err = ev ? 0 : -ENOMEM;

	err = err ?: jw_add_str(ev, "name", what);
	err = err ?: jw_add_str(ev, "ph", "M");
	err = err ?: jw_add_u64(ev, "pid", pid);
	err = err ?: jw_add_u64(ev, "tid", tid);
	args = json_object_new_object();
	err = err ?: (args ? 0 : -ENOMEM);
	err = err ?: jw_add_str(args, "name", comm);
	if (err)
		json_object_put(args);
	else
		err = jw_add(ev, "args", args);
	return jw_done(ev, err);
}

/* Has a call before i the same pid (tid when thread)? */
static bool seen_before(const struct sc_slowlog *l, size_t i, bool thread)
{
	for (size_t j = 0; j < i; j++)
		if (thread ? l->v[j].tid == l->v[i].tid :
			     l->v[j].pid == l->v[i].pid)
			return true;
	return false;
}

/* One complete event: ts and dur in µs (CLOCK_MONOTONIC). */
static struct json_object *call_event(const struct sc_slow_call *c)
{
	struct json_object *ev = json_object_new_object(), *args;
	char name[SC_NAME_LEN + 8], comm[SC_COMM_LEN + 1] = "";
	uint64_t start = c->mono_ns > c->dur_ns ? c->mono_ns - c->dur_ns : 0;
	int err = ev ? 0 : -ENOMEM;

	call_name(c, name, sizeof(name));
	memcpy(comm, c->comm, esc_strnlen(c->comm, SC_COMM_LEN));
	err = err ?: jw_add_str(ev, "name", name);
	err = err ?: jw_add_str(ev, "cat", "syscall");
	err = err ?: jw_add_str(ev, "ph", "X");
	err = err ?: jw_add_num(ev, "ts", (double)start / 1e3, 3);
	err = err ?: jw_add_num(ev, "dur", (double)c->dur_ns / 1e3, 3);
	err = err ?: jw_add_u64(ev, "pid", c->pid);
	err = err ?: jw_add_u64(ev, "tid", c->tid);
	args = json_object_new_object();
	err = err ?: (args ? 0 : -ENOMEM);
	err = err ?: jw_add_str(args, "comm", comm);
	err = err ?: add_call_fields(args, c);
	if (err)
		json_object_put(args);
	else
		err = jw_add(ev, "args", args);
	return jw_done(ev, err);
}

int slowcalls_trace(FILE *f, const struct sc_slowlog *l,
		    const struct slowtrace_opts *o)
{
	struct json_object *root = json_object_new_object(), *evs = NULL;
	struct json_object *other = NULL;
	int err = root ? 0 : -ENOMEM;

	err = err ?: jw_add_array(root, "traceEvents", &evs);
	for (size_t i = 0; !err && i < l->n; i++) {
		const struct sc_slow_call *c = &l->v[i];
		char comm[SC_COMM_LEN + 1] = "";

		memcpy(comm, c->comm, esc_strnlen(c->comm, SC_COMM_LEN));
		if (!seen_before(l, i, false))
			err = jw_push(evs, name_event("process_name", c->pid,
						      c->pid, comm));
		if (!err && !seen_before(l, i, true))
			err = jw_push(evs, name_event("thread_name", c->pid,
						      c->tid, comm));
		err = err ?: jw_push(evs, call_event(c));
	}
	err = err ?: jw_add_str(root, "displayTimeUnit", "ms");
	other = json_object_new_object();
	err = err ?: (other ? 0 : -ENOMEM);
	err = err ?: jw_add_str(other, "source", "scprof --slow");
	err = err ?: jw_add_str(other, "version", SCPROF_VERSION);
	err = err ?: jw_add_str(other, "target", o->target ? o->target : "");
	err = err ?: jw_add_str(other, "clock", "CLOCK_MONOTONIC");
	err = err ?: jw_add_u64(other, "slow_ns", o->slow_ns);
	err = err ?: jw_add_u64(other, "calls", l->n);
	err = err ?: jw_add_u64(other, "left_out", o->left_out);
	err = err ?: jw_add_u64(other, "lost", o->lost);
	if (err)
		json_object_put(other);
	else
		err = jw_add(root, "otherData", other);
	return jw_write(f, root, err);
}
