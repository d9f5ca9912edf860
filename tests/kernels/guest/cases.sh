#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# The kernel matrix's cases, run by the guest's /init: each runs scprof
# on a workload with known calls and prints what it wrote (/out/CASE.*:
# the report, scprof's stderr, CASE.meta with its exit status and the
# pids the host needs) between "$MARK begin FILE" and "$MARK end FILE"
# lines. The checks are on the host (test_kernels.py): this script only
# runs things and waits for workloads to be where a case needs them.
# Syscall numbers come from /etc/arch.env (SYS_read, ...), the same
# script runs on every architecture.
. /etc/arch.env
S=/usr/sbin/scprof
W=/wl
O=/out
T=/tmp
LIMIT=120 # seconds any one scprof run may take
WAIT=30   # seconds a workload or scprof may take to be where a case needs it

# ---- helpers -----------------------------------------------------------------

emit() { # FILE: its text between markers, named by its base name
	echo "$MARK begin ${1##*/}"
	cat "$1"
	echo
	echo "$MARK end ${1##*/}"
}

show() { # CASE: every file the case wrote (CASE*)
	local f
	for f in "$O/$1"*; do
		[ -e "$f" ] && emit "$f"
	done
}

meta() { # CASE KEY=VALUE...
	local c=$1 kv
	shift
	for kv in "$@"; do
		echo "$kv" >>"$O/$c.meta"
	done
}

seconds() { # the uptime in whole seconds
	local up rest
	read -r up rest </proc/uptime
	echo "${up%.*}"
}

wait_for() { # COMMAND...: retried every 10 ms until it succeeds, WAIT s at most
	local end=$(($(seconds) + WAIT))
	until "$@"; do
		if [ "$(seconds)" -ge $end ]; then
			echo "cases.sh: gave up waiting for: $*" >&2
			return 1
		fi
		usleep 10000
	done
}

state() { # DIR: the state letter (R, S, Z...) of /proc/PID or /proc/PID/task/TID
	sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' "$1/status" 2>/dev/null
}

gone() { # PID: exited (absent, or a zombie not yet waited for)
	[ ! -d "/proc/$1" ] || [ "$(state "/proc/$1")" = Z ]
}

blocked_in() { # PID NR: asleep inside syscall NR (the main thread)
	local nr rest
	read -r nr rest <"/proc/$1/syscall" 2>/dev/null &&
		[ "$nr" = "$2" ] && [ "$(state "/proc/$1")" = S ]
}

attached() { # PID [TRACEPOINT...]: holds BPF links on those tracepoints
	local pid=$1 tp
	shift
	[ $# -gt 0 ] || set -- sys_enter sys_exit sched_process_exit
	gone "$pid" && return 0 # it failed: its status says why
	for tp in "$@"; do
		grep -qx "tp_name:[[:space:]]*$tp" "/proc/$pid"/fdinfo/* \
			2>/dev/null || return 1
	done
}

finish() { # CASE PID: wait for scprof to end (killed after LIMIT s), record its status
	local end=$(($(seconds) + LIMIT))
	until gone "$2" || [ "$(seconds)" -ge $end ]; do
		usleep 100000
	done
	gone "$2" || kill -KILL "$2"
	wait "$2"
	meta "$1" "rc=$?"
}

scprof_bg() { # CASE ARGS...: scprof ARGS in the background, report in CASE.json; sets spid
	local c=$1
	shift
	$S "$@" --format json -o "$O/$c.json" 2>"$O/$c.err" </dev/null &
	spid=$!
	meta "$c" "scprof=$spid"
}

scprof_fg() { # CASE ARGS...: scprof ARGS (a command's report goes to CASE.json)
	local c=$1
	shift
	timeout -s KILL $LIMIT $S "$@" >"$O/$c.out" 2>"$O/$c.err" </dev/null
	meta "$c" "rc=$?"
}

# The trigger workload (tests/workloads/trigger.c) on FIFO $T/NAME.fifo,
# N getppid per command, asleep in read() on it; sets tpid.
trigger() { # NAME N
	mkfifo "$T/$1.fifo"
	$W/trigger "$T/$1.fifo" 0 "$2" >"$T/$1.ack" &
	tpid=$!
	wait_for grep -q ready "$T/$1.ack"
	wait_for blocked_in $tpid "$SYS_read"
}

trigger_calls() { # NAME PID: make the calls; back once it sleeps again
	printf c >"$T/$1.fifo"
	wait_for grep -q k "$T/$1.ack"
	wait_for blocked_in "$2" "$SYS_read"
}

trigger_exit() { # NAME PID: make the calls and exit
	printf x >"$T/$1.fifo"
	wait_for gone "$2" && wait "$2"
}

GT="1000 10 100 3 50" # groundtruth: getppid, bad openat, reads, sleeps, child getppid

# ---- the cases -----------------------------------------------------------------

case_features() {
	$S features --format json >"$O/features.json" 2>"$O/features.err"
	meta features "rc=$?"
	$S features >"$O/features.txt" 2>&1
	# the kernel's own word on run-queue delays: a process's schedstat
	cat /proc/self/schedstat >"$O/features.schedstat" 2>&1
}

case_command() {
	scprof_fg command --format json -o "$O/command.json" -- $W/groundtruth $GT
}

case_follow() {
	scprof_fg follow -f --format json -o "$O/follow.json" -- $W/groundtruth $GT
}

case_pid() {
	trigger pid 1000
	meta pid "target=$tpid"
	scprof_bg pid -p $tpid
	wait_for attached $spid
	trigger_calls pid $tpid
	trigger_exit pid $tpid
	finish pid $spid # it stops by itself when the target exits
}

case_all() {
	trigger all 1000
	meta all "target=$tpid"
	scprof_bg all -a --max-entries 131072
	wait_for attached $spid
	trigger_exit all $tpid
	kill -INT $spid
	finish all $spid
}

case_cgroup() {
	cg=/sys/fs/cgroup/scprof-kernels
	mkdir $cg
	trigger cgin 1000
	echo $tpid >$cg/cgroup.procs
	inside=$tpid
	trigger cgout 1000 # outside the cgroup: must not show
	meta cgroup "target=$inside" "other=$tpid"
	scprof_bg cgroup --cgroup $cg
	wait_for attached $spid
	trigger_calls cgout $tpid
	trigger_exit cgin $inside
	kill -INT $spid
	finish cgroup $spid
	trigger_exit cgout $tpid
	rmdir $cg
}

case_count_only() {
	scprof_fg count_only -f -C --format json -o "$O/count_only.json" \
		-- $W/groundtruth $GT
}

case_interval() {
	# 15 ticks of 100 ms, 1000 getppid and 2 failing openat each; the
	# tables go to stderr (-i prints tables only)
	scprof_fg interval -i 0.3 -- $W/pacer 1000 2 100 15
}

case_filter() {
	scprof_fg filter -f -e trace=getppid,openat --format json \
		-o "$O/filter.json" -- $W/groundtruth $GT
}

case_fd_types() {
	for n in 37 0; do
		mkdir "$T/fd$n"
		scprof_fg fd_types$n --fd-types --format json \
			-o "$O/fd_types$n.json" -- $W/fdkinds $n "$T/fd$n"
	done
}

case_by() {
	scprof_fg by --by tid --format json -o "$O/by.json" -- $W/threads 3
}

case_stacks() {
	scprof_fg stacks --stacks=100 --format json -o "$O/stacks.json" \
		-- $W/stackmix 20000 3 300
}

all_blocked() { # PID: its 3 threads asleep in read, epoll_wait and wait4
	local n=0 t nr rest
	for t in /proc/$1/task/*; do
		read -r nr rest <"$t/syscall" 2>/dev/null || return 1
		case $nr in
		"$SYS_read" | "$SYS_epoll_wait" | "$SYS_wait4") ;;
		*) return 1 ;;
		esac
		[ "$(state "$t")" = S ] || return 1
		n=$((n + 1))
	done
	[ $n = 3 ]
}

case_in_flight() {
	$W/blocked >"$T/blocked.out" &
	bpid=$!
	meta in_flight "target=$bpid"
	wait_for grep -q ready "$T/blocked.out"
	wait_for all_blocked $bpid
	scprof_fg in_flight -p $bpid -d 1 --format json -o "$O/in_flight.json"
	kill -KILL $bpid
	wait $bpid
}

case_calibrate() {
	# the floor and a vDSO loop with the probe effect, saved for verdict
	scprof_fg calibrate calibrate --quick \
		--loops syscall-getppid,vdso-clock_gettime --cache "$T/cal.json" \
		--format json -o "$O/calibrate.json"
	# the floor's loop, profiled: it makes at least the calls it counts
	scprof_fg calibrate_made -f --format json -o "$O/calibrate_made.json" \
		-- $S calibrate --quick --no-probe --no-save \
		--loops syscall-getppid --format json -o "$O/calibrate_made.cal"
}

case_verdict() {
	$W/highrate >"$T/highrate.out" &
	hpid=$!
	wait_for grep -q ready "$T/highrate.out"
	scprof_fg verdict verdict -p $hpid -d 1.5 --cache "$T/cal.json" \
		--format json -o "$O/verdict.json"
	kill -KILL $hpid
	wait $hpid
}

serving() { # PID: the daemon says it serves, or it has exited
	grep -q "serving metrics" "$O/daemon.err" || gone "$1"
}

folded() { # the daemon's metrics, scraped, show the pacer folded
	wget -q -O "$O/daemon.prom" http://127.0.0.1:9733/metrics &&
		grep -q '^scprof_processes_folded_total 1$' "$O/daemon.prom"
}

case_daemon() {
	# a gate: a shell that execs the pacer once the daemon is attached
	mkfifo "$T/gate"
	sh -c 'read x <"$1"; exec "$2" 1000 3 2 5' gate "$T/gate" $W/pacer &
	gpid=$!
	$S daemon --listen 127.0.0.1:9733 -p $gpid -f --fold-interval 0.1 \
		--latency-duty 1 2>"$O/daemon.err" </dev/null &
	dpid=$!
	wait_for serving $dpid
	if grep -q "serving metrics" "$O/daemon.err"; then
		echo go >"$T/gate"
		wait $gpid
		meta daemon "pacer=$?"
		wait_for folded
	fi
	kill -TERM $dpid
	finish daemon $dpid
	kill -KILL $gpid 2>/dev/null
}

# ---- the split of a call's time (issue 41) ----------------------------------
# The split workload (tests/workloads/split.c) under scprof --by tid: its
# lines (the truth its worker measured around the calls, the helper
# threads' tids) in CASE.out, scprof's report in CASE.json, and its
# worker's kernel stack sampled while it runs in CASE.stacks
# (split_sample.sh). The sleeps are long enough that the calls' own work
# under TCG, slower still on a busy host, leaves the workload's claims
# (pipe reads blocked 90% of their time, futex waits 80%) standing.

# The worker's run-queue delay (the truth) is taken with the scheduler's
# delayed dequeue off (NO_DELAY_DEQUEUE, 6.12 on): on, 6.12 counted part of
# a sleeping reader's time as run-queue delay (tests/kernels/arm64/lib.sh).
sched_feature() { # NAME: set where the kernel has it, noted in CASE.out
	local f=/sys/kernel/debug/sched/features
	[ -f $f ] || mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	grep -qwE "(NO_)?${1#NO_}" $f 2>/dev/null || return 0
	echo "$1" >$f && echo "sched_feature $1"
}

split_case() { # CASE WITHOUT ARGS...: scprof (SCPROF_WITHOUT=WITHOUT) on split ARGS
	local c=$1 without=$2 rc
	shift 2
	sched_feature NO_DELAY_DEQUEUE >"$O/$c.feature"
	SCPROF_WITHOUT=$without timeout -s KILL $LIMIT $S --by tid --format json \
		-o "$O/$c.json" -- $W/split "$@" >"$O/$c.out" 2>"$O/$c.err" \
		</dev/null &
	spid=$!
	sh /split_sample.sh "$O/$c.out" >"$O/$c.stacks"
	wait $spid
	rc=$?
	sched_feature DELAY_DEQUEUE >/dev/null
	meta "$c" "rc=$rc"
}

case_split_pipe() { # 60 one-byte reads, a byte written every 20 ms
	split_case split_pipe "" pipe 60 20
}

case_split_futex() { # 100 locks of a mutex held 10 ms at a time
	split_case split_futex "" futex 100 10
}

case_split_shared() { # calls that wait for the CPU a spinning thread holds
	split_case split_shared "" shared 8
}

case_split_timed() { # pipe reads again, each wait timed (no run-queue delay)
	SCPROF_WITHOUT=run_delay $S features --format json \
		>"$O/split_timed_without.json" 2>&1
	split_case split_timed run_delay pipe 60 20
}

uptime() { # the uptime, for the case lines (how long each took)
	local up rest
	read -r up rest </proc/uptime
	echo "$up"
}

# all of them, or those named on the kernel's command line (cases=a,b)
CASES="features command follow pid all cgroup count_only interval filter
fd_types by stacks in_flight calibrate verdict daemon split_pipe split_futex
split_shared split_timed"
for arg in $(cat /proc/cmdline); do
	case $arg in cases=*) CASES=$(echo "${arg#cases=}" | tr , ' ') ;; esac
done

for c in $CASES; do
	echo "$MARK case $c $(uptime)"
	case_$c
	show "$c"
done
echo "$MARK cases-done $(uptime)"
