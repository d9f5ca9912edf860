#!/bin/sh
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
# Where the split workload's worker sleeps, as the kernel itself says, for
# the checks on the host (tests/kernels/split_check.py); run by both
# guests' split cases (guest/cases.sh, arm64/lib.sh) as
#
#   sh /split_sample.sh OUT
#
# Once the split workload has named its worker in OUT (its "pid PID" and
# "thread work TID COMM" lines), prints a line
#   stack STATE SYSCALL FRAME...
# every 10 ms while that thread lives: its state letter ("?" if it changed
# while the line was read), the syscall it is in (/proc/.../syscall's
# number; -1 or "running" outside one) and its kernel stack, innermost
# first (/proc/.../stack, which leaves out the scheduler's own functions).
# At nice 19, so that the workload's threads, woken, take the CPU from it
# at once (x86_64's guest has one), and with shell builtins only: the
# pause is a read that times out on a FIFO no one writes to.
out=$1
renice -n 19 -p $$ >/dev/null
pause=/tmp/split_sample.$$
mkfifo $pause
n=0
until grep -q "^thread work " "$out" 2>/dev/null; do
	[ $n -lt 3000 ] || exit 1
	read -t 0.01 f <>$pause
	n=$((n + 1))
done
read -r pid pid rest <"$out"
tid=$(sed -n 's/^thread work \([0-9]*\) .*/\1/p' "$out")
d=/proc/$pid/task/$tid
while read -r st <"$d/stat"; do
	st=${st##*) }
	st=${st%% *}
	read -r nr rest <"$d/syscall" || nr=
	frames=
	while read -r f; do
		f=${f#* }
		frames="$frames ${f%%+*}"
	done <"$d/stack"
	read -r f <"$d/stat"
	f=${f##*) }
	[ "${f%% *}" = "$st" ] || st="?"
	echo "stack $st ${nr:-?}$frames"
	read -t 0.01 f <>$pause
done 2>/dev/null
rm -f $pause
