"""clickatron-api, safe retries (docs/api-write.md#safe-retries): /incr with an
Idempotency-Key, retried with the same key and request, answers as the first did and counts
nothing again — also across a kill -9 and restart of the API, and while the first is still
waiting for its fsync; a reused key with other events is 422; bad keys are 400; the index
expires keys after 24 h (on the test clock) and refuses new keys when full.

Every test runs the real binaries on 127.0.0.1: an API and two realtime shards (the Cluster
of test_api_write.py), and checks the counts where they land, in the realtime shards.
"""
import http.client
import os
import subprocess
import threading
import urllib.parse

import pytest

from harness import binary, get, post, request, wait_until
from test_api_write import Cluster, can_mount_tmpfs, error, now

KEY = "Idempotency-Key"
REPLAYED = "idempotent-replayed"
DAY = 86400


class KeyedCluster(Cluster):
    """The write tests' cluster, with an environment and extra config lines for the API."""

    def __init__(self, procs, tmp_path, env=None, config="", **kw):
        self.env = env
        self.extra_config = config
        super().__init__(procs, tmp_path, **kw)

    def write_config(self, rt_ports, sync="batch"):
        super().write_config(rt_ports, sync)
        with open(self.config, "a") as f:
            f.write(self.extra_config)

    def start_api(self):
        self.api = self.procs.start("clickatron-api", ["--config", self.config], ready_port=self.port, env=self.env)

    def keyed_get(self, idempotency_key, /, **params):
        return get(self.port, "/incr?" + urllib.parse.urlencode(params, doseq=True), headers={KEY: idempotency_key})

    def keyed_post(self, idempotency_key, body):
        return post(self.port, "/incr", body, headers={KEY: idempotency_key})

    def idempotency(self):
        return self.stats()["idempotency"]


class Clock:
    """The API's wall clock (CLICKATRON_CLOCK_FILE, base/wall_clock.h), written atomically."""

    def __init__(self, tmp_path, t):
        self.path = os.path.join(str(tmp_path), "clock")
        self.set(t)

    def set(self, t):
        self.t = t
        with open(self.path + ".tmp", "w") as f:
            f.write(f"{t}\n")
        os.replace(self.path + ".tmp", self.path)

    def env(self):
        return dict(os.environ, CLICKATRON_CLOCK_FILE=self.path)

    def move_api_to(self, c, t):
        """Sets the clock and waits until the API reads it (its /stats shows the time)."""
        self.set(t)
        wait_until(lambda: c.idempotency()["clock"] == t, what=f"the API's clock at {t}")


def accepted(r, n, replayed):
    assert r.status == 200, r
    assert r.json() == {"status_code": 200, "status_txt": "OK", "data": {"accepted": n}}, r
    assert r.headers.get(REPLAYED) == ("true" if replayed else None), r.headers


def test_a_retry_answers_as_the_first_and_counts_once(procs, tmp_path):
    c = KeyedCluster(procs, tmp_path)
    ts = now()
    first = c.keyed_get("get-1", ns="u", key="g", ts=ts, sub="c:US")
    accepted(first, 1, replayed=False)
    again = c.keyed_get("get-1", ns="u", key="g", ts=ts, sub="c:US")
    accepted(again, 1, replayed=True)
    assert again.body == first.body
    body = "".join(f"ns=u&key=p{i % 2}&value={i + 1}&ts={ts}\n" for i in range(3))
    accepted(c.keyed_post("post-1", body), 3, replayed=False)
    for _ in range(3):
        accepted(c.keyed_post("post-1", body), 3, replayed=True)
    # The sf-string form of the header names the same key.
    accepted(c.keyed_post('"post-1"', body), 3, replayed=True)
    # Without the header nothing changes: the same request counts again.
    accepted(c.incr(ns="u", key="g", ts=ts, sub="c:US"), 1, replayed=False)
    c.wait_drained()
    assert c.total("u", "g", ts) == 2
    assert c.subtotal("c", "u", "g", "US", ts) == 2
    assert c.total("u", "p0", ts) == 1 + 3 and c.total("u", "p1", ts) == 2
    s = c.stats()
    assert s["incr"]["accepted_events"] == 1 + 3 + 1
    assert s["idempotency"]["replayed_requests"] == 5
    assert s["idempotency"]["keys"] == 2
    assert s["idempotency"]["window_seconds"] == DAY
    # The stamp is an annotation of the record, not sent to the shards.
    assert s["delivered_records"] == 2 + 3 + 2
    assert all(sh["skipped_records"] == 0 for sh in s["realtime"])
    # The oplog record carries the key, the events and the digest.
    dump = subprocess.run([binary("clickatron-oplog"), "dump", c.oplog_dir], capture_output=True, check=True).stdout
    stamps = [line.split(b"\\n")[-2].split() for line in dump.splitlines() if b"!idempotency" in line]
    assert [stamp[2] for stamp in stamps] == [b"1", b"3"]
    assert [stamp[4] for stamp in stamps] == [b"get-1", b"post-1"]


def test_get_and_post_forms_of_the_same_events_are_one_request(procs, tmp_path):
    c = KeyedCluster(procs, tmp_path)
    ts = now()
    query = f"ns=u&key=f&ts={ts}&sub=c:FR"
    accepted(get(c.port, "/incr?" + query, headers={KEY: "k1"}), 1, replayed=False)
    accepted(post(c.port, "/incr", query + "\n", headers={KEY: "k1"}), 1, replayed=True)
    accepted(post(c.port, "/incr", query + "\r\n", headers={KEY: "k1"}), 1, replayed=True)
    accepted(post(c.port, "/incr", query, headers={KEY: "k1"}), 1, replayed=True)
    accepted(post(c.port, "/incr?" + query, headers={KEY: "k1"}), 1, replayed=True)  # a body-less POST
    c.wait_drained()
    assert c.total("u", "f", ts) == 1
    assert c.subtotal("c", "u", "f", "FR", ts) == 1


def test_a_reused_key_with_other_events_is_422_and_counts_nothing(procs, tmp_path):
    c = KeyedCluster(procs, tmp_path)
    ts = now()
    accepted(c.keyed_get("k", ns="u", key="a", ts=ts), 1, replayed=False)
    r = c.keyed_get("k", ns="u", key="b", ts=ts)
    error(r, 422, "IDEMPOTENCY_KEY_REUSED", "Idempotency-Key 'k' was used ")
    assert "a key names one request" in r.json()["message"]
    assert REPLAYED not in r.headers
    # The same events in another order, or another value, are another request.
    error(c.keyed_get("k", key="a", ns="u", ts=ts), 422, "IDEMPOTENCY_KEY_REUSED")
    error(c.keyed_post("k", f"ns=u&key=a&ts={ts}\nns=u&key=a&ts={ts}\n"), 422, "IDEMPOTENCY_KEY_REUSED")
    accepted(c.keyed_get("k", ns="u", key="a", ts=ts), 1, replayed=True)
    c.wait_drained()
    assert c.total("u", "a", ts) == 1
    assert c.total("u", "b", ts) is None
    s = c.stats()
    assert s["incr"]["rejected"]["IDEMPOTENCY_KEY_REUSED"] == 3
    assert s["incr"]["accepted_events"] == 1


def raw_incr(port, path, headers):
    """GET with headers given as (name, value) pairs, repeats and bytes allowed."""
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    try:
        conn.putrequest("GET", path)
        for name, value in headers:
            conn.putheader(name, value)
        conn.endheaders()
        r = conn.getresponse()
        return r.status, r.read()
    finally:
        conn.close()


def test_bad_keys_are_400_and_a_refused_first_stored_nothing(procs, tmp_path):
    c = KeyedCluster(procs, tmp_path)
    ts = now()
    path = f"/incr?ns=u&key=bad&ts={ts}"
    rule = "a key is 1-255 bytes of visible ASCII other than '\"' and '\\'"
    for value, message in [("", "Idempotency-Key is empty; " + rule), ('""', "Idempotency-Key is empty"),
                           ("k" * 256, "Idempotency-Key is 256 bytes long"),
                           ("two words", "Idempotency-Key byte 4 is 0x20"),
                           (b"caf\xc3\xa9", "Idempotency-Key byte 4 is 0xC3"),
                           ('a"b', "Idempotency-Key byte 2 is 0x22"), ("a\\b", "Idempotency-Key byte 2 is 0x5C")]:
        error(get(c.port, path, headers={KEY: value}), 400, "INVALID_IDEMPOTENCY_KEY", message)
    status, body = raw_incr(c.port, path, [(KEY, "one"), (KEY, "two")])
    assert status == 400 and b"Idempotency-Key is given twice" in body, body
    accepted(c.keyed_get("k" * 255, ns="u", key="long", ts=ts), 1, replayed=False)
    # A first attempt refused stored nothing: the retry is evaluated afresh.
    error(c.keyed_get("r", ns="u", key="retried", ts=12), 400, "TS_TOO_OLD")
    error(c.keyed_post("r", f"ns=u&key=retried&ts={ts}\nns=u&key=retried&ts=x\n"), 400, "INVALID_ARG_TS")
    accepted(c.keyed_get("r", ns="u", key="retried", ts=ts), 1, replayed=False)
    accepted(c.keyed_get("r", ns="u", key="retried", ts=ts), 1, replayed=True)
    c.wait_drained()
    assert c.total("u", "bad", ts) is None
    assert c.total("u", "long", ts) == 1
    assert c.total("u", "retried", ts) == 1
    assert c.stats()["incr"]["rejected"]["INVALID_IDEMPOTENCY_KEY"] == 8


def test_a_retry_after_kill9_and_restart_answers_the_same_and_counts_once(procs, tmp_path):
    c = KeyedCluster(procs, tmp_path)
    ts = now()
    body = "".join(f"ns=u&key=k{i % 3}&value={i + 1}&ts={ts}&sub=c:JP\n" for i in range(40))
    firsts = [c.keyed_post(f"batch-{b}", body) for b in range(5)]
    first_get = c.keyed_get("single", ns="u", key="one", ts=ts)
    c.api.kill9()  # right after the answers: most records are not delivered yet
    c.start_api()
    assert c.idempotency()["restored_keys"] == 6
    for b in range(5):
        r = c.keyed_post(f"batch-{b}", body)
        accepted(r, 40, replayed=True)
        assert r.body == firsts[b].body
    r = c.keyed_get("single", ns="u", key="one", ts=ts)
    accepted(r, 1, replayed=True)
    assert r.body == first_get.body
    error(c.keyed_get("single", ns="u", key="two", ts=ts), 422, "IDEMPOTENCY_KEY_REUSED")
    c.wait_drained()
    for j in range(3):
        assert c.total("u", f"k{j}", ts) == 5 * sum(i + 1 for i in range(40) if i % 3 == j)
    assert c.subtotal("c", "u", "k0", "JP", ts) == c.total("u", "k0", ts)
    assert c.total("u", "one", ts) == 1 and c.total("u", "two", ts) is None


def test_concurrent_duplicates_wait_for_the_first_and_count_once(procs, tmp_path):
    """The first request's fsync is held (tests/faults/hold_fsync.c on the oplog's segment
    files), so its duplicates arrive while it is in flight: they wait and get its answer; a
    different request with the key is refused at once; nothing is counted twice."""
    hold = tmp_path / "hold-fsync"
    held = tmp_path / "hold-fsync.held"
    env = dict(os.environ, LD_PRELOAD=binary("libclickatron_hold_fsync.so"), CLICKATRON_HOLD_FSYNC=str(hold),
               CLICKATRON_HOLD_FSYNC_SUFFIX=".log",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    c = KeyedCluster(procs, tmp_path, env=env)
    ts = now()
    body = f"ns=u&key=c&ts={ts}\nns=u&key=c&value=2&ts={ts}\n"
    hold.touch()
    answers = [None] * 5

    def send(i):
        answers[i] = c.keyed_post("same", body)

    threads = [threading.Thread(target=send, args=(0,))]
    threads[0].start()
    wait_until(held.exists, what="the first request's fsync to be held")
    wait_until(lambda: c.stats()["incr"]["pending_requests"] == 1, what="the first request in flight")
    for i in range(1, 5):
        threads.append(threading.Thread(target=send, args=(i,)))
        threads[i].start()
    wait_until(lambda: c.idempotency()["waited_requests"] == 4, what="four duplicates waiting")
    error(c.keyed_post("same", body + f"ns=u&key=c&ts={ts}\n"), 422, "IDEMPOTENCY_KEY_REUSED")
    assert all(a is None for a in answers)
    hold.unlink()
    for t in threads:
        t.join(timeout=20)
    accepted(answers[0], 2, replayed=False)
    for a in answers[1:]:
        accepted(a, 2, replayed=True)
    accepted(c.keyed_post("same", body), 2, replayed=True)
    c.wait_drained()
    assert c.total("u", "c", ts) == 3
    s = c.stats()
    assert s["incr"]["accepted_requests"] == 1
    assert s["idempotency"]["replayed_requests"] == 1 and s["idempotency"]["waited_requests"] == 4


def test_keys_expire_after_24_hours_on_the_api_clock(procs, tmp_path):
    t0 = now()
    clock = Clock(tmp_path, t0)
    c = KeyedCluster(procs, tmp_path, env=clock.env())
    accepted(c.keyed_get("day", ns="u", key="e", ts=t0), 1, replayed=False)
    clock.move_api_to(c, t0 + DAY - 1)
    accepted(c.keyed_get("day", ns="u", key="e", ts=t0), 1, replayed=True)
    clock.move_api_to(c, t0 + DAY)
    assert c.idempotency()["keys"] == 0 and c.idempotency()["expired_keys"] == 1
    accepted(c.keyed_get("day", ns="u", key="e", ts=t0), 1, replayed=False)  # a new request now
    # The window holds across restarts: the index is rebuilt from the oplog by the same clock,
    # the second stamp only (the first is past it). A retry is answered as its first was,
    # though ts=t0 is now too old for a new request.
    t1 = t0 + DAY
    c.api.kill9()
    clock.set(t1 + DAY - 1)
    c.start_api()
    assert c.idempotency()["restored_keys"] == 1
    accepted(c.keyed_get("day", ns="u", key="e", ts=t0), 1, replayed=True)
    c.api.kill9()
    clock.set(t1 + DAY)
    c.start_api()
    assert c.idempotency()["restored_keys"] == 0
    error(c.keyed_get("day", ns="u", key="e", ts=t0), 400, "TS_TOO_OLD")  # evaluated afresh
    c.wait_drained()
    assert c.total("u", "e", t0) == 2


def test_a_full_index_refuses_new_keys_until_old_ones_expire(procs, tmp_path):
    t0 = now()
    clock = Clock(tmp_path, t0)
    c = KeyedCluster(procs, tmp_path, env=clock.env(), config="idempotency-mb = 1\n", sync="none")
    key = "x" * 250
    n = 0
    while True:
        r = c.keyed_get(f"{key}{n:05d}", ns="u", key="full", ts=t0)
        if r.status != 200:
            break
        n += 1
        assert n < 10000, "the index never filled up"
    error(r, 503, "IDEMPOTENCY_INDEX_FULL", "idempotency-mb (1 MiB)")
    s = c.idempotency()
    assert s["keys"] == n and s["max_bytes"] == 1 << 20
    assert s["bytes"] <= s["max_bytes"] < s["bytes"] + s["bytes"] // n
    # Nothing within the window was forgotten; requests without a key go on.
    accepted(c.keyed_get(f"{key}{0:05d}", ns="u", key="full", ts=t0), 1, replayed=True)
    accepted(c.incr(ns="u", key="full", ts=t0), 1, replayed=False)
    clock.move_api_to(c, t0 + DAY)
    accepted(c.keyed_get(f"{key}{n:05d}", ns="u", key="full", ts=t0), 1, replayed=False)
    assert c.idempotency()["keys"] == 1
    c.wait_drained()
    assert c.total("u", "full", t0) == n + 2


def test_a_first_refused_503_stored_nothing_and_its_waiters_get_the_same(procs, tmp_path):
    """On a full oplog disk the first request of a key and the duplicate waiting for it are both
    refused 503 (nothing stored); once space is back the retry is a new request, counted once."""
    mnt = os.path.join(str(tmp_path), "small")
    ok, why = can_mount_tmpfs(mnt)
    if not ok:
        pytest.skip(f"cannot mount a small tmpfs for the oplog here ({why.strip()})")
    hold = tmp_path / "hold-fsync"
    held = tmp_path / "hold-fsync.held"
    env = dict(os.environ, LD_PRELOAD=binary("libclickatron_hold_fsync.so"), CLICKATRON_HOLD_FSYNC=str(hold),
               CLICKATRON_HOLD_FSYNC_SUFFIX=".log",
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    try:
        c = KeyedCluster(procs, tmp_path, env=env, oplog_dir=os.path.join(mnt, "oplog"))
        ts = now()
        # Incompressible lookup values, so the record cannot fit in what is left of a page.
        body = "".join(f"ns=u&key=d&ts={ts}&sub=r:{os.urandom(1000).hex()}\n" for i in range(50))
        answers = {}

        def send(name):
            answers[name] = c.keyed_post("disk", body)

        # An unkeyed request's fsync is held; the keyed one queues behind it, its duplicate waits.
        hold.touch()
        before = threading.Thread(target=lambda: answers.setdefault("before", c.incr(ns="u", key="before", ts=ts)))
        before.start()
        wait_until(held.exists, what="the fsync to be held")
        first = threading.Thread(target=send, args=("first",))
        first.start()
        wait_until(lambda: c.stats()["incr"]["pending_requests"] == 2, what="the keyed request in flight")
        dup = threading.Thread(target=send, args=("dup",))
        dup.start()
        wait_until(lambda: c.idempotency()["waited_requests"] == 1, what="the duplicate waiting")
        filler = os.path.join(mnt, "filler")
        fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
        try:
            while True:
                os.write(fd, b"x" * 4096)
        except OSError:
            pass
        finally:
            os.close(fd)
        hold.unlink()
        for t in (before, first, dup):
            t.join(timeout=20)
        accepted(answers["before"], 1, replayed=False)
        error(answers["first"], 503, "OPLOG_UNAVAILABLE", "No space left on device")
        error(answers["dup"], 503, "OPLOG_UNAVAILABLE", "No space left on device")
        assert c.idempotency()["keys"] == 0
        os.unlink(filler)
        accepted(c.keyed_post("disk", body), 50, replayed=False)
        accepted(c.keyed_post("disk", body), 50, replayed=True)
        c.wait_drained()
        assert c.total("u", "d", ts) == 50
        assert c.api.terminate() == 0
    finally:
        subprocess.run(["umount", "-l", mnt])
