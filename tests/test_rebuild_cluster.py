"""clickatron-rebuild against a running cluster: export, nightly, publish, release, faults.

Real clickatron-realtime and clickatron-archive binaries on 127.0.0.1:
increments over 3 days, `nightly` for the first day, the archive replicas serve the new
generation, the realtime slot is released, and every total reads the same before (realtime)
and after (archive). Then `kill -9` of nightly at random points, a failed night followed by
a good one, release refusing what it cannot check, and a truncated export.
"""
import calendar
import hashlib
import http.server
import os
import random
import subprocess
import threading
import time
import urllib.parse

from formats import day_text, footer, shard_key, shard_of, stored
from harness import BIN, GOLDEN, SENDER, free_port, get, post, wait_until, binary, with_secret
import formats

DAY0 = calendar.timegm((2013, 5, 10, 0, 0, 0)) // 86400
SEED = os.path.join(GOLDEN, "seed-example")


def ymdh(day, hour):
    return formats.ymdh(day * 86400 + hour * 3600)


def rebuild(*args, check=True, timeout=120):
    r = subprocess.run([binary("clickatron-rebuild")] + with_secret("clickatron-rebuild", args),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout)
    if check and r.returncode != 0:
        raise AssertionError(f"rebuild {args} exited {r.returncode}:\n{r.stderr.decode()}")
    return r


def q(k):
    return urllib.parse.quote(k, safe="")


def records_for(days, users=40, seed=7):
    """Realtime records (key -> delta) and lookups (key -> original) for users over days."""
    rnd = random.Random(seed)
    counts, lookups = {}, {}
    refs = ["http://www.facebook.com/", "http://twitter.com/", "direct", "http://example.com/a,b"]
    for day in days:
        for u in range(users):
            user = f"user{u}"
            for hour in rnd.sample(range(24), 3):
                n = rnd.randint(1, 9)
                t = ymdh(day, hour)
                counts[f"u|{user}.{t}"] = counts.get(f"u|{user}.{t}", 0) + n
                counts[f"c.u|{user}.{rnd.choice(['US', 'JP', 'DE'])}.{t}"] = n
                ref = rnd.choice(refs)
                counts[f"r.u|{user}.{stored(ref)}.{t}"] = n
                if stored(ref) != ref:
                    lookups[(day, f"_l|{stored(ref)}")] = ref
    return counts, lookups


class Cluster:
    def __init__(self, procs, tmp_path, realtime=2, archive_replicas=(2, 1), ring_ids=None):
        """ring_ids: the realtime data directories' ids (DATA_DIR/ring-id, drawn at random
        when not given): two clusters given the same data and the same ring ids publish the
        very same generation."""
        self.procs, self.tmp = procs, tmp_path
        self.work = tmp_path / "work"
        self.rt_ports = [free_port() for _ in range(realtime)]
        self.rt_procs = []
        for i in range(realtime):
            (tmp_path / f"rt{i}").mkdir()
            if ring_ids:
                (tmp_path / f"rt{i}" / "ring-id").write_text(ring_ids[i] + "\n")
            self.start_realtime(i)
        self.archive_ports = [[free_port() for _ in range(r)] for r in archive_replicas]
        self.config = tmp_path / "cluster.conf"
        lines = ["port = 8000"] + [f"realtime = 127.0.0.1:{p}" for p in self.rt_ports]
        lines += ["archive = " + ",".join(f"127.0.0.1:{p}" for p in ports) for ports in self.archive_ports]
        lines += [f"oplog-dir = {tmp_path / 'oplog'}", "node-id = api-1"]
        self.config.write_text("\n".join(lines) + "\n")
        self.seq = 0

    def start_realtime(self, i):
        port = self.rt_ports[i]
        proc = self.procs.start("clickatron-realtime", ["--data-dir", self.tmp / f"rt{i}", "--port", port],
                                ready_port=port)
        if i < len(self.rt_procs):
            self.rt_procs[i] = proc
        else:
            self.rt_procs.append(proc)

    def stop_realtime(self, i):
        self.rt_procs[i].terminate()

    def start_archives(self):
        for k, ports in enumerate(self.archive_ports):
            for port in ports:
                self.procs.start("clickatron-archive",
                                 ["--db-file", self.work / "current" / f"shard-{k}.csv", "--port", port],
                                 ready_port=port)

    def load(self, counts, lookups):
        n = len(self.rt_ports)
        for i, port in enumerate(self.rt_ports):
            body = "".join(f"{k},{v}\n" for k, v in sorted(counts.items()) if shard_of(shard_key(k), n) == i)
            self.seq += 1
            r = post(port, f"/incr?source=test&seq={self.seq}", body, headers=SENDER)
            assert r.status == 200, r
        for (day, key), original in sorted(lookups.items()):
            port = self.rt_ports[shard_of(shard_key(key), n)]
            r = post(port, f"/set?day={day_text(day)}", f"{key},{original}\n")
            assert r.status == 200, r

    def rt_get(self, key):
        port = self.rt_ports[shard_of(shard_key(key), len(self.rt_ports))]
        r = get(port, "/get?key=" + q(key))
        return r.body.decode().rstrip("\n") if r.status == 200 else None

    def archive_get(self, key, replica=0):
        ports = self.archive_ports[shard_of(shard_key(key), len(self.archive_ports))]
        r = get(ports[replica % len(ports)], "/get?key=" + q(key))
        return r

    def slot_state(self, port, day):
        data = get(port, "/stats").json()["data"]
        for slot in data["slots"]:
            if slot["day"] == day_text(day):
                return slot["state"]
        return None


def series(port, user, days):
    """Daily totals of u|user over days (oldest first), through the API's /series."""
    ref = days[-1] * 86400 + 23 * 3600  # the last bucket counts hours up to this one
    r = get(port, f"/series?ns=u&key={user}&unit=day&units={len(days)}&unit_reference_ts={ref}")
    assert r.status == 200, r
    points = r.json()["data"]["series"]
    assert [p["dt"] for p in points] == [d * 86400 for d in reversed(days)]
    return [p["value"] for p in reversed(points)]


def bootstrap(cluster):
    """The archive needs a file to start: publish the golden history first."""
    w = cluster.work
    rebuild("import", "--work", w, "--input", os.path.join(SEED, "history.csv"), "--archive-shards",
            len(cluster.archive_ports))
    rebuild("merge", "--work", w, "--archive-shards", len(cluster.archive_ports))
    rebuild("publish", "--work", w, "--archive-shards", len(cluster.archive_ports))
    cluster.start_archives()


def archive_totals(counts, day):
    """Expected archive total lines for one day: {ns|key: 'ymdh:n ...'}."""
    per = {}
    for k, v in counts.items():
        if k.startswith("u|") and k.endswith(tuple(ymdh(day, h) for h in range(24))):
            name, t = k.rsplit(".", 1)
            per.setdefault(name, []).append((t, v))
    return {name: " ".join(f"{t}:{v}" for t, v in sorted(cols)) for name, cols in per.items()}


def test_nightly_moves_a_day_from_realtime_to_archive(procs, tmp_path):
    cluster = Cluster(procs, tmp_path)
    days = [DAY0, DAY0 + 1, DAY0 + 2]
    counts, lookups = records_for(days)
    cluster.load(counts, lookups)
    bootstrap(cluster)
    before = {k: cluster.rt_get(k) for k in counts}
    assert all(str(counts[k]) == v for k, v in before.items())

    api = free_port()
    procs.start("clickatron-api", ["--config", cluster.config, "--port", api], ready_port=api)
    users = [f"user{u}" for u in range(0, 40, 3)]
    expected = {u: [sum(v for k, v in counts.items()
                        if k.startswith(f"u|{u}.") and k.endswith(tuple(ymdh(d, h) for h in range(24))))
                    for d in days] for u in users}
    assert {u: series(api, u, days) for u in users} == expected

    r = rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0))
    out = r.stdout.decode()
    assert "nightly 2013-05-10: done" in out, out
    # The API now reads the first day from the archive, the others from realtime: same totals.
    assert {u: series(api, u, days) for u in users} == expected
    manifest = (cluster.work / "current" / "manifest").read_text()
    generation = manifest.split("generation = ")[1].split("\n")[0]
    assert "last_day = 2013-05-10\n" in manifest
    for ports in cluster.archive_ports:
        for port in ports:
            stats = get(port, "/stats").json()
            data = stats.get("data", stats)
            assert (data["generation"], data["last_day"]) == (generation, "2013-05-10")
    for port in cluster.rt_ports:
        assert cluster.slot_state(port, DAY0) == "released"
        assert cluster.slot_state(port, DAY0 + 1) == "open"

    # The first day's totals read the same from the archive (both replicas) as from realtime.
    for name, value in archive_totals(counts, DAY0).items():
        for replica in range(2):
            r = cluster.archive_get(name, replica)
            assert r.status == 200 and r.headers["x-archive-last-day"] == "2013-05-10"
            day0_cols = [c for c in r.body.decode().rstrip("\n").split(" ") if c[:3] == ymdh(DAY0, 0)[:3]]
            assert " ".join(day0_cols) == value, name
    # Subtotals of the first day: one archive line per (key, hour), summing to the total.
    for k, v in counts.items():
        if k.startswith("c.u|") and k.endswith(tuple(ymdh(DAY0, h) for h in range(24))):
            head, sub, t = k.rsplit(".", 2)
            line = cluster.archive_get(f"{head}.{t}").body.decode()
            assert f"{sub}:" in line
    for (day, key), original in lookups.items():
        r = cluster.archive_get(key)
        assert r.status == 200 and r.body.decode() == original + "\n"
    # Later days are still only in realtime.
    later = [k for k in counts if k.startswith("u|") and k.endswith(tuple(ymdh(DAY0 + 1, h) for h in range(24)))]
    assert all(cluster.rt_get(k) == str(counts[k]) for k in later)

    # Nightly again: every step is a no-op, the generation stays.
    files = {p.name: p.read_bytes() for p in (cluster.work / "current").iterdir()}
    r = rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0))
    out = r.stdout.decode()
    assert "no day to archive through" in out and "nothing to do" in out, out
    assert {p.name: p.read_bytes() for p in (cluster.work / "current").iterdir()} == files


def snapshot(work):
    """Checksums of everything a finished nightly leaves that matters."""
    out = {}
    for sub in ("merged", "current"):
        for p in sorted((work / sub).iterdir()):
            data = p.read_bytes()
            if p.name == "meta":  # its `inputs` names segment directories, unique per run
                data = b"".join(l for l in data.splitlines(True) if not l.startswith(b"inputs ="))
            out[f"{sub}/{p.name}"] = hashlib.sha256(data).hexdigest()
    out["current ->"] = os.readlink(work / "current")
    return out


def test_kill9_of_nightly_at_random_points_then_rerun_gives_the_same_files(procs, tmp_path):
    cluster = Cluster(procs, tmp_path, realtime=2, archive_replicas=(1,))
    counts, lookups = records_for([DAY0, DAY0 + 1], users=300, seed=11)
    cluster.load(counts, lookups)
    bootstrap(cluster)
    # Reference: an uninterrupted run in its own work directory (no release, so the
    # realtime data stays for the interrupted runs; the archive follows `work`).
    ref = tmp_path / "ref"
    for a in (("import", "--input", os.path.join(SEED, "history.csv")),):
        rebuild(a[0], "--work", ref, *a[1:])
    t0 = time.monotonic()
    rebuild("export", "--work", ref, "--config", cluster.config, "--day", day_text(DAY0))
    rebuild("segment", "--work", ref, "--config", cluster.config, "--day", day_text(DAY0))
    rebuild("compact", "--work", ref, "--before", day_text(DAY0))
    rebuild("merge", "--work", ref, "--config", cluster.config)
    rebuild("publish", "--work", ref, "--archive-shards", 1)
    elapsed = time.monotonic() - t0
    expected = snapshot(ref)

    rnd = random.Random(1234)
    args = [binary("clickatron-rebuild")] + with_secret("clickatron-rebuild", [
        "nightly", "--work", str(cluster.work), "--config", str(cluster.config), "--day", day_text(DAY0)])
    kills = 0
    for attempt in range(6):
        p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(rnd.uniform(0.0, elapsed))
        if p.poll() is None:
            p.kill()
            kills += 1
        p.wait()
    r = rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0))
    assert "nightly 2013-05-10: done" in r.stdout.decode()
    assert kills >= 1
    assert snapshot(cluster.work) == expected
    assert not list((cluster.work / "txn").iterdir())
    assert sorted(p.name for p in cluster.work.iterdir()) == [
        "current", "export", "gen", "lock", "merged", "segments", "txn"]
    for port in cluster.rt_ports:
        assert cluster.slot_state(port, DAY0) == "released"


def day_lines(work):
    """The `day = D digest...` lines of the live manifest, as {day: [digest, ...]}."""
    out = {}
    for line in (work / "current" / "manifest").read_text().splitlines():
        if line.startswith("day = "):
            day, *digests = line[len("day = "):].split(" ")
            out[day] = digests
    return out


def assert_archived(cluster, counts, day):
    """Every total of day reads from the archive (replica 0) as it was loaded."""
    for name, value in archive_totals(counts, day).items():
        r = cluster.archive_get(name)
        assert r.status == 200, (name, r)
        cols = [c for c in r.body.decode().rstrip("\n").split(" ") if c.split(":")[0] in
                {ymdh(day, h) for h in range(24)}]
        assert " ".join(cols) == value, name


def test_nightly_after_a_failed_night_archives_both_days_and_releases_only_merged_ones(procs, tmp_path):
    """A night that fails leaves a state the next completes: the next night archives the
    day the failed one did not, then its own, and releases exactly those two. (Before, the
    next night exported only its own day and released both: the first was never exported.)"""
    cluster = Cluster(procs, tmp_path)
    days = [DAY0, DAY0 + 1, DAY0 + 2]
    counts, lookups = records_for(days)
    cluster.load(counts, lookups)
    bootstrap(cluster)
    work, config = cluster.work, cluster.config

    cluster.stop_realtime(1)  # the night of DAY0 fails: a realtime shard is down
    r = rebuild("nightly", "--work", work, "--config", config, "--day", day_text(DAY0), check=False)
    assert r.returncode == 1, r.stdout.decode()
    assert f"realtime shard 1 (127.0.0.1:{cluster.rt_ports[1]})" in r.stderr.decode()
    cluster.start_realtime(1)
    assert [cluster.slot_state(p, DAY0) for p in cluster.rt_ports] == ["open", "open"]
    assert "last_day = 2013-05-10" not in (work / "current" / "manifest").read_text()

    r = rebuild("nightly", "--work", work, "--config", config, "--day", day_text(DAY0 + 1))
    out = r.stdout.decode()
    assert "nightly 2013-05-11: done: archived 2 day(s) 2013-05-10..2013-05-11" in out, out
    manifest = (work / "current" / "manifest").read_text()
    assert "last_day = 2013-05-11\n" in manifest
    lines = day_lines(work)
    assert sorted(lines) == ["2013-05-10", "2013-05-11"]
    for day, digests in lines.items():
        footers = [(work / "export" / day / f"shard-{n}.csv").read_text().splitlines()[-1] for n in range(2)]
        assert digests == [f.split("xxh64=")[1] for f in footers]
    for day in (DAY0, DAY0 + 1):
        assert_archived(cluster, counts, day)
        assert [cluster.slot_state(p, day) for p in cluster.rt_ports] == ["released", "released"]
    assert [cluster.slot_state(p, DAY0 + 2) for p in cluster.rt_ports] == ["open", "open"]


class GarbledStats(http.server.BaseHTTPRequestHandler):
    """A realtime shard whose /stats is not a realtime /stats answer; it counts POSTs."""
    posts = []

    def do_GET(self):
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def do_POST(self):
        GarbledStats.posts.append(self.path)
        self.send_response(404)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_release_refuses_when_realtime_stats_cannot_be_read(procs, tmp_path):
    """Release frees nothing when one shard's /stats cannot be read (before, it released
    every day the ring could hold on that shard, blindly, and the readable ones anyway)."""
    cluster = Cluster(procs, tmp_path, realtime=2, archive_replicas=(1,))
    counts, lookups = records_for([DAY0, DAY0 + 1])
    cluster.load(counts, lookups)
    bootstrap(cluster)
    work, config = cluster.work, cluster.config
    for port in cluster.rt_ports:
        r = post(port, f"/close?day={day_text(DAY0)}")
        assert r.status == 200, r
    for step in ("export", "segment"):
        rebuild(step, "--work", work, "--config", config, "--day", day_text(DAY0))
    rebuild("merge", "--work", work, "--config", config)
    rebuild("publish", "--work", work, "--config", config)
    assert sorted(day_lines(work)) == [day_text(DAY0)]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), GarbledStats)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        fake = server.server_address[1]
        garbled = tmp_path / "garbled.conf"
        garbled.write_text(config.read_text().replace(f"realtime = 127.0.0.1:{cluster.rt_ports[1]}",
                                                      f"realtime = 127.0.0.1:{fake}"))
        r = rebuild("release", "--work", work, "--config", garbled, "--through", day_text(DAY0), check=False)
        assert r.returncode == 1
        assert (f"refusing to release: the /stats of realtime shard 1 (127.0.0.1:{fake}) cannot be read: "
                "not a realtime /stats answer") in r.stderr.decode(), r.stderr.decode()
        assert GarbledStats.posts == []
    finally:
        server.shutdown()
        server.server_close()
    assert [cluster.slot_state(p, DAY0) for p in cluster.rt_ports] == ["closed", "closed"]

    rebuild("release", "--work", work, "--config", config, "--through", day_text(DAY0))
    assert [cluster.slot_state(p, DAY0) for p in cluster.rt_ports] == ["released", "released"]
    assert [cluster.slot_state(p, DAY0 + 1) for p in cluster.rt_ports] == ["open", "open"]


def test_release_waits_out_the_lease_of_the_generation_before(procs, tmp_path):
    """A day leaves realtime only once every archive replica has served a generation holding
    it for 2 s (archive/served_generation.h): an API takes the generation a live answer named
    as served for up to 1 s, and the generation before lacks the day. Released straight after
    the publish, release waits, says so, and releases."""
    cluster = Cluster(procs, tmp_path, realtime=1, archive_replicas=(1,))
    counts, lookups = records_for([DAY0, DAY0 + 1])
    cluster.load(counts, lookups)
    bootstrap(cluster)
    work, config = cluster.work, cluster.config
    r = post(cluster.rt_ports[0], f"/close?day={day_text(DAY0)}")
    assert r.status == 200, r
    for step in ("export", "segment"):
        rebuild(step, "--work", work, "--config", config, "--day", day_text(DAY0))
    rebuild("merge", "--work", work, "--config", config)
    rebuild("publish", "--work", work, "--config", config)
    archive_port = cluster.archive_ports[0][0]
    rebuild("release", "--work", work, "--config", config, "--through", day_text(DAY0))
    # Released only once the replica had served the generation for 2 s (release waits for
    # it when it has not yet; how long this test took to get here is the machine's business).
    assert get(archive_port, "/stats").json()["data"]["served_ms"] >= 2000
    assert cluster.slot_state(cluster.rt_ports[0], DAY0) == "released"


class LateApi(http.server.BaseHTTPRequestHandler):
    """An API's late-data endpoints (docs/api.md#api-late): GET /late?after=ID answers the
    entries after ID as a footed export-shaped stream with X-Late-First/-Last; POST
    /late/release?through=ID drops them. Requests are recorded."""
    entries = {}  # id -> realtime records
    requests = []

    def do_GET(self):
        after = int(urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["after"][0])
        LateApi.requests.append(("GET", after))
        ids = sorted(i for i in LateApi.entries if i > after)
        body = "".join(LateApi.entries[i] for i in ids).encode()
        self.send_response(200)
        if ids:
            self.send_header("X-Late-First", str(ids[0]))
        self.send_header("X-Late-Last", str(ids[-1] if ids else after))
        end = footer(body)
        self.send_header("Content-Length", str(len(body) + len(end)))
        self.end_headers()
        self.wfile.write(body + end)

    def do_POST(self):
        through = int(urllib.parse.parse_qs(urllib.parse.urlparse(self.path).query)["through"][0])
        LateApi.requests.append(("POST", through))
        for i in [i for i in LateApi.entries if i <= through]:
            del LateApi.entries[i]
        self.send_response(200)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"{}")

    def log_message(self, *args):
        pass


def test_nightly_adds_late_data_to_archived_days_and_releases_it_at_the_api(procs, tmp_path):
    """Late data an API kept (increments refused as closed) is summed into a day already
    archived; the manifest records its last id and the API is told to drop it, once."""
    cluster = Cluster(procs, tmp_path, realtime=2, archive_replicas=(1,))
    counts, lookups = records_for([DAY0, DAY0 + 1, DAY0 + 2])
    cluster.load(counts, lookups)
    bootstrap(cluster)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LateApi)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = f"127.0.0.1:{server.server_address[1]}"
        with open(cluster.config, "a") as f:
            f.write(f"api = {api}\n")
        LateApi.entries.clear()
        LateApi.requests.clear()
        rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0))
        assert LateApi.requests == [("GET", 0)]
        key = next(k for k in sorted(counts)
                   if k.startswith("u|") and k.rsplit(".", 1)[1] in {ymdh(DAY0, h) for h in range(24)})
        name, hour = key.rsplit(".", 1)
        LateApi.entries[7] = f"{key},1000\n"
        rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0 + 1))
        assert LateApi.requests[1:] == [("GET", 0), ("POST", 7)]
        assert f"late = {api} 7\n" in (cluster.work / "current" / "manifest").read_text()
        line = cluster.archive_get(name).body.decode()
        assert f"{hour}:{counts[key] + 1000}" in line.rstrip("\n").split(" "), line
        rebuild("nightly", "--work", cluster.work, "--config", cluster.config, "--day", day_text(DAY0 + 1))
        assert LateApi.requests[3:] == [("GET", 7), ("POST", 7)]
        assert cluster.archive_get(name).body.decode() == line  # merged once
    finally:
        server.shutdown()
        server.server_close()


class TruncatingExport(http.server.BaseHTTPRequestHandler):
    """A fake realtime shard whose /export stops short of its #END footer (its /close, the
    step before the export, answers as a shard does)."""
    body = b"u|a.c4ab,1\nu|b.c4ab,2\n#END count=2 xxh64=0000000000000000\n"

    def do_POST(self):
        data = b'{"status_code": 200, "status_txt": "OK", "data": {}}'
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self):
        data = self.body if "full" in self.path else self.body[:15]
        self.send_response(200)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def log_message(self, *args):
        pass


def test_a_truncated_or_wrong_export_is_refused(tmp_path):
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), TruncatingExport)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        config = tmp_path / "c.conf"
        config.write_text(f"realtime = 127.0.0.1:{server.server_address[1]}\n")
        work = tmp_path / "w"
        r = rebuild("export", "--work", work, "--config", config, "--day", "2013-05-10", check=False)
        assert r.returncode == 1
        err = r.stderr.decode()
        assert "realtime shard 0" in err and "truncated" in err, err
        assert not (work / "export" / "2013-05-10" / "shard-0.csv").exists()
        assert not list((work / "export" / "2013-05-10").iterdir())
    finally:
        server.shutdown()
        server.server_close()
