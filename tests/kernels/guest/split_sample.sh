# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Sourced by both guests' split cases (guest/cases.sh as /split_sample.sh,
# arm64/cases/3*-split-*.sh as /split_sample.sh): where the split
# workload's worker sleeps, as the kernel itself says, for the checks on
# the host (tests/kernels/split_check.py).

# split_sample OUT: once the split workload has named its worker in OUT
# (its "pid PID" and "thread work TID COMM" lines), print a line
#   stack STATE SYSCALL FRAME...
# every 10 ms while that thread lives: its state letter, the syscall it is
# in (/proc/.../syscall's number; -1 or "running" outside one) and its
# kernel stack, innermost first (/proc/.../stack, which leaves out the
# scheduler's own functions). Shell builtins only: the pause is a read
# that times out on a FIFO no one writes to (usleep would fork).
split_sample() {
	local n=0 pid tid rest d st nr f frames pause=/tmp/split_sample.fifo
	[ -p $pause ] || mkfifo $pause
	until grep -q "^thread work " "$1" 2>/dev/null; do
		[ $n -lt 3000 ] || return 1
		usleep 10000
		n=$((n + 1))
	done
	read -r pid pid rest <"$1"
	tid=$(sed -n 's/^thread work \([0-9]*\) .*/\1/p' "$1")
	d=/proc/$pid/task/$tid
	while read -r st <"$d/stat"; do
		st=${st##*) }
		read -r nr rest <"$d/syscall" || nr=
		frames=
		while read -r f; do
			f=${f#* }
			frames="$frames ${f%%+*}"
		done <"$d/stack"
		echo "stack ${st%% *} ${nr:-?}$frames"
		read -t 0.01 f <>$pause
	done 2>/dev/null
}
