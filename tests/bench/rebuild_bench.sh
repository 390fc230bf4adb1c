#!/usr/bin/env bash
# The rebuild benchmark: import + merge + publish with its backup copy, against GNU sort
# (figures: docs/benchmarks.md#rebuild).
#
#   tests/bench/rebuild_bench.sh [RECORDS] [DIR]     default 100000000 records in /tmp/clickatron-rebuild-bench
#
# Generates RECORDS realistic realtime records (tests/bench/rebuild_gen.cc), then in one run:
# GNU sort of the input (`LC_ALL=C sort -S 2G --parallel=2`, the reference), and
# `clickatron-rebuild import --memory MEMORY --jobs 2` + `merge --jobs 2` (which writes the day
# and month rollups) + `publish --backup --jobs 2` (BACKUP_CODEC: zstd, the default, or
# gzip), each under /usr/bin/time for wall time and peak RSS; then the archive and backup
# sizes and the share of rollup lines. MEMORY is the import's memory bound (default 2G, the
# reference's -S). Everything stays in
# DIR; nothing is sent anywhere. Uses a release build:
#   cmake -S . -B build/rebuild-release -G Ninja -DCMAKE_BUILD_TYPE=Release
#   cmake --build build/rebuild-release --target clickatron-rebuild rebuild_gen
set -euo pipefail
. "$(dirname "$0")/bench_harness.sh"
records=${1:-100000000}
dir=${2:-/tmp/clickatron-rebuild-bench}
bin=${CLICKATRON_BIN:-$(cd "$(dirname "$0")/../.." && pwd)/build/rebuild-release/bin}
mkdir -p "$dir"
input=$dir/input-$records.csv
if [[ ! -s $input ]]; then
  echo "generating $records records into $input"
  "$bin/rebuild_gen" --records "$records" > "$input.tmp" && mv "$input.tmp" "$input"
fi
echo "machine: $(nproc) cores, $(free -g | awk '/Mem:/ {print $2}') GiB; input $(du -h "$input" | cut -f1), $(wc -l < "$input") lines"
echo "load before: $(uptime)"

timed() {  # label command... → prints "label: S s, RSS MB"
  timed_step "$dir" "$@"
  printf '%-8s %8.2f s  peak RSS %6d MB\n' "$1:" "$step_secs" $((step_rss_kb / 1024))
}

rm -rf "$dir/work" "$dir/backup" "$dir/sorted.csv"
sync
timed sort env LC_ALL=C TMPDIR="$dir" sort -S 2G --parallel=2 -o "$dir/sorted.csv" "$input"
rm -f "$dir/sorted.csv"
sync
timed import "$bin/clickatron-rebuild" import --work "$dir/work" --input "$input" --memory "${MEMORY:-2G}" --jobs 2
timed merge "$bin/clickatron-rebuild" merge --work "$dir/work" --jobs 2
timed publish "$bin/clickatron-rebuild" publish --work "$dir/work" --backup "$dir/backup" --jobs 2 \
  --backup-codec "${BACKUP_CODEC:-zstd}"
echo "load after: $(uptime)"
cat "$dir/out.import" "$dir/out.merge" "$dir/out.publish"
sort_s=$(cut -d' ' -f1 "$dir/time.sort")
ours_s=$(awk '{s += $1} END {print s}' "$dir/time.import" "$dir/time.merge")
all_s=$(awk '{s += $1} END {print s}' "$dir/time.import" "$dir/time.merge" "$dir/time.publish")
awk -v a="$ours_s" -v b="$sort_s" 'BEGIN {printf "import+merge %.2f s / sort %.2f s = %.2fx\n", a, b, a / b}'
awk -v a="$all_s" -v b="$sort_s" 'BEGIN {printf "import+merge+publish %.2f s / sort %.2f s = %.2fx\n", a, b, a / b}'

meta=$dir/work/merged/meta
points=$(awk -F' = ' '/^shard\.[0-9]+\.columns/ {s += $2} END {print s}' "$meta")
bytes=$(awk -F' = ' '/^shard\.[0-9]+\.bytes/ {s += $2} END {print s}' "$meta")
gz=$(du -cb "$dir"/backup/*/*.csv.* | tail -1 | cut -f1)
lines=$(wc -l < "$input")
awk -v p="$points" -v b="$bytes" -v g="$gz" -v r="$lines" 'BEGIN {
  printf "data points %d (input lines %d); archive %d bytes = %.2f B/point; backup copy %d bytes = %.2f B/point\n",
         p, r, b, b / p, g, g / p }'
# Rollup records (docs/formats.md#rollup-records): subtotal keys whose time is 2 or 3 symbols.
awk -F, '{
  key = $1; dot = index(key, "."); bar = index(key, "|")
  if (dot > 0 && dot < bar) {
    n = split(key, parts, "."); t = length(parts[n])
    if (t == 2 || t == 3) { lines[t]++; bytes[t] += length($0) + 1; next }
  }
  hours += length($0) + 1
} END {
  printf "rollups: %d day lines (%d bytes), %d month lines (%d bytes) = %.1f %% over the %d bytes of the rest\n",
         lines[3], bytes[3], lines[2], bytes[2], 100 * (bytes[2] + bytes[3]) / hours, hours }' "$dir"/work/merged/shard-*.csv
