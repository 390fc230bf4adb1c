#!/usr/bin/env bash
# clickatron-archive load benchmark (docs/benchmarks.md#archive), with nginx as the HTTP ceiling in the same run.
#
#   tests/bench/archive_load.sh [BUILD_DIR]        (default build/release)
#
# Environment: BENCH_DIR (data; default /tmp/clickatron-archive-bench), LINES (5000000),
# THREADS (archive event loops, one run per value; default "1 2"), DURATION (wrk seconds per endpoint; 10),
# CONNECTIONS (32), ENDPOINTS ("get miss mget fwmatch"), POPULATE (1: start with --populate;
# 0: map only), DROP_CACHES (1: drop the page cache before each archive run — root only — so
# that the first lookups start from the disk), MEMORY_LIMIT_MB (run the archive in a memory
# cgroup of that size — root, cgroup v1 memory controller — with the page cache dropped before
# it starts: its file pages beyond the limit are evicted, so lookups keep reading the disk, as
# with a file larger than memory).
# BENCH_DIR may hold any archive file as data.csv (a symlink is fine) with keys.txt and
# prefixes.txt of percent-encoded keys; LINES must then be its line count.
#
# Generates the data once (tests/bench/archive_gen.py), starts clickatron-archive with
# --populate and a one-worker nginx (`return 200` of a short body, its own temp config) on
# free loopback ports, then runs `wrk -t1 -cCONNECTIONS -dDURATIONs --latency` with the
# same Lua script against nginx and against each archive endpoint. For each run it prints
# requests/s, p99, non-2xx count and the server's CPU microseconds per request (from
# /proc/PID/stat), and the archive's RSS (anon and file pages) before and after the load.
# Traffic goes to 127.0.0.1 only; every run is bounded by DURATION; both servers are
# stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
. "$root/tests/bench/bench_harness.sh"
build=${1:-build/release}
bench_dir=${BENCH_DIR:-/tmp/clickatron-archive-bench}
lines=${LINES:-5000000}
threads=${THREADS:-1 2}
duration=${DURATION:-10}
connections=${CONNECTIONS:-32}
endpoints=${ENDPOINTS:-get miss mget fwmatch}
archive_bin="$root/$build/bin/clickatron-archive"
lua="$root/tests/bench/archive_wrk.lua"

require_bins "$root/$build/bin" clickatron-archive
require_tools wrk nginx

if [[ ! -s "$bench_dir/data.csv" || ! -s "$bench_dir/keys.txt" ]] ||
   [[ $(wc -l < "$bench_dir/data.csv") -ne $lines ]]; then
  python3 "$root/tests/bench/archive_gen.py" "$bench_dir" "$lines"
fi

bench_init archive-load
bench_on_exit() { rmdir /sys/fs/cgroup/memory/clickatron-archive-bench-$$ 2>/dev/null || true; }

# --- nginx: one worker, a fixed short body, everything under the run dir.
nginx_port=$(free_port)
start_nginx_ceiling "$run_dir/nginx" "$nginx_port"

# --- clickatron-archive, started once per thread count
start_archive() {
  archive_port=$(free_port)
  local start_ns
  start_ns=$(date +%s%N)
  local cgroup=""
  if [[ -n ${MEMORY_LIMIT_MB:-} ]]; then
    cgroup=/sys/fs/cgroup/memory/clickatron-archive-bench-$$
    mkdir -p "$cgroup"
    echo $((MEMORY_LIMIT_MB << 20)) > "$cgroup/memory.limit_in_bytes"
    sync
    echo 3 > /proc/sys/vm/drop_caches
  fi
  (
    [[ -n $cgroup ]] && echo "$BASHPID" > "$cgroup/cgroup.procs"
    exec "$archive_bin" --db-file "$bench_dir/data.csv" --port "$archive_port" --threads "$1" \
      $([[ ${POPULATE:-1} == 1 ]] && echo --populate)
  ) 2> "$run_dir/archive.log" &
  archive_pid=$!
  pids+=("$archive_pid")
  WAIT_PING_SECONDS=${WAIT_PING_SECONDS:-600} wait_ping "$archive_port" "$archive_pid" "$run_dir/archive.log"  # the start verifies the whole file
  startup_ms=$(( ($(date +%s%N) - start_ns) / 1000000 ))
}
stop_archive() {
  bench_stop "$archive_pid"
  rmdir /sys/fs/cgroup/memory/clickatron-archive-bench-$$ 2>/dev/null || true
}
wait_ping "$nginx_port" "$nginx_pid" "$run_dir/nginx/logs/error.log" /

rss() { awk '/^(VmRSS|RssAnon|RssFile):/ {sub(":", "", $1); printf "%s %.1f MB  ", $1, $2/1024}' "/proc/$1/status"; }
# run NAME PID PORT MODE KEYFILE: one wrk run; prints a summary line
run() {
  local name=$1 pid=$2 port=$3 mode=$4 keys=$5 before after
  before=$(cpu_ticks "$pid")
  ARCHIVE_MODE=$mode ARCHIVE_KEYS=$keys run_wrk -t1 -c"$connections" -d"${duration}s" \
    --latency -s "$lua" "http://127.0.0.1:$port/"
  after=$(cpu_ticks "$pid")
  local cpu_us=$(( (after - before) * 1000000 / hz ))
  printf "%-16s %9s req/s  p99 %-8s  non-2xx %-8s  server CPU %5.1f us/req  (%s requests)\n" \
    "$name" "$wrk_rps" "$wrk_p99" "$wrk_non2xx" "$(echo "$cpu_us / $wrk_requests" | bc -l)" "$wrk_requests"
  echo "$wrk_rps $name" >> "$run_dir/rps"
}

echo "== clickatron-archive load benchmark"
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $bench_dir/data.csv ($(wc -l < "$bench_dir/data.csv") lines, $(stat -c %s "$bench_dir/data.csv") bytes)"
echo "wrk -t1 -c$connections -d${duration}s --latency -s tests/bench/archive_wrk.lua"
run "nginx (ceiling)" "$nginx_pid" "$nginx_port" get "$bench_dir/keys.txt"
for t in $threads; do
  start_archive "$t"
  echo "-- archive --threads $t$([[ ${POPULATE:-1} == 1 ]] && echo " --populate"): ready in ${startup_ms} ms (map + verify$([[ ${POPULATE:-1} == 1 ]] && echo " + populate"))"
  echo "   RSS before load: $(rss "$archive_pid")"
  for e in $endpoints; do
    if [[ ${DROP_CACHES:-0} == 1 ]]; then
      sync
      echo 3 > /proc/sys/vm/drop_caches
      echo "   page cache dropped: RSS $(rss "$archive_pid")"
    fi
    case $e in
      get) run "archive-t$t /get" "$archive_pid" "$archive_port" get "$bench_dir/keys.txt" ;;
      miss) run "archive-t$t /get-miss" "$archive_pid" "$archive_port" miss "$bench_dir/keys.txt" ;;
      mget) run "archive-t$t /mget-x10" "$archive_pid" "$archive_port" mget "$bench_dir/keys.txt" ;;
      fwmatch) run "archive-t$t /fwmatch" "$archive_pid" "$archive_port" fwmatch "$bench_dir/prefixes.txt" ;;
    esac
  done
  echo "   RSS after load:  $(rss "$archive_pid")"
  stop_archive
done
run "nginx (again)" "$nginx_pid" "$nginx_port" get "$bench_dir/keys.txt"
nginx_rps=$(awk '$2 == "nginx" {sum += $1; n++} END {printf "%d", sum / n}' "$run_dir/rps")
echo "nginx ceiling (mean of the runs before and after): $nginx_rps req/s"
awk -v n="$nginx_rps" '$2 ~ /^archive/ {printf "ratio to nginx: %-22s %.2f\n", $2 " " $3, $1 / n}' \
  "$run_dir/rps"
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
