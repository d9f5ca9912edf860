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
split_case() {
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
