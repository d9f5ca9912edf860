# The split (split_check.py): 60 locks of a mutex another thread holds
# 20 ms at a time (TCG's arm64 takes about 2 ms a round besides).
. /lib.sh
split_case "" futex 60 20
