// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* --pprof: the model's stacks as profile.proto, read back with protobuf-c's
 * unpack (the generated decoder of the same .proto), and its gzip framing.
 */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>
#include <zlib.h>

#include "profile.pb-c.h"
#include "model/group.h"
#include "model/model.h"
#include "model/stacks.h"
#include "render/pprof.h"
#include "frames.h"
#include "unit.h"

#define WRITE 1
#define READ 0
#define PERIOD 50

typedef Perftools__Profiles__Profile pb_profile;

/* control bytes in every string */
static const struct sc_frame evil[] = {
	{ .func = "a;b\nc",
	  .module = "m\to",
	  .offset = 1,
	  .file = "f\x01",
	  .line = 2 },
};

/* write: 100 calls, 1000 ns returned (mean 10 ns) and a call in flight
 * of 5000 ns that the mean leaves out; read: 10 calls, 40 ns (mean 4).
 * Stacks 1 in PERIOD: write 74 + 1 (main at another return address) +
 * 25 (unnamed frames), read 3.
 */
static struct sc_model *model_with_stacks(void)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats st = { .calls = 100, .total_ns = 1000 };
	struct sc_stats rd = { .calls = 10, .total_ns = 40 };
	struct sc_frame other[6];

	assert_non_null(p);
	assert_int_equal(model_proc_add(p, 0, WRITE, &st), 0);
	assert_int_equal(model_proc_add_flight(p, 0, WRITE, 0, 5000, 1), 0);
	assert_int_equal(model_proc_add(p, 0, READ, &rd), 0);
	assert_int_equal(model_finalize(m), 0);
	m->meta.duration_ns = 1234567;
	m->stacks = stacks_new(PERIOD);
	assert_non_null(m->stacks);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", logger, 6, 74),
			 0);
	memcpy(other, logger, sizeof(other));
	other[4].offset = 0x31;
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", other, 6, 1),
			 0);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", rawf, 3, 25),
			 0);
	assert_int_equal(stacks_add(m->stacks, READ, 0, "ev;il\n", evil, 1, 3),
			 0);
	m->stacks->lost_total = 4;
	return m;
}

static pb_profile *decode(const struct sc_model *m, int64_t time_ns)
{
	struct pprof_opts o = { .time_ns = time_ns, .target = "app -x" };
	uint8_t *buf;
	size_t len;
	pb_profile *p;

	assert_int_equal(pprof_encode(m, &o, &buf, &len), 0);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	CHECK(p, "protobuf-c cannot unpack the profile");
	return p;
}

static const char *str(const pb_profile *p, int64_t i)
{
	CHECK(i >= 0 && (size_t)i < p->n_string_table,
	      "string index %" PRId64 " out of the table (%zu)", i,
	      p->n_string_table);
	return p->string_table[i];
}

static const Perftools__Profiles__Location *loc(const pb_profile *p,
						uint64_t id)
{
	/* ids are 1..n in order: checked in test_ids_and_dedupe */
	CHECK(id >= 1 && id <= p->n_location, "location id %" PRIu64, id);
	return p->location[id - 1];
}

static const Perftools__Profiles__Function *func(const pb_profile *p,
						 uint64_t id)
{
	CHECK(id >= 1 && id <= p->n_function, "function id %" PRIu64, id);
	return p->function[id - 1];
}

/* The function name of a location, or NULL when it has no line. */
static const char *loc_name(const pb_profile *p, uint64_t id)
{
	const Perftools__Profiles__Location *l = loc(p, id);

	if (!l->n_line)
		return NULL;
	CHECK(l->n_line == 1, "location %" PRIu64 ": %zu lines", id, l->n_line);
	return str(p, func(p, l->line[0]->function_id)->name);
}

static const char *mapping_file(const pb_profile *p, uint64_t id)
{
	CHECK(id >= 1 && id <= p->n_mapping, "mapping id %" PRIu64, id);
	CHECK(p->mapping[id - 1]->id == id, "mapping %" PRIu64 " at %" PRIu64,
	      p->mapping[id - 1]->id, id);
	return str(p, p->mapping[id - 1]->filename);
}

static void test_types_period_and_comments(void **state)
{
	struct sc_model *m = model_with_stacks();
	pb_profile *p = decode(m, 1700000000123456789LL);
	bool estimate = false, lost = false, comm_only = false, target = false;

	(void)state;
	CHECK_STR(str(p, 0), "", "string_table[0]");
	CHECK(p->n_sample_type == 2, "%zu sample types", p->n_sample_type);
	CHECK_STR(str(p, p->sample_type[0]->type), "calls", "type 0");
	CHECK_STR(str(p, p->sample_type[0]->unit), "count", "unit 0");
	CHECK_STR(str(p, p->sample_type[1]->type), "syscall-nanoseconds",
		  "type 1");
	CHECK_STR(str(p, p->sample_type[1]->unit), "nanoseconds", "unit 1");
	CHECK(p->period_type, "no period type");
	CHECK_STR(str(p, p->period_type->type), "calls", "period type");
	CHECK_STR(str(p, p->period_type->unit), "count", "period unit");
	CHECK(p->period == PERIOD, "period %" PRId64, p->period);
	CHECK_STR(str(p, p->default_sample_type), "syscall-nanoseconds",
		  "default sample type");
	CHECK(p->duration_nanos == 1234567, "duration %" PRId64,
	      p->duration_nanos);
	CHECK(p->time_nanos == 1700000000123456789LL, "time %" PRId64,
	      p->time_nanos);
	for (size_t i = 0; i < p->n_comment; i++) {
		const char *c = str(p, p->comment[i]);

		target |= !strcmp(c, "scprof " SCPROF_VERSION ": app -x");
		estimate |= strstr(c, "syscall-nanoseconds: an estimate") != 0;
		lost |= !strcmp(c, "4 more samples were lost: the ring buffer "
				   "was full");
		comm_only |= strstr(c, "labels: comm only") != 0;
	}
	CHECK(target && estimate && lost && comm_only,
	      "comments: target %d estimate %d lost %d comm %d", target,
	      estimate, lost, comm_only);
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* Each sample is its stack: leaf first, the syscall, then the frames
 * innermost first, as the model has them; values and label.
 */
static void test_samples_are_the_stacks(void **state)
{
	struct sc_model *m = model_with_stacks();
	const struct sc_stacks *s = m->stacks;
	pb_profile *p = decode(m, 0);
	char nbuf[32];

	(void)state;
	CHECK(p->n_sample == s->n, "%zu samples of %zu stacks", p->n_sample,
	      s->n);
	for (size_t i = 0; i < s->n; i++) {
		const struct sc_stack *st = &s->v[i];
		const Perftools__Profiles__Sample *sa = p->sample[i];
		/* a syscall's samples share its exact count: write's 100
		 * calls over its 100 samples, read's 10 over 3 (not
		 * PERIOD calls a sample)
		 */
		double each = st->nr == WRITE ? 1.0 : 10.0 / 3;
		int64_t calls = llround((double)st->count * each);
		/* write's mean is 10 ns (the call in flight left out) */
		double mean = st->nr == WRITE ? 10 : 4;
		int64_t ns = llround((double)st->count * each * mean);

		snprintf(nbuf, sizeof(nbuf), "%s",
			 st->nr == WRITE ? "write" : "read");
		CHECK(sa->n_location_id == st->nframes + 1,
		      "sample %zu: %zu locations for %zu frames", i,
		      sa->n_location_id, st->nframes);
		CHECK_STR(loc_name(p, sa->location_id[0]), nbuf, "leaf");
		CHECK(loc(p, sa->location_id[0])->mapping_id == 0,
		      "the syscall has no mapping");
		for (size_t k = 0; k < st->nframes; k++) {
			const struct sc_frame *f = &st->frames[k];
			uint64_t id = sa->location_id[k + 1];
			const Perftools__Profiles__Location *l = loc(p, id);
			const char *name = loc_name(p, id);

			CHECK(l->address == f->offset,
			      "sample %zu frame %zu: address %" PRIx64, i, k,
			      l->address);
			if (f->module)
				CHECK_STR(mapping_file(p, l->mapping_id),
					  strcmp(f->module, "m\to") ?
						  f->module :
						  "m\\x09o",
					  "frame's mapping");
			else
				CHECK(!l->mapping_id, "frame in no module");
			if (!f->func) {
				CHECK(!name, "unnamed frame named %s", name);
				continue;
			}
			CHECK(name, "sample %zu frame %zu: no function", i, k);
			if (strchr(f->func, '\n'))
				CHECK_STR(name, "a;b\\x0ac", "escaped name");
			else
				CHECK_STR(name, f->func, "frame function");
			CHECK(l->line[0]->line == f->line, "line %" PRId64,
			      l->line[0]->line);
		}
		CHECK(sa->n_value == 2, "%zu values", sa->n_value);
		CHECK(sa->value[0] == calls, "sample %zu: %" PRId64 " calls", i,
		      sa->value[0]);
		CHECK(sa->value[1] == ns,
		      "sample %zu: %" PRId64 " ns, want %" PRId64, i,
		      sa->value[1], ns);
		CHECK(sa->n_label == 1, "%zu labels", sa->n_label);
		CHECK_STR(str(p, sa->label[0]->key), "comm", "label key");
		CHECK_STR(str(p, sa->label[0]->str),
			  st->nr == READ ? "ev;il\\x0a" : "app", "comm");
	}
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* Ids 1..n, every function, location, mapping and string once. */
static void test_ids_and_dedupe(void **state)
{
	struct sc_model *m = model_with_stacks();
	pb_profile *p = decode(m, 0);
	const Perftools__Profiles__Function *lf = NULL;

	(void)state;
	for (size_t i = 0; i < p->n_string_table; i++)
		for (size_t j = i + 1; j < p->n_string_table; j++)
			CHECK(strcmp(p->string_table[i], p->string_table[j]),
			      "string '%s' twice", p->string_table[i]);
	/* write, read (syscalls); __write, _IO_fflush, log_line,
	 * run_logger, main, __libc_start_call_main, a;b\nc
	 */
	CHECK(p->n_function == 9, "%zu functions", p->n_function);
	for (size_t i = 0; i < p->n_function; i++) {
		CHECK(p->function[i]->id == i + 1,
		      "function %zu has id %" PRIu64, i, p->function[i]->id);
		for (size_t j = i + 1; j < p->n_function; j++)
			CHECK(p->function[i]->name != p->function[j]->name ||
				      p->function[i]->filename !=
					      p->function[j]->filename,
			      "function %s twice",
			      str(p, p->function[i]->name));
		if (!strcmp(str(p, p->function[i]->name), "log_line"))
			lf = p->function[i];
	}
	CHECK(lf && !strcmp(str(p, lf->filename), "/src/app.c"),
	      "log_line's file");
	/* write, read, the 6 logger frames, main's other return address,
	 * rawf's 2 unnamed (its __write is logger's), evil's
	 */
	CHECK(p->n_location == 12, "%zu locations", p->n_location);
	for (size_t i = 0; i < p->n_location; i++)
		CHECK(p->location[i]->id == i + 1,
		      "location %zu has id %" PRIu64, i, p->location[i]->id);
	/* app (the program: id 1), libc.so.6, m\to */
	CHECK(p->n_mapping == 3, "%zu mappings", p->n_mapping);
	CHECK_STR(mapping_file(p, 1), "app", "the first mapping");
	CHECK(!p->mapping[0]->has_functions, "app has an unnamed frame");
	CHECK_STR(mapping_file(p, 2), "libc.so.6", "mapping 2");
	CHECK(p->mapping[1]->has_functions, "libc's frames are all named");
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* Served (the daemon's endpoint): every mapping says its functions are
 * named, app's unnamed frame too, so that go tool pprof asks the server
 * for no symbols (Debian 12's POSTs to /debug/pprof/symbol and fails on
 * the daemon's 405 when a mapping says otherwise).
 */
static void test_served_asks_for_no_symbols(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct pprof_opts o = { .served = true };
	uint8_t *buf;
	size_t len;
	pb_profile *p;

	(void)state;
	assert_int_equal(pprof_encode(m, &o, &buf, &len), 0);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	CHECK(p && p->n_mapping == 3, "the profile's mappings");
	for (size_t i = 0; i < p->n_mapping; i++)
		CHECK(p->mapping[i]->has_functions, "mapping %zu: %s", i,
		      mapping_file(p, p->mapping[i]->id));
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* A syscall made once, whose call was sampled (1 in PERIOD on average:
 * it happens), is one call and its own time, not PERIOD calls of it: a
 * 300 ms sleep before exit beside 10000 writes of 1 µs (100 samples) is
 * 3% of the time, not 86%. A syscall the model has fewer calls of than
 * samples (its rows were not kept) falls back to PERIOD calls a sample.
 */
static void test_weights_add_up_to_the_calls(void **state)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats wr = { .calls = 10000, .total_ns = 10000000 };
	struct sc_stats sl = { .calls = 1, .total_ns = 300000000 };
	int64_t calls[3] = {}, ns[3] = {};
	pb_profile *pb;

	(void)state;
	assert_non_null(p);
	assert_int_equal(model_proc_add(p, 0, WRITE, &wr), 0);
	assert_int_equal(model_proc_add(p, 0, 230, &sl), 0);
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(PERIOD);
	assert_non_null(m->stacks);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", logger, 6, 60),
			 0);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", rawf, 3, 40),
			 0);
	assert_int_equal(stacks_add(m->stacks, 230, 0, "app", rawf, 3, 1), 0);
	/* read: sampled, never counted */
	assert_int_equal(stacks_add(m->stacks, READ, 0, "app", rawf, 3, 2), 0);
	pb = decode(m, 0);
	CHECK(pb->n_sample == 4, "%zu samples", pb->n_sample);
	for (size_t i = 0; i < pb->n_sample; i++) {
		const char *leaf = loc_name(pb, pb->sample[i]->location_id[0]);
		int k = !strcmp(leaf, "write") ? 0 :
			!strcmp(leaf, "read")  ? 1 :
						 2;

		calls[k] += pb->sample[i]->value[0];
		ns[k] += pb->sample[i]->value[1];
	}
	CHECK(calls[0] == 10000 && ns[0] == 10000000,
	      "write: %" PRId64 " calls, %" PRId64 " ns", calls[0], ns[0]);
	CHECK(calls[2] == 1 && ns[2] == 300000000,
	      "the sleep: %" PRId64 " calls, %" PRId64 " ns", calls[2], ns[2]);
	CHECK(calls[1] == 2 * PERIOD && ns[1] == 0,
	      "read: %" PRId64 " calls, %" PRId64 " ns", calls[1], ns[1]);
	perftools__profiles__profile__free_unpacked(pb, NULL);
	model_free(m);
}

/* The daemon's sampled mode: every call counted, 1 in 100 timed (the
 * histogram holds those), so the mean is over the timed calls; the note
 * is one more comment.
 */
static void test_sampled_latency(void **state)
{
	struct sc_model *m = model_new();
	struct sc_proc *p = model_proc(m, 10, 1, 0);
	struct sc_stats wr = { .calls = 10000, .total_ns = 1000000 };
	struct pprof_opts o = { .note = "stacks: in the windows\x01" };
	int64_t calls = 0, ns = 0;
	bool noted = false;
	pb_profile *pb;
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_non_null(p);
	wr.hist[10] = 60;
	wr.hist[12] = 40;
	assert_int_equal(model_proc_add(p, 0, WRITE, &wr), 0);
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(PERIOD);
	assert_non_null(m->stacks);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", logger, 6, 3),
			 0);
	assert_int_equal(stacks_add(m->stacks, WRITE, 0, "app", rawf, 3, 1), 0);
	assert_int_equal(pprof_encode(m, &o, &buf, &len), 0);
	pb = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	CHECK(pb, "protobuf-c cannot unpack the profile");
	for (size_t i = 0; i < pb->n_sample; i++) {
		calls += pb->sample[i]->value[0];
		ns += pb->sample[i]->value[1];
	}
	/* 10000 calls, 10 us each: 1 ms over the 100 timed */
	CHECK(calls == 10000 && ns == 100000000,
	      "write: %" PRId64 " calls, %" PRId64 " ns", calls, ns);
	for (size_t i = 0; i < pb->n_comment; i++)
		noted |= !strcmp(str(pb, pb->comment[i]),
				 "stacks: in the windows\\x01");
	CHECK(noted, "the note is not a comment (escaped)");
	perftools__profiles__profile__free_unpacked(pb, NULL);
	model_free(m);
}

/* Enough stacks to grow every table many times. */
static void test_many_stacks(void **state)
{
	struct sc_model *m = model_new();
	char names[300][16];
	struct sc_frame fr[3];
	uint64_t total = 0, got = 0;
	pb_profile *p;

	(void)state;
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(7);
	for (int i = 0; i < 300; i++)
		snprintf(names[i], sizeof(names[i]), "f%d", i);
	/* 3000 stacks over 300 functions, each at 10 offsets */
	for (int i = 0; i < 3000; i++) {
		fr[0] = (struct sc_frame){ .func = names[i % 300],
					   .module = "lib",
					   .offset = (uint64_t)(i % 3000) };
		fr[1] = (struct sc_frame){ .func = names[(i / 10) % 300],
					   .module = "app",
					   .offset = 1 };
		fr[2] = (struct sc_frame){ .func = "main",
					   .module = "app",
					   .offset = 2 };
		assert_int_equal(stacks_add(m->stacks, WRITE, 0, "x", fr, 3,
					    (uint64_t)i + 1),
				 0);
		total += (uint64_t)i + 1;
	}
	p = decode(m, 0);
	CHECK(p->n_sample == 3000, "%zu samples", p->n_sample);
	/* write + f0..f299 (both frames name the same functions) + main */
	CHECK(p->n_function == 302, "%zu functions", p->n_function);
	/* write + 3000 lib offsets + f0..f299 at app+1 (one location per
	 * (mapping, address, function)) + main
	 */
	CHECK(p->n_location == 1 + 3000 + 300 + 1, "%zu locations",
	      p->n_location);
	for (size_t i = 0; i < p->n_sample; i++)
		got += (uint64_t)p->sample[i]->value[0];
	CHECK(got == total * 7, "calls %" PRIu64 ", want %" PRIu64, got,
	      total * 7);
	/* no time in the model: no nanoseconds */
	CHECK(p->sample[0]->value[1] == 0, "ns without time");
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

static void test_count_only(void **state)
{
	struct sc_model *m = model_with_stacks();
	pb_profile *p;
	bool said = false;

	(void)state;
	m->meta.count_only = true;
	p = decode(m, 0);
	for (size_t i = 0; i < p->n_sample; i++)
		CHECK(p->sample[i]->value[1] == 0, "ns with --count-only");
	CHECK_STR(str(p, p->default_sample_type), "calls",
		  "default sample type without time");
	for (size_t i = 0; i < p->n_comment; i++)
		said |= strstr(str(p, p->comment[i]), "--count-only") != 0;
	CHECK(said, "no comment says why there is no time");
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* pprof_write: gzip (magic 1f 8b) of exactly what pprof_encode makes. */
static void test_gzip(void **state)
{
	struct sc_model *m = model_with_stacks();
	struct pprof_opts o = { .time_ns = 5 };
	FILE *f = tmpfile();
	uint8_t *want, *gz, *got;
	size_t wlen, glen;
	z_stream z = {};
	long n;

	(void)state;
	assert_non_null(f);
	assert_int_equal(pprof_encode(m, &o, &want, &wlen), 0);
	assert_int_equal(pprof_write(f, m, &o), 0);
	n = ftell(f);
	assert_true(n > 18);
	gz = malloc((size_t)n);
	got = malloc(wlen + 1);
	assert_non_null(gz);
	assert_non_null(got);
	rewind(f);
	assert_int_equal(fread(gz, 1, (size_t)n, f), (size_t)n);
	fclose(f);
	CHECK(gz[0] == 0x1f && gz[1] == 0x8b, "not gzip: %02x %02x", gz[0],
	      gz[1]);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = gz;
	z.avail_in = (uInt)n;
	z.next_out = got;
	z.avail_out = (uInt)wlen + 1;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END, "gzip stream not ended");
	glen = z.total_out;
	CHECK(z.avail_in == 0, "%u bytes after the gzip stream", z.avail_in);
	inflateEnd(&z);
	CHECK(glen == wlen && !memcmp(got, want, wlen),
	      "gunzipped %zu bytes, encoded %zu", glen, wlen);
	free(gz);
	free(got);
	free(want);
	model_free(m);
}

/* --stacks-by blocked: read, 10 calls blocked 900 ns (90 a call), two
 * samples of 2 µs each asleep in the pipe's read function: leaf first the
 * kernel frames in the [kernel] mapping, innermost first, then the
 * syscall, then the user frames; blocked-nanoseconds measured, calls
 * that time over 90 ns.
 */
static void test_blocked(void **state)
{
	static const struct sc_frame kf[] = {
		{ .func = "anon_pipe_read", .module = STACK_KERNEL_MODULE },
		{ .func = "vfs_read", .module = STACK_KERNEL_MODULE },
	};
	struct sc_model *m = model_new();
	struct sc_proc *pr = model_proc(m, 10, 1, 0);
	struct sc_stats rd = { .calls = 10,
			       .total_ns = 1000,
			       .blocked_ns = 900 };
	const Perftools__Profiles__Sample *sa;
	bool said = false;
	pb_profile *p;

	(void)state;
	assert_non_null(pr);
	assert_int_equal(model_proc_add(pr, 0, READ, &rd), 0);
	assert_int_equal(model_finalize(m), 0);
	m->stacks = stacks_new(2);
	m->stacks->by = SC_STACKS_BY_BLOCKED;
	assert_int_equal(stacks_add_kernel(m->stacks, READ, 0, "app", rawf, 3,
					   kf, 2, 1),
			 0);
	p = decode(m, 0);
	CHECK_STR(str(p, p->sample_type[1]->type), "blocked-nanoseconds",
		  "type 1");
	CHECK_STR(str(p, p->default_sample_type), "blocked-nanoseconds",
		  "default sample type");
	CHECK(p->n_sample == 1, "%zu samples", p->n_sample);
	sa = p->sample[0];
	CHECK(sa->n_location_id == 2 + 1 + 3, "%zu locations",
	      sa->n_location_id);
	CHECK_STR(loc_name(p, sa->location_id[0]), "anon_pipe_read", "leaf");
	CHECK_STR(loc_name(p, sa->location_id[1]), "vfs_read", "kernel 1");
	CHECK_STR(mapping_file(p, loc(p, sa->location_id[0])->mapping_id),
		  "[kernel]", "kernel mapping");
	CHECK_STR(loc_name(p, sa->location_id[2]), "read", "the syscall");
	CHECK(!loc(p, sa->location_id[2])->mapping_id, "syscall unmapped");
	CHECK_STR(loc_name(p, sa->location_id[3]), "__write", "user leaf");
	CHECK(sa->value[1] == 2000, "%" PRId64 " blocked ns", sa->value[1]);
	CHECK(sa->value[0] == llround(2000.0 / 90.0), "%" PRId64 " calls",
	      sa->value[0]);
	for (size_t i = 0; i < p->n_comment; i++)
		said |= strstr(str(p, p->comment[i]),
			       "blocked-nanoseconds: sampled by blocked time") !=
			NULL;
	CHECK(said, "no comment says the weighting");
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

/* The label value of key in a sample, or NULL. */
static const char *label_of(const pb_profile *p,
			    const Perftools__Profiles__Sample *sa,
			    const char *key)
{
	for (size_t i = 0; i < sa->n_label; i++)
		if (!strcmp(str(p, sa->label[i]->key), key))
			return str(p, sa->label[i]->str);
	return NULL;
}

/* --labels unit,comm,cgroup,container: comm, then the others in their
 * order, from each stack's cgroup as group_value has them; a stack of a
 * process whose cgroup was not read gets "" (as a process without one
 * does in /metrics); the same stack in two cgroups is two samples.
 */
static void test_labels(void **state)
{
	static const char *cg_a = "/system.slice/a.service",
			  *cg_d = "/system.slice/docker-"
				  "0123456789abcdef0123.scope";
	struct group_by by;
	const char *bad;
	struct sc_model *m = model_new();
	struct pprof_opts o = { .labels = &by };
	uint8_t *buf;
	size_t len;
	pb_profile *p;
	bool seen[3] = {};

	(void)state;
	assert_int_equal(group_parse("unit,comm,cgroup,container", &by, &bad),
			 0);
	assert_non_null(m);
	m->stacks = stacks_new(PERIOD);
	assert_non_null(m->stacks);
	assert_int_equal(stacks_add_in_cgroup(m->stacks, WRITE, 0, "app", cg_a,
					      rawf, 3, NULL, 0, 2),
			 0);
	assert_int_equal(stacks_add_in_cgroup(m->stacks, WRITE, 0, "app", cg_d,
					      rawf, 3, NULL, 0, 4),
			 0);
	assert_int_equal(stacks_add_in_cgroup(m->stacks, WRITE, 0, "app", NULL,
					      rawf, 3, NULL, 0, 5),
			 0);
	assert_int_equal(stacks_add_in_cgroup(m->stacks, WRITE, 0, "app", cg_a,
					      rawf, 3, NULL, 0, 1),
			 0);
	CHECK(m->stacks->n == 3, "%zu stacks, not 3", m->stacks->n);
	assert_int_equal(pprof_encode(m, &o, &buf, &len), 0);
	p = perftools__profiles__profile__unpack(NULL, len, buf);
	free(buf);
	CHECK(p, "protobuf-c cannot unpack the profile");
	CHECK(p->n_sample == 3, "%zu samples", p->n_sample);
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sa = p->sample[i];
		int64_t calls = sa->value[0];

		CHECK(sa->n_label == 4, "sample %zu: %zu labels", i,
		      sa->n_label);
		CHECK_STR(str(p, sa->label[0]->key), "comm", "first label");
		CHECK_STR(str(p, sa->label[1]->key), "unit", "second label");
		CHECK_STR(label_of(p, sa, "comm"), "app", "comm");
		if (calls == 4 * PERIOD) {
			seen[0] = true;
			CHECK_STR(label_of(p, sa, "unit"),
				  "docker-0123456789abcdef0123.scope", "unit");
			CHECK_STR(label_of(p, sa, "cgroup"), cg_d, "cgroup");
			CHECK_STR(label_of(p, sa, "container"),
				  "0123456789abcdef0123", "container");
		} else if (calls == 5 * PERIOD) {
			seen[1] = true;
			CHECK_STR(label_of(p, sa, "unit"), "", "unknown unit");
			CHECK_STR(label_of(p, sa, "cgroup"), "", "unknown");
			CHECK_STR(label_of(p, sa, "container"), "", "unknown");
		} else {
			seen[2] = calls == 3 * PERIOD; /* 2 + 1 */
			CHECK_STR(label_of(p, sa, "unit"), "a.service", "unit");
			CHECK_STR(label_of(p, sa, "cgroup"), cg_a, "cgroup");
			CHECK_STR(label_of(p, sa, "container"), "",
				  "container");
		}
	}
	CHECK(seen[0] && seen[1] && seen[2], "samples %d %d %d", seen[0],
	      seen[1], seen[2]);
	perftools__profiles__profile__free_unpacked(p, NULL);
	model_free(m);
}

static void test_no_stacks(void **state)
{
	struct sc_model *m = model_new();
	struct pprof_opts o = {};
	uint8_t *buf;
	size_t len;

	(void)state;
	assert_int_equal(model_finalize(m), 0);
	assert_int_equal(pprof_encode(m, &o, &buf, &len), -EINVAL);
	CHECK(!buf && !len, "a buffer without stacks");
	model_free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_types_period_and_comments),
		cmocka_unit_test(test_samples_are_the_stacks),
		cmocka_unit_test(test_ids_and_dedupe),
		cmocka_unit_test(test_served_asks_for_no_symbols),
		cmocka_unit_test(test_weights_add_up_to_the_calls),
		cmocka_unit_test(test_sampled_latency),
		cmocka_unit_test(test_many_stacks),
		cmocka_unit_test(test_count_only),
		cmocka_unit_test(test_gzip),
		cmocka_unit_test(test_blocked),
		cmocka_unit_test(test_labels),
		cmocka_unit_test(test_no_stacks),
	};

	unit_init();
	return cmocka_run_group_tests(tests, NULL, NULL);
}
