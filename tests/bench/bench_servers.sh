# Sourced by the API read load benchmarks (api_read_load.sh, api_read_plan_load.sh): a run
# directory removed at exit with every server started in it, a free loopback port, and a
# wait for a server's /ping.
#
#   bench_servers_init NAME   sets run_dir (mktemp -d /tmp/NAME.XXXXXX) and pids=(); at exit
#                             kills and waits for every pid in pids, removes run_dir
#   free_port                 prints a free port on 127.0.0.1
#   wait_ping PORT PID LOG    waits (WAIT_PING_SECONDS, default 60, at most) until
#                             http://127.0.0.1:PORT/ping answers;
#                             prints LOG and exits if PID died, exits if it never answers
bench_servers_init() {
  bench_name=$1
  run_dir=$(mktemp -d "/tmp/$bench_name.XXXXXX")
  pids=()
  trap bench_servers_cleanup EXIT
}

bench_servers_cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null && wait "$p" 2>/dev/null || true; done
  rm -rf "$run_dir"
}

free_port() {
  python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

wait_ping() {
  for _ in $(seq 1 $((${WAIT_PING_SECONDS:-60} * 10))); do
    curl -sf "http://127.0.0.1:$1/ping" >/dev/null 2>&1 && return 0
    kill -0 "$2" 2>/dev/null || { cat "$3" >&2; exit 1; }
    sleep 0.1
  done
  echo "$bench_name: server on port $1 did not start" >&2
  exit 1
}
