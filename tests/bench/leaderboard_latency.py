#!/usr/bin/python3
"""/leaderboard latency with its archive sums read afresh and taken from the cache
(docs/benchmarks.md#leaderboard), beside /series and /ping on the same connection.

    tests/bench/leaderboard_latency.py PORT [N]

Against an API with data (ops/demo: users `u`, links `l`): for each namespace, N requests
(default 200) of the top 10 over 30 days ending now, each with another first hour (so each
misses the cache: its archive records are listed and summed), then N of one range (after the
first, hits: only realtime is read); beside them N of /ping (the floor) and of a 30-day
/series of jehiah (the reference). Prints p50, p99 and max in ms per kind, and the
generation's cache counters from /stats.
"""
import http.client
import json
import sys
import time


def timed(conn, path):
    t = time.perf_counter()
    conn.request("GET", path)
    r = conn.getresponse()
    body = r.read()
    took = (time.perf_counter() - t) * 1000
    if r.status != 200:
        sys.exit(f"{path} answered {r.status}: {body[:300]!r}")
    return took, body


def summary(name, lat):
    lat = sorted(lat)

    def q(f):
        return lat[min(len(lat) - 1, int(f * len(lat)))]
    print(f"{name:<48} p50 {q(0.5):7.2f} ms  p99 {q(0.99):7.2f} ms  max {lat[-1]:7.2f} ms  ({len(lat)})")


def main():
    port = int(sys.argv[1])
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 200
    conn = http.client.HTTPConnection("127.0.0.1", port)
    now = int(time.time())
    end = now + 1
    start = end - 30 * 86400
    summary("/ping", [timed(conn, "/ping")[0] for _ in range(n)])
    summary("/series 30 days of u|jehiah", [timed(conn, f"/series?ns=u&key=jehiah&unit=day&start={start}&end={end}")[0]
                                            for _ in range(n)])
    for ns in ("u", "l"):
        # Each first hour differs: every request lists and sums the archive afresh.
        miss = [timed(conn, f"/leaderboard?ns={ns}&unit=day&start={start - i * 3600}&end={end}")[0] for i in range(n)]
        summary(f"/leaderboard ns={ns}, archive sums read", miss)
        hit = [timed(conn, f"/leaderboard?ns={ns}&unit=day&start={start}&end={end}")[0] for _ in range(n)]
        summary(f"/leaderboard ns={ns}, archive sums cached", hit)
        _, body = timed(conn, f"/leaderboard?ns={ns}&unit=day&start={start}&end={end}&limit=1")
        print(f"  {ns}: total {json.loads(body)['data']['total']:,} clicks in 30 days")
    plan = json.loads(timed(conn, "/stats")[1])["data"]["queries"]["plan"]
    print(f"cache: {plan['leaderboard_cache_hits']} shard hits, {plan['leaderboard_cache_misses']} shard misses")


if __name__ == "__main__":
    main()
