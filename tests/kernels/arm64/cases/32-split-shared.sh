# The split (split_check.py): reads of /dev/zero and getrandom()s on the CPU
# a spinning thread holds.
. /lib.sh
split_case "" shared 8
