scprof -f --stacks=50 --format json -o /tmp/report -- /w/stackmix 4000 3 300
