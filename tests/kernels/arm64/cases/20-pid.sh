# -p: two threads of a running process, each 1000 getppid, 5 failed openat
# and 20 pread64, made once scprof has attached.
. /lib.sh
mkfifo /tmp/go
/w/gocalls 2 1000 5 20 < /tmp/go > /tmp/go.out &
gp=$!
exec 3> /tmp/go
line /tmp/go.out ready
scprof -p $gp --format json -o /tmp/report 3>&- &
sp=$!
attached $sp
echo go >&3
line /tmp/go.out done
exec 3>&- # gocalls exits at the end of its input
wait $sp
echo "pid $gp"
