#!/usr/bin/env bash
# Runs `tracegrade run ARGS...` and saves its report with the date, machine,
# commit, command, wall time and load average, so a number in the README can
# be traced back to how it was measured.
#   bench/run/benchmark.sh checks-only evals/benchmark.json --checks-only
# writes bench/results/benchmark-checks-only.txt (stderr, with the progress bar, to .log).
set -u
name=$1; shift
out=bench/results/benchmark-$name.txt
log=bench/results/benchmark-$name.log
mkdir -p bench/results
{
  echo "date     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine  nproc=$(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  $(python --version 2>&1)"
  echo "commit   $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src evals || echo '-dirty')"
  echo "command  tracegrade run $*"
  echo "load     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15-min load average at start; the cores are shared)"
  echo
} > "$out"
start=$(date +%s)
tracegrade run "$@" >> "$out" 2> "$log"
status=$?
end=$(date +%s)
{
  echo
  echo "exit     $status"
  echo "wall     $((end - start)) s"
  echo "load     $(cut -d' ' -f1-3 /proc/loadavg) (at the end)"
} >> "$out"
exit $status
