# scprof features as on a kernel that keeps no run-queue delay (33's split)
SCPROF_WITHOUT=run_delay scprof features --format json -o /tmp/report
