#!/bin/busybox sh
# /init of the arm64 test VM (boot.sh): mounts what scprof needs, runs each
# case script in /cases (in name order), prints its output, standard error,
# the report it left in /tmp/report (scprof -o /tmp/report) and its exit
# status between markers on the console, and powers off. A case is killed
# after 120 s.
/bin/busybox --install -s /bin
mount -t proc proc /proc
mount -t sysfs sys /sys
mount -t devtmpfs dev /dev
mount -t tracefs tracefs /sys/kernel/tracing
mount -t cgroup2 cgroup2 /sys/fs/cgroup
mount -t tmpfs tmp /tmp
ip link set lo up
export PATH=/bin:/w LC_ALL=C HOME=/
echo "=== KERNEL $(uname -r) $(uname -m)"
echo "=== BTF $(sha256sum /sys/kernel/btf/vmlinux | cut -d' ' -f1)"
for c in /cases/*.sh; do
	name=${c##*/}
	name=${name%.sh}
	rm -f /tmp/report
	t0=$(cut -d' ' -f1 /proc/uptime)
	(cd /tmp && timeout 120 sh "$c" > /tmp/out 2> /tmp/err)
	rc=$?
	t1=$(cut -d' ' -f1 /proc/uptime)
	echo "=== BEGIN $name"
	cat /tmp/out
	echo "=== STDERR $name"
	cat /tmp/err
	echo "=== REPORT $name"
	[ -f /tmp/report ] && cat /tmp/report
	echo "=== END $name $rc $t0 $t1"
done
echo "=== DONE"
poweroff -f
