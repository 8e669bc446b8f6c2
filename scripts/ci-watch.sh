#!/usr/bin/env bash
# CI's view of the machine (.ci/run starts it beside the tests): what the machine holds when
# the run starts (a process left from an earlier session shows here); while memory is low
# (below CI_WATCH_LOW_PCT, default 15, percent available) a line every 2 min naming the
# largest processes; when it is nearly gone (below CI_WATCH_KILL_PCT, default 3) it kills the
# largest process and says so: without swap the machine would otherwise thrash until CI's
# limit (stop 49: a bed's controller manager at 22 GB) and the run would report nothing.
# Usage: scripts/ci-watch.sh [interval_s] (default 10).
set -u
interval=${1:-10}
low_pct=${CI_WATCH_LOW_PCT:-15}
kill_pct=${CI_WATCH_KILL_PCT:-3}

facts() {
    awk -v load="$(cut -d' ' -f1-3 /proc/loadavg)" -v procs="$(ps -e --no-headers | wc -l)" \
        '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2}
         END {printf "memory available %d of %d MiB, load %s, %d processes\n", a / 1024, t / 1024, load, procs}' \
        /proc/meminfo
}

below() {  # whether less than $1 percent of the memory is available
    awk -v pct="$1" '/^MemTotal:/ {t = $2} /^MemAvailable:/ {a = $2} END {exit !(a * 100 < t * pct)}' /proc/meminfo
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
    if below "$kill_pct"; then
        top=$(largest 1)
        echo "ci-watch: $(date -u +%T) memory exhausted: $(facts); killing the largest process:"
        echo "$top"
        kill -KILL "$(echo "$top" | awk '{print $5}' | tr -d :)" 2>/dev/null || true
    elif below "$low_pct" && [ $(( $(date +%s) - last )) -ge 120 ]; then
        last=$(date +%s)
        echo "ci-watch: $(date -u +%T) memory low: $(facts)"
        largest 8
    fi
done
