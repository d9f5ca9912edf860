# calibrate --quick, two loops (TCG is slow), saved for verdict (25).
scprof calibrate --quick -l syscall-getppid,read-1B --cache /tmp/calibration.json \
	--format json -o /tmp/report
