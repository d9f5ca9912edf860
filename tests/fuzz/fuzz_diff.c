// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/*
 * libFuzzer target for scprof diff's inputs, which come from files anyone
 * may have written: the input is two texts (the first byte says where the
 * second starts), each read as a JSON report and as folded stacks; what
 * reads is compared and printed every way.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyze/diff.h"
#include "analyze/diff_input.h"
#include "analyze/diff_load.h"
#include "analyze/diff_stacks.h"
#include "render/diff_report.h"
#include "render/flamegraph.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static FILE *sink(char **buf, size_t *len)
{
	return open_memstream(buf, len);
}

static void reports(const char *t[2], const size_t n[2])
{
	struct diff_opts o = { .min_change_pct = DIFF_MIN_CHANGE_PCT };
	struct diff_report_opts ro = { .verbose = n[0] & 1 };
	struct diff_run *r[2] = {};
	struct diff_result *res = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	if (diff_run_parse(t[0], n[0], "a", &r[0]) ||
	    diff_run_parse(t[1], n[1], "b", &r[1]) ||
	    diff_compare(r[0], r[1], &o, &res))
		goto out;
	f = sink(&buf, &len);
	if (f) {
		diff_write_table(f, res, &ro);
		diff_write_json(f, res);
		fclose(f);
	}
	free(buf);
out:
	diff_result_free(res);
	diff_run_free(r[0]);
	diff_run_free(r[1]);
}

static void stacks(const char *t[2], const size_t n[2])
{
	struct diff_opts o = { .min_change_pct = DIFF_MIN_CHANGE_PCT };
	struct folded_file f[2] = {};
	struct stack_diff *d = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *out;

	if (folded_parse(t[0], n[0], "a", &f[0]) ||
	    folded_parse(t[1], n[1], "b", &f[1]) ||
	    diff_stacks(&f[0], &f[1], &o, &d))
		goto out;
	out = sink(&buf, &len);
	if (out) {
		diff_write_folded(out, d);
		flamegraph_diff_svg(out, d, "t");
		fclose(out);
	}
	free(buf);
out:
	stack_diff_free(d);
	folded_free(&f[0]);
	folded_free(&f[1]);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *a, *b;
	const char *t[2];
	size_t n[2], cut;

	if (!size)
		return 0;
	cut = 1 + (size - 1) * data[0] / 255;
	n[0] = cut - 1;
	n[1] = size - cut;
	a = malloc(n[0] + 1);
	b = malloc(n[1] + 1);
	if (a && b) {
		memcpy(a, data + 1, n[0]);
		memcpy(b, data + cut, n[1]);
		a[n[0]] = b[n[1]] = '\0';
		t[0] = a;
		t[1] = b;
		diff_sniff(a, n[0]);
		reports(t, n);
		stacks(t, n);
	}
	free(a);
	free(b);
	return 0;
}
