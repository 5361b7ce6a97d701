#!/usr/bin/env bash
# Byte-identity check between two rl-audit binaries (issue 20: "every report
# section is byte-identical before and after"): runs `--headless` with each on
# the demo, the test sets and fixtures with their mappings, and any extra
# inputs given, and compares the report folders (diff -r), stdout, stderr and
# exit codes (the output folder's path masked).
#
#   scripts/compare_reports.sh OLD_BIN NEW_BIN [INPUT [ARGS…]]…
#
# Each extra input is one argument, split on spaces into a path and its flags,
# e.g. "big/jsonl" "big/jsonl --lenient". Exits 1 if any case differs.
set -u
old=$1; new=$2; shift 2
top=$(cd "$(dirname "$0")/.." && pwd)
d=$top/tests/data; m=$top/assets/mappings
cases=(
  ""
  "$d/large/jsonl" "$d/large/parquet" "$d/large/jsonl --lenient" "$d/large/jsonl --grep error"
  "$d/rllm/eval" "$d/rllm/train" "$d/inspect/calc.eval" "$d/inspect/calc.json"
  "$d/pyarrow/eval-large-types.parquet" "$d/pyarrow/eval-pandas-categorical.parquet" "$d/pyarrow/eval-pyarrow.parquet"
  "$d/pyarrow/eval-small-pages.parquet" "$d/pyarrow/eval-page-index.parquet"
  "$d/verl/val --map $m/verl-generations.toml" "$d/skyrl/export --map $m/skyrl-evals.toml"
  "$d/areal/fileroot --map $m/areal-rollouts.toml" "$d/verl-agent/rollout_data --map $m/verl-agent-steps.toml"
  "$@"
)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT
bad=0
for c in "${cases[@]}"; do
  for side in old new; do
    bin=$old; [ $side = new ] && bin=$new
    # shellcheck disable=SC2086 # a case is a path and its flags
    "$bin" --headless $c --out "$work/$side" > "$work/$side.out" 2> "$work/$side.err"
    echo $? > "$work/$side.rc"
    sed -i "s#$work/$side#OUT#g" "$work/$side.out" "$work/$side.err"
  done
  if cmp -s "$work/old.rc" "$work/new.rc" && cmp -s "$work/old.out" "$work/new.out" \
     && cmp -s "$work/old.err" "$work/new.err" \
     && { [ ! -d "$work/old" ] || diff -r "$work/old" "$work/new" > /dev/null; }; then
    echo "same:   [${c:-demo}] exit $(cat "$work/old.rc")"
  else
    echo "DIFFER: [${c:-demo}] exit $(cat "$work/old.rc") / $(cat "$work/new.rc")"; bad=1
  fi
  rm -rf "$work/old" "$work/new"
done
exit $bad
