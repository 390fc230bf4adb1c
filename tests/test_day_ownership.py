"""One owner per day (docs/architecture.md#one-owner-per-day): whatever state the cluster is
in — bulk-loaded through yesterday, a day closed by hand, a clock that jumped — the nightly
brings it to its steady state, and every acknowledged increment ends up counted exactly once.

Real binaries on one clock file (tests/clock_cluster.py).
"""
import calendar
import os
import shutil
import subprocess

from clock_cluster import ClockCluster
from formats import day_text, ymdh
from harness import post, run, wait_until

T = calendar.timegm((2026, 3, 10, 0, 0, 0)) // 86400  # "today" at the start of each test
HOUR = 3600


def ts(day, hour):
    return day * 86400 + hour * HOUR


def history(first_day, last_day, users=("jehiah", "mike"), value=5):
    """Realtime-format records: each user gets `value` at 10:00 of every day."""
    return [f"u|{u}.{ymdh(ts(d, 10))},{value}" for d in range(first_day, last_day + 1) for u in users]


def hour_value(c, key, t):
    got = c.series_hours(0, "u", key, t, 1)
    assert got is not None, f"/series for {key} at {t} did not answer 200"
    return got[t]


def night(c, day):
    """The nightly at 00:30 UTC of `day`; asserts it exits 0."""
    c.set_time(ts(day, 0) + 30 * 60)
    r = c.nightly()
    assert r.returncode == 0, f"nightly of {day_text(day)} exited {r.returncode}:\n{r.stderr.decode()}"
    return r


def test_bulk_loaded_through_yesterday_then_two_nights(procs, tmp_path):
    """The first bullet of the day-ownership issue, replayed: ops/demo's state (history
    through yesterday), increments for yesterday and today, then two nights in a row: both
    exit 0 and every acknowledged increment is in the answers."""
    c = ClockCluster(tmp_path, procs, realtime=2, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    r = c.bulk_load(history(T - 5, T - 1))
    assert r.returncode == 0, r.stderr.decode()
    assert c.manifest()["last_day"] == day_text(T - 1)
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))

    # Yesterday is the archive's now: an increment for it is late data, merged by the next
    # night; today's goes to realtime and is counted at once.
    assert c.incr(0, "u", "jehiah", ts(T - 1, 15), value=7).status == 200
    assert c.incr(0, "u", "jehiah", ts(T, 9), value=3).status == 200
    assert c.incr(0, "u", "mike", ts(T + 1, 1), value=4).status == 200
    c.wait_delivered()
    assert hour_value(c, "jehiah", ts(T - 1, 10)) == 5
    assert hour_value(c, "jehiah", ts(T, 9)) == 3

    night(c, T + 1)
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    assert hour_value(c, "jehiah", ts(T - 1, 10)) == 5
    assert hour_value(c, "jehiah", ts(T, 9)) == 3
    assert hour_value(c, "mike", ts(T + 1, 1)) == 4

    # The second day: yesterday (T) is still realtime's, today is T + 1.
    assert c.incr(0, "u", "jehiah", ts(T, 11), value=2).status == 200
    assert c.incr(0, "u", "jehiah", ts(T + 1, 8), value=6).status == 200
    assert c.incr(0, "u", "mike", ts(T + 2, 3), value=1).status == 200
    c.wait_delivered()
    night(c, T + 2)
    night(c, T + 3)
    expected = {("jehiah", ts(T - 1, 10)): 5, ("jehiah", ts(T - 1, 15)): 7, ("jehiah", ts(T, 9)): 3,
                ("jehiah", ts(T, 11)): 2, ("jehiah", ts(T + 1, 8)): 6, ("mike", ts(T + 1, 1)): 4,
                ("mike", ts(T + 2, 3)): 1, ("mike", ts(T - 3, 10)): 5}
    assert {k: hour_value(c, *k) for k in expected} == expected
    # The archive owns every day through the day before yesterday, and no increment waits.
    assert c.manifest()["last_day"] == day_text(T + 1)
    for shard in c.api_stats(0)["realtime"]:
        assert not shard["waiting_slot_release"], shard


def test_a_day_closed_by_hand_with_data_is_archived(procs, tmp_path):
    """A day at or before the archive's watermark that a realtime shard holds with data (the
    shard was not told of the publish, or an operator closed it by hand) is exported and
    added to the archive by the next nightly, then released: nothing stays stranded."""
    c = ClockCluster(tmp_path, procs, realtime=1, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.start_api_all()
    # Increments for yesterday land in realtime before any history is published.
    assert c.incr(0, "u", "jehiah", ts(T - 1, 15), value=7).status == 200
    c.wait_delivered()
    # History through yesterday is published without the cluster config: the shard is not
    # told, and still holds yesterday open. Then someone closes it by hand.
    c.bulk_load(history(T - 3, T - 1), publish=False)
    c.must("publish", "--work", c.work)
    c.start_archive_all()
    assert post(c.rt_ports[0], f"/close?day={day_text(T - 1)}").status == 200

    night(c, T + 1)
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    assert hour_value(c, "jehiah", ts(T - 1, 10)) == 5
    slots = {s["day"]: s["state"] for s in c.rt_stats(0)["slots"] if s["day"]}
    assert slots.get(day_text(T - 1)) == "released", slots
    night(c, T + 2)
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7


def test_a_replaced_shard_adds_what_it_took_for_an_owned_day(procs, tmp_path):
    """A realtime host lost with its disk, replaced by the guide's procedure
    (docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host: the API stopped, a
    new shard on an empty data directory — a new ring —, the oplog replayed with
    --skip-through the archive's last day). The new shard then takes an increment for a day
    the archive comes to own without telling it; the next nightly closes the day there and
    adds that part. Nothing the old shard exported is counted again."""
    c = ClockCluster(tmp_path, procs, realtime=1, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 2))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    assert c.incr(0, "u", "jehiah", ts(T - 1, 15), value=7).status == 200
    assert c.incr(0, "u", "jehiah", ts(T, 10), value=4).status == 200
    c.wait_delivered()
    night(c, T + 1)  # archives T - 1 from the old shard
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    old_ring = c.rt_stats(0)["ring"]

    c.kill9("realtime-0")
    c.stop("api-0")
    shutil.rmtree(os.path.join(c.tmp, "rt0"))
    os.makedirs(os.path.join(c.tmp, "rt0"))
    c.start_realtime(0)
    assert c.rt_stats(0)["ring"] != old_ring
    r = run("clickatron-oplog", ["replay", c.oplog_dir(0), "--cursor", "realtime-0", "--skip-through",
                                 day_text(T - 1)])
    assert r.returncode == 0, r.stderr.decode()
    c.start_api(0)
    c.wait_delivered()
    assert hour_value(c, "jehiah", ts(T, 10)) == 4  # replayed to the new shard
    # The archive is made to own T by a bulk load of another key, without the cluster config:
    # the new shard is not told, and holds T open with jehiah's 4.
    c.bulk_load([f"u|other.{ymdh(ts(T, 3))},1"], publish=False)
    c.must("publish", "--work", c.work)
    assert c.manifest()["last_day"] == day_text(T)
    night(c, T + 2)
    assert hour_value(c, "jehiah", ts(T, 10)) == 4
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    assert hour_value(c, "other", ts(T, 3)) == 1
    night(c, T + 3)  # idempotent: nothing is added twice
    assert hour_value(c, "jehiah", ts(T, 10)) == 4
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7


def test_a_clock_that_jumped_five_days(procs, tmp_path):
    """The clock jumps five days forward: new days' increments wait for their slots without
    holding back the others, and the next nightly archives every day, releasing as it goes."""
    c = ClockCluster(tmp_path, procs, realtime=2, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 2))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    sent = {}
    for day in (T - 1, T, T + 1):
        assert c.incr(0, "u", "jehiah", ts(day, 5), value=day - T + 10).status == 200
        sent[ts(day, 5)] = day - T + 10
    c.wait_delivered()
    c.set_time(ts(T + 5, 12))
    for day in (T + 4, T + 5, T + 6):
        assert c.incr(0, "u", "jehiah", ts(day, 6), value=day - T).status == 200
        sent[ts(day, 6)] = day - T
    night(c, T + 6)
    c.wait_delivered()
    # Today's and tomorrow's are counted at once; the day before yesterday's (T + 4), which
    # waited behind its slot until the night released it, was closed by the same night: late
    # data, counted by the next one.
    assert hour_value(c, "jehiah", ts(T + 5, 6)) == 5
    assert hour_value(c, "jehiah", ts(T + 6, 6)) == 6
    assert c.manifest()["last_day"] == day_text(T + 4)
    night(c, T + 7)
    assert {t: hour_value(c, "jehiah", t) for t in sent} == sent


def test_publish_refuses_to_own_a_day_realtime_holds_unmerged(procs, tmp_path):
    """History imported onto a running cluster, covering a day realtime has increments for:
    publish closes the day on every shard, then refuses naming the nightly, which adds
    realtime's part and publishes. Every increment counted once."""
    c = ClockCluster(tmp_path, procs, realtime=2, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 4, T - 3))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    for user in ("jehiah", "mike", "ann", "bo"):
        assert c.incr(0, "u", user, ts(T - 1, 15), value=3).status == 200
    c.wait_delivered()
    r = c.bulk_load(history(T - 2, T - 1, users=("zed",)))
    assert r.returncode == 1
    err = r.stderr.decode()
    assert f"refusing to publish through {day_text(T - 1)}: realtime holds {day_text(T - 1)}@" in err, err
    assert "run clickatron-rebuild nightly" in err
    assert c.manifest()["last_day"] == day_text(T - 3)
    # Queries still count them (realtime still owns the day).
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 3
    r = c.nightly()
    assert r.returncode == 0, r.stderr.decode()
    assert c.manifest()["last_day"] == day_text(T - 1)
    for user in ("jehiah", "mike", "ann", "bo"):
        assert hour_value(c, user, ts(T - 1, 15)) == 3
    assert hour_value(c, "zed", ts(T - 1, 10)) == 5


def test_a_shard_down_at_night_is_named_and_the_next_run_converges(procs, tmp_path):
    c = ClockCluster(tmp_path, procs, realtime=2, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 2))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    assert c.incr(0, "u", "jehiah", ts(T, 8), value=2).status == 200
    c.wait_delivered()
    c.stop("realtime-1")
    c.set_time(ts(T + 2, 0) + 1800)
    r = c.nightly()
    assert r.returncode == 1
    assert f"realtime shard 1 (127.0.0.1:{c.rt_ports[1]})" in r.stderr.decode(), r.stderr.decode()
    c.start_realtime(1)
    night(c, T + 2)
    assert c.manifest()["last_day"] == day_text(T)
    assert hour_value(c, "jehiah", ts(T, 8)) == 2


def test_a_work_dir_rebuilt_from_a_generation_keeps_what_it_merged(procs, tmp_path):
    """The rebuild host's work directory is lost while a day is archived but not yet
    released (a night that failed at release). Rebuilt from the live generation with its
    manifest (ops/archive-to-history | import --manifest), the next nightly releases the day
    without exporting it again: nothing counted twice."""
    c = ClockCluster(tmp_path, procs, realtime=1, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 2))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    assert c.incr(0, "u", "jehiah", ts(T - 1, 9), value=6).status == 200
    c.wait_delivered()
    # The night archives T - 1 but its release is refused (the archive replica is down
    # when release checks it).
    c.set_time(ts(T + 1, 0) + 1800)
    for step in (("export", "--day", day_text(T - 1)), ("segment", "--day", day_text(T - 1))):
        c.must(step[0], "--work", c.work, "--config", c.config, *step[1:])
    c.must("merge", "--work", c.work, "--config", c.config)
    c.must("publish", "--work", c.work, "--config", c.config)
    assert c.manifest()["last_day"] == day_text(T - 1)
    slots = {s["day"]: s["state"] for s in c.rt_stats(0)["slots"] if s["day"]}
    assert slots[day_text(T - 1)] == "closed"
    # The work directory is lost; a new one is made from the live generation.
    gen = os.path.realpath(os.path.join(c.work, "current"))
    history_file = os.path.join(c.tmp, "from-archive.csv")
    with open(history_file, "wb") as out:
        subprocess.run([os.path.join(os.path.dirname(__file__), "..", "ops", "archive-to-history"),
                        os.path.join(gen, "shard-0.csv")], stdout=out, check=True)
    new_work = os.path.join(c.tmp, "work2")
    c.must("import", "--work", new_work, "--input", history_file, "--archive-shards", "1",
           "--manifest", os.path.join(gen, "manifest"))
    c.must("merge", "--work", new_work, "--archive-shards", "1")
    os.rename(c.work, c.work + ".lost")
    os.rename(new_work, c.work)
    c.must("publish", "--work", c.work, "--config", c.config)
    night(c, T + 1)
    assert hour_value(c, "jehiah", ts(T - 1, 9)) == 6
    slots = {s["day"]: s["state"] for s in c.rt_stats(0)["slots"] if s["day"]}
    assert slots[day_text(T - 1)] == "released"


def test_a_shard_on_a_new_disk_gets_nothing_until_the_replay(procs, tmp_path):
    """A realtime host comes back on an empty disk while the API runs: the API's streams name
    the data directory they delivered to, the new one refuses them (412 RING_CHANGED) and the
    API holds that shard's delivery — re-sending what the old disk had would apply archived
    days a second time — until the guide's replay procedure, after which every increment is
    counted once."""
    c = ClockCluster(tmp_path, procs, realtime=1, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 2))
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    assert c.incr(0, "u", "jehiah", ts(T - 1, 15), value=7).status == 200
    assert c.incr(0, "u", "jehiah", ts(T, 10), value=4).status == 200
    c.wait_delivered()
    night(c, T + 1)
    old_ring = c.rt_stats(0)["ring"]

    c.kill9("realtime-0")
    shutil.rmtree(os.path.join(c.tmp, "rt0"))
    os.makedirs(os.path.join(c.tmp, "rt0"))
    c.start_realtime(0)
    assert c.incr(0, "u", "jehiah", ts(T + 1, 2), value=2).status == 200
    shard = wait_until(lambda: (lambda s: s if s["ring_changed"] else None)(c.api_stats(0)["realtime"][0]),
                       what="the API holding the shard on a new disk")
    assert "RING_CHANGED" in shard["ring_message"] and old_ring in shard["ring_message"], shard
    assert all(s["records"] == 0 for s in c.rt_stats(0)["slots"]), c.rt_stats(0)["slots"]
    assert c.rt_stats(0)["counters"]["refused_ring"] >= 1

    c.stop("api-0")
    r = run("clickatron-oplog", ["replay", c.oplog_dir(0), "--cursor", "realtime-0", "--skip-through",
                                 day_text(T - 1)])
    assert r.returncode == 0, r.stderr.decode()
    c.start_api(0)
    c.wait_delivered()
    assert not c.api_stats(0)["realtime"][0]["ring_changed"]
    night(c, T + 2)
    night(c, T + 3)
    expected = {ts(T - 1, 15): 7, ts(T, 10): 4, ts(T + 1, 2): 2}
    assert {t: hour_value(c, "jehiah", t) for t in expected} == expected


def test_late_data_of_an_api_started_over_is_merged(procs, tmp_path):
    """An API host replaced with a new disk (its oplog directory, late store included, made
    anew) at the same address: the archive's mark for that address is the last late id it
    merged from the old store, and the new store's ids start above it, so its late data is
    merged too (before, its ids restarted at 1 and the nightly skipped them for good)."""
    c = ClockCluster(tmp_path, procs, realtime=1, archive=1, apis=1)
    c.set_time(ts(T, 12))
    c.start_realtime_all()
    c.bulk_load(history(T - 3, T - 1))  # the archive owns yesterday: its increments are late
    c.start_archive_all()
    c.start_api_all()
    c.set_time(ts(T, 12))
    assert c.incr(0, "u", "jehiah", ts(T - 1, 15), value=7).status == 200
    c.wait_delivered()
    night(c, T + 1)
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    assert int(c.manifest()["late"].split()[1]) > 0

    c.kill9("api-0")
    shutil.rmtree(c.oplog_dir(0))
    c.start_api(0)
    # History for today, published with the cluster config: the archive owns today, and the
    # new API's increment for it is late data in its new store.
    r = c.bulk_load([f"u|other.{ymdh(ts(T, 3))},1"])
    assert r.returncode == 0, r.stderr.decode()
    assert c.incr(0, "u", "jehiah", ts(T, 9), value=5).status == 200
    c.wait_delivered()
    assert c.api_stats(0)["late"]["entries"] == 1
    night(c, T + 2)
    assert hour_value(c, "jehiah", ts(T, 9)) == 5
    assert hour_value(c, "jehiah", ts(T - 1, 15)) == 7
    assert c.api_stats(0)["late"]["entries"] == 0
