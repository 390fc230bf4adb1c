"""Counts never wrap or saturate (docs/formats.md#counts), on the real binaries.

Increments near 2^63 go through clickatron-api's /incr into one key-hour: every one is
acknowledged and counted, clickatron-realtime's /get answers the exact 128-bit value, and
the API's /series and /breakdown answer exact sums (a day bucket of two hours near 2^63
too) as plain JSON integers. Then `clickatron-rebuild nightly` archives that day, and the
answers from the archive are the same exact values.
"""
import time

from harness import free_port, get, wait_until
from test_rebuild_cluster import Cluster, bootstrap, day_text, q, rebuild, ymdh

BIG = 2**63 - 1  # the largest increment (docs/api.md#api-incr)


def incr(api, ts, value, sub=None):
    path = f"/incr?ns=u&key=big&value={value}&ts={ts}" + (f"&sub={q(sub)}" if sub else "")
    r = get(api, path)
    assert r.status == 200 and r.json()["data"] == {"accepted": 1}, r
    return r


def answers(api, day):
    """/series of the day's hours, of the day, its total, and the /breakdown by country."""
    ref = day * 86400 + 23 * 3600
    base = f"/series?ns=u&key=big&unit_reference_ts={ref}"
    hours = get(api, base + "&unit=hour&units=24")
    days = get(api, base + "&unit=day&units=1")
    total = get(api, base + "&unit=day&units=1&rollup=true")
    breakdown = get(api, f"/breakdown?ns=u&key=big&sub=c&unit=day&units=1&unit_reference_ts={ref}")
    for r in (hours, days, total, breakdown):
        assert r.status == 200, r
    return {
        "hours": {p["dt"]: p["value"] for p in hours.json()["data"]["series"] if p["value"] != 0},
        "day": [p["value"] for p in days.json()["data"]["series"]],
        "total": total.json()["data"]["total"],
        "breakdown": [(e["subkey"], e["value"]) for e in breakdown.json()["data"]["breakdown"]],
        # the JSON text itself: plain integer literals, never floats or strings
        "text": days.body.decode() + total.body.decode(),
    }


def test_counts_near_2_63_are_exact_from_realtime_to_archive(procs, tmp_path):
    cluster = Cluster(procs, tmp_path, realtime=1, archive_replicas=(1,))
    bootstrap(cluster)
    api = free_port()
    api_proc = procs.start("clickatron-api", ["--config", cluster.config, "--port", api], ready_port=api)
    day = int(time.time()) // 86400 - 1  # yesterday: the oldest day /incr takes
    h1, h2 = day * 86400 + 5 * 3600, day * 86400 + 6 * 3600

    # Three increments of 2^63 - 1 into one key-hour, each acknowledged; two more into the
    # next hour. One increment past int64 is refused (the per-increment bound) and changes
    # nothing.
    for _ in range(3):
        incr(api, h1, BIG, sub="c:US")
    incr(api, h2, BIG, sub="c:US")
    incr(api, h2, BIG - 1, sub="c:US")
    refused = get(api, f"/incr?ns=u&key=big&value={2**63}&ts={h2}")
    assert refused.status == 400 and refused.json()["status_txt"] == "INVALID_ARG_VALUE", refused
    hour1, hour2 = 3 * BIG, 2 * BIG - 1
    assert hour1 > 2**64 and hour2 > 2**63

    def rt(key):
        r = get(cluster.rt_ports[0], "/get?key=" + q(key))
        return r.body.decode().rstrip("\n") if r.status == 200 else None

    wait_until(lambda: rt(f"u|big.{ymdh(day, 5)}") == str(hour1) and rt(f"u|big.{ymdh(day, 6)}") == str(hour2),
               what="the increments to reach realtime, exactly")
    assert rt(f"c.u|big.US.{ymdh(day, 5)}") == str(hour1)
    assert rt(f"c.u|big.US.{ymdh(day, 6)}") == str(hour2)

    expected = {
        "hours": {h1: hour1, h2: hour2},
        "day": [hour1 + hour2],
        "total": hour1 + hour2,
        "breakdown": [("US", hour1 + hour2)],
    }
    live = answers(api, day)
    assert {k: v for k, v in live.items() if k != "text"} == expected
    assert f'"value":{hour1 + hour2}' in live["text"] and f'"total":{hour1 + hour2}' in live["text"], live["text"]

    # The nightly archives the day; the archive's lines hold the exact sums, and the API,
    # now reading that day from the archive, answers the same.
    out = rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(day)).stdout.decode()
    assert f"nightly {day_text(day)}: done" in out, out
    line = cluster.archive_get("u|big").body.decode().rstrip("\n")
    assert line.split(" ") == [f"{ymdh(day, 5)}:{hour1}", f"{ymdh(day, 6)}:{hour2}"], line
    # The day rollup of the subtotals: hours 5 and 6 (mask 96), summed exactly past 2^64.
    rollup = cluster.archive_get(f"c.u|big.{ymdh(day, 5)[:3]}").body.decode()
    assert rollup == f".{ymdh(day, 5)[2]}:96 US:{hour1 + hour2}\n", rollup
    archived = answers(api, day)
    assert {k: v for k, v in archived.items() if k != "text"} == expected
    assert archived["text"] == live["text"]
    assert "DATA LOSS" not in api_proc.output() and "COUNTER_OVERFLOW" not in api_proc.output()
