"""Bounded load for the multi-host tests: keyed increments with safe retries, queries of
quiet keys, and the ledger that checks every count at the end.

Writers send `POST /incr` batches of EVENTS_PER_REQUEST events (value 1 each, so counts are
events) with an `Idempotency-Key` (docs/api-write.md#safe-retries), to the API a load
balancer would pick: a hash of the key (docs/operations.md#deploying-n-shards-on-n-hosts).
What happens to a request decides where it may go next:
  - 200: acknowledged, in the ledger;
  - no connection made (refused, unreachable, connect timeout): the API never saw it, so
    it goes to the other API, as a balancer fails over;
  - sent, no answer (reset, timeout): the API may have taken it; it is retried with the same
    key at the same API only (a retry elsewhere would count again), until that API answers;
  - 503: nothing was stored (OPLOG_UNAVAILABLE…): retried with the same key;
  - any other answer: refused, counted in `refused` (the tests expect none).
A request still without an answer when the drain deadline passes is in doubt: each of its
events may or may not be counted, and the final check allows exactly that.

The query thread asks /series for quiet keys — keys no writer touches, whose every hour is
known — through the APIs in turn (a GET the API did not answer goes to the other, like a
balancer). An
answer is either the exact numbers or an error status: a 200 with any other number is a
partial answer taken as whole, and fails the test (`wrong`).

Bounds: each thread stops at `stop()`, after `max_seconds`, or after `max_requests`.
"""
import collections
import http.client
import json
import random
import secrets
import threading
import time
import zlib

from multihost_cluster import API_PORT, APIS, HOUR

EVENTS_PER_REQUEST = 4


class NoConnection(Exception):
    """The request never left: no connection to the API."""


def send_incr(address, body, idem_key, timeout=10.0):
    """POST /incr; (status, status_txt). NoConnection when the connect failed; another
    OSError when the request may have reached the API but no answer came."""
    conn = http.client.HTTPConnection(address, API_PORT, timeout=timeout)
    try:
        try:
            conn.connect()
        except OSError as e:
            raise NoConnection(repr(e)) from e
        conn.request("POST", "/incr", body=body, headers={"Idempotency-Key": idem_key})
        r = conn.getresponse()
        data = r.read()
        txt = json.loads(data).get("status_txt", "") if data[:1] == b"{" else ""
        return r.status, txt
    except http.client.HTTPException as e:
        raise ConnectionError(repr(e)) from e
    finally:
        conn.close()


class Ledger:
    """Per (ns, key, hour): events acknowledged and events in doubt."""

    def __init__(self):
        self.acked = collections.Counter()
        self.doubt = collections.Counter()
        self.lock = threading.Lock()

    def add(self, events, acknowledged):
        with self.lock:
            for ns, key, hour in events:
                (self.acked if acknowledged else self.doubt)[(ns, key, hour)] += 1

    def keys(self):
        return sorted({(ns, key) for ns, key, _ in list(self.acked) + list(self.doubt)})


class Load:
    def __init__(self, cluster, keys, hours, rate=15.0, writers=2, seed=1, max_seconds=300,
                 max_requests=20000, quiet=None, ledger=None):
        """keys: [(ns, key)] the writers use; hours: the hour timestamps they write to; rate:
        requests a second per writer; quiet: {(ns, key): {hour: value}} for the query thread;
        ledger: an earlier load's, to go on counting in it."""
        self.cluster, self.keys, self.hours = cluster, keys, hours
        self.rate, self.writers, self.seed = rate, writers, seed
        self.max_seconds, self.max_requests = max_seconds, max_requests
        self.quiet = quiet or {}
        self.ledger = ledger or Ledger()
        self.run_id = secrets.token_hex(4)  # keys of one load: unique among the loads of a test
        self.stats = collections.Counter()
        self.refused = []
        self.query_results = collections.Counter()  # (phase, outcome) -> n
        self.wrong = []
        self.no_answers = []  # (phase, api, key, error) of queries that got no answer
        self.phase = "steady"  # the test names what is going on; query outcomes are kept per phase
        self.down = set()  # APIs the test has stopped: the balancer's health check sends nothing there
        self._stop = threading.Event()
        self._pending = []  # requests without a final answer: dicts
        self._pending_lock = threading.Lock()
        self._threads = []
        self._sent = 0
        self._sent_lock = threading.Lock()

    # -- control ---------------------------------------------------------------------------
    def start(self):
        self._deadline = time.monotonic() + self.max_seconds
        for w in range(self.writers):
            self._threads.append(threading.Thread(target=self._writer, args=(w,), daemon=True))
        if self.quiet:
            self._threads.append(threading.Thread(target=self._querier, daemon=True))
        for t in self._threads:
            t.start()
        return self

    def stop(self, drain_seconds=90):
        """Stops sending new requests, retries the ones without an answer until drain_seconds
        pass, and books the rest in doubt. Returns self."""
        self._stop.set()
        for t in self._threads:
            t.join(timeout=60)
        assert not any(t.is_alive() for t in self._threads), "a load thread did not stop"
        deadline = time.monotonic() + drain_seconds
        while self._pending and time.monotonic() < deadline:
            self._retry_pending()
            if self._pending:
                time.sleep(0.2)
        for req in self._pending:
            self.ledger.add(req["events"], acknowledged=False)
            self.stats["in_doubt_requests"] += 1
        self._pending = []
        return self

    def wait_acked(self, n, timeout=60):
        deadline = time.monotonic() + timeout
        while self.stats["acked_requests"] < n:
            assert time.monotonic() < deadline, f"only {self.stats['acked_requests']} of {n} requests acknowledged"
            time.sleep(0.05)

    # -- writers ---------------------------------------------------------------------------
    def _new_request(self, rnd, w):
        with self._sent_lock:
            self._sent += 1
            n = self._sent
        events = [(ns, key, rnd.choice(self.hours)) for ns, key in
                  (rnd.choice(self.keys) for _ in range(EVENTS_PER_REQUEST))]
        body = "".join(f"ns={ns}&key={key}&ts={hour + rnd.randrange(HOUR)}&value=1\n" for ns, key, hour in events)
        idem = f"mh-{self.run_id}-{w}-{n}"
        api = APIS[zlib.crc32(idem.encode()) % len(APIS)]
        return {"events": [(ns, key, hour) for ns, key, hour in events], "body": body.encode(), "key": idem,
                "api": api, "pinned": False, "tries": 0}

    def _attempt(self, req):
        """One try; True when the request has its final outcome."""
        api = req["api"]
        if not req["pinned"] and api in self.down:
            api = req["api"] = next(a for a in APIS if a != api and a not in self.down) \
                if any(a not in self.down for a in APIS if a != api) else api
        req["tries"] += 1
        try:
            status, txt = send_incr(self.cluster.addr(api), req["body"], req["key"])
        except NoConnection:
            self.stats["no_connection"] += 1
            if not req["pinned"]:  # never reached it: the balancer's next API
                req["api"] = next(a for a in APIS if a != api)
            return False
        except OSError:
            self.stats["no_answer"] += 1
            req["pinned"] = True  # it may have counted there: retry only there
            return False
        if status == 200:
            self.ledger.add(req["events"], acknowledged=True)
            self.stats["acked_requests"] += 1
            self.stats["acked_events"] += len(req["events"])
            if req["tries"] > 1:
                self.stats["acked_after_retry"] += 1
            return True
        if status == 503:
            self.stats[f"503 {txt}"] += 1
            return False
        self.refused.append((status, txt, req["key"]))
        self.stats["refused_requests"] += 1
        return True

    def _retry_pending(self):
        with self._pending_lock:
            todo, self._pending = self._pending, []
        for req in todo:
            if not self._attempt(req):
                with self._pending_lock:
                    self._pending.append(req)

    def _writer(self, w):
        rnd = random.Random(self.seed * 1000 + w)
        interval = 1.0 / self.rate
        next_at = time.monotonic()
        while not self._stop.is_set() and time.monotonic() < self._deadline and self._sent < self.max_requests:
            if w == 0 and self._pending:
                self._retry_pending()
            req = self._new_request(rnd, w)
            if not self._attempt(req):
                with self._pending_lock:
                    self._pending.append(req)
            next_at += interval
            pause = next_at - time.monotonic()
            if pause > 0:
                self._stop.wait(pause)  # pacing the load, not waiting for a state
            else:
                next_at = time.monotonic()

    # -- queries ---------------------------------------------------------------------------
    def _querier(self):
        items = sorted(self.quiet.items())
        n = 0
        while not self._stop.is_set() and time.monotonic() < self._deadline:
            (ns, key), want = items[n % len(items)]
            first = min(want)
            hours = (max(want) - first) // HOUR + 1
            api = APIS[n % len(APIS)]
            n += 1
            phase = self.phase
            outcome = self._query(api, ns, key, first, hours, want)
            if outcome in ("no connection", "no answer"):
                # The balancer tries the other API: on no connection, and for a GET also when
                # the connection closed without an answer (nginx's proxy_next_upstream
                # default, `error timeout`): an API stopping abandons the queries still
                # waiting on a backend (net/http_server.h).
                other = next(a for a in APIS if a != api)
                again = self._query(other, ns, key, first, hours, want)
                outcome = f"{again} (balancer retry after {outcome})" if again == "exact" else again
            self.query_results[(phase, outcome)] += 1
            self._stop.wait(0.05)  # pacing

    def _query(self, api, ns, key, first, hours, want):
        started = time.monotonic()
        try:
            status, got = self.cluster.series(api, ns, key, first, hours, timeout=15)
        except ConnectionRefusedError:
            return "no connection"
        except OSError as e:
            self.no_answers.append((self.phase, api, key, f"{e!r} after {time.monotonic() - started:.2f} s"
                                                          f" (at {time.monotonic():.2f})"))
            return "no answer"
        if status != 200:
            return f"{status} {got}"
        got = {t: v for t, v in got.items() if v}
        if got != want:
            self.wrong.append((api, key, got, want))
            return "WRONG"
        return "exact"

    # -- results ---------------------------------------------------------------------------
    def failed_queries(self, phases=None):
        return {k: v for k, v in self.query_results.items()
                if not k[1].startswith("exact") and (phases is None or k[0] in phases)}


def check_counts(cluster, ledger, history, first_hour, hours, api="api1"):
    """Every key the ledger holds, every hour from first_hour on: the answer equals history +
    acknowledged, give or take the events in doubt (acked <= counted <= acked + doubt).
    Returns (acknowledged, counted, in_doubt) in events, history excluded; asserts."""
    problems = []
    acked_total = counted_total = doubt_total = 0
    for ns, key in ledger.keys():
        status, got = cluster.series(api, ns, key, first_hour, hours, timeout=30)
        assert status == 200, (key, status, got)
        for t in range(first_hour, first_hour + hours * HOUR, HOUR):
            base = history.get((ns, key, t), 0)
            acked = ledger.acked[(ns, key, t)]
            doubt = ledger.doubt[(ns, key, t)]
            counted = got.get(t, 0) - base
            acked_total += acked
            doubt_total += doubt
            counted_total += counted
            if not acked <= counted <= acked + doubt:
                problems.append(f"{ns}|{key} hour {t}: counted {counted}, acknowledged {acked}, in doubt {doubt}")
    assert not problems, "counts differ:\n" + "\n".join(problems[:40])
    return acked_total, counted_total, doubt_total
