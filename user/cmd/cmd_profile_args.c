// SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
/* The profiler's command line: `scprof [OPTIONS] TARGET` and its --help. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "cmd/cmd_profile_args.h"
#include "render/columns.h"
#include "render/output.h"
#include "scprof_version.h" /* generated: SCPROF_GIT_REV */
#include "sc_stack.h"
#include "util/log.h"
#include "util/strlist.h"

/* --help: the targets and what is collected. */
static void usage_collect(FILE *f)
{
	fputs("Targets (exactly one):\n"
	      "  COMMAND [ARGS]        run COMMAND and profile it from its first syscall;\n"
	      "                        scprof exits with its exit status (128+N if killed\n"
	      "                        by signal N)\n"
	      "  -p, --pid PID[,PID]   profile running processes, all their threads; a\n"
	      "                        single thread id (not a process's) profiles that\n"
	      "                        thread only, as strace -p does\n"
	      "      --cgroup PATH     profile every task under a cgroup v2 directory\n"
	      "  -a, --all             profile the whole system (except scprof itself)\n"
	      "\n"
	      "Collection:\n"
	      "  -f, --follow          also profile children forked by the targets\n"
	      "  -d, --duration SECS   stop after SECS seconds (decimals allowed); without\n"
	      "                        it, stop when the targets exit or on Ctrl-C/SIGTERM.\n"
	      "                        A command still running then is not stopped: the\n"
	      "                        report is printed and scprof waits for it\n"
	      "  -i, --interval SECS   print a report every SECS seconds (what happened in\n"
	      "                        that interval: a timestamp line, then the table with\n"
	      "                        a calls/s column, or \"no calls\"), and the last,\n"
	      "                        shorter one at the end. JSON: one object per\n"
	      "                        interval, each on one line (JSON lines), with\n"
	      "                        \"interval\" and \"interval_end\"; CSV: one header,\n"
	      "                        rows lead with interval,interval_end. A call's time\n"
	      "                        goes to the intervals it spans; it is counted in\n"
	      "                        the one where it returns\n"
	      "      --max-entries N   stats map size: (process, syscall) cells held at once\n"
	      "                        with -P, JSON or CSV (default 16384); exited\n"
	      "                        processes are folded out once it is a quarter full. A\n"
	      "                        call that finds no room is counted in the merged\n"
	      "                        row (pid 0): totals stay exact, the report says so.\n"
	      "                        The plain table sums calls per syscall in the\n"
	      "                        kernel and needs no cell per process\n"
	      "      --max-procs N     process map size (default 8192); a process that\n"
	      "                        finds it full has no name\n"
	      "      --max-exited N    exited processes reported one by one with -P, JSON\n"
	      "                        or CSV (default: up to 4096 within 64 MiB of rows);\n"
	      "                        later ones are merged into one row (pid 0) so long\n"
	      "                        runs use bounded memory\n"
	      "  -C, --count-only      the cheapest probe: count calls, errors and bytes,\n"
	      "                        measure no time. One BPF program instead of two, no\n"
	      "                        per-thread state, no clock. Leaves out every time\n"
	      "                        column, percentile and histogram (-H); the table\n"
	      "                        shows calls, errors and names, sorted by calls.\n"
	      "                        exit and exit_group are counted when the thread\n"
	      "                        exits; a call already running at the start is\n"
	      "                        counted when it returns. Calls in flight are not\n"
	      "                        known (no \"in flight\" lines, JSON in_flight null)\n"
	      "      --no-split        do not split each call's time into on a CPU,\n"
	      "                        waiting for a CPU, blocked and I/O wait (the\n"
	      "                        scheduler's tracepoints stay unattached)\n"
	      "      --fd-types        split calls whose first argument is an fd (read,\n"
	      "                        write, close, fstat, sendto, ioctl...) by what the\n"
	      "                        fd was when the call started: file, dir, socket,\n"
	      "                        pipe (FIFOs too), chr, blk, eventfd, timerfd,\n"
	      "                        signalfd, epoll, inotify, pidfd, anon (other\n"
	      "                        anonymous inodes) or bad (not an open fd). Rows\n"
	      "                        read `read (socket)`; JSON adds fd_type, CSV an\n"
	      "                        fd_type column. Not with --count-only\n"
	      "      --stacks[=N]      sample the user stack of one call in N (default\n"
	      "                        1000; a random countdown per CPU of mean N) and\n"
	      "                        unwind it with the binaries' CFI (no frame\n"
	      "                        pointers needed): the table adds the top call\n"
	      "                        sites of the top syscalls, JSON a \"stacks\" list.\n"
	      "                        When the ring buffer fills, the rate drops (each\n"
	      "                        sample counts for the calls it stands for);\n"
	      "                        samples it had no room for are counted and shown\n"
	      "      --stacks-by WHAT  count (default): weight call sites by calls, one\n"
	      "                        in N sampled at entry; time: by time in the calls,\n"
	      "                        one sample per N µs of it (default 1000) at exit,\n"
	      "                        where a 200 ms read weighs as much as 200000 1 µs\n"
	      "                        getppid calls; blocked: by the calls' blocked\n"
	      "                        time (asleep), the same way, with the kernel\n"
	      "                        stack of where each slept (its longest sleep) on\n"
	      "                        top of its user stack: an off-CPU flame graph.\n"
	      "                        The call sites, JSON, the flame graph and\n"
	      "                        --folded (counts in µs, a first line \"# ...\";\n"
	      "                        kernel frames end in _[k]) say which. Implies\n"
	      "                        --stacks; time and blocked not with --count-only,\n"
	      "                        blocked not with --no-split\n"
	      "      --folded FILE     write the sampled stacks to FILE in flamegraph.pl's\n"
	      "                        folded format (COMM;FRAME;...;SYSCALL COUNT, root\n"
	      "                        first); implies --stacks\n"
	      "      --flamegraph FILE write them as an interactive SVG flame graph\n"
	      "                        (hover, click to zoom, search); implies --stacks\n"
	      "      --pprof FILE      write them as a pprof profile for go tool pprof;\n"
	      "                        implies --stacks. profile.proto, gzip; the\n"
	      "                        syscall is the leaf frame. Values: calls (samples\n"
	      "                        times N) and syscall-nanoseconds, an estimate:\n"
	      "                        those calls times the syscall's mean latency over\n"
	      "                        the run (0 with --count-only). Label: comm only\n"
	      "                        (stacks are kept by process name, not by pid or\n"
	      "                        cgroup)\n"
	      "      --no-demangle     show C++ and Rust symbols as mangled in the binary\n"
	      "                        (demangled by default, without parameter lists)\n"
	      "      --slow DURATION   report each call that takes DURATION or longer\n"
	      "                        (10ms, 1.5s, 200us) as it returns, one line each:\n"
	      "                        time, comm[pid/tid], syscall, its fd and what the\n"
	      "                        fd is (a file's path, a socket's addresses, a\n"
	      "                        pipe), result or errno, duration and the call\n"
	      "                        site (its first frames); with the split, its\n"
	      "                        on-cpu, cpu-wait, blocked and io-wait times,\n"
	      "                        where its longest sleep slept (the first telling\n"
	      "                        kernel function) and who woke it (comm[pid/tid],\n"
	      "                        interrupt or timer); with --format json, one\n"
	      "                        JSON object a line. On stderr while the run goes\n"
	      "                        on; the report says how many there were and how\n"
	      "                        many were lost (ring buffer full). A faster call\n"
	      "                        costs one compare more. Not with --count-only\n"
	      "      --slow-out FILE   write the slow calls to FILE instead of stderr\n"
	      "      --trace-out FILE  write the slow calls at the end as a Chrome trace\n"
	      "                        (Trace Event Format JSON, one \"X\" event a call:\n"
	      "                        Perfetto, chrome://tracing)\n"
	      "\n"
	      "Filters (strace's):\n"
	      "  -e, --trace SET       -e [trace=]SET: count only the calls in SET, comma-\n"
	      "                        separated names, numbers, classes (%file %desc\n"
	      "                        %network %process %signal %ipc %memory %creds %clock\n"
	      "                        %stat %lstat %fstat %statfs %fstatfs %%stat %%statfs\n"
	      "                        %pure) and /REGEX (extended, on names); ?NAME: no\n"
	      "                        error if nothing matches; NAME@64, @32, @x32: that\n"
	      "                        ABI only; a leading ! negates the set; all, none.\n"
	      "                        Tested in the kernel first: a call left out costs\n"
	      "                        next to nothing. The last -e wins\n"
	      "  -z                    count only calls that succeeded (-e status=successful)\n"
	      "  -Z                    count only calls that failed (-e status=failed);\n"
	      "                        exit and exit_group count as successful\n"
	      "\n",
	      f);
}

/* --help: the report and the general options. */
static void usage_report(FILE *f)
{
	fputs("Report:\n"
	      "  -o, --output FILE     write the report to FILE (atomically: no partial file)\n"
	      "                        instead of stderr (COMMAND) or stdout (other targets).\n"
	      "                        A FILE of - (here and for --folded, --flamegraph,\n"
	      "                        --pprof, --slow-out, --trace-out) is stdout, for one\n"
	      "                        of them at most; a COMMAND's own stdout then goes to\n"
	      "                        stderr. ./- names a file called -\n"
	      "      --format FMT      table (default), json or csv\n"
	      "  -S, --sort KEY        sort by a column (default: time), or by nothing\n"
	      "  -U, --columns COLS    table columns, comma-separated (strace's -U names\n"
	      "                        and aliases, and scprof's):",
	      f);
	column_help(f, false, 51, 24, 80);
	fputs("  -P, --per-process     add one table per process (pid and comm)\n"
	      "      --by KEY[,KEY]    add one table per group, largest first, of the\n"
	      "                        calls grouped by pid, tid (each thread, named),\n"
	      "                        comm, cgroup (its cgroup v2 path), unit (the\n"
	      "                        systemd unit: innermost .service or .scope, else\n"
	      "                        .slice), container (docker, containerd, CRI-O,\n"
	      "                        podman id; a kubepods pod uid), pod (a\n"
	      "                        Kubernetes pod's uid) or qos (its QoS class:\n"
	      "                        guaranteed, burstable, besteffort). JSON: groups\n"
	      "                        instead of processes; CSV: key columns\n"
	      "  -T, --threads         --by tid: a table per thread, with its name\n"
	      "  -H, --histograms      add a latency histogram per syscall, with its errors\n"
	      "  -c, -w                accepted for strace habits; they change nothing:\n"
	      "                        scprof always summarises, and always measures wall\n"
	      "                        time inside the call (strace -w)\n"
	      "\n"
	      "Calls still in flight at a report (a thread blocked in read, epoll_wait...)\n"
	      "are listed after the table, one line per syscall with the longest\n"
	      "(\"in flight at stop: read x1 (pid P tid T, 3.00 s so far)\"), and in JSON\n"
	      "in_flight; their time so far is in the time columns, not in the calls.\n"
	      "\n"
	      "General:\n"
	      "  -v, --verbose         more messages (-vv: libbpf's and the verifier's)\n"
	      "  -q, --quiet           only errors\n"
	      "  -h, --help            this help\n"
	      "  -V, --version         the version and the git revision built from\n"
	      "\n",
	      f);
}

void cli_usage_profile(FILE *f)
{
	fputs("Usage: scprof [OPTIONS] [--] COMMAND [ARGS...]\n"
	      "       scprof [OPTIONS] -p PID[,PID...]\n"
	      "       scprof [OPTIONS] --cgroup PATH\n"
	      "       scprof [OPTIONS] -a\n"
	      "\n"
	      "Count, time and size the system calls of a command, processes, a cgroup or\n"
	      "the whole system with eBPF, and print strace -c's summary table. Unlike\n"
	      "strace, the traced programs are not stopped at every call: the cost is a\n"
	      "fraction of a microsecond per call and latencies are not inflated.\n"
	      "\n",
	      f);
	usage_collect(f);
	usage_report(f);
	fputs("Other commands (scprof COMMAND --help for each):\n"
	      "  scprof top            a live view of the busiest processes\n"
	      "  scprof daemon         Prometheus metrics over HTTP\n"
	      "  scprof calibrate      what a syscall costs on this machine\n"
	      "  scprof verdict -p PID is it the syscalls? a verdict on a live process\n"
	      "  scprof features      what this kernel offers the BPF programs\n"
	      "  scprof diff A B       did the change help? two runs compared\n"
	      "\n"
	      "How scprof differs from strace -c:\n"
	      "  - exit and exit_group are counted (strace -c omits calls that never return)\n"
	      "  - a call is counted when it returns; calls running when profiling starts\n"
	      "    or stops are not counted\n"
	      "  - every thread of a target is profiled; -f adds child processes\n"
	      "  - the JSON report and -H split interrupted calls (ERESTART* errors) from\n"
	      "    the restart_syscall that resumes them\n"
	      "\n"
	      "Exit status: the command's with COMMAND; otherwise 0, 1 on a runtime error\n"
	      "(privileges, kernel support, dead target), 2 on a usage error. 3 when the\n"
	      "profile is incomplete (a map was full: the table's first line says what is\n"
	      "missing, JSON's \"dropped\" counts it) and the status would have been 0;\n"
	      "a command's non-zero status is kept.\n"
	      "Needs root, or CAP_BPF and CAP_PERFMON, and Linux 5.10 or later with BTF\n"
	      "(every feature works there: scprof features says what each kernel adapts).\n",
	      f);
}

enum {
	OPT_MAX_EXITED = CLI_OPT_OWN,
	OPT_FD_TYPES,
	OPT_NO_SPLIT,
	OPT_BY,
	OPT_STACKS,
	OPT_FOLDED,
	OPT_FLAMEGRAPH,
	OPT_PPROF,
	OPT_NO_DEMANGLE,
	OPT_STACKS_BY,
	OPT_SLOW,
	OPT_SLOW_OUT,
	OPT_TRACE_OUT,
};

static const struct option long_opts[] = {
	CLI_TARGET_OPTIONS,
	{ "duration", required_argument, NULL, 'd' },
	{ "interval", required_argument, NULL, 'i' },
	{ "output", required_argument, NULL, 'o' },
	{ "format", required_argument, NULL, CLI_OPT_FORMAT },
	{ "sort", required_argument, NULL, 'S' },
	{ "columns", required_argument, NULL, 'U' },
	{ "per-process", no_argument, NULL, 'P' },
	{ "histograms", no_argument, NULL, 'H' },
	{ "max-exited", required_argument, NULL, OPT_MAX_EXITED },
	{ "count-only", no_argument, NULL, 'C' },
	{ "fd-types", no_argument, NULL, OPT_FD_TYPES },
	{ "no-split", no_argument, NULL, OPT_NO_SPLIT },
	{ "trace", required_argument, NULL, 'e' },
	{ "by", required_argument, NULL, OPT_BY },
	{ "threads", no_argument, NULL, 'T' },
	{ "stacks", optional_argument, NULL, OPT_STACKS },
	{ "stacks-by", required_argument, NULL, OPT_STACKS_BY },
	{ "folded", required_argument, NULL, OPT_FOLDED },
	{ "no-demangle", no_argument, NULL, OPT_NO_DEMANGLE },
	{ "flamegraph", required_argument, NULL, OPT_FLAMEGRAPH },
	{ "pprof", required_argument, NULL, OPT_PPROF },
	{ "slow", required_argument, NULL, OPT_SLOW },
	{ "slow-out", required_argument, NULL, OPT_SLOW_OUT },
	{ "trace-out", required_argument, NULL, OPT_TRACE_OUT },
	{ "version", no_argument, NULL, 'V' },
	CLI_COMMON_OPTIONS,
	{},
};

static int profile_option(void *ctx, int c, const char *arg);

static const struct cli_cmd profile_cmd = {
	.prog = "scprof",
	.usage = cli_usage_profile,
	/* '+': stop at the first non-option, the command to run; ':':
	 * report a missing value as ':'.
	 */
	.short_opts = "+:p:afd:i:o:S:U:PHTCcwe:zZvqhV",
	.long_opts = long_opts,
	.option = profile_option,
	.takes_command = true,
	.default_target = TARGET_NONE,
};

/* --count-only measures no time: no -H, no time column or sort key (the
 * defaults are profile_plan's).
 */
static int count_only_check(const struct report_opts *r, bool cols_set,
			    bool sort_set)
{
	if (r->histograms)
		return cli_error(&profile_cmd,
				 "-H needs latencies, which --count-only "
				 "does not measure");
	char names[128];

	if (sort_set && column_of(r->sort)->timed)
		return cli_error(&profile_cmd,
				 "--count-only measures no time: sort by %s",
				 column_names_list(false, names,
						   sizeof(names)));
	for (int i = 0; cols_set && i < COL_COUNT && r->cols[i]; i++)
		if (column_of(r->cols[i])->timed)
			return cli_error(&profile_cmd,
					 "--count-only measures no time: -U "
					 "takes %s",
					 column_names_list(false, names,
							   sizeof(names)));
	return 0;
}

/* -e [trace=]SET, or -e status=successful|failed (strace's -z, -Z). */
static int trace_option(struct profile_opts *o, const char *arg)
{
	const struct cli_cmd *cmd = &profile_cmd;
	const char *eq = strchr(arg, '=');
	char err[256];

	if (eq && (!strncmp(arg, "trace=", 6) || !strncmp(arg, "t=", 2))) {
		arg = eq + 1;
	} else if (eq && (!strncmp(arg, "status=", 7))) {
		if (!strcmp(eq + 1, "successful"))
			o->status = SC_STATUS_SUCCESS;
		else if (!strcmp(eq + 1, "failed"))
			o->status = SC_STATUS_FAILED;
		else
			return cli_error(cmd,
					 "invalid -e status '%s': scprof takes "
					 "successful or failed",
					 eq + 1);
		return 0;
	} else if (eq) {
		return cli_error(cmd,
				 "invalid -e '%.*s': scprof takes trace=SET "
				 "and status=successful|failed",
				 (int)(eq - arg), arg);
	}
	if (trace_set_parse(&o->trace, arg, err, sizeof(err)))
		return cli_error(cmd, "invalid -e trace: %s", err);
	return 0;
}

static int profile_option(void *ctx, int c, const char *arg)
{
	const struct cli_cmd *cmd = &profile_cmd;
	struct profile_opts *o = ctx;
	const char *bad;
	uint64_t v;

	switch (c) {
	case 'd':
		return cli_duration(cmd, arg, &o->duration_s);
	case 'i':
		if (cli_parse_seconds(arg, &o->interval_s) ||
		    o->interval_s < 0.01)
			return cli_error(cmd,
					 "invalid interval '%s': expected a "
					 "number of seconds >= 0.01",
					 arg);
		return 0;
	case 'o':
		return cli_file_option(cmd, arg, "output", &o->output);
	case CLI_OPT_FORMAT:
		return cli_format_option(cmd, arg, true, &o->report.format);
	case 'S':
		if (report_parse_sort(arg, &o->report.sort))
			return cli_error(cmd, "invalid sort key '%s'", arg);
		o->sort_given = true;
		return 0;
	case 'U':
		if (report_parse_cols(arg, o->report.cols, &bad))
			return cli_error(cmd,
					 "invalid or repeated column '%.*s' in "
					 "-U %s",
					 (int)strlist_len(bad), bad, arg);
		o->cols_given = true;
		return 0;
	case 'P':
		o->report.per_process = true;
		return 0;
	case 'H':
		o->report.histograms = true;
		return 0;
	case 'C':
		o->count_only = true;
		return 0;
	case OPT_NO_SPLIT:
		o->no_split = true;
		return 0;
	case OPT_FD_TYPES:
		o->fd_types = true;
		return 0;
	case 'e':
		return trace_option(o, arg);
	case OPT_BY:
		if (group_parse(arg, &o->report.by, &bad))
			return cli_error(cmd,
					 "invalid or repeated --by key '%.*s': "
					 "expected pid, tid, comm, cgroup, "
					 "unit, container, pod or qos",
					 (int)strlist_len(bad), bad);
		return 0;
	case 'T':
		o->report.by.keys[0] = GROUP_TID;
		o->report.by.n = 1;
		return 0;
	case 'z':
		o->status = SC_STATUS_SUCCESS;
		return 0;
	case 'Z':
		o->status = SC_STATUS_FAILED;
		return 0;
	case OPT_STACKS:
		o->stack_period = SC_STACK_DEFAULT_PERIOD;
		if (arg && cli_parse_u64(arg, 1, 1U << 30, &v))
			return cli_error(cmd,
					 "invalid --stacks '%s': expected one "
					 "call in N, N from 1 to 1073741824",
					 arg);
		if (arg)
			o->stack_period = (uint32_t)v;
		o->stack_period_given = arg != NULL;
		return 0;
	case OPT_STACKS_BY:
		if (!strcmp(arg, "count"))
			o->stack_by = SC_STACKS_BY_COUNT;
		else if (!strcmp(arg, "time"))
			o->stack_by = SC_STACKS_BY_TIME;
		else if (!strcmp(arg, "blocked"))
			o->stack_by = SC_STACKS_BY_BLOCKED;
		else
			return cli_error(cmd,
					 "invalid --stacks-by '%s': expected "
					 "count, time or blocked",
					 arg);
		if (!o->stack_period)
			o->stack_period = SC_STACK_DEFAULT_PERIOD;
		return 0;
	case OPT_FOLDED:
		return cli_file_option(cmd, arg, "folded", &o->folded);
	case OPT_FLAMEGRAPH:
		return cli_file_option(cmd, arg, "flame graph", &o->flamegraph);
	case OPT_PPROF:
		return cli_file_option(cmd, arg, "pprof", &o->pprof);
	case OPT_NO_DEMANGLE:
		o->raw_symbols = true;
		return 0;
	case OPT_SLOW:
		return cli_slow_option(cmd, arg, &o->slow_ns);
	case OPT_SLOW_OUT:
		return cli_file_option(cmd, arg, "slow calls", &o->slow_out);
	case OPT_TRACE_OUT:
		return cli_file_option(cmd, arg, "trace", &o->trace_out);
	case OPT_MAX_EXITED:
		if (cli_parse_u64(arg, 1, 1U << 24, &v))
			return cli_error(cmd,
					 "invalid --max-exited '%s': expected "
					 "a number from 1 to 16777216",
					 arg);
		o->max_exited = (uint32_t)v;
		return 0;
	case 'c':
	case 'w':
		return 0;
	case 'V':
		printf("scprof %s (git %s)\n", SCPROF_VERSION, SCPROF_GIT_REV);
		return 1;
	default:
		return -ENOENT;
	}
}

/* A file the profiler writes, and its option. */
struct named_output {
	const char *opt, *path;
};

static void profile_outputs(const struct profile_opts *o,
			    struct named_output out[PROFILE_OUTPUTS])
{
	const struct named_output all[PROFILE_OUTPUTS] = {
		{ "-o", o->output },
		{ "--folded", o->folded },
		{ "--flamegraph", o->flamegraph },
		{ "--pprof", o->pprof },
		{ "--slow-out", o->slow_out },
		{ "--trace-out", o->trace_out },
	};

	memcpy(out, all, sizeof(all));
}

/* The report of a target other than a command goes to stdout by default. */
static bool report_on_stdout(const struct profile_opts *o)
{
	return !o->output && o->target.kind != TARGET_CMD;
}

bool profile_uses_stdout(const struct profile_opts *o)
{
	struct named_output out[PROFILE_OUTPUTS];

	profile_outputs(o, out);
	for (int i = 0; i < PROFILE_OUTPUTS; i++)
		if (output_is_stdout(out[i].path))
			return true;
	return report_on_stdout(o);
}

/* At most one output goes to standard output: two would mix. */
static int stdout_check(const struct profile_opts *o)
{
	const char *first = report_on_stdout(o) ? "the report (no -o)" : NULL;
	struct named_output out[PROFILE_OUTPUTS];
	char first_opt[32];

	profile_outputs(o, out);
	for (int i = 0; i < PROFILE_OUTPUTS; i++) {
		if (!output_is_stdout(out[i].path))
			continue;
		if (first)
			return cli_error(&profile_cmd,
					 "%s and %s - both go to standard "
					 "output: give one of them a file",
					 first, out[i].opt);
		snprintf(first_opt, sizeof(first_opt), "%s -", out[i].opt);
		first = first_opt;
	}
	return 0;
}

int cli_parse_profile(int argc, char **argv, struct profile_opts *o)
{
	const struct cli_shared sh = {
		.target = &o->target,
		.verbosity = &o->verbosity,
		.command = &o->argv,
	};
	int err;

	memset(o, 0, sizeof(*o));
	report_opts_default(&o->report);
	o->verbosity = LOG_WARN;
	err = cli_parse(&profile_cmd, argc, argv, o, &sh);
	if (err)
		return err;
	if (o->report.by.n && o->report.per_process)
		return cli_error(&profile_cmd,
				 "-P is --by pid: use one of -P, -T and --by");
	if (o->count_only && o->fd_types)
		return cli_error(&profile_cmd,
				 "--fd-types cannot be used with --count-only: "
				 "the fd kind is read when a call starts, and "
				 "--count-only sees calls only as they return");
	if ((o->folded || o->flamegraph || o->pprof) && !o->stack_period)
		o->stack_period = SC_STACK_DEFAULT_PERIOD;
	if (o->stack_by != SC_STACKS_BY_COUNT && !o->stack_period_given)
		o->stack_period = SC_STACK_DEFAULT_TIME_US;
	if (o->slow_ns && o->count_only)
		return cli_error(&profile_cmd,
				 "--slow needs each call's time: --count-only "
				 "does not time calls");
	if ((o->slow_out || o->trace_out) && !o->slow_ns)
		return cli_error(&profile_cmd,
				 "--%s writes the slow calls: give --slow "
				 "DURATION",
				 o->slow_out ? "slow-out" : "trace-out");
	if (o->stack_by != SC_STACKS_BY_COUNT && o->count_only)
		return cli_error(&profile_cmd,
				 "--stacks-by %s weighs calls by their %s: "
				 "--count-only does not time them",
				 stacks_weighting_name(o->stack_by),
				 o->stack_by == SC_STACKS_BY_TIME ?
					 "time" :
					 "blocked time");
	if (o->stack_by == SC_STACKS_BY_BLOCKED && o->no_split)
		return cli_error(&profile_cmd,
				 "--stacks-by blocked weighs calls by their "
				 "blocked time: --no-split does not measure "
				 "it");
	if (o->stack_period && o->interval_s > 0)
		return cli_error(&profile_cmd,
				 "--stacks reports the call sites of the "
				 "whole run: it cannot be used with -i");
	if (stdout_check(o))
		return EXIT_USAGE;
	if (o->count_only)
		return count_only_check(&o->report, o->cols_given,
					o->sort_given);
	return 0;
}

void cli_free_profile(struct profile_opts *o)
{
	cli_target_free(&o->target);
}
