// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * --slow: the model's list of slow calls (model/slowlog.c) and their
 * renderers (render/slowcalls.c): the strace-like line, the JSON line and
 * the Chrome trace, with hostile names escaped.
 */
#include <errno.h>
#include <math.h>
#include <time.h>
#include <json-c/json.h>

#include "model/slowlog.h"
#include "model/stacks.h"
#include "render/slowcalls.h"
#include "unit.h"

#define NR_READ 0
#define NR_FCNTL 72
#define NR_RECVFROM 45
#define NR_NANOSLEEP 35
#define EAGAIN_ 11

/* 2025-01-02 03:04:05.123456 UTC */
#define T0 1735787045123456789ULL

static char *sdup(const char *s)
{
	char *d = s ? strdup(s) : NULL;

	assert_true(!s || d);
	return d;
}

/* A read of 4096 bytes on a pipe, 15.203 ms, from parse_header <- main. */
static void pipe_read(struct sc_slow_call *c)
{
	memset(c, 0, sizeof(*c));
	c->time_ns = T0;
	c->mono_ns = 5000000000ULL;
	c->dur_ns = 15203000ULL;
	c->pid = 1234;
	c->tid = 1235;
	memcpy(c->comm, "reader", 7);
	c->nr = NR_READ;
	c->abi = SC_ABI_NATIVE;
	c->ret = 4096;
	c->fd = 3;
	c->fd_type = SC_FD_PIPE;
	c->what = SC_SLOW_FD_PATH;
	c->desc = sdup("pipe:[77]");
	c->frames[0] = sdup("parse_header");
	c->frames[1] = sdup("main");
	c->nframes = 2;
	c->source = sdup("conf.c:41");
	c->via = sdup("libc");
}

static void check_text_at(int line, const struct sc_slow_call *c,
			  const char *want)
{
	char *s = slowcall_text(c);

	CHECK_AT(line, s != NULL, "slowcall_text returned NULL");
	CHECK_STR(s, want, "slow call line");
	free(s);
}
#define check_text(...) check_text_at(__LINE__, __VA_ARGS__)

static void test_line(void **state)
{
	struct sc_slow_call c;

	(void)state;
	pipe_read(&c);
	check_text(&c, "03:04:05.123456 reader[1234/1235] read(3<pipe:[77]>) "
		       "= 4096 <15.203 ms>  parse_header <- main (conf.c:41)");
	/* a failure: its errno's name; over a second: seconds */
	c.ret = -EAGAIN_;
	c.dur_ns = 2500000000ULL;
	check_text(&c, "03:04:05.123456 reader[1234/1235] read(3<pipe:[77]>) "
		       "= -1 EAGAIN <2.500 s>  parse_header <- main "
		       "(conf.c:41)");
	slow_call_free(&c);

	/* no fd, no stack, another ABI */
	pipe_read(&c);
	slow_call_free(&c);
	pipe_read(&c);
	free(c.desc);
	c.desc = NULL;
	c.what = SC_SLOW_FD_NONE;
	c.fd = -1;
	c.nr = NR_NANOSLEEP;
	c.ret = 0;
	for (size_t i = 0; i < c.nframes; i++)
		free(c.frames[i]);
	c.nframes = 0;
	free(c.source);
	c.source = NULL;
	check_text(&c, "03:04:05.123456 reader[1234/1235] nanosleep() = 0 "
		       "<15.203 ms>");
	c.abi = SC_ABI_COMPAT;
	c.nr = 3; /* read, on i386 */
	check_text(&c, "03:04:05.123456 reader[1234/1235] read@32() = 0 "
		       "<15.203 ms>");
	slow_call_free(&c);
}

static void test_fd_kinds(void **state)
{
	struct sc_slow_call c;

	(void)state;
	pipe_read(&c);
	free(c.desc);
	c.desc = NULL;
	c.nr = NR_RECVFROM;
	c.fd_type = SC_FD_SOCKET;
	c.what = SC_SLOW_FD_INET;
	c.proto = "TCP";
	c.local = sdup("127.0.0.1:40000");
	c.peer = sdup("127.0.0.1:8080");
	check_text(&c, "03:04:05.123456 reader[1234/1235] recvfrom(3<TCP:["
		       "127.0.0.1:40000->127.0.0.1:8080]>) = 4096 <15.203 ms>  "
		       "parse_header <- main (conf.c:41)");
	free(c.local);
	c.local = NULL;
	free(c.peer);
	c.peer = sdup("/run/x.sock");
	c.what = SC_SLOW_FD_UNIX;
	c.desc = sdup("socket:[99]");
	check_text(&c, "03:04:05.123456 reader[1234/1235] recvfrom(3<UNIX:["
		       "->/run/x.sock]>) = 4096 <15.203 ms>  parse_header <- "
		       "main (conf.c:41)");
	free(c.peer);
	c.peer = NULL;
	check_text(&c, "03:04:05.123456 reader[1234/1235] recvfrom(3<UNIX:"
		       "[99]>) = 4096 <15.203 ms>  parse_header <- main "
		       "(conf.c:41)");
	free(c.desc);
	c.desc = NULL;
	c.what = SC_SLOW_FD_CLOSED;
	check_text(&c, "03:04:05.123456 reader[1234/1235] recvfrom(3<(closed)"
		       ">) = 4096 <15.203 ms>  parse_header <- main "
		       "(conf.c:41)");
	c.what = SC_SLOW_FD_REUSED;
	c.fd_type = SC_FD_FILE;
	check_text(&c, "03:04:05.123456 reader[1234/1235] recvfrom(3<file "
		       "(fd reused)>) = 4096 <15.203 ms>  parse_header <- "
		       "main (conf.c:41)");
	slow_call_free(&c);
}

/* Names and paths are any process's to choose: one line, escaped. */
static void test_hostile(void **state)
{
	struct sc_slow_call c;
	char *s;

	(void)state;
	pipe_read(&c);
	memcpy(c.comm, "a\nb\x1b[2J", 8);
	free(c.desc);
	c.desc = sdup("/tmp/x\n12:00:00 fake[1/1] read() = 0");
	free(c.frames[0]);
	c.frames[0] = sdup("f\r\x07");
	s = slowcall_text(&c);
	CHECK(s && !strchr(s, '\n') && !strchr(s, '\r') && !strchr(s, '\x1b') &&
		      !strchr(s, '\x07'),
	      "one line, no control bytes: %s", s ? s : "(null)");
	CHECK(s && strstr(s, "a\\x0ab\\x1b[2J[1234/1235]") &&
		      strstr(s, "/tmp/x\\x0a12:00:00") &&
		      strstr(s, "f\\x0d\\x07"),
	      "escaped: %s", s ? s : "(null)");
	free(s);
	slow_call_free(&c);
}

/* The JSON line of f's text, parsed; NULL when it is not one line. */
static struct json_object *json_line(const char *text)
{
	size_t n = strlen(text);

	if (!n || text[n - 1] != '\n' || memchr(text, '\n', n - 1))
		return NULL;
	return json_tokener_parse(text);
}

static const char *jstr(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_string))
		return NULL;
	return json_object_get_string(v);
}

static int64_t jint(struct json_object *o, const char *key)
{
	struct json_object *v = NULL;

	if (!json_object_object_get_ex(o, key, &v) ||
	    !json_object_is_type(v, json_type_int))
		return INT64_MIN;
	return json_object_get_int64(v);
}

static void test_json(void **state)
{
	struct sc_slow_call c;
	struct json_object *o, *frames;
	char *text;
	FILE *f;
	size_t len;

	(void)state;
	pipe_read(&c);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcall_print(f, &c, true), 0);
	fclose(f);
	o = json_line(text);
	CHECK(o, "one JSON object on one line: %s", text);
	CHECK_STR(jstr(o, "time"), "2025-01-02T03:04:05.123456+0000", "time");
	CHECK(jint(o, "pid") == 1234 && jint(o, "tid") == 1235, "pid, tid");
	CHECK_STR(jstr(o, "comm"), "reader", "comm");
	CHECK_STR(jstr(o, "syscall"), "read", "syscall");
	CHECK(jint(o, "duration_ns") == 15203000, "duration_ns");
	CHECK(jint(o, "ret") == 4096 && !jstr(o, "errno"), "ret");
	CHECK(jint(o, "fd") == 3, "fd");
	CHECK_STR(jstr(o, "fd_type"), "pipe", "fd_type");
	CHECK_STR(jstr(o, "fd_path"), "pipe:[77]", "fd_path");
	CHECK(json_object_object_get_ex(o, "frames", &frames) &&
		      json_object_array_length(frames) == 2 &&
		      !strcmp(json_object_get_string(
				      json_object_array_get_idx(frames, 0)),
			      "parse_header"),
	      "frames");
	CHECK_STR(jstr(o, "source"), "conf.c:41", "source");
	CHECK_STR(jstr(o, "via"), "libc", "via");
	json_object_put(o);
	free(text);

	/* a failure: errno, no ret; a socket: local and peer */
	c.ret = -EAGAIN_;
	free(c.desc);
	c.desc = NULL;
	c.fd_type = SC_FD_SOCKET;
	c.what = SC_SLOW_FD_INET;
	c.proto = "UDP";
	c.local = sdup("[::1]:53");
	c.peer = sdup("[::1]:4000");
	memcpy(c.comm, "bad\xff", 5);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcall_print(f, &c, true), 0);
	fclose(f);
	o = json_line(text);
	CHECK(o, "one JSON object on one line: %s", text);
	CHECK(jint(o, "ret") == INT64_MIN, "no ret on failure");
	CHECK_STR(jstr(o, "errno"), "EAGAIN", "errno");
	CHECK_STR(jstr(o, "protocol"), "UDP", "protocol");
	CHECK_STR(jstr(o, "local"), "[::1]:53", "local");
	CHECK_STR(jstr(o, "peer"), "[::1]:4000", "peer");
	CHECK(!jstr(o, "fd_path"), "no fd_path for an inet socket");
	CHECK_STR(jstr(o, "comm"), "bad\xef\xbf\xbd", "comm made UTF-8");
	json_object_put(o);
	free(text);
	slow_call_free(&c);
}

static void test_trace(void **state)
{
	struct slowtrace_opts to = { .target = "cmd", .slow_ns = 10000000 };
	struct json_object *root, *evs, *ev, *args;
	struct sc_slowlog l;
	struct sc_slow_call c;
	size_t len, nx = 0, nm = 0;
	char *text;
	FILE *f;

	(void)state;
	slowlog_init(&l, 10);
	for (int i = 0; i < 3; i++) {
		pipe_read(&c);
		c.tid = 1235 + (i == 2);
		c.mono_ns += (uint64_t)i * 100000000ULL;
		assert_int_equal(slowlog_push(&l, &c), 0);
	}
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcalls_trace(f, &l, &to), 0);
	fclose(f);
	root = json_tokener_parse(text);
	CHECK(root && json_object_object_get_ex(root, "traceEvents", &evs) &&
		      json_object_is_type(evs, json_type_array),
	      "a traceEvents list: %s", text);
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		const char *ph;

		ev = json_object_array_get_idx(evs, i);
		ph = jstr(ev, "ph");
		CHECK(ph && jint(ev, "pid") == 1234 && jint(ev, "tid") >= 1234,
		      "event %zu: ph, pid, tid", i);
		if (!strcmp(ph, "M")) {
			nm++;
			continue;
		}
		CHECK(!strcmp(ph, "X"), "event %zu: ph %s", i, ph);
		nx++;
		CHECK_STR(jstr(ev, "name"), "read", "name");
		CHECK(json_object_object_get_ex(ev, "ts", NULL) &&
			      json_object_object_get_ex(ev, "dur", NULL),
		      "ts, dur");
		CHECK(fabs(json_object_get_double(
				   json_object_object_get(ev, "dur")) -
			   15203.0) < 1e-6,
		      "dur in µs");
		CHECK(fabs(json_object_get_double(
				   json_object_object_get(ev, "ts")) -
			   (5000000.0 - 15203.0 +
			    100000.0 * (double)(nx - 1))) < 1e-3,
		      "ts: the call's start, in µs");
		CHECK(json_object_object_get_ex(ev, "args", &args) &&
			      jint(args, "ret") == 4096 &&
			      !strcmp(jstr(args, "fd_path"), "pipe:[77]"),
		      "args");
	}
	CHECK(nx == 3, "one X event a call: %zu", nx);
	CHECK(nm == 3, "process_name once, thread_name per thread: %zu", nm);
	json_object_put(root);
	free(text);
	slowlog_clear(&l);
}

/* The split: 15.203 ms = 0.203 on a CPU + 1.000 waiting + 14.000 blocked
 * (2.000 of it in I/O wait), its longest sleep 9 ms in anon_pipe_read,
 * woken by the writer.
 */
static void split_of(struct sc_slow_call *c)
{
	c->has_split = true;
	c->wait_ns = 1000000;
	c->blocked_ns = 14000000;
	c->iowait_ns = 2000000;
	c->sleep_ns = 9000000;
	c->slept_in = sdup("anon_pipe_read");
	c->waker = SC_WAKER_TASK;
	c->waker_pid = 1234;
	c->waker_tid = 1240;
	memcpy(c->waker_comm, "writer", 7);
}

static void test_split(void **state)
{
	struct json_object *o, *w, *root, *evs, *args = NULL;
	struct slowtrace_opts to = { .target = "cmd", .slow_ns = 1 };
	struct sc_slowlog l;
	struct sc_slow_call c;
	char *text;
	size_t len;
	FILE *f;

	(void)state;
	pipe_read(&c);
	split_of(&c);
	check_text(&c, "03:04:05.123456 reader[1234/1235] read(3<pipe:[77]>) "
		       "= 4096 <15.203 ms> on-cpu 0.203 ms, cpu-wait 1.000 ms, "
		       "blocked 14.000 ms (io-wait 2.000 ms); slept in "
		       "anon_pipe_read, woken by writer[1234/1240]  "
		       "parse_header <- main (conf.c:41)");
	/* JSON: the column table's keys, the sleep, the waker */
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcall_print(f, &c, true), 0);
	fclose(f);
	o = json_line(text);
	CHECK(o, "one JSON object on one line: %s", text);
	CHECK(jint(o, "on_cpu_ns") == 203000 &&
		      jint(o, "cpu_wait_ns") == 1000000 &&
		      jint(o, "blocked_ns") == 14000000 &&
		      jint(o, "io_wait_ns") == 2000000 &&
		      jint(o, "sleep_ns") == 9000000,
	      "split: %s", text);
	CHECK_STR(jstr(o, "slept_in"), "anon_pipe_read", "slept_in");
	CHECK(json_object_object_get_ex(o, "woken_by", &w), "woken_by");
	CHECK_STR(jstr(w, "kind"), "task", "waker kind");
	CHECK_STR(jstr(w, "comm"), "writer", "waker comm");
	CHECK(jint(w, "pid") == 1234 && jint(w, "tid") == 1240, "waker ids");
	json_object_put(o);
	free(text);
	/* the trace's args the same */
	slowlog_init(&l, 2);
	assert_int_equal(slowlog_push(&l, &c), 0);
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcalls_trace(f, &l, &to), 0);
	fclose(f);
	root = json_tokener_parse(text);
	CHECK(root && json_object_object_get_ex(root, "traceEvents", &evs),
	      "trace: %s", text);
	for (size_t i = 0; i < json_object_array_length(evs); i++) {
		struct json_object *ev = json_object_array_get_idx(evs, i);

		if (!strcmp(jstr(ev, "ph"), "X"))
			json_object_object_get_ex(ev, "args", &args);
	}
	CHECK(args && jint(args, "blocked_ns") == 14000000 &&
		      !strcmp(jstr(args, "slept_in"), "anon_pipe_read") &&
		      json_object_object_get_ex(args, "woken_by", &w) &&
		      jint(w, "tid") == 1240,
	      "trace args: %s", text);
	json_object_put(root);
	free(text);
	slowlog_clear(&l);

	/* an interrupt, a timer: no task named; a sleep unnamed: "?" */
	pipe_read(&c);
	split_of(&c);
	c.waker = SC_WAKER_INTERRUPT;
	free(c.slept_in);
	c.slept_in = NULL;
	check_text(&c, "03:04:05.123456 reader[1234/1235] read(3<pipe:[77]>) "
		       "= 4096 <15.203 ms> on-cpu 0.203 ms, cpu-wait 1.000 ms, "
		       "blocked 14.000 ms (io-wait 2.000 ms); slept in ?, "
		       "woken by interrupt  parse_header <- main (conf.c:41)");
	c.waker = SC_WAKER_TIMER;
	f = open_memstream(&text, &len);
	assert_non_null(f);
	assert_int_equal(slowcall_print(f, &c, true), 0);
	fclose(f);
	o = json_line(text);
	CHECK(o && json_object_object_get_ex(o, "woken_by", &w) &&
		      !strcmp(jstr(w, "kind"), "timer") && !jstr(w, "comm") &&
		      json_object_object_get_ex(o, "slept_in", NULL) &&
		      !jstr(o, "slept_in"),
	      "timer, no comm, slept_in null: %s", text);
	json_object_put(o);
	free(text);
	/* never asleep: the split alone; waiting past the call (rounding):
	 * on a CPU is 0, not negative
	 */
	c.sleep_ns = 0;
	c.blocked_ns = 0;
	c.iowait_ns = 0;
	c.wait_ns = c.dur_ns + 5;
	check_text(&c,
		   "03:04:05.123456 reader[1234/1235] read(3<pipe:[77]>) "
		   "= 4096 <15.203 ms> on-cpu 0.000 ms, cpu-wait 15.203 ms, "
		   "blocked 0.000 ms (io-wait 0.000 ms)  parse_header <- "
		   "main (conf.c:41)");
	/* a hostile waker: escaped, one line */
	c.sleep_ns = 1;
	c.waker = SC_WAKER_TASK;
	memcpy(c.waker_comm, "w\n1 x[1/1]\x1b", sizeof("w\n1 x[1/1]\x1b"));
	text = slowcall_text(&c);
	CHECK(text && !strchr(text, '\n') && !strchr(text, '\x1b') &&
		      strstr(text, "woken by w\\x0a1 x[1/1]\\x1b[1234/1240]"),
	      "escaped waker: %s", text ? text : "(null)");
	free(text);
	slow_call_free(&c);
}

static void test_slowlog_bound(void **state)
{
	struct sc_slowlog a, b;
	struct sc_slow_call c;

	(void)state;
	slowlog_init(&a, 2);
	slowlog_init(&b, SIZE_MAX);
	for (int i = 0; i < 5; i++) {
		pipe_read(&c);
		c.pid = (uint32_t)i;
		assert_int_equal(slowlog_push(&b, &c), 0);
		CHECK(!c.desc && !c.nframes,
		      "the call's strings are the list's");
	}
	assert_int_equal(slowlog_move(&a, &b), 0);
	CHECK(a.n == 2 && a.dropped == 3 && b.n == 0,
	      "at most max kept, the rest dropped: %zu, %" PRIu64, a.n,
	      a.dropped);
	CHECK(a.v[0].pid == 0 && a.v[1].pid == 1, "the first ones, in order");
	slowlog_clear(&a);
	slowlog_clear(&b);
}

/* The call site: the label's frames from the program's own first one. */
static void test_call_site(void **state)
{
	struct sc_frame fr[] = {
		{ .func = "__read",
		  .module = "libc.so.6",
		  .runtime = SC_RT_LIBC },
		{ .func = "parse",
		  .module = "app",
		  .file = "/src/conf.c",
		  .line = 41 },
		{ .module = "app", .offset = 0x1234 },
		{ .func = "main", .module = "app" },
		{ .func = "__libc_start_call_main",
		  .module = "libc.so.6",
		  .runtime = SC_RT_LIBC },
	};
	struct sc_stack st = { .frames = fr, .nframes = 5 };
	struct sc_slow_call c = { 0 };

	(void)state;
	assert_int_equal(slow_call_site(&c, &st), 0);
	CHECK(c.nframes == 3 && !strcmp(c.frames[0], "parse") &&
		      !strcmp(c.frames[1], "app+0x1234") &&
		      !strcmp(c.frames[2], "main"),
	      "frames: %zu", c.nframes);
	CHECK_STR(c.source, "conf.c:41", "source");
	CHECK_STR(c.via, "libc", "via");
	slow_call_free(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_line),
		cmocka_unit_test(test_fd_kinds),
		cmocka_unit_test(test_hostile),
		cmocka_unit_test(test_json),
		cmocka_unit_test(test_trace),
		cmocka_unit_test(test_split),
		cmocka_unit_test(test_slowlog_bound),
		cmocka_unit_test(test_call_site),
	};

	setenv("TZ", "UTC", 1);
	tzset();
	unit_init();
	return cmocka_run_group_tests_name("slowcalls", tests, NULL, NULL);
}
