# Helpers for the case scripts (sourced: . /lib.sh).

# attached PID: wait until scprof (PID) has attached every BPF program it
# loaded (as many bpf_link fds as bpf-prog fds; the link fdinfo of older
# kernels does not name the tracepoint): from then on every syscall of its
# targets is seen. (The daemon's sampled enter program is attached only
# during latency windows: this returns in one, when the exit program that
# counts every call has long been attached.)
attached() {
	n=0
	while [ $n -lt 6000 ]; do
		kill -0 "$1" 2> /dev/null || return 1
		progs=0 links=0
		for fd in /proc/"$1"/fd/*; do
			case $(readlink "$fd") in
			anon_inode:bpf-prog) progs=$((progs + 1)) ;;
			anon_inode:bpf_link) links=$((links + 1)) ;;
			esac
		done 2> /dev/null
		[ $progs -gt 0 ] && [ $links -ge $progs ] && return 0
		sleep 0.01
		n=$((n + 1))
	done
	echo "scprof did not attach" >&2
	return 1
}

# line FILE TEXT: wait until FILE has a line starting with TEXT.
line() {
	n=0
	while ! grep -q "^$2" "$1" 2> /dev/null; do
		[ $n -lt 6000 ] || { echo "no '$2' in $1" >&2; return 1; }
		sleep 0.01
		n=$((n + 1))
	done
}

# split_case WITHOUT ARGS...: scprof --by tid (with SCPROF_WITHOUT=WITHOUT)
# on the split workload, /w/split ARGS, its report in /tmp/report; prints
# the workload's lines and the worker's kernel stack sampled while it ran
# (/split_sample.sh), and returns scprof's status.
#
# The truth, the worker's run-queue delay from schedstat, is taken with the
# scheduler's delayed dequeue off (NO_DELAY_DEQUEUE, 6.12 on): with it on,
# 6.12 under TCG counted part of a sleeping reader's time as run-queue
# delay, 6.6 to 236 ms of it in identical runs of 40 pipe reads, where with
# it off all six runs said 9-15 ms, as scprof said in all twelve (waiting
# 16-20 ms, blocked 3166-3170 ms) whether it was on or off. split_stock
# leaves the stock setting, for a case checked without the delay.
split_case() {
	sched_feature NO_DELAY_DEQUEUE
	split_stock "$@"
	rc=$?
	sched_feature DELAY_DEQUEUE
	return $rc
}

split_stock() {
	without=$1
	shift
	SCPROF_WITHOUT=$without scprof --by tid --format json -o /tmp/report \
		-- /w/split "$@" > /tmp/split.out &
	sp=$!
	sh /split_sample.sh /tmp/split.out > /tmp/split.stacks
	wait $sp
	rc=$?
	cat /tmp/split.out /tmp/split.stacks
	return $rc
}

# sched_feature NAME: set a scheduler feature (debugfs' sched/features)
# where the kernel has it; prints "sched_feature NAME" once set.
sched_feature() {
	f=/sys/kernel/debug/sched/features
	[ -f $f ] || mount -t debugfs debugfs /sys/kernel/debug 2> /dev/null
	grep -qwE "(NO_)?${1#NO_}" $f 2> /dev/null || return 0
	echo "$1" > $f && echo "sched_feature $1"
}
