# The daemon on a cgroup, scraped over loopback once groundtruth's two
# processes are folded into its totals.
#
# Beside the metrics, how many times the kernel ran the daemon's sys_exit
# program while groundtruth ran, and through which link (bpf_stats, on for
# this case: the program's run_cnt and its link's id, read before and
# after with shell builtins only, so that the reading adds no process), as
# "exit link, runs: ID N, ID N". A few boots in a hundred or so, on both
# kernels, the daemon counted none of groundtruth's calls but its exec and
# its exits, which other tracepoints count: this says whether the kernel
# ran the program for them. Then groundtruth runs again on each CPU
# ("again CPU getppid N": does the daemon count calls made later?), and
# each attached program's runs are printed ("link TRACEPOINT runs N
# misses N").
. /lib.sh

# field FDINFO NAME: the value of NAME in an fdinfo file.
field() {
	awk -v k="$2:" '$1 == k { print $2 }' "$1"
}

# prog_info PID ID: the fdinfo file of daemon PID's program ID.
prog_info() {
	for p in /proc/"$1"/fd/*; do
		[ "$(readlink "$p")" = anon_inode:bpf-prog ] &&
		[ "$(field /proc/"$1"/fdinfo/"${p##*/}" prog_id)" = "$2" ] &&
			echo /proc/"$1"/fdinfo/"${p##*/}"
	done 2> /dev/null
}

# links PID: the "link ..." lines of daemon PID.
links() {
	for fd in /proc/"$1"/fd/*; do
		[ "$(readlink "$fd")" = anon_inode:bpf_link ] || continue
		info=/proc/$1/fdinfo/${fd##*/}
		pi=$(prog_info "$1" "$(field "$info" prog_id)")
		[ -n "$pi" ] || continue
		echo "link $(field "$info" tp_name)" \
			"runs $(field "$pi" run_cnt)" \
			"misses $(field "$pi" recursion_misses)"
	done 2> /dev/null
}

# exit_runs PID: the run_cnt of daemon PID's sys_exit program into $runs,
# and the id of the link that attaches it into $link (their fdinfo files
# found once, into $exit_prog and $exit_link).
exit_runs() {
	if [ -z "$exit_prog" ]; then
		for fd in /proc/"$1"/fd/*; do
			[ "$(readlink "$fd")" = anon_inode:bpf_link ] || continue
			exit_link=/proc/$1/fdinfo/${fd##*/}
			[ "$(field "$exit_link" tp_name)" = sys_exit ] || continue
			exit_prog=$(prog_info "$1" \
				"$(field "$exit_link" prog_id)")
			break
		done 2> /dev/null
	fi
	runs= link=
	[ -n "$exit_prog" ] || return
	while read -r k v; do
		[ "$k" = run_cnt: ] && runs=$v
	done < "$exit_prog"
	while read -r k v; do
		[ "$k" = link_id: ] && link=$v
	done < "$exit_link"
}

# scrape N: the metrics into /tmp/metrics once N processes are folded.
scrape() {
	n=0
	while [ $n -lt 100 ]; do
		wget -q -O /tmp/metrics http://127.0.0.1:9733/metrics &&
			grep -qx "scprof_processes_folded_total $1" /tmp/metrics &&
			return 0
		sleep 0.1
		n=$((n + 1))
	done
	return 1
}

echo 1 > /proc/sys/kernel/bpf_stats_enabled
cg=/sys/fs/cgroup/scprof-daemon
mkdir $cg
scprof daemon --listen 127.0.0.1:9733 --cgroup $cg --fold-interval 0.1 \
	2> /tmp/daemon.err &
dp=$!
# Its programs are all attached (and its start-up measurement, which
# attaches and detaches the enter program, over) once it serves.
line /tmp/daemon.err "scprof daemon: serving metrics" || cat /tmp/daemon.err >&2
exit_prog=
exit_runs $dp
before="$link $runs"
sh -c "echo \$\$ > $cg/cgroup.procs && exec /w/groundtruth 1000 10 100 3 50"
exit_runs $dp
echo "exit link, runs: $before, $link $runs"
scrape 2
cp /tmp/metrics /tmp/report
if ! grep -q '^scprof_syscalls_total{syscall="getppid"' /tmp/report; then
	folded=2
	for cpu in 0 1; do
		sh -c "echo \$\$ > $cg/cgroup.procs &&
			exec taskset -c $cpu /w/groundtruth 100 0 0 0 0"
		folded=$((folded + 1))
		scrape $folded
		echo "again $cpu getppid $(awk \
			'$1 == "scprof_syscalls_total{syscall=\"getppid\",abi=\"64\"}" {
				print $2 }' /tmp/metrics)"
	done
	links $dp
fi
kill $dp
wait $dp
cat /tmp/daemon.err >&2
rmdir $cg
echo 0 > /proc/sys/kernel/bpf_stats_enabled
