# Sourced by the shell benchmarks of tests/bench/ (docs/benchmarks.md#method-and-machine):
# starting servers on free loopback ports and stopping them at exit, the HTTP ceiling, loading
# records and keys, and reading the figures of wrk, /proc and /usr/bin/time — written once.
# The Python benchmarks share tests/bench/bench_harness.py; the wrk scripts load their keys
# with tests/bench/wrk_keys.lua.
#
# Messages name the script (bench_script, the file name without .sh).
#
#   bench_init NAME              run_dir=$(mktemp -d /tmp/NAME.XXXXXX), pids=(); at exit kills
#                                and waits for every pid in pids, runs bench_on_exit if the
#                                script defines it, removes run_dir
#   bench_stop PID               stops one server now (SIGTERM, wait) and drops it from pids;
#                                fails if it exits non-zero
#   require_bins DIR NAME...     exits unless every DIR/NAME is built
#   require_tools TOOL...        exits unless every TOOL (wrk, nginx) is installed
#   free_port                    prints a free port on 127.0.0.1
#   wait_ping PORT PID LOG [PATH]  waits (WAIT_PING_SECONDS, default 60, at most) until
#                                http://127.0.0.1:PORT/ping (or PATH) answers; prints LOG and
#                                exits if PID died, exits if it never answers
#   start_nginx_ceiling DIR PORT [WORKERS] [BODY]
#                                the HTTP ceiling a server is compared with in the same run:
#                                nginx answering `return 200 BODY` (default "13\n") on every
#                                path with WORKERS workers (default 1), its config, temp and
#                                logs under DIR (never the system nginx); sets nginx_pid and
#                                adds it to pids
#   feed_realtime PORT FILE      POSTs a file of realtime records to a realtime shard's /incr
#                                in batches of 20,000 lines, as one sender
#   run_wrk WRK_ARGS...          runs wrk; sets wrk_out (its output) and wrk_rps (integer),
#                                wrk_rps_exact, wrk_p50, wrk_p99, wrk_non2xx (0 when none) and
#                                wrk_requests
#   cpu_ticks PID                utime + stime of PID so far, in clock ticks (hz a second)
#   cpu_snapshot PID...          their cpu_ticks, space-separated
#   cpu_per_request SNAPSHOT REQUESTS PID...
#                                " name Nus" per process: its CPU since SNAPSHOT / REQUESTS
#   timed_step DIR LABEL COMMAND...
#                                runs COMMAND under /usr/bin/time, its output in DIR/out.LABEL,
#                                "wall peak_kB user system" in DIR/time.LABEL; sets step_secs,
#                                step_rss_kb, step_cpu; on failure prints the output and exits

bench_script=$(basename "$0" .sh)

bench_init() {
  run_dir=$(mktemp -d "/tmp/$1.XXXXXX")
  pids=()
  trap bench_cleanup EXIT
}

bench_cleanup() {
  local p
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  if declare -F bench_on_exit >/dev/null; then bench_on_exit; fi
  rm -rf "$run_dir"
}

bench_stop() {
  local p kept=()
  for p in "${pids[@]}"; do [[ $p == "$1" ]] || kept+=("$p"); done
  pids=("${kept[@]}")
  kill "$1" && wait "$1" || { echo "$bench_script: process $1 exited non-zero" >&2; exit 1; }
}

require_bins() {
  local dir=$1 b
  shift
  for b in "$@"; do
    [[ -x "$dir/$b" ]] || { echo "$bench_script: build $dir/$b first" >&2; exit 1; }
  done
}

require_tools() {
  local t
  for t in "$@"; do
    command -v "$t" >/dev/null || { echo "$bench_script: $t is not installed (ops/install-deps)" >&2; exit 1; }
  done
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_ping() {
  for _ in $(seq 1 $((${WAIT_PING_SECONDS:-60} * 10))); do
    curl -sf "http://127.0.0.1:$1${4:-/ping}" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; exit 1; }
    sleep 0.1
  done
  echo "$bench_script: server on port $1 did not start" >&2
  exit 1
}

start_nginx_ceiling() {
  local dir=$1 port=$2 workers=${3:-1} body=${4:-13\\n} master=off
  ((workers > 1)) && master=on
  mkdir -p "$dir/logs"
  cat > "$dir/nginx.conf" <<EOF
worker_processes $workers;
daemon off;
master_process $master;
pid $dir/nginx.pid;
error_log $dir/logs/error.log warn;
events { worker_connections 1024; }
http {
  access_log off;
  client_body_temp_path $dir/body;
  proxy_temp_path $dir/proxy;
  fastcgi_temp_path $dir/fastcgi;
  uwsgi_temp_path $dir/uwsgi;
  scgi_temp_path $dir/scgi;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$port;
    location / { default_type text/plain; return 200 "$body"; }
  }
}
EOF
  nginx -p "$dir" -c "$dir/nginx.conf" &
  nginx_pid=$!
  pids+=("$nginx_pid")
}

feed_realtime() {
  local port=$1 file=$2 f seq=0
  rm -f "$run_dir"/rt-batch.*
  split -l 20000 "$file" "$run_dir/rt-batch."
  for f in "$run_dir"/rt-batch.*; do
    seq=$((seq + 1))
    curl -sf -H 'X-Clickatron-Sender: be4c000000000001' --data-binary @"$f" \
      "http://127.0.0.1:$port/incr?source=bench&seq=$seq" >/dev/null
  done
}

run_wrk() {
  wrk_out=$(wrk "$@")
  wrk_requests=$(awk '/requests in/ {print $1}' <<< "$wrk_out")
  wrk_rps_exact=$(awk '/^Requests\/sec:/ {print $2}' <<< "$wrk_out")
  wrk_rps=$(awk '/^Requests\/sec:/ {printf "%d", $2}' <<< "$wrk_out")
  wrk_p50=$(awk '$1 == "50%" {print $2}' <<< "$wrk_out")
  wrk_p99=$(awk '$1 == "99%" {print $2}' <<< "$wrk_out")
  wrk_non2xx=$(awk '/Non-2xx/ {print $5}' <<< "$wrk_out")
  wrk_non2xx=${wrk_non2xx:-0}
}

hz=$(getconf CLK_TCK)
cpu_ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
cpu_snapshot() { local p; for p in "$@"; do printf '%s ' "$(cpu_ticks "$p")"; done; }
cpu_per_request() {
  local before=($1) reqs=$2 out="" i=0 p
  shift 2
  for p in "$@"; do
    out+=$(printf " %s %.0fus" "$(ps -o comm= -p "$p" | sed 's/clickatron-//')" \
           "$(echo "($(cpu_ticks "$p") - ${before[$i]}) * 1000000 / $hz / $reqs" | bc -l)")
    i=$((i + 1))
  done
  echo "$out"
}

timed_step() {
  local dir=$1 label=$2 user sys
  shift 2
  /usr/bin/time -f "%e %M %U %S" -o "$dir/time.$label" "$@" > "$dir/out.$label" 2>&1 || { cat "$dir/out.$label"; exit 1; }
  read -r step_secs step_rss_kb user sys < "$dir/time.$label"
  step_cpu=$(echo "$user + $sys" | bc)
}
