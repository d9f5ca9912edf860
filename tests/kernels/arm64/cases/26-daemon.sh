# The daemon on a cgroup, scraped over loopback once groundtruth's two
# processes are folded into its totals.
. /lib.sh
cg=/sys/fs/cgroup/scprof-daemon
mkdir $cg
scprof daemon --listen 127.0.0.1:9733 --cgroup $cg --fold-interval 0.1 \
	2> /tmp/daemon.err &
dp=$!
# Its programs are all attached (and its start-up measurement, which
# attaches and detaches the enter program, over) once it serves.
line /tmp/daemon.err "scprof daemon: serving metrics" || cat /tmp/daemon.err >&2
sh -c "echo \$\$ > $cg/cgroup.procs && exec /w/groundtruth 1000 10 100 3 50"
n=0
while [ $n -lt 100 ]; do
	wget -q -O /tmp/metrics http://127.0.0.1:9733/metrics &&
		grep -qx 'scprof_processes_folded_total 2' /tmp/metrics && break
	sleep 0.1
	n=$((n + 1))
done
mv /tmp/metrics /tmp/report
kill $dp
wait $dp
cat /tmp/daemon.err >&2
rmdir $cg
