"""A breakdown's realtime hours summed by realtime (docs/api-read.md#the-plan-of-a-query):
the API asks /fwsum for the hours of the range past W and gets one line per subkey. The
answers must be exactly the sums of the hours, whatever the range and zone, paged or not.
"""
import datetime
import os
import random
import time
import zoneinfo

from formats import day_text, ymdh
from harness import get
from test_api_read import Cluster
from test_api_read_plan import flip, records, write_generation

SUBKEYS = ["US", "JP", "DE", "h0aMB8AuNw4="] + [f"s{i:03d}" for i in range(40)]


def bucket_end(start, unit, tz):
    """The end of the bucket starting at `start`: an hour, or the next local midnight."""
    if unit == "hour":
        return start + 3600
    zone = (datetime.timezone(datetime.timedelta(hours=int(tz))) if tz.lstrip("-").isdigit()
            else datetime.timezone.utc if tz == "UTC" else zoneinfo.ZoneInfo(tz))
    day = datetime.datetime.fromtimestamp(start, zone).date() + datetime.timedelta(days=1)
    return int(datetime.datetime(day.year, day.month, day.day, tzinfo=zone).timestamp())


def plan(cluster):
    return get(cluster.port, "/stats").json()["data"]["queries"]["plan"]


def test_breakdowns_of_realtime_hours_are_their_sums(procs, tmp_path):
    db = write_generation(tmp_path / "gen", "g1", records(step=24, scale=1), True)
    cluster = Cluster(procs, tmp_path, [[db]])
    now = int(time.time()) // 3600 * 3600
    rng = random.Random(9)
    hours = {}  # ts -> subkey -> n, yesterday .. this hour (realtime's days past W)
    lines = []
    for ts in range(now - 30 * 3600, now + 3600, 3600):
        for sub in rng.sample(SUBKEYS, 12):
            n = rng.randint(-2, 9)
            if n == 0:
                continue
            hours.setdefault(ts, {})[sub] = n
            lines.append(f"c.u|k.{sub}.{ymdh(ts)},{n}")
    cluster.incr_realtime(lines)
    before = plan(cluster)
    checked = 0
    for _ in range(60):
        unit, most = rng.choice([("hour", 40), ("day", 3)])
        units = rng.randint(1, most)
        tz = rng.choice(["UTC", "America/New_York", "Asia/Tokyo", "5", "-3"])
        params = f"ns=u&key=k&unit={unit}&units={units}&timezone={tz}&unit_reference_ts={now}"
        r = cluster.query(f"/breakdown?{params}&sub=c&limit=100")
        assert r.status == 200, r
        got = {e["subkey"]: e["value"] for e in r.json()["data"]["breakdown"]}
        # The hours of the buckets: from the oldest bucket's start to the newest one's end.
        starts = [b["dt"] for b in cluster.query(f"/series?{params}").json()["data"]["series"]]
        lo, hi = min(starts), bucket_end(max(starts), unit, tz)
        want = {}
        for ts, subs in hours.items():
            if lo <= ts < hi:
                for sub, n in subs.items():
                    want[sub] = want.get(sub, 0) + n
        want = {("http://www.facebook.com/" if s == "h0aMB8AuNw4=" else s): n for s, n in want.items() if n}
        assert got == want, (unit, units, tz)
        checked += 1
    after = plan(cluster)
    # Each asked realtime for sums, but the first (no W known yet: it lists the key).
    assert after["realtime_sums"] >= before["realtime_sums"] + checked - 1, (before, after)


def test_realtime_sums_read_to_the_end_of_their_pages(procs, tmp_path):
    """More records in the range than one /fwsum reads (--fwmatch-limit, 10000): the API
    reads page after page and adds them up."""
    db = write_generation(tmp_path / "gen", "g1", records(step=24, scale=1), True)
    cluster = Cluster(procs, tmp_path, [[db]])
    now = int(time.time()) // 3600 * 3600
    subs = [f"p{i:03d}" for i in range(420)]
    lines = [f"c.u|k.{sub}.{ymdh(ts)},{1 + i % 5}" for ts in range(now - 29 * 3600, now + 3600, 3600)
             for i, sub in enumerate(subs)]
    assert len(lines) > 12000
    cluster.incr_realtime(lines)
    q = f"/breakdown?ns=u&key=k&sub=c&unit=hour&units=30&unit_reference_ts={now}&limit=1000"
    cluster.query(q)  # learns W
    before = plan(cluster)
    r = cluster.query(q)
    assert r.status == 200, r
    got = {e["subkey"]: e["value"] for e in r.json()["data"]["breakdown"]}
    assert got == {sub: 30 * (1 + i % 5) for i, sub in enumerate(subs)}
    assert plan(cluster)["realtime_sums"] == before["realtime_sums"] + 2  # two pages


def archive_text(hours):
    """Archive lines (docs/formats.md#archive-records) of u|k's hours: ts -> subkey -> n."""
    lines = {"u|k": " ".join(f"{ymdh(ts)}:{sum(c.values())}" for ts, c in sorted(hours.items()))}
    for ts, cols in hours.items():
        lines[f"c.u|k.{ymdh(ts)}"] = " ".join(f"{s}:{n}" for s, n in sorted(cols.items()))
    return "".join(f"{k},{lines[k]}\n" for k in sorted(lines, key=lambda k: k.encode()))


def test_a_publish_moves_hours_from_realtime_sums_to_the_archive(procs, tmp_path):
    """Realtime holds yesterday (D) and today; the archive's W goes from D-1 to D while
    breakdowns run. A query that asked realtime for the sums of D and later (the W it last
    saw) and hears W = D from the archive asks again from today: D is never counted twice,
    nor left out."""
    now = int(time.time()) // 3600 * 3600
    today = now // 86400
    d = today - 1
    old = {(d - 3) * 86400 + 5 * 3600: {"US": 7, "JP": 1}}
    day_d = {d * 86400 + h * 3600: {"US": 1 + h % 3, "DE": 2} for h in range(0, 24, 2)}
    live_hours = {ts: {"US": 4, "JP": 3} for ts in range(today * 86400, now + 3600, 3600)}
    gens = {}
    for name, last_day, hours in (("g1", d - 1, old), ("g2", d, {**old, **day_d})):
        path = tmp_path / name
        path.mkdir()
        (path / "shard-0.csv").write_text(archive_text(hours))
        (path / "manifest").write_text(f"generation = {name}\nlast_day = {day_text(last_day)}\nrollups = 0\n")
        gens[name] = path
    live = tmp_path / "live"
    os.symlink(gens["g1"], live)
    cluster = Cluster(procs, tmp_path, [[live / "shard-0.csv"]], api_options="archive-lease-ms = 100\n")
    cluster.incr_realtime([f"c.u|k.{s}.{ymdh(ts)},{n}" for hours in (day_d, live_hours)
                           for ts, cols in hours.items() for s, n in cols.items()])
    want = {}
    for hours in (old, day_d, live_hours):
        for cols in hours.values():
            for s, n in cols.items():
                want[s] = want.get(s, 0) + n
    q = f"/breakdown?ns=u&key=k&sub=c&unit=day&units=6&unit_reference_ts={now}"

    def answer():
        r = cluster.query(q)
        assert r.status == 200, r
        return {e["subkey"]: e["value"] for e in r.json()["data"]["breakdown"]}

    for _ in range(3):
        assert answer() == want
    sums = plan(cluster)["realtime_sums"]
    assert sums >= 2
    flip(live, gens["g2"], cluster.archive[0][0][1])
    deadline = time.monotonic() + 20
    while get(cluster.port, "/stats").json()["data"]["queries"]["archive_cache"]["generation_changes"] < 1:
        assert time.monotonic() < deadline, "the API never met g2"
        assert answer() == want
    for _ in range(5):
        assert answer() == want
    assert plan(cluster)["realtime_sums"] > sums + 5
