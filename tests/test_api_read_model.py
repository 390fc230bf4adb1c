"""clickatron-api read path against an independent model.

Random events over 60 days (2013-02-18 .. 2013-04-18: the US, UK, Sydney and Auckland DST
changes fall inside), stored the way the cluster stores them: the first 57 days built into a
2-shard archive (shard 0 with two replicas) by clickatron-rebuild, the last 3 days in two
realtime shards. Then random /series and /breakdown queries — every unit, fixed offsets and
IANA zones of both hemispheres, random reference times and unit counts (including -1) — are
answered by the API and by a model written here from docs/api.md's words: a bucket is the set of
UTC hours whose local calendar label (hour, day, Sunday week, Monday week, month) is the same,
its dt is its first hour. The two must agree exactly.

CLICKATRON_MODEL_SEED picks another seed; the seed is printed on failure.
"""
import os
import random
import urllib.parse
from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from formats import day_text, escape, shard_key, shard_of, stored, ymdh
from harness import get
from rollups import check_rollups
from test_api_read import Cluster, publish_archive

SEED = int(os.environ.get("CLICKATRON_MODEL_SEED", "20130218"))
START = int(datetime(2013, 2, 18, tzinfo=timezone.utc).timestamp())
DAYS = 60
ARCHIVE_DAYS = 57
ZONES = ["0", "-5", "3", "9", "14", "-14", "UTC", "America/New_York", "Europe/London",
         "Australia/Sydney", "Pacific/Auckland", "America/Sao_Paulo", "Asia/Tokyo"]
UNITS = ["hour", "day", "week", "mweek", "month"]


# ---- the model ----------------------------------------------------------------------------

def label(unit, zone, hour):
    """The bucket label of the UTC hour starting at `hour` in zone."""
    if unit == "hour":
        return hour
    if zone.lstrip("-").isdigit():
        local = datetime.fromtimestamp(hour, timezone(timedelta(hours=int(zone))))
    else:
        local = datetime.fromtimestamp(hour, ZoneInfo(zone))
    d = local.date()
    if unit == "day":
        return d
    if unit == "week":
        return d - timedelta(days=(d.weekday() + 1) % 7)
    if unit == "mweek":
        return d - timedelta(days=d.weekday())
    return (d.year, d.month)


def offset_hours(zone, ts):
    if zone.lstrip("-").isdigit():
        return int(zone)
    return int(datetime.fromtimestamp(ts, ZoneInfo(zone)).utcoffset().total_seconds()) // 3600


def model_buckets(unit, zone, ref, units, first_hour):
    """[(dt, [hours])] newest first: `units` buckets, or (-1) back to first_hour's bucket."""
    buckets = []
    hour = ref - ref % 3600
    current = None
    while True:
        lab = label(unit, zone, hour)
        if lab != current:
            if units != -1 and len(buckets) == units:
                break
            if units == -1 and buckets and (first_hour is None or hour < first_hour):
                break
            buckets.append([None, []])
            current = lab
        buckets[-1][0] = hour
        buckets[-1][1].append(hour)
        hour -= 3600
    return buckets


class Model:
    def __init__(self, rng):
        self.totals = {}      # key -> {hour: n}
        self.subtotals = {}   # (key, sub) -> {hour: {original subkey: n}}
        self.events = []
        keys = ["alpha", "b", "http://example.com/a/long/key?that=is&hashed=1"]
        countries = ["US", "JP", "DE", "FR", "BR", "AU", "NZ"]
        urls = [f"http://site{i}.example.org/path/{i}" for i in range(12)] + ["t.co", "x"]
        late_url = "https://only-in-realtime.example.net/"
        for _ in range(1500):
            day = rng.randrange(DAYS)
            hour = START + day * 86400 + rng.randrange(24) * 3600
            key = rng.choice(keys)
            value = rng.choice([1, 1, 1, 2, 3, 5, 8, -1])
            subs = [("c", rng.choice(countries))]
            if rng.random() < 0.7:
                pool = urls + ([late_url] if day >= ARCHIVE_DAYS else [])
                subs.append(("r", rng.choice(pool)))
            self.events.append((hour, key, value, subs))
            t = self.totals.setdefault(key, {})
            t[hour] = t.get(hour, 0) + value
            for sub, subkey in subs:
                s = self.subtotals.setdefault((key, sub), {}).setdefault(hour, {})
                s[subkey] = s.get(subkey, 0) + value
        self.keys = keys

    def records(self):
        """(archive lines, realtime lines, realtime lookup lines by day) in realtime format."""
        sums, first_day_of_hash, originals = {}, {}, {}
        for hour, key, value, subs in self.events:
            day = (hour - START) // 86400
            sk = stored(key)
            parts = [f"m|{sk}.{ymdh(hour)}"]
            for sub, subkey in subs:
                parts.append(f"{sub}.m|{sk}.{stored(subkey)}.{ymdh(hour)}")
            for p in parts:
                sums[(p, day)] = sums.get((p, day), 0) + value
            for v in [key] + [s for _, s in subs]:
                if stored(v) != v:
                    h = stored(v)
                    originals[h] = v
                    first_day_of_hash[h] = min(first_day_of_hash.get(h, day), day)
        archive, live = [], []
        for (record, day), n in sorted(sums.items()):
            if n == 0:
                continue
            (archive if day < ARCHIVE_DAYS else live).append(f"{record},{n}")
        lookups_live = {}
        for h, day in first_day_of_hash.items():
            line = f"_l|{h},{escape(originals[h])}"
            if day < ARCHIVE_DAYS:
                archive.append(line)
            else:
                d = day_text(START // 86400 + day)
                lookups_live.setdefault(d, []).append(line)
        return archive, live, lookups_live

    def head(self, q):
        return {"ns": "m", "key": q["key"], "unit": q["unit"], "units": q["units"],
                "unit_reference_ts": q["ref"], "tz_offset": offset_hours(q["zone"], q["ref"])}

    def series(self, q):
        data = self.totals.get(q["key"], {})
        nonzero = [h for h, n in data.items() if n != 0]  # an hour summing to 0 is not stored
        first = min(nonzero) if nonzero else None
        buckets = model_buckets(q["unit"], q["zone"], q["ref"], q["units"], first)
        out = self.head(q)
        values = [(dt, sum(data.get(h, 0) for h in hours)) for dt, hours in buckets]
        if q["rollup"]:
            out["total"] = sum(v for _, v in values)
        else:
            out["series"] = [{"dt": dt, "value": v} for dt, v in values]
        return out

    def breakdown(self, q):
        data = self.subtotals.get((q["key"], q["sub"]), {})
        totals = self.totals.get(q["key"], {})
        nonzero = [h for h, n in totals.items() if n != 0]
        first = min(nonzero) if nonzero else None
        buckets = model_buckets(q["unit"], q["zone"], q["ref"], q["units"], first)
        sums = {}
        archive_end = START + ARCHIVE_DAYS * 86400
        for _, hours in buckets:
            for h in hours:
                # The archive total record is the index of its subtotal records, and
                # an hour whose total nets to 0 has no column — so its subtotals are not found.
                if h < archive_end and totals.get(h, 0) == 0:
                    continue
                for subkey, n in data.get(h, {}).items():
                    sums[subkey] = sums.get(subkey, 0) + n
        ranked = sorted(((s, n) for s, n in sums.items() if n != 0), key=lambda e: (-e[1], e[0].encode()))
        out = self.head(q)
        out["sub"] = q["sub"]
        out["breakdown"] = [{"subkey": s, "value": n} for s, n in ranked[:q["limit"]]]
        return out


def random_query(rng, model):
    unit = rng.choice(UNITS)
    units_choices = {"hour": [1, 3, 24, 100, 500], "day": [1, 2, 7, 30, 65], "week": [1, 2, 5, 10],
                     "mweek": [1, 2, 5, 10], "month": [1, 2, 3, 13]}[unit]
    return {
        "kind": rng.choice(["series", "series", "breakdown"]),
        "key": rng.choice(model.keys),
        "unit": unit,
        "units": rng.choice(units_choices + [-1]),
        "zone": rng.choice(ZONES),
        # anywhere in the window and a little past it, at any second
        "ref": START + rng.randrange((DAYS + 3) * 86400),
        "rollup": rng.random() < 0.2,
        "sub": rng.choice(["c", "r"]),
        "limit": rng.choice([1, 2, 3, 5, 100]),
    }


def request_of(q):
    params = [("ns", "m"), ("key", q["key"]), ("unit", q["unit"]), ("units", q["units"]),
              ("unit_reference_ts", q["ref"])]
    if q["zone"] != "0" or q["units"] == 2:  # the default zone is UTC: sometimes leave it out
        params.append(("timezone", q["zone"]))
    if q["kind"] == "series":
        if q["rollup"]:
            params.append(("rollup", "true"))
        return "/series?" + urllib.parse.urlencode(params)
    params += [("sub", q["sub"]), ("limit", q["limit"])]
    return "/breakdown?" + urllib.parse.urlencode(params)


def test_random_queries_match_the_model(procs, tmp_path):
    rng = random.Random(SEED)
    model = Model(rng)
    archive, live, lookups_live = model.records()
    work = publish_archive(tmp_path, archive, 2)
    files = [work / "current" / f"shard-{k}.csv" for k in range(2)]
    # The archive holds day and month rollups (docs/formats.md#rollup-records): the answers
    # must not change for them.
    assert sum(check_rollups(f.read_bytes()) for f in files) > 0
    cluster = Cluster(procs, tmp_path, [[files[0], files[0]], [files[1]]], realtime_shards=2)
    sets = cluster.incr_realtime(live)
    assert not sets  # lookups of realtime days are set per day below
    for day, lines in lookups_live.items():
        by_shard = {}
        for line in lines:
            by_shard.setdefault(shard_of(shard_key(line.split(",", 1)[0]), 2), []).append(line)
        cluster.set_lookups(by_shard, day)

    checked = 0
    for i in range(300):
        q = random_query(rng, model)
        if q["kind"] == "breakdown":
            q["rollup"] = False
        path = request_of(q)
        expected = model.series(q) if q["kind"] == "series" else model.breakdown(q)
        r = get(cluster.port, path)
        assert r.status == 200, (SEED, i, path, r)
        assert r.json()["data"] == expected, (SEED, i, path)
        checked += 1
    assert checked == 300
