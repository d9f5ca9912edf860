// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* Rendering a calibration, and reading one back from its JSON. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "render/calib_report.h"
#include "render/jsonw.h"
#include "util/escape.h"

#define NAME_W 24

/* The loop a result is compared with, NULL: none (or not in the catalogue). */
static const char *versus_of(const char *name)
{
	int i = cal_find_loop(name);

	return i < 0 ? NULL : cal_loop((size_t)i)->versus;
}

void calib_compare(const struct calibration *c, const struct cal_loop_result *r,
		   struct cal_compare *out)
{
	const char *versus = versus_of(r->name);
	const struct cal_loop_result *v;

	memset(out, 0, sizeof(*out));
	if (!strcmp(r->name, CAL_FLOOR_LOOP)) {
		out->is_floor = true;
		return;
	}
	v = calibration__loop(c, versus ? versus : CAL_FLOOR_LOOP);
	if (!v || v->ns_per_call <= 0)
		return;
	out->versus = v->name;
	if (r->bytes_per_call && v->bytes_per_call &&
	    r->bytes_per_call != v->bytes_per_call) {
		if (cal_ns_per_byte(v) <= 0)
			return;
		out->per_byte = true;
		out->ratio = cal_ns_per_byte(r) / cal_ns_per_byte(v);
	} else {
		out->ratio = r->ns_per_call / v->ns_per_call;
	}
}

/* "121.3", "5301": ns with a decimal while it means something. */
static void fmt_ns(char *buf, size_t len, double ns)
{
	snprintf(buf, len, ns < 1000 ? "%.1f" : "%.0f", ns);
}

/* "3.2x", "41x", "3200x" */
static void fmt_ratio(char *buf, size_t len, double r)
{
	snprintf(buf, len, r < 10 ? "%.2gx" : "%.0fx", r);
	if (r < 10 && r >= 1 && !strchr(buf, '.'))
		snprintf(buf, len, "%.1fx", r);
}

static void compare_text(const struct cal_compare *k, char *buf, size_t len)
{
	char r[32];

	if (k->is_floor) {
		snprintf(buf, len, "the floor: one kernel crossing");
		return;
	}
	if (!k->versus || k->ratio <= 0) {
		snprintf(buf, len, "-");
		return;
	}
	if (!strcmp(k->versus, CAL_FLOOR_LOOP)) {
		fmt_ratio(r, sizeof(r), k->ratio);
		snprintf(buf, len, "%s the floor", r);
		return;
	}
	fmt_ratio(r, sizeof(r), k->ratio >= 1 ? k->ratio : 1 / k->ratio);
	snprintf(buf, len, "%s %s%s than %s", r,
		 k->ratio >= 1 ? "dearer" : "cheaper",
		 k->per_byte ? " per byte" : "", k->versus);
}

/* Text read from the machine (/proc, /sys), escaped for a terminal. */
static void put_text(FILE *f, const char *s)
{
	char *e = esc_text(s, strlen(s));

	if (e)
		fputs(e, f);
	free(e);
}

static void print_machine(FILE *f, const struct calibration *c)
{
	const struct machine_info *m = &c->machine;
	size_t quiet = 0;

	fputs("Machine: ", f);
	put_text(f, m->cpu_model ? m->cpu_model : "unknown CPU");
	fprintf(f, ", %d CPU%s, Linux ", m->cpus, m->cpus == 1 ? "" : "s");
	put_text(f, m->kernel ? m->kernel : "?");
	if (m->clocksource) {
		fputs(", clock source ", f);
		put_text(f, m->clocksource);
	}
	fputc('\n', f);
	fprintf(f, "Measured: %s run, %u runs per loop, ",
		c->quick ? "quick" : "full", c->nloops ? c->loops[0].runs : 0);
	if (c->pinned_cpu >= 0)
		fprintf(f, "pinned to CPU %d", c->pinned_cpu);
	else
		fprintf(f, "not pinned");
	fprintf(f, "; an empty loop's %.2f ns per iteration taken off\n",
		c->loop_overhead_ns);

	fputs("Mitigations:", f);
	for (size_t i = 0; i < m->nmitigations; i++) {
		const struct mitigation *mi = &m->mitigations[i];

		if (machine_mitigation_inactive(mi->state)) {
			quiet++;
			continue;
		}
		fputs("\n  ", f);
		put_text(f, mi->name);
		fputs(": ", f);
		put_text(f, mi->state);
	}
	if (!m->nmitigations)
		fputs(" unknown (no /sys/devices/system/cpu/vulnerabilities)",
		      f);
	else if (quiet)
		fprintf(f, "\n  %zu more: not affected", quiet);
	fputc('\n', f);
	if (m->syscall_tracers > 0)
		fprintf(f,
			"Note: %d other BPF program%s attached to the syscall "
			"tracepoints (another profiler\nis running): every "
			"syscall here, bare or probed, pays for %s too.\n",
			m->syscall_tracers,
			m->syscall_tracers == 1 ? " was" : "s were",
			m->syscall_tracers == 1 ? "it" : "them");
}

static void print_loops(FILE *f, const struct calibration *c)
{
	fprintf(f, "%-*s %9s %9s %9s %7s %9s  %s\n", NAME_W, "loop", "ns/call",
		"min", "max", "spread", "ns/byte", "compared");
	for (size_t i = 0; i < c->nloops; i++) {
		const struct cal_loop_result *r = &c->loops[i];
		struct cal_compare k;
		char med[32], mn[32], mx[32], nb[32], cmp[128], sp[16];

		calib_compare(c, r, &k);
		compare_text(&k, cmp, sizeof(cmp));
		fmt_ns(med, sizeof(med), r->ns_per_call);
		fmt_ns(mn, sizeof(mn), r->min_ns);
		fmt_ns(mx, sizeof(mx), r->max_ns);
		if (r->ns_per_call > 0)
			snprintf(sp, sizeof(sp), "%.0f%%",
				 100 * (r->max_ns - r->min_ns) /
					 r->ns_per_call);
		else
			snprintf(sp, sizeof(sp), "-");
		if (r->bytes_per_call && cal_ns_per_byte(r) >= 100)
			snprintf(nb, sizeof(nb), "%.0f", cal_ns_per_byte(r));
		else if (r->bytes_per_call)
			snprintf(nb, sizeof(nb), "%.3g", cal_ns_per_byte(r));
		else
			snprintf(nb, sizeof(nb), "-");
		fprintf(f, "%-*s %9s %9s %9s %7s %9s  %s\n", NAME_W, r->name,
			med, mn, mx, sp, nb, cmp);
	}
}

static void print_probe(FILE *f, const struct calibration *c)
{
	const struct cal_probe *p = &c->probe;

	if (!p->measured) {
		fputs("\nProbe effect: not measured (needs root and BPF; "
		      "probe_overhead_ns unknown)\n",
		      f);
		return;
	}
	fprintf(f,
		"\nProbe effect: the floor call takes %.1f ns bare and %.1f ns "
		"with scprof attached\n(medians of %u runs each). Paired run "
		"by run, scprof adds %.0f ns to each syscall\nof a process it "
		"profiles (probe_overhead_ns, the median difference), %.0f ns "
		"of it\ninside the latencies it reports. scprof verdict takes "
		"both off its figures.\n",
		p->bare_ns, p->probed_ns, p->pairs, p->overhead_ns,
		cal_probe_in_latency(p));
}

static const struct cal_loop_result *get(const struct calibration *c,
					 const char *name)
{
	const struct cal_loop_result *r = calibration__loop(c, name);

	return r && r->ns_per_call > 0 ? r : NULL;
}

/* The seed articles' conclusions, with this machine's numbers. */
static void print_conclusions(FILE *f, const struct calibration *c)
{
	const struct cal_loop_result *fl = get(c, CAL_FLOOR_LOOP),
				     *vd = get(c, CAL_VDSO_LOOP),
				     *r1 = get(c, "read-1B"),
				     *r64 = get(c, "read-64KiB"),
				     *rc = get(c, "read-copy-4KiB"),
				     *mc = get(c, "mmap-copy-4KiB"),
				     *g = get(c, "getrandom-16B"),
				     *gb = get(c, "getrandom-16B-buffered"),
				     *fo = get(c, "fopen-fread-fclose-16B");
	char r[32];

	fputs("\nWhat this means here:\n", f);
	if (fl && fl->ns_per_call < 1000)
		fprintf(f,
			"  - One kernel crossing costs %.0f ns: a million "
			"syscalls a second take %.0f%% of a CPU.\n",
			fl->ns_per_call, fl->ns_per_call / 10);
	else if (fl)
		fprintf(f,
			"  - One kernel crossing costs %.0f ns: a million "
			"syscalls a second would need %.2f CPUs.\n",
			fl->ns_per_call, fl->ns_per_call / 1000);
	if (fl && vd) {
		fmt_ratio(r, sizeof(r), fl->ns_per_call / vd->ns_per_call);
		fprintf(f,
			"  - clock_gettime through the vDSO takes %.0f ns: %s "
			"cheaper than crossing; calls that stay\n"
			"    in user space do not count here.\n",
			vd->ns_per_call, r);
	}
	if (r1 && r64) {
		fmt_ratio(r, sizeof(r),
			  cal_ns_per_byte(r1) / cal_ns_per_byte(r64));
		fprintf(f,
			"  - Reading 1 byte per call costs %s more per byte "
			"than 64 KiB per call: buffer small I/O.\n",
			r);
	}
	if (rc && mc) {
		double k = rc->ns_per_call / mc->ns_per_call;

		fmt_ratio(r, sizeof(r), k >= 1 ? k : 1 / k);
		fprintf(f,
			"  - Copying a warm file through mmap is %s %s than "
			"through read() in 4 KiB blocks.\n",
			r, k >= 1 ? "faster" : "slower");
	}
	if (g && gb) {
		fmt_ratio(r, sizeof(r), g->ns_per_call / gb->ns_per_call);
		fprintf(f,
			"  - A 4 KiB buffer makes 16-byte getrandom requests "
			"%s cheaper: one crossing per 256.\n",
			r);
	}
	if (g && fo) {
		fmt_ratio(r, sizeof(r), fo->ns_per_call / g->ns_per_call);
		fprintf(f,
			"  - fopen/fread/fclose per request is %s dearer than "
			"one getrandom: keep files open.\n",
			r);
	}
}

void calib_progress_show(void *ctx, size_t i, size_t n, const char *what)
{
	struct calib_progress *p = ctx;

	if (!p->on)
		return;
	fprintf(stderr, "\r\033[K%s: calibrating [%zu/%zu] %s", p->prefix,
		i + 1, n, what);
	fflush(stderr);
	p->shown = true;
}

void calib_progress_end(struct calib_progress *p)
{
	if (p->shown)
		fputs("\r\033[K", stderr);
	p->shown = false;
}

int calib_write_table(FILE *f, const struct calibration *c)
{
	print_machine(f, c);
	fputc('\n', f);
	print_loops(f, c);
	print_probe(f, c);
	print_conclusions(f, c);
	return ferror(f) ? -EIO : 0;
}

/* ---- JSON ------------------------------------------------------------ */

static struct json_object *loop_obj(const struct cal_loop_result *r)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err ?: jw_add_str(o, "name", r->name);
	err = err ?: jw_add_num(o, "ns_per_call", r->ns_per_call, 2);
	err = err ?: jw_add_num(o, "min_ns", r->min_ns, 2);
	err = err ?: jw_add_num(o, "median_ns", r->ns_per_call, 2);
	err = err ?: jw_add_num(o, "max_ns", r->max_ns, 2);
	err = err ?: jw_add_u64(o, "calls", r->calls);
	err = err ?: jw_add_u64(o, "runs", r->runs);
	if (r->bytes_per_call) {
		err = err ?: jw_add_u64(o, "bytes_per_call", r->bytes_per_call);
		err = err   ?:
			      jw_add_num(o, "ns_per_byte", cal_ns_per_byte(r),
					 -4);
	}
	return jw_done(o, err);
}

static struct json_object *machine_obj(const struct calibration *c)
{
	const struct machine_info *m = &c->machine;
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err   ?:
		      jw_add_str(o, "cpu_model",
				 m->cpu_model ? m->cpu_model : "");
	err = err ?: jw_add_str(o, "kernel", m->kernel ? m->kernel : "");
	err = err ?: jw_add_str(o, "arch", m->arch ? m->arch : "");
	err = err ?: jw_add_u64(o, "cpus", m->cpus > 0 ? (uint64_t)m->cpus : 0);
	if (m->clocksource)
		err = err ?: jw_add_str(o, "clocksource", m->clocksource);
	err = err ?: jw_add_str(o, "boot_id", m->boot_id);
	err = err ?: jw_add_int(o, "pinned_cpu", c->pinned_cpu);
	err = err ?: jw_add_int(o, "syscall_tracers", m->syscall_tracers);
	return jw_done(o, err);
}

static struct json_object *mitigations_obj(const struct machine_info *m)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	for (size_t i = 0; !err && i < m->nmitigations; i++)
		err = jw_add_str(o, m->mitigations[i].name,
				 m->mitigations[i].state);
	return jw_done(o, err);
}

static struct json_object *probe_obj(const struct cal_probe *p)
{
	struct json_object *o = json_object_new_object();
	int err = o ? 0 : -ENOMEM;

	err = err ?: jw_add_num(o, "bare_ns", p->bare_ns, 2);
	err = err ?: jw_add_num(o, "probed_ns", p->probed_ns, 2);
	err = err ?: jw_add_num(o, "reported_ns", p->reported_ns, 2);
	err = err ?: jw_add_num(o, "in_latency_ns", cal_probe_in_latency(p), 2);
	err = err ?: jw_add_u64(o, "pairs", p->pairs);
	return jw_done(o, err);
}

struct json_object *calib_to_json(const struct calibration *c)
{
	struct json_object *root = json_object_new_object(), *loops = NULL;
	int err = root ? 0 : -ENOMEM;

	err = err ?: jw_add_str(root, "version", c->version ? c->version : "");
	err = err ?: jw_add_bool(root, "quick", c->quick);
	err = err ?: jw_add_int(root, "created", c->created);
	err = err ?: jw_add(root, "machine", machine_obj(c));
	err = err ?: jw_add(root, "mitigations", mitigations_obj(&c->machine));
	err = err   ?:
		      jw_add_num(root, "loop_overhead_ns", c->loop_overhead_ns,
				 3);
	if (c->probe.measured) {
		err = err   ?:
			      jw_add_num(root, "probe_overhead_ns",
					 c->probe.overhead_ns, 2);
		err = err ?: jw_add(root, "probe", probe_obj(&c->probe));
	} else {
		err = err ?: jw_add_null(root, "probe_overhead_ns");
		err = err ?: jw_add_null(root, "probe");
	}
	err = err ?: jw_add_array(root, "loops", &loops);
	for (size_t i = 0; !err && i < c->nloops; i++)
		err = jw_push(loops, loop_obj(&c->loops[i]));
	return jw_done(root, err);
}

int calib_write_json(FILE *f, const struct calibration *c)
{
	struct json_object *root = calib_to_json(c);

	return jw_write(f, root, root ? 0 : -ENOMEM);
}

/* ---- back from JSON --------------------------------------------------- */

static char *dup_str(struct json_object *obj, const char *key)
{
	struct json_object *v = jw_get(obj, key, json_type_string);

	return v ? strdup(json_object_get_string(v)) : NULL;
}

/* A figure in ns read from a file: finite, not negative, below an hour. */
static int get_ns(struct json_object *obj, const char *key, double *out)
{
	if (jw_get_num(obj, key, out) || *out < 0 || *out > 3.6e12)
		return -EINVAL;
	return 0;
}

static int loop_from(struct json_object *o, struct cal_loop_result *r)
{
	struct json_object *name = jw_get(o, "name", json_type_string);
	int idx = name ? cal_find_loop(json_object_get_string(name)) : -1;
	double calls, runs, bytes = 0;

	if (idx < 0)
		return -ENOENT;
	memset(r, 0, sizeof(*r));
	r->name = cal_loop((size_t)idx)->name;
	if (get_ns(o, "ns_per_call", &r->ns_per_call) ||
	    get_ns(o, "min_ns", &r->min_ns) ||
	    get_ns(o, "max_ns", &r->max_ns) || jw_get_num(o, "calls", &calls) ||
	    jw_get_num(o, "runs", &runs) || calls < 0 || runs < 0 || runs > 1e6)
		return -EINVAL;
	if (!jw_get_num(o, "bytes_per_call", &bytes) &&
	    (bytes < 0 || bytes > 1e9))
		return -EINVAL;
	r->calls = (uint64_t)calls;
	r->runs = (uint32_t)runs;
	r->bytes_per_call = (uint32_t)bytes;
	return 0;
}

static int machine_from(struct json_object *root, struct calibration *c)
{
	struct json_object *m = jw_get(root, "machine", json_type_object);
	struct json_object *mit = jw_get(root, "mitigations", json_type_object);
	struct json_object *boot;
	double v;

	if (!m)
		return -EINVAL;
	c->machine.cpu_model = dup_str(m, "cpu_model");
	c->machine.kernel = dup_str(m, "kernel");
	c->machine.arch = dup_str(m, "arch");
	c->machine.clocksource = dup_str(m, "clocksource");
	if (!jw_get_num(m, "cpus", &v) && v >= 0 && v < 1e6)
		c->machine.cpus = (int)v;
	if (!jw_get_num(m, "pinned_cpu", &v) && v >= -1 && v < 1e6)
		c->pinned_cpu = (int)v;
	c->machine.syscall_tracers = -1;
	if (!jw_get_num(m, "syscall_tracers", &v) && v >= 0 && v < 1e6)
		c->machine.syscall_tracers = (int)v;
	boot = jw_get(m, "boot_id", json_type_string);
	if (boot && strlen(json_object_get_string(boot)) < MACHINE_BOOT_ID_LEN)
		strcpy(c->machine.boot_id, json_object_get_string(boot));
	if (mit) {
		json_object_object_foreach(mit, key, val)
		{
			if (!json_object_is_type(val, json_type_string))
				continue;
			if (machine_add_mitigation(&c->machine, key,
						   json_object_get_string(val)))
				return -ENOMEM;
		}
	}
	return 0;
}

static int probe_from(struct json_object *root, struct cal_probe *p)
{
	struct json_object *o = jw_get(root, "probe", json_type_object);
	double pairs;

	if (!o)
		return 0; /* not measured */
	if (get_ns(root, "probe_overhead_ns", &p->overhead_ns) ||
	    get_ns(o, "bare_ns", &p->bare_ns) ||
	    get_ns(o, "probed_ns", &p->probed_ns) ||
	    get_ns(o, "reported_ns", &p->reported_ns) ||
	    jw_get_num(o, "pairs", &pairs) || pairs < 0 || pairs > 1e6)
		return -EINVAL;
	p->pairs = (uint32_t)pairs;
	p->measured = true;
	return 0;
}

int calib_from_json(struct json_object *root, struct calibration **out)
{
	struct json_object *loops = jw_get(root, "loops", json_type_array);
	struct json_object *quick = jw_get(root, "quick", json_type_boolean);
	struct json_object *created = jw_get(root, "created", json_type_int);
	struct calibration *c;
	size_t n;
	int err;

	*out = NULL;
	if (!loops || !quick)
		return -EINVAL;
	c = calibration__new();
	if (!c)
		return -ENOMEM;
	free(c->version);
	c->version = dup_str(root, "version");
	c->quick = json_object_get_boolean(quick);
	c->created = created ? json_object_get_int64(created) : 0;
	if (get_ns(root, "loop_overhead_ns", &c->loop_overhead_ns)) {
		err = -EINVAL;
		goto err;
	}
	err = machine_from(root, c);
	if (err)
		goto err;
	err = probe_from(root, &c->probe);
	if (err)
		goto err;
	n = json_object_array_length(loops);
	c->loops = calloc(n ? n : 1, sizeof(*c->loops));
	if (!c->loops) {
		err = -ENOMEM;
		goto err;
	}
	for (size_t i = 0; i < n; i++) {
		struct cal_loop_result *r = &c->loops[c->nloops];

		err = loop_from(json_object_array_get_idx(loops, i), r);
		if (err == -ENOENT)
			continue;
		if (err)
			goto err;
		if (calibration__loop(c, r->name))
			continue; /* a repeated name: keep the first */
		c->nloops++;
	}
	*out = c;
	return 0;
err:
	calibration__free(c);
	return err;
}
