// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>

#include "render/facility_report.h"
#include "render/jsonw.h"

static const char *state(const struct sc_facility *r)
{
	return r->present    ? "yes" :
	       r->forced_off ? "no (SCPROF_WITHOUT)" :
			       "no";
}

static int table(FILE *f, const struct sc_facilities *fs)
{
	fprintf(f, "kernel %s: the %s build of the BPF programs runs\n\n",
		fs->kernel, fs->legacy ? "legacy" : "default");
	fprintf(f, "%-13s %-6s %-20s %s\n", "FACILITY", "SINCE", "HERE",
		"WHAT");
	for (unsigned int i = 0; i < fs->n; i++) {
		const struct sc_facility *r = &fs->rows[i];

		fprintf(f, "%-13s %-6s %-20s %s\n", r->name, r->since, state(r),
			r->what);
	}
	fputs("\nWithout them (the legacy build, or \"either build\"):\n", f);
	for (unsigned int i = 0; i < fs->n; i++)
		fprintf(f, "  %-13s %s%s\n", fs->rows[i].name,
			fs->rows[i].optional ? "(either build) " : "",
			fs->rows[i].without);
	fputs("\nHow each is told:\n", f);
	for (unsigned int i = 0; i < fs->n; i++)
		fprintf(f, "  %-13s %s\n", fs->rows[i].name, fs->rows[i].probe);
	return ferror(f) ? -EIO : 0;
}

static int json(FILE *f, const struct sc_facilities *fs)
{
	struct json_object *root = json_object_new_object(), *arr = NULL;
	int err = root ? 0 : -ENOMEM;

	err = err ?: jw_add_str(root, "kernel", fs->kernel);
	err = err   ?:
		      jw_add_str(root, "build",
				 fs->legacy ? "legacy" : "default");
	err = err ?: jw_add_array(root, "facilities", &arr);
	for (unsigned int i = 0; !err && i < fs->n; i++) {
		const struct sc_facility *r = &fs->rows[i];
		struct json_object *o = json_object_new_object();

		err = o ? 0 : -ENOMEM;
		err = err ?: jw_add_str(o, "name", r->name);
		err = err ?: jw_add_str(o, "what", r->what);
		err = err ?: jw_add_str(o, "since", r->since);
		err = err ?: jw_add_bool(o, "present", r->present);
		err = err ?: jw_add_bool(o, "forced_off", r->forced_off);
		err = err ?: jw_add_bool(o, "optional", r->optional);
		err = err ?: jw_add_str(o, "probe", r->probe);
		err = err ?: jw_add_str(o, "without", r->without);
		err = jw_push(arr, jw_done(o, err)) ?: err;
	}
	return jw_write(f, root, err);
}

int facility_report(FILE *f, const struct sc_facilities *fs,
		    enum report_format format)
{
	return format == REPORT_JSON ? json(f, fs) : table(f, fs);
}
