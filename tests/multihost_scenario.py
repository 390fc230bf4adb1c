"""What every multi-host fault test starts from (tests/test_multihost_*.py): the cluster of
tests/multihost_cluster.py on its clock at day T 12:00 UTC, three days of history in the
archive (T-4..T-2), quiet keys with known hours on every realtime day, and the keys the
load writes.

    with scenario(tmp_path) as s:          # skips loudly without root
        load = s.load(hours=s.live_hours).start()
        …fault…
        load.stop()
        s.report("partition", load)         # the exact-count check, figures printed
"""
import calendar
import contextlib

from harness import wait_until
from hosts import require_root
from multihost_cluster import APIS, DAY, HOUR, HostCluster, realtime_shard
from multihost_load import Load, check_counts
from formats import ymdh

T = calendar.timegm((2026, 3, 10, 0, 0, 0)) // DAY
HISTORY_DAYS = range(T - 4, T - 1)  # in the archive from the start
LOAD_KEYS = [("u", f"k{n:02d}") for n in range(18)]


def ts(day, hour=0):
    return day * DAY + hour * HOUR


def quiet_keys():
    """Two keys per realtime shard, no writer touches them."""
    keys, n = [], 0
    while len(keys) < 6:
        key = f"q{n}"
        if sum(1 for k in keys if realtime_shard("u", k) == realtime_shard("u", key)) < 2:
            keys.append(key)
        n += 1
    return [("u", k) for k in keys]


class Scenario:
    def __init__(self, cluster):
        self.c = cluster
        self.history = {}  # (ns, key, hour) -> value in the archive
        for day in HISTORY_DAYS:
            for ns, key in LOAD_KEYS + quiet_keys():
                self.history[(ns, key, ts(day, 10))] = 5
        self.quiet = {}
        self.live_hours = [ts(d, h) for d in (T, T + 1) for h in range(24)]  # today and tomorrow
        self.first_hour = ts(T - 4)
        self.hours = 6 * 24  # T-4 .. T+1

    def boot(self):
        c = self.c
        c.set_time(ts(T, 12))
        c.start([f"{ns}|{key}.{ymdh(hour)},{v}" for (ns, key, hour), v in sorted(self.history.items())])
        # The quiet keys' realtime hours: yesterday, today, tomorrow.
        for ns, key in quiet_keys():
            want = {ts(d, 10): 5 for d in HISTORY_DAYS}
            for n, day in enumerate((T - 1, T, T + 1)):
                value = 3 + n
                r = c.post("api1", "/incr", f"ns={ns}&key={key}&ts={ts(day, 10)}&value={value}\n")
                assert r.status == 200, r
                want[ts(day, 10)] = value
            self.quiet[(ns, key)] = want
        c.wait_delivered()
        for (ns, key), want in self.quiet.items():
            for api in APIS:
                status, got = c.series(api, ns, key, min(want), (max(want) - min(want)) // HOUR + 1)
                assert status == 200 and {t: v for t, v in got.items() if v} == want, (api, key, status, got)

    def load(self, hours=None, **kw):
        kw.setdefault("quiet", self.quiet)
        return Load(self.c, LOAD_KEYS, hours or self.live_hours, **kw)

    def quiet_on_shard(self, shard):
        return [k for k in self.quiet if realtime_shard(*k) == shard]

    def check(self, what, load, api="api1", earlier=()):
        """Delivery settles, then the exact-count check; prints and returns the figures.
        earlier: loads that counted in the same ledger before `load`."""
        wait_until(lambda: all(self.c.backlog(a) == 0 for a in APIS if a in self.c.procs), timeout=180,
                   what="every API delivering everything")
        acked, counted, doubt = check_counts(self.c, load.ledger, self.history, self.first_hour, self.hours,
                                             api=api)
        loads = list(earlier) + [load]
        assert sum(x.stats["acked_events"] for x in loads) == acked, ([x.stats for x in loads], acked)
        for x in loads:
            assert not x.refused, x.refused[:5]
            assert not x.wrong, x.wrong[:5]
        queries = dict(sorted(((f"{p}: {o}"), n) for (p, o), n in load.query_results.items()))
        line = (f"MULTIHOST {what}: acknowledged {acked} events, counted {counted}, in doubt {doubt}; "
                f"requests {dict(sorted(load.stats.items()))}; queries {queries}")
        print(line)
        for x in loads:
            for item in x.no_answers:
                print(f"MULTIHOST {what}: a query without an answer: {item}")
        return acked, counted, doubt


@contextlib.contextmanager
def scenario(tmp_path, extra_hosts=None):
    require_root()
    with HostCluster(tmp_path, extra_hosts=extra_hosts) as cluster:
        s = Scenario(cluster)
        s.boot()
        yield s
