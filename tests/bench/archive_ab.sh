#!/usr/bin/env bash
# Two clickatron-archive binaries side by side on one file, the same load against each,
# alternated (docs/benchmarks.md#archive-guarded-reads): a change's cost as ratios new/old
# measured in the same minutes of a shared machine.
#
#   tests/bench/archive_ab.sh OLD_BIN NEW_BIN
#
# Environment: BENCH_DIR (data, as archive_load.sh; default /tmp/clickatron-archive-bench),
# LINES (5000000), ROUNDS (5; 0: callgrind only), DURATION (wrk seconds per run; 10), CONNECTIONS (32),
# ENDPOINTS ("get"; also miss, mget, fwmatch), CALLGRIND (1: then count the instructions
# per /get of each binary under callgrind; 0: skip), REQUESTS (/gets counted; 20000).
#
# Generates the data once (tests/bench/archive_gen.py), starts both binaries with --populate
# (one page cache) on free 127.0.0.1 ports, then for each round and endpoint runs
# `wrk -t1 -cCONNECTIONS -dDURATIONs --latency -s tests/bench/archive_wrk.lua` against one and
# then the other (OLD first in odd rounds, NEW first in even ones), printing requests/s, p99
# and the server's CPU microseconds per request (/proc/PID/stat), and the round's ratios
# new/old; at the end the median ratio of each endpoint. With CALLGRIND=1 each binary is then
# started alone under `valgrind --tool=callgrind`, its counters zeroed once it answers, sent
# REQUESTS keep-alive /gets of keys.txt by one client, and dumped per thread: instructions per
# /get are the loop thread's total over REQUESTS, and all threads' (the watcher's wake-ups are
# per second, not per request, and callgrind runs ~50x slower than the real thing).
# Every run is bounded; every server is stopped at exit.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
. "$root/tests/bench/bench_harness.sh"
[[ $# -eq 2 ]] || { sed -n '2,11p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }
old_bin=$(realpath "$1") new_bin=$(realpath "$2")
bench_dir=${BENCH_DIR:-/tmp/clickatron-archive-bench}
lines=${LINES:-5000000}
rounds=${ROUNDS:-5}
duration=${DURATION:-10}
connections=${CONNECTIONS:-32}
endpoints=${ENDPOINTS:-get}
requests=${REQUESTS:-20000}
lua="$root/tests/bench/archive_wrk.lua"
for b in "$old_bin" "$new_bin"; do [[ -x $b ]] || { echo "archive_ab: $b is not an executable" >&2; exit 1; }; done
require_tools wrk

if [[ ! -s "$bench_dir/data.csv" || ! -s "$bench_dir/keys.txt" ]] ||
   [[ $(wc -l < "$bench_dir/data.csv") -ne $lines ]]; then
  /usr/bin/python3 "$root/tests/bench/archive_gen.py" "$bench_dir" "$lines"
fi

bench_init archive-ab

# start NAME BIN [PREFIX...]: starts BIN on the data, waits for /ping; sets port_NAME, pid_NAME.
start() {
  local name=$1 bin=$2 port
  shift 2
  port=$(free_port)
  "$@" "$bin" --db-file "$bench_dir/data.csv" --port "$port" \
    $([[ $# -eq 0 ]] && echo --populate) 2> "$run_dir/$name.log" &
  local pid=$!
  pids+=("$pid")
  # the start verifies the whole file (a minute under valgrind)
  WAIT_PING_SECONDS=${WAIT_PING_SECONDS:-600} wait_ping "$port" "$pid" "$run_dir/$name.log"
  printf -v "port_$name" %s "$port"
  printf -v "pid_$name" %s "$pid"
}

# run NAME ENDPOINT: one wrk run; prints a line, appends "endpoint name rps p99_us" to results
run() {
  local name=$1 e=$2 port pid mode keys before after p99_us
  port=port_$name pid=pid_$name
  mode=$e keys=$bench_dir/keys.txt
  [[ $e == fwmatch ]] && keys=$bench_dir/prefixes.txt
  before=$(cpu_ticks "${!pid}")
  ARCHIVE_MODE=$mode ARCHIVE_KEYS=$keys run_wrk -t1 -c"$connections" -d"${duration}s" \
    --latency -s "$lua" "http://127.0.0.1:${!port}/"
  after=$(cpu_ticks "${!pid}")
  p99_us=$(awk -v t="$wrk_p99" 'BEGIN { v = t + 0; if (t ~ /us$/) print v; else if (t ~ /ms$/) print v * 1000; else print v * 1000000 }')
  printf "  %-4s /%-8s %9s req/s  p99 %-8s  server CPU %5.1f us/req  non-2xx %s\n" "$name" "$e" "$wrk_rps" "$wrk_p99" \
    "$(echo "($after - $before) * 1000000 / $hz / $wrk_requests" | bc -l)" "$(awk '/Non-2xx/ {print $5}' <<< "$wrk_out")"
  echo "$e $name $wrk_rps $p99_us" >> "$run_dir/results"
}

echo "== clickatron-archive A/B: old $old_bin, new $new_bin"
echo "machine: $(nproc) cores; load before: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "file: $bench_dir/data.csv ($(wc -l < "$bench_dir/data.csv") lines, $(stat -c %s "$bench_dir/data.csv") bytes)"
echo "wrk -t1 -c$connections -d${duration}s --latency -s tests/bench/archive_wrk.lua"
start old "$old_bin"
start new "$new_bin"
for r in $(seq 1 "$rounds"); do
  order="old new"
  (( r % 2 == 0 )) && order="new old"
  echo "-- round $r ($order; load $(cut -d' ' -f1 /proc/loadavg))"
  for e in $endpoints; do
    for name in $order; do run "$name" "$e"; done
    awk -v e="$e" '$1 == e {last[$2] = $3; p[$2] = $4} END {
      printf "  ratio new/old /%s: req/s %.3f  p99 %.3f\n", e, last["new"] / last["old"], p["new"] / p["old"] }' "$run_dir/results"
  done
done
# median LIST: the middle of numbers, one a line, and their range
median() { sort -g | awk '{v[NR] = $1} END {printf "%.3f (%.3f-%.3f)", v[int((NR + 1) / 2)], v[1], v[NR]}'; }
for e in $( ((rounds > 0)) && echo "$endpoints"); do
  # Runs pair up in order: the i-th old run with the i-th new one (the same round).
  pairs=$(awk -v e="$e" '$1 == e && $2 == "old" {o[++no] = $3; op[no] = $4}
                         $1 == e && $2 == "new" {n[++nn] = $3; np[nn] = $4}
                         END { for (i = 1; i <= no; i++) print n[i] / o[i], np[i] / op[i] }' "$run_dir/results")
  echo "median over $rounds rounds /$e: req/s new/old $(cut -d' ' -f1 <<< "$pairs" | median)," \
       "p99 new/old $(cut -d' ' -f2 <<< "$pairs" | median)"
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
for p in "${pids[@]}"; do kill "$p" && wait "$p" || true; done
pids=()

[[ ${CALLGRIND:-1} == 1 ]] || exit 0
command -v valgrind >/dev/null || { echo "archive_ab: valgrind is not installed" >&2; exit 1; }
echo "-- callgrind: instructions per /get ($requests keep-alive /gets of keys.txt, one client)"
for name in old new; do
  bin=$old_bin
  [[ $name == new ]] && bin=$new_bin
  out=$run_dir/callgrind.$name
  start "cg_$name" "$bin" valgrind --tool=callgrind --separate-threads=yes --callgrind-out-file="$out.%p"
  pid=pid_cg_$name port=port_cg_$name
  # valgrind's pid is the server's: zero the counters now that it serves, then load, then dump.
  callgrind_control -z "${!pid}" >/dev/null 2>&1
  /usr/bin/python3 - "${!port}" "$bench_dir/keys.txt" "$requests" <<'EOF'
import http.client, random, sys
port, keys, n = int(sys.argv[1]), open(sys.argv[2]).read().split(), int(sys.argv[3])
rng = random.Random(1)
conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
for _ in range(n):
    conn.request("GET", "/get?key=" + rng.choice(keys))
    r = conn.getresponse()
    r.read()
    assert r.status == 200, r.status
EOF
  callgrind_control -d "${!pid}" >/dev/null 2>&1
  # One dump file per thread (--separate-threads): OUT.PID.1-01 is the main thread, which runs
  # the event loop; the others are the reloader and (new) the file watcher.
  loop=$(awk '/^(summary|totals):/ {s = $2} END {print s}' "$out".*.1-01)
  total=$(for f in "$out".*.1-*; do awk '/^(summary|totals):/ {s = $2} END {print s}' "$f"; done | awk '{t += $1} END {print t}')
  kill "${!pid}" && wait "${!pid}" || true
  printf "  %-4s %.0f instructions per /get on the loop thread, %.0f in all threads\n" "$name" \
    "$(echo "$loop / $requests" | bc -l)" "$(echo "$total / $requests" | bc -l)"
  echo "$name $loop $total" >> "$run_dir/callgrind"
done
awk '{l[$1] = $2; t[$1] = $3} END {
  printf "  ratio new/old: loop thread %.4f (%+.0f per /get), all threads %.4f (%+.0f per /get)\n",
         l["new"] / l["old"], (l["new"] - l["old"]) / '"$requests"', t["new"] / t["old"], (t["new"] - t["old"]) / '"$requests"' }' \
  "$run_dir/callgrind"
