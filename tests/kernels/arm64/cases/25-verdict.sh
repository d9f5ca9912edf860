# verdict on a process looping on getppid and clock_gettime, with 24's
# calibration.
. /lib.sh
/w/highrate > /tmp/highrate.out &
hp=$!
line /tmp/highrate.out ready
scprof verdict -p $hp -d 1 --cache /tmp/calibration.json --format json -o /tmp/report
kill $hp
echo "pid $hp"
