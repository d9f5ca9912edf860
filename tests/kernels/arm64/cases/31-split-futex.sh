# The split (split_check.py): 60 locks of a mutex another thread holds
# 40 ms at a time (TCG's arm64 takes 2-4 ms a round besides on a busy
# host: 4 ms a round failed the workload's claim at 20 ms).
. /lib.sh
split_case "" futex 60 40
