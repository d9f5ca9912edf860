# What the kernel offers the BPF programs (scprof features)
scprof features --format json -o /tmp/report
# the kernel's own word on run-queue delays (split_check.py): a process's
# schedstat
cat /proc/self/schedstat
