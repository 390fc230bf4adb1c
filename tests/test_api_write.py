"""clickatron-api, write path (docs/api-write.md): /incr validation, the
oplog, delivery to the realtime shards, and the faults — a shard down, kill -9 of the API
or of a shard, a full disk.

Every test runs the real binaries on 127.0.0.1: an API and two realtime shards.
"""
import os
import shutil
import subprocess
import threading
import time
import urllib.parse

import pytest
import requests

from formats import day_text, footer, key_hash, shard_of, stored, ymdh
from harness import SENDER, free_port, get, post, request, run, wait_until

SHARDS = 2


def now():
    return int(time.time())


def today():
    return now() // 86400


def q(text):
    return urllib.parse.quote(text, safe="")


class Cluster:
    """An API and its realtime shards, each on a free port with its own directory."""

    def __init__(self, procs, tmp_path, shards=SHARDS, sync="batch", oplog_dir=None, rt_sync="200ms"):
        self.procs = procs
        self.tmp = tmp_path
        self.rt_sync = rt_sync
        self.rt_ports = [free_port() for _ in range(shards)]
        self.rt_dirs = [os.path.join(str(tmp_path), f"rt{k}") for k in range(shards)]
        self.rt_procs = [None] * shards
        for k in range(shards):
            os.makedirs(self.rt_dirs[k])
            self.start_realtime(k)
        self.port = free_port()
        self.oplog_dir = oplog_dir or os.path.join(str(tmp_path), "oplog")
        self.config = os.path.join(str(tmp_path), "cluster.conf")
        self.write_config(self.rt_ports, sync)
        self.api = None
        self.start_api()

    def write_config(self, rt_ports, sync="batch"):
        with open(self.config, "w") as f:
            f.write(f"port = {self.port}\n")
            for p in rt_ports:
                f.write(f"realtime = 127.0.0.1:{p}\n")
            f.write("archive = 127.0.0.1:1\n")
            f.write(f"oplog-dir = {self.oplog_dir}\noplog-sync = {sync}\nnode-id = api-1\n")

    def start_realtime(self, k):
        self.rt_procs[k] = self.procs.start(
            "clickatron-realtime",
            ["--data-dir", self.rt_dirs[k], "--port", self.rt_ports[k], "--sync-interval", self.rt_sync],
            ready_port=self.rt_ports[k])

    def start_api(self):
        self.api = self.procs.start("clickatron-api", ["--config", self.config], ready_port=self.port)

    def incr(self, **params):
        return get(self.port, "/incr?" + urllib.parse.urlencode(params, doseq=True))

    def batch(self, lines):
        return post(self.port, "/incr", "".join(line + "\n" for line in lines))

    def stats(self):
        r = get(self.port, "/stats")
        assert r.status == 200, r
        return r.json()["data"]

    def drained(self):
        s = self.stats()
        return all(sh["backlog_records"] == 0 and sh["state"] == "idle" for sh in s["realtime"])

    def wait_drained(self, timeout=60):
        wait_until(self.drained, timeout=timeout, what="delivery backlog 0")

    def rt_get(self, k, key):
        r = get(self.rt_ports[k], "/get?key=" + q(key))
        assert r.status in (200, 404), r
        return r.text.rstrip("\n") if r.status == 200 else None

    def value(self, key, shard_key):
        v = self.rt_get(shard_of(shard_key, len(self.rt_ports)), key)
        return None if v is None else (v if key.startswith("_l|") else int(v))

    def total(self, ns, key, ts):
        k = stored(key)
        return self.value(f"{ns}|{k}.{ymdh(ts)}", f"{ns}|{k}")

    def subtotal(self, subns, ns, key, subkey, ts):
        k = stored(key)
        return self.value(f"{subns}.{ns}|{k}.{stored(subkey)}.{ymdh(ts)}", f"{ns}|{k}")


def error(r, code, txt, message=None):
    assert r.status == code, r
    body = r.json()
    assert body["status_code"] == code
    assert body["status_txt"] == txt, body
    assert body["data"] is None
    if message is not None:
        assert message in body["message"], body


def test_counts_land_on_the_right_shard_slot_and_lookups(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    url = "http://www.facebook.com/"
    r = c.incr(ns="u", key="jehiah", ts=ts, sub=["country:US", "ref:" + url])
    assert r.status == 200 and r.json() == {"status_code": 200, "status_txt": "OK", "data": {"accepted": 1}}
    assert c.incr(ns="u", key="jehiah", ts=ts, value=4, sub=["country:JP"]).status == 200
    yesterday = (today() - 1) * 86400 + 5
    assert c.incr(ns="u", key="jehiah", ts=yesterday, value=-2).status == 200
    long_key = "a key that is far too long to be literal"
    assert c.incr(ns="v", key=long_key, ts=ts, sub=["ref:" + url]).status == 200
    c.wait_drained()

    assert c.total("u", "jehiah", ts) == 5
    assert c.total("u", "jehiah", yesterday) == -2
    assert c.subtotal("country", "u", "jehiah", "US", ts) == 1
    assert c.subtotal("country", "u", "jehiah", "JP", ts) == 4
    assert c.subtotal("ref", "u", "jehiah", url, ts) == 1
    assert key_hash(url) == "h0aMB8AuNw4="
    assert c.value("_l|h0aMB8AuNw4=", "_l|h0aMB8AuNw4=") == url
    assert c.total("v", long_key, ts) == 1
    h = key_hash(long_key)
    assert c.value(f"_l|{h}", f"_l|{h}") == long_key
    # Nothing on the other shard.
    k = f"u|jehiah.{ymdh(ts)}"
    assert c.rt_get(1 - shard_of("u|jehiah", SHARDS), k) is None
    # The right slot: the day's export of the shard holds the records.
    home = shard_of("u|jehiah", SHARDS)
    exp = get(c.rt_ports[home], "/export?day=" + day_text(ts // 86400)).text
    assert f"{k},5\n" in exp
    exp_y = get(c.rt_ports[home], "/export?day=" + day_text(yesterday // 86400)).text
    assert f"u|jehiah.{ymdh(yesterday)},-2\n" in exp_y
    # The lookup is stored in the day of the event that carried it.
    lk = shard_of("_l|h0aMB8AuNw4=", SHARDS)
    assert "_l|h0aMB8AuNw4=," + url + "\n" in get(c.rt_ports[lk], "/export?day=" + day_text(ts // 86400)).text
    s = c.stats()
    assert s["incr"]["accepted_events"] == 4
    # The events' records: 4 + 2 + 1 + 4 (a lookup once per event that carries it).
    assert s["delivered_records"] == 11


def test_batches_are_summed_and_exact(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    lines = [f"ns=u&key=k{i % 7}&value={i + 1}&ts={ts}&sub=c:{'US' if i % 2 else 'FR'}" for i in range(200)]
    r = c.batch(lines)
    assert r.status == 200, r
    assert r.json()["data"] == {"accepted": 200}
    c.wait_drained()
    for j in range(7):
        want = sum(i + 1 for i in range(200) if i % 7 == j)
        assert c.total("u", f"k{j}", ts) == want
        us = sum(i + 1 for i in range(200) if i % 7 == j and i % 2)
        assert c.subtotal("c", "u", f"k{j}", "US", ts) == us
        assert c.subtotal("c", "u", f"k{j}", "FR", ts) == want - us
    # A POST with an empty body is one event from the query string; CRLF lines are fine.
    assert post(c.port, f"/incr?ns=u&key=single&ts={ts}").status == 200
    assert post(c.port, "/incr", f"ns=u&key=crlf&ts={ts}\r\nns=u&key=crlf&ts={ts}\r\n").json()["data"] == {"accepted": 2}
    c.wait_drained()
    assert c.total("u", "single", ts) == 1
    assert c.total("u", "crlf", ts) == 2


def test_one_bad_line_rejects_the_whole_batch(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    r = c.batch([f"ns=u&key=whole&ts={ts}", f"ns=u&key=whole&ts={ts}&value=2", "ns=u&key=whole&ts=12",
                 f"ns=u&key=whole&ts={ts}"])
    error(r, 400, "TS_TOO_OLD", "line 3: ts 12 is before yesterday")
    r = c.batch([f"ns=u&key=whole&ts={ts}", "ns=u"])
    error(r, 400, "MISSING_ARG_KEY", "line 2:")
    r = c.batch([f"ns=u&key=whole&ts={ts}", "", f"ns=u&key=whole&ts={ts}"])
    error(r, 400, "INVALID_ARG_BODY", "line 2: empty line")
    r = c.batch([f"ns=u&key=whole&ts={ts}&bogus=1"])
    error(r, 400, "UNKNOWN_ARG", "line 1: unknown parameter 'bogus'")
    r = c.batch([f"ns=u&key=%zz&ts={ts}"])
    error(r, 400, "INVALID_ARG_KEY", "line 1:")
    # Then a good one: only it counts.
    assert c.batch([f"ns=u&key=marker&ts={ts}"]).status == 200
    c.wait_drained()
    assert c.total("u", "marker", ts) == 1
    assert c.total("u", "whole", ts) is None
    s = c.stats()
    assert s["oplog"]["appends"] == 1
    assert s["incr"]["rejected"] == {"TS_TOO_OLD": 1, "MISSING_ARG_KEY": 1, "INVALID_ARG_BODY": 1,
                                     "UNKNOWN_ARG": 1, "INVALID_ARG_KEY": 1}


def test_every_error_of_incr(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    t = now()
    first = (today() - 1) * 86400
    last = (today() + 2) * 86400 - 1
    cases = [
        ("key=a", "MISSING_ARG_NS"),
        ("ns=u", "MISSING_ARG_KEY"),
        ("ns=_l&key=a", "INVALID_ARG_NS"),
        ("ns=u.v&key=a", "INVALID_ARG_NS"),
        ("ns=" + "n" * 17 + "&key=a", "INVALID_ARG_NS"),
        ("ns=u&key=" + "k" * 4097, "INVALID_ARG_KEY"),
        ("ns=u&key=%ZZ", "INVALID_ARG_KEY"),
        ("ns=u&key=a&value=0", "INVALID_ARG_VALUE"),
        ("ns=u&key=a&value=1.5", "INVALID_ARG_VALUE"),
        ("ns=u&key=a&value=9223372036854775808", "INVALID_ARG_VALUE"),
        ("ns=u&key=a&ts=soon", "INVALID_ARG_TS"),
        (f"ns=u&key=a&ts={first - 1}", "TS_TOO_OLD"),
        (f"ns=u&key=a&ts={last + 1}", "TS_IN_FUTURE"),
        ("ns=u&key=a&sub=nocolon", "INVALID_ARG_SUB"),
        ("ns=u&key=a&sub=c:US&sub=c:FR", "INVALID_ARG_SUB"),
        ("ns=u&key=a&sub=_x:US", "INVALID_ARG_SUB"),
        ("ns=u&key=a&vaule=3", "UNKNOWN_ARG"),
    ]
    for qs, txt in cases:
        error(get(c.port, "/incr?" + qs), 400, txt)
    # The edges of the window are accepted.
    assert get(c.port, f"/incr?ns=u&key=edge&ts={first}").status == 200
    assert get(c.port, f"/incr?ns=u&key=edge&ts={last}").status == 200
    # A body and a query string at once, and a method /incr does not take.
    error(post(c.port, "/incr?ns=u", "ns=u&key=a\n"), 400, "INVALID_ARG_BODY")
    error(request(c.port, "PUT", "/incr?ns=u&key=a"), 405, "METHOD_NOT_ALLOWED")
    s = c.stats()
    assert s["incr"]["accepted_events"] == 2
    assert sum(s["incr"]["rejected"].values()) == len(cases) + 2
    assert get(c.port, "/ping").text == "OK\n"
    c.wait_drained()
    assert c.total("u", "edge", first) == 1 and c.total("u", "edge", last) == 1


def test_shard_down_for_10s_then_every_count_arrives_once(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    keys = [f"d{i}" for i in range(40)]
    down = 1
    homes = {shard_of(f"u|{k}", SHARDS) for k in keys}
    assert down in homes and len(homes) > 1
    sent = {k: 0 for k in keys}

    def send_round(n):
        lines = []
        for i, k in enumerate(keys):
            v = (n + i) % 5 + 1
            sent[k] += v
            lines.append(f"ns=u&key={k}&value={v}&ts={ts}&sub=s:x")
        r = c.batch(lines)
        assert r.status == 200, r

    send_round(0)
    c.wait_drained()
    assert c.rt_procs[down].terminate() == 0
    stop = time.monotonic() + 10
    n = 1
    while time.monotonic() < stop:
        send_round(n)
        n += 1
        time.sleep(0.05)  # a steady load, not synchronisation
    s = c.stats()["realtime"]
    assert s[down]["backlog_records"] > 0 and s[down]["backlog_seconds"] > 5
    assert "connection refused" in s[down]["last_error"]
    assert s[1 - down]["backlog_records"] == 0 or s[1 - down]["state"] != "retrying"
    c.start_realtime(down)
    c.wait_drained()
    for k in keys:
        assert c.total("u", k, ts) == sent[k], k
        assert c.subtotal("s", "u", k, "x", ts) == sent[k], k


def load(c, stop, acked, unacked, prefix, ts, lines_per_batch=20):
    """Sends batches until stop is set; batch b's events are all on key f"{prefix}{b}" with
    values 1..lines, so its exact total is known: acked[b] or unacked[b] = total."""
    s = requests.Session()
    b = 0
    while not stop.is_set():
        b += 1
        key = f"{prefix}{b}"
        body = "".join(f"ns=u&key={key}&value={i + 1}&ts={ts}&sub=s:{i % 3}\n" for i in range(lines_per_batch))
        total = lines_per_batch * (lines_per_batch + 1) // 2
        try:
            r = s.post(f"http://127.0.0.1:{c.port}/incr", data=body, timeout=5)
            (acked if r.status_code == 200 else unacked)[key] = total
        except requests.RequestException:
            unacked[key] = total
            s = requests.Session()
            time.sleep(0.01)


def check_exact(c, acked, unacked, ts):
    for key, total in acked.items():
        assert c.total("u", key, ts) == total, key
        assert sum(c.subtotal("s", "u", key, str(i), ts) or 0 for i in range(3)) == total, key
    for key, total in unacked.items():
        assert c.total("u", key, ts) in (None, total), key  # never partial, never twice


def test_kill9_of_the_api_under_load_is_exact(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    acked, unacked = {}, {}
    stop = threading.Event()
    threads = [threading.Thread(target=load, args=(c, stop, acked, unacked, f"a{t}x", ts)) for t in range(3)]
    for t in threads:
        t.start()
    wait_until(lambda: len(acked) >= 150, timeout=60, what="150 acknowledged batches")
    c.api.kill9()
    time.sleep(0.2)  # the load keeps hitting a dead port for a moment
    stop.set()
    for t in threads:
        t.join()
    c.start_api()
    c.wait_drained()
    assert len(acked) >= 150
    check_exact(c, acked, unacked, ts)
    # Once more, now that the restarted API has re-sent its rounds: a second kill -9 right
    # after a restart (while re-sending) must not double anything either.
    acked2, unacked2 = {}, {}
    stop = threading.Event()
    th = threading.Thread(target=load, args=(c, stop, acked2, unacked2, "second", ts))
    th.start()
    wait_until(lambda: len(acked2) >= 30, timeout=60, what="30 more batches")
    c.api.kill9()
    stop.set()
    th.join()
    c.start_api()
    c.wait_drained()
    check_exact(c, acked, unacked, ts)
    check_exact(c, acked2, unacked2, ts)


def test_kill9_of_a_realtime_shard_under_load_is_exact(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    acked, unacked = {}, {}
    stop = threading.Event()
    th = threading.Thread(target=load, args=(c, stop, acked, unacked, "r", ts))
    th.start()
    wait_until(lambda: len(acked) >= 100, timeout=60, what="100 acknowledged batches")
    c.rt_procs[0].kill9()
    wait_until(lambda: len(acked) >= 150, timeout=60, what="150 acknowledged batches")
    c.start_realtime(0)
    wait_until(lambda: len(acked) >= 200, timeout=60, what="200 acknowledged batches")
    stop.set()
    th.join()
    c.wait_drained()
    check_exact(c, acked, unacked, ts)
    assert not unacked  # a shard's fault never reaches the clients
    assert c.stats()["realtime"][0]["rewinds"] >= 1


def test_silent_restart_of_a_shard_between_requests_loses_nothing(procs, tmp_path):
    # The shard acks a round, then dies before its next sync (60 s away) and comes back
    # while the API is idle: no request fails, the client just reconnects. The next round
    # must not be applied first (its seq would make the lost round's re-send a duplicate):
    # the shard refuses it as sent to another instance, and the sender rewinds.
    c = Cluster(procs, tmp_path, shards=1, rt_sync="60s")
    ts = now()
    r = c.batch([f"ns=u&key=lost&value={v}&ts={ts}" for v in (1, 2, 3)])
    assert r.status == 200, r
    wait_until(lambda: c.total("u", "lost", ts) == 6, timeout=10, what="first round applied")
    c.wait_drained()
    c.rt_procs[0].kill9()
    c.start_realtime(0)
    assert c.total("u", "lost", ts) is None  # acked, never synced: gone with the process
    r = c.batch([f"ns=u&key=after&value=5&ts={ts}"])
    assert r.status == 200, r
    wait_until(lambda: c.total("u", "after", ts) == 5, timeout=30, what="second round applied")
    c.wait_drained()
    assert c.total("u", "lost", ts) == 6
    assert c.total("u", "after", ts) == 5
    sh = c.stats()["realtime"][0]
    assert sh["shard_restarts"] == 1 and sh["rewinds"] >= 1, sh
    rt = get(c.rt_ports[0], "/stats").json()["data"]
    assert rt["counters"]["refused_instance"] == 1, rt["counters"]


def test_a_shard_that_restarts_while_the_api_stays_idle_gets_its_lost_rounds_again(procs, tmp_path):
    # The shard acks a round and dies before its next sync (60 s away); it comes back and
    # no other increment for it ever arrives. The stream keeps asking the shard's process
    # while rounds are in doubt (GET /ping, X-Realtime-Instance), notices the new instance
    # and re-sends them. (The cluster simulation's long run found this: an acknowledged
    # increment for tomorrow, lost by a shard killed right after its ack, never counted.)
    c = Cluster(procs, tmp_path, shards=1, rt_sync="60s")
    ts = now()
    assert c.batch([f"ns=u&key=idle&value={v}&ts={ts}" for v in (1, 2, 3)]).status == 200
    wait_until(lambda: c.total("u", "idle", ts) == 6, timeout=10, what="the round applied")
    c.wait_drained()
    c.rt_procs[0].kill9()
    c.start_realtime(0)
    wait_until(lambda: c.total("u", "idle", ts) == 6, timeout=30, what="the lost round re-sent without new traffic")
    sh = c.stats()["realtime"][0]
    assert sh["shard_restarts"] == 1 and sh["rewinds"] == 1 and sh["probes"] >= 1, sh
    rt = get(c.rt_ports[0], "/stats").json()["data"]
    assert rt["instance"] == next(s["instance"] for s in sh["slots"] if s["rounds_in_doubt"]), (rt, sh)


def test_rounds_stay_in_doubt_until_the_shard_has_synced_them(procs, tmp_path):
    # A shard that syncs every 60 s: the rounds it acked are not durable for a minute,
    # longer than any fixed lag the API could guess. The sender keeps them in doubt (its
    # saved cursor stays behind) until the shard says they are synced, so a kill -9 of
    # the shard any time before that still gets them re-sent.
    c = Cluster(procs, tmp_path, shards=1, rt_sync="60s")
    ts = now()
    assert c.batch([f"ns=u&key=slow&value={v}&ts={ts}" for v in (1, 2)]).status == 200
    c.wait_drained()
    assert c.batch([f"ns=u&key=slow2&value=7&ts={ts}"]).status == 200
    c.wait_drained()
    sh = c.stats()["realtime"][0]
    assert sh["shard_synced_seq"] == -1 and sh["rounds_in_doubt"] >= 1, sh
    # Well past the 3 s a fixed lag would have trusted: still in doubt (a span of time is
    # the point here, so this polls for 4 s rather than waiting for an event).
    deadline = time.monotonic() + 4
    while time.monotonic() < deadline:
        sh = c.stats()["realtime"][0]
        assert sh["saved_cursor"] < sh["cursor"], sh
        time.sleep(0.2)
    c.rt_procs[0].kill9()
    c.start_realtime(0)
    assert c.total("u", "slow", ts) is None
    assert c.batch([f"ns=u&key=slow3&value=1&ts={ts}"]).status == 200
    wait_until(lambda: c.total("u", "slow3", ts) == 1, timeout=30, what="third round applied")
    c.wait_drained()
    assert (c.total("u", "slow", ts), c.total("u", "slow2", ts)) == (3, 7)


def test_slot_not_released_waits_then_delivers(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=1)
    d = today()
    tomorrow_ts = (d + 1) * 86400 + 60
    old = d + 1 - 3  # shares tomorrow's slot; held open (unreleased) by another source
    old_key = f"u|seed.{ymdh(old * 86400)}"
    r = post(c.rt_ports[0], "/incr?source=seed&seq=1", f"{old_key},1\n", headers=SENDER)
    assert r.status == 200, r
    assert c.incr(ns="u", key="later", ts=tomorrow_ts, value=3).status == 200
    wait_until(lambda: c.stats()["realtime"][0]["waiting_slot_release"], what="SLOT_NOT_RELEASED reported")
    sh = c.stats()["realtime"][0]
    assert "SLOT_NOT_RELEASED" in sh["last_error"] and sh["backlog_records"] == 1
    assert "waiting for the nightly to release" in c.api.output()
    # Acceptance goes on meanwhile.
    assert c.incr(ns="u", key="today", ts=now()).status == 200
    assert post(c.rt_ports[0], "/close?day=" + day_text(old)).status == 200
    assert post(c.rt_ports[0], "/release?day=" + day_text(old)).status == 200
    c.wait_drained()
    assert c.total("u", "later", tomorrow_ts) == 3
    assert c.total("u", "today", now()) == 1
    assert not c.stats()["realtime"][0]["waiting_slot_release"]


def test_a_day_waiting_for_its_slot_does_not_delay_the_other_days(procs, tmp_path):
    # Tomorrow's slot still holds the day before yesterday, closed by the nightly but not yet
    # released: tomorrow's increments wait (503 SLOT_NOT_RELEASED). Today's and yesterday's,
    # accepted after them, are delivered meanwhile; the release lets tomorrow's through.
    c = Cluster(procs, tmp_path, shards=1)
    d = today()
    old = d - 2  # tomorrow's slot
    r = post(c.rt_ports[0], "/incr?source=seed&seq=1", f"u|seed.{ymdh(old * 86400)},1\n", headers=SENDER)
    assert r.status == 200, r
    assert post(c.rt_ports[0], "/close?day=" + day_text(old)).status == 200
    tomorrow, yesterday = (d + 1) * 86400 + 60, (d - 1) * 86400 + 60
    url = "http://example.com/tomorrow page"
    for i in range(5):
        assert c.batch([f"ns=u&key=later&value={i + 1}&ts={tomorrow}&sub=r:{q(url)}"] * 2).status == 200
    wait_until(lambda: c.stats()["realtime"][0]["waiting_slot_release"], what="SLOT_NOT_RELEASED reported")
    for i in range(5):
        assert c.batch([f"ns=u&key=now&value={i + 1}&ts={now()}&sub=r:{q(url)}",
                        f"ns=u&key=before&value=2&ts={yesterday}"]).status == 200
    wait_until(lambda: c.total("u", "now", now()) == 15 and c.total("u", "before", yesterday) == 10,
               what="today's and yesterday's increments delivered while tomorrow's wait")
    assert c.value(f"_l|{key_hash(url)}", f"_l|{key_hash(url)}") == url
    sh = c.stats()["realtime"][0]
    assert sh["waiting_slot_release"] and sh["backlog_records"] == 10, sh
    waiting = [s for s in sh["slots"] if s["waiting_slot_release"]]
    assert [s["slot"] for s in waiting] == [(d + 1) % 3] and waiting[0]["day"] == day_text(d + 1), sh
    assert all(s["backlog_records"] == 0 for s in sh["slots"] if s["slot"] != (d + 1) % 3), sh
    assert c.total("u", "later", tomorrow) is None
    assert post(c.rt_ports[0], "/release?day=" + day_text(old)).status == 200
    c.wait_drained()
    assert c.total("u", "later", tomorrow) == 30
    assert c.subtotal("r", "u", "later", url, tomorrow) == 30
    assert (c.total("u", "now", now()), c.total("u", "before", yesterday)) == (15, 10)
    assert c.subtotal("r", "u", "now", url, now()) == 15
    s = c.stats()
    assert s["delivered_records"] == 5 * 6 + 5 * 4, s  # oplog lines: totals, subtotals, lookups
    assert not s["realtime"][0]["waiting_slot_release"]


def late_text(lines):
    """The /late answer holding these `key,value` lines: key order, then the #END footer."""
    body = "".join(line + "\n" for line in sorted(lines, key=lambda l: l.split(",", 1)[0].encode()))
    return body + footer(body.encode()).decode()


def expire_day_on_shard(c, k, day):
    """Makes realtime shard k hold day+3 in day's slot, so that it answers day with 409
    DAY_EXPIRED (the slot moved on): what a day closed and released under a late sender meets."""
    r = post(c.rt_ports[k], f"/set?day={day_text(day + 3)}", "_l|AAAAAAAAAAA=,seed\n")
    assert r.status == 200, r


def test_late_delivery_is_kept_not_dropped(procs, tmp_path):
    # The old sender dropped a day part the shard refused as expired (DATA LOSS,
    # expired_records); now it goes to the late store and /late hands it to the nightly.
    c = Cluster(procs, tmp_path, shards=1)
    base = c.stats()["late"]["last_id"] + 1  # a new store's first id (api/late_store.h)
    d = today()
    yts = (d - 1) * 86400 + 60
    h = ymdh(yts)
    expire_day_on_shard(c, 0, d - 1)
    url = "http://example.com/a late page"
    assert c.batch([f"ns=u&key=gone&value=2&ts={yts}&sub=s:x",
                    f"ns=u&key=gone&value=3&ts={yts}&sub=s:y",
                    f"ns=u&key={q(url)}&ts={yts}",
                    f"ns=u&key=kept&ts={now()}"]).status == 200
    c.wait_drained()
    assert c.batch([f"ns=u&key=gone&value=10&ts={yts}"]).status == 200
    c.wait_drained()
    assert c.total("u", "kept", now()) == 1  # the rest of the round went on
    assert c.total("u", "gone", yts) is None
    s = c.stats()
    # Oplog lines: 2 + 2 + 2 (a total and its lookup) in the first part, 1 in the second.
    assert s["late_records"] == 7 and s["realtime"][0]["late_records"] == 7
    assert s["realtime"][0]["late_parts"] == 2
    assert "expired_records" not in s and "expired_records" not in s["realtime"][0]
    late = s["late"]
    assert (late["entries"], late["lines"], late["first_id"], late["last_id"]) == (2, 6, base, base + 1)
    assert late["oldest_pending_day"] == day_text(d - 1) and late["bytes"] > 0
    hk = key_hash(url)
    want = late_text([f"u|gone.{h},15", f"s.u|gone.x.{h},2", f"s.u|gone.y.{h},3",
                      f"u|{hk}.{h},1", f"_l|{hk},{url}"])
    r = get(c.port, "/late")
    assert r.status == 200 and r.text == want, r
    assert (r.headers["x-late-first"], r.headers["x-late-last"]) == (str(base), str(base + 1))
    assert "x-late-more" not in r.headers
    r = get(c.port, f"/late?after={base}")
    assert r.text == late_text([f"u|gone.{h},10"]) and r.headers["x-late-first"] == str(base + 1)
    out = c.api.output()
    assert "DATA LOSS" not in out
    assert f"late: realtime shard 0 (127.0.0.1:{c.rt_ports[0]}) refused day {day_text(d - 1)}" in out


def test_late_store_survives_restarts_and_release_without_double(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=1)
    base = c.stats()["late"]["last_id"] + 1  # a new store's first id (api/late_store.h)
    d = today()
    yts = (d - 1) * 86400 + 60
    h = ymdh(yts)
    expire_day_on_shard(c, 0, d - 1)
    # A round of late data only: no 200 ever tells the API the shard synced it, so it stays
    # in doubt and a kill -9 makes the restarted API send it again.
    assert c.batch([f"ns=u&key=twice&value=4&ts={yts}"]).status == 200
    c.wait_drained()
    want = late_text([f"u|twice.{h},4"])
    assert get(c.port, "/late").text == want
    assert c.stats()["realtime"][0]["rounds_in_doubt"] == 1
    c.api.kill9()
    c.start_api()
    c.wait_drained()
    s = c.stats()
    assert s["late"]["entries"] == 1 and s["late"]["duplicate_parts"] == 1
    assert s["realtime"][0]["late_records"] == 0
    r = get(c.port, "/late")
    assert r.text == want and r.headers["x-late-last"] == str(base)
    # Released: the entry is gone, its id is never reused, and the store still knows the part.
    r = post(c.port, f"/late/release?through={base}")
    assert r.status == 200, r
    assert r.json()["data"] == {"released_through": base, "released_entries": 1, "entries": 0, "last_id": base}
    r = get(c.port, f"/late?after={base}")
    assert r.text == late_text([]) and r.headers["x-late-last"] == str(base)
    c.api.kill9()
    c.start_api()
    c.wait_drained()
    s = c.stats()
    assert s["late"]["entries"] == 0 and s["late"]["duplicate_parts"] == 1 and s["late"]["last_id"] == base
    assert get(c.port, "/late").text == late_text([])
    # A new late part gets the next id.
    assert c.batch([f"ns=u&key=third&value=1&ts={yts}"]).status == 200
    c.wait_drained()
    r = get(c.port, f"/late?after={base}")
    assert r.text == late_text([f"u|third.{h},1"])
    assert (r.headers["x-late-first"], r.headers["x-late-last"]) == (str(base + 1), str(base + 1))


def test_closed_day_is_late_data_and_a_resent_part_a_duplicate(procs, tmp_path):
    # The realtime shard closes a day for the nightly (POST /close): a part of it sent after
    # that is late data (409 DAY_CLOSED, its refused /set's lookups kept with it); a part the
    # shard applied before the close and gets again (the API crashed with it in doubt) is a
    # duplicate (200), lookups and all, and not late.
    c = Cluster(procs, tmp_path, shards=1, rt_sync="60s")
    d = today()
    yts = (d - 1) * 86400 + 60
    h = ymdh(yts)
    early_url, late_url = "http://example.com/early page", "http://example.com/late page"
    assert c.batch([f"ns=u&key=early&value=2&ts={yts}&sub=r:{q(early_url)}"]).status == 200
    c.wait_drained()
    assert c.stats()["realtime"][0]["rounds_in_doubt"] == 1
    r = post(c.rt_ports[0], "/close?day=" + day_text(d - 1))
    assert r.status == 200, r
    c.api.kill9()
    c.start_api()
    c.wait_drained()
    s = c.stats()
    sh = s["realtime"][0]
    assert s["late"]["entries"] == 0 and sh["late_records"] == 0
    assert sh["duplicate_records"] == 2
    # The restarted API is a new sender: the shard made it wait for the old one's lease.
    assert sh["source_in_use_refusals"] >= 1 and not sh["source_in_use"]
    assert "SOURCE_IN_USE" in c.api.output()
    assert c.total("u", "early", yts) == 2
    assert c.batch([f"ns=u&key=late&value=5&ts={yts}&sub=r:{q(late_url)}"]).status == 200
    c.wait_drained()
    assert c.total("u", "late", yts) is None
    hk = key_hash(late_url)
    r = get(c.port, "/late")
    assert r.text == late_text([f"u|late.{h},5", f"r.u|late.{hk}.{h},5", f"_l|{hk},{late_url}"]), r
    assert f"refused day {day_text(d - 1)} (409 DAY_CLOSED): 3 record(s)" in c.api.output()


def test_a_torn_late_store_tail_is_cut_and_reported(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=1)
    d = today()
    yts = (d - 1) * 86400 + 60
    expire_day_on_shard(c, 0, d - 1)
    assert c.batch([f"ns=u&key=torn&value=6&ts={yts}"]).status == 200
    c.wait_drained()
    assert c.api.terminate() == 0
    path = os.path.join(c.oplog_dir, "late.log")
    whole = os.path.getsize(path)
    with open(path, "ab") as f:
        f.write(b"\x40\x00\x00\x00\x02\x00\x00")  # an append cut short by a crash
    c.start_api()
    assert os.path.getsize(path) == whole
    s = c.stats()
    assert s["late"]["recovery"] == f"cut a torn tail of 7 bytes at offset {whole} (frame cut short)"
    assert "late store recovery: cut a torn tail of 7 bytes" in c.api.output()
    assert get(c.port, "/late").text == late_text([f"u|torn.{ymdh(yts)},6"])


def test_late_endpoints_refuse_bad_requests(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=1)
    first = c.stats()["late"]["last_id"] + 1  # a new store's first id (api/late_store.h)
    error(get(c.port, "/late?after=x"), 400, "INVALID_ARG_AFTER", "after")
    error(get(c.port, "/late?after=-1"), 400, "INVALID_ARG_AFTER")
    error(get(c.port, "/late?after=1&after=2"), 400, "INVALID_ARG_AFTER", "given twice")
    error(get(c.port, "/late?from=1"), 400, "UNKNOWN_ARG", "from")
    error(get(c.port, f"/late?after={first + 2}"), 409, "LATE_ID_AHEAD", f"after={first + 2}")
    error(post(c.port, "/late"), 405, "METHOD_NOT_ALLOWED")
    error(post(c.port, "/late/release"), 400, "MISSING_ARG_THROUGH")
    error(post(c.port, "/late/release?through=z"), 400, "INVALID_ARG_THROUGH")
    error(post(c.port, "/late/release?through=1&x=2"), 400, "UNKNOWN_ARG")
    error(post(c.port, f"/late/release?through={first}"), 409, "LATE_ID_AHEAD", f"through={first}")
    error(get(c.port, "/late/release?through=0"), 405, "METHOD_NOT_ALLOWED")
    r = get(c.port, "/late")
    assert r.status == 200 and r.text == late_text([])
    assert (r.headers["x-late-first"], r.headers["x-late-last"]) == ("1", "0")  # after=0 and nothing after it
    r = post(c.port, "/late/release?through=0")
    assert r.json()["data"] == {"released_through": 0, "released_entries": 0, "entries": 0, "last_id": first - 1}


def test_two_api_lines_need_an_explicit_node_id(procs, tmp_path):
    rt = free_port()
    port = free_port()
    config = tmp_path / "cluster.conf"
    base = f"realtime = 127.0.0.1:{rt}\noplog-dir = {tmp_path}/oplog\nport = {port}\n"
    config.write_text(base + "api = 127.0.0.1:8000\napi = 127.0.0.1:8001\n")
    r = run("clickatron-api", ["--config", config], timeout=30)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert (f"--config {config}: 2 api lines (several API nodes) but no node-id: each API needs "
            "its own node-id") in r.stderr.decode()
    config.write_text(base + "api = 127.0.0.1:8000\napi = nohost\nnode-id = api-2\n")
    r = run("clickatron-api", ["--config", config], timeout=30)
    assert r.returncode == 2 and "api: 'nohost' is not host:port" in r.stderr.decode(), r.stderr
    # Given on the command line or in the file, node-id lets it start.
    config.write_text(base + "api = 127.0.0.1:8000\napi = 127.0.0.1:8001\n")
    api = procs.start("clickatron-api", ["--config", config, "--node-id", "api-2"], ready_port=port)
    assert get(port, "/stats").json()["data"]["node_id"] == "api-2"
    assert api.terminate() == 0
    # One api line: the default node-id is fine.
    config.write_text(base + "api = 127.0.0.1:8000\n")
    api = procs.start("clickatron-api", ["--config", config], ready_port=port)
    assert get(port, "/stats").json()["data"]["node_id"] == "api-1"


def test_changed_shard_list_is_refused_while_undelivered(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    assert c.rt_procs[1].terminate() == 0
    keys = [f"s{i}" for i in range(20)]
    assert c.batch([f"ns=u&key={k}&ts={ts}" for k in keys]).status == 200
    wait_until(lambda: c.stats()["realtime"][0]["backlog_records"] == 0, what="shard 0 drained")
    assert c.api.terminate() == 0
    # Three shards now, with shard 1's records undelivered: refused, naming the problem.
    extra = free_port()
    c.write_config(c.rt_ports + [extra])
    r = subprocess.run([os.path.join(os.environ.get("CLICKATRON_BIN", ""), "clickatron-api"), "--config", c.config],
                       capture_output=True, timeout=30)
    assert r.returncode != 0
    assert b"realtime shard list changed" in r.stderr and b"undelivered" in r.stderr, r.stderr
    # The old list again: it drains.
    c.write_config(c.rt_ports)
    c.start_realtime(1)
    c.start_api()
    c.wait_drained()
    for k in keys:
        assert c.total("u", k, ts) == 1
    assert c.api.terminate() == 0
    # Drained: the new list is taken, and new increments route by three shards.
    os.makedirs(os.path.join(str(tmp_path), "rt2"))
    c.rt_dirs.append(os.path.join(str(tmp_path), "rt2"))
    c.rt_ports.append(extra)
    c.rt_procs.append(None)
    c.start_realtime(2)
    c.write_config(c.rt_ports)
    c.start_api()
    assert "realtime shard list changed" in c.api.output()
    assert c.batch([f"ns=u&key={k}x&ts={ts}" for k in keys]).status == 200
    c.wait_drained()
    for k in keys:
        assert c.total("u", k + "x", ts) == 1


def test_fewer_shards_drop_their_cursors(procs, tmp_path):
    c = Cluster(procs, tmp_path, shards=3)
    ts = now()
    assert c.batch([f"ns=u&key=f{i}&ts={ts}" for i in range(30)]).status == 200
    c.wait_drained()
    assert c.api.terminate() == 0
    c.write_config(c.rt_ports[:2])
    c.start_api()
    assert "realtime shard list changed" in c.api.output()
    r = subprocess.run([os.path.join(os.environ.get("CLICKATRON_BIN", ""), "clickatron-oplog"), "cursors",
                        c.oplog_dir], capture_output=True, text=True, timeout=30)
    assert r.returncode == 0, r.stderr
    names = [line.split()[0] for line in r.stdout.splitlines() if line.startswith("realtime-")]
    assert names == [f"realtime-{k}.slot-{s}" for k in (0, 1) for s in range(3)], r.stdout  # shard 2's would pin retention
    assert not [f for f in os.listdir(c.oplog_dir) if f.startswith("delivery-realtime-2")]


def can_mount_tmpfs(path):
    os.makedirs(path, exist_ok=True)
    r = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", path], capture_output=True)
    return r.returncode == 0, r.stderr.decode()


def test_oplog_disk_full_gives_503_never_200(procs, tmp_path):
    mnt = os.path.join(str(tmp_path), "small")
    ok, why = can_mount_tmpfs(mnt)
    if not ok:
        pytest.skip(f"cannot mount a small tmpfs for the oplog here ({why.strip()})")
    try:
        oplog_dir = os.path.join(mnt, "oplog")
        c = Cluster(procs, tmp_path, oplog_dir=oplog_dir)
        ts = now()
        assert c.incr(ns="u", key="before", ts=ts).status == 200
        # Fill the disk, leaving a little room.
        filler = os.path.join(mnt, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        os.truncate(filler, os.path.getsize(filler) - 64 * 1024)
        acked, refused = {}, {}
        b = 0
        while len(refused) < 5:
            b += 1
            assert b < 2000, "the disk never filled up"
            key = f"full{b}"
            r = c.batch([f"ns=u&key={key}&ts={ts}&value={i + 1}" for i in range(50)])
            if r.status == 200:
                assert not refused, "a 200 after the disk was full"
                acked[key] = 50 * 51 // 2
            else:
                error(r, 503, "OPLOG_UNAVAILABLE", "No space left on device")
                refused[key] = 0
        s = c.stats()
        assert s["oplog"]["failed_records"] >= 5 and "No space left" in s["oplog"]["last_error"]
        assert s["incr"]["rejected"]["OPLOG_UNAVAILABLE"] >= 5
        # Space comes back: appends work again.
        os.unlink(filler)
        r = c.incr(ns="u", key="after", ts=ts)
        assert r.status == 200, r
        c.wait_drained()
        assert c.total("u", "before", ts) == 1 and c.total("u", "after", ts) == 1
        for key, total in acked.items():
            assert c.total("u", key, ts) == total
        for key in refused:
            assert c.total("u", key, ts) is None
        assert c.api.terminate() == 0
    finally:
        subprocess.run(["umount", "-l", mnt])


def test_stats_shape(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    assert c.incr(ns="u", key="s", ts=now()).status == 200
    c.wait_drained()
    s = c.stats()
    assert s["incr"]["accepted_events"] == 1
    o = s["oplog"]
    assert o["sync"] == "batch" and o["segments"] == 1 and o["bytes"] > 0 and o["syncs"] >= 1
    assert set(o["sync_latency_us"]) == {"p50", "p99", "max"}
    # Segment pre-allocation is reported; whether it happens depends on the disk's free space.
    assert isinstance(o["prepared_segments"], int) and isinstance(o["prepare_error"], str)
    assert len(s["realtime"]) == 2
    for k, sh in enumerate(s["realtime"]):
        assert sh["address"] == f"127.0.0.1:{c.rt_ports[k]}"
        assert sh["backlog_records"] == 0 and sh["backlog_seconds"] == 0
        assert sh["last_error"] == ""
        assert (sh["late_records"], sh["source_in_use"], sh["source_conflict"]) == (0, False, False)
    assert s["delivered_records"] == 1
    assert s["late_records"] == 0
    late = s["late"]
    assert late["last_id"] >= 1 << 20  # a new store's ids start at its creation's unix seconds << 20
    assert dict(late, last_id=0, bytes=0) == {"entries": 0, "lines": 0, "bytes": 0, "oldest_pending_day": None,
                                              "first_id": 0, "last_id": 0, "released_through": 0, "appended": 0,
                                              "duplicate_parts": 0, "recovery": ""}
    assert s["latency_us"]["/incr"]["count"] == 1
