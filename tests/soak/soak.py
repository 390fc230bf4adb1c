#!/usr/bin/python3
"""The week-long cluster run: a real cluster through simulated days with faults, then an exact count.

    tests/soak/soak.py --bin build/asan/bin [--days 7] [--seed N] [--day-seconds 60] [--dir DIR]

docs/operations.md#soak-test describes it. In short: 3 realtime shards, 2 archive shards with 2
replicas each, 2 APIs with their own oplogs and node-ids, and the nightly job of ops/cron, all on
127.0.0.1, all reading the time from one clock file (CLICKATRON_CLOCK_FILE, base/wall_clock.h)
that this script moves forward at --day-seconds real seconds per simulated day. A load generator
sends a few hundred increments per second (subtotals, hashed keys and subkeys) to either API and
logs every event an API acknowledged; a query thread reads series all the time. At moments drawn
from the seed (printed first) it injects: kill -9 of every kind of process (API, realtime, archive,
nightly mid-merge and mid-publish), one API down across midnight and back a day later, a failed
night followed by catch-up, an archive replica down while queries run, a full oplog disk for a
while (a real tmpfs filled to the last byte; needs root, else skipped and said so), and every
publish runs under query load.

At the end every day is closed and archived, and for every key and hour the cluster's answer must
equal the sum of the acknowledged events — nothing lost, nothing doubled — every subtotal too, and
no query may have answered 5xx while a replica of each shard was up. Events whose answer was lost
with a killed API ("in doubt": sent, never answered) are reported; a key-hour holding one may lie
between the acknowledged sum and that sum plus the doubtful values, never outside.

Exit status 0 when every check holds; 1 with the differences otherwise.
"""
import argparse
import calendar
import collections
import http.client
import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path[:0] = [os.path.dirname(HERE), os.path.join(ROOT, "ops", "lib")]  # tests/: ports.py; ops/lib
from formats import day_text, ymdh  # noqa: E402  (docs/formats.md)
from ports import free_port  # noqa: E402

T0 = calendar.timegm((2026, 3, 2, 0, 0, 0))  # a Monday; day 0 of the run
COUNTRIES = ["US", "JP", "DE", "FR", "BR"]
REFERRERS = ["direct", "http://www.facebook.com/", "http://twitter.com/", "https://t.co/x?y=1",
             "http://example.com/a,b"]
KEYS = [f"user{i}" for i in range(40)] + ["http://example.com/a/long/link", "a key with spaces"]


def call(port, method, path, body=None, timeout=10.0):
    """(status, body bytes) or raises OSError/http.client exceptions."""
    c = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout)
    try:
        c.request(method, path, body=body)
        r = c.getresponse()
        return r.status, r.read()
    finally:
        c.close()


class Log:
    def __init__(self, path):
        self.f = open(path, "a", buffering=1)
        self.lock = threading.Lock()
        self.start = time.monotonic()

    def __call__(self, clock, text):
        line = f"[{time.monotonic() - self.start:7.1f}s sim {time.strftime('%m-%d %H:%M', time.gmtime(clock.now()))}] {text}"
        with self.lock:
            print(line, flush=True)
            self.f.write(line + "\n")


class SimClock:
    """The clock file every process reads: T0 + real elapsed × speed, written every 20 ms."""

    def __init__(self, path, speed):
        self.path, self.speed = path, speed
        self.base_sim, self.base_real = T0, time.monotonic()
        self.lock = threading.Lock()
        self.stopped = threading.Event()
        self.write()
        self.thread = threading.Thread(target=self.run, daemon=True)
        self.thread.start()

    def now(self):
        with self.lock:
            return int(self.base_sim + (time.monotonic() - self.base_real) * self.speed)

    def jump(self, sim):
        with self.lock:
            self.base_sim, self.base_real = sim, time.monotonic()
        self.write()

    def set_speed(self, speed):
        now = self.now()
        with self.lock:
            self.base_sim, self.base_real, self.speed = now, time.monotonic(), speed

    def write(self):
        tmp = self.path + ".tmp"
        with open(tmp, "w") as f:
            f.write(f"{self.now()}\n")
        os.replace(tmp, self.path)

    def run(self):
        while not self.stopped.wait(0.02):
            self.write()

    def wait_until(self, sim, stop=None):
        while self.now() < sim:
            if stop is not None and stop.is_set():
                return
            time.sleep(min(0.05, max(0.001, (sim - self.now()) / self.speed)))


class Cluster:
    def __init__(self, args, root, clock, log):
        self.args, self.root, self.clock, self.log = args, root, clock, log
        self.bin = os.path.abspath(args.bin)
        self.env = dict(os.environ, CLICKATRON_CLOCK_FILE=clock.path)
        self.env.setdefault("ASAN_OPTIONS", "detect_leaks=0:abort_on_error=1")
        self.procs = {}
        self.lock = threading.Lock()
        self.down_since = {}       # name -> monotonic time it went down (or None when up)
        self.up_at = {}            # name -> monotonic time it came back
        self.rt_ports = [free_port() for _ in range(3)]
        self.ar_ports = [[free_port(), free_port()] for _ in range(2)]
        self.api_ports = [free_port(), free_port()]
        self.work = os.path.join(root, "rebuild")
        os.makedirs(os.path.join(root, "log"), exist_ok=True)
        self.oplog_dirs = [os.path.join(root, "oplog-api-1"), os.path.join(root, "oplog-api-2")]
        self.tmpfs = None
        if os.geteuid() == 0 and not args.no_disk_fault:
            # api-2's oplog on a small tmpfs of its own: the full-disk fault fills it for real.
            try:
                os.makedirs(self.oplog_dirs[1])
                subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", self.oplog_dirs[1]],
                               check=True, capture_output=True)
                self.tmpfs = self.oplog_dirs[1]
            except (subprocess.CalledProcessError, OSError) as e:
                log(clock, f"no tmpfs for the full-disk fault ({e}); that fault is skipped")
        for k in range(3):
            os.makedirs(os.path.join(root, f"rt{k}"), exist_ok=True)
        # The cluster secret (docs/operations.md#threat-model): every server requires it on its
        # internal endpoints, the APIs and the nightly send it (all read secret-file).
        self.secret_file = os.path.join(root, "cluster.secret")
        with open(os.open(self.secret_file, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(os.urandom(32).hex() + "\n")
        common = [f"secret-file = {self.secret_file}"]
        common += [f"realtime = 127.0.0.1:{p}" for p in self.rt_ports]
        common += ["archive = " + ",".join(f"127.0.0.1:{p}" for p in ports) for ports in self.ar_ports]
        common += [f"api = 127.0.0.1:{p}" for p in self.api_ports]
        self.configs = []
        for n in range(2):
            path = os.path.join(root, f"api-{n + 1}.conf")
            with open(path, "w") as f:
                f.write("\n".join(common + [f"port = {self.api_ports[n]}", f"node-id = api-{n + 1}",
                                            f"oplog-dir = {self.oplog_dirs[n]}"]) + "\n")
            self.configs.append(path)
        self.cluster_conf = os.path.join(root, "cluster.conf")
        with open(self.cluster_conf, "w") as f:
            f.write("\n".join(common) + "\n")

    # -- processes ------------------------------------------------------------------------
    def names(self):
        return ([f"realtime-{k}" for k in range(3)] + [f"archive-{s}-{r}" for s in range(2) for r in range(2)] +
                ["api-1", "api-2"])

    def command(self, name):
        kind, _, rest = name.partition("-")
        if kind == "realtime":
            k = int(rest)
            return ([f"{self.bin}/clickatron-realtime", "--data-dir", os.path.join(self.root, f"rt{k}"),
                     "--port", str(self.rt_ports[k]), "--sync-interval", "200ms",
                     "--secret-file", self.secret_file], self.rt_ports[k])
        if kind == "archive":
            s, r = map(int, rest.split("-"))
            return ([f"{self.bin}/clickatron-archive", "--db-file",
                     os.path.join(self.work, "current", f"shard-{s}.csv"), "--port", str(self.ar_ports[s][r]),
                     "--secret-file", self.secret_file],
                    self.ar_ports[s][r])
        n = int(rest) - 1
        return [f"{self.bin}/clickatron-api", "--config", self.configs[n]], self.api_ports[n]

    def port(self, name):
        return self.command(name)[1]

    def start(self, name, timeout=60):
        args, port = self.command(name)
        out = open(os.path.join(self.root, "log", f"{name}.log"), "ab")
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        out.close()
        deadline = time.monotonic() + timeout
        while True:
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited {p.returncode} at start; see {self.root}/log/{name}.log")
            try:
                if call(port, "GET", "/ping", timeout=2)[0] == 200:
                    break
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not answer /ping within {timeout}s")
            time.sleep(0.05)
        with self.lock:
            self.procs[name] = p
            self.down_since.pop(name, None)
            self.up_at[name] = time.monotonic()

    def kill9(self, name):
        with self.lock:
            p = self.procs.pop(name, None)
            self.down_since[name] = time.monotonic()
        if p is not None:
            p.send_signal(signal.SIGKILL)
            p.wait()

    def stop(self, name):
        with self.lock:
            p = self.procs.pop(name, None)
        if p is not None:
            p.send_signal(signal.SIGTERM)
            try:
                p.wait(60)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()

    def up(self, name):
        with self.lock:
            p = self.procs.get(name)
        return p is not None and p.poll() is None

    def check_alive(self):
        """Names of processes that died without being killed by the run."""
        with self.lock:
            return [n for n, p in self.procs.items() if p.poll() is not None]

    def queries_may_fail(self, grace=3.0):
        """A query may answer 5xx now: a realtime shard, or both replicas of an archive shard, is down
        (or came back less than grace seconds ago)."""
        now = time.monotonic()
        with self.lock:
            def out(name):
                return name in self.down_since or now - self.up_at.get(name, -1e9) < grace
            if any(out(f"realtime-{k}") for k in range(3)):
                return True
            return any(out(f"archive-{s}-0") and out(f"archive-{s}-1") for s in range(2))

    # -- rebuild --------------------------------------------------------------------------
    def bootstrap(self):
        """An archive generation to start from: one count three days before day 0."""
        history = os.path.join(self.root, "history.csv")
        day = T0 // 86400 - 3
        with open(history, "w") as f:
            f.write(f"u|seed.{ymdh(day * 86400)},1\n")
        for args in (["import", "--work", self.work, "--input", history, "--archive-shards", "2"],
                     ["merge", "--work", self.work, "--archive-shards", "2"],
                     ["publish", "--work", self.work]):
            r = subprocess.run([f"{self.bin}/clickatron-rebuild"] + args, env=self.env, capture_output=True)
            if r.returncode != 0:
                raise RuntimeError(f"rebuild {args[0]} failed: {r.stderr.decode()[-2000:]}")

    def nightly(self, day_arg=None):
        """Starts ops/cron/clickatron-nightly in the background; returns the Popen."""
        args = [os.path.join(ROOT, "ops", "cron", "clickatron-nightly"), "--work", self.work, "--config",
                self.cluster_conf, "--bin", self.bin, "--log", os.path.join(self.root, "log", "nightly.log"),
                "--quiet"]
        if day_arg:
            args += ["--day", day_arg]
        out = open(os.path.join(self.root, "log", "nightly.out"), "ab")
        p = subprocess.Popen(args, stdout=out, stderr=subprocess.STDOUT, env=self.env, start_new_session=True)
        out.close()
        return p

    def manifest(self):
        try:
            with open(os.path.join(self.work, "current", "manifest")) as f:
                return dict(line.split(" = ", 1) for line in f.read().splitlines() if " = " in line)
        except OSError:
            return {}

    def api_stats(self, n):
        status, body = call(self.api_ports[n], "GET", "/stats")
        return json.loads(body)["data"] if status == 200 else None

    def fill_disk(self):
        """Writes a filler file on api-2's oplog tmpfs until the device has no byte left."""
        fd = os.open(os.path.join(self.tmpfs, "filler"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            for size in (1 << 20, 4096, 1):
                chunk = b"\0" * size
                try:
                    while True:
                        os.write(fd, chunk)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def free_disk(self):
        try:
            os.remove(os.path.join(self.tmpfs, "filler"))
        except OSError:
            pass

    def shutdown(self):
        for name in list(self.procs):
            self.stop(name)
        if self.tmpfs:
            subprocess.run(["umount", "-l", self.tmpfs], capture_output=True)


class Ledger:
    """Every acknowledged event, summed per (key, hour) and per (subns, key, subkey, hour)."""

    def __init__(self, path):
        self.totals = collections.Counter()
        self.subs = collections.Counter()
        self.doubt_totals = collections.Counter()
        self.events = self.doubtful = self.batches = self.refused = 0
        self.lock = threading.Lock()
        self.f = open(path, "a", buffering=1 << 16)

    def add(self, events, acknowledged):
        with self.lock:
            for key, ts, value, subs in events:
                hour = ts - ts % 3600
                if acknowledged:
                    self.totals[(key, hour)] += value
                    for subns, subkey in subs:
                        self.subs[(subns, key, subkey, hour)] += value
                    self.f.write(f"{key}\t{ts}\t{value}\t{subs}\n")
                else:
                    self.doubt_totals[(key, hour)] += value
            if acknowledged:
                self.events += len(events)
                self.batches += 1
            else:
                self.doubtful += len(events)


def encode_event(key, ts, value, subs):
    params = [("ns", "u"), ("key", key), ("ts", str(ts)), ("value", str(value))]
    params += [("sub", f"{subns}:{subkey}") for subns, subkey in subs]
    return urllib.parse.urlencode(params)


def generator(cluster, clock, ledger, rnd_seed, rate, stop, stats):
    """Batches of 10 events to a random live API; the other one when it refuses."""
    rnd = random.Random(rnd_seed)
    interval = 10.0 / rate
    next_at = time.monotonic()
    while not stop.is_set():
        next_at += interval
        delay = next_at - time.monotonic()
        if delay > 0:
            time.sleep(delay)
        now = clock.now()
        events = []
        for _ in range(10):
            subs = [("c", rnd.choice(COUNTRIES)), ("r", rnd.choice(REFERRERS))]
            events.append((rnd.choice(KEYS), now - rnd.randint(0, 120), rnd.randint(1, 5), tuple(subs)))
        body = "\n".join(encode_event(*e) for e in events) + "\n"
        order = [0, 1] if rnd.random() < 0.5 else [1, 0]
        for n in order:
            try:
                status, answer = call(cluster.api_ports[n], "POST", "/incr", body.encode(), timeout=10)
            except ConnectionRefusedError:
                continue  # nothing was sent: try the other API
            except (OSError, http.client.HTTPException):
                ledger.add(events, acknowledged=False)  # sent, answer lost: in doubt
                stats["doubt_batches"] += 1
                break
            if status == 200:
                ledger.add(events, acknowledged=True)
                break
            stats[f"incr_{status}"] += 1
            if status == 400:
                stats["incr_400_text"] = answer.decode()[:300]
        else:
            stats["incr_unsent"] += 1


def querier(cluster, clock, rnd_seed, stop, stats, bad):
    rnd = random.Random(rnd_seed)
    while not stop.is_set():
        time.sleep(0.02)
        n = rnd.randrange(2)
        key = rnd.choice(KEYS)
        path = "/series?" + urllib.parse.urlencode({"ns": "u", "key": key, "unit": "hour", "units": 48})
        if rnd.random() < 0.3:
            path = "/breakdown?" + urllib.parse.urlencode({"ns": "u", "key": key, "sub": rnd.choice("cr"),
                                                           "unit": "day", "units": 3})
        try:
            status, body = call(cluster.api_ports[n], "GET", path, timeout=15)
        except (OSError, http.client.HTTPException):
            stats["query_unanswered"] += 1
            continue
        stats["queries"] += 1
        if status >= 500:
            if cluster.queries_may_fail():
                stats["query_5xx_allowed"] += 1
            else:
                bad.append(f"{time.strftime('%m-%d %H:%M', time.gmtime(clock.now()))} api-{n + 1} {path}: "
                           f"{status} {body[:200]!r}")
        elif status != 200:
            bad.append(f"api-{n + 1} {path}: {status} {body[:200]!r}")


def schedule(days, rnd, disk):
    """Faults as (sim time, action, argument), sorted. Each moment is drawn from the seed."""
    day = 86400
    h = 3600

    def at(d, lo_h, hi_h):
        return T0 + d * day + rnd.randint(lo_h * h, hi_h * h)

    f = []
    short = days < 4
    # kill -9 of each realtime shard, each archive replica once, each API once (back soon).
    for k in range(3):
        f.append((at(k % days, 3, 20), "kill_restart", f"realtime-{k}"))
    for s in range(2):
        f.append((at((s + 1) % days, 2, 22), "kill_restart", f"archive-{s}-{rnd.randrange(2)}"))
    f.append((at(0, 4, 18), "kill_restart", "api-2"))
    # api-1 down across midnight and back a day later (after the nightly closed its day: late data).
    d = 0 if short else 2
    f.append((T0 + d * day + 20 * h + rnd.randint(0, 2 * h), "down", "api-1"))
    f.append((T0 + (d + 2) * day + 2 * h + rnd.randint(0, h), "up", "api-1"))
    # The nightly: killed mid-merge one night and mid-publish another; one failed night (a
    # realtime shard down during it); every other night normal. Night n runs at day n 01:00.
    nights = list(range(2, days + 1))
    special = rnd.sample(nights, min(len(nights), 3)) if len(nights) >= 3 else nights
    kinds = ["nightly_kill_merge", "nightly_kill_publish", "nightly_fail"]
    for n in nights:
        kind = kinds[special.index(n)] if n in special else "nightly"
        f.append((T0 + n * day + h, kind, None))
    if disk:
        f.append((at(1, 6, 18), "disk_full", None))
    return sorted(f, key=lambda x: x[0])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--bin", required=True)
    ap.add_argument("--days", type=int, default=7)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--day-seconds", type=float, default=60.0, help="real seconds per simulated day")
    ap.add_argument("--rate", type=float, default=300.0, help="events per second")
    ap.add_argument("--disk-seconds", type=float, default=60.0, help="real seconds the oplog disk stays full")
    ap.add_argument("--dir", default=None)
    ap.add_argument("--keep", action="store_true", help="keep the run directory")
    ap.add_argument("--no-disk-fault", action="store_true")
    args = ap.parse_args()
    seed = args.seed if args.seed is not None else random.randrange(1 << 31)
    root = args.dir or tempfile.mkdtemp(prefix="clickatron-soak-")
    os.makedirs(root, exist_ok=True)
    started = time.monotonic()
    clock = SimClock(os.path.join(root, "clock"), 86400.0 / args.day_seconds)
    log = Log(os.path.join(root, "soak.log"))
    log(clock, f"seed {seed}; {args.days} simulated days at {args.day_seconds}s each; {args.rate:.0f} events/s; "
               f"directory {root}")
    rnd = random.Random(seed)
    cluster = Cluster(args, root, clock, log)
    ledger = Ledger(os.path.join(root, "acknowledged.log"))
    stats = collections.Counter()
    bad = []
    problems = []
    stop = threading.Event()
    threads = []
    faults = collections.Counter()
    try:
        cluster.bootstrap()
        for name in cluster.names():
            cluster.start(name)
        log(clock, "cluster up: " + ", ".join(cluster.names()))
        threads = [threading.Thread(target=generator, args=(cluster, clock, ledger, seed + 1, args.rate, stop, stats)),
                   threading.Thread(target=querier, args=(cluster, clock, seed + 2, stop, stats, bad))]
        for t in threads:
            t.start()
        plan = schedule(args.days, rnd, cluster.tmpfs is not None)
        log(clock, "faults: " + "; ".join(f"{time.strftime('%m-%d %H:%M', time.gmtime(t))} {a} {x or ''}"
                                          for t, a, x in plan))
        later = []  # (monotonic due, what to do, what to log): restarts, the disk freed
        end = T0 + args.days * 86400
        for when, action, what in plan + [(end, "end", None)]:
            while clock.now() < when:
                time.sleep(0.02)
                for item in list(later):
                    if time.monotonic() >= item[0]:
                        later.remove(item)
                        item[1]()
                        log(clock, item[2])
                died = cluster.check_alive()
                if died:
                    raise RuntimeError(f"died on their own: {died}; see {root}/log")
            if action == "end":
                break
            run_fault(cluster, clock, log, rnd, action, what, later, faults, args)
        for item in later:
            item[1]()
            log(clock, item[2])
        stop.set()
        for t in threads:
            t.join()
        log(clock, f"load stopped: {ledger.events} events acknowledged in {ledger.batches} batches, "
                   f"{ledger.doubtful} in doubt; {stats['queries']} queries; {dict(stats)}")
        problems += finish(cluster, clock, log, ledger, args)
    except Exception as e:  # noqa: BLE001 — reported as the run's failure with its directory
        problems.append(f"run stopped: {type(e).__name__}: {e}")
    finally:
        stop.set()
        for t in threads:
            t.join()
        clock.stopped.set()
        cluster.shutdown()
    problems += [f"query 5xx while a replica of each shard was up: {b}" for b in bad[:20]]
    took = time.monotonic() - started
    summary = (f"seed {seed}: {args.days} days, {ledger.events} events acknowledged, {ledger.doubtful} in doubt, "
               f"{stats['queries']} queries ({stats['query_5xx_allowed']} 5xx while a shard had no replica up), "
               f"faults {dict(faults)}, {took:.0f} s")
    if problems:
        log(clock, "FAILED: " + summary)
        for p in problems[:50]:
            log(clock, "  " + p)
        log(clock, f"run directory kept: {root}")
        return 1
    log(clock, "OK: " + summary)
    if not args.keep and args.dir is None:
        shutil.rmtree(root, ignore_errors=True)
    return 0


def run_fault(cluster, clock, log, rnd, action, what, later, faults, args):
    real = args.day_seconds / 24.0  # real seconds per simulated hour
    if action == "kill_restart":
        if not cluster.up(what):
            return
        cluster.kill9(what)
        faults[f"kill9 {what.rsplit('-', 1)[0] if what.startswith('archive') else what}"] += 1
        down = rnd.uniform(0.3, 1.5) * real
        later.append((time.monotonic() + down, lambda: cluster.start(what), f"{what} restarted"))
        log(clock, f"kill -9 {what}; back in {down:.1f}s")
    elif action == "down":
        cluster.kill9(what)
        faults[f"kill9 {what} across midnight"] += 1
        log(clock, f"kill -9 {what}: down across midnight until the next day's nightly has run")
    elif action == "up":
        cluster.start(what)
        log(clock, f"{what} back")
    elif action == "disk_full":
        cluster.fill_disk()
        faults["oplog disk full"] += 1
        log(clock, f"api-2's oplog disk is full for {args.disk_seconds:.0f}s")
        later.append((time.monotonic() + args.disk_seconds, cluster.free_disk, "api-2's oplog disk has room again"))
    elif action.startswith("nightly"):
        run_night(cluster, clock, log, rnd, action, faults)


def run_night(cluster, clock, log, rnd, action, faults):
    nightly_log = os.path.join(cluster.root, "log", "nightly.log")
    open(nightly_log, "ab").close()
    before = os.path.getsize(nightly_log)
    victim = None
    if action == "nightly_fail":
        victim = f"realtime-{rnd.randrange(3)}"
        cluster.kill9(victim)
        faults["failed night"] += 1
        log(clock, f"nightly with {victim} down (a failed night)")
    p = cluster.nightly()
    if action in ("nightly_kill_merge", "nightly_kill_publish"):
        word = {"nightly_kill_merge": r"merge", "nightly_kill_publish": r"publish"}[action]
        deadline = time.monotonic() + 300
        while p.poll() is None and time.monotonic() < deadline:
            with open(nightly_log, "rb") as f:
                f.seek(before)
                if re.search(rf"\b{word}\b".encode(), f.read()):
                    break
            time.sleep(0.005)
        if p.poll() is None:
            os.killpg(p.pid, signal.SIGKILL)
            faults[f"kill9 nightly mid-{word}"] += 1
            log(clock, f"kill -9 nightly during {word}")
        p.wait()
    else:
        p.wait()
    if victim:
        cluster.start(victim)
    status = p.returncode
    log(clock, f"nightly ({action}) exited {status}; manifest last_day {cluster.manifest().get('last_day')}")


def finish(cluster, clock, log, ledger, args):
    """Every day closed and archived, every API drained; then every answer against the ledger."""
    problems = []
    for name in cluster.names():
        if not cluster.up(name):
            cluster.start(name)
    last_day = (T0 // 86400) + args.days  # the run's last (partial) day
    # Move past the last day so that every day closes, then run the nightly until the archive
    # holds every day and nothing waits anywhere: no API backlog (increments held behind a
    # slot that a killed night did not release are delivered once it is) and no late data.
    clock.set_speed(1.0)
    clock.jump((last_day + 2) * 86400 + 3600)
    time.sleep(0.2)

    def backlog_and_late():
        s = [cluster.api_stats(n) for n in range(2)]
        backlog = sum(sh["backlog_records"] for x in s for sh in x["realtime"])
        return backlog, sum(x["late"]["entries"] for x in s)

    for attempt in range(6):
        deadline = time.monotonic() + 30
        while backlog_and_late()[0] and time.monotonic() < deadline:
            time.sleep(0.2)
        p = cluster.nightly()
        p.wait()
        backlog, late = backlog_and_late()
        last = cluster.manifest().get("last_day")
        log(clock, f"final nightly #{attempt + 1} exited {p.returncode}; manifest last_day {last}; "
                   f"API backlog {backlog}, late entries pending {late}")
        if p.returncode == 0 and last == day_text(last_day) and backlog == 0 and late == 0:
            break
    else:
        problems.append(f"the final nightlies did not archive through {day_text(last_day)} with nothing pending")
    # Totals, hour by hour, for every key: the archive holds every day now.
    hours = (args.days + 1) * 24 + 72
    ref = (last_day + 1) * 86400 - 3600
    checked = 0
    for key in KEYS:
        path = "/series?" + urllib.parse.urlencode({"ns": "u", "key": key, "unit": "hour", "units": hours,
                                                    "unit_reference_ts": ref})
        status, body = call(cluster.api_ports[0], "GET", path, timeout=60)
        if status != 200:
            problems.append(f"{path}: {status} {body[:200]!r}")
            continue
        got = {b["dt"]: b["value"] for b in json.loads(body)["data"]["series"]}
        want_hours = {h for (k, h) in list(ledger.totals) + list(ledger.doubt_totals) if k == key}
        for hour in set(got) | want_hours:
            want = ledger.totals.get((key, hour), 0)
            doubt = ledger.doubt_totals.get((key, hour), 0)
            have = got.get(hour, 0)
            checked += 1
            if not (want <= have <= want + doubt):
                problems.append(f"u|{key} at {time.strftime('%Y-%m-%d %H:00', time.gmtime(hour))}: cluster {have}, "
                                f"acknowledged {want}" + (f" (+{doubt} in doubt)" if doubt else ""))
    # Subtotals per key over the whole run, hashed subkeys shown as their originals.
    for key in KEYS:
        for subns, names in (("c", COUNTRIES), ("r", REFERRERS)):
            path = "/breakdown?" + urllib.parse.urlencode({"ns": "u", "key": key, "sub": subns, "unit": "hour",
                                                           "units": hours, "unit_reference_ts": ref, "limit": 1000})
            status, body = call(cluster.api_ports[1], "GET", path, timeout=60)
            if status != 200:
                problems.append(f"{path}: {status} {body[:200]!r}")
                continue
            got = {b["subkey"]: b["value"] for b in json.loads(body)["data"]["breakdown"]}
            for name in names:
                want = sum(v for (s, k, sk, _), v in ledger.subs.items() if s == subns and k == key and sk == name)
                have = got.get(name, 0)
                doubt = sum(v for (k, _), v in ledger.doubt_totals.items() if k == key)
                checked += 1
                if not (want <= have <= want + doubt):
                    problems.append(f"{subns}.u|{key} {name}: cluster {have}, acknowledged {want}")
    log(clock, f"checked {checked} key-hours and subtotals against the ledger: "
               f"{'all equal' if not problems else str(len(problems)) + ' problems'}")
    return problems


if __name__ == "__main__":
    sys.exit(main())
