# The daemon on a cgroup, scraped over loopback once groundtruth's two
# processes are folded into its totals.
. /lib.sh
cg=/sys/fs/cgroup/scprof-daemon
mkdir $cg
scprof daemon --listen 127.0.0.1:9733 --cgroup $cg --fold-interval 0.1 &
dp=$!
attached $dp
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
rmdir $cg
