"""A Clickatron cluster across test hosts (tests/hosts.py), configured as
docs/operations.md#deploying-n-shards-on-n-hosts says, for tests/test_multihost_*.py.

    client  198.18.0.10   the clients and the load balancer (load and queries come from here)
    api1-2  198.18.0.11-12  clickatron-api, port 8000, address 0.0.0.0, own node-id and oplog
    rt1-3   198.18.0.21-23  clickatron-realtime shard 0-2, port 7101, bound to the host address
    ar1-4   198.18.0.31-34  clickatron-archive: shard 0 on ar1 and ar2 (7201), shard 1 on ar3
                            and ar4 (7202), each bound to its host address
    rebuild 198.18.0.40   the nightly driver (cron host): the work directory, backups

Every host has its own directory tree (`net.root(host)`: etc/clickatron/cluster.conf and
cluster.secret, var/lib/clickatron/…), since namespaces share the filesystem. Each host's
cluster.conf is the guide's file with that host's paths; only node-id differs between the
API hosts. The archive hosts serve the rebuild host's `current/shard-K.csv` at its path —
the guide's read-only export of /var/lib/clickatron/rebuild "mounted at the same path",
which the shared filesystem is here. Every server runs with the cluster secret, and every
process reads the time from one clock file (CLICKATRON_CLOCK_FILE, base/wall_clock.h), the
hosts' synchronised clock, which the test moves to make a night come.
"""
import os
import urllib.parse

from formats import shard_of
from harness import SECRET, binary, wait_until
from hosts import Network, request, wait_port

HOUR = 3600
DAY = 86400
API_PORT = 8000
RT_PORT = 7101
ARCHIVE_PORTS = (7201, 7202)
# host name -> last octet of 198.18.0.x
BASE_HOSTS = {"client": 10, "api1": 11, "api2": 12, "rt1": 21, "rt2": 22, "rt3": 23,
              "ar1": 31, "ar2": 32, "ar3": 33, "ar4": 34, "rebuild": 40}
APIS = ("api1", "api2")
REALTIMES = ["rt1", "rt2", "rt3"]  # realtime shard K is REALTIMES[K]
ARCHIVES = (("ar1", "ar2"), ("ar3", "ar4"))  # archive shard S: its replicas


def realtime_shard(ns, key, shards=3):
    """The realtime shard of `ns|key` (docs/formats.md#sharding: the shard key of a total)."""
    return shard_of(f"{ns}|{key}", shards)


class HostCluster:
    def __init__(self, tmp_path, extra_hosts=None, today=None):
        self.tmp = str(tmp_path)
        self.net = Network(tmp_path, dict(BASE_HOSTS, **(extra_hosts or {})))
        self.realtimes = list(REALTIMES)
        self.clock = os.path.join(self.tmp, "clock")
        self.today = today
        self.env = dict(os.environ, CLICKATRON_CLOCK_FILE=self.clock)
        self.env.setdefault("ASAN_OPTIONS", "detect_leaks=1:abort_on_error=1")
        self.procs = {}  # server name (api1, rt1, ar1, …) -> Proc
        self._client = None

    # -- life cycle ---------------------------------------------------------------------
    def __enter__(self):
        self.net.create()
        self._client = self.net.inside("client")
        self._client.__enter__()  # the test's own requests leave from the client host
        return self

    def __exit__(self, *exc):
        try:
            if self._client is not None:
                self._client.__exit__(None, None, None)
        finally:
            self.net.__exit__(*exc)

    # -- paths and configs ----------------------------------------------------------------
    def etc(self, host):
        return os.path.join(self.net.root(host), "etc", "clickatron")

    def config(self, host):
        return os.path.join(self.etc(host), "cluster.conf")

    def secret_file(self, host):
        return os.path.join(self.etc(host), "cluster.secret")

    def lib(self, host):
        return os.path.join(self.net.root(host), "var", "lib", "clickatron")

    def oplog(self, api):
        return os.path.join(self.lib(api), "oplog")

    @property
    def work(self):
        return os.path.join(self.lib("rebuild"), "rebuild")

    def addr(self, host):
        return self.net.address(host)

    def config_text(self, host, extra=()):
        """The guide's cluster.conf, with this cluster's addresses and host's paths."""
        lines = ["# /etc/clickatron/cluster.conf — 3 realtime shards, 2 archive shards with 2 replicas each",
                 f"port = {API_PORT}", "address = 0.0.0.0"]
        lines += [f"realtime = {self.addr(h)}:{RT_PORT}          # realtime shard {k}"
                  for k, h in enumerate(self.realtimes)]
        lines += ["archive = " + ",".join(f"{self.addr(h)}:{ARCHIVE_PORTS[s]}" for h in replicas)
                  + f"   # archive shard {s}: two replicas" for s, replicas in enumerate(ARCHIVES)]
        lines += [f"api = {self.addr(h)}:{API_PORT}" for h in APIS]
        lines += [f"oplog-dir = {self.oplog(host)}", "oplog-sync = batch",
                  f"node-id = api-{APIS.index(host) + 1 if host in APIS else 1}",
                  f"backup = {os.path.join(self.net.root(host), 'var', 'backups', 'clickatron')}",
                  f"secret-file = {self.secret_file(host)}"]
        return "\n".join(lines + list(extra)) + "\n"

    def write_configs(self, hosts=None, extra=()):
        """cluster.conf and cluster.secret (mode 0600) on `hosts` (default: every host but the
        client and the intruder, which have no secret)."""
        for host in hosts or [h for h in self.net.hosts if h not in ("client", "intruder")]:
            os.makedirs(self.etc(host), exist_ok=True)
            with open(self.config(host), "w") as f:
                f.write(self.config_text(host, extra))
            path = self.secret_file(host)
            if not os.path.exists(path):
                with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "w") as f:
                    f.write(SECRET + "\n")

    # -- the clock ------------------------------------------------------------------------
    def set_time(self, ts):
        tmp = self.clock + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{int(ts)}\n")
        os.rename(tmp, self.clock)
        self.now = int(ts)
        for api in APIS:
            if api in self.procs and self.procs[api].alive():
                wait_until(lambda: self.get(api, "/cluster").json()["data"]["now"] == self.now, timeout=20,
                           what=f"{api} reading the clock")

    # -- servers --------------------------------------------------------------------------
    def start_realtime(self, k, host=None):
        host = host or self.realtimes[k]
        data = os.path.join(self.lib(host), f"realtime-{k}")
        os.makedirs(data, exist_ok=True)
        # clickatron-realtime@K.service with realtime-K.env (ADDRESS = the host's address).
        proc = self.net.start(host, "clickatron-realtime", [
            binary("clickatron-realtime"), "--data-dir", data, "--address", self.addr(host), "--port", RT_PORT,
            "--sync-interval", "100ms", "--secret-file", self.secret_file(host)], env=self.env)
        self.procs[host] = proc
        wait_port(self.addr(host), RT_PORT, proc)
        return proc

    def start_archive(self, host):
        shard = next(s for s, replicas in enumerate(ARCHIVES) if host in replicas)
        port = ARCHIVE_PORTS[shard]
        proc = self.net.start(host, "clickatron-archive", [
            binary("clickatron-archive"), "--db-file", os.path.join(self.work, "current", f"shard-{shard}.csv"),
            "--address", self.addr(host), "--port", port, "--threads", 2,
            "--secret-file", self.secret_file(host)], env=self.env)
        self.procs[host] = proc
        wait_port(self.addr(host), port, proc)
        return proc

    def start_api(self, host):
        proc = self.net.start(host, "clickatron-api", [binary("clickatron-api"), "--config", self.config(host)],
                              env=self.env)
        self.procs[host] = proc
        wait_port(self.addr(host), API_PORT, proc)
        return proc

    def stop(self, host):
        """SIGTERM, as systemctl stop; returns the exit status."""
        return self.procs.pop(host).terminate(timeout=60)

    def kill9(self, host):
        self.procs.pop(host).kill9()

    @staticmethod
    def rebuild_binary():
        return binary("clickatron-rebuild")

    def rebuild(self, *args, host="rebuild", timeout=300, env=None):
        """clickatron-rebuild on the rebuild host; CompletedProcess (text)."""
        return self.net.run(host, [binary("clickatron-rebuild")] + [str(a) for a in args], env=env or self.env,
                            timeout=timeout)

    def must(self, *args, **kw):
        r = self.rebuild(*args, **kw)
        assert r.returncode == 0, f"clickatron-rebuild {args[0]} exited {r.returncode}:\n{r.stdout}\n{r.stderr}"
        return r

    def nightly(self, *extra, timeout=300):
        return self.rebuild("nightly", "--work", self.work, "--config", self.config("rebuild"), *extra,
                            timeout=timeout)

    def manifest(self):
        with open(os.path.join(self.work, "current", "manifest")) as f:
            return dict(line.split(" = ", 1) for line in f.read().splitlines() if " = " in line)

    def start(self, history_lines):
        """The whole cluster: realtime shards, a bulk load of history_lines published with the
        cluster config (every realtime shard closes through its last day), the archive
        replicas, the APIs. The clock must be set."""
        self.write_configs()
        for k in range(len(self.realtimes)):
            self.start_realtime(k)
        history = os.path.join(self.lib("rebuild"), "history.csv")
        os.makedirs(os.path.dirname(history), exist_ok=True)
        with open(history, "w") as f:
            f.write("".join(line + "\n" for line in history_lines))
        self.must("import", "--work", self.work, "--input", history, "--archive-shards", len(ARCHIVES))
        self.must("merge", "--work", self.work, "--archive-shards", len(ARCHIVES))
        self.must("publish", "--work", self.work, "--config", self.config("rebuild"))
        for replicas in ARCHIVES:
            for host in replicas:
                self.start_archive(host)
        for api in APIS:
            self.start_api(api)

    # -- requests (from the client host) --------------------------------------------------
    def port_of(self, host):
        if host in APIS:
            return API_PORT
        if host in self.realtimes or host.startswith("rt"):
            return RT_PORT
        return ARCHIVE_PORTS[next(s for s, r in enumerate(ARCHIVES) if host in r)]

    def get(self, host, path, secret=None, timeout=10.0):
        return request(self.addr(host), self.port_of(host), "GET", path, secret=secret, timeout=timeout)

    def post(self, host, path, body=b"", secret=None, timeout=10.0):
        return request(self.addr(host), self.port_of(host), "POST", path, body=body, secret=secret,
                       timeout=timeout)

    def api_stats(self, api):
        return self.get(api, "/stats").json()["data"]

    def rt_stats(self, host):
        return self.get(host, "/stats", secret=SECRET).json()["data"]

    def backlog(self, api, shard=None):
        stats = self.api_stats(api)
        if shard is None:
            return stats["backlog_records"]
        return stats["realtime"][shard]["backlog_records"]

    def wait_delivered(self, apis=APIS, timeout=120):
        for api in apis:
            wait_until(lambda: self.backlog(api) == 0, timeout=timeout, what=f"{api} delivering everything")

    def series(self, api, ns, key, first_ts, hours, timeout=10.0):
        """(status, {hour ts: value} or the answer's status_txt) of /series on api."""
        ref = first_ts + (hours - 1) * HOUR
        r = self.get(api, f"/series?ns={ns}&key={urllib.parse.quote(key, safe='')}&unit=hour&units={hours}"
                          f"&unit_reference_ts={ref}", timeout=timeout)
        if r.status != 200:
            return r.status, r.json().get("status_txt", r.text[:200]) if r.body[:1] == b"{" else r.text[:200]
        return 200, {p["dt"]: p["value"] for p in r.json()["data"]["series"]}

