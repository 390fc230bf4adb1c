"""clickatron-api read path (docs/api-read.md): /series, /breakdown and /lookup over both tiers.

A real cluster on 127.0.0.1: archive servers serving files built by clickatron-rebuild
import/merge/publish, realtime shards fed through their own /incr and /set, and the API in
front. Every line of the golden queries.jsonl and query-errors.tsv is checked with all data in
the archive, then again with the data split across the tiers, then with failures.
"""
import http.client
import json
import os
import time

import pytest

from formats import day_text, shard_key, shard_of, ymdh, ymdh_day
from harness import GOLDEN, SECRET, SECRET_HEADER, SENDER, free_port, get, post, run, wait_until

SEED = os.path.join(GOLDEN, "seed-example")


# ---- building a cluster -------------------------------------------------------------------

def day_of(realtime_key):
    """YYYY-MM-DD of a realtime total/subtotal key (its last 4 bytes are the YMDH token)."""
    return day_text(ymdh_day(realtime_key[-4:]))


def publish_archive(tmp_path, lines, shards, name="work"):
    """import + merge + publish of realtime-format lines; returns the work dir."""
    work = tmp_path / name
    history = tmp_path / f"{name}-history.csv"
    history.write_text("".join(l + "\n" for l in lines))
    for args in (["import", "--work", work, "--input", history, "--archive-shards", shards],
                 ["merge", "--work", work, "--archive-shards", shards],
                 ["publish", "--work", work]):
        run("clickatron-rebuild", args, check=True)
    return work


class Cluster:
    """Archive shards (with replicas), realtime shards and one API, all started by procs."""

    def __init__(self, procs, tmp_path, archive_files, realtime_shards=1, api_options="", realtime_args=()):
        self.procs = procs
        self.tmp_path = tmp_path
        self.archive = []   # per shard: [(proc, port)] one per replica
        for k, replicas in enumerate(archive_files):
            ports = []
            for db_file in replicas:
                port = free_port()
                proc = procs.start("clickatron-archive", ["--db-file", db_file, "--port", port],
                                   ready_port=port)
                ports.append((proc, port))
            self.archive.append(ports)
        self.realtime = []
        for k in range(realtime_shards):
            port = free_port()
            data = tmp_path / f"rt{k}"
            data.mkdir()
            proc = procs.start("clickatron-realtime", ["--data-dir", data, "--port", port, *realtime_args],
                               ready_port=port)
            self.realtime.append((proc, port))
        self.port = free_port()
        config = tmp_path / "cluster.conf"
        text = f"port = {self.port}\n"
        text += "".join(f"realtime = 127.0.0.1:{p}\n" for _, p in self.realtime)
        text += "".join("archive = " + ",".join(f"127.0.0.1:{p}" for _, p in shard) + "\n"
                        for shard in self.archive)
        text += f"oplog-dir = {tmp_path / 'oplog'}\nnode-id = api-test\n" + api_options
        config.write_text(text)
        self.api = procs.start("clickatron-api", ["--config", config], ready_port=self.port)
        self.seq = 0

    def incr_realtime(self, lines):
        """Applies realtime-format total/subtotal lines on their shards; lookups via /set."""
        by_shard = {}
        sets = {}
        for line in lines:
            key = line.rsplit(",", 1)[0] if not line.startswith("_l|") else line.split(",", 1)[0]
            shard = shard_of(shard_key(key), len(self.realtime))
            if line.startswith("_l|"):
                sets.setdefault(shard, []).append(line)
            else:
                by_shard.setdefault((shard, day_of(key)), []).append(line)
        for (shard, day), batch in sorted(by_shard.items()):
            self.seq += 1
            r = post(self.realtime[shard][1], f"/incr?source=test&seq={self.seq}",
                     "".join(l + "\n" for l in batch), headers=SENDER)
            assert r.status == 200, r
        return sets

    def set_lookups(self, sets, day):
        for shard, batch in sets.items():
            r = post(self.realtime[shard][1], f"/set?day={day}", "".join(l + "\n" for l in batch))
            assert r.status == 200, r

    def query(self, path):
        return get(self.port, path)


def golden_queries():
    with open(os.path.join(SEED, "queries.jsonl")) as f:
        return [json.loads(line) for line in f if line.strip()]


def golden_errors():
    rows = []
    with open(os.path.join(SEED, "query-errors.tsv")) as f:
        for line in f:
            if line.startswith("#") or not line.strip():
                continue
            path, status, txt = line.rstrip("\n").split("\t")
            rows.append((path, int(status), txt))
    return rows


def history_lines():
    with open(os.path.join(SEED, "history.csv")) as f:
        return [l.rstrip("\n") for l in f if l.strip()]


def check_golden(cluster):
    for q in golden_queries():
        r = cluster.query(q["request"])
        assert r.status == 200, (q["request"], r)
        body = r.json()
        assert body["status_code"] == 200 and body["status_txt"] == "OK", body
        assert body["data"] == q["data"], q["request"]
        assert r.headers["content-type"].startswith("application/json")
    for path, status, txt in golden_errors():
        r = cluster.query(path)
        assert r.status == status, (path, r)
        body = r.json()
        assert body["status_code"] == status and body["status_txt"] == txt, (path, body)
        assert body["data"] is None
        assert body["message"]  # a human reason


# ---- the golden example -------------------------------------------------------------------

def test_golden_queries_all_in_the_archive(procs, tmp_path):
    work = publish_archive(tmp_path, history_lines(), 1)
    # rebuild must have produced the golden archive file byte for byte
    with open(work / "current" / "shard-0.csv", "rb") as f, open(os.path.join(SEED, "archive.csv"), "rb") as g:
        assert f.read() == g.read()
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])
    check_golden(cluster)
    r = cluster.query("/lookup?hash=h0aMB8AuNw4%3D")
    assert r.status == 200 and r.json()["data"] == {"hash": "h0aMB8AuNw4=", "value": "http://www.facebook.com/"}


def split_lines(lines, last_archive_day):
    archived, live = [], []
    for line in lines:
        if line.startswith("_l|"):
            live.append(line)  # lookups of the realtime days travel with them
            continue
        (archived if day_of(line.rsplit(",", 1)[0]) <= last_archive_day else live).append(line)
    return archived, live


def test_golden_queries_split_across_tiers(procs, tmp_path):
    # The archive holds 2012-03-11 (so W = 2012-03-11); 2012-03-12 and 2012-04-01 are in
    # realtime — the New York day of 2012-03-11 (23 hours) then takes hours from both tiers.
    archived, live = split_lines(history_lines(), "2012-03-11")
    assert archived and live
    work = publish_archive(tmp_path, archived, 2)
    cluster = Cluster(procs, tmp_path, [[work / "current" / f"shard-{k}.csv"] for k in range(2)],
                      realtime_shards=2)
    sets = cluster.incr_realtime(live)
    cluster.set_lookups(sets, "2012-04-01")
    check_golden(cluster)
    assert cluster.query("/lookup?hash=HMCJVIkxxP4%3D").json()["data"]["value"] == "http://twitter.com/"


def test_lookup_errors(procs, tmp_path):
    work = publish_archive(tmp_path, history_lines(), 1)
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])
    cases = [("/lookup", 400, "MISSING_ARG_HASH"),
             ("/lookup?hash=short", 400, "INVALID_ARG_HASH"),
             ("/lookup?hash=AAAAAAAAAAA%3D", 404, "NOT_FOUND"),
             ("/series?ns=u&key=%zz", 400, "INVALID_ARG_KEY"),
             ("/series?ns=u&key=jehiah&hour_offset=-5&timezone=-5", 400, "INVALID_ARG_HOUR_OFFSET"),
             ("/series?ns=u&key=jehiah&unit=hour&units=-1&unit_reference_ts=1956527999", 400,
              "INVALID_ARG_UNITS"),
             ("/series?ns=u&key=jehiah&unit_reference_ts=4102444800", 400, "INVALID_ARG_UNIT_REFERENCE_TS")]
    for path, status, txt in cases:
        r = cluster.query(path)
        assert (r.status, r.json()["status_txt"], r.json()["data"]) == (status, txt, None), (path, r)
    r = post(cluster.port, "/series?ns=u&key=jehiah", "")
    assert r.status == 405


def test_archive_without_manifest_holds_no_days(procs, tmp_path):
    # The same file with no manifest beside it: no X-Archive-Last-Day, so every hour is
    # realtime's — and realtime is empty.
    bare = tmp_path / "bare.csv"
    with open(os.path.join(SEED, "archive.csv"), "rb") as f:
        bare.write_bytes(f.read())
    cluster = Cluster(procs, tmp_path, [[bare]])
    r = cluster.query("/series?ns=u&key=jehiah&unit=day&units=2&unit_reference_ts=1333314000")
    assert [b["value"] for b in r.json()["data"]["series"]] == [0, 0]
    cluster.incr_realtime(["u|jehiah.c41l,5"])
    r = cluster.query("/series?ns=u&key=jehiah&unit=day&units=2&unit_reference_ts=1333314000")
    assert [b["value"] for b in r.json()["data"]["series"]] == [5, 0]
    r = cluster.query("/series?ns=u&key=jehiah&unit=day&units=-1&unit_reference_ts=1333314000")
    assert r.json()["data"]["series"] == [{"dt": 1333238400, "value": 5}]


# ---- failures -----------------------------------------------------------------------------

def test_replica_failover_and_dead_shards(procs, tmp_path):
    work = publish_archive(tmp_path, history_lines(), 1)
    db = work / "current" / "shard-0.csv"
    cluster = Cluster(procs, tmp_path, [[db, db]])
    check_golden(cluster)
    cluster.archive[0][0][0].terminate()  # first replica gone: the second answers
    check_golden(cluster)
    stats = cluster.query("/stats").json()["data"]
    assert "archive_failovers" in json.dumps(stats)
    cluster.archive[0][1][0].terminate()  # no live replica
    # Until the lease of the generation last named ends (archive-lease-ms, 1 s by default:
    # docs/api-read.md#caches) the answers held of it are still exact; then the dead shard shows.
    q = "/series?ns=u&key=jehiah&unit=day&units=2&unit_reference_ts=1333314000"
    held = cluster.query(q)
    assert held.status in (200, 503), held
    wait_until(lambda: cluster.query(q).status == 503, timeout=5)
    r = cluster.query(q)
    body = r.json()
    assert (r.status, body["status_txt"], body["data"]) == (503, "ARCHIVE_UNAVAILABLE", None)
    assert "archive shard 0" in body["message"], body
    r = cluster.query("/breakdown?ns=u&key=jehiah&sub=c&units=1&unit_reference_ts=1333314000")
    assert (r.status, r.json()["status_txt"]) == (503, "ARCHIVE_UNAVAILABLE")


def test_realtime_shard_down_is_503_never_a_partial_number(procs, tmp_path):
    work = publish_archive(tmp_path, history_lines(), 1)
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]])
    cluster.realtime[0][0].terminate()
    # Every query whose range reaches past W (2012-04-02) needs realtime's hours.
    for path in ("/series?ns=u&key=jehiah&unit=day&units=2&unit_reference_ts=1333314000",
                 "/series?ns=u&key=jehiah&units=-1&unit_reference_ts=1333314000",
                 "/breakdown?ns=u&key=jehiah&sub=r&units=1&unit_reference_ts=1333486800"):
        r = cluster.query(path)
        body = r.json()
        assert (r.status, body["status_txt"], body["data"]) == (503, "REALTIME_UNAVAILABLE", None), path
        assert "realtime shard 0" in body["message"]
    # A range wholly at or before W (known from the answers above) asks realtime nothing
    # (docs/api-read.md#the-plan-of-a-query): its answer is whole without it.
    r = cluster.query("/breakdown?ns=u&key=jehiah&sub=r&units=1&unit_reference_ts=1333314000")
    assert r.status == 200, r
    assert r.json()["data"]["breakdown"] == [{"subkey": "http://twitter.com/", "value": 3},
                                             {"subkey": "http://www.facebook.com/", "value": 2}]


def test_replicas_on_different_generations_give_the_same_answers(procs, tmp_path):
    # During a publish one replica may serve the new generation (W = 2012-04-01) while the
    # other still serves the old one (W = 2012-03-11), with realtime still holding the days
    # in between. Each answer uses the watermark of the replica that gave it: always exact.
    lines = history_lines()
    old_archived, live = split_lines(lines, "2012-03-11")
    old = publish_archive(tmp_path, old_archived, 1, name="old")
    new = publish_archive(tmp_path, lines, 1, name="new")
    cluster = Cluster(procs, tmp_path, [[old / "current" / "shard-0.csv", new / "current" / "shard-0.csv"]])
    sets = cluster.incr_realtime(live)
    cluster.set_lookups(sets, "2012-04-01")
    for _ in range(3):  # rotation alternates the replicas; each query line hits both
        check_golden(cluster)


def test_breakdown_reads_a_realtime_listing_to_its_end(procs, tmp_path):
    """10,100 subkeys of one hour with 1 each, then `zz` with 500: the realtime shard lists
    them in pages of --fwmatch-limit (10,000) lines, and the API reads every page — the
    top subkey is `zz`, and the total is every increment, not the first page's."""
    cluster = Cluster(procs, tmp_path, [])
    hour = ymdh(int(time.time()) // 3600 * 3600)
    names = [f"a{i:05d}" for i in range(10100)]
    cluster.incr_realtime([f"c.u|big.{n}.{hour},1" for n in names] + [f"c.u|big.zz.{hour},500"])
    r = cluster.query("/breakdown?ns=u&key=big&sub=c&unit=day&units=1&limit=3")
    assert r.status == 200, r
    assert r.json()["data"]["breakdown"] == [{"subkey": "zz", "value": 500},
                                             {"subkey": "a00000", "value": 1},
                                             {"subkey": "a00001", "value": 1}]


def test_breakdown_past_the_fanout_bound_is_a_named_error(procs, tmp_path):
    """A query that would need more backend requests (here: /fwmatch pages) or answer bytes
    than the API's bound answers 400 QUERY_TOO_LARGE — never the pages it got as a total."""
    hour = ymdh(int(time.time()) // 3600 * 3600)
    lines = [f"c.u|big.a{i:05d}.{hour},1" for i in range(10100)]
    cluster = Cluster(procs, tmp_path, [], api_options="query-max-backend-requests = 2\n")
    cluster.incr_realtime(lines)
    assert cluster.query("/breakdown?ns=u&key=big&sub=c&unit=day&units=1").status == 200  # 2 pages
    cluster.incr_realtime([f"c.u|big.b{i:05d}.{hour},1" for i in range(10000)])
    r = cluster.query("/breakdown?ns=u&key=big&sub=c&unit=day&units=1")  # 3 pages
    assert r.status == 400, r
    assert r.json()["status_txt"] == "QUERY_TOO_LARGE"
    assert r.json()["message"] == ("the query needs more than 2 requests from the backends; "
                                   "ask for a shorter range or a smaller limit")


# ---- realtime hour batches (docs/api-read.md#realtime-hour-batches) -----------------------

def burst(port, paths):
    """The paths sent at once, each on its own connection (all connected first, then all
    sent, then all read): queries the API's loop can start in one turn. Returns the bodies."""
    conns = [http.client.HTTPConnection("127.0.0.1", port, timeout=10) for _ in paths]
    for c in conns:
        c.connect()
    for c, path in zip(conns, paths):
        c.request("GET", path, headers={SECRET_HEADER: SECRET})
    answers = []
    for c in conns:
        r = c.getresponse()
        answers.append((r.status, r.read()))
        c.close()
    return answers


@pytest.mark.parametrize("max_mget_keys", [1000, 30])
def test_series_asked_together_answer_as_asked_alone(procs, tmp_path, max_mget_keys):
    # 2012-04-01 in the archive (W), 2012-04-02 in realtime: a 48-hour /series asks realtime
    # for the 24 named hours of 2012-04-02. Queries the API starts in one turn of its loop
    # share realtime /mget requests; each must answer exactly what it answers alone. With
    # --max-mget-keys 30 the shard refuses a batch of two or more (48+ keys): the asks go
    # again one by one.
    day1, day2 = 1333238400, 1333324800  # 2012-04-01 and 2012-04-02 00:00 UTC
    keys = [f"k{i:02d}" for i in range(12)]
    archived, live = [], []
    for i, key in enumerate(keys):
        for h in range(24):
            if (i + h) % 3:
                archived.append(f"u|{key}.{ymdh(day1 + h * 3600)},{i + h}")
            if (i * h) % 5 != 1:
                live.append(f"u|{key}.{ymdh(day2 + h * 3600)},{100 * i + h + 1}")
    work = publish_archive(tmp_path, archived, 1)
    cluster = Cluster(procs, tmp_path, [[work / "current" / "shard-0.csv"]],
                      realtime_args=("--max-mget-keys", max_mget_keys))
    cluster.incr_realtime(live)

    def path(key, units):
        return (f"/series?ns=u&key={key}&unit=hour&units={units}"
                f"&unit_reference_ts={day2 + 23 * 3600}")
    # Different keys, the same key twice, and overlapping ranges of one key.
    paths = [path(k, 48) for k in keys] + [path("k03", 48), path("k05", 30), path("k05", 6), path("none", 48)]
    alone = {p: cluster.query(p) for p in paths}
    for p, r in alone.items():
        assert r.status == 200, (p, r)
    # Exact values: k05's newest hour (2012-04-02 23:00) is realtime's 100*5 + 23 + 1.
    assert alone[path("k05", 6)].json()["data"]["series"][0]["value"] == 524
    assert sum(b["value"] for b in alone[path("k05", 48)].json()["data"]["series"]) == (
        sum(5 + h for h in range(24) if (5 + h) % 3) + sum(500 + h + 1 for h in range(24) if (5 * h) % 5 != 1))

    def stats():
        return cluster.query("/stats").json()["data"]["queries"]["plan"]
    before = stats()
    deadline = time.monotonic() + 20
    while True:
        for p, (status, body) in zip(paths, burst(cluster.port, paths)):
            assert (status, body) == (alone[p].status, alone[p].body), p
        now = stats()
        if now["realtime_batched_asks"] > before["realtime_batched_asks"]:
            break
        assert time.monotonic() < deadline, f"no two queries shared a realtime request: {now}"
    assert now["realtime_hour_asks"] - before["realtime_hour_asks"] >= len(paths)
    if max_mget_keys == 1000:
        # Fewer realtime requests than queries that asked hours.
        assert (now["realtime_requests"] - before["realtime_requests"]
                < now["realtime_hour_asks"] - before["realtime_hour_asks"])
        assert now["realtime_batches_split"] == 0
    else:
        assert now["realtime_batches_split"] > before["realtime_batches_split"]
