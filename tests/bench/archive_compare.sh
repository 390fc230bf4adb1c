#!/usr/bin/env bash
# Serves two merged archives side by side and asks both the same random keys
# (docs/benchmarks.md#scale: the Slurm executor's bulk load against the local executor's).
#
#   tests/bench/archive_compare.sh MERGED_A MERGED_B KEYS_PER_SHARD [BUILD_DIR]
#
# MERGED_A, MERGED_B: `merged/` directories of two rebuild work directories (shard-K.csv).
# For every shard K: one clickatron-archive on each file (127.0.0.1, free ports; the start
# verifies the whole file and is timed), KEYS_PER_SHARD keys of A's file taken at random
# (seed K), each asked of both (tests/bench/archive_same_answers.py). Exit 1 on any
# difference. Both servers of a shard are stopped before the next shard starts.
set -euo pipefail
[[ $# -ge 3 ]] || { sed -n '2,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
cd "$(dirname "$0")/../.."
root=$(pwd)
merged_a=$1 merged_b=$2 per_shard=$3
build=${4:-build/release}
. "$root/tests/bench/bench_harness.sh"
WAIT_PING_SECONDS=${WAIT_PING_SECONDS:-1800}  # a start verifies the whole file
bench_init archive-compare

for file_a in "$merged_a"/shard-*.csv; do
  name=$(basename "$file_a")
  file_b=$merged_b/$name
  shard=${name#shard-}
  shard=${shard%.csv}
  ports=()
  for f in "$file_a" "$file_b"; do
    port=$(free_port)
    log=$run_dir/archive-$port.log
    start=$(date +%s.%N)
    "$root/$build/bin/clickatron-archive" --db-file "$f" --address 127.0.0.1 --port "$port" > "$log" 2>&1 &
    pid=$!
    pids+=("$pid")
    wait_ping "$port" "$pid" "$log"
    printf '%s: serving %s (%s bytes) after %.1f s\n' "$name" "$f" "$(stat -c %s "$f")" "$(echo "$(date +%s.%N) - $start" | bc)"
    ports+=("$port")
  done
  /usr/bin/python3 "$root/tests/bench/archive_same_answers.py" "${ports[0]}" "${ports[1]}" \
    --sample "$file_a" "$per_shard" "$shard"
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  pids=()
done
