#!/usr/bin/env bash
# Run a conformance suite N times and count passes and failures.
#   scripts/conformance-loop.sh N [pytest args...]   e.g. --zp-controller-variant deletes-zone
# LOOP_TESTS names what runs (paths under the repository, default the HA controller's hand
# suite); e.g. as certify runs the webhook's conformance:
#   LOOP_TESTS=conformance/ha_config scripts/conformance-loop.sh 20 -n 2 --dist loadgroup \
#       -m "not mutants and not long and not self_check and not kind"
# Each run is a fresh pytest (a fresh module bed). One line per run: number, pass/fail,
# wall seconds, the first failed test; then the counts. Exit 0 only if every run passed.
# ZONEPROOF_STATE, LOOP_PREFIX (a command prefix per run, e.g. "flock /tmp/lock") and
# LOOP_LOG_DIR (default: a temp dir; each run's output as run-<i>.log) are honoured.
set -u
runs=${1:?usage: $0 N [pytest args...]}
shift
dir=${LOOP_LOG_DIR:-$(mktemp -d -t zp-loop-XXXXXX)}
mkdir -p "$dir"
root=$(cd "$(dirname "$0")/.." && pwd)
read -r -a tests <<< "${LOOP_TESTS:-conformance/ha_controller/test_controller.py}"
passed=0
failed=0
for i in $(seq 1 "$runs"); do
    start=$(date +%s)
    # shellcheck disable=SC2086
    ${LOOP_PREFIX:-} "$root/.venv/bin/pytest" -p no:cacheprovider -q -x \
        "${tests[@]/#/$root/}" "$@" > "$dir/run-$i.log" 2>&1
    code=$?
    seconds=$(( $(date +%s) - start ))
    first=$(grep -m1 -oE '^FAILED [^ ]+' "$dir/run-$i.log" | cut -d' ' -f2)
    if [ "$code" -eq 0 ]; then passed=$((passed + 1)); verdict=pass; else failed=$((failed + 1)); verdict="fail (exit $code)"; fi
    echo "run $i/$runs: $verdict ${seconds}s ${first:-}"
done
echo "passed $passed, failed $failed of $runs (args: ${*:-none}; logs: $dir)"
[ "$failed" -eq 0 ]
