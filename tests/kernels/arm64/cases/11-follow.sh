scprof -f --format json -o /tmp/report -- /w/groundtruth 1000 10 100 3 50
