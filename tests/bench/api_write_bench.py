#!/usr/bin/env python3
"""Load test of clickatron-api's write path (docs/benchmarks.md#api-write-path), against nginx's `return 200` ceiling.

    /usr/bin/python3 tests/bench/api_write_bench.py [--bin build/apiw-release/bin] [--seconds 10]

Starts, on 127.0.0.1 only: nginx (one worker, `return 200`), two clickatron-realtime shards
and clickatron-api (oplog-sync=batch) in a temporary directory, then measures:

 1. single-event GET /incr with wrk (one thread) at 32 and 256 connections, and nginx with
    the same wrk script right before and after it; ratio = API req/s / mean nginx req/s;
 2. batched POST /incr, 1000 events per request, each event with 2 subtotals (a country
    and a referrer, some referrers long URLs, so hashed with a lookup record), varied
    keys; events/s end to end = events accepted / (load time + time until every realtime
    shard has them, /stats backlog 0);
 3. delivery lag, ack → visible in realtime /get, under a steady batched background load;
 4. CPU microseconds per event of the API process (and of the realtime shards), from
    /proc/<pid>/stat around each run.

Every load is bounded in time and stops by itself. Prints a summary.

With --versus OTHER_BIN it measures instead, side by side at 32 and 256 connections
(--rounds alternating rounds, default 2; nginx at the start of each and at the end): single-event GET /incr on this build's
API and on OTHER_BIN's clickatron-api (another build: the same shards, its own oplog and
node-id), and on this build's API the same requests each with a new Idempotency-Key (the
keyed path, docs/api-write.md#safe-retries) — what the hot path without the header lost, and
what a keyed request costs.

With --floor it measures instead, side by side at 32 and 256 connections (two alternating
rounds, nginx before, between and after): the API's single-event GET /incr (oplog-sync
batch) and tests/bench/incr_floor (the same per-request work and oplog behind the smallest
HTTP layer; see its header) with `batch` and `none` — how much of the gap to nginx is the
HTTP server layer.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse
import urllib.request

from bench_harness import ROOT, cpu_seconds, free_port, wait_until, wrk
from formats import shard_of, ymdh  # docs/formats.md (ops/lib/formats.py, on sys.path from bench_harness)

SINGLE_LUA = """
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/incr?ns=u&key=k" .. (n %% 100000))
end
"""

# The single-event request with a new Idempotency-Key each (%s: a prefix per run, so no run
# replays another's keys).
KEYED_LUA = """
local n = 0
request = function()
  n = n + 1
  return wrk.format("GET", "/incr?ns=u&key=k" .. (n %% 100000), {["Idempotency-Key"] = "%s-" .. n})
end
"""

BATCH_LUA = """
local n = 0
local countries = {"US","FR","JP","DE","GB","BR","IN","CN","CA","AU","ES","IT","NL","SE","NO","MX","KR","RU","ZA","AR"}
math.randomseed(%d)
request = function()
  local lines = {}
  for i = 1, 1000 do
    n = n + 1
    local u = math.random(1, 100000)
    local c = countries[math.random(1, #countries)]
    local r = math.random(1, 200)
    local ref
    if r <= 20 then ref = "http%%3A%%2F%%2Fexample.com%%2Fpage" .. r else ref = "r" .. r end
    lines[i] = "ns=u&key=user" .. u .. "&sub=country:" .. c .. "&sub=ref:" .. ref
  end
  return wrk.format("POST", "/incr", nil, table.concat(lines, "\\n") .. "\\n")
end
response = function(status, headers, body)
  if status ~= 200 then io.stderr:write("status " .. status .. "\\n") end
end
"""


def http(port, path, body=None, timeout=10):
    req = urllib.request.Request(f"http://127.0.0.1:{port}{path}", data=body)
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            return r.status, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.read()


class Cluster:
    def __init__(self, bin_dir, tmp, api_config=""):
        self.tmp = tmp
        self.procs = []
        self.rt_ports = [free_port(), free_port()]
        self.rt = []
        for k, port in enumerate(self.rt_ports):
            d = os.path.join(tmp, f"rt{k}")
            os.makedirs(d)
            self.rt.append(self.spawn([os.path.join(bin_dir, "clickatron-realtime"), "--data-dir", d,
                                       "--port", str(port)], f"rt{k}.log"))
            wait_until(lambda: http(port, "/ping")[0] == 200, what="realtime up")
        self.port = free_port()
        conf = os.path.join(tmp, "cluster.conf")
        with open(conf, "w") as f:
            f.write(f"port = {self.port}\n")
            for p in self.rt_ports:
                f.write(f"realtime = 127.0.0.1:{p}\n")
            f.write(f"oplog-dir = {tmp}/oplog\noplog-sync = batch\nnode-id = api-1\n" + api_config)
        self.api = self.spawn([os.path.join(bin_dir, "clickatron-api"), "--config", conf], "api.log")
        wait_until(lambda: http(self.port, "/ping")[0] == 200, what="api up")
        self.nginx_port = free_port()
        ng = os.path.join(tmp, "nginx")
        os.makedirs(ng)
        with open(os.path.join(ng, "nginx.conf"), "w") as f:
            f.write("worker_processes 1; error_log stderr; pid nginx.pid;\n"
                    "events { worker_connections 4096; }\n"
                    "http { access_log off; server { listen 127.0.0.1:%d; "
                    "location / { return 200; } } }\n" % self.nginx_port)
        self.nginx = self.spawn(["nginx", "-p", ng, "-c", "nginx.conf", "-g", "daemon off;"], "nginx.log")
        wait_until(lambda: http(self.nginx_port, "/")[0] == 200, what="nginx up")

    def spawn(self, args, log):
        p = subprocess.Popen(args, stdout=open(os.path.join(self.tmp, log), "wb"), stderr=subprocess.STDOUT)
        self.procs.append(p)
        return p

    def stats(self):
        return json.loads(http(self.port, "/stats")[1])["data"]

    def drained(self):
        s = self.stats()
        return all(sh["backlog_records"] == 0 for sh in s["realtime"])

    def stop(self):
        for p in reversed(self.procs):
            p.terminate()
        for p in self.procs:
            try:
                p.wait(30)
            except subprocess.TimeoutExpired:
                p.kill()


def lag_probe(c, samples, background_events_per_s):
    """ack → visible in realtime /get, while a thread sends batches at a steady rate."""
    stop = threading.Event()

    def background():
        i = 0
        while not stop.is_set():
            t0 = time.monotonic()
            body = "".join(f"ns=bg&key=b{(i * 100 + j) % 5000}&sub=country:US\n" for j in range(100)).encode()
            http(c.port, "/incr", body)
            i += 1
            time.sleep(max(0.0, 100 / background_events_per_s - (time.monotonic() - t0)))

    th = threading.Thread(target=background)
    th.start()
    lags = []
    ts = int(time.time())
    hour = ymdh(ts)
    try:
        for i in range(samples):
            key = f"p{i}"
            status, _ = http(c.port, f"/incr?ns=probe&key={key}&ts={ts}")
            acked = time.monotonic()
            assert status == 200
            shard = shard_of(f"probe|{key}", len(c.rt_ports))
            path = "/get?key=" + urllib.parse.quote(f"probe|{key}.{hour}", safe="")
            while http(c.rt_ports[shard], path)[0] != 200:
                time.sleep(0.0005)
                if time.monotonic() - acked > 5:
                    raise TimeoutError("probe never arrived")
            lags.append((time.monotonic() - acked) * 1000)
            time.sleep(0.01)
    finally:
        stop.set()
        th.join()
    lags.sort()
    return {"samples": len(lags), "p50_ms": lags[len(lags) // 2], "p99_ms": lags[int(len(lags) * 0.99) - 1],
            "max_ms": lags[-1]}


def versus_comparison(c, other_bin, tmp, single, seconds, rounds):
    """This build's API, OTHER_BIN's API and this build's keyed path, side by side."""
    port = free_port()
    conf = os.path.join(tmp, "other.conf")
    with open(conf, "w") as f:
        f.write(f"port = {port}\n" + "".join(f"realtime = 127.0.0.1:{p}\n" for p in c.rt_ports) +
                f"oplog-dir = {tmp}/oplog-other\noplog-sync = batch\nnode-id = api-2\n")
    other = c.spawn([os.path.join(other_bin, "clickatron-api"), "--config", conf], "api-other.log")
    wait_until(lambda: http(port, "/ping")[0] == 200, what="the other api up")
    keyed_runs = [0]

    def keyed_script():
        keyed_runs[0] += 1
        path = os.path.join(tmp, f"keyed{keyed_runs[0]}.lua")
        with open(path, "w") as f:
            f.write(KEYED_LUA % f"bench{keyed_runs[0]}")
        return path

    runs = [("nginx", c.nginx_port, c.nginx, None), ("api", c.port, c.api, None),
            ("api other", port, other, None), ("api keyed", c.port, c.api, "keyed")]
    results = {}
    for conns in (32, 256):
        rps, cpus = {}, {}
        for rnd in range(rounds):
            order = runs if rnd % 2 == 0 else [runs[0], runs[2], runs[1], runs[3]]
            order = order + ([runs[0]] if rnd == rounds - 1 else [])
            for name, p, proc, kind in order:
                script = keyed_script() if kind == "keyed" else single
                cpu0 = cpu_seconds(proc.pid)
                r = wrk(p, script, conns, seconds)
                cpu = (cpu_seconds(proc.pid) - cpu0) * 1e6 / max(1, r["requests"])
                rps.setdefault(name, []).append(r["rps"])
                cpus.setdefault(name, []).append(cpu)
                print(f"  c={conns} {name:<10} {r['rps']:9.0f} req/s  p99 {r['p99']:<8} non-2xx {r['non2xx']}  "
                      f"CPU {cpu:.1f} us/request", flush=True)
                if name != "nginx":
                    wait_until(c.drained, timeout=120, what="drain")
        ceiling = sum(rps["nginx"]) / len(rps["nginx"])
        results[f"c{conns}"] = {name: {"rps": v, "ratio": sum(v) / len(v) / ceiling, "cpu_us": cpus[name]}
                                for name, v in rps.items()}
        print(f"c={conns}: " + ", ".join(f"{name} {sum(v) / len(v) / ceiling:.3f}" for name, v in rps.items()
                                        if name != "nginx") + f" of nginx (mean {ceiling:.0f} req/s)", flush=True)
    return results


def floor_comparison(c, bin_dir, tmp, single, seconds):
    floors = {}
    for sync in ("batch", "none"):
        port = free_port()
        p = c.spawn([os.path.join(bin_dir, "incr_floor"), "--port", str(port), "--oplog-dir",
                     os.path.join(tmp, f"floor-{sync}"), "--sync", sync], f"floor-{sync}.log")
        wait_until(lambda: http(port, "/incr?ns=u&key=x")[0] == 200, what="incr_floor up")
        floors[sync] = (port, p)
    runs = [("nginx", c.nginx_port, c.nginx), ("api batch", c.port, c.api),
            ("floor batch", floors["batch"][0], floors["batch"][1]),
            ("floor none", floors["none"][0], floors["none"][1])]
    results = {}
    for conns in (32, 256):
        rps = {}
        for rnd in range(2):
            for name, port, proc in runs + ([runs[0]] if rnd == 1 else []):
                cpu0 = cpu_seconds(proc.pid)
                r = wrk(port, single, conns, seconds)
                cpu = (cpu_seconds(proc.pid) - cpu0) * 1e6 / max(1, r["requests"])
                rps.setdefault(name, []).append(r["rps"])
                print(f"  c={conns} {name:<12} {r['rps']:9.0f} req/s  p99 {r['p99']:<8} non-2xx {r['non2xx']}  "
                      f"CPU {cpu:.1f} us/request", flush=True)
        ceiling = sum(rps["nginx"]) / len(rps["nginx"])
        results[f"c{conns}"] = {name: {"rps": v, "ratio": sum(v) / len(v) / ceiling} for name, v in rps.items()}
        print(f"c={conns}: " + ", ".join(f"{name} {sum(v) / len(v) / ceiling:.3f}" for name, v in rps.items()
                                        if name != "nginx") + f" of nginx (mean {ceiling:.0f} req/s)", flush=True)
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", default=os.path.join(ROOT, "build", "apiw-release", "bin"))
    ap.add_argument("--seconds", type=int, default=10)
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    ap.add_argument("--floor", action="store_true", help="compare the API with incr_floor instead")
    ap.add_argument("--versus", metavar="OTHER_BIN", help="compare single GET /incr with another build's API, "
                    "and this build's keyed GET /incr, instead")
    ap.add_argument("--rounds", type=int, default=2, help="alternating rounds of --versus")
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="clickatron-api-bench-")
    single = os.path.join(tmp, "single.lua")
    with open(single, "w") as f:
        f.write(SINGLE_LUA % ())
    batch = os.path.join(tmp, "batch.lua")
    with open(batch, "w") as f:
        f.write(BATCH_LUA % 42)
    print(f"nproc {os.cpu_count()}, load before: {open('/proc/loadavg').read().split()[:3]}")
    # The keyed runs put ~250,000 keys a run in the index: room for all of them.
    c = Cluster(args.bin, tmp, api_config="idempotency-mb = 2048\n" if args.versus else "")
    results = {}
    try:
        if args.versus:
            print(json.dumps(versus_comparison(c, args.versus, tmp, single, args.seconds, args.rounds), indent=1))
            return
        if args.floor:
            print(json.dumps(floor_comparison(c, args.bin, tmp, single, args.seconds), indent=1))
            return
        for conns in (32, 256):
            # nginx right before and right after the API, the ceiling their mean: one nginx
            # run on this shared machine can be 15% off the next.
            ng = wrk(c.nginx_port, single, conns, args.seconds)
            cpu0 = cpu_seconds(c.api.pid)
            rt0 = sum(cpu_seconds(p.pid) for p in c.rt)
            acc0 = c.stats()["incr"]["accepted_events"]
            api = wrk(c.port, single, conns, args.seconds)
            cpu1 = cpu_seconds(c.api.pid)
            acc1 = c.stats()["incr"]["accepted_events"]
            wait_until(c.drained, timeout=120, what="drain after GET load")
            rt1 = sum(cpu_seconds(p.pid) for p in c.rt)
            ng2 = wrk(c.nginx_port, single, conns, args.seconds)
            ceiling = (ng["rps"] + ng2["rps"]) / 2
            r = {"nginx_rps": ceiling, "nginx_rps_before_after": [ng["rps"], ng2["rps"]],
                 "api_rps": api["rps"], "ratio": api["rps"] / ceiling,
                 "api_p99": api["p99"], "nginx_p99": ng["p99"], "api_non2xx": api["non2xx"],
                 "api_cpu_us_per_event": (cpu1 - cpu0) * 1e6 / max(1, acc1 - acc0),
                 "realtime_cpu_us_per_event": (rt1 - rt0) * 1e6 / max(1, acc1 - acc0)}
            results[f"get_c{conns}"] = r
            print(f"GET /incr c={conns}: api {api['rps']:.0f} req/s (p99 {api['p99']}, non-2xx {api['non2xx']}), "
                  f"nginx {ng['rps']:.0f} / {ng2['rps']:.0f} req/s before / after (p99 {ng['p99']} / {ng2['p99']}), "
                  f"ratio to their mean {r['ratio']:.2f}, "
                  f"CPU per event: API {r['api_cpu_us_per_event']:.1f} us, realtime {r['realtime_cpu_us_per_event']:.1f} us",
                  flush=True)

        # Batched POST, end to end into realtime.
        s0 = c.stats()
        acc0 = s0["incr"]["accepted_events"]
        del0 = s0["delivered_records"]
        cpu0 = [cpu_seconds(p.pid) for p in [c.api] + c.rt]
        t0 = time.monotonic()
        res = wrk(c.port, batch, 8, args.seconds)
        t_load = time.monotonic() - t0
        wait_until(c.drained, timeout=300, what="drain after batch load")
        t_all = time.monotonic() - t0
        cpu1 = [cpu_seconds(p.pid) for p in [c.api] + c.rt]
        s1 = c.stats()
        events = s1["incr"]["accepted_events"] - acc0
        lag = [sh["delivery_lag_ms"] for sh in s1["realtime"]]
        r = {"events": events, "load_s": t_load, "drained_s": t_all, "accept_events_per_s": events / t_load,
             "end_to_end_events_per_s": events / t_all, "non2xx": res["non2xx"], "post_p99": res["p99"],
             "records_delivered": s1["delivered_records"] - del0,
             "api_cpu_us_per_event": (cpu1[0] - cpu0[0]) * 1e6 / max(1, events),
             "realtime_cpu_us_per_event": (sum(cpu1[1:]) - sum(cpu0[1:])) * 1e6 / max(1, events),
             "round_lag_p99_ms": [l["p99"] for l in lag]}
        results["post_batch"] = r
        print(f"POST /incr x1000 events (2 subtotals each): {events} events in {t_load:.1f}s of load, "
              f"all in realtime after {t_all:.1f}s -> {r['end_to_end_events_per_s']:.0f} events/s end to end "
              f"({r['accept_events_per_s']:.0f}/s accepted; POST p99 {res['p99']}; non-2xx {res['non2xx']}); "
              f"CPU per event: API {r['api_cpu_us_per_event']:.2f} us, realtime {r['realtime_cpu_us_per_event']:.2f} us",
              flush=True)

        results["lag"] = lag_probe(c, 300, 5000)
        print(f"delivery lag ack->visible (300 probes, 5000 events/s background): "
              f"p50 {results['lag']['p50_ms']:.1f} ms, p99 {results['lag']['p99_ms']:.1f} ms, "
              f"max {results['lag']['max_ms']:.1f} ms", flush=True)
        st = c.stats()["oplog"]
        print(f"oplog: {st['syncs']} fdatasyncs, sync p50 {st['sync_latency_us']['p50']} us "
              f"p99 {st['sync_latency_us']['p99']} us; append->durable p50 {st['durable_latency_us']['p50']} us "
              f"p99 {st['durable_latency_us']['p99']} us")
    finally:
        c.stop()
        print(f"load after: {open('/proc/loadavg').read().split()[:3]}")
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    sys.exit(main())
