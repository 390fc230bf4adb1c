"""One owner per day (docs/architecture.md#one-owner-per-day): whatever state the cluster is
in — bulk-loaded through yesterday, a day closed by hand, a clock that jumped — the nightly
brings it to its steady state, and every acknowledged increment ends up counted exactly once.

Real binaries on one clock file (tests/clock_cluster.py).
"""
import calendar

from clock_cluster import ClockCluster, day_text
from harness import post
from ymdh import encode as ymdh_of

T = calendar.timegm((2026, 3, 10, 0, 0, 0)) // 86400  # "today" at the start of each test
HOUR = 3600


def ts(day, hour):
    return day * 86400 + hour * HOUR


def history(first_day, last_day, users=("jehiah", "mike"), value=5):
    """Realtime-format records: each user gets `value` at 10:00 of every day."""
    return [f"u|{u}.{ymdh_of(ts(d, 10))},{value}" for d in range(first_day, last_day + 1) for u in users]


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
