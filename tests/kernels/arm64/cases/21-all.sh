# -a: the whole system while groundtruth runs.
. /lib.sh
scprof -a --format json -o /tmp/report &
sp=$!
attached $sp
/w/groundtruth 1000 10 100 3 50 &
gt=$!
wait $gt
kill -INT $sp
wait $sp
echo "pid $gt"
