# Calls in flight: blocked's threads sleep in read, epoll_wait (epoll_pwait
# on arm64) and wait4 before scprof starts, and still do when it stops.
. /lib.sh
/w/blocked > /tmp/blocked.out &
bp=$!
line /tmp/blocked.out ready
sleep 0.5
scprof -p $bp -d 1 --format json -o /tmp/report
kill $bp
echo "pid $bp"
