"""clickatron-oplog replay end to end (docs/operations.md#replaying-an-oplog-after-losing-a-realtime-host): an API and two realtime shards, the real binaries.

Increments are delivered, everything stops, one shard's data dir is wiped (a lost host),
`clickatron-oplog replay` rewinds that shard's cursor, everything restarts: every total on
the wiped shard is exact again, and the other shard's totals are unchanged. Then a replay
for a shard that kept its data: nothing is counted twice (its high-water marks skip every
re-sent record, because without the rounds file the API sends them one record per batch).
Last, `--skip-through LAST_ARCHIVED_DAY`: the days the archive already holds are not sent
again, so they cannot come back as late data and be added to the archive a second time.
"""
import os
import shutil
import subprocess

from formats import day_text, shard_of
from harness import binary, get, post, wait_until
from test_api_write import SHARDS, Cluster, late_text, now, today

KEYS = [f"k{i}" for i in range(24)]
ROUNDS = 12


def send(c, ts):
    """ROUNDS batches (one oplog record each) over KEYS; returns the exact total per key."""
    totals = {k: 0 for k in KEYS}
    for n in range(ROUNDS):
        lines = []
        for i, k in enumerate(KEYS):
            v = (n * 7 + i) % 5 + 1
            totals[k] += v
            lines.append(f"ns=u&key={k}&value={v}&ts={ts}&sub=c:{'US' if (n + i) % 2 else 'FR'}")
        r = c.batch(lines)
        assert r.status == 200, r
    return totals


def totals_of(c, ts, keys):
    return {k: c.total("u", k, ts) for k in keys}


def subtotals_of(c, ts, keys):
    return {k: (c.subtotal("c", "u", k, "US", ts), c.subtotal("c", "u", k, "FR", ts)) for k in keys}


def replay(c, *args):
    return subprocess.run([binary("clickatron-oplog"), "replay", c.oplog_dir, *args],
                          capture_output=True, text=True, timeout=60)


def stop_all(c):
    assert c.api.terminate() == 0
    for p in c.rt_procs:
        assert p.terminate() == 0


def start_all(c):
    for k in range(len(c.rt_procs)):
        c.start_realtime(k)
    c.start_api()


def test_replay_refills_a_wiped_shard_exactly(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=2)
    ts = now()
    lost = 1
    on_lost = [k for k in KEYS if shard_of(f"u|{k}", SHARDS) == lost]
    on_kept = [k for k in KEYS if shard_of(f"u|{k}", SHARDS) != lost]
    assert on_lost and on_kept
    want = send(c, ts)
    c.wait_drained()
    assert totals_of(c, ts, KEYS) == want
    subtotals = subtotals_of(c, ts, KEYS)
    assert all(us + fr == want[k] for k, (us, fr) in subtotals.items())

    # Refused while the API has the oplog open, naming the lock; nothing changes.
    r = replay(c, "--cursor", f"realtime-{lost}")
    assert r.returncode == 1
    assert "replay refused" in r.stderr and "is in use by another process" in r.stderr, r.stderr
    assert f"{c.oplog_dir}/LOCK" in r.stderr

    stop_all(c)
    shutil.rmtree(c.rt_dirs[lost])  # the lost host: a replacement with an empty data dir
    os.makedirs(c.rt_dirs[lost])

    r = replay(c, "--cursor", "realtime-9")
    assert r.returncode == 1 and "no cursor named 'realtime-9'" in r.stderr, r.stderr
    r = replay(c, "--cursor", f"realtime-{lost}")
    assert r.returncode == 0, r.stderr
    # "realtime-K" names the shard's three delivery streams, one per ring slot.
    streams = [f"realtime-{lost}.slot-{s}" for s in range(3)]
    assert r.stdout == (
        "".join(f"cursor {name} {ROUNDS} -> 0\n" for name in streams) +
        f"re-send {ROUNDS} records (seq 1..{ROUNDS}) when the API next starts\n" +
        "".join(f"removed {c.oplog_dir}/delivery-{name}.rounds\n" for name in streams)), r.stdout

    start_all(c)
    wait_until(lambda: c.drained() and totals_of(c, ts, on_lost) == {k: want[k] for k in on_lost},
               timeout=60, what="the wiped shard's totals refilled")
    assert totals_of(c, ts, KEYS) == want
    assert subtotals_of(c, ts, KEYS) == subtotals
    assert "one per batch" in c.api.output()

    # New increments after the replay are counted once, on both shards.
    more = send(c, ts)
    c.wait_drained()
    assert totals_of(c, ts, KEYS) == {k: want[k] + more[k] for k in KEYS}

    # A replay for a shard that kept its data re-sends everything and changes nothing.
    stop_all(c)
    r = replay(c, "--cursor", f"realtime-{1 - lost}", "--from", "1")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith(f"cursor realtime-{1 - lost}.slot-0 {2 * ROUNDS} -> 0\n"), r.stdout
    start_all(c)
    c.wait_drained()
    s = c.stats()["realtime"][1 - lost]
    assert s["cursor"] == 2 * ROUNDS, s
    assert totals_of(c, ts, KEYS) == {k: want[k] + more[k] for k in KEYS}


def test_replay_skips_the_days_the_archive_already_holds(procs, tmp_path):
    # The archive holds every day <= its manifest's last_day. Re-sent to the replacement
    # shard, the lines of such a day met step 3's close of that day (409 DAY_CLOSED) and went
    # to the late store, which the nightly adds to the archive: counted twice. With
    # --skip-through the replay drops them; today's lines arrive exactly once.
    c = Cluster(procs, tmp_path, shards=1)
    last_day = today() - 1
    old_ts, new_ts = last_day * 86400 + 3600, now()
    keys = KEYS[:6]
    want_new = {k: 0 for k in keys}
    for n in range(4):
        lines = []
        for i, k in enumerate(keys):
            lines.append(f"ns=u&key={k}&value={n + 1}&ts={old_ts}")
            lines.append(f"ns=u&key={k}&value={i + 1}&ts={new_ts}")
            want_new[k] += i + 1
        assert c.batch(lines).status == 200
    c.wait_drained()
    assert totals_of(c, new_ts, keys) == want_new
    # The nightly archives last_day (its close is what matters here).
    assert post(c.rt_ports[0], f"/close?day={day_text(last_day)}").status == 200

    stop_all(c)
    shutil.rmtree(c.rt_dirs[0])
    os.makedirs(c.rt_dirs[0])
    r = replay(c, "--cursor", "realtime-0", "--skip-through", "2026-02-30")
    assert r.returncode == 2 and "--skip-through" in r.stderr, r.stderr
    r = replay(c, "--cursor", "realtime-0", "--skip-through", day_text(last_day))
    assert r.returncode == 0, r.stderr
    streams = [f"realtime-0.slot-{s}" for s in range(3)]
    assert r.stdout == (
        "".join(f"cursor {name} 4 -> 0\n" for name in streams) +
        "re-send 4 records (seq 1..4) when the API next starts\n" +
        "".join(f"skip lines of days <= {day_text(last_day)} in records <= 4 "
                f"(written to {c.oplog_dir}/replay-skip-{name})\n" for name in streams) +
        "".join(f"removed {c.oplog_dir}/delivery-{name}.rounds\n" for name in streams)), r.stdout
    c.start_realtime(0)
    # Step 3: the replacement shard closes the archived days before the API starts.
    assert post(c.rt_ports[0], f"/close?day={day_text(last_day)}").status == 200
    c.start_api()
    c.wait_drained()
    s = c.stats()
    assert s["realtime"][0]["late_records"] == 0 and s["late"]["entries"] == 0, s
    assert get(c.port, "/late").text == late_text([])
    assert totals_of(c, new_ts, keys) == want_new
    assert totals_of(c, old_ts, keys) == {k: None for k in keys}  # the archive answers for it

    # The rule covers the replayed records only: a late increment of an archived day accepted
    # after it is late data, as always, and a second replay without the option removes it.
    assert c.batch([f"ns=u&key={keys[0]}&value=9&ts={old_ts}"]).status == 200
    c.wait_drained()
    assert c.stats()["realtime"][0]["late_records"] == 1
    stop_all(c)
    r = replay(c, "--cursor", "realtime-0", "--from", "5")
    assert r.returncode == 0 and "skip lines" not in r.stdout, r.stdout
    assert not [f for f in os.listdir(c.oplog_dir) if f.startswith("replay-skip-")]
