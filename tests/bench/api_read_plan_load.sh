#!/usr/bin/env bash
# The read plan's benchmark (docs/benchmarks.md#api-read-plan): breakdowns of a key with 5
# years of hourly history read through day and month rollups or hour by hour, with and
# without the archive answer cache, and Zipf-popular /series — beside nginx and the archive's
# own /get in the same run.
#
#   tests/bench/api_read_plan_load.sh [BUILD_DIR] [BASE_BUILD_DIR]   (default build/release)
#
# BASE_BUILD_DIR (optional): another build's clickatron-api (e.g. main's) run on the same
# hour-only archive, for a before/after in the same run. Environment: BENCH_DIR (data;
# default /tmp/clickatron-api-read-plan-bench), DURATION (wrk seconds per run; 5),
# CONNECTIONS (32), RUNS (default "nginx archive latency series breakdown nginx2").
#
# Data: tests/bench/api_read_plan_gen.py (once). Servers: nginx (one worker, `return 200`);
# two clickatron-archive on the same file, one whose manifest says `rollups = 1`, one
# without; one clickatron-realtime with today's hours; and the APIs
#   rollups   rollups + cache (the default)     rollups-nc   rollups, query-cache-mb = 0
#   hours     hour-only + cache                 hours-nc     hour-only, query-cache-mb = 0
#   base      BASE_BUILD_DIR's API on the hour-only archive (if given)
# Runs: `latency` = wrk -c1 on /breakdown of bench|long over 1 year (unit=month&units=12)
# and all time (unit=month&units=61) per API: p50/p99 of one query at a time;
# `series` = wrk -cCONNECTIONS /series?unit=day&units=30&timezone=America/New_York on Zipf
# keys; `breakdown` = wrk -cCONNECTIONS /breakdown of bench|long over 30 days (unit=day&units=30);
# `serieslong` = /series of bench|long over its 5 years by day (units=1826, New York), the
# longest total record, at -c1 and -cCONNECTIONS on the `rollups` API, beside the archive's
# own /get of that record at -c1; `seriesrate` = http_rate (open loop: latency from each
# request's due time) at RATE (8000) /series a second on the Zipf keys, CONNECTIONS
# connections, against the `rollups` API, or each API of RATE_APIS in turn (neither run in the
# default RUNS).
# Everything on 127.0.0.1, bounded by DURATION, stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
. "$root/tests/bench/bench_harness.sh"
build=${1:-build/release}
base_build=${2:-}
bench_dir=${BENCH_DIR:-/tmp/clickatron-api-read-plan-bench}
duration=${DURATION:-5}
connections=${CONNECTIONS:-32}
runs=${RUNS:-nginx archive latency series breakdown nginx2}
bin="$root/$build/bin"
lua="$root/tests/bench/api_read_plan_wrk.lua"

require_bins "$bin" clickatron-api clickatron-archive clickatron-realtime
require_tools wrk nginx
[[ -s "$bench_dir/ref.txt" ]] || python3 "$root/tests/bench/api_read_plan_gen.py" "$bench_dir"
ref=$(cat "$bench_dir/ref.txt")

bench_init api-read-plan

nginx_port=$(free_port)
start_nginx_ceiling "$run_dir/nginx" "$nginx_port"

declare -A archive_port
for a in rollups hours; do
  archive_port[$a]=$(free_port)
  "$bin/clickatron-archive" --db-file "$bench_dir/$a/shard-0.csv" --port "${archive_port[$a]}" \
    2> "$run_dir/archive-$a.log" &
  pids+=($!)
  wait_ping "${archive_port[$a]}" $! "$run_dir/archive-$a.log"
done
archive_pid=${pids[1]}

realtime_port=$(free_port)
mkdir -p "$run_dir/rt"
"$bin/clickatron-realtime" --data-dir "$run_dir/rt" --port "$realtime_port" 2> "$run_dir/realtime.log" &
realtime_pid=$!
pids+=("$realtime_pid")
wait_ping "$realtime_port" "$realtime_pid" "$run_dir/realtime.log"
feed_realtime "$realtime_port" "$bench_dir/realtime.csv"

declare -A api_port api_pid
start_api() {  # NAME BIN ARCHIVE EXTRA_CONFIG
  local name=$1 api_bin=$2 archive=$3 extra=$4
  api_port[$name]=$(free_port)
  printf 'port = %s\nrealtime = 127.0.0.1:%s\narchive = 127.0.0.1:%s\noplog-dir = %s\nnode-id = bench%s\n%s' \
    "${api_port[$name]}" "$realtime_port" "${archive_port[$archive]}" "$run_dir/oplog-$name" "$name" \
    "$extra" > "$run_dir/api-$name.conf"
  "$api_bin" --config "$run_dir/api-$name.conf" 2> "$run_dir/api-$name.log" &
  api_pid[$name]=$!
  pids+=($!)
  wait_ping "${api_port[$name]}" "${api_pid[$name]}" "$run_dir/api-$name.log"
}
apis="rollups rollups-nc hours hours-nc"
start_api rollups "$bin/clickatron-api" rollups ""
start_api rollups-nc "$bin/clickatron-api" rollups $'query-cache-mb = 0\n'
start_api hours "$bin/clickatron-api" hours ""
start_api hours-nc "$bin/clickatron-api" hours $'query-cache-mb = 0\n'
if [[ -n "$base_build" ]]; then
  start_api base "$root/$base_build/bin/clickatron-api" hours ""
  apis+=" base"
fi

# Every API gives the same answers.
check() {
  local q=$1 first="" a body
  for a in $apis; do
    body=$(curl -sf "http://127.0.0.1:${api_port[$a]}$q")
    [[ -z "$first" ]] && first=$body
    [[ "$body" == "$first" ]] || { echo "api_read_plan_load: $a answers $q differently" >&2; exit 1; }
  done
}
for units in 12 61; do check "/breakdown?ns=bench&key=long&sub=c&unit=month&units=$units&unit_reference_ts=$ref"; done
check "/breakdown?ns=bench&key=long&sub=c&unit=day&units=30&unit_reference_ts=$ref&timezone=America%2FNew_York"
check "/series?ns=bench&key=z00001&unit=day&units=30&timezone=America%2FNew_York&unit_reference_ts=$ref"
check "/series?ns=bench&key=long&unit=day&units=1826&timezone=America%2FNew_York&unit_reference_ts=$ref"

# run NAME PORT MODE CONNECTIONS PID: one wrk run and its summary line (the API's CPU/request)
run() {
  local name=$1 port=$2 mode=$3 conns=$4 pid=$5 before
  before=$(cpu_ticks "$pid")
  API_MODE=$mode API_KEYS="$bench_dir/zipf.txt" API_REF=$ref run_wrk -t1 -c"$conns" -d"${duration}s" \
    --latency -s "$lua" "http://127.0.0.1:$port/"
  printf "%-34s %8s req/s  p50 %-8s p99 %-8s non-2xx %-6s CPU/req %sus\n" "$name" \
    "$wrk_rps" "$wrk_p50" "$wrk_p99" "$wrk_non2xx" \
    "$(echo "($(cpu_ticks "$pid") - $before) * 1000000 / $hz / ($wrk_requests + 1)" | bc)"
}
cache_line() {  # NAME: the API's archive cache figures and RSS
  curl -sf "http://127.0.0.1:${api_port[$1]}/stats" | python3 -c '
import json, sys
q = json.load(sys.stdin)["data"]["queries"]
if "plan" not in q:  # an API from before the read plan
    sys.exit(0)
c, p = q["archive_cache"], q["plan"]
rate = c["hits"] / max(1, c["hits"] + c["misses"])
print("  %s: archive cache %d entries, %.1f MiB, hit rate %.3f; plan: archive %d (+%d from the cache),"
      " realtime %d (hour asks %d, batched %d), records: months %d days %d hours %d"
      % (sys.argv[1], c["entries"], c["bytes"] / 2**20, rate, p["archive_requests"],
         p["archive_cache_answers"], p["realtime_requests"], p.get("realtime_hour_asks", 0),
         p.get("realtime_batched_asks", 0), p["month_records"], p["day_records"], p["hour_records"]))' "$1"
  echo "  $1: RSS $(awk '/VmRSS/ {print $2, $3}' "/proc/${api_pid[$1]}/status")"
}

echo "== clickatron-api read-plan benchmark"
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "archive: $(wc -l < "$bench_dir/rollups/shard-0.csv") records, $(stat -c %s "$bench_dir/rollups/shard-0.csv") bytes, W = 2024-06-29; ref = $ref"
for r in $runs; do
  case $r in
    nginx|nginx2) run "nginx (ceiling)" "$nginx_port" nginx "$connections" "$nginx_pid" ;;
    archive) run "archive /get (Zipf series keys)" "${archive_port[rollups]}" archive "$connections" "$archive_pid" ;;
    latency)
      for a in $apis; do
        run "api-$a /breakdown 1 year -c1" "${api_port[$a]}" year 1 "${api_pid[$a]}"
        run "api-$a /breakdown all time -c1" "${api_port[$a]}" alltime 1 "${api_pid[$a]}"
      done ;;
    series)
      for a in $apis; do run "api-$a /series Zipf -c$connections" "${api_port[$a]}" series "$connections" "${api_pid[$a]}"; done ;;
    breakdown)
      for a in $apis; do run "api-$a /breakdown 30d -c$connections" "${api_port[$a]}" breakdown "$connections" "${api_pid[$a]}"; done ;;
    seriesrate)
      [[ -x "$bin/http_rate" ]] || { echo "api_read_plan_load: build $bin/http_rate first" >&2; exit 1; }
      sed "s|.*|/series?ns=bench\&key=&\&unit=day\&units=30\&timezone=America%2FNew_York\&unit_reference_ts=$ref|" \
        "$bench_dir/zipf.txt" > "$run_dir/series-paths.txt"
      for a in ${RATE_APIS:-rollups}; do
        before=$(cpu_ticks "${api_pid[$a]}")
        out=$("$bin/http_rate" --target "127.0.0.1:${api_port[$a]}" --paths "$run_dir/series-paths.txt" \
              --rate "${RATE:-8000}" --connections "$connections" --seconds "$duration" --warmup 1) || true
        answered=$(sed -n 's/.* \([0-9]*\) answered.*/\1/p' <<< "$out")
        printf "%-34s %s API CPU/req %sus\n" "api-$a /series Zipf at ${RATE:-8000}/s" "${out#http_rate: }" \
          "$(echo "($(cpu_ticks "${api_pid[$a]}") - $before) * 1000000 / $hz / (${answered:-0} + ${RATE:-8000} + 1)" | bc)"
      done ;;
    serieslong)
      echo "bench|long total record: $(curl -sf "http://127.0.0.1:${archive_port[rollups]}/get?key=bench%7Clong" | wc -c) bytes"
      run "archive /get bench|long -c1" "${archive_port[rollups]}" archivelong 1 "$archive_pid"
      run "api-rollups /series long 5y -c1" "${api_port[rollups]}" serieslong 1 "${api_pid[rollups]}"
      run "api-rollups /series long 5y -c$connections" "${api_port[rollups]}" serieslong "$connections" "${api_pid[rollups]}" ;;
    *) echo "api_read_plan_load: unknown run '$r'" >&2; exit 1 ;;
  esac
done
for a in $apis; do cache_line "$a"; done
