"""Pieces of the monitoring tests (docs/operations.md#prometheus): a small cluster whose
/stats and /metrics need the cluster secret, a reader of the Prometheus text format, and
promtool.
"""
import os
import re
import subprocess
import time
import urllib.parse

from harness import SECRET, free_port, get, wait_until

PROMTOOL = "/usr/bin/promtool"
PROMETHEUS = "/usr/bin/prometheus"
NODE_EXPORTER = "/usr/bin/prometheus-node-exporter"
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RULES = os.path.join(ROOT, "ops", "prometheus", "clickatron.rules.yml")
RULE_TESTS = os.path.join(ROOT, "ops", "prometheus", "clickatron.rules.test.yml")
SCRAPE_CONFIG = os.path.join(ROOT, "ops", "prometheus", "prometheus.yml")

_SAMPLE = re.compile(r'^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$')
_LABEL = re.compile(r'([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)",?')


def parse_metrics(text):
    """{(name, frozenset of (label, value)): value} and {name: type} of an exposition."""
    samples, types = {}, {}
    for line in text.splitlines():
        if line.startswith("# TYPE "):
            _, _, name, kind = line.split(" ", 3)
            types[name] = kind
            continue
        if not line or line.startswith("#"):
            continue
        m = _SAMPLE.match(line)
        assert m, f"not a sample line: {line!r}"
        labels = frozenset((k, v.encode().decode("unicode_escape")) for k, v in _LABEL.findall(m.group(2) or ""))
        key = (m.group(1), labels)
        assert key not in samples, f"series twice: {line!r}"
        samples[key] = float(m.group(3))
    return samples, types


def value(samples, name, **labels):
    return samples[(name, frozenset(labels.items()))]


def promtool(*args, input=None, timeout=60):
    return subprocess.run([PROMTOOL, *args], input=input, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                          timeout=timeout)


def write_generation(work, generation, last_day, content):
    """A published generation of one archive shard: WORK/gen/G/{shard-0.csv,manifest}, WORK/current."""
    gen_dir = os.path.join(work, "gen", generation)
    os.makedirs(gen_dir)
    with open(os.path.join(gen_dir, "shard-0.csv"), "w") as f:
        f.write(content)
    with open(os.path.join(gen_dir, "manifest"), "w") as f:
        f.write(f"generation = {generation}\nlast_day = {last_day}\nshards = 1\n"
                f"shard.0.file = shard-0.csv\nshard.0.records = {content.count(chr(10))}\n"
                f"shard.0.bytes = {len(content.encode())}\n")
    tmp_link = os.path.join(work, "current.tmp")
    os.symlink(os.path.join("gen", generation), tmp_link)
    os.replace(tmp_link, os.path.join(work, "current"))
    return os.path.join(work, "current", "shard-0.csv")


class GuardedCluster:
    """Realtime shards and an archive server with --require-secret-for-reads, and an API
    with stats-secret: every /stats and /metrics needs the cluster secret, as a cluster
    should run when its network is not trusted for reads."""

    def __init__(self, procs, tmp_path, shards=2, last_day="2026-11-20"):
        self.procs = procs
        self.tmp = str(tmp_path)
        self.rt_ports = [free_port() for _ in range(shards)]
        self.rt_procs = [None] * shards
        for k in range(shards):
            os.makedirs(os.path.join(self.tmp, f"rt{k}"))
            self.start_realtime(k)
        self.archive_port = free_port()
        db = write_generation(os.path.join(self.tmp, "work"), "20261121-0123456789abcdef", last_day,
                              "u|jehiah.qbol,7\nu|jehiah.qbom,3\n")
        procs.start("clickatron-archive", ["--db-file", db, "--port", self.archive_port,
                                           "--require-secret-for-reads"], ready_port=self.archive_port)
        self.port = free_port()
        self.config = os.path.join(self.tmp, "cluster.conf")
        with open(self.config, "w") as f:
            f.write(f"port = {self.port}\n")
            for p in self.rt_ports:
                f.write(f"realtime = 127.0.0.1:{p}\n")
            f.write(f"archive = 127.0.0.1:{self.archive_port}\n")
            f.write(f"oplog-dir = {os.path.join(self.tmp, 'oplog')}\nnode-id = api-1\nstats-secret = true\n")
        procs.start("clickatron-api", ["--config", self.config], ready_port=self.port)

    def start_realtime(self, k):
        self.rt_procs[k] = self.procs.start(
            "clickatron-realtime", ["--data-dir", os.path.join(self.tmp, f"rt{k}"), "--port", self.rt_ports[k],
                                    "--sync-interval", "200ms", "--require-secret-for-reads"],
            ready_port=self.rt_ports[k])

    def targets(self):
        """{job: [ports]} as the shipped scrape config names the jobs."""
        return {"clickatron-api": [self.port], "clickatron-realtime": list(self.rt_ports),
                "clickatron-archive": [self.archive_port]}

    def incr(self, key, ts=None):
        params = {"ns": "u", "key": key, "ts": int(ts if ts is not None else time.time())}
        r = get(self.port, "/incr?" + urllib.parse.urlencode(params))
        assert r.status == 200, r
        return r

    def stats(self, port=None):
        r = get(port or self.port, "/stats")
        assert r.status == 200, r
        return r.json()["data"]

    def metrics(self, port=None):
        r = get(port or self.port, "/metrics")
        assert r.status == 200, r
        return r

    def wait_drained(self, timeout=30):
        wait_until(lambda: all(s["backlog_records"] == 0 for s in self.stats()["realtime"]), timeout=timeout,
                   what="delivery backlog 0")


def bearer(secret=SECRET):
    return {"Authorization": f"Bearer {secret}"}
