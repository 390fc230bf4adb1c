"""The plan of a query (docs/api-read.md#the-plan-of-a-query): day and month rollup records
read in place of hours when the archive's generation carries them, tiers asked only when the
range needs their hours, and archive answers cached per generation — without a publish ever
making an answer that mixes two generations.

The archive files here are written directly (sorted `key,value` lines and a manifest beside
them, docs/formats.md#manifest): the archive serves any sorted file, so a test can say
exactly which rollup records exist.
"""
import os
import random
import threading
import time

from formats import ymdh
from harness import free_port, get, wait_until
from rollups import mask_value
from rollups import check_rollups
from test_api_read import Cluster, publish_archive

SUBKEYS = ["US", "JP", "DE", "h0aMB8AuNw4="]
START = 1326589200   # 2012-01-15 01:00 UTC
END = 1334966400     # 2012-04-21 00:00 UTC
LAST_DAY = "2012-04-30"


def records(step, scale, drop=()):
    """Records of u|k with an hour every `step` hours from START to END, subtotals of
    namespace c (count per subkey: scale * (1 + hour % 7 ...)), their day and month rollups
    (docs/formats.md#rollup-records: the mask of their hours, then the sums) except the
    tokens in drop, and a lookup record for the hashed subkey."""
    hours = {}
    for ts in range(START, END, step * 3600):
        token = ymdh(ts)
        cols = {s: scale * (1 + (ts // 3600 + i) % 7) for i, s in enumerate(SUBKEYS) if (ts // 3600 + i) % 5}
        hours[token] = cols
    lines = {"u|k": " ".join(f"{t}:{sum(c.values())}" for t, c in sorted(hours.items()))}
    rollups, summed = {}, {}
    for token, cols in hours.items():
        lines[f"c.u|k.{token}"] = cols
        for period in (token[:2], token[:3]):
            summed.setdefault(period, []).append(token)
            r = rollups.setdefault(period, {})
            for s, n in cols.items():
                r[s] = r.get(s, 0) + n
    for period, cols in rollups.items():
        if period not in drop:
            lines[f"c.u|k.{period}"] = (mask_value(summed[period]), cols)
    lines["_l|h0aMB8AuNw4="] = "http://www.facebook.com/"
    out = []
    for key in sorted(lines, key=lambda k: k.encode()):
        v = lines[key]
        mask = ""
        if isinstance(v, tuple):
            mask, v = v[0] + " ", v[1]
        if isinstance(v, dict):
            v = mask + " ".join(f"{s}:{n}" for s, n in sorted(v.items(), key=lambda kv: kv[0].encode()))
        out.append(f"{key},{v}\n")
    return "".join(out)


def write_generation(path, generation, text, rollups):
    path.mkdir(parents=True)
    (path / "shard-0.csv").write_text(text)
    (path / "manifest").write_text(f"generation = {generation}\nlast_day = {LAST_DAY}\n"
                                   f"rollups = {1 if rollups else 0}\n")
    return path / "shard-0.csv"


def stats(cluster):
    return get(cluster.port, "/stats").json()["data"]["queries"]


def random_queries(n, seed):
    rng = random.Random(seed)
    out = []
    for _ in range(n):
        unit, most = rng.choice([("day", 120), ("week", 20), ("mweek", 20), ("month", 5), ("hour", 900)])
        tz = rng.choice(["UTC", "America/New_York", "Europe/London", "-8", "Australia/Sydney"])
        ref = rng.randrange(START - 10 * 86400, END + 10 * 86400)
        out.append(f"/breakdown?ns=u&key=k&sub=c&unit={unit}&units={rng.randint(1, most)}"
                   f"&unit_reference_ts={ref}&timezone={tz}&limit={rng.randint(1, 5)}")
    return out


def test_rollups_answer_exactly_as_hours(procs, tmp_path):
    """The same records served twice: with `rollups = 1` (a day and a month record missing,
    so the API falls back to their hours) and with `rollups = 0` (hours only). 300 random
    breakdowns in zones with DST answer identically, and /stats shows each plan."""
    text = records(step=3, scale=1, drop=("c2", "c1u", "c44"))
    with_rollups = write_generation(tmp_path / "a" / "gen", "g-rollups", text, True)
    hours_only = write_generation(tmp_path / "b" / "gen", "g-hours", text, False)
    (tmp_path / "a").mkdir(exist_ok=True)
    a = Cluster(procs, tmp_path / "a", [[with_rollups]])
    b = Cluster(procs, tmp_path / "b", [[hours_only]])
    queries = random_queries(300, 7)
    queries.append("/breakdown?ns=u&key=k&sub=c&unit=month&units=6&unit_reference_ts=1335000000")
    for q in queries:
        ra, rb = a.query(q), b.query(q)
        assert ra.status == 200 and rb.status == 200, (q, ra, rb)
        assert ra.json()["data"] == rb.json()["data"], q
    whole = a.query(queries[-1]).json()["data"]["breakdown"]
    assert {e["subkey"] for e in whole} == {"US", "JP", "DE", "http://www.facebook.com/"}
    sa, sb = stats(a)["plan"], stats(b)["plan"]
    assert sa["month_records"] > 0 and sa["day_records"] > 0 and sa["rollup_fallbacks"] > 0, sa
    assert sb["month_records"] == 0 and sb["day_records"] == 0 and sb["rollup_fallbacks"] == 0, sb
    assert sa["hour_records"] * 3 < sb["hour_records"], (sa, sb)
    # Every range is at or before W (2012-04-30): realtime was asked only before W was known.
    assert sa["realtime_skipped"] >= len(queries) - 2, sa
    assert stats(a)["archive_cache"]["hits"] > 0


def test_a_published_generation_reads_rollups_that_answer_as_its_hours(procs, tmp_path):
    """import + merge + publish, then the API: the generation says `rollups = 1`, and a
    rollup stands for its hours only when every hour it summed is an hour of the total
    record. Hour 01 of 2013-02-18 has subtotals (US +5, JP -5) but its total nets to 0, so
    the total record has no column for it and the hour path never reads it: the day rollup
    of 2013-02-18 and the month rollup of February summed it, and are read as their hours
    instead. u|m's rollups summed only indexed hours and are read as they are."""
    lines = ["u|k.d2i0,3", "c.u|k.US.d2i0,3",
             "c.u|k.US.d2i1,5", "c.u|k.JP.d2i1,-5",         # total 0: no column
             "u|k.d2i2,4", "c.u|k.US.d2i2,4",
             "u|k.d2i3,2", "c.u|k.US.d2i3,1", "c.u|k.JP.d2i3,1",
             "u|k.d2j0,1", "c.u|k.US.d2j0,1", "u|k.d2j1,1", "c.u|k.US.d2j1,1",
             "u|k.d310,1", "c.u|k.US.d310,1"]                # W = 2013-03-01: February is whole
    lines += [f"{k}.d2{d}{h},2" for d in "ij" for h in "01" for k in ("u|m", "c.u|m.US")]
    work = publish_archive(tmp_path, lines, 1)
    assert "rollups = 1" in (work / "current" / "manifest").read_text().splitlines()
    merged = (work / "current" / "shard-0.csv").read_bytes()
    assert check_rollups(merged) == 6, merged
    assert b"c.u|k.d2,.i:15 .j:3 JP:-4 US:15\n" in merged, merged   # summed hour 01
    assert b"c.u|k.d2i,.i:15 JP:-4 US:13\n" in merged, merged
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])

    def breakdown(key, unit, ts):
        r = cluster.query(f"/breakdown?ns=u&key={key}&sub=c&unit={unit}&units=1&unit_reference_ts={ts}")
        assert r.status == 200, r
        return {e["subkey"]: e["value"] for e in r.json()["data"]["breakdown"]}

    # The last hour of February, of 2013-02-18 and of 2013-02-19: whole UTC periods.
    feb, feb18, feb19 = 1362092400, 1361228400, 1361314800
    # The hour path's answers: hour 01 of 2013-02-18 is not counted.
    assert breakdown("k", "month", feb) == {"US": 10, "JP": 1}
    assert breakdown("k", "day", feb18) == {"US": 8, "JP": 1}
    plan = stats(cluster)["plan"]
    assert plan["rollup_fallbacks"] == 2 and plan["month_records"] == 0 and plan["day_records"] == 0, plan
    assert breakdown("k", "day", feb19) == {"US": 2}
    assert breakdown("m", "month", feb) == {"US": 8}
    after = stats(cluster)["plan"]
    assert after["rollup_fallbacks"] == 2 and after["month_records"] == 1 and after["day_records"] == 1, after


def test_a_range_after_the_watermark_asks_only_realtime(procs, tmp_path):
    text = records(step=24, scale=1)
    db = write_generation(tmp_path / "gen", "g1", text, True)
    cluster = Cluster(procs, tmp_path, [[db]])
    now = int(time.time())
    hour = ymdh(now // 3600 * 3600)
    cluster.incr_realtime([f"u|k.{hour},4", f"c.u|k.US.{hour},4"])
    q = "/series?ns=u&key=k&unit=hour&units=2"

    def skipped():
        # A query learns W and confirms the generation; the next one within the second skips
        # the archive (a loaded machine may take longer: then it asks, and the next skips).
        before = stats(cluster)["plan"]
        r = cluster.query(q)
        assert r.status == 200, r
        assert sum(v["value"] for v in r.json()["data"]["series"]) == 4
        after = stats(cluster)["plan"]
        return (after["archive_skipped"] == before["archive_skipped"] + 1 and
                after["archive_requests"] == before["archive_requests"])
    wait_until(skipped)


def two_generations(procs, tmp_path, rollups, api_options):
    """Generations g1 and g2 = 2 x g1 of the same records, `live` a symlink to g1's
    directory, and a cluster whose archive serves live/shard-0.csv."""
    g1 = write_generation(tmp_path / "g1", "g1", records(step=1, scale=1), rollups)
    g2 = write_generation(tmp_path / "g2", "g2", records(step=1, scale=2), rollups)
    live = tmp_path / "live"
    os.symlink(g1.parent, live)
    return g1, g2, live, Cluster(procs, tmp_path, [[live / "shard-0.csv"]], api_options=api_options)


def test_a_repeated_query_has_its_archive_answer_confirmed_not_sent_again(procs, tmp_path):
    """Without a lease (archive-lease-ms = 0) a query's first archive request (a breakdown's
    index, a series' total record) always goes to the archive; asked again, it names the
    generation whose answer the API holds (If-None-Match) and the archive confirms it with a
    304 instead of sending the record again. After a publish the same request gets the new
    generation's record: the answer changes, nothing stale is confirmed. With the default
    lease the repeats are answered without asking the archive at all."""
    g1, g2, live, cluster = two_generations(procs, tmp_path, True, "archive-lease-ms = 0\n")
    archive_port = cluster.archive[0][0][1]
    queries = ["/breakdown?ns=u&key=k&sub=c&unit=day&units=30&unit_reference_ts=1334900000&timezone=America/New_York",
               "/series?ns=u&key=k&unit=day&units=30&unit_reference_ts=1334900000&timezone=America/New_York",
               "/series?ns=u&key=absent&unit=day&units=3&unit_reference_ts=1334900000"]

    def answers():
        out = []
        for q in queries:
            r = cluster.query(q)
            assert r.status == 200, (q, r)
            out.append(r.json()["data"])
        return out

    def revalidated():
        return (stats(cluster)["plan"]["archive_revalidated"],
                get(archive_port, "/stats").json()["data"]["not_modified"])

    # The series reads the breakdown's index record (`u|k`): its request is already a repeat.
    first = answers()
    assert revalidated() == (1, 1)
    assert answers() == first
    assert revalidated() == (4, 4)

    flip(live, g2.parent, archive_port)
    second = answers()
    assert second[:2] == [doubled(first[0]), doubled(first[1])] and second[2] == first[2]
    assert revalidated() == (5, 5)   # the index read once under g2, then confirmed
    assert answers() == second
    assert revalidated() == (8, 8)

    (tmp_path / "leased").mkdir()
    leased = Cluster(procs, tmp_path / "leased", [[live / "shard-0.csv"]])
    assert [leased.query(q).json()["data"] for q in queries] == second
    before = stats(leased)["plan"]
    assert [leased.query(q).json()["data"] for q in queries] == second
    after = stats(leased)["plan"]
    if after["archive_requests"] == before["archive_requests"]:   # within the lease
        # the three first requests and the breakdown's records, all from what the API holds
        assert after["archive_cache_answers"] == before["archive_cache_answers"] + 4, (before, after)


def doubled(data):
    """An answer with every count doubled: generation g2's answer from g1's."""
    if isinstance(data, dict):
        return {k: (v * 2 if k in ("value", "total") and isinstance(v, int) else doubled(v))
                for k, v in data.items()}
    if isinstance(data, list):
        return [doubled(v) for v in data]
    return data


def test_a_publish_under_load_never_mixes_generations(procs, tmp_path):
    """Two generations with the same last day whose every count differs (g2 = 2 x g1): while
    the archive flips between them under query load, every /breakdown and /series answer is
    exactly one generation's — never a sum from both. A breakdown reads its index and
    several /mget batches; the 40 queries' ranges differ, so the cache misses and the API
    meets each new generation mid-query."""
    # A short lease: the API asks the archive again every 200 ms, and meets each generation.
    g1, g2, live, cluster = two_generations(procs, tmp_path, False, "archive-lease-ms = 200\n")
    archive_port = cluster.archive[0][0][1]
    rng = random.Random(3)
    queries = []
    for _ in range(20):
        ref = rng.randrange(START + 70 * 86400, END)
        queries.append(f"/breakdown?ns=u&key=k&sub=c&unit=day&units={rng.randint(40, 70)}"
                       f"&unit_reference_ts={ref}&limit=10&timezone=America/New_York")
        queries.append(f"/series?ns=u&key=k&unit=hour&units={rng.randint(100, 900)}&unit_reference_ts={ref}")
    expected = []
    for q in queries:  # each answer under g1, before any publish
        r = cluster.query(q)
        assert r.status == 200, r
        data = r.json()["data"]
        assert doubled(data) != data
        expected.append((data, doubled(data)))

    stop = threading.Event()
    answers, problems = [0, 0], []

    def load(offset):
        i = offset
        while not stop.is_set():
            q = queries[i % len(queries)]
            i += 1
            r = cluster.query(q)
            if r.status == 503 and r.json()["status_txt"] == "ARCHIVE_UNAVAILABLE":
                continue  # a breakdown whose generation changed three times: named, allowed
            data = r.json()["data"] if r.status == 200 else None
            if data not in expected[queries.index(q)]:
                problems.append((q, r.status, r.body[:300]))
            answers[0 if data == expected[queries.index(q)][0] else 1] += 1

    threads = [threading.Thread(target=load, args=(k * 7,)) for k in range(3)]
    for t in threads:
        t.start()
    try:
        for n in range(30):
            flip(live, (g2 if n % 2 == 0 else g1).parent, archive_port)
            # load between publishes, not a synchronisation; irregular, so the lease's ends
            # do not keep meeting the same generation
            time.sleep(rng.uniform(0.05, 0.35))
    finally:
        stop.set()
        for t in threads:
            t.join()
    assert not problems, problems[:3]
    assert answers[0] > 0 and answers[1] > 0, answers  # both generations answered
    assert stats(cluster)["archive_cache"]["generation_changes"] >= 2


def flip(live, target, archive_port):
    """Points the `live` symlink at target atomically and reloads the archive."""
    tmp = live.parent / "live.new"
    os.symlink(target, tmp)
    os.replace(tmp, live)
    r = get(archive_port, "/reload")
    assert r.status == 200, r
