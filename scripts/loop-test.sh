#!/usr/bin/env bash
# scripts/loop-test.sh: runs one Vitest selection again and again, the way a flaky failure or a rare hang is
# found (not part of CI). Each run has the stall watchdogs (test/helpers/stall-watchdog.ts), so a hang ends
# that run in minutes with what it waited on; the loop stops at the first failed run and keeps its log.
#
#   scripts/loop-test.sh [-n RUNS] [--beside 'COMMAND'] [--] VITEST_ARGS...
#
#   -n RUNS              runs (default 20)
#   --beside 'COMMAND'   a command started beside every run (other tests competing for the cores, as in npm
#                        test), stopped when the run ends
#
# The default selection is the one issue 38 asked for: the gpu project's serve.test.ts, 20 times, beside the
# cpu project's tests:
#   scripts/loop-test.sh --beside 'npx vitest run --project cpu' -- --project gpu test/gpu/serve.test.ts
# Logs: .cache/loop-test/run-<i>.log (and beside-<i>.log). Prints "passed K of N" last; exit 1 on a failure.
set -uo pipefail
cd "$(dirname "$0")/.."
runs=20
beside=''
while [ $# -gt 0 ]; do
  case "$1" in
    -n) runs=$2; shift 2 ;;
    --beside) beside=$2; shift 2 ;;
    --) shift; break ;;
    *) break ;;
  esac
done
args=("$@")
[ ${#args[@]} -eq 0 ] && args=(--project gpu test/gpu/serve.test.ts)
logs=.cache/loop-test
mkdir -p "$logs"
node scripts/setup.mjs
passed=0
for i in $(seq 1 "$runs"); do
  pid=''
  if [ -n "$beside" ]; then
    setsid bash -c "$beside" > "$logs/beside-$i.log" 2>&1 &
    pid=$!
  fi
  t0=$(date +%s)
  npx vitest run "${args[@]}" > "$logs/run-$i.log" 2>&1
  rc=$?
  [ -n "$pid" ] && kill -- -"$pid" 2>/dev/null
  wait 2>/dev/null
  echo "run $i of $runs: exit $rc in $(( $(date +%s) - t0 )) s"
  if [ $rc -ne 0 ]; then
    tail -60 "$logs/run-$i.log"
    echo "passed $passed of $runs (stopped at run $i; its log: $logs/run-$i.log)"
    exit 1
  fi
  passed=$((passed + 1))
done
echo "passed $passed of $runs"
