"""An oplog directory of the one-stream layout (one delivery stream per realtime shard:
cursor realtime-K, DIR/delivery-realtime-K.rounds) upgraded in place to one stream per ring
slot (docs/api-write.md#upgrading-from-one-stream-per-shard): nothing lost, nothing doubled.

The old layout is made as the old binary left it when killed with kill -9 mid-delivery: its
saved cursor, its rounds file (the ends of the rounds it had cut, past the cursor) and, at
the realtime shards, those rounds applied as it sent them (one /set and one /incr per day,
source = node-id, seq = the round's end) — some whole, one cut after its first day, the last
not at all. The new binary must apply exactly what is missing — sending as the node-id, as
the old binary did (a directory without an identity file keeps it as its source).
"""
import os
import re

from formats import day_text
from harness import SENDER, post, run
from test_api_write import Cluster, now, today

NODE_ID = "api-1"


def unescape(text):
    """The payload of a `clickatron-oplog dump` line (oplog/inspect.h EscapePayload)."""
    return re.sub(r"\\(\\|n|r|t|x[0-9a-f]{2})",
                  lambda m: {"\\": "\\", "n": "\n", "r": "\r", "t": "\t"}.get(m.group(1)) or chr(int(m.group(1)[1:], 16)),
                  text)


def oplog_records(oplog_dir):
    r = run("clickatron-oplog", ["dump", oplog_dir], check=True)
    records = {}
    for line in r.stdout.decode().splitlines():
        seq, _, payload = line.split(" ", 2)
        records[int(seq)] = [l.split(" ", 2) for l in unescape(payload).splitlines()]
    return records


def send_old_round(c, records, shard, after, end, days=None):
    """What the old binary sent for round (after, end] to `shard`: per day, ascending, a
    /set of its lookups and an /incr of its counters with seq = end (only `days` of them)."""
    by_day = {}
    for seq in range(after + 1, end + 1):
        for k, day, line in records[seq]:
            if int(k) == shard:
                by_day.setdefault(int(day), []).append(line)
    for day in sorted(by_day)[:days]:
        lookups = [l for l in by_day[day] if l.startswith("_l|")]
        counters = [l for l in by_day[day] if not l.startswith("_l|")]
        if lookups:
            r = post(c.rt_ports[shard], f"/set?day={day_text(day)}", "".join(l + "\n" for l in lookups))
            assert r.status == 200, r
        if counters:
            r = post(c.rt_ports[shard], f"/incr?source={NODE_ID}&seq={end}", "".join(l + "\n" for l in counters),
                     headers=SENDER)
            assert r.status == 200, (day, r)


def test_a_one_stream_oplog_killed_mid_delivery_upgrades_exactly(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=2)
    for p in c.rt_procs:
        assert p.terminate() == 0
    d = today()
    days = {"y": (d - 1) * 86400 + 120, "t": now(), "m": (d + 1) * 86400 + 120}  # three slots
    want = {}
    url = "http://example.com/upgrade page"
    for b in range(12):
        lines = []
        for i in range(6):
            for tag, ts in days.items():
                key = f"up{i}"
                lines.append(f"ns=u&key={key}&value={b + i + 1}&ts={ts}&sub=r:{url}")
                want[(key, tag)] = want.get((key, tag), 0) + b + i + 1
        assert c.batch(lines).status == 200
    c.api.kill9()
    # The one-stream layout the old binary left: shard 0 had delivered and saved (0,3] and
    # sent (3,6], (6,9] and the first day of (9,12]; shard 1 had saved nothing and sent
    # (0,5] whole.
    for name in os.listdir(c.oplog_dir):
        if name.startswith("delivery-") or name in ("cursors", "identity"):
            os.unlink(os.path.join(c.oplog_dir, name))
    boot = open("/proc/sys/kernel/random/boot_id").read().strip()
    with open(os.path.join(c.oplog_dir, "cursors"), "w") as f:
        f.write("realtime-0 3\n")
    with open(os.path.join(c.oplog_dir, "delivery-realtime-0.rounds"), "w") as f:
        f.write(f"boot {boot}\n6\n9\n12\n")
    with open(os.path.join(c.oplog_dir, "delivery-realtime-1.rounds"), "w") as f:
        f.write(f"boot {boot}\n5\n12\n")
    records = oplog_records(c.oplog_dir)
    assert sorted(records) == list(range(1, 13))
    for k in range(2):
        c.start_realtime(k)
    for after, end, n in ((0, 3, None), (3, 6, None), (6, 9, None), (9, 12, 1)):
        send_old_round(c, records, 0, after, end, n)
    send_old_round(c, records, 1, 0, 5)

    assert not os.path.exists(os.path.join(c.oplog_dir, "identity"))  # from before identities
    c.start_api()
    out = c.api.output()
    # It keeps its node-id as source: the marks the old binary left are what deduplicate.
    assert "source=api-1\n" in open(os.path.join(c.oplog_dir, "identity")).read()
    assert "(a directory from before identities keeps its node-id as source)" in out, out
    assert "realtime shard 0: delivery upgraded to one stream per ring slot; each starts after seq 3" in out, out
    assert "realtime shard 1: delivery upgraded to one stream per ring slot; each starts after seq 0" in out, out
    c.wait_drained(timeout=60)
    for (key, tag), total in want.items():
        assert c.total("u", key, days[tag]) == total, (key, tag)
        assert c.subtotal("r", "u", key, url, days[tag]) == total, (key, tag)
    assert not [n for n in os.listdir(c.oplog_dir) if n in ("delivery-realtime-0.rounds", "delivery-realtime-1.rounds")]
    r = run("clickatron-oplog", ["cursors", c.oplog_dir], check=True)
    names = [line.split()[0] for line in r.stdout.decode().splitlines()[1:]]
    assert names == [f"realtime-{k}.slot-{s}" for k in range(2) for s in range(3)], names
    s = c.stats()
    assert s["backlog_records"] == 0 and s["late_records"] == 0, s
    # Every duplicate the shards skipped was a line the old binary had applied.
    assert sum(sh["duplicate_records"] for sh in s["realtime"]) > 0
