#!/usr/bin/env bash
# A bulk load through the Slurm executor beside the local executor (figures:
# docs/benchmarks.md#scale).
#
#   tests/bench/rebuild_slurm_bench.sh RECORDS DAYS CHUNKS SHARDS [DIR]
#
# Generates DAYS days of RECORDS/DAYS realistic records each (tests/bench/rebuild_gen.cc,
# users = records per day / 100, a seed per day), then in one run, each under /usr/bin/time:
#   local:  clickatron-rebuild import --memory 1G --jobs 2, then merge --jobs 2 (SHARDS archive shards)
#   slurm:  ops/slurm-local up (two nodes of one CPU on this host), then
#           clickatron-rebuild import --executor slurm --chunks CHUNKS --memory 512M --jobs 1
#           (split, CHUNKS imports, a merge per archive shard, the last merge)
# and checks that both merged files are the same bytes (cmp). Prints wall time and peak RSS
# of each, the Slurm run's per-step summary (tasks, nodes, CPU, peak RSS per task) and the
# merged bytes per data point. Everything stays in DIR (default /tmp/clickatron-slurm-bench);
# the private cluster is taken down at the end. STREAM=1 generates the input on the fly for
# each executor instead of keeping it on disk (a 1 B input is 22 GB): the local import reads
# it from a pipe, the Slurm graph's `split` task from a named pipe in DIR; the generator's
# CPU time is then inside both wall times alike. Uses a release build:
#   cmake -S . -B build/release -G Ninja -DCMAKE_BUILD_TYPE=Release -DCLICKATRON_BENCH=ON
#   cmake --build build/release --target clickatron-rebuild rebuild_gen
set -euo pipefail
[[ $# -ge 4 ]] || { sed -n '2,22p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
records=$1 days=$2 chunks=$3 shards=$4
dir=${5:-/tmp/clickatron-slurm-bench}
root=$(cd "$(dirname "$0")/../.." && pwd)
. "$root/tests/bench/bench_harness.sh"
bin=${CLICKATRON_BIN:-$root/build/release/bin}
mkdir -p "$dir"
input=$dir/input-$records-$days.csv
per_day=$((records / days))
# The generator as a script of its own, so that a pipe and a background writer can run it.
cat > "$dir/gen.sh" <<GEN
#!/usr/bin/env bash
set -euo pipefail
for ((d = 0; d < $days; d++)); do
  "$bin/rebuild_gen" --records $per_day --users $((per_day / 100 + 1)) --seed \$((d + 1)) \\
    --day "\$(date -u -d "2012-03-01 + \$d days" +%F)"
done
GEN
chmod +x "$dir/gen.sh"
if [[ ${STREAM:-0} == 1 ]]; then
  input=$dir/input.fifo
  rm -f "$input"
  mkfifo "$input"
  echo "input generated on the fly: $days day(s) of $per_day records"
elif [[ ! -s $input ]]; then
  echo "generating $days day(s) of $per_day records into $input"
  "$dir/gen.sh" > "$input.tmp"
  mv "$input.tmp" "$input"
fi
if [[ ${STREAM:-0} == 1 ]]; then
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; input on the fly, $days day(s)"
else
  echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; input $(du -h "$input" | cut -f1), $(wc -l < "$input") lines, $days day(s)"
fi
echo "load before: $(uptime)"

timed() {  # label command... → prints "label: S s wall, CPU, RSS MB"
  timed_step "$dir" "$@"
  printf '%-12s %8.2f s wall  %8.2f s CPU  peak RSS %6d MB\n' "$1:" "$step_secs" "$step_cpu" $((step_rss_kb / 1024))
}

run_local() {
  if [[ ${STREAM:-0} == 1 ]]; then
    timed import bash -c 'set -o pipefail; "$0" | "$1" import --work "$2" --input - --memory 1G --jobs 2 --archive-shards "$3"' \
      "$dir/gen.sh" "$bin/clickatron-rebuild" "$dir/local" "$shards"
  else
    timed import "$bin/clickatron-rebuild" import --work "$dir/local" --input "$input" --memory 1G --jobs 2 \
      --archive-shards "$shards"
  fi
  timed merge "$bin/clickatron-rebuild" merge --work "$dir/local" --jobs 2 --archive-shards "$shards"
}

run_slurm() {
  local cluster=$dir/cluster
  "$root/ops/slurm-local" down "$cluster" >/dev/null 2>&1 || true
  rm -rf "$cluster"
  eval "$("$root/ops/slurm-local" up "$cluster")"
  trap '"$root/ops/slurm-local" down "$dir/cluster" >/dev/null' EXIT
  sync
  if [[ ${STREAM:-0} == 1 ]]; then "$dir/gen.sh" > "$input" & fi
  timed slurm "$bin/clickatron-rebuild" import --work "$dir/slurm-work" --input "$input" --memory 512M --jobs 1 \
    --archive-shards "$shards" --executor slurm --chunks "$chunks"
}

rm -rf "$dir/local" "$dir/slurm-work"
sync
if [[ ${STREAM:-0} == 1 ]]; then
  # Disk: the Slurm graph's chunks, segments and merged files, then the local run's segments
  # and merged files, never all at once: the Slurm run's segments go before the local run.
  run_slurm
  rm -rf "$dir/slurm-work/segments"
  sync
  run_local
else
  run_local
  run_slurm
fi
echo "load after: $(uptime)"
grep -h 'on slurm: [a-z]*: ' "$dir/out.slurm"
for f in "$dir"/local/merged/shard-*.csv; do
  cmp "$f" "$dir/slurm-work/merged/$(basename "$f")"
done
echo "merged files identical: $(ls "$dir"/local/merged/shard-*.csv | wc -l) shard file(s)"
meta=$dir/local/merged/meta
points=$(awk -F' = ' '/^shard\.[0-9]+\.columns/ {s += $2} END {print s}' "$meta")
bytes=$(awk -F' = ' '/^shard\.[0-9]+\.bytes/ {s += $2} END {print s}' "$meta")
awk -v p="$points" -v b="$bytes" 'BEGIN { printf "data points %.0f; merged %.0f bytes = %.2f B/point\n", p, b, b / p }'
local_s=$(awk '{s += $1} END {print s}' "$dir/time.import" "$dir/time.merge")
slurm_s=$(cut -d' ' -f1 "$dir/time.slurm")
awk -v a="$slurm_s" -v b="$local_s" 'BEGIN {printf "slurm %.2f s / local import+merge %.2f s = %.2fx\n", a, b, a / b}'
