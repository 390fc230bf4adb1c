"""The source an API sends as comes from its oplog (oplog/identity.h,
docs/operations.md#a-copied-oplog-directory), not from its node-id.

Two APIs started with one node-id (a copied config) and their own oplog directories never
share a source: every 200 from either is counted once. A copy of an oplog directory beside
the original (the same identity) is refused at start: every increment it gets is a named
503 until the documented procedure (`clickatron-oplog fork`) gives it its own identity;
after it, every 200 from either API is counted once and nothing refused is counted.
"""
import os
import shutil
import subprocess
import threading

from harness import binary, free_port, get, wait_until
from test_api_write import Cluster, check_exact, error, load, now


class SecondApi:
    """Another API on the same realtime shards: its own port and oplog, the same node-id."""

    def __init__(self, c, name, oplog_dir):
        self.c = c
        self.port = free_port()
        self.oplog_dir = oplog_dir
        self.config = os.path.join(str(c.tmp), f"{name}.conf")
        with open(self.config, "w") as f:
            f.write(f"port = {self.port}\n")
            for p in c.rt_ports:
                f.write(f"realtime = 127.0.0.1:{p}\n")
            f.write(f"archive = 127.0.0.1:1\noplog-dir = {oplog_dir}\noplog-sync = batch\nnode-id = api-1\n")
        self.api = None

    def start(self):
        self.api = self.c.procs.start("clickatron-api", ["--config", self.config], ready_port=self.port)

    def stats(self):
        return get(self.port, "/stats").json()["data"]

    def drained(self):
        return all(sh["backlog_records"] == 0 and sh["state"] == "idle" for sh in self.stats()["realtime"])


def oplog_tool(*args):
    return subprocess.run([binary("clickatron-oplog"), *args], capture_output=True, text=True, timeout=60)


def test_twin_node_ids_each_count_every_200(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    twin = SecondApi(c, "twin", os.path.join(str(tmp_path), "oplog-twin"))
    twin.start()
    ts = now()
    assert c.stats()["node_id"] == twin.stats()["node_id"] == "api-1"
    assert c.stats()["source"] != twin.stats()["source"]  # each oplog's own identity
    acked = [{}, {}]
    unacked = [{}, {}]
    stop = threading.Event()
    threads = [threading.Thread(target=load, args=(api, stop, acked[i], unacked[i], f"tw{i}x", ts))
               for i, api in enumerate((c, twin))]
    for t in threads:
        t.start()
    wait_until(lambda: len(acked[0]) >= 40 and len(acked[1]) >= 40, timeout=60, what="40 batches on each API")
    stop.set()
    for t in threads:
        t.join()
    c.wait_drained()
    wait_until(twin.drained, timeout=60, what="the twin's backlog 0")
    for i in range(2):
        check_exact(c, acked[i], unacked[i], ts)
    assert not unacked[0] and not unacked[1]
    for s in (c.stats(), twin.stats()):
        assert s["source_conflict"] == ""
        assert all(sh["source_in_use_refusals"] == 0 and not sh["source_conflict"] for sh in s["realtime"]), s


def post_batch(port, key, ts):
    import requests
    body = "".join(f"ns=u&key={key}&value={i + 1}&ts={ts}&sub=s:{i % 3}\n" for i in range(10))
    return requests.post(f"http://127.0.0.1:{port}/incr", data=body, timeout=10)


def send(port, prefix, n, ts, acked, refused):
    for b in range(n):
        key = f"{prefix}{b}"
        r = post_batch(port, key, ts)
        if r.status_code == 200:
            acked[key] = 55
        else:
            assert r.status_code == 503 and r.json()["status_txt"] == "SOURCE_CONFLICT", r.text
            refused[key] = 55


def test_a_copied_oplog_is_refused_until_forked_then_both_count_once(procs, tmp_path):
    c = Cluster(procs, tmp_path)
    ts = now()
    acked_a, acked_b, refused_b = {}, {}, {}
    send(c.port, "one", 20, ts, acked_a, {})
    c.wait_drained()
    # Shard 1 down: part of what follows is undelivered when the directory is copied.
    assert c.rt_procs[1].terminate() == 0
    send(c.port, "two", 20, ts, acked_a, {})
    copy_dir = os.path.join(str(tmp_path), "oplog-copy")
    shutil.copytree(c.oplog_dir, copy_dir)  # while the original runs, as a careless restore would
    b = SecondApi(c, "copy", copy_dir)
    b.start()
    # The copy carries the original's identity but is not where it was created: refused.
    send(b.port, "refused", 10, ts, {}, refused_b)
    assert len(refused_b) == 10
    s = b.stats()
    assert "a copy or a restore of an oplog directory" in s["source_conflict"], s
    assert s["source"] == c.stats()["source"] and s["incr"]["rejected"]["SOURCE_CONFLICT"] == 10
    assert s["realtime"] == []  # it delivers nothing: the shared records are the original's
    error(get(b.port, "/late"), 503, "SOURCE_CONFLICT")
    assert "SOURCE_CONFLICT: oplog directory" in b.api.output()
    send(c.port, "three", 20, ts, acked_a, {})  # the original goes on
    c.start_realtime(1)

    # docs/operations.md#a-copied-oplog-directory, as written: stop the copy, fork, start.
    r = oplog_tool("fork", copy_dir)
    assert r.returncode == 1 and "fork refused" in r.stderr and "in use by another process" in r.stderr, r.stderr
    assert b.api.terminate() == 0
    last = int(oplog_tool("cursors", copy_dir).stdout.splitlines()[0].split()[1])
    r = oplog_tool("fork", copy_dir)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[1].startswith(f"records up to seq {last} are the original's: not sent from here ("), r.stdout
    assert lines[2].startswith(f"records from seq {last + 1} on are this directory's own, sent as source "), r.stdout
    r = oplog_tool("identity", copy_dir)
    assert r.returncode == 0 and "conflict none" in r.stdout, r.stdout
    b.start()
    assert b.stats()["source"] not in ("", c.stats()["source"])
    send(b.port, "four", 20, ts, acked_b, refused_b)
    assert len(acked_b) == 20
    c.wait_drained()
    wait_until(b.drained, timeout=60, what="the copy's backlog 0")
    check_exact(c, acked_a, {}, ts)
    check_exact(c, acked_b, {}, ts)
    for key in refused_b:
        assert c.total("u", key, ts) is None, key
    assert b.stats()["source_conflict"] == ""


def test_a_source_mark_past_the_oplog_head_makes_the_api_refuse_increments(procs, tmp_path):
    # Someone else wrote as this API's source, further than its oplog goes (a copy found
    # only while delivering): its batches would be skipped as duplicates. It stops
    # acknowledging, and stays so after a restart, until the conflict is resolved.
    from harness import post
    from test_api_write import SENDER, ymdh
    c = Cluster(procs, tmp_path, shards=1)
    source = c.stats()["source"]
    assert c.api.terminate() == 0
    ts = now()
    r = post(c.rt_ports[0], f"/incr?source={source}&seq=1000", f"u|forged.{ymdh(ts)},1\n", headers=SENDER)
    assert r.status == 200, r
    c.start_api()
    assert post_batch(c.port, "first", ts).status_code == 200  # acknowledged before it knew
    wait_until(lambda: c.stats()["source_conflict"], what="SOURCE_CONFLICT found while delivering")
    assert "holds seq 1000 of source" in c.stats()["source_conflict"]
    r = post_batch(c.port, "refused", ts)
    assert r.status_code == 503 and r.json()["status_txt"] == "SOURCE_CONFLICT", r.text
    assert c.api.terminate() == 0
    c.start_api()
    r = post_batch(c.port, "refused2", ts)
    assert r.status_code == 503 and r.json()["status_txt"] == "SOURCE_CONFLICT", r.text
    assert "conflict=SOURCE_CONFLICT: the shard holds seq 1000" in open(os.path.join(c.oplog_dir, "identity")).read()
    # Resolved by a fork from the first record this API appended itself: it is sent again,
    # under the new identity, and counted once.
    assert c.api.terminate() == 0
    r = oplog_tool("fork", c.oplog_dir, "--own-from", "1")
    assert r.returncode == 0, r.stderr
    c.start_api()
    c.wait_drained()
    assert c.total("u", "first", ts) == 55
    assert c.total("u", "refused", ts) is None and c.total("u", "refused2", ts) is None
    assert c.stats()["source_conflict"] == ""
