# The same as 30 with the scheduler's stock features (delayed dequeue on
# from 6.12), whose run-queue delay the truth cannot take (lib.sh): the
# calls and their time on and off CPU only, and the time blocked against
# 30's truth.
. /lib.sh
split_stock "" pipe 40 80
