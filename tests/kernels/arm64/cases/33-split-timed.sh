# The same as 30, each wait timed by the split itself (from the wake-up to
# the switch in), as on a kernel that keeps no run-queue delay (28 shows
# scprof's view of it).
. /lib.sh
split_case run_delay pipe 40 80
