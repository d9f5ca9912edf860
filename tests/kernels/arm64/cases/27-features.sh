# What the kernel offers the BPF programs (scprof features)
scprof features --format json -o /tmp/report
