#!/usr/bin/env python3
"""/keys latency on one keep-alive connection (docs/benchmarks.md#api-dashboard-endpoints).

    tests/bench/keys_latency.py PORT [N]

Against an API with data (ops/demo's users `u` and links `l`): N requests (default 2000) of
/keys?ns=..&prefix=..&limit=20 with prefixes drawn (seed 1) from single letters and digits of
both namespaces, two-letter and empty prefixes; prints p50, p99 and max in ms.
"""
import http.client
import random
import sys
import time


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 2000
    conn = http.client.HTTPConnection("127.0.0.1", port)
    prefixes = ([("u", p) for p in "abcdefghijklmnopqrstuvwxyz"] +
                [("l", p) for p in "0123456789abcdefghij"] + [("u", "je"), ("u", ""), ("l", "")])
    random.seed(1)
    lat = []
    for _ in range(n):
        ns, p = random.choice(prefixes)
        t = time.perf_counter()
        conn.request("GET", f"/keys?ns={ns}&prefix={p}&limit=20")
        r = conn.getresponse()
        body = r.read()
        lat.append((time.perf_counter() - t) * 1000)
        if r.status != 200:
            sys.exit(f"/keys answered {r.status}: {body[:200]!r}")
    lat.sort()

    def q(f):
        return lat[min(len(lat) - 1, int(f * len(lat)))]

    print(f"{n} /keys (limit=20, {len(prefixes)} prefixes): p50 {q(0.5):.2f} ms, p99 {q(0.99):.2f} ms, "
          f"max {lat[-1]:.2f} ms")


if __name__ == "__main__":
    main()
