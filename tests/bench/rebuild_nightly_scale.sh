#!/usr/bin/env bash
# A nightly at scale (docs/benchmarks.md#one-billion): one new day merged into the archive of
# a bulk load, by the local executor and then by the Slurm executor, in one work directory.
#
#   tests/bench/rebuild_nightly_scale.sh WORK RECORDS DAY SEED [SHARDS]
#
# WORK: the work directory of tests/bench/rebuild_slurm_bench.sh's local run (its merged
# archive is the history). Generates DAY (YYYY-MM-DD) of RECORDS rebuild_gen records
# (users = RECORDS / 100) into WORK/../day-DAY.csv, then, each under /usr/bin/time:
#   local:   import (--memory 1G --jobs 2), merge --jobs 2, publish --jobs 2 --backup
#   slurm:   the local run's merged files, generation and backup removed (so that the
#            graph merges for real, and for the disk), ops/slurm-local up, import --replace
#            --executor slurm --chunks 1 (--memory 512M) of the same day (the graph: split,
#            the day's import, a merge per archive shard, the last merge), publish again
# and checks that both merges wrote the same files (the merged meta's checksums) and that
# both publishes name the same generation. Prints
# each step's wall time, CPU, peak RSS and its summary line. Uses a release build.
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
work=$1 records=$2 day=$3 seed=$4 shards=${5:-2}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/bench/bench_harness.sh"
bin=${CLICKATRON_BIN:-$root/build/release/bin}
dir=$(dirname "$work")
input=$dir/day-$day.csv
if [[ ! -s $input ]]; then
  "$bin/rebuild_gen" --records "$records" --users $((records / 100 + 1)) --seed "$seed" --day "$day" > "$input.tmp"
  mv "$input.tmp" "$input"
fi
echo "machine: $(nproc) cores; history: $(awk -F' = ' '/columns/ {s += $2} END {printf "%.0f", s}' "$work/merged/meta") data points; new day $day: $(du -h "$input" | cut -f1)"
echo "load before: $(uptime)"
timed() {  # label command... → prints "label: S s wall, CPU, RSS MB | its summary line"
  local label=$1
  shift
  timed_step "$dir" "n-$label" "$@"
  printf '%-14s %8.2f s wall  %8.2f s CPU  peak RSS %6d MB  | %s\n' "$label:" "$step_secs" "$step_cpu" \
    $((step_rss_kb / 1024)) "$(grep -E '^[a-z]+( on slurm)?: ' "$dir/out.n-$label" | tail -n 1 | cut -c1-200)"
}
sums() { grep -E '^shard\.[0-9]+\.(xxh64|bytes|records)' "$work/merged/meta"; }
timed import "$bin/clickatron-rebuild" import --work "$work" --input "$input" --memory 1G --jobs 2 --archive-shards "$shards"
timed merge "$bin/clickatron-rebuild" merge --work "$work" --jobs 2 --archive-shards "$shards"
local_sums=$(sums)
timed publish "$bin/clickatron-rebuild" publish --work "$work" --jobs 2 --backup "$dir/backup" --archive-shards "$shards"
du -sh "$dir/backup"/*/ | tail -n 1

local_generation=$(readlink "$work/current")
rm -rf "$work/merged" "$work/gen" "$work/current" "$dir/backup"
cluster=$dir/cluster
"$root/ops/slurm-local" down "$cluster" >/dev/null 2>&1 || true
rm -rf "$cluster"
eval "$("$root/ops/slurm-local" up "$cluster")"
trap '"$root/ops/slurm-local" down "$cluster" >/dev/null' EXIT
timed slurm "$bin/clickatron-rebuild" import --work "$work" --input "$input" --replace --memory 512M --jobs 1 \
  --archive-shards "$shards" --executor slurm --chunks 1
grep -h 'on slurm: [a-z-]*: ' "$dir/out.n-slurm"
[[ "$(sums)" == "$local_sums" ]] || { echo "the Slurm merge differs from the local one"; diff <(echo "$local_sums") <(sums); exit 1; }
echo "merged files: the same checksums from both executors"
timed publish-again "$bin/clickatron-rebuild" publish --work "$work" --jobs 2 --backup "$dir/backup" --archive-shards "$shards"
[[ "$(readlink "$work/current")" == "$local_generation" ]] || { echo "another generation: $(readlink "$work/current") against $local_generation"; exit 1; }
echo "both publishes: generation $local_generation"
echo "load after: $(uptime)"
