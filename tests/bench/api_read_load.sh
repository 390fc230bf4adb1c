#!/usr/bin/env bash
# clickatron-api read-path load benchmark (docs/benchmarks.md#api-read-path), with nginx and the archive's own /get
# measured in the same run.
#
#   tests/bench/api_read_load.sh [BUILD_DIR]        (default build/release)
#
# Environment: BENCH_DIR (data; default /tmp/clickatron-api-read-bench), LINES (5000000),
# DURATION (wrk seconds per run; 10), CONNECTIONS (32), RUNS (which runs, in order; default
# "nginx archive series series-rate breakdown nginx2"), RATE (the offered rate of the
# series-rate run; 8000), PERF_DIR (if set: `perf record -g` of the API
# during each api run into PERF_DIR/api-<mode>.data, plus `perf stat` of every process).
#
# Generates the data once (tests/bench/api_read_gen.py: a 5-million-record archive file with
# its manifest, W = 2024-06-29, and today's hours for realtime), starts one clickatron-archive
# on it, one clickatron-realtime (fed through its /incr), one clickatron-api in front, and a
# one-worker nginx (`return 200`), all on free loopback ports. Then `wrk -t1 -cCONNECTIONS
# -dDURATIONs --latency` against: nginx (the HTTP ceiling), the archive's /get of a series
# total record (the backend call every /series makes), the API's
#   /series?unit=day&units=30&timezone=America/New_York   (29 days from the archive, today
#                                                         from realtime)
#   /breakdown?sub=c&unit=day&units=30&limit=10           (720 subtotal records of 50
#                                                         subkeys each, plus realtime)
# and prints requests/s, p99, non-2xx and each server's CPU per request. wrk is closed-loop:
# at full load its latency is the queue that 32 connections make (32 / throughput). The
# series-rate run offers the same /series at a fixed RATE over CONNECTIONS connections with
# http_rate (open loop, latency from each request's due time): the latency at that load. Traffic goes to
# 127.0.0.1 only; every run is bounded by DURATION; every server is stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
. "$root/tests/bench/bench_harness.sh"
build=${1:-build/release}
bench_dir=${BENCH_DIR:-/tmp/clickatron-api-read-bench}
lines=${LINES:-5000000}
duration=${DURATION:-10}
connections=${CONNECTIONS:-32}
runs=${RUNS:-nginx archive series series-rate breakdown nginx2}
rate=${RATE:-8000}
perf_dir=${PERF_DIR:-}
bin="$root/$build/bin"
lua="$root/tests/bench/api_read_wrk.lua"

require_bins "$bin" clickatron-api clickatron-archive clickatron-realtime http_rate
require_tools wrk nginx

if [[ ! -s "$bench_dir/shard-0.csv" || ! -s "$bench_dir/ref.txt" ]]; then
  python3 "$root/tests/bench/api_read_gen.py" "$bench_dir" "$lines"
fi
ref=$(cat "$bench_dir/ref.txt")

bench_init api-read-load

# --- nginx: one worker, a fixed short body
nginx_port=$(free_port)
start_nginx_ceiling "$run_dir/nginx" "$nginx_port"

archive_port=$(free_port)
"$bin/clickatron-archive" --db-file "$bench_dir/shard-0.csv" --port "$archive_port" \
  2> "$run_dir/archive.log" &
archive_pid=$!
pids+=("$archive_pid")
wait_ping "$archive_port" "$archive_pid" "$run_dir/archive.log"

realtime_port=$(free_port)
mkdir -p "$run_dir/rt"
"$bin/clickatron-realtime" --data-dir "$run_dir/rt" --port "$realtime_port" 2> "$run_dir/realtime.log" &
realtime_pid=$!
pids+=("$realtime_pid")
wait_ping "$realtime_port" "$realtime_pid" "$run_dir/realtime.log"
feed_realtime "$realtime_port" "$bench_dir/realtime.csv"

api_port=$(free_port)
cat > "$run_dir/api.conf" <<CONF
port = $api_port
realtime = 127.0.0.1:$realtime_port
archive = 127.0.0.1:$archive_port
oplog-dir = $run_dir/oplog
node-id = bench
CONF
"$bin/clickatron-api" --config "$run_dir/api.conf" 2> "$run_dir/api.log" &
api_pid=$!
pids+=("$api_pid")
wait_ping "$api_port" "$api_pid" "$run_dir/api.log"
wait_ping "$nginx_port" "$nginx_pid" /dev/null 2>/dev/null || true

# The answers are checked once before the load: 30 buckets, today's hours included.
curl -sf "http://127.0.0.1:$api_port/series?ns=bench&key=s0000&unit=day&units=30&timezone=America%2FNew_York&unit_reference_ts=$ref" |
  python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; assert len(d["series"]) == 30 and all(b["value"] > 0 for b in d["series"]), d'
curl -sf "http://127.0.0.1:$api_port/breakdown?ns=bench&key=b00&sub=c&unit=day&units=30&limit=10&unit_reference_ts=$ref" |
  python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; assert len(d["breakdown"]) == 10, d'

# run NAME PORT MODE KEYFILE PID...: one wrk run; prints a summary line
run() {
  local name=$1 port=$2 mode=$3 keys=$4
  shift 4
  local p before
  before=$(cpu_snapshot "$@")
  local perf_pids=()
  if [[ -n "$perf_dir" && $name == api* ]]; then
    mkdir -p "$perf_dir"
    perf record -q -g -F 999 -o "$perf_dir/api-$mode.data" -p "$1" -- sleep "$duration" \
      2> /dev/null &
    perf_pids+=($!)
    perf stat -e task-clock,context-switches,cpu-migrations,page-faults,cycles,instructions \
      -p "$(IFS=,; echo "$*")" -o "$perf_dir/stat-$mode.txt" -- sleep "$duration" 2> /dev/null &
    perf_pids+=($!)
  fi
  API_MODE=$mode API_KEYS=$keys API_REF=$ref run_wrk -t1 -c"$connections" -d"${duration}s" \
    --latency -s "$lua" "http://127.0.0.1:$port/"
  for p in "${perf_pids[@]}"; do wait "$p" || true; done
  printf "%-22s %8s req/s  p50 %-8s p99 %-8s non-2xx %-6s CPU/req:%s\n" \
    "$name" "$wrk_rps" "$wrk_p50" "$wrk_p99" "$wrk_non2xx" "$(cpu_per_request "$before" "$wrk_requests" "$@")"
  echo "$wrk_rps $name" >> "$run_dir/rps"
}

# run_rate NAME PORT PATHS PID...: one http_rate run (open loop at $rate/s); prints its summary
run_rate() {
  local name=$1 port=$2 paths=$3
  shift 3
  local before out answered
  before=$(cpu_snapshot "$@")
  out=$("$bin/http_rate" --target "127.0.0.1:$port" --paths "$paths" --rate "$rate" \
        --connections "$connections" --seconds "$duration" --warmup 1) || true
  answered=$(sed -n 's/.* \([0-9]*\) answered.*/\1/p' <<< "$out")
  # The CPU covers the 1 s warm-up too: $rate more requests.
  printf "%-22s %s CPU/req:%s\n" "$name" "${out#http_rate: }" \
    "$(cpu_per_request "$before" "$((answered + rate))" "$@")"
}

series_paths="$run_dir/series-paths.txt"
sed "s|.*|/series?ns=bench\&key=&\&unit=day\&units=30\&timezone=America%2FNew_York\&unit_reference_ts=$ref|" \
  "$bench_dir/series.txt" > "$series_paths"

echo "== clickatron-api read-path load benchmark"
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "archive: $bench_dir/shard-0.csv ($(wc -l < "$bench_dir/shard-0.csv") records, $(stat -c %s "$bench_dir/shard-0.csv") bytes), W = $(awk '/last_day/ {print $3}' "$bench_dir/manifest")"
echo "wrk -t1 -c$connections -d${duration}s --latency -s tests/bench/api_read_wrk.lua"
for r in $runs; do
  case $r in
    nginx) run "nginx (ceiling)" "$nginx_port" nginx "$bench_dir/series.txt" "$nginx_pid" ;;
    nginx2) run "nginx (again)" "$nginx_port" nginx "$bench_dir/series.txt" "$nginx_pid" ;;
    archive) run "archive /get (backend)" "$archive_port" archive "$bench_dir/series.txt" "$archive_pid" ;;
    series) run "api /series" "$api_port" series "$bench_dir/series.txt" "$api_pid" "$archive_pid" "$realtime_pid" ;;
    series-rate) run_rate "api /series @${rate}/s" "$api_port" "$series_paths" "$api_pid" "$archive_pid" "$realtime_pid" ;;
    breakdown) run "api /breakdown" "$api_port" breakdown "$bench_dir/breakdown.txt" "$api_pid" "$archive_pid" "$realtime_pid" ;;
    *) echo "api_read_load: unknown run '$r' (nginx archive series series-rate breakdown nginx2)" >&2; exit 1 ;;
  esac
done
touch "$run_dir/rps"  # runs of http_rate alone write none
nginx_rps=$(awk '$2 == "nginx" {sum += $1; n++} END {if (n) printf "%d", sum / n}' "$run_dir/rps")
archive_rps=$(awk '$2 == "archive" {print $1}' "$run_dir/rps")
if [[ -n "$nginx_rps" && -n "$archive_rps" ]]; then
  echo "nginx ceiling (mean of the runs before and after): $nginx_rps req/s"
  awk -v n="$nginx_rps" -v a="$archive_rps" '$2 == "api" {printf "ratio: api %-12s to nginx %.2f, to the archive /get %.2f\n", $3, $1 / n, $1 / a}' \
    "$run_dir/rps"
fi
curl -sf "http://127.0.0.1:$api_port/stats" | python3 -c 'import json,sys; d=json.load(sys.stdin)["data"]; print("api /stats latency_us (request read to reply, inside the API):", json.dumps({k: v for k, v in d.get("latency_us", {}).items() if k in ("/series", "/breakdown")}))' || true
for backend in "archive $archive_port /get requests" "realtime $realtime_port /mget latency"; do
  set -- $backend
  curl -sf "http://127.0.0.1:$2/stats" | python3 -c "import json,sys; d=json.load(sys.stdin); d=d.get('data', d); print('$1 /stats latency of $3 (inside the server):', json.dumps(d.get('$4', {}).get('$3')))" || true
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
