#!/usr/bin/env python3
"""What a Prometheus scrape costs a server (docs/benchmarks.md#metrics).

    /usr/bin/python3 tests/bench/metrics_scrape.py --bin build/release/bin [--seconds 10] [--rounds 3]

Starts on 127.0.0.1 only, in a temporary directory: an archive server on the file of
tests/bench/archive_gen.py (--lines, default 1,000,000, in --data DIR, reused), two realtime
shards and an API, each with the cluster secret and its /metrics guarded. Then:

 1. idle: --scrapes scrapes of each server's /metrics one after the other; per scrape the
    server's CPU (utime+stime of /proc/PID/stat over all of them), the bytes, and the time
    the server spent in the handler (its own /stats latency of /metrics: the same value as
    clickatron_http_request_duration_seconds{path="/metrics"}).
 2. under full load: wrk (one thread, 32 connections, --seconds) on the archive's /get of
    random keys and on the API's single-event GET /incr, each run alternately without
    scraping and with a scraper of every server at one scrape a second (five times the
    5 s the issue asks for), --rounds rounds: requests/s and p99 with/without, and the
    /metrics handler time under the load.

Every load is bounded in time and stops by itself; every process is stopped at exit.
"""
import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import urllib.request

import bench_harness  # noqa: F401  (docs/benchmarks.md#method-and-machine)
from bench_harness import HERE, cpu_seconds, free_port, wait_until  # noqa: E402

SECRET = "metrics-bench-secret-0123456789"
WRK_GET = """
local keys = {}
for line in io.lines("KEYS") do keys[#keys + 1] = line end
math.randomseed(42)
request = function()
  return wrk.format("GET", "/get?key=" .. keys[math.random(#keys)])
end
"""
WRK_INCR = """
math.randomseed(7)
request = function()
  return wrk.format("GET", "/incr?ns=u&key=k" .. math.random(100000) .. "&ts=" .. os.time())
end
"""


def fetch(port, path, secret=True):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}")
    if secret:
        req.add_header("X-Clickatron-Secret", SECRET)
    with urllib.request.urlopen(req, timeout=30) as r:
        return r.read()


def wait_ping(port, proc):
    def up():
        if proc.poll() is not None:
            raise SystemExit(f"server on {port} exited {proc.returncode}")
        return fetch(port, "/ping", secret=False) == b"OK\n"
    wait_until(up, timeout=60, what=f"/ping on {port}")


def metrics_latency(port, stats_key):
    data = json.loads(fetch(port, "/stats"))["data"][stats_key]["/metrics"]
    return data["count"], data["p50_us"], data["p99_us"]


def wrk(port, script, seconds):
    """(req/s, p99 in ms) of one bench_harness.wrk run at 32 connections."""
    r = bench_harness.wrk(port, script, 32, seconds)
    p99 = r["p99"]
    scale = {"us": 1e-3, "ms": 1.0}.get(p99[-2:], None)
    p99_ms = float(p99[:-2]) * scale if scale else float(p99[:-1]) * 1000
    return r["rps"], p99_ms


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--scrapes", type=int, default=500)
    ap.add_argument("--lines", type=int, default=1000000)
    ap.add_argument("--data", default="/tmp/clickatron-metrics-bench")
    args = ap.parse_args()
    binary = lambda name: os.path.join(os.path.abspath(args.bin), name)  # noqa: E731

    os.makedirs(args.data, exist_ok=True)
    data, keys = os.path.join(args.data, "data.csv"), os.path.join(args.data, "keys.txt")
    if not os.path.exists(keys):
        subprocess.run([sys.executable, os.path.join(HERE, "archive_gen.py"), args.data, str(args.lines)],
                       check=True)
    tmp = tempfile.mkdtemp(prefix="clickatron-metrics-bench-")
    procs = []
    try:
        secret_file = os.path.join(tmp, "secret")
        with open(os.open(secret_file, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
            f.write(SECRET + "\n")

        def start(args_, port):
            p = subprocess.Popen(args_, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
            procs.append(p)
            wait_ping(port, p)
            return p

        ports = {"archive": free_port(), "realtime-0": free_port(), "realtime-1": free_port(), "api": free_port()}
        pids = {}
        pids["archive"] = start([binary("clickatron-archive"), "--db-file", data, "--port", str(ports["archive"]),
                                 "--populate", "--secret-file", secret_file, "--require-secret-for-reads"],
                                ports["archive"]).pid
        for k in (0, 1):
            d = os.path.join(tmp, f"rt{k}")
            os.makedirs(d)
            pids[f"realtime-{k}"] = start([binary("clickatron-realtime"), "--data-dir", d, "--port",
                                           str(ports[f"realtime-{k}"]), "--secret-file", secret_file,
                                           "--require-secret-for-reads"], ports[f"realtime-{k}"]).pid
        conf = os.path.join(tmp, "cluster.conf")
        with open(conf, "w") as f:
            f.write(f"port = {ports['api']}\nrealtime = 127.0.0.1:{ports['realtime-0']}\n"
                    f"realtime = 127.0.0.1:{ports['realtime-1']}\narchive = 127.0.0.1:{ports['archive']}\n"
                    f"oplog-dir = {tmp}/oplog\nnode-id = bench\nsecret-file = {secret_file}\nstats-secret = true\n")
        pids["api"] = start([binary("clickatron-api"), "--config", conf], ports["api"]).pid
        stats_key = {"archive": "requests", "realtime-0": "latency", "api": "latency_us"}

        print("1. idle: per scrape")
        for name in ("archive", "realtime-0", "api"):
            before = cpu_seconds(pids[name])
            sizes = [len(fetch(ports[name], "/metrics")) for _ in range(args.scrapes)]
            cpu = (cpu_seconds(pids[name]) - before) / args.scrapes * 1e6
            count, p50, p99 = metrics_latency(ports[name], stats_key[name])
            lines = fetch(ports[name], "/metrics").count(b"\n")
            print(f"  {name:11s} {statistics.median(sizes) / 1024:6.1f} KiB, {lines} lines,"
                  f" CPU {cpu:6.0f} us/scrape, handler p50 {p50} us p99 {p99} us ({count} scrapes)")

        scripts = {}
        for name, text in (("get", WRK_GET), ("incr", WRK_INCR)):
            scripts[name] = os.path.join(tmp, f"{name}.lua")
            with open(scripts[name], "w") as f:
                f.write(text.replace("KEYS", keys).strip() + "\n")
        # wrk sends the secret on every request of the guarded archive reads.
        with open(scripts["get"], "a") as f:
            f.write(f'wrk.headers["X-Clickatron-Secret"] = "{SECRET}"\n')

        print(f"2. under full load (wrk -t1 -c32 -d{args.seconds}s), without / with one scrape a second of every server")
        for target, port, script in (("archive /get", ports["archive"], scripts["get"]),
                                     ("api /incr", ports["api"], scripts["incr"])):
            ratios_rps, ratios_p99 = [], []
            for r in range(args.rounds):
                results = {}
                for scraping in ((False, True) if r % 2 == 0 else (True, False)):
                    stop = threading.Event()

                    def scraper():
                        while not stop.wait(1.0):
                            for p in ports.values():
                                fetch(p, "/metrics")
                    t = threading.Thread(target=scraper, daemon=True)
                    if scraping:
                        t.start()
                    results[scraping] = wrk(port, script, args.seconds)
                    stop.set()
                    if scraping:
                        t.join()
                (rps0, p990), (rps1, p991) = results[False], results[True]
                ratios_rps.append(rps1 / rps0)
                ratios_p99.append(p991 / p990)
                print(f"  {target} round {r + 1}: {rps0:8.0f} req/s p99 {p990:.2f} ms without;"
                      f" {rps1:8.0f} req/s p99 {p991:.2f} ms with scrapes (ratios {rps1 / rps0:.3f}, {p991 / p990:.3f})")
            count, p50, p99 = metrics_latency(port, "requests" if port == ports["archive"] else "latency_us")
            print(f"  {target}: median ratio with/without: req/s {statistics.median(ratios_rps):.3f}, "
                  f"p99 {statistics.median(ratios_p99):.3f}; /metrics handler over all scrapes so far p50 {p50} us p99 {p99} us")
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        for p in procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
