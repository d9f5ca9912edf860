# --cgroup: a shell moves itself into a cgroup and runs groundtruth there.
. /lib.sh
cg=/sys/fs/cgroup/scprof-test
mkdir $cg
scprof --cgroup $cg --format json -o /tmp/report &
sp=$!
attached $sp
sh -c "echo \$\$ > $cg/cgroup.procs && exec /w/groundtruth 1000 10 100 3 50" &
gt=$!
wait $gt
kill -INT $sp
wait $sp
echo "pid $gt"
rmdir $cg
