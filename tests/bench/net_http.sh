#!/usr/bin/env bash
# HTTP load: the net/ server wrapper (clickatron-net-testserver /get, a ReplyReference of a
# constant: the archive's hot-path shape) against nginx answering the same bytes from a
# `return 200` location, both with 2 workers, measured by wrk in the same run, alternating
# A B A B so machine load hits both alike. Loopback only; bounded; stops by itself.
#   tests/bench/net_http.sh [BIN_DIR] [SECONDS] [CONNECTIONS]
set -euo pipefail
bin=${1:-build/net-release/bin}
seconds=${2:-5}
conns=${3:-32}
tmp=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
  rm -rf "$tmp"
}
trap cleanup EXIT

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
wait_up() {
  for _ in $(seq 200); do
    curl -s -o /dev/null "http://127.0.0.1:$1/get?key=x" && return 0
    sleep 0.05
  done
  echo "server on $1 did not start" >&2; exit 1
}

ours=$(free_port)
"$bin/clickatron-net-testserver" --port "$ours" --threads 2 2>"$tmp/ours.log" &
pids+=($!)

theirs=$(free_port)
mkdir -p "$tmp/nginx/logs"
cat >"$tmp/nginx/nginx.conf" <<CONF
worker_processes 2;
pid $tmp/nginx/nginx.pid;
error_log $tmp/nginx/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $tmp/nginx;
  proxy_temp_path $tmp/nginx;
  fastcgi_temp_path $tmp/nginx;
  uwsgi_temp_path $tmp/nginx;
  scgi_temp_path $tmp/nginx;
  server {
    listen 127.0.0.1:$theirs;
    location /get { default_type text/plain; return 200 "value-of-"; }
  }
}
CONF
nginx -p "$tmp/nginx" -c "$tmp/nginx/nginx.conf" -g 'daemon off;' &
pids+=($!)
wait_up "$ours"
wait_up "$theirs"
curl -s "http://127.0.0.1:$ours/get?key=u%7Cjehiah" | cmp -s - <(printf 'value-of-') || { echo "ours answers wrong" >&2; exit 1; }
curl -s "http://127.0.0.1:$theirs/get?key=u%7Cjehiah" | cmp -s - <(printf 'value-of-') || { echo "nginx answers wrong" >&2; exit 1; }

echo "nproc $(nproc); load before: $(uptime | sed 's/.*load average: //')"
run() {  # name port
  local out
  out=$(wrk -t2 -c"$conns" -d"${seconds}s" --latency "http://127.0.0.1:$2/get?key=u%7Cjehiah")
  local rps p50 p99
  rps=$(awk '/Requests\/sec/ {print $2}' <<<"$out")
  p50=$(awk '$1=="50%" {print $2}' <<<"$out")
  p99=$(awk '$1=="99%" {print $2}' <<<"$out")
  echo "$1 rps=$rps p50=$p50 p99=$p99"
  echo "$1 $rps" >>"$tmp/rps"
}
for round in 1 2; do
  run net "$ours"
  run nginx "$theirs"
done
echo "load after: $(uptime | sed 's/.*load average: //')"
awk '{sum[$1]+=$2; n[$1]++} END {
  a=sum["net"]/n["net"]; b=sum["nginx"]/n["nginx"];
  printf "mean rps: net %.0f, nginx %.0f, ratio net/nginx %.2f\n", a, b, a/b }' "$tmp/rps"
