"""clickatron-realtime: the Tokyo Cabinet day ring of one realtime shard (docs/realtime.md).

Every test runs the real binary on 127.0.0.1 with its own data directory.
"""
import calendar
import os
import random
import threading
import time
import urllib.parse

import requests

from harness import SECRET, SECRET_HEADER, SENDER, binary, free_port, get, post, run, wait_until
from formats import day_text, footer
import formats

DAY0 = calendar.timegm((2026, 11, 20, 0, 0, 0)) // 86400  # a Friday; slot DAY0 % 3


def ymdh(day, hour=0):
    return formats.ymdh(day * 86400 + hour * 3600)


def key(name, day, hour=0, sub=None):
    if sub:
        return f"ref.u|{name}.{sub}.{ymdh(day, hour)}"
    return f"u|{name}.{ymdh(day, hour)}"


def q(k):
    return urllib.parse.quote(k, safe="")


def verify_export(body):
    """Returns the records of an export as a dict; raises ValueError if its last line is not
    the footer (docs/formats.md#export-footer) of the bytes before it."""
    cut = body.rfind(b"\n", 0, len(body) - 1) + 1
    if not body.endswith(b"\n") or body[cut:] != footer(body[:cut]):
        raise ValueError(f"no #END footer matching the export: {body[cut:][:100]!r}")
    lines = body[:cut].decode().splitlines()
    keys = [line.split(",", 1)[0] for line in lines]
    assert keys == sorted(keys, key=lambda k: k.encode()), "export is not in key order"
    return dict(line.split(",", 1) for line in lines)


def start(procs, tmp_path, sync="1s", data=None, extra=()):
    data = data or (tmp_path / "data")
    data.mkdir(exist_ok=True)
    port = free_port()
    proc = procs.start("clickatron-realtime",
                       ["--data-dir", data, "--port", port, "--sync-interval", sync, *extra],
                       ready_port=port)
    return proc, port, data


def incr(port, lines, source="api-1", seq=1, sender=SENDER):
    body = "".join(f"{k},{d}\n" for k, d in lines)
    return post(port, f"/incr?source={source}&seq={seq}", body, headers=sender)


def stats(port):
    r = get(port, "/stats")
    assert r.status == 200
    return r.json()["data"]


def export(port, day):
    r = get(port, f"/export?day={day_text(day)}")
    assert r.status == 200, r
    return verify_export(r.body)


def test_increments_across_three_days(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    lines = [(key("a", DAY0, 1), 5), (key("a", DAY0 + 1, 2), 7), (key("a", DAY0 + 2, 23), -3),
             (key("a", DAY0, 1, sub="US"), 5), (key("a", DAY0, 1), 1)]
    r = incr(port, lines, seq=1)
    assert r.status == 200, r
    assert r.json() == {"status_code": 200, "status_txt": "OK",
                        "data": {"applied": 5, "duplicate": 0, "seq": 1}}
    assert get(port, "/get?key=" + q(key("a", DAY0, 1))).body == b"6\n"
    assert get(port, "/get?key=" + q(key("a", DAY0 + 2, 23))).body == b"-3\n"
    missing = get(port, "/get?key=" + q(key("a", DAY0 + 3, 1)))
    assert (missing.status, missing.body) == (404, b"")
    r = get(port, "/mget?key=" + q(key("a", DAY0 + 1, 2)) + "&k=" + q(key("zz", DAY0)) +
            "&key=" + q(key("a", DAY0, 1)))
    assert r.body.decode() == f"{key('a', DAY0 + 1, 2)},7\n{key('a', DAY0, 1)},6\n"
    r = get(port, "/fwmatch?key=" + q("u|a."))
    assert r.body.decode() == (f"{key('a', DAY0, 1)},6\n{key('a', DAY0 + 1, 2)},7\n"
                               f"{key('a', DAY0 + 2, 23)},-3\n")
    assert get(port, "/fwmatch?key=" + q("u|a.") + "&limit=1").body.decode() == f"{key('a', DAY0, 1)},6\n"
    s = stats(port)
    by_day = {slot["day"]: slot for slot in s["slots"]}
    for d, records in ((DAY0, 2), (DAY0 + 1, 1), (DAY0 + 2, 1)):
        slot = by_day[day_text(d)]
        assert slot["slot"] == d % 3
        assert (slot["state"], slot["records"], slot["sources"]) == ("open", records, {"api-1": 1})
        assert slot["file_bytes"] > 0
    assert s["sources"]["api-1"]["seq"] == 1
    assert s["counters"]["incr_applied"] == 5


def test_slot_not_released_then_release_then_reuse(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    # DAY0 + 3 shares DAY0's slot, which is still open: refused, and nothing of the batch lands.
    r = incr(port, [(key("b", DAY0 + 1), 1), (key("a", DAY0 + 3), 1)], seq=2)
    assert r.status == 503
    body = r.json()
    assert (body["status_txt"], body["data"]) == ("SLOT_NOT_RELEASED", None)
    assert body["message"] == (f"cannot take {day_text(DAY0 + 3)}: slot {DAY0 % 3} holds "
                               f"{day_text(DAY0)} (open), not released yet")
    assert get(port, "/get?key=" + q(key("b", DAY0 + 1))).status == 404
    assert [s["day"] for s in stats(port)["slots"]].count(None) == 2

    r = post(port, f"/release?day={day_text(DAY0 + 3)}")
    assert (r.status, r.json()["status_txt"]) == (404, "DAY_NOT_HELD")
    assert post(port, f"/close?day={day_text(DAY0)}").status == 200
    for _ in range(2):  # idempotent
        r = post(port, f"/release?day={day_text(DAY0)}")
        assert r.status == 200, r
        assert r.json()["data"] == {"day": day_text(DAY0), "state": "released"}
    slot = stats(port)["slots"][DAY0 % 3]
    assert (slot["day"], slot["state"], slot["records"]) == (day_text(DAY0), "released", 1)
    assert export(port, DAY0) == {key("a", DAY0): "5"}  # still exportable until reused

    r = incr(port, [(key("b", DAY0 + 1), 1), (key("a", DAY0 + 3), 2)], seq=2)
    assert r.status == 200, r
    slot = stats(port)["slots"][DAY0 % 3]
    assert (slot["day"], slot["state"], slot["records"], slot["sources"]) == \
        (day_text(DAY0 + 3), "open", 1, {"api-1": 2})
    assert get(port, "/get?key=" + q(key("a", DAY0))).status == 404
    assert export(port, DAY0 + 3) == {key("a", DAY0 + 3): "2"}
    assert get(port, f"/export?day={day_text(DAY0)}").status == 404

    r = incr(port, [(key("a", DAY0), 1)], seq=3)
    assert r.status == 409
    assert r.json()["status_txt"] == "DAY_CLOSED"
    assert r.json()["message"] == f"day {day_text(DAY0)} is closed: the shard is closed through {day_text(DAY0)}"


def test_duplicate_seq_is_skipped(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    batch = [(key("a", DAY0), 5), (key("a", DAY0 + 1), 2)]
    assert incr(port, batch, seq=10).json()["data"] == {"applied": 2, "duplicate": 0, "seq": 10}
    assert incr(port, batch, seq=10).json()["data"] == {"applied": 0, "duplicate": 2, "seq": 10}
    assert incr(port, batch, seq=3).json()["data"] == {"applied": 0, "duplicate": 2, "seq": 3}
    assert incr(port, batch, source="api-2", seq=1).json()["data"] == {"applied": 2, "duplicate": 0, "seq": 1}
    assert incr(port, batch, seq=11).json()["data"] == {"applied": 2, "duplicate": 0, "seq": 11}
    assert get(port, "/get?key=" + q(key("a", DAY0))).body == b"15\n"
    assert get(port, "/get?key=" + q(key("a", DAY0 + 1))).body == b"6\n"
    s = stats(port)
    assert s["sources"]["api-1"]["seq"] == 11 and s["sources"]["api-2"]["seq"] == 1
    assert s["counters"]["incr_duplicate_batches"] == 2


def test_export_is_the_sum_of_what_was_sent(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    rng = random.Random(4)
    names = [f"k{i}" for i in range(150)]
    expected = {DAY0: {}, DAY0 + 1: {}}
    session = requests.Session()
    session.headers.update({**SENDER, SECRET_HEADER: SECRET})
    for seq in range(1, 31):
        lines = []
        for _ in range(400):
            d = rng.choice((DAY0, DAY0 + 1))
            k = key(rng.choice(names), d, rng.randrange(24), sub=rng.choice((None, "US", "h0aMB8AuNw4=")))
            delta = rng.randrange(-5, 1000)
            lines.append((k, delta))
            expected[d][k] = expected[d].get(k, 0) + delta
        body = "".join(f"{k},{v}\n" for k, v in lines)
        r = session.post(f"http://127.0.0.1:{port}/incr?source=exp&seq={seq}", data=body)
        assert r.status_code == 200 and r.json()["data"]["applied"] == 400, r.text
    r = post(port, f"/set?day={day_text(DAY0)}", "_l|h0aMB8AuNw4=,http://www.facebook.com/\n_l|AAAAAAAAAAA=,a%0Ab\n")
    assert r.json()["data"] == {"set": 2, "day": day_text(DAY0)}
    expected[DAY0]["_l|h0aMB8AuNw4="] = "http://www.facebook.com/"
    expected[DAY0]["_l|AAAAAAAAAAA="] = "a%0Ab"
    for d in (DAY0, DAY0 + 1):
        assert export(port, d) == {k: str(v) for k, v in expected[d].items()}
    assert get(port, "/get?key=" + q("_l|AAAAAAAAAAA=")).body == b"a%0Ab\n"

    # Any truncation or damage of an export is detected by its footer.
    body = get(port, f"/export?day={day_text(DAY0)}").body
    assert len(body) > 64 * 1024  # more than one chunk
    verify_export(body)
    last = body.rfind(b"\n", 0, len(body) - 1) + 1
    damaged = [body[:last], body[:-1], body[:len(body) // 2], body[:last - 1] + body[last:],
               body[:100] + body[200:], body.replace(b",1\n", b",2\n", 1)]
    for bad in damaged:
        try:
            verify_export(bad)
        except ValueError:
            continue
        raise AssertionError("damaged export passed verification")


def test_bad_requests_change_nothing(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    big = 9223372036854775800
    assert incr(port, [(key("a", DAY0), big)], seq=1).status == 200
    before = export(port, DAY0)

    def err(r, code, txt, message=None):
        assert r.status == code, r
        body = r.json()
        assert (body["status_code"], body["status_txt"], body["data"]) == (code, txt, None)
        if message is not None:
            assert body["message"] == message

    good = f"{key('b', DAY0)},1\n"
    err(post(port, "/incr?seq=2", good), 400, "MISSING_ARG_SOURCE")
    err(post(port, "/incr?source=api-1", good, headers=SENDER), 400, "MISSING_ARG_SEQ")
    err(post(port, "/incr?source=api-1&seq=-1", good, headers=SENDER), 400, "INVALID_ARG_SEQ")
    err(post(port, "/incr?source=api-1&seq=x1", good, headers=SENDER), 400, "INVALID_ARG_SEQ")
    err(post(port, "/incr?source=a%20b&seq=2", good, headers=SENDER), 400, "INVALID_ARG_SOURCE")
    err(post(port, "/incr?source=api-1&seq=%zz", good, headers=SENDER), 400, "INVALID_ARG_SEQ")
    err(post(port, "/incr?source=api-1&seq=2", good + "u|b.zzzz,1\n", headers=SENDER), 400, "INVALID_LINE")
    assert post(port, "/incr?source=api-1&seq=2", good + "u|b.zzzz,1\n", headers=SENDER).json()["message"].startswith("line 2: ")
    err(post(port, "/incr?source=api-1&seq=2", good + f"{key('c', DAY0)},1.5\n", headers=SENDER), 400, "INVALID_LINE",
        "line 2: delta: count '1.5' is not an integer")
    err(post(port, "/incr?source=api-1&seq=2", good + f"{key('c', DAY0)},99999999999999999999\n", headers=SENDER),
        400, "INVALID_LINE")
    err(post(port, "/incr?source=api-1&seq=2", good + "_l|h0aMB8AuNw4=,x\n", headers=SENDER), 400, "INVALID_LINE")
    # A counter leaves 128 bits only past 2^64 increments (docs/formats.md#counts): the
    # realtime's COUNTER_OVERFLOW is pinned by realtime/ring_test.cc on a seeded counter.
    err(get(port, "/incr?source=api-1&seq=2"), 405, "METHOD_NOT_ALLOWED")
    err(post(port, "/set?day=2026-13-01", "_l|h0aMB8AuNw4=,x\n"), 400, "INVALID_ARG_DAY")
    err(post(port, f"/set?day={day_text(DAY0)}", "_l|h0aMB8AuNw4=,100%\n"), 400, "INVALID_LINE")
    err(post(port, "/release"), 400, "MISSING_ARG_DAY")
    err(get(port, "/export?day=yesterday"), 400, "INVALID_ARG_DAY")
    err(get(port, "/get"), 400, "MISSING_ARG_KEY")
    err(get(port, "/mget?x=1"), 400, "MISSING_ARG_KEY")
    err(get(port, "/fwmatch?key="), 400, "INVALID_ARG_KEY")
    err(get(port, "/fwmatch?key=u&limit=0"), 400, "INVALID_ARG_LIMIT")
    assert get(port, "/get?key=" + q("#day")).status == 404  # metadata is invisible
    assert get(port, "/get?key=garbage").status == 404
    assert get(port, "/nope").status == 404
    assert export(port, DAY0) == before
    s = stats(port)
    assert s["slots"][DAY0 % 3]["sources"] == {"api-1": 1}
    assert s["counters"]["refused_overflow"] == 0
    # The refused seq 2 was never recorded: it still applies.
    assert incr(port, [(key("b", DAY0), 1)], seq=2).json()["data"]["applied"] == 1


def test_clean_shutdown_keeps_everything(procs, tmp_path):
    proc, port, data = start(procs, tmp_path, sync="3600s")  # only the shutdown commit syncs
    assert incr(port, [(key("a", DAY0), 5), (key("a", DAY0 + 1), 1)], seq=1).status == 200
    assert proc.terminate() == 0
    _, port, _ = start(procs, tmp_path, data=data)
    assert export(port, DAY0) == {key("a", DAY0): "5"}
    assert stats(port)["sources"]["api-1"] == {"seq": 1, "synced_seq": 1}


def batch_for(seq, names):
    """Batch `seq` of the kill -9 test: 100 (key, delta, day) over two days, the same every time."""
    rng = random.Random(seq)
    batch = []
    for _ in range(100):
        day = DAY0 + rng.randrange(2)
        batch.append((key(rng.choice(names), day, rng.randrange(24)), rng.randrange(1, 100), day))
    return batch


def test_kill9_mid_stream_then_resend_is_exact(procs, tmp_path):
    proc, port, data = start(procs, tmp_path, sync="100ms")
    names = [f"user{i}" for i in range(500)]
    total = 400
    acked = [0]
    stop = threading.Event()

    def send():
        session = requests.Session()
        session.headers.update({**SENDER, SECRET_HEADER: SECRET})
        for seq in range(1, total + 1):
            if stop.is_set():
                return
            body = "".join(f"{k},{d}\n" for k, d, _ in batch_for(seq, names))
            try:
                r = session.post(f"http://127.0.0.1:{port}/incr?source=api-1&seq={seq}", data=body, timeout=10)
            except requests.RequestException:
                return
            if r.status_code != 200:
                return
            acked[0] = seq

    sender = threading.Thread(target=send)
    sender.start()
    wait_until(lambda: acked[0] >= 150, timeout=60, what="150 acknowledged batches")
    proc.kill9()
    stop.set()
    sender.join()
    last = acked[0]
    assert 150 <= last < total

    _, port, _ = start(procs, tmp_path, data=data)
    # Each day's slot kept exactly what its last sync covered, and says so in its mark. The
    # two slots sync one after the other, so on a loaded machine one may lag the other by
    # many batches: the re-send starts before the lower mark, as a sender's saved cursor
    # does, and every line of a seq at or below a slot's mark must come back a duplicate.
    # (The two days' slots: the ring's third holds nothing; a slot never synced says 0.)
    marks = sorted(slot["sources"].get("api-1", 0) for slot in stats(port)["slots"])[-2:]
    assert 0 < max(marks) <= last, marks
    session = requests.Session()
    session.headers.update({**SENDER, SECRET_HEADER: SECRET})
    duplicates = 0
    for seq in range(max(1, min(marks) - 10), total + 1):
        body = "".join(f"{k},{d}\n" for k, d, _ in batch_for(seq, names))
        r = session.post(f"http://127.0.0.1:{port}/incr?source=api-1&seq={seq}", data=body)
        assert r.status_code == 200, r.text
        duplicates += r.json()["data"]["duplicate"]
    assert duplicates > 0  # the re-sent batches that had survived were skipped, not re-added

    expected = {DAY0: {}, DAY0 + 1: {}}
    for seq in range(1, total + 1):
        for k, d, day in batch_for(seq, names):
            expected[day][k] = expected[day].get(k, 0) + d
    for d in (DAY0, DAY0 + 1):
        assert export(port, d) == {k: str(v) for k, v in expected[d].items()}


def test_synced_seq_is_truthful_when_killed_during_a_flush(procs, tmp_path):
    """The default 1 s interval: flushes run on the flusher thread while batches keep being
    acknowledged. Whatever /stats called synced_seq just before a kill -9 (most likely mid-
    flush: wide batches keep the flusher busy) survives it, and it trailed the acks by well
    under the API's 3 s cursor lag."""
    proc, port, data = start(procs, tmp_path)
    names = [f"w{i:05d}" for i in range(4000)]
    acked = [0]
    acked_at = {}
    stop = threading.Event()

    def body(seq):
        return "".join(f"{key(n, DAY0, seq % 24)},1\n" for n in names)

    def send():
        session = requests.Session()
        session.headers.update({**SENDER, SECRET_HEADER: SECRET})
        seq = 0
        while not stop.is_set():
            seq += 1
            try:
                r = session.post(f"http://127.0.0.1:{port}/incr?source=api-1&seq={seq}", data=body(seq),
                                 timeout=10)
            except requests.RequestException:
                return
            if r.status_code != 200:
                return
            acked_at[seq] = time.monotonic()
            acked[0] = seq

    sender = threading.Thread(target=send)
    sender.start()
    synced = -1
    lags = []
    deadline = time.monotonic() + 60
    while synced < 20 or len(lags) < 3:
        assert time.monotonic() < deadline, "synced_seq did not advance"
        now_synced = stats(port)["sources"].get("api-1", {}).get("synced_seq", -1)
        if now_synced > synced:
            if now_synced in acked_at:
                lags.append(time.monotonic() - acked_at[now_synced])
            synced = now_synced
    proc.kill9()
    stop.set()
    sender.join()
    assert max(lags) < 2.9, lags  # ack → reported durable (the API re-sends from 3 s back)

    _, port, _ = start(procs, tmp_path, data=data)
    mark = stats(port)["slots"][DAY0 % 3]["sources"]["api-1"]
    assert synced <= mark <= acked[0]
    # Exactly the batches up to the mark: each added 1 to every name in its hour.
    exported = export(port, DAY0)
    for hour in range(24):
        batches = sum(1 for seq in range(1, mark + 1) if seq % 24 == hour)
        for n in names[::500]:
            assert exported.get(key(n, DAY0, hour)) == (str(batches) if batches else None)


def read_chunked(sock, first):
    """Reads an HTTP/1.1 chunked response whose bytes start with `first`; returns the body."""
    buf = first
    while b"\r\n\r\n" not in buf:
        buf += sock.recv(65536)
    head, buf = buf.split(b"\r\n\r\n", 1)
    assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower(), head
    body = b""
    while True:
        while b"\r\n" not in buf:
            more = sock.recv(65536)
            if not more:
                raise ValueError("connection closed mid-chunk")
            buf += more
        size_line, buf = buf.split(b"\r\n", 1)
        size = int(size_line, 16)
        while len(buf) < size + 2:
            more = sock.recv(65536)
            if not more:
                raise ValueError("connection closed mid-chunk")
            buf += more
        body, buf = body + buf[:size], buf[size + 2:]
        if size == 0:
            return body


def test_export_streams_while_increments_arrive(procs, tmp_path):
    import socket
    _, port, _ = start(procs, tmp_path)
    session = requests.Session()
    session.headers.update({**SENDER, SECRET_HEADER: SECRET})
    # ~12 MB of export: well past the kernel's socket buffers (tcp_wmem max is 4 MB).
    names = [f"m{i:06d}" for i in range(20000)]
    for seq, start_at in enumerate(range(0, len(names), 2000), 1):
        body = "".join(f"{key(n, DAY0, h)},1\n" for n in names[start_at:start_at + 2000] for h in range(24))
        assert session.post(f"http://127.0.0.1:{port}/incr?source=s&seq={seq}", data=body).status_code == 200
    # A reader with a tiny receive buffer, so the server must wait for it between chunks.
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.connect(("127.0.0.1", port))
    sock.sendall(f"GET /export?day={day_text(DAY0)} HTTP/1.1\r\nHost: x\r\n{SECRET_HEADER}: {SECRET}\r\n\r\n".encode())
    first = sock.recv(4096)
    # While the export is under way: new keys before and after every existing one, and more
    # to existing keys. The server keeps answering, and the stream stays whole and ordered.
    late = [(key("a0", DAY0), 1), (key("zz", DAY0), 1), (key(names[-1], DAY0, 5), 1)]
    assert incr(port, late, source="s", seq=100).status == 200
    body = read_chunked(sock, first)
    sock.close()
    records = verify_export(body)
    assert len(records) >= len(names) * 24
    assert records[key(names[0], DAY0, 0)] == "1"
    assert key("zz", DAY0) in records  # written ahead of the walk
    assert key("a0", DAY0) not in records  # behind it: a walk, not a snapshot


def test_export_of_a_day_the_shard_got_no_traffic_for_is_empty(procs, tmp_path):
    """An empty slot, or one holding an older released day, never applied a record of the
    day (the first write would have reopened it): the export is empty, so the nightly job can
    archive a day this shard saw nothing of. An older unreleased day is not that case: writes
    for the day may be waiting in an API's oplog, so that export is refused."""
    _, port, _ = start(procs, tmp_path)
    empty = footer(b"")
    r = get(port, f"/export?day={day_text(DAY0)}")
    assert (r.status, r.body) == (200, empty)
    assert verify_export(r.body) == {}

    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    r = get(port, f"/export?day={day_text(DAY0 + 3)}")  # slot holds DAY0, open
    assert (r.status, r.json()["status_txt"]) == (404, "DAY_NOT_HELD")
    assert post(port, f"/close?day={day_text(DAY0)}").status == 200
    assert post(port, f"/release?day={day_text(DAY0)}").status == 200
    r = get(port, f"/export?day={day_text(DAY0 + 3)}")  # slot holds DAY0, released
    assert (r.status, r.body) == (200, empty)
    r = get(port, f"/export?day={day_text(DAY0 - 3)}")  # older than the slot's day: gone
    assert (r.status, r.json()["status_txt"]) == (404, "DAY_NOT_HELD")
    assert export(port, DAY0) == {key("a", DAY0): "5"}  # the held day is untouched


def synced_seq(port, source="api-1"):
    return stats(port)["sources"].get(source, {}).get("synced_seq", -1)


def test_synced_seq_waits_for_fsync_and_a_kill_before_it_loses_nothing(procs, tmp_path):
    """Power loss hits the window between Tokyo Cabinet's commit (page cache) and the fsync
    (device). A preloaded fault injector holds every fsync of the slot files while a file
    exists: the shard commits but cannot reach the device. The synced_seq it reports (and
    the API's oplog cursor follows) must not move in that window; it moves once the fsync
    is let go. A kill -9 inside the window loses nothing a process death can lose, and the
    restarted shard reports exactly what its files hold."""
    hold = tmp_path / "hold-fsync"
    held = tmp_path / "hold-fsync.held"
    data = tmp_path / "data"
    data.mkdir()
    port = free_port()
    env = dict(os.environ, LD_PRELOAD=binary("libclickatron_hold_fsync.so"), CLICKATRON_HOLD_FSYNC=str(hold),
               ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "") + ":verify_asan_link_order=0")
    proc = procs.start("clickatron-realtime", ["--data-dir", data, "--port", port, "--sync-interval", "50ms"],
                       ready_port=port, env=env)
    k = key("p", DAY0, 3)

    def committed_and_held(seq):
        hold.touch()
        r = incr(port, [(k, 5)], seq=seq)
        assert r.status == 200, r
        wait_until(held.exists, what="the shard's fsync to be held")
        wait_until(lambda: stats(port)["slots"][DAY0 % 3]["sources"].get("api-1") == seq
                   and stats(port)["counters"]["pending_bytes"] == 0, what="the commit")

    committed_and_held(1)
    syncs = stats(port)["counters"]["syncs"]
    assert syncs >= 1
    assert synced_seq(port) == -1  # committed, not on the device
    hold.unlink()
    wait_until(lambda: synced_seq(port) == 1, what="synced_seq to follow the fsync")

    committed_and_held(2)
    assert synced_seq(port) == 1
    assert get(port, f"/get?key={q(k)}").body == b"10\n"
    proc.kill9()
    hold.unlink()

    _, port, _ = start(procs, tmp_path, data=data)
    assert stats(port)["slots"][DAY0 % 3]["sources"]["api-1"] == 2
    assert synced_seq(port) == 2
    assert get(port, f"/get?key={q(k)}").body == b"10\n"


def test_fwmatch_pages_to_the_end(procs, tmp_path):
    """An answer cut by the limit says so (X-Fwmatch-More); asking again after the last key
    got continues exactly where it stopped, and the last page says nothing more."""
    _, port, _ = start(procs, tmp_path)
    names = [f"n{i:05d}" for i in range(10100)]
    assert incr(port, [(key("big", DAY0, 4, sub=n), 1) for n in names] +
                [(key("big", DAY0, 4, sub="zz"), 500)], seq=1).status == 200
    prefix = "ref.u|big."
    got, after, pages = [], "", 0
    while True:
        r = get(port, f"/fwmatch?key={q(prefix)}" + (f"&after={q(after)}" if after else ""))
        assert r.status == 200, r
        lines = r.text.splitlines()
        got += lines
        pages += 1
        if r.headers.get("x-fwmatch-more") != "1":
            break
        assert len(lines) == 10000
        after = lines[-1].split(",", 1)[0]
    assert pages == 2
    assert len(got) == 10101
    assert got[-1] == f"{key('big', DAY0, 4, sub='zz')},500"
    assert [line.split(",")[0] for line in got] == sorted(line.split(",")[0] for line in got)
    r = get(port, f"/fwmatch?key={q(prefix)}&limit=20000")  # capped at --fwmatch-limit, and says so
    assert r.headers.get("x-fwmatch-more") == "1" and len(r.text.splitlines()) == 10000
    r = get(port, f"/fwmatch?key={q(prefix)}&after={q(got[-2].split(',')[0])}")
    assert "x-fwmatch-more" not in r.headers and r.text == got[-1] + "\n"


def test_fwsum_sums_each_subkey_over_the_hours_asked(procs, tmp_path):
    """/fwsum adds up, per subkey, the subtotal records of the key whose hour is from..to
    (both included), over every live slot (pending and flushed alike); sums of 0 are left out;
    exactly what summing the /fwmatch listing gives, for random ranges."""
    _, port, _ = start(procs, tmp_path)
    rng = random.Random(5)
    lines = []
    for day in (DAY0, DAY0 + 1):
        for hour in range(24):
            for sub in ("US", "JP", "DE", "h0aMB8AuNw4=", "zero"):
                if rng.random() < 0.3:
                    continue
                n = 0 if sub == "zero" else rng.randint(-3, 9)
                if n:
                    lines.append((key("k", day, hour, sub=sub), n))
    lines.append((key("k", DAY0, 5, sub="zero"), 4))
    lines.append((key("k", DAY0, 6, sub="zero"), -4))
    lines.append((key("kk", DAY0, 5, sub="US"), 1000))  # another key that starts the same
    assert incr(port, lines[: len(lines) // 2], seq=1).status == 200
    # The first half flushed into the slots' files, the second still pending in memory.
    wait_until(lambda: get(port, "/stats").json()["data"]["sources"]["api-1"]["synced_seq"] >= 1,
               timeout=30, what="the first batch synced")
    assert incr(port, lines[len(lines) // 2:], seq=2).status == 200
    prefix = "ref.u|k."
    listing = get(port, f"/fwmatch?key={q(prefix)}").text.splitlines()

    def expected(lo, hi):
        sums = {}
        for line in listing:
            k, v = line.split(",")
            sub, token = k[len(prefix):].rsplit(".", 1)
            if lo <= token <= hi:
                sums[sub] = sums.get(sub, 0) + int(v)
        return "".join(f"{s},{n}\n" for s, n in sorted(sums.items()) if n)

    hours = [ymdh(DAY0, h) for h in range(24)] + [ymdh(DAY0 + 1, h) for h in range(24)] + [ymdh(DAY0 + 2, 0)]
    for _ in range(30):
        lo, hi = sorted(rng.sample(hours, 2))
        r = get(port, f"/fwsum?key={q(prefix)}&from={lo}&to={hi}")
        assert r.status == 200, r
        assert r.text == expected(lo, hi), (lo, hi)
        assert "x-fwmatch-more" not in r.headers
    whole = get(port, f"/fwsum?key={q(prefix)}&from={hours[0]}&to={hours[-1]}")
    assert "zero," not in whole.text and "US," in whole.text
    assert get(port, f"/fwsum?key={q(prefix)}&from={hours[3]}&to={hours[3]}").text == expected(hours[3], hours[3])
    assert get(port, f"/fwsum?key={q(prefix)}&from={ymdh(DAY0 + 5)}&to={ymdh(DAY0 + 6)}").text == ""
    counters = get(port, "/stats").json()["data"]["counters"]
    assert counters["fwsums"] == 33 and counters["fwsum_records"] > 0


def test_fwsum_pages_add_up(procs, tmp_path):
    """A walk the limit cuts says so (X-Fwmatch-More) and where it stopped (X-Fwsum-After);
    the pages' sums, added up, are the whole answer, even with a subkey split between two."""
    _, port, _ = start(procs, tmp_path)
    lines = [(key("big", DAY0, h, sub=f"n{i:03d}"), i + h) for i in range(300) for h in range(0, 24, 3)]
    assert incr(port, lines, seq=1).status == 200
    prefix, lo, hi = "ref.u|big.", ymdh(DAY0, 2), ymdh(DAY0, 20)
    whole = get(port, f"/fwsum?key={q(prefix)}&from={lo}&to={hi}")
    assert "x-fwmatch-more" not in whole.headers
    sums, after, pages = {}, "", 0
    while True:
        r = get(port, f"/fwsum?key={q(prefix)}&from={lo}&to={hi}&limit=7" + (f"&after={q(after)}" if after else ""))
        assert r.status == 200, r
        for line in r.text.splitlines():
            sub, n = line.split(",")
            sums[sub] = sums.get(sub, 0) + int(n)
        pages += 1
        if r.headers.get("x-fwmatch-more") != "1":
            break
        after = r.headers["x-fwsum-after"]
        assert after.startswith(prefix)
    assert pages == 2400 // 7 + 1
    assert "".join(f"{s},{n}\n" for s, n in sorted(sums.items())) == whole.text
    assert whole.text.splitlines()[0] == f"n000,{sum(range(3, 21, 3))}"


def test_fwsum_refuses_bad_arguments(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    h = ymdh(DAY0, 1)
    for path, code, status in [
        ("/fwsum?from=" + h + "&to=" + h, 400, "MISSING_ARG_KEY"),
        (f"/fwsum?key={q('u|k.')}&from={h}&to={h}", 400, "INVALID_ARG_KEY"),       # a total prefix
        (f"/fwsum?key={q('ref.u|k')}&from={h}&to={h}", 400, "INVALID_ARG_KEY"),    # no '.' after the key
        (f"/fwsum?key={q('ref.u|.')}&from={h}&to={h}", 400, "INVALID_ARG_KEY"),    # no key
        (f"/fwsum?key={q('ref.u|k.')}&to={h}", 400, "MISSING_ARG_FROM"),
        (f"/fwsum?key={q('ref.u|k.')}&from={h}", 400, "MISSING_ARG_TO"),
        (f"/fwsum?key={q('ref.u|k.')}&from=c2u0&to={h}", 400, "INVALID_ARG_FROM"),
        (f"/fwsum?key={q('ref.u|k.')}&from={h}&to=xyz", 400, "INVALID_ARG_TO"),
        (f"/fwsum?key={q('ref.u|k.')}&from={ymdh(DAY0, 2)}&to={h}", 400, "INVALID_ARG_RANGE"),
        (f"/fwsum?key={q('ref.u|k.')}&from={h}&to={h}&limit=0", 400, "INVALID_ARG_LIMIT"),
    ]:
        r = get(port, path)
        assert r.status == code and r.json()["status_txt"] == status, (path, r.text)
        assert r.json()["message"], path


# --- The day lifecycle (docs/realtime.md#day-lifecycle) and source identity. ---

OTHER_SENDER = {"X-Clickatron-Sender": "0123456789abcdef"}


def close(port, day):
    r = post(port, f"/close?day={day_text(day)}")
    assert r.status == 200, r
    return r.json()["data"]


def refused(r, code, status_txt):
    assert (r.status, r.json()["status_txt"]) == (code, status_txt), r
    return r.json()["message"]


def source_mark(r):
    return int(r.headers["x-realtime-source-mark"])


def test_incr_for_an_exported_and_closed_day_is_409_day_closed(procs, tmp_path):
    _, port, data = start(procs, tmp_path, sync="3600s")  # pending in the memtable at close
    assert incr(port, [(key("a", DAY0), 5), (key("a", DAY0 + 1), 1)], seq=1).status == 200
    assert close(port, DAY0) == {"day": day_text(DAY0), "closed_through": day_text(DAY0), "slots_closed": 1}
    assert close(port, DAY0) == {"day": day_text(DAY0), "closed_through": day_text(DAY0), "slots_closed": 0}
    before = get(port, f"/export?day={day_text(DAY0)}").body
    assert verify_export(before) == {key("a", DAY0): "5"}

    r = incr(port, [(key("a", DAY0), 1)], seq=2)
    assert refused(r, 409, "DAY_CLOSED") == f"day {day_text(DAY0)} is closed: slot {DAY0 % 3} holds {day_text(DAY0)} (closed)"
    assert source_mark(r) == 1
    r = post(port, f"/set?day={day_text(DAY0)}", "_l|AAAAAAAAAAA=,x\n")
    refused(r, 409, "DAY_CLOSED")
    # A batch over a closed and an open day changes nothing, not even the open day.
    r = incr(port, [(key("a", DAY0 + 1), 1), (key("b", DAY0), 1)], seq=2)
    refused(r, 409, "DAY_CLOSED")
    assert get(port, f"/export?day={day_text(DAY0)}").body == before  # final: same bytes
    assert export(port, DAY0 + 1) == {key("a", DAY0 + 1): "1"}
    assert incr(port, [(key("a", DAY0 + 1), 1)], seq=2).status == 200  # the next day is open

    s = stats(port)
    assert s["closed_through"] == day_text(DAY0)
    states = {slot["day"]: slot["state"] for slot in s["slots"]}
    assert states == {day_text(DAY0): "closed", day_text(DAY0 + 1): "open", None: "empty"}
    assert (s["counters"]["closes"], s["counters"]["refused_closed"]) == (2, 3)
    with open(data / "closed-days") as f:
        assert f.read() == ("# clickatron-realtime closed days (docs/formats.md#realtime-closed-days)\n"
                            f"closed_through = {day_text(DAY0)}\n"
                            f"mark = {day_text(DAY0)} api-1 1\n")


def test_released_day_is_never_reopened_by_a_late_incr(procs, tmp_path):
    """The old bug: an /incr for a day after its release answered 200 and wrote into the
    released slot (or re-opened an empty one), where no export would ever see it again."""
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    close(port, DAY0)
    assert post(port, f"/release?day={day_text(DAY0)}").status == 200
    r = incr(port, [(key("a", DAY0), 1)], seq=2)
    assert refused(r, 409, "DAY_CLOSED") == (f"day {day_text(DAY0)} is closed: slot {DAY0 % 3} holds "
                                             f"{day_text(DAY0)} (released)")
    # Yesterday's slot is empty: a closed day never opens it.
    r = incr(port, [(key("a", DAY0 - 1), 1)], seq=2)
    assert refused(r, 409, "DAY_CLOSED") == (f"day {day_text(DAY0 - 1)} is closed: the shard is closed "
                                             f"through {day_text(DAY0)}")
    s = stats(port)
    assert [slot["state"] for slot in s["slots"]].count("empty") == 2
    assert s["counters"]["slot_resets"] == 1
    assert get(port, "/get?key=" + q(key("a", DAY0))).body == b"5\n"


def test_day_older_than_the_ring_never_opens_an_empty_slot(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0 + 3), 1)], seq=1).status == 200
    r = incr(port, [(key("a", DAY0 + 1), 1)], seq=2)  # an empty slot, 2 days back: opens
    assert r.status == 200, r
    r = incr(port, [(key("a", DAY0 - 1), 1)], seq=3)  # an empty slot, 4 days back
    assert refused(r, 409, "DAY_EXPIRED") == (f"day {day_text(DAY0 - 1)} has expired: the ring's newest "
                                              f"day is {day_text(DAY0 + 3)}")
    assert [slot["state"] for slot in stats(port)["slots"]].count("empty") == 1


def test_release_of_an_open_day_is_refused(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    r = post(port, f"/release?day={day_text(DAY0)}")
    assert refused(r, 409, "DAY_NOT_CLOSED") == (f"day {day_text(DAY0)} is open: close it first "
                                                 f"(POST /close?day={day_text(DAY0)})")
    assert stats(port)["slots"][DAY0 % 3]["state"] == "open"
    assert incr(port, [(key("a", DAY0), 1)], seq=2).status == 200
    assert export(port, DAY0) == {key("a", DAY0): "6"}
    refused(get(port, f"/close?day={day_text(DAY0)}"), 405, "METHOD_NOT_ALLOWED")
    refused(post(port, "/close"), 400, "MISSING_ARG_DAY")
    refused(post(port, "/close?day=2026-02-30"), 400, "INVALID_ARG_DAY")
    assert stats(port)["closed_through"] is None


def test_duplicate_after_close_release_and_reuse_is_200(procs, tmp_path):
    proc, port, data = start(procs, tmp_path)
    batch = [(key("a", DAY0), 5)]
    assert incr(port, batch, seq=7).status == 200
    close(port, DAY0)
    r = incr(port, batch, seq=7)  # closed: still a duplicate
    assert (r.status, r.json()["data"]) == (200, {"applied": 0, "duplicate": 1, "seq": 7})
    assert source_mark(r) == 7
    assert post(port, f"/release?day={day_text(DAY0)}").status == 200
    assert incr(port, [(key("b", DAY0 + 3), 1)], seq=8).status == 200  # takes DAY0's slot
    assert proc.terminate() == 0
    _, port, _ = start(procs, tmp_path, data=data)
    r = incr(port, batch, seq=7)  # the slot is gone; the marks kept at close answer
    assert (r.status, r.json()["data"]) == (200, {"applied": 0, "duplicate": 1, "seq": 7})
    assert source_mark(r) == 7
    r = incr(port, batch, seq=9)  # never applied: late
    refused(r, 409, "DAY_CLOSED")
    assert source_mark(r) == 7


def test_watermark_survives_restart(procs, tmp_path):
    proc, port, data = start(procs, tmp_path)
    # A day no slot holds closes too: the nightly closes every day on every shard.
    assert close(port, DAY0 + 1) == {"day": day_text(DAY0 + 1), "closed_through": day_text(DAY0 + 1),
                                     "slots_closed": 0}
    assert close(port, DAY0)["closed_through"] == day_text(DAY0 + 1)  # never moves back
    assert proc.terminate() == 0
    proc, port, _ = start(procs, tmp_path, data=data)
    assert stats(port)["closed_through"] == day_text(DAY0 + 1)
    refused(incr(port, [(key("a", DAY0 + 1), 1)], seq=1), 409, "DAY_CLOSED")
    empty = footer(b"")
    r = get(port, f"/export?day={day_text(DAY0 + 1)}")  # closed, never written: empty
    assert (r.status, r.body) == (200, empty)
    assert incr(port, [(key("a", DAY0 + 2), 1)], seq=1).status == 200
    assert proc.terminate() == 0
    # A damaged file is a named startup error, not a silent "nothing closed".
    with open(data / "closed-days", "w") as f:
        f.write("closed_through = 2026-11-21\nmark = 2026-11-21 api-1\n")
    r = run("clickatron-realtime", ["--data-dir", data, "--port", free_port()], timeout=30)
    assert r.returncode == 1
    assert (f"clickatron-realtime: {data}/closed-days: line 2: mark '2026-11-21 api-1' is not "
            "'YYYY-MM-DD SOURCE SEQ'") in r.stderr.decode()


def test_incr_without_a_sender_is_400_sender_missing(procs, tmp_path):
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    r = incr(port, [(key("a", DAY0), 1)], seq=2, sender={})
    assert refused(r, 400, "SENDER_MISSING") == \
        "header X-Clickatron-Sender is missing: every /incr names its sender"
    assert source_mark(r) == 1
    for bad in ("0123456789ABCDEF", "0123456789abcde", "0123456789abcdef0", "0123456789abcdeg"):
        r = incr(port, [(key("a", DAY0), 1)], seq=2, sender={"X-Clickatron-Sender": bad})
        assert refused(r, 400, "SENDER_MISSING") == \
            f"header X-Clickatron-Sender '{bad}' is not 16 lowercase hex digits"
    r = post(port, "/incr?seq=2", f"{key('a', DAY0)},1\n", headers=SENDER)
    assert (r.status, source_mark(r)) == (400, -1)  # no source: no mark
    assert get(port, "/get?key=" + q(key("a", DAY0))).body == b"5\n"
    r = incr(port, [(key("a", DAY0), 1)], seq=2)
    assert (r.status, source_mark(r)) == (200, 2)


def test_forged_source_with_a_huge_seq_is_refused_while_the_owner_is_live(procs, tmp_path):
    """The old bug: POST /incr?source=api-1&seq=9223372036854775806 from anyone moved api-1's
    mark to the top, and every later batch of the real api-1 was skipped as a duplicate."""
    _, port, _ = start(procs, tmp_path)
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    r = incr(port, [(key("a", DAY0), 1000)], seq=9223372036854775806, sender=OTHER_SENDER)
    message = refused(r, 409, "SOURCE_IN_USE")
    assert message.startswith(f"source api-1 is in use by sender {SENDER['X-Clickatron-Sender']} (last write ")
    assert message.endswith(" ms ago, lease 10000 ms): two senders use one source (node-id)?")
    assert source_mark(r) == 1
    r = incr(port, [(key("a", DAY0), 1)], seq=2)
    assert (r.status, r.json()["data"]["applied"], source_mark(r)) == (200, 1, 2)
    assert get(port, "/get?key=" + q(key("a", DAY0))).body == b"6\n"
    s = stats(port)
    assert s["counters"]["refused_source_in_use"] == 1
    assert s["sources"]["api-1"]["sender"] == SENDER["X-Clickatron-Sender"]
    # Another source is another lease.
    assert incr(port, [(key("a", DAY0), 1)], source="api-2", seq=1, sender=OTHER_SENDER).status == 200


def test_a_new_sender_takes_over_a_source_once_the_lease_expired(procs, tmp_path):
    _, port, _ = start(procs, tmp_path, extra=["--source-lease-ms", "300"])
    assert incr(port, [(key("a", DAY0), 5)], seq=1).status == 200
    # An API restarted with a new id: refused while the old one may still be writing, then
    # it takes over (the first answer after the lease is a 200).
    wait_until(lambda: incr(port, [(key("a", DAY0), 1)], seq=2, sender=OTHER_SENDER).status == 200,
               timeout=10, what="the new sender takes over")
    assert get(port, "/get?key=" + q(key("a", DAY0))).body == b"6\n"
    assert stats(port)["sources"]["api-1"]["sender"] == OTHER_SENDER["X-Clickatron-Sender"]
    refused(incr(port, [(key("a", DAY0), 1)], seq=3), 409, "SOURCE_IN_USE")  # now the old one waits
