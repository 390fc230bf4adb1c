#!/usr/bin/env bash
# HTTP load: the net/ server wrapper (clickatron-net-testserver /get, a ReplyReference of a
# constant: the archive's hot-path shape) against nginx answering the same bytes from a
# `return 200` location, both with 2 workers, measured by wrk in the same run, alternating
# A B A B so machine load hits both alike. Loopback only; bounded; stops by itself.
#   tests/bench/net_http.sh [BIN_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
. "$(dirname "$0")/bench_harness.sh"
bin=${1:-build/net-release/bin}
seconds=${2:-5}
conns=${3:-32}
bench_init net-http

ours=$(free_port)
"$bin/clickatron-net-testserver" --port "$ours" --threads 2 2>"$run_dir/ours.log" &
pids+=($!)
wait_ping "$ours" $! "$run_dir/ours.log" "/get?key=x"

theirs=$(free_port)
start_nginx_ceiling "$run_dir/nginx" "$theirs" 2 "value-of-"
wait_ping "$theirs" "$nginx_pid" "$run_dir/nginx/logs/error.log" "/get?key=x"
curl -s "http://127.0.0.1:$ours/get?key=u%7Cjehiah" | cmp -s - <(printf 'value-of-') || { echo "ours answers wrong" >&2; exit 1; }
curl -s "http://127.0.0.1:$theirs/get?key=u%7Cjehiah" | cmp -s - <(printf 'value-of-') || { echo "nginx answers wrong" >&2; exit 1; }

echo "nproc $(nproc); load before: $(uptime | sed 's/.*load average: //')"
run() {  # name port
  run_wrk -t2 -c"$conns" -d"${seconds}s" --latency "http://127.0.0.1:$2/get?key=u%7Cjehiah"
  echo "$1 rps=$wrk_rps_exact p50=$wrk_p50 p99=$wrk_p99"
  echo "$1 $wrk_rps_exact" >>"$run_dir/rps"
}
for round in 1 2; do
  run net "$ours"
  run nginx "$theirs"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
awk '{sum[$1]+=$2; n[$1]++} END {
  a=sum["net"]/n["net"]; b=sum["nginx"]/n["nginx"];
  printf "mean rps: net %.0f, nginx %.0f, ratio net/nginx %.2f\n", a, b, a/b }' "$run_dir/rps"
