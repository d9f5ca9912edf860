# The split (split_check.py): 40 one-byte reads of a pipe another thread
# writes a byte to every 40 ms (TCG's arm64 takes about 3 ms a read and its
# wake-up, which the workload wants well under a tenth of the time).
. /lib.sh
split_case "" pipe 40 40
