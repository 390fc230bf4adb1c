#!/usr/bin/python3
"""The API's memory while a realtime shard is down under load (docs/operations.md#bounds).

    tests/bench/api_outage_memory.py --bin build/release/bin [--minutes 10] [--rate 2000]

One realtime shard and one API on 127.0.0.1 (temp dirs). The shard is killed, then --rate
increments per second go to the API for --minutes (POST batches of 100), while the API's RSS
(VmRSS) is sampled every 10 s; then the shard comes back and the run waits until the API has
delivered everything and checks the shard's total equals what was acknowledged. Prints the RSS
series and the growth per minute over the second half of the outage — what decides whether
an hour (or a day) of outage fits in memory. Loopback only; stops by itself.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import bench_harness  # noqa: F401  (tests/ on sys.path)
from harness import free_port, get, post, wait_until  # tests/harness.py


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--minutes", type=float, default=10.0)
    ap.add_argument("--rate", type=int, default=2000)
    args = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="clickatron-outage-")
    procs = []
    try:
        rt_port, api_port = free_port(), free_port()
        os.makedirs(f"{tmp}/rt")
        rt_args = [f"{args.bin}/clickatron-realtime", "--data-dir", f"{tmp}/rt", "--port", str(rt_port)]
        log = open(f"{tmp}/rt.log", "ab")
        rt = subprocess.Popen(rt_args, stdout=log, stderr=subprocess.STDOUT)
        procs.append(rt)
        wait_until(lambda: get(rt_port, "/ping", timeout=2).status == 200, what="realtime up")
        with open(f"{tmp}/api.conf", "w") as f:
            f.write(f"port = {api_port}\nrealtime = 127.0.0.1:{rt_port}\narchive = 127.0.0.1:1\n"
                    f"oplog-dir = {tmp}/oplog\nnode-id = api-1\n")
        api = subprocess.Popen([f"{args.bin}/clickatron-api", "--config", f"{tmp}/api.conf"],
                               stdout=open(f"{tmp}/api.log", "ab"), stderr=subprocess.STDOUT)
        procs.append(api)
        wait_until(lambda: get(api_port, "/ping", timeout=2).status == 200, what="api up")
        rt.send_signal(signal.SIGKILL)
        rt.wait()
        body = "".join(f"ns=u&key=user{i % 50}&sub=c:US\n" for i in range(100)).encode()
        interval = 100.0 / args.rate
        start = time.monotonic()
        end = start + args.minutes * 60
        next_send, next_sample, sent = start, start, 0
        samples = []
        print(f"realtime down; {args.rate} increments/s to the API for {args.minutes} min")
        print("elapsed_s  rss_mib  acknowledged")
        while time.monotonic() < end:
            now = time.monotonic()
            if now >= next_sample:
                samples.append((now - start, rss_kib(api.pid)))
                print(f"{now - start:9.0f}  {samples[-1][1] / 1024:7.1f}  {sent}", flush=True)
                next_sample += 10
            if now < next_send:
                time.sleep(min(next_send - now, 0.01))
                continue
            r = post(api_port, "/incr", body)
            if r.status != 200:
                raise SystemExit(f"/incr answered {r.status}: {r.text[:200]}")
            sent += 100
            next_send += interval
        half = [s for s in samples if s[0] >= args.minutes * 30]
        growth = (half[-1][1] - half[0][1]) / 1024 / max(1e-9, (half[-1][0] - half[0][0]) / 60) if len(half) > 1 else 0
        print(f"RSS {samples[0][1] / 1024:.1f} MiB at the start, {samples[-1][1] / 1024:.1f} MiB after "
              f"{args.minutes} min ({sent} increments held in the oplog); second half: {growth:+.2f} MiB/min")
        log = open(f"{tmp}/rt.log", "ab")
        rt = subprocess.Popen(rt_args, stdout=log, stderr=subprocess.STDOUT)
        procs.append(rt)

        def delivered():
            s = get(api_port, "/stats").json()["data"]
            return all(sh["backlog_records"] == 0 for sh in s["realtime"])
        t = time.monotonic()
        wait_until(delivered, timeout=600, what="backlog delivered")
        total = sum(int(get(rt_port, f"/get?key=u|user{i}.{hour}").text or 0)
                    for i in range(50) for hour in fwmatch_hours(rt_port, i))
        print(f"delivered in {time.monotonic() - t:.1f} s after the shard came back; shard total {total}, "
              f"acknowledged {sent}: {'equal' if total == sent else 'DIFFERENT'}")
        return 0 if total == sent else 1
    finally:
        for p in procs:
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
                p.wait()
        shutil.rmtree(tmp, ignore_errors=True)


def fwmatch_hours(port, i):
    r = get(port, f"/fwmatch?key=u|user{i}.&limit=1000")
    return [line.split(",", 1)[0].rsplit(".", 1)[1] for line in r.text.splitlines() if line]


if __name__ == "__main__":
    sys.exit(main())
