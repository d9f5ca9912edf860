# the legacy BPF build, as on a kernel without task storage, bpf_task_pt_regs
# (its saved registers found at an offset from the kernel stack) and
# bpf_get_current_task_btf
SCPROF_WITHOUT=all scprof -f --format json -o /tmp/report -- /w/groundtruth 1000 10 100 3 50
