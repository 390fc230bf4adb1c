"""The dashboard's landing page endpoints (docs/api.md#api-namespaces, #api-leaderboard,
#api-timezones): the namespaces of both tiers with the config's display names, a
namespace's top keys over a range — exact, or refused past its documented size — cached per
archive generation, and the zones every query takes.

A cluster of 2 archive shards (one with two replicas, every archive and realtime server with a
tiny --fwmatch-limit so every listing pages) and 2 realtime shards; the leaderboard is
checked against sums computed here from the records sent.
"""
import datetime
import os
import time
import urllib.parse

import pytest

from formats import stored, ymdh
from harness import Procs, get, wait_until
from test_api_read import Cluster, publish_archive

HOUR = 3600
DAY0 = int(datetime.datetime(2026, 10, 1, tzinfo=datetime.timezone.utc).timestamp())
DAYS = 20
LONG_URL = "http://example.com/a/long/landing/page"


def history(scale=1):
    """Hourly counts of users u|k00..k11 and links l|x0..x3 for 20 days: {(ns, key): {hour: n}}."""
    data = {}
    for d in range(DAYS):
        for h in range(0, 24, 3):
            hour = DAY0 + d * 86400 + h * HOUR
            for k in range(12):
                n = scale * (1 + (k * 7 + d + h) % 5) * (k % 4 + 1)
                data.setdefault(("u", f"k{k:02d}"), {})[hour] = n
            for k in range(4):
                data.setdefault(("l", f"x{k}"), {})[hour] = scale * (k + 1)
    data[("u", LONG_URL)] = {DAY0 + 5 * 86400: 1000}  # a hashed key, shown as itself
    return data


def lines_of(data):
    out = [f"_l|{stored(LONG_URL)},{LONG_URL}"]
    for (ns, key), hours in data.items():
        for hour, n in hours.items():
            out.append(f"{ns}|{stored(key)}.{ymdh(hour)},{n}")
            out.append(f"c.{ns}|{stored(key)}.US.{ymdh(hour)},{n}")
    return out


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("landing")
    procs = Procs(tmp)
    try:
        data = history()
        work = publish_archive(tmp, lines_of(data), 2)
        # The servers read the generation through `live`, so a test can serve another.
        os.symlink(os.path.realpath(work / "current"), tmp / "live")
        files = [[tmp / "live" / "shard-0.csv"] * 2, [tmp / "live" / "shard-1.csv"]]
        options = "display-name = u:user\ndisplay-name = c:country\ncountry-codes = c\n"
        cluster = Cluster(procs, tmp, files, realtime_shards=2, api_options=options,
                          realtime_args=("--fwmatch-limit", 5))
        # Today in realtime: u|k00 (also in the archive), u|live (realtime only), z|only (a
        # namespace realtime alone has), r.u subtotals.
        now = int(time.time())
        today = now - now % 86400
        live = {("u", "k00"): {today: 50}, ("u", "live"): {today: 7, today + HOUR: 9},
                ("z", "only"): {today: 1}}
        realtime_lines = []
        for (ns, key), hours in live.items():
            for hour, n in hours.items():
                if hour <= now:
                    realtime_lines.append(f"{ns}|{key}.{ymdh(hour)},{n}")
                    data.setdefault((ns, key), {})[hour] = data.get((ns, key), {}).get(hour, 0) + n
        realtime_lines.append(f"r.u|live.direct.{ymdh(today)},7")
        cluster.incr_realtime(realtime_lines)
        cluster.work = work
        cluster.tmp = tmp
        yield cluster, data, now
    finally:
        errors = procs.stop_all()
        assert not errors, errors


def query(cluster, path, **params):
    r = get(cluster.port, f"{path}?{urllib.parse.urlencode(params)}" if params else path)
    body = r.json()
    assert r.status == 200 and body["status_code"] == 200, (path, params, body)
    return body["data"]


def expected(data, ns, start, end, limit):
    sums = {}
    for (n, key), hours in data.items():
        if n != ns:
            continue
        s = sum(v for h, v in hours.items() if start <= h < end)
        if s:
            sums[key] = s
    ranked = sorted(sums.items(), key=lambda kv: (-kv[1], kv[0]))[:limit]
    return [{"key": k, "value": v} for k, v in ranked], sum(sums.values())


def test_namespaces_of_both_tiers_with_display_names(world):
    cluster, _, _ = world
    d = query(cluster, "/namespaces")
    assert d == {"namespaces": ["l", "u", "z"], "subtotals": ["c", "r"],
                 "display_names": {"u": "user", "c": "country"}, "country_codes": ["c"]}


def test_leaderboard_is_exact_over_both_tiers(world):
    cluster, data, now = world
    for params, start, end in [
        ({"unit": "day", "start": DAY0, "end": DAY0 + DAYS * 86400}, DAY0, DAY0 + DAYS * 86400),
        ({"unit": "day", "start": DAY0 + 3 * 86400 + 7200, "end": DAY0 + 9 * 86400}, DAY0 + 3 * 86400 + 7200,
         DAY0 + 9 * 86400),
        ({}, 0, now - now % HOUR + HOUR),  # units=-1: all time up to now
        ({"unit": "day", "units": 2}, now - now % 86400 - 86400, now - now % HOUR + HOUR),  # today, realtime
    ]:
        for limit in (3, 10):
            want, total = expected(data, "u", start, end, limit)
            got = query(cluster, "/leaderboard", ns="u", limit=limit, **params)
            assert got["leaderboard"] == want, params
            assert got["total"] == total and got["limit"] == limit
    # The hashed key is shown as its original.
    got = query(cluster, "/leaderboard", ns="u", limit=1, start=DAY0 + 5 * 86400, end=DAY0 + 5 * 86400 + 3600)
    assert got["leaderboard"] == [{"key": LONG_URL, "value": 1000}]
    assert query(cluster, "/leaderboard", ns="z")["leaderboard"] == [{"key": "only", "value": 1}]
    assert query(cluster, "/leaderboard", ns="nothing")["leaderboard"] == []
    # In New York days: the buckets' range, as /series has it.
    ny = query(cluster, "/leaderboard", ns="l", unit="day", units=3, timezone="America/New_York",
               unit_reference_ts=DAY0 + 10 * 86400)
    start = DAY0 + 7 * 86400 + 4 * HOUR  # 2026-10-08 00:00 EDT (ref: 2026-10-10 20:00 EDT)
    want, total = expected(data, "l", start, DAY0 + 10 * 86400 + HOUR, 10)
    assert (ny["leaderboard"], ny["total"], ny["tz_offset"]) == (want, total, -4)


def stats(cluster):
    return query(cluster, "/stats")["queries"]


def test_leaderboard_is_cached_per_archive_generation(world):
    cluster, data, now = world
    params = {"ns": "l", "unit": "day", "start": DAY0, "end": DAY0 + 4 * 86400}
    before = stats(cluster)["plan"]
    first = query(cluster, "/leaderboard", **params)
    mid = stats(cluster)["plan"]
    assert mid["leaderboard_cache_misses"] - before["leaderboard_cache_misses"] == 2  # one per archive shard
    again = query(cluster, "/leaderboard", **params)
    after = stats(cluster)["plan"]
    assert again == first
    assert after["leaderboard_cache_hits"] - mid["leaderboard_cache_hits"] == 2
    assert after["leaderboard_cache_misses"] == mid["leaderboard_cache_misses"]
    # A new generation, every archived count doubled, served by every replica: its sums are
    # read afresh (within the lease the old generation may still answer, as every query's).
    work = publish_archive(cluster.tmp, lines_of(history(scale=2)), 2, name="work2")
    flip(cluster, work)
    want, total = expected(history(scale=2), "l", DAY0, DAY0 + 4 * 86400, 10)
    wait_until(lambda: query(cluster, "/leaderboard", **params)["leaderboard"] == want, timeout=10,
               what="the new generation's leaderboard")
    assert query(cluster, "/leaderboard", **params)["total"] == total == 2 * first["total"]
    assert stats(cluster)["plan"]["leaderboard_cache_misses"] >= after["leaderboard_cache_misses"] + 2


def flip(cluster, work):
    """Points every archive server's `live` directory at work's current generation and reloads it."""
    live = cluster.tmp / "live"
    tmp = cluster.tmp / "live.new"
    os.symlink(os.path.realpath(work / "current"), tmp)
    os.replace(tmp, live)
    for replicas in cluster.archive:
        for _, port in replicas:
            r = get(port, "/reload")
            assert r.status == 200, r


def test_a_namespace_past_the_bound_is_refused(procs, tmp_path):
    lines = [f"u|k{k:05d}.{ymdh(DAY0)},1" for k in range(10001)]
    work = publish_archive(tmp_path, lines, 1)
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])
    r = get(cluster.port, "/leaderboard?ns=u")
    body = r.json()
    assert (r.status, body["status_txt"], body["data"]) == (400, "NAMESPACE_TOO_LARGE", None)
    assert body["message"] == ("namespace u has more than 10000 keys in the archive tier; /leaderboard is exact "
                               "only up to 10000 keys a tier")


def test_every_zone_offered_is_taken_by_the_api(world):
    cluster, _, _ = world
    d = query(cluster, "/timezones")
    assert (d["min_offset"], d["max_offset"]) == (-14, 14)
    zones = d["zones"]
    assert "America/New_York" in zones and "Europe/Berlin" in zones
    for bad in ("America/St_Johns", "Asia/Tehran", "Australia/Adelaide", "Pacific/Chatham", "Asia/Calcutta"):
        assert bad not in zones
    end_2031 = 1956528000
    for tz in zones + [str(h) for h in range(-14, 15)] + ["+5"]:
        for ref in (end_2031 - 1, 946684800 + 10000 * 86400):  # 10000 days back from each: 2000 .. 2031
            r = get(cluster.port, "/series?" + urllib.parse.urlencode(
                {"ns": "u", "key": "nobody", "unit": "day", "units": 10000, "unit_reference_ts": ref, "timezone": tz}))
            assert r.status == 200, (tz, r)
