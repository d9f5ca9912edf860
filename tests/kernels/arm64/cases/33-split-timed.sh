# The same as 32, each wait timed by the split itself, as on a kernel that
# keeps no run-queue delay (28 shows scprof's view of it).
. /lib.sh
split_case run_delay shared 8
