# A 32-bit arm program (mkarm32.py): 1000 getpid calls, arm's number 20
# (arm64's 20 is epoll_create1).
scprof -f --format json -o /tmp/report -- /w/getpid32
