#!/usr/bin/env bash
# CI's view of the machine (.ci/run starts it beside the tests): what the machine holds when
# the run starts (a process left from an earlier session shows here), then, while memory is
# low, a line every 2 min naming the largest processes, so a run starved of memory says by
# what. Usage: scripts/ci-watch.sh [interval_s] (default 20); low is below CI_WATCH_LOW_PCT
# (default 15) percent of the memory available.
set -u
interval=${1:-20}
low_pct=${CI_WATCH_LOW_PCT:-15}

facts() {
    awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v procs="$(ps -e --no-headers | wc -l)" \
        '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2}
         END {printf "memory available %d of %d MiB, load %s, %d processes\n", a / 1024, t / 1024, load, procs}' \
        /proc/meminfo
}

largest() {  # the $1 largest processes by resident memory
    ps -eo rss=,pid=,args= --sort=-rss | head -n "$1" |
        awk '{rss = $1; pid = $2; $1 = ""; $2 = ""; printf "ci-watch:   %6d MiB pid %s:%s\n", rss / 1024, pid, substr($0, 1, 140)}'
}

echo "ci-watch: at start: $(facts)"
largest 5
trap 'kill $(jobs -p) 2>/dev/null; exit 0' TERM
last=0
while sleep "$interval" & wait $!; do
    low=$(awk -v pct="$low_pct" '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2} END {print (a * 100 < t * pct)}' \
        /proc/meminfo)
    if [ "$low" = 1 ] && [ $(( $(date +%s) - last )) -ge 120 ]; then
        last=$(date +%s)
        echo "ci-watch: $(date -u +%T) memory low: $(facts)"
        largest 8
    fi
done
