# The split (split_check.py): 40 one-byte reads of a pipe another thread
# writes a byte to every 80 ms (TCG's arm64 takes 3-5 ms a read and its
# wake-up on a busy host, which the workload wants under a tenth of the
# time: 4.5 ms a read failed its claim at 40 ms).
. /lib.sh
split_case "" pipe 40 80
