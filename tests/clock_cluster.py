"""A whole cluster of real binaries on one clock file, for the day-lifecycle tests and the
cluster simulation (tests/test_day_ownership.py, tests/test_cluster_sim.py).

Every process reads the time from one file (CLICKATRON_CLOCK_FILE, base/wall_clock.h) that
the test moves with `set_time`, so a test walks the cluster through days, nights and clock
jumps in seconds. Realtime shards, archive shards (one replica each unless asked), APIs
(each with its own oplog directory, config file and node-id), the rebuild work directory
and its cluster config all live under one temp directory; every process started here is
stopped by `stop_all` (the `procs` fixture does it for tests).

    c = ClockCluster(tmp_path, procs, realtime=2, archive=1, apis=1)
    c.set_time(day * 86400 + 12 * 3600)
    c.start_realtime_all(); c.bulk_load(lines); c.start_archive_all(); c.start_api_all()
    status = c.incr(0, "u", "jehiah", ts, value=3)
    c.nightly()          # clickatron-rebuild nightly with the cluster config
"""
import os
import subprocess
import urllib.parse

from harness import SECRET_FILE, binary, free_port, get, wait_until, with_secret


class ClockCluster:
    def __init__(self, tmp_path, procs, realtime=2, archive=1, replicas=1, apis=1, node_ids=None,
                 rt_sync="100ms"):
        self.tmp = str(tmp_path)
        self.procs = procs
        self.clock = os.path.join(self.tmp, "clock")
        self.env = dict(os.environ, CLICKATRON_CLOCK_FILE=self.clock)
        self.env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
        self.work = os.path.join(self.tmp, "work")
        self.rt_ports = [free_port() for _ in range(realtime)]
        self.ar_ports = [[free_port() for _ in range(replicas)] for _ in range(archive)]
        self.api_ports = [free_port() for _ in range(apis)]
        self.node_ids = node_ids or [f"api-{n + 1}" for n in range(apis)]
        self.rt_sync = rt_sync
        self.running = {}  # name -> Proc
        common = [f"secret-file = {SECRET_FILE}"]
        common += [f"realtime = 127.0.0.1:{p}" for p in self.rt_ports]
        common += ["archive = " + ",".join(f"127.0.0.1:{p}" for p in ports) for ports in self.ar_ports]
        common += [f"api = 127.0.0.1:{p}" for p in self.api_ports]
        self.config = os.path.join(self.tmp, "cluster.conf")
        with open(self.config, "w") as f:
            f.write("\n".join(common) + "\n")
        self.api_configs = []
        for n, port in enumerate(self.api_ports):
            path = os.path.join(self.tmp, f"api-{n}.conf")
            with open(path, "w") as f:
                f.write("\n".join(common + [f"port = {port}", f"node-id = {self.node_ids[n]}",
                                            f"oplog-dir = {self.oplog_dir(n)}", "oplog-sync = batch"]) + "\n")
            self.api_configs.append(path)
        for k in range(realtime):
            os.makedirs(os.path.join(self.tmp, f"rt{k}"), exist_ok=True)

    # -- the clock ----------------------------------------------------------------------
    def set_time(self, ts):
        """Every process sees ts within base/wall_clock.h's reread interval (50 ms)."""
        tmp = self.clock + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{int(ts)}\n")
        os.rename(tmp, self.clock)
        self.now = int(ts)
        # The APIs decide what /incr accepts from the time: wait until each running one reads
        # the new time (its /cluster answer says `now`).
        for n, port in enumerate(self.api_ports):
            if f"api-{n}" in self.running:
                wait_until(lambda: get(port, "/cluster").json()["data"]["now"] == self.now,
                           timeout=10, what=f"api-{n} reading the clock {self.now}")

    def today(self):
        return self.now // 86400

    # -- processes ----------------------------------------------------------------------
    def oplog_dir(self, n):
        return os.path.join(self.tmp, f"oplog-{n}")

    def _start(self, name, program, args, port):
        proc = self.procs.start(program, args, ready_port=port, env=self.env)
        self.running[name] = proc
        return proc

    def start_realtime(self, k):
        return self._start(f"realtime-{k}", "clickatron-realtime",
                           ["--data-dir", os.path.join(self.tmp, f"rt{k}"), "--port", self.rt_ports[k],
                            "--sync-interval", self.rt_sync], self.rt_ports[k])

    def start_archive(self, s, r=0):
        return self._start(f"archive-{s}-{r}", "clickatron-archive",
                           ["--db-file", os.path.join(self.work, "current", f"shard-{s}.csv"),
                            "--port", self.ar_ports[s][r]], self.ar_ports[s][r])

    def start_api(self, n):
        return self._start(f"api-{n}", "clickatron-api", ["--config", self.api_configs[n]], self.api_ports[n])

    def start_realtime_all(self):
        for k in range(len(self.rt_ports)):
            self.start_realtime(k)

    def start_archive_all(self):
        for s, ports in enumerate(self.ar_ports):
            for r in range(len(ports)):
                self.start_archive(s, r)

    def start_api_all(self):
        for n in range(len(self.api_ports)):
            self.start_api(n)

    def kill9(self, name):
        proc = self.running.pop(name, None)
        if proc is not None:
            proc.kill9()

    def stop(self, name):
        proc = self.running.pop(name, None)
        if proc is not None:
            proc.terminate()

    # -- rebuild ------------------------------------------------------------------------
    def rebuild(self, *args, timeout=300):
        """clickatron-rebuild with the cluster secret and this cluster's clock; CompletedProcess."""
        args = with_secret("clickatron-rebuild", [str(a) for a in args])
        return subprocess.run([binary("clickatron-rebuild")] + args, env=self.env, capture_output=True,
                              timeout=timeout)

    def must(self, *args):
        r = self.rebuild(*args)
        assert r.returncode == 0, f"clickatron-rebuild {args[0]} exited {r.returncode}:\n{r.stderr.decode()}"
        return r

    def bulk_load(self, lines, publish=True):
        """Imports realtime-format records (`key,value` lines), merges, and publishes with the
        cluster config (which makes every realtime shard close the published days first)."""
        history = os.path.join(self.tmp, "history.csv")
        with open(history, "w") as f:
            f.write("".join(line + "\n" for line in lines))
        shards = str(len(self.ar_ports))
        self.must("import", "--work", self.work, "--input", history, "--archive-shards", shards)
        self.must("merge", "--work", self.work, "--archive-shards", shards)
        if publish:
            return self.rebuild("publish", "--work", self.work, "--config", self.config)
        return None

    def nightly(self, *extra):
        return self.rebuild("nightly", "--work", self.work, "--config", self.config, *extra)

    def manifest(self):
        try:
            with open(os.path.join(self.work, "current", "manifest")) as f:
                return dict(line.split(" = ", 1) for line in f.read().splitlines() if " = " in line)
        except OSError:
            return {}

    # -- traffic ------------------------------------------------------------------------
    def incr(self, n, ns, key, ts, value=1, subs=(), headers=None):
        """GET /incr on API n; the Response."""
        params = [("ns", ns), ("key", key), ("ts", str(ts)), ("value", str(value))]
        params += [("sub", s) for s in subs]
        return get(self.api_ports[n], "/incr?" + urllib.parse.urlencode(params), headers=headers)

    def series_hours(self, n, ns, key, first_ts, hours):
        """{hour ts: value} for `hours` hours from first_ts (UTC), through API n's /series; None
        when the API does not answer 200."""
        ref = first_ts + (hours - 1) * 3600
        r = get(self.api_ports[n], f"/series?ns={ns}&key={urllib.parse.quote(key, safe='')}&unit=hour"
                                   f"&units={hours}&unit_reference_ts={ref}")
        if r.status != 200:
            return None
        return {p["dt"]: p["value"] for p in r.json()["data"]["series"]}

    def api_stats(self, n):
        return get(self.api_ports[n], "/stats").json()["data"]

    def rt_stats(self, k):
        return get(self.rt_ports[k], "/stats").json()["data"]

    def delivered(self, n):
        """API n has nothing left to deliver: every shard's backlog is 0, and every stream
        with rounds in doubt has heard the running instance of its shard — a shard restarted
        after acknowledging them is noticed by the stream's probe, which re-sends them
        (docs/api-write.md#exactly-once)."""
        s = self.api_stats(n)
        if s["backlog_records"] != 0:
            return False
        for k, shard in enumerate(s["realtime"]):
            doubt = [slot["instance"] for slot in shard["slots"] if slot["rounds_in_doubt"]]
            if doubt and f"realtime-{k}" in self.running and any(i != self.rt_stats(k)["instance"] for i in doubt):
                return False
        return True

    def wait_delivered(self, timeout=60):
        for n in range(len(self.api_ports)):
            if f"api-{n}" in self.running:
                wait_until(lambda: self.delivered(n), timeout=timeout, what=f"api-{n} delivered everything")
