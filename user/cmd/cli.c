// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cmd/cli.h"
#include "render/columns.h"
#include "util/log.h"
#include "util/strlist.h"

int cli_parse_u64(const char *s, uint64_t min, uint64_t max, uint64_t *out)
{
	unsigned long long v;
	char *end;

	/* strtoull accepts leading space and a minus sign: refuse both. */
	if (!s || *s < '0' || *s > '9')
		return -EINVAL;
	errno = 0;
	v = strtoull(s, &end, 10);
	if (*end)
		return -EINVAL;
	if (errno == ERANGE || v < min || v > max)
		return -ERANGE;
	*out = v;
	return 0;
}

int cli_parse_seconds(const char *s, double *out)
{
	double v;
	char *end;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	/* strtod also reads hexadecimal ("0x10", "0x1p3"): decimal only. */
	if (s[strspn(s, "0123456789.eE+-")])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v <= 0 || v > 1e9)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_number(const char *s, double min, double max, double *out)
{
	double v;
	char *end;

	if (!s || !((*s >= '0' && *s <= '9') || *s == '.'))
		return -EINVAL;
	if (s[strspn(s, "0123456789.eE+-")])
		return -EINVAL;
	errno = 0;
	v = strtod(s, &end);
	if (*end || errno || !isfinite(v) || v < min || v > max)
		return -EINVAL;
	*out = v;
	return 0;
}

int cli_parse_duration_ns(const char *s, uint64_t *out)
{
	static const struct {
		const char *unit;
		double ns;
	} units[] = {
		{ "ns", 1 },   { "us", 1e3 }, { "\u00b5s", 1e3 },
		{ "ms", 1e6 }, { "s", 1e9 },  { "m", 60e9 },
	};
	size_t digits;
	char num[64];
	double v;

	if (!s)
		return -EINVAL;
	digits = strspn(s, "0123456789.");
	if (!digits || digits >= sizeof(num))
		return -EINVAL;
	memcpy(num, s, digits);
	num[digits] = '\0';
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
		if (strcmp(s + digits, units[i].unit))
			continue;
		if (cli_parse_number(num, 0, 1e12, &v))
			return -EINVAL;
		v *= units[i].ns;
		if (v < 1 || v > 1e18)
			return -ERANGE;
		*out = (uint64_t)v;
		return 0;
	}
	return -EINVAL;
}

int cli_parse_pids(const char *s, pid_t **pids, size_t *n, const char **bad)
{
	const char *pos = s, *item;
	size_t cap = 0, len;

	*pids = NULL;
	*n = 0;
	while (strlist_next(&pos, &item, &len)) {
		char buf[24];
		uint64_t v;

		*bad = item;
		if (!len || strlist_copy(item, len, buf, sizeof(buf)) ||
		    cli_parse_u64(buf, 1, CLI_PID_MAX, &v))
			return -EINVAL;
		if (*n == cap) {
			size_t ncap = cap ? cap * 2 : 4;
			pid_t *tmp = realloc(*pids, ncap * sizeof(*tmp));

			if (!tmp)
				return -ENOMEM;
			*pids = tmp;
			cap = ncap;
		}
		(*pids)[(*n)++] = (pid_t)v;
	}
	return 0;
}

int cli_error(const struct cli_cmd *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "%s: ", cmd->prog);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, " (see %s --help)\n", cmd->prog);
	return EXIT_USAGE;
}

/* Record the kind of target; two different kinds are a usage error. */
static int set_kind(const struct cli_cmd *cmd, struct target_spec *t,
		    enum target_kind k)
{
	if (t->kind != TARGET_NONE && t->kind != k)
		return cli_error(cmd, "choose one target: %s",
				 cmd->takes_command ?
					 "a command, -p, --cgroup or -a" :
					 "-a, -p or --cgroup");
	t->kind = k;
	return 0;
}

/* -p, -a, --cgroup, -f, --max-entries, --max-procs; -ENOENT: not one. */
static int target_option(const struct cli_cmd *cmd, int c, const char *arg,
			 struct target_spec *t)
{
	const char *bad;
	uint64_t v;
	int err;

	switch (c) {
	case 'p':
		if (set_kind(cmd, t, TARGET_PIDS))
			return EXIT_USAGE;
		free(t->pids);
		err = cli_parse_pids(arg, &t->pids, &t->npids, &bad);
		if (err == -ENOMEM)
			return cli_error(cmd, "out of memory");
		if (err)
			return cli_error(cmd, "invalid PID '%.*s' in -p %s",
					 (int)strlist_len(bad), bad, arg);
		return 0;
	case 'a':
		return set_kind(cmd, t, TARGET_ALL);
	case CLI_OPT_CGROUP:
		if (set_kind(cmd, t, TARGET_CGROUP))
			return EXIT_USAGE;
		t->cgroup = arg;
		return 0;
	case 'f':
		t->follow = true;
		return 0;
	case CLI_OPT_MAX_ENTRIES:
	case CLI_OPT_MAX_PROCS:
		if (cli_parse_u64(arg, 1, 1U << 24, &v))
			return cli_error(cmd,
					 "invalid %s '%s': expected a "
					 "number from 1 to 16777216",
					 c == CLI_OPT_MAX_ENTRIES ?
						 "--max-entries" :
						 "--max-procs",
					 arg);
		if (c == CLI_OPT_MAX_ENTRIES)
			t->max_stats = (uint32_t)v;
		else
			t->max_procs = (uint32_t)v;
		return 0;
	default:
		return -ENOENT;
	}
}

/*
 * An option every subcommand shares — the target options (when t is not
 * NULL), -v, -q, -h — or getopt's report of a missing value or an unknown
 * option. 0 when handled, 1 after --help, EXIT_USAGE after a one-line
 * error (an unknown option included).
 */
static int shared_option(const struct cli_cmd *cmd, int c, char **argv,
			 struct target_spec *t, int *verbosity)
{
	int err;

	if (t) {
		err = target_option(cmd, c, optarg, t);
		if (err != -ENOENT)
			return err;
	}
	switch (c) {
	case 'v':
		(*verbosity)++;
		return 0;
	case 'q':
		*verbosity = LOG_ERROR;
		return 0;
	case 'h':
		cmd->usage(stdout);
		return 1;
	case ':':
		return cli_error(cmd, "option '%s' needs a value",
				 argv[optind - 1]);
	default:
		/* glibc reports a value given to a long option that takes
		 * none ("--all=1") with that option's own code.
		 */
		if (optopt && optopt != ':' && optopt != '+' &&
		    (optopt >= 256 || strchr(cmd->short_opts, optopt)))
			return cli_error(cmd, "option '%s' takes no value",
					 argv[optind - 1]);
		if (optopt && optopt < 256)
			return cli_error(cmd, "unknown option '-%c'", optopt);
		return cli_error(cmd, "unknown option '%s'", argv[optind - 1]);
	}
}

int cli_format_option(const struct cli_cmd *cmd, const char *arg, bool csv_ok,
		      enum report_format *out)
{
	if (!strcmp(arg, "table"))
		*out = REPORT_TABLE;
	else if (!strcmp(arg, "json"))
		*out = REPORT_JSON;
	else if (csv_ok && !strcmp(arg, "csv"))
		*out = REPORT_CSV;
	else
		return cli_error(cmd, "unknown format '%s': expected %s", arg,
				 csv_ok ? "table, json or csv" :
					  "table or json");
	return 0;
}

int cli_file_option(const struct cli_cmd *cmd, const char *arg,
		    const char *what, const char **out)
{
	if (!*arg)
		return cli_error(cmd, "empty %s file name", what);
	*out = arg;
	return 0;
}

int cli_kept_file_option(const struct cli_cmd *cmd, const char *arg,
			 const char *opt, const char **out)
{
	if (!*arg)
		return cli_error(cmd, "empty %s file name", opt);
	if (!strcmp(arg, "-"))
		return cli_error(cmd,
				 "%s names a file scprof keeps, not standard "
				 "output: '-' cannot be one (./- is a file "
				 "called -)",
				 opt);
	*out = arg;
	return 0;
}

int cli_slow_option(const struct cli_cmd *cmd, const char *arg,
		    uint64_t *out_ns)
{
	if (cli_parse_duration_ns(arg, out_ns))
		return cli_error(cmd,
				 "invalid --slow '%s': expected a duration "
				 "with its unit, e.g. 10ms, 1.5s or 200us",
				 arg);
	return 0;
}

int cli_calib_option(const struct cli_cmd *cmd, int c, const char *arg,
		     struct cli_calib_opts *o)
{
	switch (c) {
	case CLI_OPT_FORMAT:
		return cli_format_option(cmd, arg, false, &o->format);
	case 'o':
		return cli_file_option(cmd, arg, "output", &o->output);
	case CLI_OPT_CACHE:
		return cli_kept_file_option(cmd, arg, "--cache", &o->cache);
	default:
		return -ENOENT;
	}
}

int cli_ratio(const struct cli_cmd *cmd, const char *opt, const char *arg,
	      double *out)
{
	if (cli_parse_number(arg, 0, 1, out))
		return cli_error(
			cmd, "invalid %s '%s': expected a ratio from 0 to 1",
			opt, arg);
	return 0;
}

int cli_duration(const struct cli_cmd *cmd, const char *arg, double *out)
{
	if (cli_parse_seconds(arg, out))
		return cli_error(cmd,
				 "invalid duration '%s': expected a number of "
				 "seconds > 0",
				 arg);
	return 0;
}

/* After parsing: default the kind, check -f. 0 or EXIT_USAGE. */
static int target_finish(const struct cli_cmd *cmd, struct target_spec *t,
			 enum target_kind dflt)
{
	if (t->kind == TARGET_NONE)
		t->kind = dflt;
	if (t->kind == TARGET_NONE)
		return cli_error(cmd, "nothing to profile: give a command, -p "
				      "PID, --cgroup PATH or -a");
	if (t->follow && t->kind != TARGET_PIDS && t->kind != TARGET_CMD)
		return cli_error(cmd, cmd->takes_command ?
					      "-f applies to a command or -p "
					      "targets only" :
					      "-f applies to -p targets only");
	return 0;
}

/* The arguments after the options: a command to run, or an error. */
static int rest_args(const struct cli_cmd *cmd, int argc, char **argv,
		     const struct cli_shared *sh)
{
	if (cmd->operands) {
		if (argc - optind != cmd->operands)
			return cli_error(cmd, "expected %s",
					 cmd->operands_usage);
		*sh->operands = &argv[optind];
		return 0;
	}
	if (optind >= argc)
		return 0;
	if (cmd->takes_command) {
		if (set_kind(cmd, sh->target, TARGET_CMD))
			return EXIT_USAGE;
		*sh->command = &argv[optind];
		return 0;
	}
	if (cmd->stray_hint)
		return cli_error(cmd, "unexpected argument '%s': %s",
				 argv[optind], cmd->stray_hint);
	return cli_error(cmd, "unexpected argument '%s'", argv[optind]);
}

/* Does short_opts hold option c; *arg: does it take a value? */
static bool short_opt(const char *short_opts, int c, bool *arg)
{
	const char *p;

	if (c <= 0 || c >= 256 || c == ':' || c == '+')
		return false;
	p = strchr(short_opts, c);
	if (!p)
		return false;
	*arg = p[1] == ':';
	return true;
}

/*
 * The hidden `--list-options`: the option table itself, one option a
 * line, "SHORT LONG ARG" ("-" for none; ARG is "value", "optional" or
 * "none"). The man pages, the shell completions and the test that --help
 * documents every option are generated from, or checked against, this
 * (docs/gendocs.py).
 */
static void list_options(const struct cli_cmd *cmd, FILE *f)
{
	const struct option *o;
	const char *s;
	bool arg;

	for (o = cmd->long_opts; o->name; o++) {
		bool has_short = short_opt(cmd->short_opts, o->val, &arg);

		fprintf(f, "%s%c %s %s\n", has_short ? "-" : "",
			has_short ? o->val : '-', o->name,
			o->has_arg == no_argument	? "none" :
			o->has_arg == optional_argument ? "optional" :
							  "value");
	}
	for (s = cmd->short_opts; *s; s++) {
		bool in_long = false;

		if (!short_opt(cmd->short_opts, *s, &arg))
			continue;
		for (o = cmd->long_opts; o->name; o++)
			in_long |= o->val == *s;
		if (!in_long)
			fprintf(f, "-%c - %s\n", *s, arg ? "value" : "none");
	}
}

int cli_parse(const struct cli_cmd *cmd, int argc, char **argv, void *ctx,
	      const struct cli_shared *sh)
{
	int c, err;

	if (argc == 2 && !strcmp(argv[1], "--list-options")) {
		list_options(cmd, stdout);
		return 1;
	}
	/* hidden too: -U's columns, -S's keys, from the column table */
	if (argc == 2 && (!strcmp(argv[1], "--list-columns") ||
			  !strcmp(argv[1], "--list-sort-keys"))) {
		column_list(stdout, argv[1][7] == 's');
		return 1;
	}

	optind = 0; /* 0: glibc resets all of getopt's state */
	opterr = 0;
	while ((c = getopt_long(argc, argv, cmd->short_opts, cmd->long_opts,
				NULL)) != -1) {
		err = cmd->option(ctx, c, optarg);
		if (err == -ENOENT && sh->calib)
			err = cli_calib_option(cmd, c, optarg, sh->calib);
		if (err == -ENOENT)
			err = shared_option(cmd, c, argv, sh->target,
					    sh->verbosity);
		if (err)
			return err;
	}
	err = rest_args(cmd, argc, argv, sh);
	if (err || !sh->target)
		return err;
	return target_finish(cmd, sh->target, cmd->default_target);
}

void cli_target_free(struct target_spec *t)
{
	free(t->pids);
	t->pids = NULL;
	t->npids = 0;
}
