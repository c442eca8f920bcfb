#!/usr/bin/env bash
# Two stored runs of the 12-case golden dataset on the real local model, one
# per ShopNest prompt version, then `tracegrade compare previous latest`.
# Writes bench/results/compare-prompts.txt (and compare-prompts.md, the
# Markdown comment) with the date, machine, commit and load average.
#   bench/model/compare_prompts.sh            # v1 (baseline) then terse (candidate)
# --concurrency 1: the local model serves one request at a time, so with more
# cases in flight a case's time would include its wait for the model.
set -u
cd "$(dirname "$0")/../.."
export TRACEGRADE_DB=sqlite:///.tracegrade/compare-prompts.db
out=bench/results/compare-prompts.txt
mkdir -p bench/results
rm -f .tracegrade/compare-prompts.db .tracegrade/compare-prompts.db-wal .tracegrade/compare-prompts.db-shm
{
  echo "date     $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "machine  nproc=$(nproc)  $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | xargs)  $(python --version 2>&1)"
  echo "commit   $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- src evals || echo '-dirty')"
  echo "store    $TRACEGRADE_DB"
  echo "load     $(cut -d' ' -f1-3 /proc/loadavg) (1/5/15-min load average at start; the cores are shared)"
} > "$out"
for version in v1 terse; do
  command="tracegrade run evals/golden-dataset.json --prompt-version $version --concurrency 1 --quiet --out .tracegrade/compare-prompts"
  start=$(date +%s)
  { echo; echo "\$ $command"; } >> "$out"
  $command >> "$out" 2> "bench/results/compare-prompts-$version.log"
  status=$?
  echo "exit $status   wall $(( $(date +%s) - start )) s   load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out"
done
command="tracegrade compare previous latest --markdown bench/results/compare-prompts.md --json bench/results/compare-prompts.json"
{ echo; echo "\$ $command"; } >> "$out"
$command >> "$out" 2>&1
echo "exit $?" >> "$out"
