#!/bin/sh
# The default judge (local model) on the judge's own labelled answers (evals/judge-labels),
# one calibration per file, each recorded with the command and `uptime` before and after.
#   sh bench/judge/judge_labels.sh [travel general travel-noref general-noref]
# SUFFIX=-x: writes bench/results/judge-labels-NAME-x.* (a second measurement beside the first).
# RUBRIC=bench/judge/judge-rubric-labelled.md: the shipped rubric cut to the labelled metrics
# (bench/judge/rubric_subset.py; the same prompts, so the same values, in fewer calls).
set -e
cd "$(dirname "$0")/../.."
PY=${PYTHON:-python}
for name in ${*:-travel general travel-noref general-noref}; do
  out=bench/results/judge-labels-$name${SUFFIX:-}
  rubric=${RUBRIC:+--rubric $RUBRIC}
  cmd="tracegrade calibrate --labels evals/judge-labels/$name.json $rubric --no-breaks --fit-thresholds --json $out.json"
  {
    echo "uptime before: $(uptime)"
    echo "source: $(git rev-parse --short HEAD)"
    echo "command: $cmd"
    start=$(date +%s)
    $PY -m tracegrade.cli calibrate --labels "evals/judge-labels/$name.json" $rubric --no-breaks --fit-thresholds \
      --json "$out.json" --db "sqlite:///$(mktemp -d)/runs.db" 2>&1 | grep -v "^llama\|^srv\|^slot\|^load\|^print_info\|^common\|^main\|^build\|^system_info\|^init\|^que" || true
    echo "seconds: $(( $(date +%s) - start ))"
    echo "uptime after: $(uptime)"
  } > "$out.txt"
  echo "wrote $out.txt"
done
