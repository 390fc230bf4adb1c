"""The range form of the read endpoints (docs/api-read.md#the-range-form): /series,
/breakdown and /subtotals with `start` and `end` answer exactly the hours of [start, end), in
buckets of every unit and zone, checked against an independent model.

One cluster for the file: an archive of one key counted every hour from 2026-09-01 to
2026-11-10 (New York and Berlin leave DST inside it, Sydney enters it) with country
subtotals, two archive shards, and today's hours of the key in realtime (sent to the realtime
shards directly). The model groups every hour of a range by its local unit — the date, the
week's Sunday or Monday, the month, computed with Python's zoneinfo — so a bucket's start is
its first hour and its value the sum of its hours: nothing of the API's bucket code.
"""
import datetime
import random
import time
import urllib.parse
from zoneinfo import ZoneInfo

import pytest

from formats import ymdh
from harness import Procs, get
from test_api_read import Cluster, publish_archive

HOUR = 3600
FIRST = int(datetime.datetime(2026, 9, 1, tzinfo=datetime.timezone.utc).timestamp())
LAST = int(datetime.datetime(2026, 11, 10, 23, tzinfo=datetime.timezone.utc).timestamp())
ZONES = ["UTC", "America/New_York", "Australia/Sydney", "Europe/Berlin", "-5", "+9"]
UNITS = ["hour", "day", "week", "mweek", "month"]


def count_at(hour):
    i = (hour - FIRST) // HOUR
    return 1 + i % 7 + (i // 24) % 5


def country_split(n):
    de = n // 3
    return {"US": n - de, **({"DE": de} if de else {})}


@pytest.fixture(scope="module")
def world(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("range")
    procs = Procs(tmp)
    hours = {}
    lines = []
    for hour in range(FIRST, LAST + 1, HOUR):
        n = count_at(hour)
        hours[hour] = n
        t = ymdh(hour)
        lines.append(f"u|alice.{t},{n}")
        lines += [f"c.u|alice.{c}.{t},{v}" for c, v in country_split(n).items()]
    try:
        work = publish_archive(tmp, lines, 2)
        cluster = Cluster(procs, tmp, [[work / "current" / f"shard-{k}.csv"] for k in range(2)], realtime_shards=2)
        now = int(time.time())
        today = now - now % 86400
        live = []
        for hour in range(today, now - now % HOUR + 1, HOUR):
            n = 100 + (hour - today) // HOUR
            hours[hour] = n
            t = ymdh(hour)
            live.append(f"u|alice.{t},{n}")
            live += [f"c.u|alice.{c}.{t},{v}" for c, v in country_split(n).items()]
        cluster.incr_realtime(live)
        yield cluster, hours, now
    finally:
        errors = procs.stop_all()
        assert not errors, errors


def zone_of(tz):
    if tz.lstrip("+-").isdigit():
        return datetime.timezone(datetime.timedelta(hours=int(tz)))
    return ZoneInfo(tz)


def unit_label(hour, unit, zone):
    local = datetime.datetime.fromtimestamp(hour, zone)
    d = local.date()
    if unit == "hour":
        return hour
    if unit == "day":
        return d
    if unit == "week":  # from Sunday
        return d - datetime.timedelta(days=(d.weekday() + 1) % 7)
    if unit == "mweek":
        return d - datetime.timedelta(days=d.weekday())
    return d.replace(day=1)


def natural_start(label, unit, zone):
    if unit == "hour":
        return label
    return int(datetime.datetime(label.year, label.month, label.day, tzinfo=zone).timestamp())


def model(hours, unit, tz, start, end):
    """[(dt, value)] oldest first, and the dts of the partial buckets."""
    zone = zone_of(tz)
    groups = {}
    order = []
    for hour in range(start - start % HOUR, end - 1 - (end - 1) % HOUR + 1, HOUR):
        label = unit_label(hour, unit, zone)
        if label not in groups:
            groups[label] = []
            order.append(label)
        groups[label].append(hour)
    buckets = [(min(groups[l]), sum(hours.get(h, 0) for h in groups[l])) for l in order]
    partial = []
    first, last = order[0], order[-1]
    if min(groups[first]) != natural_start(first, unit, zone):
        partial.append(min(groups[first]))
    after_last = max(groups[last]) + HOUR  # the newest is whole when a unit begins there
    if natural_start(unit_label(after_last, unit, zone), unit, zone) != after_last:
        if not partial or partial[-1] != min(groups[last]):
            partial.append(min(groups[last]))
    return buckets, partial


def query(cluster, path, **params):
    r = get(cluster.port, f"{path}?{urllib.parse.urlencode(params)}")
    body = r.json()
    assert r.status == 200 and body["status_code"] == 200, (path, params, body)
    return body["data"]


def local_ts(tz, y, m, d, h=0):
    return int(datetime.datetime(y, m, d, h, tzinfo=zone_of(tz)).timestamp())


def check(cluster, hours, unit, tz, start, end):
    want, partial = model(hours, unit, tz, start, end)
    data = query(cluster, "/series", ns="u", key="alice", unit=unit, timezone=tz, start=start, end=end)
    got = [(b["dt"], b["value"]) for b in reversed(data["series"])]
    assert got == want, (unit, tz, start, end)
    assert data["partial"] == partial, (unit, tz, start, end)
    assert (data["start"], data["end"], data["units"], data["unit_reference_ts"]) == (start, end, len(want), end - 1)
    total = query(cluster, "/series", ns="u", key="alice", unit=unit, timezone=tz, start=start, end=end,
                  rollup="true")["total"]
    assert total == sum(v for _, v in want) == sum(hours.get(h, 0) for h in range(start - start % HOUR, end, HOUR))
    return want


def test_aligned_ranges_are_exactly_their_buckets_in_every_zone(world):
    cluster, hours, _ = world
    for tz in ZONES:
        # New York's, Berlin's and Sydney's DST changes lie inside these ranges.
        want = check(cluster, hours, "day", tz, local_ts(tz, 2026, 10, 20), local_ts(tz, 2026, 11, 8))
        assert len(want) == 19
        check(cluster, hours, "hour", tz, local_ts(tz, 2026, 10, 31, 20), local_ts(tz, 2026, 11, 1, 12))
        check(cluster, hours, "month", tz, local_ts(tz, 2026, 9, 1), local_ts(tz, 2026, 11, 1))
        check(cluster, hours, "mweek", tz, local_ts(tz, 2026, 9, 7), local_ts(tz, 2026, 11, 2))
    want = check(cluster, hours, "day", "America/New_York", local_ts("America/New_York", 2026, 11, 1),
                 local_ts("America/New_York", 2026, 11, 2))
    assert want == [(local_ts("America/New_York", 2026, 11, 1), sum(hours[h] for h in range(
        local_ts("America/New_York", 2026, 11, 1), local_ts("America/New_York", 2026, 11, 2), HOUR)))]
    assert local_ts("America/New_York", 2026, 11, 2) - local_ts("America/New_York", 2026, 11, 1) == 25 * HOUR


def test_random_ranges_with_partial_edges(world):
    cluster, hours, now = world
    rng = random.Random(34)
    for i in range(120):
        unit = rng.choice(UNITS)
        tz = rng.choice(ZONES)
        span = {"hour": 200 * HOUR, "day": 40 * 86400, "week": 80 * 86400, "mweek": 80 * 86400,
                "month": 70 * 86400}[unit]
        if i % 4 == 0:  # ending now: the archive, the days between, and realtime's today
            end = now + 1
            start = end - 1 - rng.randrange(span)
        else:
            start = rng.randrange(FIRST - 86400, LAST - HOUR)
            end = min(start + 1 + rng.randrange(span), LAST + 3 * 86400)
        check(cluster, hours, unit, tz, start, end)


def test_breakdown_and_subtotals_take_the_range(world):
    cluster, hours, now = world
    tz = "America/New_York"
    start, end = local_ts(tz, 2026, 10, 30, 13) + 1200, local_ts(tz, 2026, 11, 3, 9)
    want = {}
    for h in range(start - start % HOUR, end, HOUR):
        for c, v in country_split(hours.get(h, 0)).items():
            if v:
                want[c] = want.get(c, 0) + v
    data = query(cluster, "/breakdown", ns="u", key="alice", sub="c", unit="day", timezone=tz, start=start, end=end)
    assert data["breakdown"] == [{"subkey": c, "value": v} for c, v in sorted(want.items(), key=lambda x: -x[1])]
    assert (data["start"], data["end"]) == (start, end)
    assert query(cluster, "/subtotals", ns="u", key="alice", start=start, end=end)["subtotals"] == ["c"]
    # A range of hours with no record: no subtotal namespace.
    assert query(cluster, "/subtotals", ns="u", key="alice", unit="hour", start=LAST + 2 * 86400,
                 end=LAST + 3 * 86400)["subtotals"] == []
    # Today, from realtime alone.
    today = now - now % 86400
    data = query(cluster, "/breakdown", ns="u", key="alice", sub="c", start=today, end=now + 1)
    assert sum(e["value"] for e in data["breakdown"]) == sum(hours[h] for h in range(today, now + 1, HOUR)
                                                              if h in hours)


def test_range_errors_are_named(world):
    cluster, _, now = world
    base = "/series?ns=u&key=alice"
    cases = [
        (f"{base}&start={now - 86400}", "MISSING_ARG_END"),
        (f"{base}&end={now}", "MISSING_ARG_START"),
        (f"{base}&start={now - 86400}&end={now}&units=3", "INVALID_ARG_UNITS"),
        (f"{base}&start={now - 86400}&end={now}&unit_reference_ts={now}", "INVALID_ARG_UNIT_REFERENCE_TS"),
        (f"{base}&start={now}&end={now - 86400}", "INVALID_ARG_END"),
        (f"{base}&start=soon&end={now}", "INVALID_ARG_START"),
        (f"{base}&unit=hour&start={now - 20000 * HOUR}&end={now}", "INVALID_ARG_START"),
        (f"{base}&start={now - 86400}&end={now}&timezone=Asia/Kolkata", "INVALID_ARG_TIMEZONE"),
        (f"/breakdown?ns=u&key=alice&sub=c&start={now}", "MISSING_ARG_END"),
        (f"/subtotals?ns=u&key=alice&start={now}&end=x", "INVALID_ARG_END"),
    ]
    for path, txt in cases:
        r = get(cluster.port, path)
        assert (r.status, r.json()["status_txt"], r.json()["data"]) == (400, txt, None), (path, r)
        assert r.json()["message"]
